/* Which calls a trace shows: export's and view's --from/--to, --tid, -F/-N and --max-calls,
 * so that any part of a run too big to view whole can be looked at.
 *
 * A call is shown when it runs on a selected thread, its function is selected, it overlaps
 * [from, to] (it starts at or before `to` and ends at or after `from`), and fewer than
 * max_calls calls were shown before it. A call open at `from` is shown with its real start, so
 * the calls of the window keep their callers.
 *
 * Both writers decide alike: trace.json writes a call at its end, trace.pftrace its BEGIN at
 * its start. A call that starts before `from` is begun once its thread's time reaches `from`
 * (then every open call below it is begun first, outermost first), or never if it ends
 * before. Each frame is settled once (WINDOW_SETTLED), so deep stacks cost nothing more. */
#ifndef CALLTRACE_OUTPUT_CALL_WINDOW_H
#define CALLTRACE_OUTPUT_CALL_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "record/call_reader.h"
#include "symbols/func_filter.h"
#include "util/addr_map.h"

struct call_window {
    int64_t from_ns;    /* relative to the run's start */
    int64_t to_ns;      /* relative to the run's start; 0: to the end */
    uint32_t tid;       /* 0: every thread */
    uint64_t max_calls; /* 0: no limit */
    struct func_filter filter;
};

static inline bool call_window_is_whole(const struct call_window *w)
{
    return !w || (!w->from_ns && !w->to_ns && !w->tid && !w->max_calls && !w->filter.nonly &&
                  !w->filter.nexclude);
}

/* The window options of export and view (output/call_window.h): which calls are written. */
enum {
    WINDOW_OPT_FROM = 0x400,
    WINDOW_OPT_TO,
    WINDOW_OPT_TID,
    WINDOW_OPT_MAX_CALLS,
};

/* clang-format off */
#define WINDOW_LONG_OPTIONS                                    \
    {"from", required_argument, NULL, WINDOW_OPT_FROM},            \
    {"to", required_argument, NULL, WINDOW_OPT_TO},                \
    {"tid", required_argument, NULL, WINDOW_OPT_TID},              \
    {"max-calls", required_argument, NULL, WINDOW_OPT_MAX_CALLS},  \
    {"filter", required_argument, NULL, 'F'},                      \
    {"include", required_argument, NULL, 'F'}, /* as the readers spell it */ \
    {"exclude", required_argument, NULL, 'N'}
/* clang-format on */

#define WINDOW_OPTIONS_HELP                                                                        \
    "  --from TIME, --to TIME  only the calls running between these times of the run\n"            \
    "                     (from its start: 1.5s, 250ms), with the calls open around them\n"        \
    "  --tid TID          only the calls of thread TID\n"                                          \
    "  -F GLOB, -N GLOB   only the calls of functions matching / not matching GLOB\n"              \
    "  --max-calls N      at most N calls, the first ones in the window\n"

/* Handles one getopt_long result for a window (F and N are -F and -N). Returns 1 when c was a
 * window option, 0 when it was not, -1 after one error line for a bad value. */
int call_window_option(struct call_window *w, int c, const char *arg);
/* After parsing: --from after --to is an error. Returns 0 or -1 after one error line. */
int call_window_check(const struct call_window *w);

/* call_frame.user bits, the window's per-call state. */
#define WINDOW_SHOWN 1u   /* thread, function and start time selected */
#define WINDOW_BEGUN 2u   /* shown: its end is to be written */
#define WINDOW_SETTLED 4u /* this frame and every one below it were begun or never will be */

/* A writer's window while it reads one record. */
struct window_reader {
    bool whole;       /* no window: every call shown, no bookkeeping */
    int64_t from, to; /* absolute, in the record's time */
    uint32_t tid;
    uint64_t max_calls;
    uint64_t shown;
    const struct func_filter *filter;
    struct addr_map excluded; /* function id -> (void *)1: not selected by -F / -N */
};

/* run_start_ns: the record's time of the run's start (its start anchor). */
int window_reader_init(struct window_reader *wr, const struct call_window *w, int64_t run_start_ns);
void window_reader_free(struct window_reader *wr);
/* A REC_FUNC: whether -F / -N select it. Returns -1 when out of memory. */
int window_note_func(struct window_reader *wr, uint32_t func, const char *name, uint32_t len);

/* A call begins, and to be written at once: begin(ctx, t, frame). */
typedef int (*window_begin_fn)(void *ctx, const struct call_thread *t, struct call_frame *f);

int window_enter_part(struct window_reader *wr, const struct call_thread *t, struct call_frame *f,
                      window_begin_fn begin, void *ctx);
int window_exit_part(struct window_reader *wr, const struct call_thread *t, struct call_frame *f,
                     int64_t end_ns, window_begin_fn begin, void *ctx);

/* A call starts (f is the innermost frame of t): marks it, and begins what is due. Inline:
 * with no window, a writer's every call goes straight to begin. */
static inline int window_enter(struct window_reader *wr, const struct call_thread *t,
                               struct call_frame *f, window_begin_fn begin, void *ctx)
{
    if (wr->whole) {
        f->user = WINDOW_SHOWN | WINDOW_BEGUN | WINDOW_SETTLED;
        return begin ? begin(ctx, t, f) : 0;
    }
    return window_enter_part(wr, t, f, begin, ctx);
}

/* A call ends at end_ns: returns 1 when it was begun (its end is to be written), 0 when not,
 * or begin's non-zero value. A call that began before `from` and ends after it is begun
 * here, with its open callers. */
static inline int window_exit(struct window_reader *wr, const struct call_thread *t,
                              struct call_frame *f, int64_t end_ns, window_begin_fn begin,
                              void *ctx)
{
    if (wr->whole)
        return 1;
    return window_exit_part(wr, t, f, end_ns, begin, ctx);
}

#endif
