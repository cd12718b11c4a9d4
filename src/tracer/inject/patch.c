#include "tracer/inject/patch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/inject_tramp.h"
#include "arch/x86_64/insn.h"
#include "arch/x86_64/machine.h"
#include "arch/x86_64/relocate.h"
#include "tracer/arg_capture.h"
#include "tracer/inject/captures.h"
#include "tracer/inject/hops.h"
#include "tracer/inject/positions.h"
#include "tracer/breakpoint/breakpoints.h"
#include "remote/memory.h"
#include "symbols/eh_frame_hdr.h"
#include "util/log.h"

/* The image's text, read once from the program. */
struct text {
    uint64_t start; /* runtime address */
    uint64_t size;
    uint8_t *bytes; /* size + ARCH_MAX_INSN_LEN, the tail zeroed */
};

/* A relative branch found in the image's function bodies. */
struct branch {
    uint64_t target, from;
    bool is_call;
};

/* Every relative branch of the image's function bodies, sorted by target, and the padding the
 * hops may take (hops.h). */
struct branch_map {
    struct branch *branches;
    size_t n, cap;
    uint64_t *starts; /* every function's runtime start, sorted */
    size_t nstarts;
    /* the hops' room, found near where a hop is wanted (gaps_near): the code between two
     * starts is looked at once (seen, per start) */
    struct hop_gaps gaps;
    bool *seen;
    struct arch_decoder *d;
    const struct text *texts;
    size_t ntexts;
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

static int push_branch(struct branch_map *m, const struct arch_insn *insn)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 4096;
        struct branch *nb = reallocarray(m->branches, cap, sizeof(*nb));
        if (!nb)
            return -1;
        m->branches = nb;
        m->cap = cap;
    }
    m->branches[m->n++] = (struct branch){insn->target, insn->addr, insn->is_call};
    return 0;
}

static int cmp_branch(const void *a, const void *b)
{
    const struct branch *x = a, *y = b;
    return x->target < y->target ? -1 : x->target > y->target;
}

/* Does the instruction at code never fall through: ret, jmp (rel or indirect), ud2, int3, hlt? */
static bool never_falls_through(const uint8_t *code, const struct arch_insn *insn)
{
    if (insn->is_ret || insn->is_int3 || code[0] == 0xe9 || code[0] == 0xeb || code[0] == 0xf4 ||
        (code[0] == 0x0f && code[1] == 0x0b))
        return true;
    size_t at = 0; /* jmp r/m (ff /4, ff /5), after notrack, bnd or REX prefixes */
    while (at < 2 && at + 1 < insn->len &&
           (code[at] == 0x3e || code[at] == 0xf2 || (code[at] & 0xf0) == 0x40))
        at++;
    return code[at] == 0xff && at + 1 < insn->len && ((code[at + 1] >> 3) & 7) >= 4 &&
           ((code[at + 1] >> 3) & 7) <= 5;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Disassembles one function body (or a range of code) linearly and notes its relative
 * branches; a byte that does not decode is stepped over, so that what follows is still seen. */
static int scan_body(struct arch_decoder *d, struct branch_map *m, const uint8_t *code,
                     uint64_t size, uint64_t addr)
{
    for (uint64_t off = 0; off < size;) {
        struct arch_insn insn;
        if (!arch_decode(d, code + off, size - off, addr + off, &insn)) {
            off++;
            continue;
        }
        off += insn.len;
        if (insn.is_branch && push_branch(m, &insn) < 0)
            return -1;
    }
    return 0;
}

/* The first element of sorted v[0..n) above x, or n. */
static size_t first_above(const uint64_t *v, size_t n, uint64_t x);

/* Where a branch would break a patch: just after the start of a function to patch (a jump
 * covers at most sizeof(inject_patch.orig) bytes). picks: their starts, sorted. */
static bool near_pick(const uint64_t *picks, size_t n, uint64_t t)
{
    size_t i = first_above(picks, n, t - 1); /* the first start >= t */
    return i > 0 && t - picks[i - 1] < sizeof(((struct inject_patch *)0)->orig);
}

/* Could a rel32 jump or call in code[0..size) land near a pick? A byte scan (every offset, not
 * only instruction boundaries): a superset, which the decoding then makes exact. */
static bool may_branch_to_picks(const uint8_t *code, uint64_t size, uint64_t addr,
                                const uint64_t *picks, size_t npicks)
{
    for (uint64_t j = 0; j < size; j++) {
        struct arch_branch_bytes b;
        if (arch_branch_bytes_at(code + j, size - j, addr + j, &b) && b.rel32 &&
            near_pick(picks, npicks, b.target))
            return true;
    }
    return false;
}

/* Does [lo, hi) come within reach of a rel8 branch (or hold the start) of a pick? */
static bool close_to_pick(const uint64_t *picks, size_t n, uint64_t lo, uint64_t hi)
{
    size_t i = first_above(picks, n, lo > 256 ? lo - 256 : 0);
    return i < n && picks[i] < hi + 256;
}

struct span {
    uint64_t start, end; /* link-time */
};

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The symbols' bodies, sorted by start. */
static struct span *symbol_spans(const struct elf_image *image, size_t n)
{
    struct span *v = calloc(n ? n : 1, sizeof(*v));
    for (size_t i = 0; v && i < n; i++)
        v[i] = (struct span){image->funcs[i].addr, image->funcs[i].addr + image->funcs[i].size};
    if (v)
        qsort(v, n, sizeof(*v), cmp_span);
    return v;
}

/* The furthest end of a symbol that starts at start, or start. */
static uint64_t symbol_end(const struct span *v, size_t n, uint64_t start)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid].start < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t end = start;
    for (; lo < n && v[lo].start == start; lo++)
        if (v[lo].end > end)
            end = v[lo].end;
    return end;
}

