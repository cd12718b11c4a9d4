/* The C types of function parameters, as far as calltrace needs them to find and print values:
 * a small model built from DWARF (dwarf_sig.c), used by the SysV classification (abi_sysv.c),
 * the capture plan and the value formatter. Knows nothing of ptrace or of libdw. */
#ifndef CALLTRACE_SYMBOLS_CTYPE_H
#define CALLTRACE_SYMBOLS_CTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ctype_kind {
    CT_VOID,
    CT_INT,  /* any width, is_signed says which */
    CT_CHAR, /* char, signed char, unsigned char: printed as number and character */
    CT_BOOL,
    CT_FLOAT, /* float, double, long double (x87: is_x87) */
    CT_ENUM,
    CT_PTR,    /* target NULL: void * */
    CT_REF,    /* C++ & and && */
    CT_FUNC,   /* a function type: only ever the target of a pointer */
    CT_STRUCT, /* struct and class */
    CT_UNION,
    CT_ARRAY,
    CT_ALIAS, /* typedef, const, volatile: the value is target's, the spelling is its own */
    CT_UNKNOWN,
};

struct ctype;

struct ctype_member {
    char *name; /* NULL for an anonymous member */
    uint64_t offset;
    struct ctype *type;
    unsigned bit_size;   /* 0 unless a bit-field */
    unsigned bit_offset; /* from the least significant bit of the byte at offset */
};

struct ctype_enumerator {
    char *name;
    int64_t value;
};

struct ctype {
    enum ctype_kind kind;
    uint64_t size;
    unsigned align;
    bool is_signed;
    bool is_x87;          /* long double */
    bool incomplete;      /* a declaration only: size unknown */
    char *name;           /* as C spells it: "int", "struct point", "const char *", "int [3]" */
    struct ctype *target; /* PTR, REF, ARRAY element, ALIAS, FUNC return (NULL: void) */
    uint64_t count;       /* ARRAY elements */
    struct ctype_member *members;
    size_t nmembers;
    struct ctype_enumerator *enums;
    size_t nenums;
};

struct func_param {
    char *name; /* "this" for C++'s; NULL when DWARF gives none */
    struct ctype *type;
    bool optimized_out; /* DWARF has no location for it */
};

/* What DWARF says of one function: enough to find and print its arguments and result. */
struct func_sig {
    char *name;
    struct func_param *params;
    size_t nparams;
    struct ctype *ret; /* NULL: void */
    bool variadic;
};

/* Follows typedefs and qualifiers to the type that decides layout and printing. */
static inline const struct ctype *ctype_strip(const struct ctype *t)
{
    while (t && t->kind == CT_ALIAS)
        t = t->target;
    return t;
}

/* The alignment of a value of type t: a scalar's size (up to 16), an aggregate's widest member's
 * as DWARF lists them (whatever packing did to the aggregate itself); 1 for void. */
unsigned ctype_natural_align(const struct ctype *t);

/* Is t (stripped) a pointer to a char type, printed as a string? */
bool ctype_is_string(const struct ctype *t);

#endif
