#include "output/call_values.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/source_file.h"
#include "output/value_format.h"
#include "record/reader.h"
#include "symbols/abi_sysv.h"
#include "symbols/dwarf_sig.h"
#include "util/addr_map.h"

struct run_image {
    char *path;
    uint32_t pid; /* of the process that loaded it */
    uint64_t bias;
    struct dwarf_sigs *sigs;
    bool opened;
    struct source_files lines; /* its one image (index 0): where its functions are defined */
};

struct run_func {
    char *name;
    uint32_t image;
    uint64_t addr;  /* runtime */
    int8_t matches; /* the image file still has this function there: 1, 0, -1 unknown yet */
    bool srcline_tried;
    bool breakpoint; /* FUNC_BREAKPOINT */
    char *srcline;   /* "file:line", or NULL: not known */
};

struct run_funcs {
    struct addr_map images; /* id + 1 -> struct run_image */
    struct addr_map funcs;  /* id + 1 -> struct run_func */
};

struct run_funcs *run_funcs_new(void)
{
    struct run_funcs *rf = calloc(1, sizeof(*rf));
    if (!rf || addr_map_init(&rf->images, 16) < 0 || addr_map_init(&rf->funcs, 256) < 0) {
        run_funcs_free(rf);
        return NULL;
    }
    return rf;
}

void run_funcs_free(struct run_funcs *rf)
{
    if (!rf)
        return;
    ADDR_MAP_FOREACH(&rf->images, slot)
    {
        struct run_image *im = slot->value;
        dwarf_sigs_close(im->sigs);
        source_files_free(&im->lines);
        free(im->path);
        free(im);
    }
    ADDR_MAP_FOREACH(&rf->funcs, slot)
    {
        struct run_func *f = slot->value;
        free(f->name);
        free(f->srcline);
        free(f);
    }
    addr_map_free(&rf->images);
    addr_map_free(&rf->funcs);
    free(rf);
}

int run_funcs_note(struct run_funcs *rf, const struct rec_hdr *h)
{
    uint32_t len;
    if (h->type == REC_IMAGE) {
        const struct rec_image *r = (const struct rec_image *)h;
        const char *path = rec_name(h, &len);
        struct run_image *old = addr_map_get(&rf->images, (uint64_t)r->image + 1);
        struct run_image *im = calloc(1, sizeof(*im));
        if (!im || !(im->path = strndup(path, len)) ||
            addr_map_put(&rf->images, (uint64_t)r->image + 1, im) < 0) {
            free(im ? im->path : NULL);
            free(im);
            return -1;
        }
        im->bias = r->bias;
        im->pid = r->hdr.tid;
        if (old) { /* a damaged record reusing an id: the latest wins */
            dwarf_sigs_close(old->sigs);
            source_files_free(&old->lines);
            free(old->path);
            free(old);
        }
    } else if (h->type == REC_FUNC) {
        const struct rec_func *r = (const struct rec_func *)h;
        const char *name = rec_name(h, &len);
        struct run_func *old = addr_map_get(&rf->funcs, (uint64_t)r->func + 1);
        struct run_func *f = calloc(1, sizeof(*f));
        if (!f || !(f->name = strndup(name, len)) ||
            addr_map_put(&rf->funcs, (uint64_t)r->func + 1, f) < 0) {
            free(f ? f->name : NULL);
            free(f);
            return -1;
        }
        f->image = r->image;
        f->addr = r->addr;
        f->breakpoint = h->flags & FUNC_BREAKPOINT;
        f->matches = -1;
        if (old) {
            free(old->name);
            free(old->srcline);
            free(old);
        }
    }
    return 0;
}

const char *run_funcs_srcline(struct run_funcs *rf, uint32_t func)
{
    struct run_func *f = addr_map_get(&rf->funcs, (uint64_t)func + 1);
    if (!f || f->srcline_tried)
        return f ? f->srcline : NULL;
    f->srcline_tried = true;
    struct run_image *im = addr_map_get(&rf->images, (uint64_t)f->image + 1);
    struct source_line where;
    if (!im || f->addr < im->bias ||
        !source_line_of(&im->lines, 0, im->path, f->addr - im->bias, f->name, &where))
        return NULL;
    size_t len = strlen(where.file) + 16;
    f->srcline = malloc(len);
    if (f->srcline)
        snprintf(f->srcline, len, "%s:%u", where.file, where.line);
    return f->srcline;
}

