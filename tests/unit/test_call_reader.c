/* call_reader: entries paired with their exits per thread, with depth, parent and self time;
 * values kept with the innermost call of their function only, when the consumer asks; every
 * call left open handed over unfinished, in the process it ran in, at its thread's end or, when
 * the record stops, at the latest time of any thread; and the time base of a run that ended
 * early taken from its last periodic anchor. */
#include "record/call_reader.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "unit.h"

struct seen_call {
    struct call_frame frame;
    uint32_t pid, tid, depth, parent_func;
    int64_t end_ns, total_ns, self_ns;
    unsigned flags;
    int has_args, has_ret;
};

struct seen {
    struct seen_call calls[16];
    size_t n;
    int keep; /* what the values callback answers */
};

static int on_exit_call(void *ctx, struct call_reader *cr, const struct call_done *c)
{
    struct seen *s = ctx;
    (void)cr;
    if (s->n < 16)
        s->calls[s->n++] = (struct seen_call){
            .frame = *c->frame,
            .pid = c->thread->pid,
            .tid = c->thread->tid,
            .depth = c->depth,
            .parent_func = c->parent ? c->parent->func : UINT32_MAX,
            .end_ns = c->end_ns,
            .total_ns = c->total_ns,
            .self_ns = c->self_ns,
            .flags = c->flags,
            .has_args = c->frame->args != NULL,
            .has_ret = c->frame->ret != NULL,
        };
    return 0;
}

static int number_values(void *ctx, struct call_reader *cr, struct call_thread *t,
                         struct call_frame *f, const struct rec_hdr *h)
{
    struct seen *s = ctx;
    (void)cr, (void)t, (void)h;
    f->user = 7;
    return s->keep;
}

static const struct call_reader_ops ops = {.values = number_values, .exit = on_exit_call};

/* ns_per_tick 1 from a zero anchor: ticks are nanoseconds. */
static void start(struct call_reader *cr, struct seen *s, int keep)
{
    static const struct rec_time identity = {.ns_per_tick = 1};
    *s = (struct seen){.keep = keep};
    CHECK(call_reader_init(cr, &identity, &ops, s) == 0);
}

static void feed_call(struct call_reader *cr, uint8_t type, uint32_t pid, uint32_t tid,
                      uint32_t func, uint64_t ticks, uint8_t flags)
{
    struct rec_call r = {{type, flags, sizeof(r), tid}, func, pid, ticks};
    CHECK(call_reader_feed(cr, &r.hdr) == 0);
}

static void feed_values(struct call_reader *cr, uint8_t type, uint32_t tid, uint32_t func)
{
    struct rec_values v = {{type, 0, sizeof(v), tid}, func, 0};
    CHECK(call_reader_feed(cr, &v.hdr) == 0);
}

static void check_call(const struct seen *s, size_t i, uint32_t func, uint32_t pid, int64_t start,
                       int64_t end, unsigned flags)
{
    CHECK(i < s->n);
    if (i >= s->n)
        return;
    CHECK_EQ_U64(s->calls[i].frame.func, func);
    CHECK_EQ_U64(s->calls[i].pid, pid);
    CHECK_EQ_U64(s->calls[i].frame.start_ns, start);
    CHECK_EQ_U64(s->calls[i].end_ns, end);
    CHECK_EQ_U64(s->calls[i].flags, flags);
}

