#include "symbols/abi_sysv.h"

#include <string.h>

enum eb_class { EB_NONE, EB_INT, EB_SSE, EB_MEMORY };

static enum eb_class merge(enum eb_class a, enum eb_class b)
{
    if (a == b || b == EB_NONE)
        return a;
    if (a == EB_NONE)
        return b;
    if (a == EB_MEMORY || b == EB_MEMORY)
        return EB_MEMORY;
    return EB_INT; /* INTEGER beats SSE */
}

/* Classifies the scalars of t at offset into the eightbytes cls[0..1]. */
static void classify_into(const struct ctype *t, uint64_t offset, enum eb_class cls[2], int depth)
{
    t = ctype_strip(t);
    /* past the two eightbytes only when DWARF is inconsistent: memory, as a large value */
    if (!t || depth > 16 || offset >= 16 || t->size > 16 - offset) {
        cls[0] = EB_MEMORY;
        return;
    }
    switch (t->kind) {
    case CT_STRUCT:
    case CT_UNION:
        for (size_t i = 0; i < t->nmembers; i++) {
            const struct ctype_member *m = &t->members[i];
            /* "an object with unaligned fields has class MEMORY" (a packed struct's) */
            if (!m->bit_size && (offset + m->offset) % ctype_natural_align(m->type)) {
                cls[0] = EB_MEMORY;
                return;
            }
            classify_into(m->type, offset + m->offset, cls, depth + 1);
        }
        return;
    case CT_ARRAY: {
        const struct ctype *e = ctype_strip(t->target);
        for (uint64_t i = 0; e && e->size && i < t->count && i < 16; i++)
            classify_into(e, offset + i * e->size, cls, depth + 1);
        return;
    }
    case CT_FLOAT:
        if (t->is_x87 || !t->size || t->size > 8 || offset % t->size) {
            cls[0] = EB_MEMORY;
            return;
        }
        cls[offset / 8] = merge(cls[offset / 8], EB_SSE);
        return;
    case CT_VOID:
    case CT_FUNC:
    case CT_UNKNOWN:
        cls[0] = EB_MEMORY;
        return;
    default:
        for (uint64_t b = offset / 8; b <= (offset + (t->size ? t->size : 1) - 1) / 8; b++)
            cls[b] = merge(cls[b], EB_INT);
    }
}

/* The eightbyte classes of a value of type t; false when it goes in memory. */
static bool classify(const struct ctype *t, enum eb_class cls[2], unsigned *n)
{
    const struct ctype *s = ctype_strip(t);
    cls[0] = cls[1] = EB_NONE;
    *n = 0;
    if (!s || s->size == 0 || s->size > 16 || s->incomplete)
        return false;
    classify_into(s, 0, cls, 0);
    *n = s->size > 8 ? 2 : 1;
    for (unsigned i = 0; i < *n; i++) {
        if (cls[i] == EB_MEMORY)
            return false;
        if (cls[i] == EB_NONE)
            cls[i] = EB_SSE; /* padding-only eightbyte */
    }
    return true;
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

static unsigned alignment(const struct ctype *t)
{
    const struct ctype *s = ctype_strip(t);
    unsigned a = s && s->align ? s->align : 8;
    return a < 8 ? 8 : a > 16 ? 16 : a;
}

/* A long double, or an aggregate holding just one at offset 0: classes X87 and X87UP, which a
 * result leaves in st0 (an argument of that class goes in memory). */
static bool is_x87_value(const struct ctype *t, int depth)
{
    const struct ctype *s = ctype_strip(t);
    if (!s || depth > 16)
        return false;
    switch (s->kind) {
    case CT_FLOAT:
        return s->is_x87;
    case CT_STRUCT:
    case CT_UNION:
        if (s->nmembers == 0 || s->size != 16)
            return false;
        for (size_t i = 0; i < s->nmembers; i++)
            if (s->members[i].offset != 0 || !is_x87_value(s->members[i].type, depth + 1))
                return false;
        return true;
    case CT_ARRAY:
        return s->count == 1 && is_x87_value(s->target, depth + 1);
    default:
        return false;
    }
}

static void locate_result(const struct ctype *t, struct abi_loc *ret)
{
    memset(ret, 0, sizeof(*ret));
    const struct ctype *s = ctype_strip(t);
    if (!s || s->kind == CT_VOID)
        return;
    ret->size = s->size;
    if (is_x87_value(s, 0)) {
        ret->where = ABI_X87;
        return;
    }
    enum eb_class cls[2];
    unsigned n;
    if (!classify(s, cls, &n)) {
        ret->where = s->size ? ABI_HIDDEN : ABI_NOWHERE;
        return;
    }
    unsigned ints = 0, sses = 0;
    ret->where = ABI_REGS;
    ret->nparts = (uint8_t)n;
    for (unsigned i = 0; i < n; i++) {
        bool sse = cls[i] == EB_SSE;
        ret->part[i].cls = sse ? ABI_CLASS_SSE : ABI_CLASS_INT;
        ret->part[i].reg = (uint8_t)(sse ? sses++ : ints++);
    }
}

uint32_t abi_locate(const struct func_sig *sig, struct abi_loc *locs, struct abi_loc *ret)
{
    locate_result(sig->ret, ret);
    unsigned ints = ret->where == ABI_HIDDEN ? 1 : 0, sses = 0;
    uint64_t stack = 0;
    for (size_t i = 0; i < sig->nparams; i++) {
        struct abi_loc *l = &locs[i];
        memset(l, 0, sizeof(*l));
        const struct ctype *s = ctype_strip(sig->params[i].type);
        if (!s || s->kind == CT_VOID)
            continue;
        l->size = s->size;
        enum eb_class cls[2];
        unsigned n, need_int = 0, need_sse = 0;
        bool in_regs = classify(s, cls, &n);
        for (unsigned k = 0; in_regs && k < n; k++)
            cls[k] == EB_SSE ? need_sse++ : need_int++;
        if (in_regs && ints + need_int <= ABI_INT_REGS && sses + need_sse <= ABI_SSE_REGS) {
            l->where = ABI_REGS;
            l->nparts = (uint8_t)n;
            for (unsigned k = 0; k < n; k++) {
                bool sse = cls[k] == EB_SSE;
                l->part[k].cls = sse ? ABI_CLASS_SSE : ABI_CLASS_INT;
                l->part[k].reg = (uint8_t)(sse ? sses++ : ints++);
            }
            continue;
        }
        if (!s->size || s->incomplete)
            continue;
        stack = round_up(stack, alignment(s));
        l->where = ABI_STACK;
        l->stack_offset = (uint32_t)stack;
        stack += round_up(s->size, 8);
    }
    return stack > UINT32_MAX ? UINT32_MAX : (uint32_t)stack;
}
