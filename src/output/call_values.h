/* A captured call's arguments and result, formatted: the REC_ARGS / REC_RETVAL bytes read back
 * against the function's DWARF signature and the same SysV classification the capture plan
 * used. Shared by trace.json, the call folders and `calltrace calls`. */
#ifndef CALLTRACE_OUTPUT_CALL_VALUES_H
#define CALLTRACE_OUTPUT_CALL_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/format.h"

/* The functions and images of a run, as its record names them; the DWARF of each image is
 * opened the first time one of its calls is formatted. */
struct run_funcs;

struct run_funcs *run_funcs_new(void);
void run_funcs_free(struct run_funcs *rf);
/* Learns from a REC_IMAGE or REC_FUNC record; ignores the others. Returns -1 when out of
 * memory. */
int run_funcs_note(struct run_funcs *rf, const struct rec_hdr *h);
const char *run_funcs_name(const struct run_funcs *rf, uint32_t func);
/* Was func traced by a breakpoint under the inject engine (FUNC_BREAKPOINT)? */
bool run_funcs_by_breakpoint(const struct run_funcs *rf, uint32_t func);
/* Where func is defined, "file:line" (analysis/source_file.h), worked out on first use; NULL
 * when not known. Lives until run_funcs_free. */
const char *run_funcs_srcline(struct run_funcs *rf, uint32_t func);
/* Where a call of process pid that returns to ret_addr (record --callsites) was made from,
 * "file:line" into out[0..outlen): the line of its call instruction. false when not known. */
bool run_funcs_call_site(struct run_funcs *rf, uint32_t pid, uint64_t ret_addr, char *out,
                         size_t outlen);

struct arg_value {
    char *name;
    char *type;     /* as C spells it */
    char *value;    /* as gdb prints it */
    uint8_t *bytes; /* what the pointer pointed to (string, array, --capture), or NULL */
    size_t nbytes;
};

struct call_values {
    struct arg_value *args;
    size_t nargs;
    bool raw; /* no DWARF: the argument registers, untyped */
    bool has_result;
    struct arg_value result;
};

/* Formats the values of a call of func from its records (either may be NULL). Returns -1 when
 * out of memory. */
int call_values_decode(struct run_funcs *rf, uint32_t func, const struct rec_values *args,
                       const struct rec_values *ret, struct call_values *out);
void call_values_free(struct call_values *cv);

#endif
