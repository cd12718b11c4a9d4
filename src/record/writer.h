/* Appends the engine's events to RUN/events.ctr with bounded memory. Knows nothing of ptrace:
 * any event source (the ptrace engine, later an in-process one) feeds it the same way. */
#ifndef CALLTRACE_RECORD_WRITER_H
#define CALLTRACE_RECORD_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/call_gate.h"
#include "record/call_pack.h"
#include "record/clock.h"
#include "record/format.h"
#include "util/outbuf.h"
#include "util/progress.h"

struct recorder {
    struct outbuf out;
    const struct clock_calibration *clock;
    uint64_t last_anchor_ticks;
    uint64_t anchor_interval_ticks;
    uint64_t last_flush_ticks;
    uint64_t flush_interval_ticks;
    uint64_t calls;
    uint64_t threads;
    uint64_t processes;
    uint64_t dropped_calls; /* for the header: set before recorder_close */
    bool failed_reported;
    struct call_gate *gate;    /* --max-depth, --min-duration; NULL when neither is given */
    struct progress *progress; /* NULL, or the line showing calls, rate and bytes so far */
    /* The REC_CALLS record being filled, in place at the end of out's buffer (which has room
     * for a whole one): entries and exits of one thread go on into it, any other record
     * closes it first. */
    struct {
        bool open;
        size_t start; /* its offset in out.data */
        pid_t pid, tid;
        uint32_t count;
        uint64_t last_ticks;
    } packed;
    /* --callsites (recorder_keep_call_sites), else NULL: the REC_CALLSITES record of the open
     * REC_CALLS record's entries, written right after it. */
    struct rec_sites *sites;
};

struct rec_sites {
    size_t len; /* bytes in record so far, its header's included */
    uint32_t count;
    uint64_t last; /* the address the next one is a delta from */
    uint8_t record[REC_MAX_SIZE];
};

/* Creates the record name in the directory dir (outbuf_open). 0 or -errno. */
int recorder_open(struct recorder *rec, int dir, const char *name, mode_t mode,
                  const struct clock_calibration *clock);
/* From here on, each entry's return address goes into the record too (--callsites). 0, or
 * -ENOMEM. */
int recorder_keep_call_sites(struct recorder *rec);
void rec_image(struct recorder *rec, uint32_t id, pid_t pid, uint64_t bias, const char *path);
void rec_func(struct recorder *rec, uint32_t id, uint32_t image, uint64_t addr, uint64_t size,
              const char *name);
/* The same with REC_FUNC flags (FUNC_BREAKPOINT). */
void rec_func_flagged(struct recorder *rec, uint32_t id, uint32_t image, uint64_t addr,
                      uint64_t size, const char *name, unsigned flags);
/* is_exec: the same process with a new image (not counted again). */
void rec_process(struct recorder *rec, pid_t pid, pid_t ppid, uint64_t ticks, const char *name,
                 bool is_exec);
void rec_thread(struct recorder *rec, pid_t pid, pid_t tid, uint64_t ticks);

/* Entries and exits: two per traced call, the recorder's hot path, inline. ret_addr: an
 * entry's return address, kept with --callsites. */
void rec_call_slow(struct recorder *rec, enum rec_type type, unsigned flags, pid_t pid, pid_t tid,
                   uint32_t func, uint64_t ticks, uint64_t ret_addr);

/* Does one more event of thread tid go into the open REC_CALLS record? */
static inline bool rec_packs_into(const struct recorder *rec, pid_t pid, pid_t tid)
{
    return rec->packed.open && rec->packed.tid == tid && rec->packed.pid == pid &&
           rec->out.len - rec->packed.start + CALL_PACK_EVENT_MAX + 7 <= REC_MAX_SIZE;
}

/* An exit is counted as a call when it is written, unless flags has EXIT_INHERITED. */
static inline void rec_pack_call(struct recorder *rec, enum rec_type type, unsigned flags,
                                 pid_t pid, pid_t tid, uint32_t func, uint64_t ticks,
                                 uint64_t ret_addr)
{
    if (__builtin_expect(
            rec->gate || (type == REC_ENTER && rec->sites) || !rec_packs_into(rec, pid, tid), 0)) {
        rec_call_slow(rec, type, flags, pid, tid, func, ticks, ret_addr);
        return;
    }
    rec->out.len += call_pack_event((uint8_t *)rec->out.data + rec->out.len, (uint8_t)type, flags,
                                    func, ticks, rec->packed.last_ticks);
    rec->packed.last_ticks = ticks;
    rec->packed.count++;
    rec->calls += type == REC_EXIT && !(flags & EXIT_INHERITED);
}

