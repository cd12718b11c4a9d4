#include "inject/patch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/inject_tramp.h"
#include "arch/x86_64/relocate.h"
#include "inject/positions.h"
#include "probe/memory.h"
#include "util/log.h"

#define JMP_LEN 5

/* The image's text, read once from the program. */
struct text {
    uint64_t start; /* runtime address */
    uint64_t size;
    uint8_t *bytes; /* size + X86_MAX_INSN, the tail zeroed */
};

/* Every relative branch target found in the image's function bodies, sorted; and per function
 * whether its own body jumps back to its first byte (a loop whose head is the entry: every
 * turn would look like a call). */
struct branch_map {
    uint64_t *targets;
    size_t n, cap;
    bool *loops_to_entry; /* per image function */
    uint64_t *starts;     /* every function's runtime start, sorted */
    size_t nstarts;
};

size_t patch_code_size(const struct elf_image *image)
{
    return image->nfuncs * FUNC_CODE_SIZE;
}

static const struct text *text_of(const struct text *texts, size_t n, uint64_t addr, uint64_t *off)
{
    for (size_t i = 0; i < n; i++)
        if (addr >= texts[i].start && addr < texts[i].start + texts[i].size) {
            *off = addr - texts[i].start;
            return &texts[i];
        }
    return NULL;
}

static int push_target(struct branch_map *m, uint64_t t)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 4096;
        uint64_t *nt = reallocarray(m->targets, cap, sizeof(*nt));
        if (!nt)
            return -1;
        m->targets = nt;
        m->cap = cap;
    }
    m->targets[m->n++] = t;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static bool in_group(const cs_insn *insn, uint8_t group)
{
    for (int i = 0; i < insn->detail->groups_count; i++)
        if (insn->detail->groups[i] == group)
            return true;
    return false;
}

/* Disassembles one function body linearly and notes its relative branch targets. */
static int scan_body(csh cs, cs_insn *insn, struct branch_map *m, const uint8_t *code,
                     uint64_t size, uint64_t addr, bool *loops_to_entry)
{
    const uint8_t *p = code;
    size_t left = size;
    uint64_t at = addr;
    while (left && cs_disasm_iter(cs, &p, &left, &at, insn)) {
        if (!in_group(insn, X86_GRP_BRANCH_RELATIVE))
            continue;
        const cs_x86 *x = &insn->detail->x86;
        for (int i = 0; i < x->op_count; i++) {
            if (x->operands[i].type != X86_OP_IMM)
                continue;
            uint64_t t = (uint64_t)x->operands[i].imm;
            if (t == addr && !in_group(insn, X86_GRP_CALL))
                *loops_to_entry = true;
            if (push_target(m, t) < 0)
                return -1;
        }
    }
    return 0;
}

static int scan_branches(csh cs, const struct elf_image *image, uint64_t bias,
                         const struct text *texts, size_t ntexts, struct branch_map *m)
{
    m->loops_to_entry = calloc(image->nfuncs ? image->nfuncs : 1, sizeof(bool));
    cs_insn *insn = cs_malloc(cs);
    if (!m->loops_to_entry || !insn) {
        if (insn)
            cs_free(insn, 1);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < image->nfuncs && rc == 0; i++) {
        const struct func_symbol *f = &image->funcs[i];
        uint64_t off;
        const struct text *t = text_of(texts, ntexts, f->addr + bias, &off);
        if (!t)
            continue;
        uint64_t size = f->size < t->size - off ? f->size : t->size - off;
        rc = scan_body(cs, insn, m, t->bytes + off, size, f->addr + bias, &m->loops_to_entry[i]);
    }
    cs_free(insn, 1);
    if (rc == 0 && m->n)
        qsort(m->targets, m->n, sizeof(*m->targets), cmp_u64);
    m->starts = calloc(image->nfuncs ? image->nfuncs : 1, sizeof(*m->starts));
    if (!m->starts)
        return -1;
    for (size_t i = 0; i < image->nfuncs; i++)
        m->starts[m->nstarts++] = image->funcs[i].addr + bias;
    qsort(m->starts, m->nstarts, sizeof(*m->starts), cmp_u64);
    return rc;
}

