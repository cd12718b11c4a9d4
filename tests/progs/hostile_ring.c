/* A traced program that attacks its tracer through the memory the inject engine shares with it
 * (tests/e2e/92-hostile-ring.sh): its control block and ring, found from fs:[0x80] as the
 * trampolines find them (arch/x86_64/inject_tramp.h INJECT_TCB_SLOT, arch/ring_abi.h).
 *
 * Usage: hostile_ring MODE [N]
 *   scribble SEED  rounds of random bytes over the control block and the ring, some of them
 *                  events with the right stamps, between passes of calltrace (SEED 0: forever)
 *   wrap           positions near 2^64: a record whose length wraps the end of the span past
 *                  2^64, then a head that wraps past 2^64
 *   nest N         N entries that nest deeper and deeper, never returning (0: forever)
 *   badexit N      20000 nested entries, then N exits whose slot matches no open call
 *                  (0: forever)
 *   unmapped N     N nested entries on no stack at all: their slots in no mapping (0: forever)
 *   truncate       truncates the region's memfd through every way it can reach it, then calls
 *                  work() 1000 times and returns from main
 *
 * Every mode but truncate writes what calltrace reads while calltrace is stopped (SIGSTOP to the
 * TracerPid, then waits until /proc shows it stopped) or through the ring's own protocol
 * (reserve, write, stamp last, wait for room as a trampoline does), so that what calltrace sees
 * does not depend on timing; and after the first write it runs no traced code again (its
 * helpers are inlined, and it ends with the exit_group system call): the trampolines would
 * follow what it wrote over. It prints one line per step ("ok ..."), and its counts. With
 * HOSTILE_PROGRESS=FILE, the 8 bytes of FILE count the events written (scribble: the rounds), for
 * a test that waits for the attack to be under way. */
#include "common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

/* The ring ABI's offsets (arch/ring_abi.h), as a program that knows them would hard-code them. */
#define CTL_HEAD 0
#define CTL_LIMIT 8
#define CTL_MASK 16
#define CTL_RING 24
#define CTL_REGION 32
#define CTL_CONSUMER 72
#define CTL_TAIL 128
#define CTL_SIZE 4096
#define REGION_PROGRESS 64
#define EVENT_SIZE 32
#define EVENT_EXIT (1u << 31)
#define EVENT_DATA (1u << 30)
#define TCB_SLOT 0x80

#define UNTRACED static inline __attribute__((always_inline))

static unsigned long n_work, n_probe, n_main;
static volatile unsigned long sink;
static uint64_t blob_exit; /* where a traced call returns to: the trampoline's exit */
static uint64_t no_progress_file;
static volatile uint64_t *progress = &no_progress_file;

TRACED void work(unsigned long i)
{
    COUNT(n_work);
    sink += i;
}

TRACED void probe(void)
{
    COUNT(n_probe);
    blob_exit = (uint64_t)__builtin_return_address(0);
}

struct event {
    uint64_t tsc, slot, ret;
    uint32_t func, stamp;
};

struct ring {
    uint8_t *ctl, *ring;
    uint64_t mask;
    volatile uint64_t *progress;
    pid_t tracer;
    struct event model; /* probe()'s entry, as the trampoline wrote it */
};

UNTRACED uint64_t *word(struct ring *r, size_t off)
{
    return (uint64_t *)(r->ctl + off);
}

UNTRACED long status_field(const char *path, const char *name)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[256];
    long v = -1;
    size_t len = strlen(name);
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, name, len) == 0) {
            v = atol(line + len);
            break;
        }
    fclose(f);
    return v;
}

UNTRACED char state_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return '?';
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : '?';
}

UNTRACED void die(const char *what)
{
    printf("error %s: %s\n", what, strerror(errno));
    fflush(stdout);
    syscall(SYS_exit_group, 2);
}

UNTRACED void print_counts(void)
{
    PRINT_COUNT("main", n_main);
    PRINT_COUNT("probe", n_probe);
    PRINT_COUNT("work", n_work);
    fflush(stdout);
}

/* Ends without a traced return: the trampolines would follow what was written over. */
UNTRACED void finish(void)
{
    print_counts();
    syscall(SYS_exit_group, 0);
}

/* HOSTILE_PROGRESS: the file whose 8 bytes count what was written. */
UNTRACED void map_progress(void)
{
    const char *path = getenv("HOSTILE_PROGRESS");
    if (!path)
        return;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(uint64_t)) < 0)
        die(path);
    void *at = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (at == MAP_FAILED)
        die("mmap");
    close(fd);
    progress = at;
}

/* The thread's control block and ring, and the entry event probe() just wrote. */
UNTRACED void find_ring(struct ring *r)
{
    probe();
    uint64_t ctl;
    __asm__ volatile("mov %%fs:%c1, %0" : "=r"(ctl) : "i"(TCB_SLOT));
    if (ctl <= 1) {
        printf("error: not traced by the inject engine\n");
        finish();
    }
    r->ctl = (uint8_t *)ctl;
    r->ring = (uint8_t *)*word(r, CTL_RING);
    r->mask = *word(r, CTL_MASK);
    r->progress = (volatile uint64_t *)(*word(r, CTL_REGION) + REGION_PROGRESS);
    r->tracer = (pid_t)status_field("/proc/self/status", "TracerPid:\t");
    /* probe's entry, then its exit, are the last two events */
    uint64_t head = __atomic_load_n(word(r, CTL_HEAD), __ATOMIC_ACQUIRE);
    memcpy(&r->model, r->ring + ((head - 2 * EVENT_SIZE) & r->mask), sizeof(r->model));
}