/* ret_addr in the images of process pid, or with any_pid in every process's. */
static bool site_in_images(struct run_funcs *rf, bool any_pid, uint32_t pid, uint64_t ret_addr,
                           struct source_line *where)
{
    ADDR_MAP_FOREACH(&rf->images, slot)
    {
        struct run_image *im = slot->value;
        /* the last byte of the call instruction, which is in the call's line */
        if ((any_pid || im->pid == pid) &&
            source_line_at(&im->lines, 0, im->path, ret_addr - 1 - im->bias, where))
            return true;
    }
    return false;
}

static bool has_images_of(const struct run_funcs *rf, uint32_t pid)
{
    ADDR_MAP_FOREACH(&rf->images, slot)
    if (((const struct run_image *)slot->value)->pid == pid)
        return true;
    return false;
}

bool run_funcs_call_site(struct run_funcs *rf, uint32_t pid, uint64_t ret_addr, char *out,
                         size_t outlen)
{
    struct source_line where;
    /* a forked child's images are its parent's, which the record named */
    if (!ret_addr || !site_in_images(rf, !has_images_of(rf, pid), pid, ret_addr, &where))
        return false;
    snprintf(out, outlen, "%s:%u", where.file, where.line);
    return true;
}

const char *run_funcs_name(const struct run_funcs *rf, uint32_t func)
{
    const struct run_func *f = addr_map_get(&rf->funcs, (uint64_t)func + 1);
    return f ? f->name : "??";
}

bool run_funcs_by_breakpoint(const struct run_funcs *rf, uint32_t func)
{
    const struct run_func *f = addr_map_get(&rf->funcs, (uint64_t)func + 1);
    return f && f->breakpoint;
}

/* The chunks of a checked record, sorted by kind. */
struct chunks {
    const uint8_t *gpr, *xmm, *x87, *stack;
    size_t gpr_len, xmm_len, x87_len, stack_len;
    uint8_t stack_flags;
    struct pointee mem[64];
    size_t nmem;
};

static void split_chunks(const struct rec_values *v, struct chunks *c)
{
    memset(c, 0, sizeof(*c));
    if (!v)
        return;
    const uint8_t *p = (const uint8_t *)v + sizeof(*v);
    for (uint32_t i = 0; i < v->nchunks; i++) {
        struct rec_chunk ch;
        memcpy(&ch, p, sizeof(ch));
        const uint8_t *data = p + sizeof(ch);
        p = data + (((size_t)ch.len + 7) & ~(size_t)7);
        switch (ch.kind) {
        case CHUNK_GPR:
            c->gpr = data, c->gpr_len = ch.len;
            break;
        case CHUNK_XMM:
            c->xmm = data, c->xmm_len = ch.len;
            break;
        case CHUNK_X87:
            c->x87 = data, c->x87_len = ch.len;
            break;
        case CHUNK_STACK:
            c->stack = data, c->stack_len = ch.len, c->stack_flags = ch.flags;
            break;
        case CHUNK_MEM:
            if (c->nmem < sizeof(c->mem) / sizeof(c->mem[0]))
                c->mem[c->nmem++] = (struct pointee){ch.param, ch.flags, ch.addr, data, ch.len};
            break;
        default:
            break;
        }
    }
}

static struct run_image *image_of(struct run_funcs *rf, const struct run_func *f)
{
    struct run_image *im = f ? addr_map_get(&rf->images, (uint64_t)f->image + 1) : NULL;
    if (im && !im->opened) {
        im->opened = true;
        im->sigs = dwarf_sigs_open(im->path);
    }
    return im;
}

static const char *symbol_of(const void *arg, uint64_t addr, uint64_t *offset)
{
    const struct run_image *im = arg;
    if (!im || !im->sigs || addr < im->bias)
        return NULL;
    return dwarf_sigs_symbol(im->sigs, addr - im->bias, offset);
}

