/* -A/-R: each traced function's capture plan (which registers, stack arguments and pointees
 * its values are in), built from its DWARF signature. The backends copy those bytes into
 * REC_ARGS and REC_RETVAL records (tracer/breakpoint/stop_values.h at a stop,
 * tracer/inject/capture_table.h from a trampoline's copy); formatting happens later, from the
 * record (output/call_values.c). */
#ifndef CALLTRACE_TRACER_ARG_CAPTURE_H
#define CALLTRACE_TRACER_ARG_CAPTURE_H

#include <stdint.h>

#include "tracer/tracee.h"

/* The plans of the functions traced so far, and the images' DWARF they came from. */
struct capture_state;

struct capture_state *capture_state_new(void);
void capture_state_free(struct capture_state *c);

/* A function got its breakpoint as id func: builds its plan if -A/-R selects it. addr is its
 * link-time address in image_path; image_path NULL: no DWARF, raw registers. */
void capture_plan_function(struct session *s, const char *image_path, uint64_t addr,
                           const char *name, uint32_t func);
struct capture_plan;
/* Gives c the plan of function func, which it then owns. -1 when out of memory (still the
 * caller's). */
int capture_plan_add(struct capture_state *c, uint32_t func, struct capture_plan *plan);
/* The plan of function func, or NULL when its values are not captured. */
const struct capture_plan *capture_plan_of(const struct session *s, uint32_t func);

#endif
