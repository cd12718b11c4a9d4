/* The profile of records written with the recorder API: inclusive and self time with direct and
 * mutual recursion, calls hanging from their nearest kept ancestor when a filter hides their
 * caller, the depth limit, inherited frames, the thread filter. Times are whole microseconds on
 * the non-TSC clock (ticks are nanoseconds), so every expected number is exact. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/profile.h"
#include "record/writer.h"
#include "unit.h"

#define US 1000

enum { MAIN, FIB, A, B, HIDDEN, LEAF, NFUNCS };
static const char *const names[NFUNCS] = {"main", "fib", "a", "b", "hidden", "leaf"};

struct script {
    struct recorder rec;
    uint64_t t;
};

static void enter(struct script *s, uint32_t tid, uint32_t f, uint64_t at_us)
{
    rec_enter(&s->rec, 100, tid, f, at_us * US);
}

static void leave(struct script *s, uint32_t tid, uint32_t f, uint64_t at_us, unsigned flags)
{
    rec_exit(&s->rec, 100, tid, f, at_us * US, flags);
}

/* Thread 100:
 *   main 0..100
 *     fib 10..60          fib 20..50         fib 30..40          (recursion, 3 deep)
 *     a 60..90 -> hidden 62..88 -> leaf 64..70, b 72..86 -> a 74..84 (mutual: a b a)
 * Thread 101: leaf 0..5, leaf 10..12 (unfinished: thread ends at 12) */
static void write_sample(const char *path)
{
    struct clock_calibration clock = {.use_tsc = false, .start = {0, 0}, .ns_per_tick = 1};
    struct script s;
    CHECK(recorder_open(&s.rec, AT_FDCWD, path, 0644, &clock) == 0);
    rec_image(&s.rec, 0, 100, 0, "/bin/prog");
    for (uint32_t f = 0; f < NFUNCS; f++)
        rec_func(&s.rec, f, 0, 0x1000 + f * 16, 16, names[f]);
    rec_process(&s.rec, 100, 1, 0, "prog", false);
    rec_thread(&s.rec, 100, 100, 0);
    enter(&s, 100, MAIN, 0);
    enter(&s, 100, FIB, 10);
    enter(&s, 100, FIB, 20);
    enter(&s, 100, FIB, 30);
    leave(&s, 100, FIB, 40, 0);
    leave(&s, 100, FIB, 50, 0);
    leave(&s, 100, FIB, 60, 0);
    enter(&s, 100, A, 60);
    enter(&s, 100, HIDDEN, 62);
    enter(&s, 100, LEAF, 64);
    leave(&s, 100, LEAF, 70, 0);
    enter(&s, 100, B, 72);
    enter(&s, 100, A, 74);
    leave(&s, 100, A, 84, 0);
    leave(&s, 100, B, 86, 0);
    leave(&s, 100, HIDDEN, 88, 0);
    leave(&s, 100, A, 90, 0);
    leave(&s, 100, MAIN, 100, 0);
    rec_thread(&s.rec, 100, 101, 0);
    enter(&s, 101, LEAF, 0);
    leave(&s, 101, LEAF, 5, 0);
    enter(&s, 101, LEAF, 10);
    rec_thread_end(&s.rec, 100, 101, 12 * US);
    CHECK(recorder_close(&s.rec) == 0);
}

static uint32_t sym(const struct profile *p, const char *name)
{
    for (uint32_t s = 0; s < p->replay.nsyms; s++)
        if (strcmp(p->replay.syms[s].name, name) == 0)
            return s;
    return UINT32_MAX;
}

static const struct func_stats *stats(const struct profile *p, const char *name)
{
    static const struct func_stats none;
    uint32_t s = sym(p, name);
    return s == UINT32_MAX ? &none : &p->stats[s];
}

static uint64_t edge(const struct profile *p, const char *from, const char *to)
{
    const struct profile_edge *e =
        addr_map_get(&p->edges, (uint64_t)sym(p, from) << 32 | sym(p, to));
    return e ? e->calls : 0;
}

static void test_times(const char *path)
{
    struct profile p;
    CHECK(profile_build(&p, path, NULL, true) == 0);
    const struct func_stats *fib = stats(&p, "fib");
    CHECK_EQ_U64(fib->calls, 3);
    CHECK_EQ_U64(fib->total_ns, 50 * US); /* the outermost call only, not 50 + 30 + 10 */
    CHECK_EQ_U64(fib->self_ns, 50 * US);  /* 20 + 20 + 10 */
    CHECK_EQ_U64(fib->min_ns, 10 * US);
    CHECK_EQ_U64(fib->max_ns, 50 * US);
    CHECK_EQ_U64(fib->sum_ns, 90 * US);
    const struct func_stats *a = stats(&p, "a");
    CHECK_EQ_U64(a->calls, 2);
    CHECK_EQ_U64(a->total_ns, 30 * US); /* a -> hidden -> b -> a: the inner a is inside */
    CHECK_EQ_U64(a->self_ns, 4 * US + 10 * US);
    const struct func_stats *main_ = stats(&p, "main");
    CHECK_EQ_U64(main_->total_ns, 100 * US);
    CHECK_EQ_U64(main_->self_ns, 100 * US - 50 * US - 30 * US);
    const struct func_stats *leaf = stats(&p, "leaf");
    CHECK_EQ_U64(leaf->calls, 3);
    CHECK_EQ_U64(leaf->unfinished, 1);
    CHECK_EQ_U64(leaf->total_ns, 6 * US + 5 * US + 2 * US);
    for (uint32_t s = 0; s < p.replay.nsyms; s++)
        CHECK(p.stats[s].self_ns <= p.stats[s].total_ns);
    CHECK_EQ_U64(edge(&p, "main", "fib"), 1);
    CHECK_EQ_U64(edge(&p, "fib", "fib"), 2);
    CHECK_EQ_U64(edge(&p, "hidden", "leaf"), 1);
    CHECK_EQ_U64(edge(&p, "main", "leaf"), 0);
    profile_free(&p);
}

