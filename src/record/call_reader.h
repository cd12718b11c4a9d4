/* Reads a run's record as calls: the one place where entries are paired with their exits.
 * trace.json, the call folders, report, graph and tree all read calls through it, so they see
 * the same calls with the same times, however the run ended.
 *
 * Each thread (by tid) has a stack of its open calls. A REC_ENTER pushes one, a REC_EXIT pops
 * the innermost (the engine writes exits in LIFO order per thread); REC_ARGS / REC_RETVAL go
 * with the innermost open call when it is of their function. A call is handed over when it is
 * over, with its depth, its parent, its inclusive and self time and its values; memory holds
 * the open calls only, never the events.
 *
 * One time base: ticks become nanoseconds at the rate between the header's start anchor and
 * its end anchor when the run ended cleanly, else the last periodic anchor of the record
 * (rec_time_of).
 *
 * One policy for unfinished calls: a call whose exit the record does not hold is handed over
 * EXIT_UNFINISHED, ending when its thread ended (REC_THREAD_END), when its tid started again
 * (REC_THREAD: whatever it left is over), or, when the record stops first (a killed or damaged
 * run), at the latest time the record shows of any thread; threads left open that way close
 * in order of first appearance. An exit without an open call cannot come from the engine and
 * is ignored. */
#ifndef CALLTRACE_RECORD_CALL_READER_H
#define CALLTRACE_RECORD_CALL_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/format.h"
#include "record/reader.h"
#include "util/addr_map.h"
#include "util/progress.h"

struct call_frame {
    uint32_t func;  /* the record's function id */
    uint32_t sym;   /* the consumer's name for it, set by its enter callback (replay's symbol) */
    uint32_t user;  /* the consumer's own (profile: the kept ancestor; call folders: number) */
    uint32_t node;  /* the consumer's own too (profile: its call tree's node) */
    bool recursive; /* set by the consumer that merges functions into symbols (replay) */
    int64_t start_ns;
    int64_t child_ns;              /* inclusive time of the direct children so far */
    struct rec_values *args, *ret; /* kept when the values callback said so, else NULL */
    uint64_t ret_addr;             /* where it returns to (record --callsites), 0: not recorded */
};
/* One per open call of each thread: a cache line. */
_Static_assert(sizeof(struct call_frame) == 64, "struct call_frame grew");

struct call_thread {
    uint32_t pid; /* of its latest REC_ENTER or REC_THREAD: exec renames a thread */
    uint32_t tid;
    uint32_t order; /* 0, 1, 2... in order of first appearance */
    struct call_frame *stack;
    size_t depth;
    size_t cap;
    void *user;
    /* a trace writer's: its calls written (output/trace_file.h), in this life of the tid (a
     * REC_THREAD starts another) */
    uint64_t calls_shown;
};

/* A call that is over. */
struct call_done {
    const struct call_thread *thread;
    const struct call_frame *frame;
    const struct call_frame *parent; /* NULL for an outermost call */
    uint32_t depth;                  /* 1 for an outermost call */
    int64_t end_ns;
    int64_t total_ns; /* inclusive: end minus start, 0 when the end is not after the start */
    int64_t self_ns;  /* minus the direct children's inclusive time */
    unsigned flags;   /* EXIT_*: unfinished, unwound, inherited */
};

struct call_reader;

/* Every callback is optional; a non-zero return from one stops the reading with that value. */
struct call_reader_ops {
    /* Every record but the entries and exits, as read, before the reader takes it in. */
    int (*record)(void *ctx, struct call_reader *cr, const struct rec_hdr *h);
    /* A tid seen for the first time (REC_THREAD or REC_ENTER). */
    int (*thread)(void *ctx, struct call_reader *cr, struct call_thread *t);
    /* A call starts: f is t->stack[t->depth - 1]. */
    int (*enter)(void *ctx, struct call_reader *cr, struct call_thread *t, struct call_frame *f);
    /* A REC_ARGS or REC_RETVAL of f, the innermost open call: returns 1 to keep a copy with it
     * (freed when the call is over), 0 not to, negative to stop. NULL: values are not kept. */
    int (*values)(void *ctx, struct call_reader *cr, struct call_thread *t, struct call_frame *f,
                  const struct rec_hdr *h);
    /* A call is over; its frame is popped when this returns. */
    int (*exit)(void *ctx, struct call_reader *cr, const struct call_done *c);
};

/* a + b, held at INT64_MAX: the times of a hostile record add up to anything. */
static inline int64_t call_ns_add(int64_t a, int64_t b)
{
    int64_t sum;
    return __builtin_add_overflow(a, b, &sum) ? INT64_MAX : sum;
}

/* The time base of a run: see the top of this file. */
struct rec_time {
    struct clock_anchor start;
    struct clock_anchor end;
    double ns_per_tick;
};

struct call_reader {
    struct rec_reader file; /* when opened with call_reader_open */
    struct rec_time time;
    struct clock_mapping clock; /* time's mapping, worked out once */
    /* tid -> struct call_thread. A hash map, not an array: a damaged record may hold any
     * 32-bit tid, and memory must stay in proportion to the record. */
    struct addr_map threads;
    struct call_thread *last_thread;
    uint32_t nthreads;
    int64_t last_ns; /* the latest time of a call or thread record */
    bool saw_time;
    uint64_t events; /* records read */
    uint64_t calls;  /* calls handed over, inherited ones included */
    int damaged;     /* after call_reader_run: 1 the record is truncated, 2 corrupt */
    const struct call_reader_ops *ops;
    void *ctx;
    /* Set by a consumer of a long record: call_reader_run shows how far it got, as
     * "WHAT: N% of the record". */
    struct progress *progress;
    const char *progress_what;
};

/* The time base of the record name in the directory dir (AT_FDCWD: name is a path) whose
 * header is h. Returns -1 when the record cannot be read again (the header's anchors are used
 * then). */
int rec_time_of(struct rec_time *t, int dir, const char *name, const struct rec_header *h);
int64_t rec_time_ns(const struct rec_time *t, uint64_t ticks);

/* Opens the record name in the directory dir (AT_FDCWD: name is a path) for call_reader_run.
 * Returns 0, or -1 with why filled. */
int call_reader_open(struct call_reader *cr, int dir, const char *name,
                     const struct call_reader_ops *ops, void *ctx, char *why, size_t whylen);
/* Reads the record to its end and hands over every call. Returns 0, -1 when out of memory, or
 * a callback's non-zero value. */
int call_reader_run(struct call_reader *cr);
void call_reader_close(struct call_reader *cr);

/* The same, fed by hand one record at a time (the unit tests). */
int call_reader_init(struct call_reader *cr, const struct rec_time *time,
                     const struct call_reader_ops *ops, void *ctx);
int call_reader_feed(struct call_reader *cr, const struct rec_hdr *h);
/* The record is over: hands over every call still open, unfinished. */
int call_reader_finish(struct call_reader *cr);

/* A heap copy of a REC_ARGS / REC_RETVAL record, checked: NULL when malformed or out of
 * memory. */
struct rec_values *rec_values_copy(const struct rec_hdr *h);

#endif
