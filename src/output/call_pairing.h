/* Pairs each REC_ENTER of a record with its REC_EXIT, thread by thread, and hands over every
 * call once it is over, with the REC_ARGS / REC_RETVAL recorded for it. trace.json and the call
 * folders both read the record through it, so that they agree call for call: the same calls,
 * the same unfinished ones, the same values.
 *
 * A call without its exit is handed over EXIT_UNFINISHED, at the time its thread ended
 * (REC_THREAD_END), its tid started again (REC_THREAD: whatever it left is over), or the record
 * stopped (the last REC_ENTER / REC_EXIT: a killed or damaged run). An exit without an open call
 * cannot come from the engine and is ignored. */
#ifndef CALLTRACE_OUTPUT_CALL_PAIRING_H
#define CALLTRACE_OUTPUT_CALL_PAIRING_H

#include <stdint.h>

#include "record/format.h"
#include "util/addr_map.h"

struct paired_call {
    uint32_t func;
    uint32_t number; /* the reader's own, 0 at entry: the call folders number calls here */
    uint64_t entry_ticks;
    struct rec_values *args, *ret; /* -A / -R, or NULL */
    /* Set when the call is handed over: */
    uint32_t pid, tid;
    uint64_t exit_ticks;
    unsigned flags; /* EXIT_* */
};

struct call_pairing_ops {
    /* A REC_ARGS or REC_RETVAL of the innermost open call of its thread (a record of another
     * function is dropped): returns 1 to keep a copy with the call, 0 to drop it, -1 when out of
     * memory. NULL: keep them all. */
    int (*values)(void *ctx, struct paired_call *call, const struct rec_hdr *h);
    /* A call is over. Its values are freed when this returns. */
    void (*done)(void *ctx, const struct paired_call *call);
};

struct call_pairing {
    /* tid -> its open calls. A hash map, not an array: a damaged record may hold any 32-bit
     * tid, and memory must stay in proportion to the record. */
    struct addr_map threads;
    uint64_t last_ticks; /* of the latest REC_ENTER / REC_EXIT */
    const struct call_pairing_ops *ops;
    void *ctx;
};

/* Returns -1 when out of memory; call_pairing_free is needed either way. */
int call_pairing_init(struct call_pairing *p, const struct call_pairing_ops *ops, void *ctx);
/* Takes REC_ENTER, REC_EXIT, REC_ARGS, REC_RETVAL, REC_THREAD and REC_THREAD_END into account,
 * ignores the others. Returns -1 when out of memory. */
int call_pairing_feed(struct call_pairing *p, const struct rec_hdr *h);
/* The record is over: hands over every call still open, unfinished. */
void call_pairing_finish(struct call_pairing *p);
void call_pairing_free(struct call_pairing *p);

#endif
