#include "record/writer.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/call_pack.h"

#define RECORD_BUFFER (256 * 1024)

static void close_calls(struct recorder *rec);

static void put(struct recorder *rec, const void *data, size_t len)
{
    close_calls(rec);
    outbuf_write(&rec->out, data, len);
}

static void put_named(struct recorder *rec, const void *fixed, size_t fixed_len, const char *name,
                      size_t name_len)
{
    static const char zeros[8];
    size_t padded = (name_len + 7) & ~(size_t)7;
    put(rec, fixed, fixed_len);
    put(rec, name, name_len);
    put(rec, zeros, padded - name_len);
}

static struct rec_hdr hdr(enum rec_type type, size_t size, pid_t tid, unsigned flags)
{
    return (struct rec_hdr){(uint8_t)type, (uint8_t)flags, (uint16_t)size, (uint32_t)tid};
}

int recorder_open(struct recorder *rec, int dir, const char *name, mode_t mode,
                  const struct clock_calibration *clock)
{
    memset(rec, 0, sizeof(*rec));
    rec->clock = clock;
    int rc = outbuf_open(&rec->out, dir, name, mode, RECORD_BUFFER);
    if (rc < 0)
        return rc;
    struct rec_header header = {0};
    memcpy(header.magic, REC_MAGIC, sizeof(header.magic));
    header.version = REC_VERSION;
    header.flags = clock->use_tsc ? REC_F_TSC : 0;
    header.start = clock->start;
    header.ns_per_tick = clock->ns_per_tick;
    put(rec, &header, sizeof(header));
    rec->last_anchor_ticks = clock->start.ticks;
    rec->anchor_interval_ticks = (uint64_t)(100e6 / clock->ns_per_tick);
    rec->last_flush_ticks = clock->start.ticks;
    rec->flush_interval_ticks = (uint64_t)(10e6 / clock->ns_per_tick);
    return outbuf_flush(&rec->out);
}

/* A name longer than REC_MAX_NAME is cut and ends in "...", so a cut name never passes for a
 * whole one. Returns the bytes to write: name itself, or buf with the cut copy. */
static const char *clamp_name(const char *name, size_t *len, char buf[REC_MAX_NAME])
{
    *len = strlen(name);
    if (*len <= REC_MAX_NAME)
        return name;
    memcpy(buf, name, REC_MAX_NAME - 3);
    memcpy(buf + REC_MAX_NAME - 3, "...", 3);
    *len = REC_MAX_NAME;
    return buf;
}

void rec_image(struct recorder *rec, uint32_t id, pid_t pid, uint64_t bias, const char *path)
{
    char buf[REC_MAX_NAME];
    size_t len;
    path = clamp_name(path, &len, buf);
    size_t size = sizeof(struct rec_image) + ((len + 7) & ~(size_t)7);
    struct rec_image r = {hdr(REC_IMAGE, size, pid, 0), id, (uint32_t)len, bias};
    put_named(rec, &r, sizeof(r), path, len);
}

void rec_func(struct recorder *rec, uint32_t id, uint32_t image, uint64_t addr, uint64_t size,
              const char *name)
{
    rec_func_flagged(rec, id, image, addr, size, name, 0);
}

void rec_func_flagged(struct recorder *rec, uint32_t id, uint32_t image, uint64_t addr,
                      uint64_t size, const char *name, unsigned flags)
{
    char buf[REC_MAX_NAME];
    size_t len;
    name = clamp_name(name, &len, buf);
    size_t rsize = sizeof(struct rec_func) + ((len + 7) & ~(size_t)7);
    struct rec_func r = {hdr(REC_FUNC, rsize, 0, flags),
                         id,
                         image,
                         addr,
                         size > UINT32_MAX ? UINT32_MAX : (uint32_t)size,
                         (uint32_t)len};
    put_named(rec, &r, sizeof(r), name, len);
}

void rec_process(struct recorder *rec, pid_t pid, pid_t ppid, uint64_t ticks, const char *name,
                 bool is_exec)
{
    char buf[REC_MAX_NAME];
    size_t len;
    name = clamp_name(name, &len, buf);
    size_t size = sizeof(struct rec_process) + ((len + 7) & ~(size_t)7);
    struct rec_process r = {hdr(REC_PROCESS, size, pid, is_exec ? PROCESS_EXEC : 0), (uint32_t)ppid,
                            (uint32_t)len, ticks};
    put_named(rec, &r, sizeof(r), name, len);
    if (!is_exec)
        rec->processes++;
}

void rec_thread(struct recorder *rec, pid_t pid, pid_t tid, uint64_t ticks)
{
    struct rec_thread r = {hdr(REC_THREAD, sizeof(r), tid, 0), (uint32_t)pid, 0, ticks};
    put(rec, &r, sizeof(r));
    rec->threads++;
}

