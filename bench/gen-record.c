/* gen-record RUN EVENTS [THREADS]: writes a synthetic run directory RUN whose events.ctr holds
 * about EVENTS call entries and exits, for timing `calltrace report`, `graph` and `tree` on big
 * runs. The calls form a fixed tree (a recursion 8 deep under main, a fan of leaf calls) spread
 * over THREADS threads (default 4), with made-up but monotonic times. */
#include <fcntl.h>
#include <bsd/stdlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "record/writer.h"

#define NFUNCS 64

struct gen {
    struct recorder rec;
    uint64_t t;
    uint64_t events;
};

static void call_tree(struct gen *g, uint32_t tid, uint32_t func, unsigned depth)
{
    rec_enter(&g->rec, 1000, tid, func, g->t += 7);
    g->events++;
    if (depth < 8)
        call_tree(g, tid, 1 + depth % 3, depth + 1); /* a, b, c, a, b, c...: recursion */
    for (unsigned i = 0; depth == 8 && i < 6; i++) {
        uint32_t leaf = 4 + (uint32_t)(g->t % (NFUNCS - 4));
        rec_enter(&g->rec, 1000, tid, leaf, g->t += 3);
        rec_exit(&g->rec, 1000, tid, leaf, g->t += 11, 0);
        g->events += 2;
    }
    rec_exit(&g->rec, 1000, tid, func, g->t += 5, 0);
    g->events++;
}

int main(int argc, char **argv)
{
    const char *why = NULL;
    if (argc < 3) {
        fprintf(stderr, "usage: gen-record RUN EVENTS [THREADS]\n");
        return 2;
    }
    long long want = strtonum(argv[2], 1, 1LL << 40, &why);
    long long threads = argc > 3 ? strtonum(argv[3], 1, 1000, &why) : 4;
    char path[4096];
    if (why || mkdir(argv[1], 0755) < 0) {
        fprintf(stderr, "gen-record: %s: %s\n", argv[1], why ? why : "cannot create");
        return 1;
    }
    snprintf(path, sizeof(path), "%s/events.ctr", argv[1]);
    struct clock_calibration clock = {.use_tsc = false, .start = {0, 0}, .ns_per_tick = 1};
    struct gen g = {.t = 0};
    if (recorder_open(&g.rec, AT_FDCWD, path, 0644, &clock) < 0) {
        fprintf(stderr, "gen-record: cannot create %s\n", path);
        return 1;
    }
    rec_image(&g.rec, 0, 1000, 0, "/synthetic/prog");
    for (uint32_t f = 0; f < NFUNCS; f++) {
        char name[32];
        snprintf(name, sizeof(name), f == 0 ? "main" : "func_%u", f);
        rec_func(&g.rec, f, 0, 0x1000 + 16 * f, 16, name);
    }
    rec_process(&g.rec, 1000, 1, 0, "synthetic", false);
    for (uint32_t t = 0; t < threads; t++) {
        rec_thread(&g.rec, 1000, 1000 + t, g.t);
        rec_enter(&g.rec, 1000, 1000 + t, 0, g.t += 1);
    }
    for (uint32_t t = 0; g.events < (uint64_t)want; t = (t + 1) % (uint32_t)threads)
        call_tree(&g, 1000 + t, 1, 1);
    for (uint32_t t = 0; t < threads; t++)
        rec_exit(&g.rec, 1000, 1000 + t, 0, g.t += 1, 0);
    int err = recorder_close(&g.rec);
    printf("%llu events\n", (unsigned long long)g.events + 2 * (unsigned long long)threads);
    return err ? 1 : 0;
}
