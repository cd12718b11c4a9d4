/* Appends the engine's events to RUN/events.ctr with bounded memory. Knows nothing of ptrace:
 * any event source (the ptrace engine, later an in-process one) feeds it the same way. */
#ifndef CALLTRACE_RECORD_WRITER_H
#define CALLTRACE_RECORD_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/call_gate.h"
#include "record/clock.h"
#include "record/format.h"
#include "util/outbuf.h"

struct recorder {
    struct outbuf out;
    const struct clock_calibration *clock;
    uint64_t last_anchor_ticks;
    uint64_t anchor_interval_ticks;
    uint64_t calls;
    uint64_t threads;
    uint64_t processes;
    uint64_t dropped_calls; /* for the header: set before recorder_close */
    bool failed_reported;
    struct call_gate *gate; /* --max-depth, --min-duration; NULL when neither is given */
};

int recorder_open(struct recorder *rec, const char *path, const struct clock_calibration *clock);
void rec_image(struct recorder *rec, uint32_t id, pid_t pid, uint64_t bias, const char *path);
void rec_func(struct recorder *rec, uint32_t id, uint32_t image, uint64_t addr, uint64_t size,
              const char *name);
/* is_exec: the same process with a new image (not counted again). */
void rec_process(struct recorder *rec, pid_t pid, pid_t ppid, uint64_t ticks, const char *name,
                 bool is_exec);
void rec_thread(struct recorder *rec, pid_t pid, pid_t tid, uint64_t ticks);
void rec_enter(struct recorder *rec, pid_t pid, pid_t tid, uint32_t func, uint64_t ticks);
void rec_exit(struct recorder *rec, pid_t pid, pid_t tid, uint32_t func, uint64_t ticks,
              unsigned flags);
/* A whole record (header included, size a multiple of 8) that belongs to the innermost open
 * call of thread tid: argument values follow their REC_ENTER, a return value precedes its
 * REC_EXIT. Filters that drop a call (--max-depth, --min-duration) drop these with it. */
void rec_frame_data(struct recorder *rec, pid_t tid, const void *record, size_t size);
void rec_thread_end(struct recorder *rec, pid_t pid, pid_t tid, uint64_t ticks);
void rec_process_end(struct recorder *rec, pid_t pid, int status, uint64_t ticks);
/* Called now and then by the event loop: flushes and writes a clock anchor every ~100 ms. */
void recorder_tick(struct recorder *rec, uint64_t now_ticks);
/* The first write error (an errno), or 0. */
int recorder_error(const struct recorder *rec);
/* Flushes, writes the end anchor into the header, closes. Returns 0 or an errno. */
int recorder_close(struct recorder *rec);

#endif