UNTRACED void tracer_stop(struct ring *r)
{
    if (kill(r->tracer, SIGSTOP) < 0)
        die("kill SIGSTOP");
    while (state_of(r->tracer) != 'T')
        ;
}

/* Resumes calltrace and waits until it went over the rings twice: once may have begun before
 * what was written. */
UNTRACED void tracer_resume(struct ring *r)
{
    uint64_t seen = *r->progress;
    if (kill(r->tracer, SIGCONT) < 0)
        die("kill SIGCONT");
    while (*r->progress - seen < 2 && state_of(r->tracer) != '?') {
        struct timespec ms = {0, 1000000};
        syscall(SYS_futex, r->progress, FUTEX_WAIT, (uint32_t)*r->progress, &ms, NULL, 0);
    }
}

UNTRACED uint64_t next_random(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

UNTRACED void put_event(struct ring *r, uint64_t pos, uint64_t slot, uint64_t ret, uint32_t func)
{
    struct event *e = (struct event *)(r->ring + (pos & r->mask));
    e->tsc = __rdtsc();
    e->slot = slot;
    e->ret = ret;
    e->func = func;
    __atomic_store_n(&e->stamp, (uint32_t)(pos >> 5) + 1, __ATOMIC_RELEASE);
}

/* Appends an event as a trampoline does: waits for room first (calltrace woken, then a futex
 * wait of a millisecond on the tail), reserves, writes, stamps. */
UNTRACED void append(struct ring *r, uint64_t slot, uint64_t ret, uint32_t func)
{
    uint64_t *head = word(r, CTL_HEAD), *tail = word(r, CTL_TAIL);
    while (__atomic_load_n(head, __ATOMIC_RELAXED) - __atomic_load_n(tail, __ATOMIC_ACQUIRE) >
           *word(r, CTL_LIMIT)) {
        struct timespec ms = {0, 1000000};
        kill((pid_t)*word(r, CTL_CONSUMER), SIGCHLD);
        syscall(SYS_futex, tail, FUTEX_WAIT, (uint32_t)*tail, &ms, NULL, 0);
    }
    uint64_t pos = __atomic_fetch_add(head, EVENT_SIZE, __ATOMIC_ACQ_REL);
    put_event(r, pos, slot, ret, func);
    *progress += 1;
}

/* Random words over the control block (calltrace's tail included) and the ring; a third of the
 * ring's events get the stamp of their position, so that they are read, with random data
 * lengths; then a head and tail either plausible or not. */
UNTRACED void scribble_once(struct ring *r, uint64_t *rnd)
{
    for (size_t off = 0; off < CTL_SIZE; off += 8)
        if (off != CTL_RING && off != CTL_MASK && off != CTL_REGION)
            *word(r, off) = next_random(rnd);
    uint64_t tail = next_random(rnd) & ~(uint64_t)(EVENT_SIZE - 1);
    uint64_t span =
        next_random(rnd) % 3 ? (next_random(rnd) % 4096) * EVENT_SIZE : next_random(rnd);
    for (uint64_t pos = tail; pos - tail < (r->mask + 1) && pos - tail < span; pos += EVENT_SIZE) {
        struct event *e = (struct event *)(r->ring + (pos & r->mask));
        uint64_t *w = (uint64_t *)e;
        for (int i = 0; i < 4; i++)
            w[i] = next_random(rnd);
        if (next_random(rnd) % 3 == 0) {
            e->func = (r->model.func + (uint32_t)(next_random(rnd) % 4)) |
                      (uint32_t)(next_random(rnd) & (EVENT_EXIT | EVENT_DATA));
            e->stamp = (uint32_t)(pos >> 5) + 1;
        }
    }
    *word(r, CTL_TAIL) = tail;
    *word(r, CTL_HEAD) = tail + span;
}

UNTRACED int mode_scribble(struct ring *r, unsigned long seed)
{
    uint64_t rnd = seed ? seed : 88172645463325252ull;
    for (unsigned long round = 0; !seed || round < 64; round++) {
        tracer_stop(r);
        scribble_once(r, &rnd);
        tracer_resume(r);
        *progress += 1;
    }
    printf("ok scribbled 64 rounds\n");
    return 0;
}

/* A committed record with data at pos whose length takes its end past 2^64 (pos + 32 + len
 * wraps to below the head), between events that are fine; then the head itself wraps. */
UNTRACED int mode_wrap(struct ring *r)
{
    uint64_t *head = word(r, CTL_HEAD), *tail = word(r, CTL_TAIL);
    const struct event *m = &r->model;
    tracer_stop(r);
    uint64_t pos = -(uint64_t)(64 * EVENT_SIZE);
    *tail = pos;
    put_event(r, pos, m->slot - 4096, m->ret, m->func);
    put_event(r, pos + EVENT_SIZE, m->slot - 4096, m->ret, m->func | EVENT_EXIT);
    uint64_t at = pos + 2 * EVENT_SIZE;
    uint64_t *len = (uint64_t *)(r->ring + ((at + EVENT_SIZE) & r->mask));
    *len = -(at + EVENT_SIZE); /* its end: at + 32 + len == 2^64, i.e. 0, below the head */
    put_event(r, at, m->slot - 4096, m->ret, m->func | EVENT_DATA);
    *head = -(uint64_t)EVENT_SIZE;
    tracer_resume(r);
    printf("ok wrapping length\n");
    tracer_stop(r);
    pos = -(uint64_t)(4 * EVENT_SIZE);
    *tail = pos;
    for (int i = 0; i < 8; i++)
        put_event(r, pos + (uint64_t)i * EVENT_SIZE, m->slot - 4096, m->ret,
                  m->func | (i % 2 ? EVENT_EXIT : 0));
    *head = pos + 8 * EVENT_SIZE; /* 4 events past 2^64 */
    tracer_resume(r);
    printf("ok wrapping head\n");
    return 0;
}

/* Entries on this thread's stack, each below the one before: calls that never return. */
UNTRACED uint64_t nest(struct ring *r, unsigned long n, uint64_t slot)
{
    for (unsigned long i = 0; !n || i < n; i++, slot -= 16)
        append(r, slot, r->model.ret, r->model.func);
    return slot;
}

UNTRACED int mode_nest(struct ring *r, unsigned long n)
{
    nest(r, n, r->model.slot - 4096);
    printf("ok nested %lu\n", n);
    return 0;
}

/* Entries whose slots are in no mapping (below the lowest one a program may map): calltrace knows
 * no stack there, and would read /proc/PID/maps for each. */
UNTRACED int mode_unmapped(struct ring *r, unsigned long n)
{
    nest(r, n, 0x8000000);
    printf("ok %lu entries on no stack\n", n);
    return 0;
}

/* Exits at a slot above every open call but below main's, returning to the trampoline's exit
 * (as a tail call's does): no open call has that slot. */
UNTRACED int mode_badexit(struct ring *r, unsigned long n)
{
    uint64_t top = r->model.slot - 4096;
    nest(r, 20000, top);
    for (unsigned long i = 0; !n || i < n; i++)
        append(r, top + 8, blob_exit, r->model.func | EVENT_EXIT);
    printf("ok %lu bad exits\n", n);
    return 0;
}

/* A descriptor of the memfd the region is in, by the path given, ftruncated to 0. */
UNTRACED void truncate_by(const char *what, const char *path)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        printf("%s: cannot open: %s\n", what, strerror(errno));
        return;
    }
    if (ftruncate(fd, 0) == 0)
        printf("%s: truncated\n", what);
    else
        printf("%s: refused: %s\n", what, strerror(errno));
    fflush(stdout);
    close(fd);
}