/* Copies the eightbytes of a value in registers into buf. */
static bool gather_regs(const struct abi_loc *loc, const struct chunks *c, uint8_t *buf,
                        size_t size)
{
    for (unsigned k = 0; k < loc->nparts; k++) {
        const uint8_t *src;
        size_t len, at;
        if (loc->part[k].cls == ABI_CLASS_INT)
            src = c->gpr, len = c->gpr_len, at = (size_t)loc->part[k].reg * 8;
        else
            src = c->xmm, len = c->xmm_len, at = (size_t)loc->part[k].reg * 16;
        if (!src || at + 8 > len)
            return false;
        size_t n = size - k * 8 < 8 ? size - k * 8 : 8;
        memcpy(buf + k * 8, src + at, n);
    }
    return true;
}

static int set_value(struct arg_value *a, const char *name, const char *type, struct text *value)
{
    a->name = strdup(name);
    a->type = strdup(type);
    a->value = value->s ? value->s : strdup("");
    value->s = NULL;
    return a->name && a->type && a->value && !value->failed ? 0 : -1;
}

static int attach_bytes(struct arg_value *a, const struct chunks *c, uint16_t param)
{
    for (size_t i = 0; i < c->nmem; i++) {
        if (c->mem[i].param != param || (c->mem[i].flags & CHUNK_UNREADABLE))
            continue;
        size_t n = c->mem[i].len;
        a->bytes = malloc(n ? n : 1);
        if (!a->bytes)
            return -1;
        memcpy(a->bytes, c->mem[i].bytes, n);
        a->nbytes = n;
        return 0;
    }
    return 0;
}

static int decode_raw(const struct chunks *in, const struct chunks *out, bool has_ret,
                      struct call_values *cv)
{
    static const char *const regs[] = {"rdi", "rsi", "rdx", "rcx", "r8", "r9"};
    cv->raw = true;
    size_t n = in->gpr ? in->gpr_len / 8 : 0;
    cv->args = calloc(n ? n : 1, sizeof(*cv->args));
    if (!cv->args)
        return -1;
    for (size_t i = 0; i < n && i < 6; i++) {
        uint64_t v;
        memcpy(&v, in->gpr + i * 8, 8);
        struct text t = {0};
        text_printf(&t, "0x%llx", (unsigned long long)v);
        if (set_value(&cv->args[cv->nargs++], regs[i], "register", &t) < 0)
            return -1;
    }
    if (has_ret && out->gpr && out->gpr_len >= 8) {
        uint64_t v;
        memcpy(&v, out->gpr, 8);
        struct text t = {0};
        text_printf(&t, "0x%llx", (unsigned long long)v);
        cv->has_result = true;
        return set_value(&cv->result, "return", "register", &t);
    }
    return 0;
}

static void format_param(struct text *t, const struct func_param *p, const struct abi_loc *loc,
                         const struct chunks *c, const struct value_ctx *ctx)
{
    const struct ctype *s = ctype_strip(p->type);
    if (p->optimized_out) {
        text_printf(t, "<optimized out>");
        return;
    }
    if (!s || loc->where == ABI_NOWHERE) {
        text_printf(t, "<unavailable>");
        return;
    }
    if (loc->where == ABI_REGS) {
        uint8_t buf[16] = {0};
        if (gather_regs(loc, c, buf, (size_t)s->size))
            value_format(t, p->type, buf, (size_t)s->size, ctx);
        else
            text_printf(t, "<unavailable>");
        return;
    }
    if (loc->where == ABI_STACK && c->stack &&
        loc->stack_offset + s->size <= (uint64_t)c->stack_len) {
        value_format(t, p->type, c->stack + loc->stack_offset, (size_t)s->size, ctx);
        return;
    }
    text_printf(t, c->stack_flags & CHUNK_UNREADABLE ? "<unreadable>" : "<unavailable>");
}

