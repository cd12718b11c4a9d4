/* pause_shim.so: an LD_PRELOAD library for calltrace itself that stops it (SIGSTOP) right after
 * it makes a directory whose last name component is one of CT_PAUSE_NAMES (colon-separated),
 * so that a test can act as another user at that very moment (tests/e2e/95-*: a directory
 * swapped under a run being written) and then let it go on with SIGCONT: deterministic where a
 * race with sleeps would not be.
 *
 * It wraps mkdir and mkdirat, the calls both the path-based and the descriptor-based ways of
 * making a run's folders go through, and removes itself from LD_PRELOAD so that the traced
 * program does not inherit it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

static char pause_names[256];

__attribute__((constructor)) static void take_names(void)
{
    const char *names = getenv("CT_PAUSE_NAMES");
    if (names)
        strncpy(pause_names, names, sizeof(pause_names) - 1);
    unsetenv("CT_PAUSE_NAMES");
    unsetenv("LD_PRELOAD");
}

static void maybe_pause(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *last = slash ? slash + 1 : path;
    size_t len = strlen(last);
    for (const char *p = pause_names; *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && !strncmp(p, last, n)) {
            raise(SIGSTOP);
            return;
        }
        p += n + (end != NULL);
    }
}

int mkdir(const char *path, mode_t mode)
{
    int (*real)(const char *, mode_t) = (int (*)(const char *, mode_t))dlsym(RTLD_NEXT, "mkdir");
    int rc = real(path, mode);
    if (rc == 0)
        maybe_pause(path);
    return rc;
}

int mkdirat(int dir, const char *path, mode_t mode)
{
    int (*real)(int, const char *, mode_t) =
        (int (*)(int, const char *, mode_t))dlsym(RTLD_NEXT, "mkdirat");
    int rc = real(dir, path, mode);
    if (rc == 0)
        maybe_pause(path);
    return rc;
}
