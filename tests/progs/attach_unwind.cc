// A long-running program to attach to, and to SIGKILL calltrace on, whose calls go through
// everything that needs calltrace in the inject engine but a breakpoint in the ptrace engine:
//   - 3 threads throw C++ exceptions through 6 traced frames with destructors, catch them 3
//     frames up, rethrow and catch again, go on with traced calls in the frames that caught,
//     and check every value that came back (a frame whose return went wrong would show);
//   - they call backtrace() from deep inside traced calls, which must see main's caller frames;
//   - they call functions the inject engine cannot patch (written in assembly: 3 and 4 bytes
//     with no padding after them, a loop back into the first instruction), from traced ones;
//   - once told "fork" on stdin, a thread forks a child that throws through the traced calls
//     it inherited and exits 0 only if its checks hold.
// The traced functions are extern "C", for plain names in the trace.
//   - told "load PATH" on stdin, the main thread dlopens the library PATH (tests/progs/plugin.c),
//     calls its plugin_sum 100 times, prints "loaded NAME sum N" with the library's own count,
//     and dlcloses it.
// A line on stdin: "fork", "load PATH", or anything else to stop; it then prints its figures, and
// exits 0 only if every check held.
#include "common.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdexcept>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

// clang-format off
extern "C" void tiny_ret(void); // ret                     (1 byte: no jump fits; left out)
extern "C" int tiny_inc(int);   // lea eax, [rdi+1]; ret   (4 bytes)
extern "C" int tiny_same(int);  // mov eax, edi; ret       (3 bytes)
extern "C" int spin_down(int);  // sub edi, 1; jnz spin_down; mov eax, edi; ret
__asm__(".intel_syntax noprefix\n"
        ".text\n"
        ".globl tiny_ret, tiny_inc, tiny_same, spin_down\n"
        ".type tiny_ret, @function\n"
        "tiny_ret:\n    ret\n.size tiny_ret, .-tiny_ret\n"
        ".type tiny_inc, @function\n"
        "tiny_inc:\n    lea eax, [rdi+1]\n    ret\n.size tiny_inc, .-tiny_inc\n"
        ".type tiny_same, @function\n"
        "tiny_same:\n    mov eax, edi\n    ret\n.size tiny_same, .-tiny_same\n"
        ".type spin_down, @function\n"
        "spin_down:\n    sub edi, 1\n    jnz spin_down\n    mov eax, edi\n    ret\n"
        ".size spin_down, .-spin_down\n"
        ".att_syntax prefix\n");
// clang-format on

static volatile int stopping, fork_now;
static unsigned long rounds, errors, bad_value, bad_catch, bad_walk, bad_child, children;
static volatile int sink;

extern "C" TRACED int leaf(int v)
{
    BARRIER();
    tiny_ret();
    return tiny_inc(tiny_same(v)) + spin_down(3);
}

struct Guard {
    int v;
    TRACED explicit Guard(int x) : v(x)
    {
        sink = leaf(x);
    }
    TRACED ~Guard()
    {
        sink = leaf(v);
    } // traced calls while unwinding
};

extern "C" TRACED int dive(int n)
{
    Guard g(n);
    if (n == 0)
        throw std::runtime_error("deep");
    return dive(n - 1) + 1;
}

// Catches 3 frames up from the throw, rethrows; the frames that catch go on normally.
extern "C" TRACED int catcher(int n)
{
    Guard g(100 + n);
    try {
        return dive(n);
    } catch (const std::runtime_error &e) {
        if (strcmp(e.what(), "deep") != 0)
            __atomic_fetch_add(&bad_catch, 1, __ATOMIC_RELAXED);
        if (leaf(n) != n + 1)
            __atomic_fetch_add(&bad_value, 1, __ATOMIC_RELAXED);
        throw;
    }
}

extern "C" TRACED int relay(int n)
{
    try {
        return catcher(n);
    } catch (const std::exception &) {
        return leaf(n); // n + 1
    }
}

