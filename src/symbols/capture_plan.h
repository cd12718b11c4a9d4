/* What to copy at a captured function's entry and return stops, decided once per function from
 * its DWARF signature (-A, -R, --string-max, --capture): the engine then copies exactly these
 * bytes and never looks at a type. */
#ifndef CALLTRACE_SYMBOLS_CAPTURE_PLAN_H
#define CALLTRACE_SYMBOLS_CAPTURE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/abi_sysv.h"
#include "symbols/ctype.h"

#define CAPTURE_GLOBS_MAX 64
#define CAPTURE_RULES_MAX 64
#define CAPTURE_STRING_DEFAULT 64
#define CAPTURE_STRING_MAX 4096
#define CAPTURE_BUFFER_MAX 16384 /* bytes of one --capture buffer */
#define CAPTURE_STACK_MAX 4096   /* bytes of stack arguments */
#define CALL_DIRS_DEFAULT 1000

/* --capture FUNC:BUF:LEN: the LEN bytes BUF points to; LEN a parameter or a constant. */
struct capture_rule {
    char func[256]; /* a glob */
    char param[64];
    char len_param[64]; /* empty: len_const */
    uint64_t len_const;
};

struct capture_options {
    bool args;                            /* -A given */
    bool retval;                          /* -R */
    const char *globs[CAPTURE_GLOBS_MAX]; /* -A GLOB; none: every traced function */
    size_t nglobs;
    unsigned string_max;
    struct capture_rule rules[CAPTURE_RULES_MAX];
    size_t nrules;
};

/* Parses one --capture rule; fills why and returns -1 when it is malformed. */
int capture_rule_parse(const char *text, struct capture_rule *rule, char *why, size_t whylen);
/* Checks a -A glob (fnmatch syntax); fills why and returns -1 when it is malformed. */
int capture_glob_check(const char *glob, char *why, size_t whylen);
struct elf_image;
/* Checks the --capture rules against the program's functions and their DWARF: a rule naming a
 * parameter a matching function does not have (or one that is not a pointer, or a length that
 * is not an integer) is an error, filled into why with -1. A rule matching no function is not:
 * *unmatched gets its index, or -1. */
int capture_rules_check(const struct capture_options *o, const struct elf_image *image,
                        int *unmatched, char *why, size_t whylen);
/* Does -A/-R select the function called name? */
bool capture_selects(const struct capture_options *o, const char *name);

enum capture_src { SRC_GPR, SRC_STACK, SRC_CONST };
enum capture_read_kind { READ_STRING, READ_FIXED, READ_COUNTED };

/* Where an 8-byte value sits at the stop: a general register (entry: rdi..r9 by index; return:
 * rax, rdx), the stack argument area, or nowhere (a constant). */
struct capture_word {
    uint8_t src;     /* enum capture_src */
    uint32_t offset; /* register index or byte offset; SRC_CONST: unused */
    uint8_t size;    /* bytes of the value (a count may be an int) */
    uint64_t value;  /* SRC_CONST */
};

struct capture_read {
    uint16_t param; /* or CHUNK_RESULT */
    uint8_t kind;   /* enum capture_read_kind */
    struct capture_word ptr;
    uint32_t size;             /* STRING: the limit; FIXED: the bytes */
    struct capture_word count; /* COUNTED: bytes */
};

struct capture_plan {
    const struct func_sig *sig; /* NULL: no DWARF, raw registers only */
    bool entry;  /* arguments wanted (the entry record is written anyway: it numbers calls) */
    bool result; /* return value wanted */
    bool entry_xmm;
    uint32_t stack_bytes;
    struct capture_read *reads;
    size_t nreads;
    bool result_fp;       /* xmm0/xmm1 or st(0) */
    uint64_t hidden_size; /* the result is in memory at rax: this many bytes */
    struct capture_read *result_reads;
    size_t nresult_reads;
};

/* Builds the plan of a function (sig NULL: no DWARF). Returns NULL when out of memory. */
struct capture_plan *capture_plan_build(const struct capture_options *o, const char *name,
                                        const struct func_sig *sig);
void capture_plan_free(struct capture_plan *plan);

#endif
