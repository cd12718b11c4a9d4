#include "output/trace_pftrace.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/call_marks.h"
#include "output/call_values.h"
#include "output/process_tracks.h"
#include "record/call_reader.h"
#include "util/addr_map.h"
#include "util/log.h"
#include "util/outbuf.h"
#include "util/protobuf.h"
#include "util/utf8.h"

/* The messages and fields used, from Perfetto's protos/perfetto/trace/:
 *   Trace (perfetto_trace.proto)          packet = 1
 *   TracePacket (trace_packet.proto)      clock_snapshot = 6, timestamp = 8,
 *                                         trusted_packet_sequence_id = 10, track_event = 11,
 *                                         interned_data = 12, sequence_flags = 13,
 *                                         timestamp_clock_id = 58, trace_packet_defaults = 59,
 *                                         track_descriptor = 60
 *   TracePacket.SequenceFlags             SEQ_INCREMENTAL_STATE_CLEARED = 1,
 *                                         SEQ_NEEDS_INCREMENTAL_STATE = 2
 *   TracePacketDefaults                   track_event_defaults = 11, timestamp_clock_id = 58
 *   TrackEventDefaults (track_event.proto) track_uuid = 11
 *   ClockSnapshot (clock_snapshot.proto)  clocks = 1
 *   ClockSnapshot.Clock                   clock_id = 1, timestamp = 2, is_incremental = 3
 *   BuiltinClock                          BOOTTIME = 6; 64-127 are sequence-scoped
 *   TrackDescriptor                       uuid = 1, name = 2, process = 3, thread = 4,
 *                                         parent_uuid = 5
 *   ProcessDescriptor                     pid = 1, process_name = 6
 *   ThreadDescriptor                      pid = 1, tid = 2, thread_name = 5
 *   TrackEvent (track_event.proto)        debug_annotations = 4, type = 9, name_iid = 10
 *   TrackEvent.Type                       TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2
 *   DebugAnnotation                       bool_value = 2, string_value = 6, name = 10
 *   InternedData (interned_data.proto)    event_names = 2
 *   EventName                             iid = 1, name = 2 */
enum {
    TRACE_PACKET = 1,
    PACKET_CLOCK_SNAPSHOT = 6,
    PACKET_TIMESTAMP = 8,
    PACKET_SEQUENCE_ID = 10,
    PACKET_TRACK_EVENT = 11,
    PACKET_INTERNED_DATA = 12,
    PACKET_SEQUENCE_FLAGS = 13,
    PACKET_TIMESTAMP_CLOCK_ID = 58,
    PACKET_DEFAULTS = 59,
    PACKET_TRACK_DESCRIPTOR = 60,
    SEQ_INCREMENTAL_STATE_CLEARED = 1,
    SEQ_NEEDS_INCREMENTAL_STATE = 2,
    DEFAULTS_TRACK_EVENT = 11,
    DEFAULTS_TIMESTAMP_CLOCK_ID = 58,
    TRACK_EVENT_DEFAULTS_TRACK_UUID = 11,
    CLOCK_SNAPSHOT_CLOCKS = 1,
    CLOCK_ID = 1,
    CLOCK_TIMESTAMP = 2,
    CLOCK_IS_INCREMENTAL = 3,
    BUILTIN_BOOTTIME = 6,
    CLOCK_SEQUENCE_DELTAS = 64, /* ours: nanoseconds since the sequence's previous packet */
    TRACK_UUID = 1,
    TRACK_NAME = 2,
    TRACK_PROCESS = 3,
    TRACK_THREAD = 4,
    TRACK_PARENT_UUID = 5,
    PROCESS_PID = 1,
    PROCESS_NAME = 6,
    THREAD_PID = 1,
    THREAD_TID = 2,
    THREAD_NAME = 5,
    EVENT_DEBUG_ANNOTATIONS = 4,
    EVENT_TYPE = 9,
    EVENT_NAME_IID = 10,
    TYPE_SLICE_BEGIN = 1,
    TYPE_SLICE_END = 2,
    ANNOTATION_BOOL = 2,
    ANNOTATION_STRING = 6,
    ANNOTATION_NAME = 10,
    INTERNED_EVENT_NAMES = 2,
    EVENT_NAME_IID_FIELD = 1,
    EVENT_NAME_NAME = 2,
};

