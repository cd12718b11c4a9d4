/* The record-time call filters --max-depth and --min-duration, between the event sources and
 * the record. An entry cannot be judged when it happens (its duration is not known yet), so
 * while --min-duration is on, each thread's entries wait in a pending buffer:
 *
 *   enter A  enter B  [args B]  exit B (short: B and its data vanish)  enter C  exit C (long)
 *   pending: A | A B args | A                                          | A C    -> written: A C,
 * exit C
 *
 * A call that is kept writes its waiting ancestors first; an ancestor lasts at least as long
 * as its callee, so it is kept too and the record stays well nested. */
#ifndef CALLTRACE_RECORD_CALL_GATE_H
#define CALLTRACE_RECORD_CALL_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/addr_map.h"

struct call_gate {
    uint32_t max_depth;      /* 0: no limit */
    uint64_t min_ticks;      /* 0: no minimum */
    struct addr_map threads; /* tid -> struct gate_thread */
    uint64_t dropped_deep;   /* calls left out by --max-depth */
    uint64_t dropped_short;  /* calls left out by --min-duration */
};

/* What becomes of one record: written now, kept waiting, or dropped. */
enum gate_verdict { GATE_WRITE, GATE_HOLD, GATE_DROP };

int call_gate_init(struct call_gate *g, uint32_t max_depth, uint64_t min_ticks);
void call_gate_free(struct call_gate *g);

/* Each returns what to do with the record; for GATE_HOLD the gate keeps its own copy. Before a
 * GATE_WRITE of an exit, call_gate_flush hands out the waiting bytes to write first. */
enum gate_verdict call_gate_enter(struct call_gate *g, uint32_t tid, uint64_t ticks,
                                  const void *record, size_t size);
enum gate_verdict call_gate_data(struct call_gate *g, uint32_t tid, const void *record,
                                 size_t size);
enum gate_verdict call_gate_exit(struct call_gate *g, uint32_t tid, uint64_t ticks);
/* The bytes held for tid that must be written now (after an exit got GATE_WRITE); the gate
 * forgets them. *size is 0 when there are none. */
const void *call_gate_flush(struct call_gate *g, uint32_t tid, size_t *size);
/* The thread ended: whatever it held is gone. */
void call_gate_thread_end(struct call_gate *g, uint32_t tid);

#endif
