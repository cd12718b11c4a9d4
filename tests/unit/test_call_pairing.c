/* call_pairing: entries paired with their exits per thread, values kept with the innermost call
 * of their function only, and every call left open handed over unfinished, in the process it
 * ran in. */
#include "output/call_pairing.h"

#include "unit.h"

struct seen {
    struct paired_call calls[16];
    int has_args[16], has_ret[16];
    size_t n;
};

static void done(void *ctx, const struct paired_call *call)
{
    struct seen *s = ctx;
    if (s->n < 16) {
        s->has_args[s->n] = call->args != NULL;
        s->has_ret[s->n] = call->ret != NULL;
        s->calls[s->n++] = *call;
    }
}

static void feed_call(struct call_pairing *p, uint8_t type, uint32_t pid, uint32_t tid,
                      uint32_t func, uint64_t ticks, uint8_t flags)
{
    struct rec_call r = {{type, flags, sizeof(r), tid}, func, pid, ticks};
    CHECK(call_pairing_feed(p, &r.hdr) == 0);
}

static void feed_values(struct call_pairing *p, uint8_t type, uint32_t tid, uint32_t func)
{
    struct rec_values v = {{type, 0, sizeof(v), tid}, func, 0};
    CHECK(call_pairing_feed(p, &v.hdr) == 0);
}

static void check_call(const struct seen *s, size_t i, uint32_t func, uint32_t pid, uint64_t entry,
                       uint64_t exit, unsigned flags)
{
    CHECK(i < s->n);
    if (i >= s->n)
        return;
    CHECK_EQ_U64(s->calls[i].func, func);
    CHECK_EQ_U64(s->calls[i].pid, pid);
    CHECK_EQ_U64(s->calls[i].entry_ticks, entry);
    CHECK_EQ_U64(s->calls[i].exit_ticks, exit);
    CHECK_EQ_U64(s->calls[i].flags, flags);
}

static const struct call_pairing_ops keep_all = {.done = done};

static void start(struct call_pairing *p, const struct call_pairing_ops *ops, struct seen *s)
{
    *s = (struct seen){0};
    CHECK(call_pairing_init(p, ops, s) == 0);
}

static void test_pairs_and_values(void)
{
    struct seen s;
    struct call_pairing p;
    start(&p, &keep_all, &s);
    feed_call(&p, REC_ENTER, 10, 11, 1, 100, 0);
    feed_values(&p, REC_ARGS, 11, 1);
    feed_call(&p, REC_ENTER, 10, 11, 2, 110, 0);
    feed_values(&p, REC_ARGS, 11, 1); /* not the innermost call's function: dropped */
    feed_values(&p, REC_RETVAL, 11, 2);
    feed_call(&p, REC_EXIT, 10, 11, 2, 120, EXIT_UNWOUND);
    feed_call(&p, REC_EXIT, 10, 12, 2, 125, 0); /* no open call on tid 12: ignored */
    feed_call(&p, REC_EXIT, 10, 11, 1, 130, 0);
    CHECK_EQ_U64(s.n, 2);
    check_call(&s, 0, 2, 10, 110, 120, EXIT_UNWOUND);
    CHECK(!s.has_args[0] && s.has_ret[0]);
    check_call(&s, 1, 1, 10, 100, 130, 0);
    CHECK(s.has_args[1] && !s.has_ret[1]);
    CHECK_EQ_U64(s.calls[1].tid, 11);
    call_pairing_free(&p);
}

static void test_open_calls_end_unfinished(void)
{
    struct seen s;
    struct call_pairing p;
    start(&p, &keep_all, &s);
    feed_call(&p, REC_ENTER, 20, 21, 1, 200, 0);
    struct rec_end end = {{REC_THREAD_END, 0, sizeof(end), 21}, 0, 20, 210};
    CHECK(call_pairing_feed(&p, &end.hdr) == 0);
    check_call(&s, 0, 1, 20, 200, 210, EXIT_UNFINISHED);
    /* tid 22 starts again in another process: its calls left open stay in the first one */
    feed_call(&p, REC_ENTER, 20, 22, 3, 220, 0);
    struct rec_thread again = {{REC_THREAD, 0, sizeof(again), 22}, 30, 0, 230};
    CHECK(call_pairing_feed(&p, &again.hdr) == 0);
    check_call(&s, 1, 3, 20, 220, 230, EXIT_UNFINISHED);
    /* the record stops: what is open ends at the last entry or exit */
    feed_call(&p, REC_ENTER, 30, 22, 4, 240, 0);
    call_pairing_finish(&p);
    check_call(&s, 2, 4, 30, 240, 240, EXIT_UNFINISHED);
    CHECK_EQ_U64(s.n, 3);
    call_pairing_free(&p);
}

static int keep_none(void *ctx, struct paired_call *call, const struct rec_hdr *h)
{
    (void)ctx;
    (void)h;
    call->number = 7;
    return 0;
}

static void test_values_hook_decides(void)
{
    static const struct call_pairing_ops ops = {.values = keep_none, .done = done};
    struct seen s;
    struct call_pairing p;
    start(&p, &ops, &s);
    feed_call(&p, REC_ENTER, 40, 41, 1, 400, 0);
    feed_values(&p, REC_ARGS, 41, 1);
    feed_call(&p, REC_EXIT, 40, 41, 1, 410, 0);
    CHECK_EQ_U64(s.n, 1);
    CHECK(!s.has_args[0]);
    CHECK_EQ_U64(s.calls[0].number, 7);
    feed_call(&p, REC_ENTER, 40, 41, 2, 420, 0); /* still open when the pairing is freed */
    CHECK_EQ_U64(s.n, 1);
    call_pairing_free(&p);
}

int main(void)
{
    test_pairs_and_values();
    test_open_calls_end_unfinished();
    test_values_hook_decides();
    return unit_finish("call_pairing");
}
