#include "symbols/func_filter.h"

#include <fnmatch.h>
#include <string.h>

#include "symbols/demangle.h"

#include "util/log.h"

bool func_glob_matches(const char *glob, const char *name)
{
    if (fnmatch(glob, name, 0) == 0)
        return true;
    size_t at = demangled_params_at(name);
    char bare[1024];
    if (!name[at] || at >= sizeof(bare))
        return false;
    memcpy(bare, name, at);
    bare[at] = '\0';
    return fnmatch(glob, bare, 0) == 0;
}

static bool matches_any(const char *const *globs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (func_glob_matches(globs[i], name))
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
        if (func_glob_matches(globs[i], name))
            hits |= 1ull << i;
    return hits;
}