// backtrace() from 3 traced frames deep must reach the thread's start, below them (a walk
// stopped at a hooked frame sees 3 or 4 frames).
static int walk_depth()
{
    void *frames[64];
    return backtrace(frames, 64);
}
extern "C" TRACED int walk3(int n)
{
    return walk_depth() >= 6 ? n : 1000;
}
extern "C" TRACED int walk2(int n)
{
    return walk3(n) + 1;
}
extern "C" TRACED int walk(int n)
{
    return walk2(n) + 1;
}

extern "C" TRACED int round_trip(int n)
{
    int got = relay(n);
    if (got != n + 1)
        __atomic_fetch_add(&bad_value, 1, __ATOMIC_RELAXED);
    if (walk(2) != 4)
        __atomic_fetch_add(&bad_walk, 1, __ATOMIC_RELAXED);
    return got;
}

// A forked child unwinds through the hooked calls it inherited from this thread.
extern "C" TRACED void fork_child(int n)
{
    pid_t pid = fork();
    if (pid == 0) {
        int ok = 1;
        for (int i = 0; i < 200; i++)
            ok &= round_trip(3 + i % 4) == 4 + i % 4;
        _exit(ok && !bad_value && !bad_walk ? 0 : 3);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        __atomic_fetch_add(&bad_child, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&children, 1, __ATOMIC_RELAXED);
    sink = n;
}

static void *worker(void *arg)
{
    long id = (long)arg;
    while (!stopping) {
        for (int i = 0; i < 4; i++)
            round_trip(3 + i % 4);
        __atomic_fetch_add(&rounds, 1, __ATOMIC_RELAXED);
        usleep(500); // a trace of a second stays small enough to check
        if (id == 0 && fork_now) {
            fork_now = 0;
            fork_child((int)rounds);
        }
    }
    return NULL;
}

static void load(const char *path)
{
    void *lib = dlopen(path, RTLD_NOW);
    auto sum = lib ? (int (*)(int))dlsym(lib, "plugin_sum") : nullptr;
    auto calls =
        lib ? (void (*)(unsigned long *, unsigned long *))dlsym(lib, "plugin_calls") : nullptr;
    if (!sum || !calls) {
        printf("cannot load %s: %s\n", path, dlerror());
        __atomic_fetch_add(&bad_value, 1, __ATOMIC_RELAXED);
        return;
    }
    int first = sum(4);
    for (int i = 1; i < 100; i++)
        if (sum(4) != first)
            __atomic_fetch_add(&bad_value, 1, __ATOMIC_RELAXED);
    unsigned long n_sum, n_square;
    calls(&n_sum, &n_square);
    printf("loaded %s sum %lu\n", strrchr(path, '/') ? strrchr(path, '/') + 1 : path, n_sum);
    dlclose(lib);
}

// Blocks until the next command: a traced call that stays open across attachments.
extern "C" TRACED char *read_command(char *line, int size)
{
    return fgets(line, size, stdin);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_t t[3];
    for (long i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    printf("ready\n");
    char line[4096];
    while (read_command(line, sizeof(line))) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "load ", 5) == 0) {
            load(line + 5);
            continue;
        }
        if (strcmp(line, "fork") != 0)
            break;
        unsigned long before = __atomic_load_n(&children, __ATOMIC_RELAXED);
        fork_now = 1;
        while (__atomic_load_n(&children, __ATOMIC_RELAXED) == before)
            usleep(1000);
        printf("forked %lu\n", __atomic_load_n(&children, __ATOMIC_RELAXED));
    }
    stopping = 1;
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    errors = bad_value + bad_catch + bad_walk + bad_child;
    printf("rounds>0 %d errors %lu\n", rounds > 0, errors);
    if (errors)
        printf("bad values %lu, bad catches %lu, bad walks %lu, bad children %lu\n", bad_value,
               bad_catch, bad_walk, bad_child);
    return errors ? 1 : 0;
}