/* image->funcs[0..first_range) are decoded whole; the unwind ranges after them (the code the
 * symbols do not cover, in a stripped file most of it) only where a branch could land near a
 * pick: decoding a whole text costs about a second, this a few milliseconds. */
static int scan_branches(struct arch_decoder *d, const struct elf_image *image, uint64_t bias,
                         const struct text *texts, size_t ntexts, size_t first_range,
                         const uint64_t *picks, size_t npicks, struct branch_map *m)
{
    struct span *spans = symbol_spans(image, first_range);
    if (!spans) {
        free(spans);
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
        uint64_t at = f->addr + bias;
        if (i >= first_range) { /* what a symbol's body at the same start left to see */
            uint64_t skip = symbol_end(spans, first_range, f->addr) - f->addr;
            if (skip >= size)
                continue;
            if (skip)
                off += skip, at += skip, size -= skip;
            if (!close_to_pick(picks, npicks, at, at + size) &&
                !may_branch_to_picks(t->bytes + off, size, at, picks, npicks))
                continue;
        }
        rc = scan_body(d, m, t->bytes + off, size, at);
    }
    free(spans);
    if (rc == 0 && m->n)
        qsort(m->branches, m->n, sizeof(*m->branches), cmp_branch);
    m->starts = calloc(image->nfuncs ? image->nfuncs : 1, sizeof(*m->starts));
    m->seen = calloc(image->nfuncs ? image->nfuncs : 1, sizeof(*m->seen));
    if (!m->starts || !m->seen)
        return -1;
    m->d = d;
    m->texts = texts;
    m->ntexts = ntexts;
    for (size_t i = 0; i < image->nfuncs; i++)
        m->starts[m->nstarts++] = image->funcs[i].addr + bias;
    qsort(m->starts, m->nstarts, sizeof(*m->starts), cmp_u64);
    return rc;
}

/* The first branch whose target is above x, or m->n. */
static size_t first_branch_above(const struct branch_map *m, uint64_t x)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->branches[mid].target <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#define MAX_GAP 64 /* longer runs of nops are not alignment padding */

/* The padding at the end of the code between starts[k] and the next start: after an
 * instruction that never falls through, nops or int3s only, that no branch lands in. */