#define PFTRACE_BUFFER (1 << 20)
/* The most a plain BEGIN or END packet takes: its tag and 1-byte length, three head fields of
 * at most 1 + 10 bytes, the event's tag and length, and the event's two fields. Below 128, so
 * every length fits one byte. */
#define PACKET_MAX (2 + 3 * (1 + PB_VARINT_MAX) + 2 + 2 * (1 + PB_VARINT_MAX))
_Static_assert(PACKET_MAX < 128, "a plain packet's length must fit one varint byte");

/* Sequence 1 carries the track descriptors; each thread's events go on a sequence of their
 * own, from 2 on: a sequence's interned names, defaults and clock are the state its packets
 * are read with, and a thread's events are in time order in the record, the whole trace's
 * are not. */
#define DESCRIPTOR_SEQUENCE 1

/* A thread's packet sequence (its call_thread's user). */
struct pf_sequence {
    uint32_t id;
    uint64_t track_pid;    /* the process track its thread track is under, as described */
    uint64_t track;        /* its thread track's uuid: the events' default track */
    int64_t last_ns;       /* the incremental clock: what the next timestamp is a delta from */
    bool started;          /* its state (clock, defaults, names) was written since the last reset */
    uint32_t pid;          /* the thread's pid when track_pid was worked out */
    uint64_t tracks_epoch; /* the writer's tracks_epoch then */
    /* The fields every event packet ends its head with: the sequence id and the
     * NEEDS_INCREMENTAL_STATE flag, encoded once. */
    uint8_t head_tail[2 * (1 + PB_VARINT_MAX)];
    uint8_t head_tail_len;
    uint32_t next_iid;
    /* Function id -> its interned name's iid on this sequence: a table for the ids a record
     * gives (dense, from 0; grown to the largest seen), a map for the others a damaged one
     * may hold. */
    uint32_t *iid_table;
    uint32_t iid_table_len;
    struct addr_map iids;
};

#define IID_TABLE_MAX 65536

/* A function's name, made valid UTF-8 once. */
struct pf_name {
    size_t len;
    bool breakpoint; /* FUNC_BREAKPOINT: its calls say traced_by: breakpoint */
    char text[];
};

struct pf_writer {
    struct outbuf out;
    struct window_reader window;
    struct trace_size_guard size;
    struct process_tracks pids;
    struct addr_map names;     /* function id -> struct pf_name */
    struct addr_map described; /* process track -> (void *)1: its descriptor was written */
    struct addr_map sequences; /* tid -> struct pf_sequence, for freeing */
    struct run_funcs *funcs;   /* images and functions, to format -A / -R values */
    bool srcline;              /* "src": where each call's function is defined */
    bool any_breakpoint;       /* a function is FUNC_BREAKPOINT: ends are looked at */
    uint32_t next_sequence;
    uint64_t tracks_epoch; /* moves when a process starts or ends: pids map to new tracks */
    struct pb_buf packet, part, inner; /* for the packets that are not a plain BEGIN / END */
    struct trace_stats *stats;
};

/* Track uuids: a process's in the upper half, a thread's from its process track and tid. */
static uint64_t process_uuid(uint64_t track_pid)
{
    return (1ull << 62) | track_pid;
}

static uint64_t thread_uuid(uint64_t track_pid, uint32_t tid)
{
    return (track_pid << 32) | tid;
}

/* Writes one TracePacket whose fields are in b. */
static void put_packet(struct pf_writer *w, const struct pb_buf *b)
{
    if (b->failed) {
        w->out.error = w->out.error ? w->out.error : ENOMEM;
        return;
    }
    uint8_t head[1 + PB_VARINT_MAX];
    size_t n = pb_put_tag(head, TRACE_PACKET, PB_LEN);
    n += pb_put_varint(head + n, b->len);
    outbuf_write(&w->out, head, n);
    outbuf_write(&w->out, b->data, b->len);
}