/* The memfd through the mapping of the control block (/proc/self/map_files), and through
 * calltrace's descriptors when they are open to this process. */
UNTRACED int mode_truncate(struct ring *r)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512], path[PATH_MAX];
    uint64_t at = (uint64_t)r->ctl;
    while (maps && fgets(line, sizeof(line), maps)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && at >= lo && at < hi) {
            snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", lo, hi);
            truncate_by("map_files", path);
        }
    }
    if (maps)
        fclose(maps);
    char fds[64];
    snprintf(fds, sizeof(fds), "/proc/%d/fd", (int)r->tracer);
    DIR *d = opendir(fds);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char link[PATH_MAX], target[PATH_MAX] = "";
        snprintf(link, sizeof(link), "%s/%s", fds, de->d_name);
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        if (n > 0 && (target[n] = 0, strstr(target, "calltrace-rings")))
            truncate_by("tracer fd", link);
    }
    if (d)
        closedir(d);
    for (unsigned long i = 0; i < 1000; i++)
        work(i);
    printf("ok called work 1000 times\n");
    return 0;
}

int main(int argc, char **argv)
{
    COUNT(n_main);
    const char *mode = argc > 1 ? argv[1] : "";
    unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
    struct ring r;
    map_progress();
    find_ring(&r);
    int rc = 2;
    if (strcmp(mode, "scribble") == 0)
        rc = mode_scribble(&r, n);
    else if (strcmp(mode, "wrap") == 0)
        rc = mode_wrap(&r);
    else if (strcmp(mode, "nest") == 0)
        rc = mode_nest(&r, n);
    else if (strcmp(mode, "badexit") == 0)
        rc = mode_badexit(&r, n);
    else if (strcmp(mode, "unmapped") == 0)
        rc = mode_unmapped(&r, n);
    else if (strcmp(mode, "truncate") == 0)
        return mode_truncate(&r), print_counts(), 0; /* nothing written over: a normal end */
    else
        printf("error: unknown mode '%s'\n", mode);
    if (rc)
        syscall(SYS_exit_group, rc);
    finish();
}