static int gap_of_region(struct branch_map *m, size_t k)
{
    uint64_t lo = m->starts[k], hi = m->starts[k + 1], off;
    const struct text *t = text_of(m->texts, m->ntexts, lo, &off);
    if (!t || off + (hi - lo) > t->size)
        return 0;
    uint64_t pad = 0; /* where the padding after the last instruction that never falls through
                       * begins, or 0 */
    for (uint64_t at = lo; at < hi;) {
        struct arch_insn insn;
        const uint8_t *code = t->bytes + off + (at - lo);
        if (!arch_decode(m->d, code, hi - at, at, &insn)) {
            pad = 0; /* stepped over, as the scan does (an instruction capstone lacks) */
            at++;
            continue;
        }
        if (!(insn.is_nop || insn.is_int3) || !pad)
            pad = never_falls_through(code, &insn) ? at + insn.len : 0;
        at += insn.len;
    }
    if (!pad || hi - pad < HOP_LEN || hi - pad > MAX_GAP ||
        first_branch_above(m, pad - 1) != first_branch_above(m, hi - 1))
        return 0;
    if (hop_gaps_add(&m->gaps, pad, hi) < 0)
        return -1;
    hop_gaps_sort(&m->gaps);
    return 0;
}

/* Finds the padding within a rel8 jump of addr: at the ends of the code between the starts
 * from the one before addr - 128 to the last before addr + 128, each looked at once. */