int recorder_keep_call_sites(struct recorder *rec)
{
    if (rec->sites)
        return 0;
    close_calls(rec); /* its entries have no addresses */
    rec->sites = malloc(sizeof(*rec->sites));
    if (!rec->sites)
        return -ENOMEM;
    rec->sites->len = sizeof(struct rec_callsites);
    rec->sites->count = 0;
    rec->sites->last = 0;
    return 0;
}

/* Room for one more address in the REC_CALLSITES record, and its padding? */
static bool sites_room(const struct rec_sites *sites)
{
    return sites->len + CALL_PACK_SITE_MAX + 7 <= REC_MAX_SIZE;
}

/* The addresses of the REC_CALLS record just closed, as a REC_CALLSITES record after it. */
static void put_sites(struct recorder *rec)
{
    struct rec_sites *sites = rec->sites;
    if (!sites->count)
        return;
    size_t padded = (sites->len + 7) & ~(size_t)7;
    memset(sites->record + sites->len, 0, padded - sites->len);
    struct rec_callsites h = {hdr(REC_CALLSITES, padded, rec->packed.tid, 0),
                              (uint32_t)rec->packed.pid, sites->count};
    memcpy(sites->record, &h, sizeof(h));
    outbuf_write(&rec->out, sites->record, padded);
    sites->len = sizeof(struct rec_callsites);
    sites->count = 0;
    sites->last = 0;
}

/* Pads the open REC_CALLS record to 8 bytes and fills in its size and count. */
static void close_calls(struct recorder *rec)
{
    if (!rec->packed.open)
        return;
    rec->packed.open = false;
    struct outbuf *out = &rec->out;
    size_t len = out->len - rec->packed.start, padded = (len + 7) & ~(size_t)7;
    memset(out->data + out->len, 0, padded - len);
    out->len = rec->packed.start + padded;
    struct rec_calls h = {hdr(REC_CALLS, padded, rec->packed.tid, 0), (uint32_t)rec->packed.pid,
                          rec->packed.count, 0};
    memcpy(out->data + rec->packed.start, &h, offsetof(struct rec_calls, ticks));
    if (rec->sites)
        put_sites(rec);
}

/* Starts a REC_CALLS record with room for a whole one (REC_MAX_SIZE bytes) in the buffer. */
static bool open_calls(struct recorder *rec, pid_t pid, pid_t tid, uint64_t ticks)
{
    struct outbuf *out = &rec->out;
    if (out->cap - out->len < REC_MAX_SIZE && outbuf_flush(out) < 0)
        return false;
    if (out->error || out->cap - out->len < REC_MAX_SIZE)
        return false; /* the first error is kept and reported */
    struct rec_calls h = {hdr(REC_CALLS, 0, tid, 0), (uint32_t)pid, 0, ticks};
    memcpy(out->data + out->len, &h, sizeof(h));
    rec->packed.open = true;
    rec->packed.start = out->len;
    rec->packed.pid = pid;
    rec->packed.tid = tid;
    rec->packed.count = 0;
    rec->packed.last_ticks = ticks;
    out->len += sizeof(h);
    return true;
}

/* Packs one event into the open REC_CALLS record, which has room for it. */
static void pack(struct recorder *rec, enum rec_type type, unsigned flags, uint32_t func,
                 uint64_t ticks)
{
    struct outbuf *out = &rec->out;
    out->len += call_pack_event((uint8_t *)out->data + out->len, (uint8_t)type, flags, func, ticks,
                                rec->packed.last_ticks);
    rec->packed.last_ticks = ticks;
    rec->packed.count++;
    rec->calls += type == REC_EXIT && !(flags & EXIT_INHERITED);
}

/* Packs the return address of the entry just packed. */
static void pack_site(struct rec_sites *sites, uint64_t ret_addr)
{
    sites->len += call_pack_site(sites->record + sites->len, ret_addr, sites->last);
    sites->last = ret_addr;
    sites->count++;
}

/* What rec_enter and rec_exit leave out of line: the call filters, a new REC_CALLS record, the
 * return addresses. */
void rec_call_slow(struct recorder *rec, enum rec_type type, unsigned flags, pid_t pid, pid_t tid,
                   uint32_t func, uint64_t ticks, uint64_t ret_addr)
{
    bool site = type == REC_ENTER && rec->sites;
    if (rec->gate && type == REC_ENTER) {
        /* held whole: with its address when kept, which a record written whole holds */
        struct rec_call_from r = {
            {hdr(REC_ENTER, site ? sizeof(r) : sizeof(r.call), tid, 0), func, (uint32_t)pid, ticks},
            ret_addr};
        if (call_gate_enter(rec->gate, (uint32_t)tid, ticks, &r, r.call.hdr.size) != GATE_WRITE)
            return;
    } else if (rec->gate) {
        if (call_gate_exit(rec->gate, (uint32_t)tid, ticks) != GATE_WRITE)
            return;
        size_t held;
        const void *bytes = call_gate_flush(rec->gate, (uint32_t)tid, &held);
        if (held)
            put(rec, bytes, held);
    }
    if (!rec_packs_into(rec, pid, tid) || (site && !sites_room(rec->sites))) {
        close_calls(rec);
        if (!open_calls(rec, pid, tid, ticks))
            return;
    }
    pack(rec, type, flags, func, ticks);
    if (site)
        pack_site(rec->sites, ret_addr);
}