static void describe_process(struct pf_writer *w, uint64_t track_pid, const char *name, size_t len)
{
    struct pb_buf *p = &w->packet, *track = &w->part, *process = &w->inner;
    pb_buf_clear(p), pb_buf_clear(track), pb_buf_clear(process);
    pb_int(process, PROCESS_PID, (int64_t)(int32_t)track_pid);
    pb_text(process, PROCESS_NAME, name, len);
    pb_uint(track, TRACK_UUID, process_uuid(track_pid));
    pb_message(track, TRACK_PROCESS, process);
    pb_uint(p, PACKET_SEQUENCE_ID, DESCRIPTOR_SEQUENCE);
    pb_message(p, PACKET_TRACK_DESCRIPTOR, track);
    put_packet(w, p);
    if (addr_map_put(&w->described, track_pid, (void *)1) < 0)
        w->out.error = ENOMEM;
}

static void describe_thread(struct pf_writer *w, uint64_t track_pid, uint32_t tid)
{
    if (!addr_map_get(&w->described, track_pid)) { /* a record that lost its REC_PROCESS */
        char name[32];
        int len = snprintf(name, sizeof(name), "process %llu", (unsigned long long)track_pid);
        describe_process(w, track_pid, name, (size_t)len);
    }
    char name[32];
    int len =
        snprintf(name, sizeof(name), tid == track_pid % PID_SPACE ? "main %u" : "thread %u", tid);
    struct pb_buf *p = &w->packet, *track = &w->part, *thread = &w->inner;
    pb_buf_clear(p), pb_buf_clear(track), pb_buf_clear(thread);
    pb_int(thread, THREAD_PID, (int64_t)(int32_t)track_pid);
    pb_int(thread, THREAD_TID, (int64_t)(int32_t)tid);
    pb_text(thread, THREAD_NAME, name, (size_t)len);
    pb_uint(track, TRACK_UUID, thread_uuid(track_pid, tid));
    pb_uint(track, TRACK_PARENT_UUID, process_uuid(track_pid));
    pb_message(track, TRACK_THREAD, thread);
    pb_uint(p, PACKET_SEQUENCE_ID, DESCRIPTOR_SEQUENCE);
    pb_message(p, PACKET_TRACK_DESCRIPTOR, track);
    put_packet(w, p);
}

/* The first packet of a sequence, or of its new state: clears what was interned, pairs our
 * delta clock with the trace clock at ns, and makes the thread's track the default one. */