static void format_result(struct text *t, const struct ctype *type, const struct abi_loc *loc,
                          const struct chunks *c, const struct value_ctx *ctx)
{
    const struct ctype *s = ctype_strip(type);
    uint8_t buf[16] = {0};
    if (loc->where == ABI_REGS && gather_regs(loc, c, buf, (size_t)s->size)) {
        value_format(t, type, buf, (size_t)s->size, ctx);
    } else if (loc->where == ABI_X87 && c->x87 && c->x87_len >= 10) {
        value_format(t, type, c->x87, 16, ctx);
    } else if (loc->where == ABI_HIDDEN && c->gpr && c->gpr_len >= 8) {
        uint64_t addr;
        memcpy(&addr, c->gpr, 8);
        for (size_t i = 0; i < c->nmem; i++) {
            const struct pointee *m = &c->mem[i];
            if (m->param != CHUNK_RESULT || m->addr != addr)
                continue;
            if (m->flags & CHUNK_UNREADABLE)
                text_printf(t, "0x%llx <unreadable>", (unsigned long long)addr);
            else
                value_format(t, type, m->bytes, m->len, ctx);
            return;
        }
        text_printf(t, "<unavailable>");
    } else {
        text_printf(t, "<unavailable>");
    }
}

int call_values_decode(struct run_funcs *rf, uint32_t func, const struct rec_values *args,
                       const struct rec_values *ret, struct call_values *cv)
{
    memset(cv, 0, sizeof(*cv));
    struct run_func *f = addr_map_get(&rf->funcs, (uint64_t)func + 1);
    struct run_image *im = image_of(rf, f);
    const struct func_sig *sig = NULL;
    if (im && im->sigs && f->matches < 0) /* rebuilt since the run: its DWARF is not the run's */
        f->matches =
            f->addr >= im->bias && dwarf_sigs_has_function(im->sigs, f->addr - im->bias, f->name);
    if (im && im->sigs && f->matches == 1 && !strchr(f->name, '.'))
        sig = dwarf_sigs_find(im->sigs, f->addr - im->bias);
    static struct chunks in, out; /* large: not on the stack */
    split_chunks(args, &in);
    split_chunks(ret, &out);
    if (!sig)
        return decode_raw(&in, &out, ret != NULL, cv);
    struct abi_loc *locs = calloc(sig->nparams ? sig->nparams : 1, sizeof(*locs)), rloc;
    if (!locs)
        return -1;
    abi_locate(sig, locs, &rloc);
    struct value_ctx ctx = {in.mem, in.nmem, 0, symbol_of, im};
    int rc = 0;
    if (args && in.gpr) {
        cv->args = calloc(sig->nparams ? sig->nparams : 1, sizeof(*cv->args));
        rc = cv->args ? 0 : -1;
        for (size_t i = 0; rc == 0 && i < sig->nparams; i++) {
            const struct func_param *p = &sig->params[i];
            char name[32];
            snprintf(name, sizeof(name), "arg%zu", i + 1);
            struct text t = {0};
            ctx.param = (uint16_t)i;
            format_param(&t, p, &locs[i], &in, &ctx);
            struct arg_value *a = &cv->args[cv->nargs++];
            rc = set_value(a, p->name ? p->name : name, p->type ? p->type->name : "void", &t);
            if (rc == 0)
                rc = attach_bytes(a, &in, (uint16_t)i);
        }
    }
    if (rc == 0 && ret && ctype_strip(sig->ret) && ctype_strip(sig->ret)->kind != CT_VOID) {
        struct text t = {0};
        struct value_ctx rctx = {out.mem, out.nmem, CHUNK_RESULT, symbol_of, im};
        format_result(&t, sig->ret, &rloc, &out, &rctx);
        cv->has_result = true;
        rc = set_value(&cv->result, "return", sig->ret->name, &t);
        if (rc == 0 && ctype_is_string(sig->ret))
            rc = attach_bytes(&cv->result, &out, CHUNK_RESULT);
    }
    free(locs);
    return rc;
}

static void free_value(struct arg_value *a)
{
    free(a->name);
    free(a->type);
    free(a->value);
    free(a->bytes);
}

void call_values_free(struct call_values *cv)
{
    for (size_t i = 0; i < cv->nargs; i++)
        free_value(&cv->args[i]);
    free(cv->args);
    if (cv->has_result)
        free_value(&cv->result);
    memset(cv, 0, sizeof(*cv));
}