static void test_pairs_and_values(void)
{
    struct seen s;
    struct call_reader cr;
    start(&cr, &s, 1);
    feed_call(&cr, REC_ENTER, 10, 11, 1, 100, 0);
    feed_values(&cr, REC_ARGS, 11, 1);
    feed_call(&cr, REC_ENTER, 10, 11, 2, 110, 0);
    feed_values(&cr, REC_ARGS, 11, 1); /* not the innermost call's function: dropped */
    feed_values(&cr, REC_RETVAL, 11, 2);
    feed_call(&cr, REC_EXIT, 10, 11, 2, 120, EXIT_UNWOUND);
    feed_call(&cr, REC_EXIT, 10, 12, 2, 125, 0); /* no open call on tid 12: ignored */
    feed_call(&cr, REC_EXIT, 10, 11, 1, 130, 0);
    CHECK_EQ_U64(s.n, 2);
    check_call(&s, 0, 2, 10, 110, 120, EXIT_UNWOUND);
    CHECK(!s.calls[0].has_args && s.calls[0].has_ret);
    CHECK_EQ_U64(s.calls[0].depth, 2);
    CHECK_EQ_U64(s.calls[0].parent_func, 1);
    check_call(&s, 1, 1, 10, 100, 130, 0);
    CHECK(s.calls[1].has_args && !s.calls[1].has_ret);
    CHECK_EQ_U64(s.calls[1].tid, 11);
    CHECK_EQ_U64(s.calls[1].depth, 1);
    CHECK_EQ_U64(s.calls[1].parent_func, UINT32_MAX);
    CHECK_EQ_U64(s.calls[1].total_ns, 30);
    CHECK_EQ_U64(s.calls[1].self_ns, 20); /* minus its child's 10 */
    CHECK_EQ_U64(cr.calls, 2);
    CHECK_EQ_U64(cr.events, 8);
    call_reader_close(&cr);
}

static void test_open_calls_end_unfinished(void)
{
    struct seen s;
    struct call_reader cr;
    start(&cr, &s, 1);
    feed_call(&cr, REC_ENTER, 20, 21, 1, 200, 0);
    struct rec_end end = {{REC_THREAD_END, 0, sizeof(end), 21}, 0, 20, 210};
    CHECK(call_reader_feed(&cr, &end.hdr) == 0);
    check_call(&s, 0, 1, 20, 200, 210, EXIT_UNFINISHED);
    /* tid 22 starts again in another process: its calls left open stay in the first one */
    feed_call(&cr, REC_ENTER, 20, 22, 3, 220, 0);
    struct rec_thread again = {{REC_THREAD, 0, sizeof(again), 22}, 30, 0, 230};
    CHECK(call_reader_feed(&cr, &again.hdr) == 0);
    check_call(&s, 1, 3, 20, 220, 230, EXIT_UNFINISHED);
    /* the record stops: what is open ends at the latest time of any thread (tid 23's exit,
     * written after tid 22's later entry), threads in order of first appearance */
    feed_call(&cr, REC_ENTER, 30, 22, 4, 240, 0);
    feed_call(&cr, REC_ENTER, 30, 23, 5, 245, 0);
    feed_call(&cr, REC_ENTER, 30, 23, 6, 250, 0);
    feed_call(&cr, REC_EXIT, 30, 23, 6, 260, 0);
    feed_call(&cr, REC_ENTER, 30, 22, 7, 255, 0);
    CHECK(call_reader_finish(&cr) == 0);
    CHECK_EQ_U64(s.n, 6);
    check_call(&s, 2, 6, 30, 250, 260, 0);
    check_call(&s, 3, 7, 30, 255, 260, EXIT_UNFINISHED);
    check_call(&s, 4, 4, 30, 240, 260, EXIT_UNFINISHED);
    check_call(&s, 5, 5, 30, 245, 260, EXIT_UNFINISHED);
    CHECK_EQ_U64(s.calls[4].self_ns, 20 - 5); /* its child 7 counts, unfinished as it is */
    call_reader_close(&cr);
}

static void test_values_hook_decides(void)
{
    struct seen s;
    struct call_reader cr;
    start(&cr, &s, 0);
    feed_call(&cr, REC_ENTER, 40, 41, 1, 400, 0);
    feed_values(&cr, REC_ARGS, 41, 1);
    feed_call(&cr, REC_EXIT, 40, 41, 1, 410, 0);
    CHECK_EQ_U64(s.n, 1);
    CHECK(!s.calls[0].has_args);
    CHECK_EQ_U64(s.calls[0].frame.user, 7);
    feed_call(&cr, REC_ENTER, 40, 41, 2, 420, 0); /* still open when the reader is closed */
    s.keep = 1;
    feed_values(&cr, REC_ARGS, 41, 2);
    CHECK_EQ_U64(s.n, 1);
    call_reader_close(&cr);
}

