/* -A/-R glue of the inject engine: the capture tables of an image's functions written into the
 * program, and the ring data of their calls turned into REC_ARGS / REC_RETVAL records. */
#ifndef CALLTRACE_TRACER_INJECT_CAPTURES_H
#define CALLTRACE_TRACER_INJECT_CAPTURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracer/tracee.h"

/* For the functions ids[0..n) (their plans built): writes the tables of those with a plan into
 * p, near code (through the stopped thread via), and fills tables[i] with the table's address
 * in p, or 0. Returns 0, or -1 (then every tables[i] is 0: the functions are traced without
 * their values). */
int captures_place(struct session *s, struct process *p, pid_t via, uint64_t code,
                   const uint32_t *ids, size_t n, uint64_t *tables);

/* The call of func in thread t, with its event's data (NULL when it had none), has been entered:
 * writes its REC_ARGS record when func is captured. */
void captures_entered(struct session *s, struct thread *t, uint32_t func, const uint8_t *data,
                      size_t len, uint64_t slot);
/* Decodes the return value the exit event of func carried into the engine's buffer; false when
 * func has none. Then captures_write_retval writes it (before the call's exit record). */
bool captures_returned(struct session *s, struct thread *t, uint32_t func, const uint8_t *data,
                       size_t len);
void captures_write_retval(struct session *s, struct thread *t);

/* A function that tail-called returns through the exit of the call it was tail-called from,
 * which ends the whole chain at once: its return value, just decoded, waits until then. */
void captures_keep_for_chain(struct session *s, struct thread *t);
/* Writes the kept return value of func, if any (false when none). */
bool captures_write_kept(struct session *s, struct thread *t, uint32_t func);
void captures_forget_kept(struct session *s);

void captures_free(struct inject_engine *e);

#endif