/* The first element of sorted v[0..n) above x, or n. */
static size_t first_above(const uint64_t *v, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Does any of sorted v[0..n) lie in (addr, addr + len)? */
static bool inside(const uint64_t *v, size_t n, uint64_t addr, size_t len)
{
    size_t i = first_above(v, n, addr);
    return i < n && v[i] < addr + len;
}

/* Does any branch land in (addr, addr + len)? */
static bool branch_into(const struct branch_map *m, uint64_t addr, size_t len)
{
    return inside(m->targets, m->n, addr, len);
}

/* A function shorter than the jump, ending in ret or jmp: the jump may cover the alignment
 * padding after it, when that is nops or int3s that no function starts in. */
static bool padding_follows(csh cs, const struct branch_map *m, const struct text *t, uint64_t off,
                            uint64_t addr, size_t covered)
{
    size_t next = first_above(m->starts, m->nstarts, addr);
    if (next < m->nstarts && m->starts[next] < addr + JMP_LEN)
        return false;
    if (off + JMP_LEN > t->size)
        return false;
    cs_insn *insn = cs_malloc(cs);
    if (!insn)
        return false;
    const uint8_t *p = t->bytes + off + covered;
    size_t left = t->size - off - covered;
    uint64_t at = addr + covered;
    bool ok = true;
    while (ok && at < addr + JMP_LEN) {
        if (*p == 0xcc) {
            p++, left--, at++;
            continue;
        }
        ok = cs_disasm_iter(cs, &p, &left, &at, insn) && insn->id == X86_INS_NOP;
    }
    cs_free(insn, 1);
    return ok;
}

static int read_texts(struct process *p, const struct elf_image *image, uint64_t bias,
                      struct text *texts)
{
    for (size_t i = 0; i < image->nsegments; i++) {
        struct text *t = &texts[i];
        t->start = image->segments[i].vaddr + bias;
        t->size = image->segments[i].memsz;
        t->bytes = calloc(1, t->size + X86_MAX_INSN);
        if (!t->bytes || mem_read(p->mem_fd, t->start, t->bytes, t->size) < 0) {
            dbg(DBG_PROBE, 1, "cannot read text at %#llx: %s", (unsigned long long)t->start,
                strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* Relocates f's first instructions into its code slot at code (fills buf). Returns how many
 * bytes of f the jump covers, or 0 with *why. */
static size_t plan_function(struct session *s, const struct func_symbol *f, size_t index,
                            const struct text *t, uint64_t off, uint64_t addr,
                            const struct branch_map *m, uint64_t code, uint64_t blob_entry,
                            uint32_t func, uint8_t *buf, const char **why)
{
    if (m->loops_to_entry[index]) {
        *why = "its body jumps back to its first instruction";
        return 0;
    }
    size_t avail = (size_t)(t->size - off) + X86_MAX_INSN;
    size_t reloc_len, covered;
    if (x86_relocate_prologue(s->decoder, t->bytes + off, avail, addr, JMP_LEN,
                              code + FUNC_RELOC_OFF, buf + FUNC_RELOC_OFF, FUNC_RELOC_MAX,
                              &reloc_len, &covered, why) < 0)
        return 0;
    if (covered > f->size || covered > sizeof(((struct inject_patch *)0)->orig)) {
        *why = "too short for a jump";
        return 0;
    }
    if (covered < JMP_LEN) {
        if (!padding_follows(s->decoder, m, t, off, addr, covered)) {
            *why = "too short for a jump, and no padding after it";
            return 0;
        }
        covered = JMP_LEN;
    }
    if (branch_into(m, addr, covered)) {
        *why = "a branch lands inside the bytes the jump would cover";
        return 0;
    }
    inject_func_stub(buf, code, blob_entry, func);
    memset(buf + FUNC_RELOC_OFF + reloc_len, 0xcc, FUNC_RELOC_MAX - reloc_len);
    return covered;
}

static bool wanted(struct session *s, const struct func_symbol *f)
{
    if (!func_filter_selects(&s->opts->filter, f->name)) {
        dbg(DBG_SYMBOLS, 2, "leaving out %s: -F/-N", f->name);
        return false;
    }
    if (f->skipped) {
        dbg(DBG_SYMBOLS, 1, "skipping %s: C runtime code, or the cold part of a function", f->name);
        return false;
    }
    return true;
}

/* The jumps go in a text segment at a time: one write of the span they cover, made from the
 * copy read at the start (every thread is stopped: nothing changed the text since), rather than a
 * system call per function (10,000 functions: 25 ms -> 1 ms). */
static long write_jumps(struct process *p, const struct inject_space *sp, struct text *texts,
                        size_t ntexts, uint64_t code)
{
    long patched = 0;
    for (size_t t = 0; t < ntexts; t++) {
        struct text *tx = &texts[t];
        uint64_t lo = UINT64_MAX, hi = 0;
        long n = 0;
        for (size_t i = 0; i < sp->npatches; i++) {
            const struct inject_patch *pt = &sp->patches[i];
            if (pt->addr < tx->start || pt->addr + pt->len > tx->start + tx->size)
                continue;
            inject_entry_jump(tx->bytes + (pt->addr - tx->start), pt->len, pt->addr,
                              code + i * FUNC_CODE_SIZE);
            lo = pt->addr < lo ? pt->addr : lo;
            hi = pt->addr + pt->len > hi ? pt->addr + pt->len : hi;
            n++;
        }
        if (!n)
            continue;
        if (mem_write(p->mem_fd, lo, tx->bytes + (lo - tx->start), hi - lo) < 0) {
            dbg(DBG_PROBE, 1, "cannot patch %#llx..%#llx: %s", (unsigned long long)lo,
                (unsigned long long)hi, strerror(errno));
            continue;
        }
        patched += n;
    }
    return patched;
}

static long patch_planned(struct session *s, struct process *p, struct inject_space *sp,
                          const struct elf_image *image, uint64_t bias, struct text *texts,
                          const struct branch_map *m, uint64_t code, uint64_t blob_entry,
                          uint8_t *codebuf)
{
    uint32_t image_id = s->next_image_id++;
    rec_image(s->rec, image_id, p->pid, bias, image->path);
    sp->patches = calloc(image->nfuncs ? image->nfuncs : 1, sizeof(*sp->patches));
    if (!sp->patches)
        return -1;
    uint64_t lo = UINT64_MAX, hi = 0, *resume;
    for (size_t i = 0; i < image->nsegments; i++) {
        lo = texts[i].start < lo ? texts[i].start : lo;
        hi = texts[i].start + texts[i].size > hi ? texts[i].start + texts[i].size : hi;
    }
    size_t nresume = thread_positions(s, p, lo, hi, &resume);
    sp->first_func = s->next_func_id;
    size_t used = 0;
    for (size_t i = 0; i < image->nfuncs; i++) {
        const struct func_symbol *f = &image->funcs[i];
        uint64_t addr = f->addr + bias, off;
        const struct text *t = text_of(texts, image->nsegments, addr, &off);
        if (!t || !wanted(s, f))
            continue;
        const char *why = NULL;
        uint64_t at = code + used * FUNC_CODE_SIZE;
        uint8_t *buf = codebuf + used * FUNC_CODE_SIZE;
        size_t covered =
            plan_function(s, f, i, t, off, addr, m, at, blob_entry, s->next_func_id, buf, &why);
        if (covered && inside(resume, nresume, addr, covered)) {
            covered = 0;
            why = "a thread may resume in the middle of the bytes the jump would cover";
        }
        if (!covered) {
            dbg(DBG_PROBE, 1, "skipping %s: %s", f->name, why);
            s->skipped_functions++;
            continue;
        }
        struct inject_patch *pt = &sp->patches[sp->npatches++];
        pt->addr = addr;
        pt->len = (uint8_t)covered;
        memcpy(pt->orig, t->bytes + off, covered);
        rec_func(s->rec, s->next_func_id++, image_id, addr, f->size, f->name);
        used++;
    }
    sp->end_func = s->next_func_id;
    free(resume);
    if (used && mem_write(p->mem_fd, code, codebuf, used * FUNC_CODE_SIZE) < 0)
        return -1;
    return write_jumps(p, sp, texts, image->nsegments, code);
}

long patch_image(struct session *s, struct process *p, struct inject_space *sp,
                 const struct elf_image *image, uint64_t bias, uint64_t code, uint64_t blob_entry)
{
    struct text *texts = calloc(image->nsegments ? image->nsegments : 1, sizeof(*texts));
    struct branch_map m = {0};
    uint8_t *codebuf = calloc(1, patch_code_size(image) + 1);
    long rc = -1;
    if (texts && codebuf && read_texts(p, image, bias, texts) == 0 &&
        scan_branches(s->decoder, image, bias, texts, image->nsegments, &m) == 0)
        rc = patch_planned(s, p, sp, image, bias, texts, &m, code, blob_entry, codebuf);
    for (size_t i = 0; texts && i < image->nsegments; i++)
        free(texts[i].bytes);
    free(texts);
    free(m.targets);
    free(m.loops_to_entry);
    free(m.starts);
    free(codebuf);
    return rc;
}