static void reset_sequence(struct pf_writer *w, struct pf_sequence *s, int64_t ns)
{
    struct pb_buf *p = &w->packet, *outer = &w->part, *inner = &w->inner;
    pb_buf_clear(p);
    pb_uint(p, PACKET_SEQUENCE_ID, s->id);
    pb_uint(p, PACKET_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    pb_uint(p, PACKET_TIMESTAMP, (uint64_t)ns);
    pb_uint(p, PACKET_TIMESTAMP_CLOCK_ID, BUILTIN_BOOTTIME);
    pb_buf_clear(outer);
    for (int i = 0; i < 2; i++) {
        pb_buf_clear(inner);
        pb_uint(inner, CLOCK_ID, i ? CLOCK_SEQUENCE_DELTAS : BUILTIN_BOOTTIME);
        pb_uint(inner, CLOCK_TIMESTAMP, (uint64_t)ns);
        if (i)
            pb_uint(inner, CLOCK_IS_INCREMENTAL, 1);
        pb_message(outer, CLOCK_SNAPSHOT_CLOCKS, inner);
    }
    pb_message(p, PACKET_CLOCK_SNAPSHOT, outer);
    pb_buf_clear(inner);
    pb_uint(inner, TRACK_EVENT_DEFAULTS_TRACK_UUID, s->track);
    pb_buf_clear(outer);
    pb_uint(outer, DEFAULTS_TIMESTAMP_CLOCK_ID, CLOCK_SEQUENCE_DELTAS);
    pb_message(outer, DEFAULTS_TRACK_EVENT, inner);
    pb_message(p, PACKET_DEFAULTS, outer);
    put_packet(w, p);
    addr_map_free(&s->iids);
    if (addr_map_init(&s->iids, 64) < 0)
        w->out.error = ENOMEM;
    if (s->iid_table)
        memset(s->iid_table, 0, s->iid_table_len * sizeof(*s->iid_table));
    s->next_iid = 1;
    s->last_ns = ns;
    s->started = true;
}

/* The thread's sequence on its current process track, started or restarted as needed. */
static struct pf_sequence *sequence_of(struct pf_writer *w, const struct call_thread *t, int64_t ns)
{
    struct pf_sequence *s = t->user;
    if (__builtin_expect(s->started && s->pid == t->pid && s->tracks_epoch == w->tracks_epoch, 1))
        return s; /* the thread is where it was */
    uint64_t track_pid = process_track(&w->pids, t->pid);
    s->pid = t->pid;
    s->tracks_epoch = w->tracks_epoch;
    if (!s->started || s->track_pid != track_pid) { /* first event, or exec moved it */
        s->track_pid = track_pid;
        s->track = thread_uuid(track_pid, t->tid);
        describe_thread(w, track_pid, t->tid);
        reset_sequence(w, s, ns);
    }
    return s;
}

/* The sequence's clock advances to ns: the delta to write. A hostile record's time may go
 * back; the trace's never does. */
static uint64_t advance(struct pf_sequence *s, int64_t ns)
{
    if (ns <= s->last_ns)
        return 0;
    uint64_t delta = (uint64_t)(ns - s->last_ns);
    s->last_ns = ns;
    return delta;
}

/* The fields every event packet starts with: timestamp delta, sequence and its flag. */
static size_t put_event_head(uint8_t *p, const struct pf_sequence *s, uint64_t delta)
{
    size_t n = pb_put_uint(p, PACKET_TIMESTAMP, delta);
    memcpy(p + n, s->head_tail, sizeof(s->head_tail)); /* whole: a fixed-size copy is a move */
    return n + s->head_tail_len;
}

/* The iid of func's name on the sequence, 0 when not interned yet. */
static uint64_t iid_of(const struct pf_sequence *s, uint32_t func)
{
    if (func < s->iid_table_len)
        return s->iid_table[func];
    return func < IID_TABLE_MAX ? 0 : (uintptr_t)addr_map_get(&s->iids, func);
}

static int set_iid(struct pf_sequence *s, uint32_t func, uint32_t iid)
{
    if (func < IID_TABLE_MAX) {
        if (func >= s->iid_table_len) {
            uint32_t len = 64;
            while (len <= func)
                len *= 2;
            uint32_t *table = reallocarray(s->iid_table, len, sizeof(*table));
            if (!table)
                return -1;
            memset(table + s->iid_table_len, 0, (len - s->iid_table_len) * sizeof(*table));
            s->iid_table = table;
            s->iid_table_len = len;
        }
        s->iid_table[func] = iid;
        return 0;
    }
    return addr_map_put(&s->iids, func, (void *)(uintptr_t)iid);
}

/* A function's name interned on the sequence for the first time: the BEGIN packet carries it. */
static void put_begin_interning(struct pf_writer *w, struct pf_sequence *s, uint64_t delta,
                                uint32_t func, uint64_t iid)
{
    static const char unknown[] = "??";
    const struct pf_name *name = addr_map_get(&w->names, func);
    struct pb_buf *p = &w->packet, *names = &w->part, *entry = &w->inner;
    uint8_t head[3 * (1 + PB_VARINT_MAX)];
    pb_buf_clear(p);
    pb_raw(p, head, put_event_head(head, s, delta));
    pb_buf_clear(entry);
    pb_uint(entry, EVENT_TYPE, TYPE_SLICE_BEGIN);
    pb_uint(entry, EVENT_NAME_IID, iid);
    pb_message(p, PACKET_TRACK_EVENT, entry);
    pb_buf_clear(entry);
    pb_uint(entry, EVENT_NAME_IID_FIELD, iid);
    pb_bytes(entry, EVENT_NAME_NAME, name ? name->text : unknown,
             name ? name->len : sizeof(unknown) - 1);
    pb_buf_clear(names);
    pb_message(names, INTERNED_EVENT_NAMES, entry);
    pb_message(p, PACKET_INTERNED_DATA, names);
    put_packet(w, p);
}

/* A call starts on its thread's track: a SLICE_BEGIN of its interned name. */
static int put_begin(void *ctx, const struct call_thread *t, struct call_frame *f)
{
    struct pf_writer *w = ctx;
    struct pf_sequence *s = sequence_of(w, t, f->start_ns);
    uint64_t delta = advance(s, f->start_ns);
    uint64_t iid = iid_of(s, f->func);
    if (!iid) {
        iid = s->next_iid++;
        if (set_iid(s, f->func, (uint32_t)iid) < 0)
            return -1;
        put_begin_interning(w, s, delta, f->func, iid);
        return 0;
    }
    /* The hot path: a packet of about 14 bytes, encoded straight into the output buffer. */
    uint8_t *p = outbuf_reserve(&w->out, PACKET_MAX);
    if (!p)
        return 0;          /* the error is the output's, reported when it is closed */
    uint8_t *body = p + 2; /* a packet's length takes one byte: it is below 128 */
    size_t n = put_event_head(body, s, delta);
    body[n++] = (PACKET_TRACK_EVENT << 3) | PB_LEN;
    uint8_t *event_len = &body[n++];
    size_t event = pb_put_uint(body + n, EVENT_TYPE, TYPE_SLICE_BEGIN);
    event += pb_put_uint(body + n + event, EVENT_NAME_IID, iid);
    *event_len = (uint8_t)event;
    n += event;
    p[0] = (TRACE_PACKET << 3) | PB_LEN;
    p[1] = (uint8_t)n;
    outbuf_commit(&w->out, 2 + n);
    return 0;
}

static void put_annotation_bool(struct pf_writer *w, struct pb_buf *event, const char *name)
{
    struct pb_buf *a = &w->inner;
    pb_buf_clear(a);
    pb_bytes(a, ANNOTATION_NAME, name, strlen(name));
    pb_uint(a, ANNOTATION_BOOL, 1);
    pb_message(event, EVENT_DEBUG_ANNOTATIONS, a);
}

static void put_annotation_text(struct pf_writer *w, struct pb_buf *event, const char *name,
                                const char *value)
{
    struct pb_buf *a = &w->inner;
    pb_buf_clear(a);
    pb_text(a, ANNOTATION_NAME, name, strlen(name));
    pb_text(a, ANNOTATION_STRING, value, strlen(value));
    pb_message(event, EVENT_DEBUG_ANNOTATIONS, a);
}

/* -A / -R: each argument by name, and "return", as gdb prints them; trace.json's keys. */
static void put_values(struct pf_writer *w, struct pb_buf *event, const struct call_frame *f)
{
    struct call_values cv;
    if (!w->funcs || (!f->args && !f->ret))
        return;
    if (call_values_decode(w->funcs, f->func, f->args, f->ret, &cv) == 0) {
        if (cv.raw)
            put_annotation_text(w, event, "registers",
                                "raw: no DWARF for this function, or its file changed");
        for (size_t i = 0; i < cv.nargs; i++)
            put_annotation_text(w, event, cv.args[i].name, cv.args[i].value);
        if (cv.has_result)
            put_annotation_text(w, event, "return", cv.result.value);
    }
    call_values_free(&cv);
}

/* Was func traced by a breakpoint? Looked up only in a run that has such functions: the plain
 * end of a call stays the hot path. */
static bool by_breakpoint(const struct pf_writer *w, uint32_t func)
{
    const struct pf_name *name = w->any_breakpoint ? addr_map_get(&w->names, func) : NULL;
    return name && name->breakpoint;
}

/* The SLICE_END of a call that did not simply return, or has values: they go with the end,
 * which Perfetto merges into the slice's arguments. */
static void put_end_annotated(struct pf_writer *w, struct pf_sequence *s, uint64_t delta,
                              const struct call_done *c)
{
    struct pb_buf *p = &w->packet, *event = &w->part;
    uint8_t head[3 * (1 + PB_VARINT_MAX)];
    pb_buf_clear(p);
    pb_raw(p, head, put_event_head(head, s, delta));
    pb_buf_clear(event);
    pb_uint(event, EVENT_TYPE, TYPE_SLICE_END);
    for (size_t i = 0; i < CALL_MARKS; i++)
        if (c->flags & call_marks[i].flag)
            put_annotation_bool(w, event, call_marks[i].name);
    if (by_breakpoint(w, c->frame->func))
        put_annotation_text(w, event, "traced_by", "breakpoint");
    put_values(w, event, c->frame);
    const char *src = w->srcline ? run_funcs_srcline(w->funcs, c->frame->func) : NULL;
    if (src)
        put_annotation_text(w, event, "src", src);
    char from[PATH_MAX + 16];
    if (w->srcline &&
        run_funcs_call_site(w->funcs, c->thread->pid, c->frame->ret_addr, from, sizeof(from)))
        put_annotation_text(w, event, "called_from", from);
    pb_message(p, PACKET_TRACK_EVENT, event);
    put_packet(w, p);
}

static void put_end(struct pf_writer *w, const struct call_done *c)
{
    struct pf_sequence *s = sequence_of(w, c->thread, c->end_ns);
    uint64_t delta = advance(s, c->end_ns);
    if (c->flags || c->frame->args || c->frame->ret ||
        (w->srcline && (c->frame->ret_addr || run_funcs_srcline(w->funcs, c->frame->func))) ||
        by_breakpoint(w, c->frame->func)) {
        put_end_annotated(w, s, delta, c);
        return;
    }
    /* The hot path: a packet of about 12 bytes, encoded straight into the output buffer. */
    uint8_t *p = outbuf_reserve(&w->out, PACKET_MAX);
    if (!p)
        return;
    uint8_t *body = p + 2;
    size_t n = put_event_head(body, s, delta);
    body[n++] = (PACKET_TRACK_EVENT << 3) | PB_LEN;
    body[n++] = 2;
    body[n++] = (EVENT_TYPE << 3) | PB_VARINT;
    body[n++] = TYPE_SLICE_END;
    p[0] = (TRACE_PACKET << 3) | PB_LEN;
    p[1] = (uint8_t)n;
    outbuf_commit(&w->out, 2 + n);
}

static int on_call_enter(void *ctx, struct call_reader *cr, struct call_thread *t,
                         struct call_frame *f)
{
    struct pf_writer *w = ctx;
    (void)cr;
    return window_enter(&w->window, t, f, put_begin, w);
}

static int on_call_exit(void *ctx, struct call_reader *cr, const struct call_done *c)
{
    struct pf_writer *w = ctx;
    (void)cr;
    int shown = trace_call_over(&w->window, c, put_begin, w, w->stats, &w->pids);
    if (shown <= 0)
        return shown;
    put_end(w, c);
    trace_size_check(&w->size, w->out.written + w->out.len, TRACE_PFTRACE_NAME);
    return 0;
}

/* Every value is kept: -A / -R are shown with their call. */
static int keep_values(void *ctx, struct call_reader *cr, struct call_thread *t,
                       struct call_frame *f, const struct rec_hdr *h)
{
    (void)ctx, (void)cr, (void)t, (void)f, (void)h;
    return 1;
}

static int on_thread(void *ctx, struct call_reader *cr, struct call_thread *t)
{
    struct pf_writer *w = ctx;
    (void)cr;
    struct pf_sequence *s = calloc(1, sizeof(*s));
    if (!s || addr_map_put(&w->sequences, t->tid, s) < 0) {
        free(s);
        return -1;
    }
    s->id = w->next_sequence++;
    size_t n = pb_put_uint(s->head_tail, PACKET_SEQUENCE_ID, s->id);
    n += pb_put_uint(s->head_tail + n, PACKET_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
    s->head_tail_len = (uint8_t)n;
    t->user = s;
    return 0;
}

static int remember_func(struct pf_writer *w, const struct rec_func *f)
{
    uint32_t len;
    const char *name = rec_name(&f->hdr, &len);
    size_t valid_len;
    char *valid = utf8_valid_copy(name, len, &valid_len);
    struct pf_name *copy = valid ? malloc(sizeof(*copy) + valid_len + 1) : NULL;
    if (!copy) {
        free(valid);
        return -1;
    }
    copy->len = valid_len;
    copy->breakpoint = f->hdr.flags & FUNC_BREAKPOINT;
    w->any_breakpoint |= copy->breakpoint;
    memcpy(copy->text, valid, valid_len + 1);
    free(valid);
    struct pf_name *old = addr_map_get(&w->names, f->func);
    if (addr_map_put(&w->names, f->func, copy) < 0) {
        free(copy);
        return -1;
    }
    free(old);
    return window_note_func(&w->window, f->func, name, len);
}

static void on_process(struct pf_writer *w, const struct rec_process *p)
{
    uint32_t len;
    const char *name = rec_name(&p->hdr, &len);
    w->tracks_epoch++;
    if (!(p->hdr.flags & PROCESS_EXEC))
        process_tracks_started(&w->pids, p->hdr.tid);
    /* An exec describes the same track again, with the new name. */
    describe_process(w, process_track(&w->pids, p->hdr.tid), name, len);
}

static int on_record(void *ctx, struct call_reader *cr, const struct rec_hdr *h)
{
    struct pf_writer *w = ctx;
    (void)cr;
    switch (h->type) {
    case REC_FUNC:
        if (run_funcs_note(w->funcs, h) < 0)
            return -1;
        return remember_func(w, (const struct rec_func *)h);
    case REC_IMAGE:
        return run_funcs_note(w->funcs, h);
    case REC_PROCESS:
        on_process(w, (const struct rec_process *)h);
        break;
    case REC_PROCESS_END:
        w->tracks_epoch++;
        process_tracks_ended(&w->pids, h->tid);
        break;
    default:
        break;
    }
    return 0;
}

static void free_writer(struct pf_writer *w)
{
    ADDR_MAP_FOREACH(&w->names, slot)
    free(slot->value);
    addr_map_free(&w->names);
    ADDR_MAP_FOREACH(&w->sequences, slot)
    {
        struct pf_sequence *s = slot->value;
        addr_map_free(&s->iids);
        free(s->iid_table);
        free(s);
    }
    addr_map_free(&w->sequences);
    addr_map_free(&w->described);
    process_tracks_free(&w->pids);
    window_reader_free(&w->window);
    run_funcs_free(w->funcs);
    pb_buf_free(&w->packet), pb_buf_free(&w->part), pb_buf_free(&w->inner);
}

static const struct call_reader_ops pftrace_calls = {.record = on_record,
                                                     .thread = on_thread,
                                                     .enter = on_call_enter,
                                                     .values = keep_values,
                                                     .exit = on_call_exit};

static int open_writer(struct pf_writer *w, const struct trace_io *io, bool gzip,
                       const struct call_window *window, int64_t run_start_ns)
{
    const char *path = io->out_path;
    int rc = gzip ? outbuf_open_gzip(&w->out, io->out_dir, io->out_name, io->mode, PFTRACE_BUFFER)
                  : outbuf_open(&w->out, io->out_dir, io->out_name, io->mode, PFTRACE_BUFFER);
    if (rc < 0) {
        err_msg("cannot create %s: %s", path, strerror(-rc));
        return -1;
    }
    if (addr_map_init(&w->names, 1024) < 0 || addr_map_init(&w->described, 64) < 0 ||
        addr_map_init(&w->sequences, 64) < 0 || process_tracks_init(&w->pids) < 0 ||
        window_reader_init(&w->window, window, run_start_ns) < 0 || !(w->funcs = run_funcs_new())) {
        err_msg("%s: out of memory", path);
        outbuf_close(&w->out);
        return -1;
    }
    return 0;
}

int trace_pftrace_write(const struct trace_io *io, const struct trace_file_options *opts,
                        struct trace_stats *stats)
{
    const char *path = io->out_path;
    bool gzip = opts && opts->compress;
    const struct call_window *window = opts ? &opts->window : NULL;
    char why[256];
    struct call_reader cr;
    struct pf_writer w = {
        .next_sequence = DESCRIPTOR_SEQUENCE + 1, .stats = stats, .srcline = opts && opts->srcline};
    if (call_reader_open(&cr, io->record_dir, io->record_name, &pftrace_calls, &w, why,
                         sizeof(why)) < 0) {
        err_msg("%s: %s", io->record_path, why);
        return -1;
    }
    if (open_writer(&w, io, gzip, window, (int64_t)cr.time.start.mono_ns) < 0) {
        free_writer(&w);
        call_reader_close(&cr);
        return -1;
    }
    trace_size_guard_init(&w.size);
    cr.progress = opts ? opts->progress : NULL;
    cr.progress_what = "writing " TRACE_PFTRACE_NAME;
    int failed = call_reader_run(&cr);
    stats->record_damaged = cr.damaged;
    int rc = outbuf_close(&w.out);
    free_writer(&w);
    call_reader_close(&cr);
    if (failed || rc == -ENOMEM) {
        err_msg("%s: out of memory while writing the trace", path);
        return -1;
    }
    if (rc < 0) {
        err_hint(rc == -ENOSPC ? "free some space, then run `calltrace export RUN`" : NULL,
                 "cannot write %s: %s", path, strerror(-rc));
        return -1;
    }
    return 0;
}
