#include "analysis/sym_filter.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/profile.h"
#include "util/log.h"

int sym_filter_init(struct sym_filter *sf, const struct profile_filter *filter)
{
    memset(sf, 0, sizeof(*sf));
    sf->filter = filter;
    sf->include_hits = calloc(filter->ninclude + 1, sizeof(uint64_t));
    sf->exclude_hits = calloc(filter->nexclude + 1, sizeof(uint64_t));
    if (sf->include_hits && sf->exclude_hits)
        return 0;
    err_msg("out of memory");
    sym_filter_free(sf);
    return -1;
}

void sym_filter_free(struct sym_filter *sf)
{
    free(sf->kept);
    free(sf->include_hits);
    free(sf->exclude_hits);
    memset(sf, 0, sizeof(*sf));
}

static bool matches_any(const char **globs, size_t n, const char *name, uint64_t *hits)
{
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        if (fnmatch(globs[i], name, 0) == 0) {
            hits[i]++;
            any = true;
        }
    }
    return any;
}

static int grow(struct sym_filter *sf, uint32_t sym)
{
    if (sym < sf->cap)
        return 0;
    size_t cap = sf->cap ? sf->cap : 256;
    while (cap <= sym)
        cap *= 2;
    uint8_t *kept = realloc(sf->kept, cap);
    if (!kept) {
        err_msg("out of memory");
        return -1;
    }
    memset(kept + sf->cap, 0, cap - sf->cap);
    sf->kept = kept;
    sf->cap = cap;
    return 0;
}

int sym_filter_keeps(struct sym_filter *sf, uint32_t sym, const char *name)
{
    if (grow(sf, sym) < 0)
        return -1;
    if (sf->kept[sym])
        return sf->kept[sym] == 1;
    const struct profile_filter *f = sf->filter;
    bool in = !f->ninclude;
    in |= matches_any(f->include, f->ninclude, name, sf->include_hits);
    bool out = matches_any(f->exclude, f->nexclude, name, sf->exclude_hits);
    if (f->syms) /* after the globs, which count their hits all the same (graph -n) */
        in &= sym < f->nsyms && f->syms[sym];
    sf->kept[sym] = in && !out ? 1 : 2;
    return sf->kept[sym] == 1;
}

/* A few names of functions with calls, to say what exists. */
static void list_some(const struct sym_filter *sf, const struct replay *r, char *buf, size_t len)
{
    size_t used = 0, shown = 0, called = 0;
    buf[0] = '\0';
    for (uint32_t s = 0; s < r->nsyms; s++) {
        if (!sym_filter_called(sf, s))
            continue;
        called++;
        if (shown < 8 && used < len) {
            int n = snprintf(buf + used, len - used, "%s%s", shown ? ", " : "", r->syms[s].name);
            used += n > 0 ? (size_t)n : 0;
            shown++;
        }
    }
    if (called > shown && used < len)
        snprintf(buf + used, len - used, ", ... (%zu functions)", called);
}

void sym_filter_warn_unmatched(const struct sym_filter *sf, const struct replay *r)
{
    char some[512];
    list_some(sf, r, some, sizeof(some));
    const struct profile_filter *f = sf->filter;
    for (size_t i = 0; i < f->ninclude + f->nexclude; i++) {
        bool inc = i < f->ninclude;
        size_t j = inc ? i : i - f->ninclude;
        if ((inc ? sf->include_hits : sf->exclude_hits)[j])
            continue;
        err_hint(some[0] ? some : "the run has no calls", "%s '%s': matches no function with calls",
                 inc ? "-F" : "-N", inc ? f->include[j] : f->exclude[j]);
    }
}