/* An end before the start (ticks of a damaged record) is a call of no time, never negative. */
static void test_no_negative_time(void)
{
    struct seen s;
    struct call_reader cr;
    start(&cr, &s, 1);
    feed_call(&cr, REC_ENTER, 50, 51, 1, 500, 0);
    feed_call(&cr, REC_ENTER, 50, 51, 2, 520, 0);
    feed_call(&cr, REC_EXIT, 50, 51, 2, 510, 0);
    feed_call(&cr, REC_EXIT, 50, 51, 1, 490, 0);
    CHECK_EQ_U64(s.n, 2);
    CHECK_EQ_U64(s.calls[0].total_ns, 0);
    CHECK_EQ_U64(s.calls[1].total_ns, 0);
    CHECK_EQ_U64(s.calls[1].self_ns, 0);
    call_reader_close(&cr);
}

/* 1 tick = 2 ns at calibration, 3 ns measured: a record of ticks 0..1000 with a periodic
 * anchor at tick 500 (1500 ns); complete, its header's end anchor says 4 ns a tick. */
static void write_record(const char *path, bool complete)
{
    struct rec_header h = {.magic = REC_MAGIC, .version = REC_VERSION, .ns_per_tick = 2};
    if (complete) {
        h.flags |= REC_F_COMPLETE;
        h.end = (struct clock_anchor){1000, 4000};
    }
    struct rec_thread thread = {{REC_THREAD, 0, sizeof(thread), 100}, 100, 0, 0};
    struct rec_call enter = {{REC_ENTER, 0, sizeof(enter), 100}, 0, 100, 100};
    struct rec_clock anchor = {{REC_CLOCK, 0, sizeof(anchor), 0}, {0, 0}, {500, 1500}};
    struct rec_call exit = {{REC_EXIT, 0, sizeof(exit), 100}, 0, 100, 300};
    struct rec_call open_call = {{REC_ENTER, 0, sizeof(open_call), 100}, 0, 100, 1000};
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK(write(fd, &h, sizeof(h)) == (ssize_t)sizeof(h));
    CHECK(write(fd, &thread, sizeof(thread)) == (ssize_t)sizeof(thread));
    CHECK(write(fd, &enter, sizeof(enter)) == (ssize_t)sizeof(enter));
    CHECK(write(fd, &anchor, sizeof(anchor)) == (ssize_t)sizeof(anchor));
    CHECK(write(fd, &exit, sizeof(exit)) == (ssize_t)sizeof(exit));
    CHECK(write(fd, &open_call, sizeof(open_call)) == (ssize_t)sizeof(open_call));
    close(fd);
}

static void read_record(const char *path, struct seen *s)
{
    struct call_reader cr;
    char why[256];
    *s = (struct seen){0};
    CHECK(call_reader_open(&cr, AT_FDCWD, path, &ops, s, why, sizeof(why)) == 0);
    CHECK(call_reader_run(&cr) == 0);
    CHECK_EQ_U64(cr.damaged, 0);
    call_reader_close(&cr);
}

static void test_time_base(const char *dir)
{
    char path[512];
    struct seen s;
    snprintf(path, sizeof(path), "%s/killed.ctr", dir);
    write_record(path, false);
    read_record(path, &s); /* the last periodic anchor: 3 ns a tick */
    CHECK_EQ_U64(s.n, 2);
    check_call(&s, 0, 0, 100, 300, 900, 0);
    check_call(&s, 1, 0, 100, 3000, 3000, EXIT_UNFINISHED);
    write_record(path, true);
    read_record(path, &s); /* the header's end anchor: 4 ns a tick */
    check_call(&s, 0, 0, 100, 400, 1200, 0);
    struct rec_time t;
    struct rec_header h = {.flags = 0, .start = {0, 0}, .ns_per_tick = 2};
    CHECK(rec_time_of(&t, AT_FDCWD, "/nonexistent/events.ctr", &h) < 0);
    CHECK_EQ_U64(rec_time_ns(&t, 10), 20); /* unreadable: the nominal rate */
}

int main(void)
{
    char dir[] = "/tmp/calltrace-unit-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    test_pairs_and_values();
    test_open_calls_end_unfinished();
    test_values_hook_decides();
    test_no_negative_time();
    test_time_base(dir);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    return unit_finish("call_reader");
}
