#include "output/call_window.h"

#include <stdlib.h>
#include <string.h>

#include <bsd/stdlib.h>

#include "util/duration.h"
#include "util/log.h"

int window_reader_init(struct window_reader *wr, const struct call_window *w, int64_t run_start_ns)
{
    *wr = (struct window_reader){.whole = call_window_is_whole(w), .to = INT64_MAX};
    if (wr->whole)
        return 0;
    wr->from = call_ns_add(run_start_ns, w->from_ns);
    if (w->to_ns)
        wr->to = call_ns_add(run_start_ns, w->to_ns);
    wr->tid = w->tid;
    wr->max_calls = w->max_calls;
    wr->filter = &w->filter;
    return addr_map_init(&wr->excluded, 64);
}

void window_reader_free(struct window_reader *wr)
{
    if (!wr->whole)
        addr_map_free(&wr->excluded);
}

int window_note_func(struct window_reader *wr, uint32_t func, const char *name, uint32_t len)
{
    if (wr->whole || (!wr->filter->nonly && !wr->filter->nexclude))
        return 0;
    char *text = strndup(name, len); /* fnmatch wants a C string */
    if (!text)
        return -1;
    bool selected = func_filter_selects(wr->filter, text);
    free(text);
    if (selected) {
        addr_map_del(&wr->excluded, func); /* a damaged record may name an id twice */
        return 0;
    }
    return addr_map_put(&wr->excluded, func, (void *)1);
}

static bool selects(const struct window_reader *wr, const struct call_thread *t,
                    const struct call_frame *f)
{
    if (wr->tid && t->tid != wr->tid)
        return false;
    if (f->start_ns > wr->to)
        return false;
    return !addr_map_get(&wr->excluded, f->func);
}

/* Begins, outermost first, every frame from the lowest unsettled one up to f. */
static int settle(struct window_reader *wr, const struct call_thread *t, struct call_frame *f,
                  window_begin_fn begin, void *ctx)
{
    struct call_frame *low = f;
    while (low > t->stack && !(low[-1].user & WINDOW_SETTLED))
        low--;
    for (struct call_frame *g = low; g <= f; g++) {
        g->user |= WINDOW_SETTLED;
        if (!(g->user & WINDOW_SHOWN) || (wr->max_calls && wr->shown >= wr->max_calls))
            continue;
        g->user |= WINDOW_BEGUN;
        wr->shown++;
        int rc = begin ? begin(ctx, t, g) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

int window_enter_part(struct window_reader *wr, const struct call_thread *t, struct call_frame *f,
                      window_begin_fn begin, void *ctx)
{
    f->user = selects(wr, t, f) ? WINDOW_SHOWN : 0;
    return f->start_ns >= wr->from ? settle(wr, t, f, begin, ctx) : 0;
}

int window_exit_part(struct window_reader *wr, const struct call_thread *t, struct call_frame *f,
                     int64_t end_ns, window_begin_fn begin, void *ctx)
{
    if (!(f->user & WINDOW_SETTLED) && end_ns >= wr->from) {
        int rc = settle(wr, t, f, begin, ctx);
        if (rc)
            return rc;
    }
    return (f->user & WINDOW_BEGUN) != 0;
}

static int window_number(const char *opt, const char *arg, long long max, long long *n)
{
    const char *errstr;
    *n = strtonum(arg, 1, max, &errstr);
    if (errstr) {
        err_hint("give a whole number, at least 1", "%s '%s': %s", opt, arg, errstr);
        return -1;
    }
    return 0;
}

static int window_time(const char *opt, const char *arg, int64_t *ns)
{
    uint64_t v;
    if (duration_parse(arg, &v) < 0) {
        err_hint("give a time from the run's start: 1.5s, 250ms, 40us, 2 (seconds)",
                 "%s %s: not a time", opt, arg);
        return -1;
    }
    *ns = (int64_t)v;
    return 0;
}

static int window_glob(struct call_window *w, int c, const char *glob)
{
    struct func_filter *f = &w->filter;
    const char **list = c == 'F' ? f->only : f->exclude;
    size_t *n = c == 'F' ? &f->nonly : &f->nexclude;
    return glob_list_add(list, n, c, glob);
}

int call_window_option(struct call_window *w, int c, const char *arg)
{
    long long n;
    switch (c) {
    case WINDOW_OPT_FROM:
        return window_time("--from", arg, &w->from_ns) < 0 ? -1 : 1;
    case WINDOW_OPT_TO:
        if (window_time("--to", arg, &w->to_ns) < 0)
            return -1;
        if (!w->to_ns) {
            err_hint("give a time after the run's start", "--to %s: the window would be empty",
                     arg);
            return -1;
        }
        return 1;
    case WINDOW_OPT_TID:
        if (window_number("--tid", arg, UINT32_MAX, &n) < 0)
            return -1;
        w->tid = (uint32_t)n;
        return 1;
    case WINDOW_OPT_MAX_CALLS:
        if (window_number("--max-calls", arg, INT64_MAX, &n) < 0)
            return -1;
        w->max_calls = (uint64_t)n;
        return 1;
    case 'F':
    case 'N':
        return window_glob(w, c, arg) < 0 ? -1 : 1;
    default:
        return 0;
    }
}

int call_window_check(const struct call_window *w)
{
    if (w->to_ns && w->from_ns > w->to_ns) {
        err_hint("give --from before --to", "--from is after --to: the window is empty");
        return -1;
    }
    return 0;
}