static void test_nearest_kept_ancestor(const char *path)
{
    const char *exclude[] = {"hid*", "b"};
    struct profile_filter f = {.exclude = exclude, .nexclude = 2};
    struct profile p;
    CHECK(profile_build(&p, path, &f, true) == 0);
    CHECK_EQ_U64(stats(&p, "hidden")->calls, 0);
    CHECK_EQ_U64(edge(&p, "a", "leaf"), 1); /* its caller hidden was left out */
    CHECK_EQ_U64(edge(&p, "a", "a"), 1);    /* through hidden and b */
    CHECK_EQ_U64(edge(&p, "main", "a"), 1);
    CHECK_EQ_U64(p.edges.count, 5); /* main->fib, fib->fib, main->a, a->leaf, a->a */
    CHECK_EQ_U64(p.names.exclude_hits[0], 1);
    CHECK_EQ_U64(p.names.exclude_hits[1], 1);
    profile_free(&p);
}

static void test_depth_and_tid(const char *path)
{
    struct profile_filter f = {.max_depth = 2};
    struct profile p;
    CHECK(profile_build(&p, path, &f, true) == 0);
    CHECK_EQ_U64(stats(&p, "fib")->calls, 1);
    CHECK_EQ_U64(stats(&p, "leaf")->calls, 2); /* thread 101's, at depth 1 */
    CHECK_EQ_U64(edge(&p, "fib", "fib"), 0);
    CHECK_EQ_U64(edge(&p, "main", "a"), 1);
    profile_free(&p);

    const char *include[] = {"leaf", "nothing*"};
    struct profile_filter g = {.include = include, .ninclude = 2, .tid = 100};
    CHECK(profile_build(&p, path, &g, true) == 0);
    CHECK(p.saw_tid);
    CHECK_EQ_U64(stats(&p, "leaf")->calls, 1);
    CHECK_EQ_U64(stats(&p, "main")->calls, 0);
    CHECK_EQ_U64(p.edges.count, 0); /* no kept ancestor above it */
    CHECK_EQ_U64(p.names.include_hits[1], 0);
    profile_free(&p);
}

/* A forked child's copy of its parent's open call is not a call of the child, but its calls
 * still hang from it. */
static void test_inherited(const char *dir)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/inherited.ctr", dir);
    struct clock_calibration clock = {.use_tsc = false, .start = {0, 0}, .ns_per_tick = 1};
    struct recorder rec;
    CHECK(recorder_open(&rec, AT_FDCWD, path, 0644, &clock) == 0);
    rec_image(&rec, 0, 100, 0, "/bin/prog");
    rec_func(&rec, 0, 0, 0x1000, 16, "main");
    rec_func(&rec, 1, 0, 0x1010, 16, "child_work");
    rec_thread(&rec, 100, 100, 0);
    rec_enter(&rec, 100, 100, 0, 0);
    rec_thread(&rec, 200, 200, 5 * US);
    rec_enter(&rec, 200, 200, 0, 0);
    rec_enter(&rec, 200, 200, 1, 6 * US);
    rec_exit(&rec, 200, 200, 1, 8 * US, 0);
    rec_exit(&rec, 200, 200, 0, 9 * US, EXIT_INHERITED);
    rec_exit(&rec, 100, 100, 0, 20 * US, 0);
    CHECK(recorder_close(&rec) == 0);
    struct profile p;
    CHECK(profile_build(&p, path, NULL, true) == 0);
    CHECK_EQ_U64(stats(&p, "main")->calls, 1);
    CHECK_EQ_U64(stats(&p, "main")->total_ns, 20 * US);
    CHECK_EQ_U64(edge(&p, "main", "child_work"), 1);
    profile_free(&p);
}

int main(void)
{
    char dir[] = "/tmp/calltrace-unit-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char path[512];
    snprintf(path, sizeof(path), "%s/events.ctr", dir);
    write_sample(path);
    test_times(path);
    test_nearest_kept_ancestor(path);
    test_depth_and_tid(path);
    test_inherited(dir);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    return unit_finish("profile");
}
