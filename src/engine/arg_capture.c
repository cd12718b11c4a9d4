#include "engine/arg_capture.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

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
    if (!plan || addr_map_put(&c->plans, (uint64_t)func + 1, plan) < 0) {
        capture_plan_free(plan);
        err_msg("%s: out of memory for its arguments", name);
        return;
    }
    dbg(DBG_SYMBOLS, 2, "%s: %s arguments, %u stack bytes, %zu pointer reads", name,
        sig ? "typed" : "raw", plan->stack_bytes, plan->nreads);
}

/* A record being built in a fixed buffer: the largest record there can be. */
struct values_buf {
    union {
        struct rec_values head;
        uint8_t bytes[REC_MAX_SIZE];
    } u;
    size_t used;
};

static void values_begin(struct values_buf *b, enum rec_type type, pid_t tid, uint32_t func)
{
    b->u.head = (struct rec_values){{(uint8_t)type, 0, 0, (uint32_t)tid}, func, 0};
    b->used = sizeof(b->u.head);
}

/* Room for a chunk of up to len bytes: where its bytes go, with *len cut to what fits. */
static uint8_t *chunk_add(struct values_buf *b, uint8_t kind, uint16_t param, uint64_t addr,
                          size_t *len)
{
    size_t room = REC_MAX_SIZE - b->used;
    if (room < sizeof(struct rec_chunk))
        return NULL;
    room -= sizeof(struct rec_chunk);
    if (*len > room)
        *len = room & ~(size_t)7;
    struct rec_chunk ch = {kind, 0, param, (uint32_t)*len, addr};
    memcpy(b->u.bytes + b->used, &ch, sizeof(ch));
    b->u.head.nchunks++;
    return b->u.bytes + b->used + sizeof(ch);
}

/* Sets the final length and flags of the chunk chunk_add just returned data for. */
static void chunk_end(struct values_buf *b, uint8_t *data, size_t len, uint8_t flags)
{
    struct rec_chunk *ch = (struct rec_chunk *)(data - sizeof(struct rec_chunk));
    ch->len = (uint32_t)len;
    ch->flags = flags;
    size_t padded = (len + 7) & ~(size_t)7;
    memset(data + len, 0, padded - len);
    b->used += sizeof(*ch) + padded;
}

static void put_bytes(struct values_buf *b, uint8_t kind, uint16_t param, uint64_t addr,
                      const void *src, size_t len)
{
    uint8_t *data = chunk_add(b, kind, param, addr, &len);
    if (!data)
        return;
    memcpy(data, src, len);
    chunk_end(b, data, len, 0);
}

/* One pread of the tracee's memory: a short read keeps what it got (the end of a mapping). */
static ssize_t read_some(int fd, uint64_t addr, void *buf, size_t len)
{
    ssize_t n;
    do
        n = pread(fd, buf, len, (off_t)addr);
    while (n < 0 && errno == EINTR);
    return n;
}

static void put_memory(struct values_buf *b, int fd, uint8_t kind, uint16_t param, uint64_t addr,
                       size_t len, bool string)
{
    size_t want = len;
    uint8_t *data = chunk_add(b, kind, param, addr, &len);
    if (!data)
        return;
    ssize_t n = len ? read_some(fd, addr, data, len) : 0;
    if (n <= 0) {
        chunk_end(b, data, 0, len ? CHUNK_UNREADABLE : CHUNK_CUT);
        return;
    }
    uint8_t flags = (size_t)n < want ? CHUNK_CUT : 0;
    if (string) {
        uint8_t *nul = memchr(data, 0, (size_t)n);
        flags = nul ? 0 : CHUNK_CUT;
        if (nul)
            n = nul - data + 1;
    }
    chunk_end(b, data, (size_t)n, flags);
}

/* The value of w at the stop: from the registers copied, or the stack bytes. */
static bool word_value(const struct capture_word *w, const uint64_t *gprs, size_t ngprs,
                       const uint8_t *stack, size_t stack_len, uint64_t *out)
{
    uint64_t v = 0;
    if (w->src == SRC_CONST) {
        *out = w->value;
        return true;
    }
    if (w->src == SRC_GPR) {
        if (w->offset >= ngprs)
            return false;
        v = gprs[w->offset];
    } else if (stack && w->offset + 8 <= stack_len) {
        memcpy(&v, stack + w->offset, 8);
    } else {
        return false;
    }
    if (w->size && w->size < 8)
        v &= (1ull << (w->size * 8)) - 1;
    *out = v;
    return true;
}

