/* -A/-R at the stops: copies the bytes each function's capture plan names (registers, stack
 * arguments, pointees) into REC_ARGS and REC_RETVAL records. Formatting happens later, from
 * the record (output/call_values.c). */
#ifndef CALLTRACE_TRACER_ARG_CAPTURE_H
#define CALLTRACE_TRACER_ARG_CAPTURE_H

#include <stdint.h>
#include <sys/user.h>

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
/* The plan of function func, or NULL when its values are not captured. */
const struct capture_plan *capture_plan_of(const struct session *s, uint32_t func);
void capture_at_entry(struct session *s, struct thread *t, uint32_t func,
                      const struct user_regs_struct *regs);
void capture_at_return(struct session *s, struct thread *t, uint32_t func,
                       const struct user_regs_struct *regs);

#endif