bool rec_packer_begin(struct recorder *rec, pid_t pid, pid_t tid, uint64_t ticks,
                      struct rec_packer *p)
{
    struct rec_sites *sites = rec->sites;
    if (rec->gate)
        return false;
    if (!rec_packs_into(rec, pid, tid) || (sites && !sites_room(sites))) {
        close_calls(rec);
        if (!open_calls(rec, pid, tid, ticks))
            return false;
    }
    uint8_t *data = (uint8_t *)rec->out.data;
    p->at = data + rec->out.len;
    p->limit = data + rec->packed.start + REC_MAX_SIZE - 7 - CALL_PACK_EVENT_MAX;
    p->last_ticks = rec->packed.last_ticks;
    p->count = 0;
    p->calls = 0;
    return true;
}

void rec_packer_end(struct recorder *rec, struct rec_packer *p)
{
    rec->out.len = (size_t)(p->at - (uint8_t *)rec->out.data);
    rec->packed.last_ticks = p->last_ticks;
    rec->packed.count += p->count;
    rec->calls += p->calls;
}

void rec_site_packer_begin(struct recorder *rec, struct rec_site_packer *sp)
{
    struct rec_sites *sites = rec->sites;
    sp->at = sites->record + sites->len;
    sp->limit = sites->record + REC_MAX_SIZE - 7 - CALL_PACK_SITE_MAX;
    sp->last = sites->last;
    sp->count = 0;
}

void rec_site_packer_end(struct recorder *rec, struct rec_site_packer *sp)
{
    rec->sites->len = (size_t)(sp->at - rec->sites->record);
    rec->sites->last = sp->last;
    rec->sites->count += sp->count;
}

void rec_frame_data(struct recorder *rec, pid_t tid, const void *record, size_t size)
{
    if (!rec->gate || call_gate_data(rec->gate, (uint32_t)tid, record, size) == GATE_WRITE)
        put(rec, record, size);
}

void rec_thread_end(struct recorder *rec, pid_t pid, pid_t tid, uint64_t ticks)
{
    if (rec->gate)
        call_gate_thread_end(rec->gate, (uint32_t)tid);
    struct rec_end r = {hdr(REC_THREAD_END, sizeof(r), tid, 0), 0, (uint32_t)pid, ticks};
    put(rec, &r, sizeof(r));
}

void rec_process_end(struct recorder *rec, pid_t pid, int status, uint64_t ticks)
{
    struct rec_end r = {hdr(REC_PROCESS_END, sizeof(r), pid, 0), status, (uint32_t)pid, ticks};
    put(rec, &r, sizeof(r));
}

void recorder_tick(struct recorder *rec, uint64_t now_ticks)
{
    if (now_ticks - rec->last_flush_ticks < rec->flush_interval_ticks)
        return;
    rec->last_flush_ticks = now_ticks;
    if (now_ticks - rec->last_anchor_ticks >= rec->anchor_interval_ticks) {
        rec->last_anchor_ticks = now_ticks;
        struct rec_clock r = {
            hdr(REC_CLOCK, sizeof(r), 0, 0), {0, 0}, clock_anchor_now(rec->clock)};
        put(rec, &r, sizeof(r));
    }
    close_calls(rec);
    if (rec->out.len)
        outbuf_flush(&rec->out);
    if (progress_due(rec->progress)) {
        double secs = progress_seconds(rec->progress);
        progress_show(rec->progress, "recording: %llu calls, %.1fM/s, %.1f MB on disk",
                      (unsigned long long)rec->calls, (double)rec->calls / secs / 1e6,
                      (double)rec->out.written / 1e6);
    }
}

int recorder_error(const struct recorder *rec)
{
    return rec->out.error;
}

int recorder_close(struct recorder *rec)
{
    struct clock_anchor end = clock_anchor_now(rec->clock);
    struct rec_clock r = {hdr(REC_CLOCK, sizeof(r), 0, 0), {0, 0}, end};
    put(rec, &r, sizeof(r));
    outbuf_flush(&rec->out);
    if (!rec->out.error) {
        struct rec_header header;
        if (pread(rec->out.fd, &header, sizeof(header), 0) == (ssize_t)sizeof(header)) {
            header.end = end;
            header.dropped_calls = rec->dropped_calls;
            header.flags |= REC_F_COMPLETE;
            if (pwrite(rec->out.fd, &header, sizeof(header), 0) != (ssize_t)sizeof(header))
                rec->out.error = errno ? errno : EIO;
        }
    }
    int rc = outbuf_close(&rec->out);
    free(rec->sites);
    rec->sites = NULL;
    return rc < 0 ? -rc : 0;
}