static void gaps_near(struct branch_map *m, uint64_t addr)
{
    size_t k = first_above(m->starts, m->nstarts, addr > 128 ? addr - 128 : 0);
    for (k = k ? k - 1 : 0; k + 1 < m->nstarts && m->starts[k] < addr + 128; k++) {
        if (m->seen[k] || m->starts[k] == m->starts[k + 1])
            continue;
        m->seen[k] = true;
        gap_of_region(m, k);
    }
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

/* Does any of the sorted v[0..n) lie in (addr, addr + len)? */
static bool inside(const uint64_t *v, size_t n, uint64_t addr, size_t len)
{
    size_t i = first_above(v, n, addr);
    return i < n && v[i] < addr + len;
}

/* Does a branch from outside [addr, addr + len) land inside it (after its first byte)? Those
 * from inside are the relocated instructions' own, which the copy keeps to itself. */
static bool branch_into(const struct branch_map *m, uint64_t addr, size_t len)
{
    for (size_t i = first_branch_above(m, addr); i < m->n && m->branches[i].target < addr + len;
         i++)
        if (m->branches[i].from < addr || m->branches[i].from >= addr + len)
            return true;
    return false;
}

/* A function shorter than the jump, ending in ret or jmp: the jump may cover the alignment
 * padding after it, when that is nops or int3s that no function starts in. */
static bool padding_follows(struct arch_decoder *d, const struct branch_map *m,
                            const struct text *t, uint64_t off, uint64_t addr, size_t covered)
{
    size_t next = first_above(m->starts, m->nstarts, addr);
    if (next < m->nstarts && m->starts[next] < addr + ARCH_JUMP_LEN)
        return false;
    if (off + ARCH_JUMP_LEN > t->size ||
        hop_gaps_taken(&m->gaps, addr + covered, addr + ARCH_JUMP_LEN))
        return false;
    for (size_t at = covered; at < ARCH_JUMP_LEN;) {
        struct arch_insn insn;
        if (!arch_decode(d, t->bytes + off + at, t->size - off - at, addr + at, &insn) ||
            !(insn.is_int3 || insn.is_nop))
            return false;
        at += insn.len;
    }
    return true;
}

static int read_texts(struct process *p, const struct elf_image *image, uint64_t bias,
                      struct text *texts)
{
    for (size_t i = 0; i < image->nsegments; i++) {
        struct text *t = &texts[i];
        t->start = image->segments[i].vaddr + bias;
        t->size = image->segments[i].memsz;
        t->bytes = calloc(1, t->size + ARCH_MAX_INSN_LEN);
        if (!t->bytes || mem_read(p->mem_fd, t->start, t->bytes, t->size) < 0) {
            dbg(DBG_INJECT, 1, "cannot read text at %#llx: %s", (unsigned long long)t->start,
                strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* What one function's patch writes: its entry, and the hops and retargeted loop branches that
 * go with it (hops.h), each an inject_patch. */
#define PLAN_MAX 8

struct plan {
    struct inject_patch w[PLAN_MAX]; /* w[0]: the entry */
    size_t n;
};

static struct inject_patch *plan_add(struct plan *pl, const struct text *t, uint64_t addr,
                                     size_t len)
{
    if (pl->n == PLAN_MAX || crosses_page(addr, len))
        return NULL;
    struct inject_patch *pt = &pl->w[pl->n++];
    *pt = (struct inject_patch){.addr = addr, .len = (uint8_t)len, .entry = pl->n == 1};
    memcpy(pt->orig, t->bytes + (addr - t->start), len);
    return pt;
}

/* A hop to target in the padding within rel8 reach of next_ip, or 0. */
static uint64_t plan_hop(struct plan *pl, struct branch_map *m, const struct text *t,
                         uint64_t next_ip, uint64_t target)
{
    gaps_near(m, next_ip);
    uint64_t hop = hop_take(&m->gaps, next_ip);
    struct inject_patch *pt = hop ? plan_add(pl, t, hop, HOP_LEN) : NULL;
    if (!pt)
        return 0;
    pt->hop = true;
    inject_entry_jump(pt->bytes, HOP_LEN, hop, target);
    return hop;
}

/* The loops of f whose head is its entry (a branch back to its first byte, from outside the
 * covered bytes, which the copy keeps to itself): each turn would look like a call. They go to
 * the relocated first instructions instead (reloc), directly or through a hop. */
static bool plan_loops(struct plan *pl, struct branch_map *m, const struct text *t,
                       const struct func_symbol *f, uint64_t addr, size_t covered, uint64_t reloc,
                       const char **why)
{
    for (size_t i = first_branch_above(m, addr - 1); i < m->n && m->branches[i].target == addr;
         i++) {
        const struct branch *b = &m->branches[i];
        if (b->is_call || b->from < addr + covered || b->from >= addr + f->size)
            continue; /* a call, one of the copy's, or another function's tail call */
        struct arch_branch_bytes bb;
        uint64_t off = b->from - t->start;
        struct inject_patch *pt;
        if (!arch_branch_bytes_at(t->bytes + off, t->size - off, b->from, &bb) ||
            bb.target != addr || !(pt = plan_add(pl, t, b->from, bb.len))) {
            *why = "its body jumps back to its first instruction, with a branch that cannot be "
                   "retargeted (prefixed, or across a page)";
            return false;
        }
        memcpy(pt->bytes, t->bytes + off, bb.len);
        uint64_t to = reloc;
        if (!bb.rel32 && !(to = plan_hop(pl, m, t, b->from + bb.len, reloc))) {
            *why =
                "its body jumps back to its first instruction, and no padding in reach for a hop";
            return false;
        }
        int64_t rel = (int64_t)(to - (b->from + bb.len));
        if (bb.rel32)
            memcpy(pt->bytes + bb.len - 4, &(int32_t){(int32_t)rel}, 4);
        else
            pt->bytes[bb.len - 1] = (uint8_t)(int8_t)rel;
    }
    return true;
}

/* Plans f's patch, its first instructions relocated into its code slot at code (fills buf):
 * a 5-byte jump to the stub, or with hops a 2-byte jump to a hop that jumps there (for a
 * function too short for the 5 bytes, or one whose bytes after the first two are a branch
 * target). False with *why when neither can be. */
static bool plan_function(struct session *s, struct arch_decoder *d, const struct func_symbol *f,
                          const struct text *t, uint64_t off, uint64_t addr, struct branch_map *m,
                          uint64_t code, uint8_t *buf, bool hops, struct plan *pl, const char **why)
{
    pl->n = 0;
    size_t avail = (size_t)(t->size - off) + ARCH_MAX_INSN_LEN;
    size_t reloc_len, covered;
    if (x86_relocate_prologue(s->decoder, t->bytes + off, avail, addr,
                              hops ? HOP_REACH : ARCH_JUMP_LEN, code + FUNC_RELOC_OFF,
                              buf + FUNC_RELOC_OFF, FUNC_RELOC_MAX, &reloc_len, &covered, why) < 0)
        return false;
    if (covered > f->size || covered > sizeof(((struct inject_patch *)0)->orig) ||
        covered < (hops ? HOP_REACH : 1)) {
        *why = hops ? "one byte long, too short for a jump" : "too short for a jump";
        return false;
    }
    size_t own = covered; /* the function's own bytes under the jump; the rest is padding */
    if (!hops && covered < ARCH_JUMP_LEN) {
        if (!padding_follows(d, m, t, off, addr, covered)) {
            *why = "too short for a jump, and no padding after it";
            return false;
        }
        covered = ARCH_JUMP_LEN;
    }
    if (branch_into(m, addr, covered)) {
        *why = "a branch lands inside the bytes the jump would cover";
        return false;
    }
    struct inject_patch *entry = plan_add(pl, t, addr, covered);
    if (!entry) {
        *why =
            "its jump would cross a page boundary (calltrace killed while writing it could leave "
            "half of it)";
        return false;
    }
    if (!hops)
        inject_entry_jump(entry->bytes, covered, addr, code);
    else if (!plan_hop(pl, m, t, addr + HOP_REACH, code)) {
        *why = "too short for a jump, and no padding in reach for a hop";
        return false;
    } else {
        memset(entry->bytes, ARCH_BREAKPOINT_BYTE, covered);
        entry->bytes[0] = 0xeb; /* jmp rel8 to the hop */
        entry->bytes[1] = (uint8_t)(int8_t)(int64_t)(pl->w[1].addr - (addr + HOP_REACH));
    }
    if (own < covered) /* the padding the jump covers: no hop of the loops below goes there */
        hop_gaps_reserve(&m->gaps, addr + own, addr + covered);
    if (!plan_loops(pl, m, t, f, addr, covered, code + FUNC_RELOC_OFF, why))
        return false;
    memset(buf + FUNC_RELOC_OFF + reloc_len, ARCH_BREAKPOINT_BYTE, FUNC_RELOC_MAX - reloc_len);
    return true;
}

/* -v: how a patch that is more than a 5-byte jump went. */
static void say_plan(const struct plan *pl, const char *name)
{
    size_t loops = 0;
    for (size_t i = 1; i < pl->n; i++)
        loops += !pl->w[i].hop;
    if (pl->w[0].bytes[0] == 0xeb)
        dbg(DBG_INJECT, 1, "%s: patched with a 2-byte jump to a hop in the padding at %#llx", name,
            (unsigned long long)pl->w[1].addr);
    if (loops)
        dbg(DBG_INJECT, 1, "%s: %zu loop%s back to its entry turn%s in its relocated copy", name,
            loops, loops == 1 ? "" : "s", loops == 1 ? "s" : "");
}

static bool wanted(struct session *s, const struct func_symbol *f)
{
    if (!func_symbol_selected(&s->opts->filter, f)) {
        dbg(DBG_SYMBOLS, 2, "leaving out %s: -F/-N", f->name);
        return false;
    }
    if (f->skipped) {
        dbg(DBG_SYMBOLS, 1, "skipping %s: C runtime code, or the cold part of a function", f->name);
        return false;
    }
    return true;
}

/* The stubs of the functions planned, ids[0..n): those with a capture table (-A/-R) enter the
 * blob at its args entry, the others pay nothing for it. */
static int write_stubs(struct session *s, const struct patch_target *target, uint64_t code,
                       uint8_t *codebuf, const uint32_t *ids, size_t n)
{
    uint64_t *tables = calloc(n ? n : 1, sizeof(*tables));
    if (!tables)
        return -1;
    if (s->capture)
        captures_place(s, target->p, target->via, code, ids, n, tables);
    uint8_t flags = target->lib_calls ? DESC_LIB_CALL : 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t entry =
            target->blob + (tables[i] ? inject_blob_entry_args_off : inject_blob_entry_off);
        inject_func_stub(codebuf + i * FUNC_CODE_SIZE, code + i * FUNC_CODE_SIZE, entry, ids[i],
                         tables[i], flags);
    }
    free(tables);
    return 0;
}

/* Room for n more patches in sp. */
static int reserve_patches(struct inject_space *sp, size_t n)
{
    if (sp->npatches + n <= sp->patches_cap)
        return 0;
    size_t cap = sp->npatches + n;
    struct inject_patch *more = reallocarray(sp->patches, cap ? cap : 1, sizeof(*more));
    if (!more)
        return -1;
    sp->patches = more;
    sp->patches_cap = cap;
    return 0;
}

/* The functions the jump cannot go over get the ptrace engine's breakpoint instead: calltrace
 * stays attached, and a breakpoint covers one byte, which any function has. Not in a program
 * calltrace attached to (session_may_break): those functions are left out, and counted. */
static long breakpoint_fallbacks(struct session *s, const struct patch_target *target,
                                 const struct patch_pick *which, const char *const *why, size_t n)
{
    long traced = 0;
    if (!session_may_break(s)) { /* attached: left out rather than on an int3 */
        for (size_t i = 0; i < n; i++)
            dbg(DBG_PROBE, 1, "%s: left out (attached: no breakpoint), not patched: %s",
                which[i].name, why[i]);
        s->stats.left_out_functions += n;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        struct func_symbol f = target->image->funcs[which[i].index];
        f.name = (char *)which[i].name;
        f.lib_call |= target->lib_calls;
        int rc = probe_insert_symbol(s, target->p, target->via, target->image_id,
                                     target->image->path, &f, target->bias);
        if (rc < 0)
            break;
        if (rc > 0) /* said by the breakpoints' domain: the breakpoint backend traces it */
            dbg(DBG_PROBE, 1, "%s: on a breakpoint (the ptrace engine's), not patched: %s", f.name,
                why[i]);
        traced += rc;
    }
    return traced;
}

/* The jumps of patches [first, sp->npatches) go in a page at a time: one write of the span they
 * cover in the page, made from the copy read at the start (every thread is stopped: nothing
 * changed the text since), rather than a system call per function (10,000 functions: 25 ms ->
 * 2 ms). A page at a time because a SIGKILL of calltrace can end a write between two pages (the
 * kernel copies page by page, and gives up at a fatal signal), and no patch crosses one
 * (plan_function): whatever moment calltrace dies at, each jump is whole or not there. The hops
 * and loops go first (nothing leads to them yet), the entries that lead to them after. */
static long write_pages(struct process *p, const struct inject_space *sp, size_t first,
                        struct text *tx, bool entries)
{
    long patched = 0;
    for (size_t i = first; i < sp->npatches;) {
        uint64_t page = sp->patches[i].addr / PATCH_PAGE, lo = UINT64_MAX, hi = 0;
        long n = 0;
        size_t j = i;
        for (; j < sp->npatches && sp->patches[j].addr / PATCH_PAGE == page; j++) {
            const struct inject_patch *pt = &sp->patches[j];
            if (pt->entry != entries || pt->addr < tx->start ||
                pt->addr + pt->len > tx->start + tx->size)
                continue;
            memcpy(tx->bytes + (pt->addr - tx->start), pt->bytes, pt->len);
            lo = pt->addr < lo ? pt->addr : lo;
            hi = pt->addr + pt->len > hi ? pt->addr + pt->len : hi;
            n += pt->entry; /* functions, not their hops */
        }
        i = j;
        if (lo >= hi)
            continue;
        if (mem_write(p->mem_fd, lo, tx->bytes + (lo - tx->start), hi - lo) < 0) {
            dbg(DBG_INJECT, 1, "cannot patch %#llx..%#llx: %s", (unsigned long long)lo,
                (unsigned long long)hi, strerror(errno));
            continue;
        }
        patched += n;
    }
    return patched;
}

static int cmp_patch(const void *a, const void *b)
{
    const struct inject_patch *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static long write_jumps(struct process *p, struct inject_space *sp, size_t first,
                        struct text *texts, size_t ntexts)
{
    /* by address, for the pages (the restores take entries first, whatever the order) */
    qsort(sp->patches + first, sp->npatches - first, sizeof(*sp->patches), cmp_patch);
    long patched = 0;
    for (size_t t = 0; t < ntexts; t++)
        write_pages(p, sp, first, &texts[t], false);
    for (size_t t = 0; t < ntexts; t++)
        patched += write_pages(p, sp, first, &texts[t], true);
    return patched;
}

/* Where the threads of p may resume inside the image's text (attaching: they were stopped
 * anywhere), sorted; a jump must not cut through one. */
static size_t resume_positions(struct session *s, struct process *p, const struct text *texts,
                               size_t ntexts, uint64_t **out)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < ntexts; i++) {
        lo = texts[i].start < lo ? texts[i].start : lo;
        hi = texts[i].start + texts[i].size > hi ? texts[i].start + texts[i].size : hi;
    }
    return thread_positions(s, p, lo, hi, out);
}

static long patch_planned(struct session *s, struct arch_decoder *d,
                          const struct patch_target *target, const struct patch_pick *picks,
                          size_t npicks, struct text *texts, struct branch_map *m, uint8_t *codebuf)
{
    struct inject_space *sp = target->sp;
    const struct elf_image *image = target->image;
    uint64_t code = target->code;
    struct patch_pick *fallback = calloc(npicks ? npicks : 1, sizeof(*fallback));
    const char **fallback_why = calloc(npicks ? npicks : 1, sizeof(*fallback_why));
    uint32_t *ids = calloc(npicks ? npicks : 1, sizeof(*ids));
    if (!fallback || !fallback_why || !ids || reserve_patches(sp, npicks) < 0) {
        free(fallback);
        free(fallback_why);
        free(ids);
        return -1;
    }
    if (!sp->end_func) /* the first image: its ids, then its libraries' (-l) */
        sp->first_func = s->next_func_id;
    uint64_t *resume = NULL;
    size_t nresume = resume_positions(s, target->p, texts, image->nsegments, &resume);
    size_t first_patch = sp->npatches, used = 0, nfallback = 0;
    for (size_t k = 0; k < npicks; k++) {
        size_t i = picks[k].index;
        const struct func_symbol *f = &image->funcs[i];
        uint64_t addr = f->addr + target->bias, off;
        const struct text *t = text_of(texts, image->nsegments, addr, &off);
        if (!t)
            continue;
        const char *why = NULL;
        uint64_t at = code + used * FUNC_CODE_SIZE;
        uint8_t *buf = codebuf + used * FUNC_CODE_SIZE;
        struct plan pl;
        bool ok = plan_function(s, d, f, t, off, addr, m, at, buf, false, &pl, &why) ||
                  plan_function(s, d, f, t, off, addr, m, at, buf, true, &pl, &why);
        if (ok && inside(resume, nresume, addr, pl.w[0].len)) {
            ok = false; /* a breakpoint writes only the first byte */
            why = "a thread may resume in the middle of the bytes the jump would cover";
        }
        if (!ok || reserve_patches(sp, pl.n) < 0) {
            fallback_why[nfallback] = why;
            fallback[nfallback++] = picks[k];
            continue;
        }
        for (size_t w = 0; w < pl.n; w++)
            pl.w[w].held = sp->hold_jumps;
        memcpy(&sp->patches[sp->npatches], pl.w, pl.n * sizeof(pl.w[0]));
        sp->npatches += pl.n;
        say_plan(&pl, picks[k].name);
        rec_func(s->rec, s->next_func_id, target->image_id, addr, f->size, picks[k].name);
        capture_plan_function(s, image->path, f->addr, picks[k].name, s->next_func_id);
        ids[used++] = s->next_func_id++;
    }
    sp->end_func = s->next_func_id;
    if (write_stubs(s, target, code, codebuf, ids, used) < 0) {
        sp->npatches = first_patch;
        used = 0;
    }
    long patched = 0;
    if (used && mem_write(target->p->mem_fd, code, codebuf, used * FUNC_CODE_SIZE) < 0) {
        sp->npatches = first_patch;
        patched = -1;
    }
    free(resume);
    if (patched >= 0 && sp->hold_jumps) { /* written at the end of the attach: patch_flush_held */
        for (size_t i = first_patch; i < sp->npatches; i++)
            patched += sp->patches[i].entry;
    } else if (patched >= 0) {
        patched = write_jumps(target->p, sp, first_patch, texts, image->nsegments);
    }
    if (patched >= 0)
        patched += breakpoint_fallbacks(s, target, fallback, fallback_why, nfallback);
    free(fallback);
    free(fallback_why);
    free(ids);
    return patched;
}

int patch_flush_held(struct inject_space *sp)
{
    int rc = 0;
    for (int entries = 0; entries <= 1; entries++)
        for (size_t i = 0; i < sp->npatches; i++) {
            const struct inject_patch *pt = &sp->patches[i];
            if (pt->entry == entries && pt->held &&
                mem_write(sp->mem_fd, pt->addr, pt->bytes, pt->len) < 0)
                rc = -1;
        }
    for (size_t i = 0; i < sp->npatches; i++)
        sp->patches[i].held = false;
    sp->hold_jumps = false;
    return rc;
}

void patch_forget(struct inject_space *sp, uint64_t lo, uint64_t hi)
{
    size_t kept = 0;
    for (size_t i = 0; i < sp->npatches; i++)
        if (sp->patches[i].addr < lo || sp->patches[i].addr >= hi)
            sp->patches[kept++] = sp->patches[i];
    sp->npatches = kept;
}

long patch_functions(struct session *s, const struct patch_target *target,
                     const struct patch_pick *picks, size_t n)
{
    const struct elf_image *image = target->image;
    /* The symbols may not cover every function (a stripped file keeps only its exported ones):
     * the unwind table's ranges make the scan see the branches of all the code. */
    struct elf_image scanned = *image;
    size_t first_range = target->first_range ? target->first_range : image->nfuncs;
    struct func_symbol *ranges =
        target->first_range ? NULL : eh_frame_ranges(image, &scanned.nfuncs);
    if (ranges)
        scanned.funcs = ranges;
    uint64_t *starts = calloc(n ? n : 1, sizeof(*starts));
    for (size_t i = 0; starts && i < n; i++)
        starts[i] = image->funcs[picks[i].index].addr + target->bias;
    if (starts)
        qsort(starts, n, sizeof(*starts), cmp_u64);
    struct text *texts = calloc(image->nsegments ? image->nsegments : 1, sizeof(*texts));
    struct branch_map m = {0};
    uint8_t *codebuf = calloc(1, n * FUNC_CODE_SIZE + 1);
    struct arch_decoder *d = n ? arch_decoder_new() : NULL;
    long rc = -1;
    if (d && starts && texts && codebuf && read_texts(target->p, image, target->bias, texts) == 0 &&
        scan_branches(d, &scanned, target->bias, texts, image->nsegments, first_range, starts, n,
                      &m) == 0)
        rc = patch_planned(s, d, target, picks, n, texts, &m, codebuf);
    else if (!n)
        rc = 0; /* nothing wanted (-F) */
    free(ranges);
    free(starts);
    for (size_t i = 0; texts && i < image->nsegments; i++)
        free(texts[i].bytes);
    free(texts);
    free(m.branches);
    free(m.seen);
    hop_gaps_free(&m.gaps);
    free(m.starts);
    free(codebuf);
    arch_decoder_free(d);
    return rc;
}

long patch_image(struct session *s, struct process *p, pid_t via, struct inject_space *sp,
                 const struct elf_image *image, uint64_t bias, uint64_t code, uint64_t blob)
{
    struct patch_pick *picks = calloc(image->nfuncs ? image->nfuncs : 1, sizeof(*picks));
    if (!picks)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < image->nfuncs; i++)
        if (wanted(s, &image->funcs[i]))
            picks[n++] = (struct patch_pick){i, image->funcs[i].name};
    struct patch_target target = {.p = p,
                                  .via = via,
                                  .sp = sp,
                                  .image = image,
                                  .bias = bias,
                                  .image_id = s->next_image_id++,
                                  .code = code,
                                  .blob = blob,
                                  .lib_calls = image->lib_calls};
    rec_image(s->rec, target.image_id, p->pid, bias, image->path);
    long rc = patch_functions(s, &target, picks, n);
    free(picks);
    return rc;
}
