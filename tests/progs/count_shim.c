/* count_shim.so: an LD_PRELOAD library that counts calls of chosen exported functions, an
 * independent count to compare calltrace's with (tests/e2e/73-*, 74-*).
 *
 * Each wrapper is found by the dynamic linker before the real function, counts, and calls the
 * real one (dlsym(RTLD_NEXT)). It only sees calls that cross a PLT or GOT from another object:
 * calls a library makes to its own functions without its PLT bypass it, so the tests choose
 * functions every caller reaches through a PLT or GOT, and check that.
 *
 * Every wrapped function takes at most six integer or pointer arguments and returns an integer
 * or a pointer (or nothing): handing the six argument registers through unchanged and returning
 * rax is then exact under the x86_64 ABI, whatever the real prototype.
 *
 * At exit, "count NAME N" for each function whose name starts with CT_SHIM_PREFIX (all when
 * unset) is appended to the file named by CT_SHIM_OUT (nothing when unset), preceded by
 * "process PID". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Not <unistd.h>: it declares getppid and getuid with their real prototypes. */
extern int getpid(void);

typedef long (*real_fn)(long, long, long, long, long, long);

struct counted {
    const char *name;
    real_fn real;
    unsigned long calls;
};

enum {
    F_sqlite3_prepare_v2,
    F_sqlite3_step,
    F_sqlite3_finalize,
    F_sqlite3_reset,
    F_sqlite3_column_text,
    F_sqlite3_column_count,
    F_sqlite3_column_int,
    F_sqlite3_column_type,
    F_sqlite3_bind_int,
    F_sqlite3_errmsg,
    F_getppid,
    F_getuid,
    F_umask,
    F_COUNT,
};

static struct counted fns[F_COUNT] = {
    [F_sqlite3_prepare_v2] = {"sqlite3_prepare_v2", NULL, 0},
    [F_sqlite3_step] = {"sqlite3_step", NULL, 0},
    [F_sqlite3_finalize] = {"sqlite3_finalize", NULL, 0},
    [F_sqlite3_reset] = {"sqlite3_reset", NULL, 0},
    [F_sqlite3_column_text] = {"sqlite3_column_text", NULL, 0},
    [F_sqlite3_column_count] = {"sqlite3_column_count", NULL, 0},
    [F_sqlite3_column_int] = {"sqlite3_column_int", NULL, 0},
    [F_sqlite3_column_type] = {"sqlite3_column_type", NULL, 0},
    [F_sqlite3_bind_int] = {"sqlite3_bind_int", NULL, 0},
    [F_sqlite3_errmsg] = {"sqlite3_errmsg", NULL, 0},
    [F_getppid] = {"getppid", NULL, 0},
    [F_getuid] = {"getuid", NULL, 0},
    [F_umask] = {"umask", NULL, 0},
};

static long forward(int i, long a, long b, long c, long d, long e, long f)
{
    struct counted *fn = &fns[i];
    __atomic_fetch_add(&fn->calls, 1, __ATOMIC_RELAXED);
    if (!fn->real)
        fn->real = (real_fn)dlsym(RTLD_NEXT, fn->name);
    if (!fn->real)
        abort();
    return fn->real(a, b, c, d, e, f);
}

#define WRAP(name)                                                                                 \
    long name(long a, long b, long c, long d, long e, long f)                                      \
    {                                                                                              \
        return forward(F_##name, a, b, c, d, e, f);                                                \
    }

WRAP(sqlite3_prepare_v2)
WRAP(sqlite3_step)
WRAP(sqlite3_finalize)
WRAP(sqlite3_reset)
WRAP(sqlite3_column_text)
WRAP(sqlite3_column_count)
WRAP(sqlite3_column_int)
WRAP(sqlite3_column_type)
WRAP(sqlite3_bind_int)
WRAP(sqlite3_errmsg)
WRAP(getppid)
WRAP(getuid)
WRAP(umask)

__attribute__((destructor)) static void write_counts(void)
{
    const char *path = getenv("CT_SHIM_OUT");
    FILE *f = path ? fopen(path, "ae") : NULL;
    if (!f)
        return;
    const char *prefix = getenv("CT_SHIM_PREFIX");
    fprintf(f, "process %d\n", (int)getpid());
    for (int i = 0; i < F_COUNT; i++)
        if (!prefix || strncmp(fns[i].name, prefix, strlen(prefix)) == 0)
            fprintf(f, "count %s %lu\n", fns[i].name, fns[i].calls);
    fclose(f);
}