/* A loop of the caller's packing one thread's entries and exits (the inject engine's drain),
 * straight into the open REC_CALLS record: begin, add while rec_packer_full is false, end.
 * With --callsites (rec->sites) a struct rec_site_packer goes with it: the caller packs each
 * entry's return address into it (call_pack_site) and stops when either is past its limit. */
struct rec_packer {
    uint8_t *at;    /* where the next event goes */
    uint8_t *limit; /* past it, no room for one more */
    uint64_t last_ticks;
    uint32_t count;
    uint64_t calls;
};
/* The entries' return addresses, into the REC_CALLSITES record to come. */
struct rec_site_packer {
    uint8_t *at, *limit; /* as rec_packer's: past limit, no room for one more */
    uint64_t last;
    uint32_t count;
};
/* False when it cannot (call filters, a write error): rec_enter and rec_exit then. */
bool rec_packer_begin(struct recorder *rec, pid_t pid, pid_t tid, uint64_t ticks,
                      struct rec_packer *p);
void rec_packer_end(struct recorder *rec, struct rec_packer *p);
/* With --callsites, after a rec_packer_begin that succeeded (it made room for both); its end
 * goes with rec_packer_end. */
void rec_site_packer_begin(struct recorder *rec, struct rec_site_packer *sp);
void rec_site_packer_end(struct recorder *rec, struct rec_site_packer *sp);

static inline bool rec_packer_full(const struct rec_packer *p)
{
    return p->at > p->limit;
}

static inline void rec_packer_add(struct rec_packer *p, enum rec_type type, unsigned flags,
                                  uint32_t func, uint64_t ticks)
{
    p->at += call_pack_event(p->at, (uint8_t)type, flags, func, ticks, p->last_ticks);
    p->last_ticks = ticks;
    p->count++;
    p->calls += type == REC_EXIT && !(flags & EXIT_INHERITED);
}

/* A call starts; it returns to ret_addr (0: not known), which --callsites keeps. */
static inline void rec_enter_from(struct recorder *rec, pid_t pid, pid_t tid, uint32_t func,
                                  uint64_t ticks, uint64_t ret_addr)
{
    rec_pack_call(rec, REC_ENTER, 0, pid, tid, func, ticks, ret_addr);
}

static inline void rec_enter(struct recorder *rec, pid_t pid, pid_t tid, uint32_t func,
                             uint64_t ticks)
{
    rec_pack_call(rec, REC_ENTER, 0, pid, tid, func, ticks, 0);
}

static inline void rec_exit(struct recorder *rec, pid_t pid, pid_t tid, uint32_t func,
                            uint64_t ticks, unsigned flags)
{
    rec_pack_call(rec, REC_EXIT, flags, pid, tid, func, ticks, 0);
}
/* A whole record (header included, size a multiple of 8) that belongs to the innermost open
 * call of thread tid: argument values follow their REC_ENTER, a return value precedes its
 * REC_EXIT. Filters that drop a call (--max-depth, --min-duration) drop these with it. */
void rec_frame_data(struct recorder *rec, pid_t tid, const void *record, size_t size);
void rec_thread_end(struct recorder *rec, pid_t pid, pid_t tid, uint64_t ticks);
void rec_process_end(struct recorder *rec, pid_t pid, int status, uint64_t ticks);
/* Called now and then by the event loop: flushes every ~10 ms (a killed calltrace loses no
 * more) and writes a clock anchor every ~100 ms. */
void recorder_tick(struct recorder *rec, uint64_t now_ticks);
/* The first write error (an errno), or 0. */
int recorder_error(const struct recorder *rec);
/* Flushes, writes the end anchor into the header, closes. Returns 0 or an errno. */
int recorder_close(struct recorder *rec);

#endif
