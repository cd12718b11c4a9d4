#include "symbols/func_filter.h"

#include <fnmatch.h>

#include "util/log.h"

static bool matches_any(const char *const *globs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (fnmatch(globs[i], name, 0) == 0)
            return true;
    return false;
}

int glob_list_add(const char **list, size_t *n, int opt, const char *glob)
{
    if (!*glob) {
        err_msg("-%c: empty pattern", opt);
        return -1;
    }
    if (*n == FUNC_FILTER_MAX) {
        err_hint("combine them into fewer patterns", "-%c: more than %d patterns", opt,
                 FUNC_FILTER_MAX);
        return -1;
    }
    list[(*n)++] = glob;
    return 0;
}

bool func_filter_selects(const struct func_filter *f, const char *name)
{
    if (f->nonly && !matches_any(f->only, f->nonly, name))
        return false;
    return !matches_any(f->exclude, f->nexclude, name);
}

uint64_t func_filter_glob_hits(const char *const *globs, size_t n, const char *name)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        if (fnmatch(globs[i], name, 0) == 0)
            hits |= 1ull << i;
    return hits;
}
