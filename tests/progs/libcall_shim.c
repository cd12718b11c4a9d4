/* libcall_shim.so: an LD_PRELOAD library that counts the calls the executable itself makes to
 * calloc, strdup, getpid, qsort, malloc and free: the independent count -L is checked against
 * (tests/e2e/115-lib-calls.sh). Not strcmp: libcalls.c's callback calls it by a tail call, whose
 * return address is the callback's, in qsort: a wrapper cannot see that the program called.
 *
 * The dynamic linker binds the program's references to these wrappers, whatever its PLT layout
 * (lazy, -z now, -fno-plt's GOT calls, .plt.sec). A wrapper counts a call when its return
 * address is in the executable's code (a tail call from the executable returns there too), so
 * the library's calls among themselves (strdup's malloc, ld.so's free) are not counted; then it
 * calls the real function. At exit "count NAME N" for each goes to the file CT_SHIM_OUT names. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* glibc's own entries: a wrapper of calloc cannot find the real one by dlsym, which may
 * allocate. */
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);

enum { F_CALLOC, F_STRDUP, F_GETPID, F_QSORT, F_MALLOC, F_FREE, F_COUNT };
static const char *const names[F_COUNT] = {"calloc", "strdup", "getpid", "qsort", "malloc", "free"};
static unsigned long calls[F_COUNT];
static uintptr_t exe_lo, exe_hi;

static int find_exe(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (!exe_lo || lo < exe_lo)
            exe_lo = lo;
        if (lo + ph->p_memsz > exe_hi)
            exe_hi = lo + ph->p_memsz;
    }
    return 1; /* the first object listed is the executable */
}

__attribute__((constructor)) static void init(void)
{
    dl_iterate_phdr(find_exe, NULL);
}

static void count(int f, void *ret)
{
    if ((uintptr_t)ret >= exe_lo && (uintptr_t)ret < exe_hi)
        __atomic_fetch_add(&calls[f], 1, __ATOMIC_RELAXED);
}

#define CALLER __builtin_return_address(0)

__attribute__((noinline)) void *calloc(size_t n, size_t size)
{
    count(F_CALLOC, CALLER);
    return __libc_calloc(n, size);
}

__attribute__((noinline)) void *malloc(size_t size)
{
    count(F_MALLOC, CALLER);
    return __libc_malloc(size);
}

__attribute__((noinline)) void free(void *p)
{
    count(F_FREE, CALLER);
    __libc_free(p);
}

__attribute__((noinline)) char *strdup(const char *s)
{
    count(F_STRDUP, CALLER);
    size_t len = strlen(s) + 1;
    char *copy = __libc_malloc(len);
    return copy ? memcpy(copy, s, len) : NULL;
}

__attribute__((noinline)) pid_t getpid(void)
{
    count(F_GETPID, CALLER);
    return (pid_t)syscall(SYS_getpid);
}

typedef void (*qsort_fn)(void *, size_t, size_t, int (*)(const void *, const void *));

__attribute__((noinline)) void qsort(void *base, size_t n, size_t size,
                                     int (*cmp)(const void *, const void *))
{
    count(F_QSORT, CALLER);
    static qsort_fn real;
    if (!real)
        real = (qsort_fn)dlsym(RTLD_NEXT, "qsort");
    real(base, n, size, cmp);
}

__attribute__((destructor)) static void write_counts(void)
{
    const char *path = getenv("CT_SHIM_OUT");
    FILE *f = path ? fopen(path, "ae") : NULL;
    if (!f)
        return;
    for (int i = 0; i < F_COUNT; i++)
        fprintf(f, "count %s %lu\n", names[i], calls[i]);
    fclose(f);
}