static void put_reads(struct values_buf *b, int fd, const struct capture_read *reads, size_t n,
                      const uint64_t *gprs, size_t ngprs, const uint8_t *stack, size_t stack_len,
                      unsigned string_max)
{
    for (size_t i = 0; i < n; i++) {
        const struct capture_read *r = &reads[i];
        uint64_t ptr, len = r->size;
        if (!word_value(&r->ptr, gprs, ngprs, stack, stack_len, &ptr) || !ptr)
            continue;
        if (r->kind == READ_COUNTED && !word_value(&r->count, gprs, ngprs, stack, stack_len, &len))
            continue;
        if (r->kind == READ_STRING)
            len = string_max;
        if (len > CAPTURE_BUFFER_MAX)
            len = CAPTURE_BUFFER_MAX;
        put_memory(b, fd, CHUNK_MEM, r->param, ptr, (size_t)len, r->kind == READ_STRING);
    }
}

static const struct capture_plan *plan_of(struct session *s, uint32_t func)
{
    return s->capture ? addr_map_get(&s->capture->plans, (uint64_t)func + 1) : NULL;
}

static bool get_fpregs(pid_t tid, struct user_fpregs_struct *fp)
{
    return ptrace(PTRACE_GETFPREGS, tid, 0, fp) == 0;
}

void capture_at_entry(struct session *s, struct thread *t, uint32_t func,
                      const struct user_regs_struct *regs)
{
    const struct capture_plan *plan = plan_of(s, func);
    if (!plan)
        return;
    static struct values_buf b; /* 64 KiB: too big for the stack, reused at every stop */
    values_begin(&b, REC_ARGS, t->tid, func);
    if (plan->entry) {
        uint64_t gprs[6] = {regs->rdi, regs->rsi, regs->rdx, regs->rcx, regs->r8, regs->r9};
        put_bytes(&b, CHUNK_GPR, 0, 0, gprs, sizeof(gprs));
        struct user_fpregs_struct fp;
        if (plan->entry_xmm && get_fpregs(t->tid, &fp))
            put_bytes(&b, CHUNK_XMM, 0, 0, fp.xmm_space, 8 * 16);
        const uint8_t *stack = NULL;
        size_t stack_len = 0;
        if (plan->stack_bytes) {
            size_t at = b.used + sizeof(struct rec_chunk);
            put_memory(&b, t->proc->mem_fd, CHUNK_STACK, 0, regs->rsp + 8, plan->stack_bytes,
                       false);
            stack = b.u.bytes + at;
            stack_len = ((const struct rec_chunk *)(stack - sizeof(struct rec_chunk)))->len;
        }
        put_reads(&b, t->proc->mem_fd, plan->reads, plan->nreads, gprs, 6, stack, stack_len,
                  s->opts->capture.string_max);
    }
    b.u.head.hdr.size = (uint16_t)b.used;
    rec_frame_data(s->rec, t->tid, &b, b.used);
}

void capture_at_return(struct session *s, struct thread *t, uint32_t func,
                       const struct user_regs_struct *regs)
{
    const struct capture_plan *plan = plan_of(s, func);
    if (!plan || !plan->result)
        return;
    static struct values_buf b;
    values_begin(&b, REC_RETVAL, t->tid, func);
    uint64_t gprs[2] = {regs->rax, regs->rdx};
    put_bytes(&b, CHUNK_GPR, 0, 0, gprs, sizeof(gprs));
    struct user_fpregs_struct fp;
    if (plan->result_fp && get_fpregs(t->tid, &fp)) {
        put_bytes(&b, CHUNK_XMM, 0, 0, fp.xmm_space, 2 * 16);
        put_bytes(&b, CHUNK_X87, 0, 0, fp.st_space, 16);
    }
    if (plan->hidden_size && regs->rax)
        put_memory(&b, t->proc->mem_fd, CHUNK_MEM, CHUNK_RESULT, regs->rax, plan->hidden_size,
                   false);
    put_reads(&b, t->proc->mem_fd, plan->result_reads, plan->nresult_reads, gprs, 2, NULL, 0,
              s->opts->capture.string_max);
    b.u.head.hdr.size = (uint16_t)b.used;
    rec_frame_data(s->rec, t->tid, &b, b.used);
}
