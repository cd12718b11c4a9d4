#include "tracer/arg_capture.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/capture_plan.h"
#include "symbols/dwarf_sig.h"
#include "util/log.h"

struct capture_state {
    struct addr_map plans; /* func id + 1 -> struct capture_plan */
    char *sigs_path;       /* the image whose DWARF is open: images come one at a time */
    struct dwarf_sigs *sigs;
    struct dwarf_sigs **old; /* earlier images' DWARF: their signatures are in plans */
    size_t nold;
};

struct capture_state *capture_state_new(void)
{
    struct capture_state *c = calloc(1, sizeof(*c));
    if (c && addr_map_init(&c->plans, 256) < 0) {
        free(c);
        return NULL;
    }
    return c;
}

void capture_state_free(struct capture_state *c)
{
    if (!c)
        return;
    ADDR_MAP_FOREACH(&c->plans, slot)
    capture_plan_free(slot->value);
    addr_map_free(&c->plans);
    for (size_t i = 0; i < c->nold; i++)
        dwarf_sigs_close(c->old[i]);
    free(c->old);
    dwarf_sigs_close(c->sigs);
    free(c->sigs_path);
    free(c);
}

static struct dwarf_sigs *sigs_for(struct capture_state *c, const char *path)
{
    if (c->sigs_path && strcmp(c->sigs_path, path) == 0)
        return c->sigs;
    if (c->sigs) {
        struct dwarf_sigs **old = reallocarray(c->old, c->nold + 1, sizeof(*old));
        if (!old)
            return NULL;
        c->old = old;
        c->old[c->nold++] = c->sigs;
    }
    free(c->sigs_path);
    c->sigs_path = strdup(path);
    c->sigs = dwarf_sigs_open(path);
    if (!c->sigs)
        dbg(DBG_SYMBOLS, 1, "%s: no DWARF for arguments: %s", path, strerror(errno));
    return c->sigs;
}

void capture_plan_function(struct session *s, const char *image_path, uint64_t addr,
                           const char *name, uint32_t func)
{
    struct capture_state *c = s->capture;
    if (!c || !capture_selects(&s->opts->capture, name))
        return;
    struct dwarf_sigs *sigs = image_path ? sigs_for(c, image_path) : NULL;
    /* A compiler's clone (foo.isra.0, foo.constprop.1) may take other arguments than its
     * source declares: its registers are shown raw. */
    const struct func_sig *sig = sigs && !strchr(name, '.') ? dwarf_sigs_find(sigs, addr) : NULL;
    struct capture_plan *plan = capture_plan_build(&s->opts->capture, name, sig);
    if (!plan || capture_plan_add(c, func, plan) < 0) {
        capture_plan_free(plan);
        err_msg("%s: out of memory for its arguments", name);
        return;
    }
    dbg(DBG_SYMBOLS, 2, "%s: %s arguments, %u stack bytes, %zu pointer reads", name,
        sig ? "typed" : "raw", plan->stack_bytes, plan->nreads);
}

int capture_plan_add(struct capture_state *c, uint32_t func, struct capture_plan *plan)
{
    return addr_map_put(&c->plans, (uint64_t)func + 1, plan);
}

const struct capture_plan *capture_plan_of(const struct session *s, uint32_t func)
{
    return s->capture ? addr_map_get(&s->capture->plans, (uint64_t)func + 1) : NULL;
}
