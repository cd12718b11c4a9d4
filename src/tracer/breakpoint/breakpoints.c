#include "tracer/breakpoint/breakpoints.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/insn.h"
#include "arch/x86_64/machine.h"
#include "arch/x86_64/relocate.h"
#include "tracer/arg_capture.h"
#include "remote/memory.h"
#include "tracer/scratch.h"
#include "symbols/proc_maps.h"
#include "util/log.h"

/* the breakpoint instruction: one byte, as struct breakpoint keeps the one it covers */
static const uint8_t int3 = ARCH_BREAKPOINT_BYTE;
_Static_assert(ARCH_BREAKPOINT_LEN == 1, "a breakpoint is one byte");

/* Room for this many return sites is mapped with the entries' scratch page, so most programs
 * never need a second remote mmap while they run. */
#define RETURN_SITE_RESERVE 8192

static struct breakpoint *add_breakpoint(struct addrspace *as, uint64_t addr, uint8_t orig)
{
    struct breakpoint *bp = calloc(1, sizeof(*bp));
    if (!bp)
        return NULL;
    bp->addr = addr;
    bp->orig = orig;
    if (addr_map_put(&as->breakpoints, addr, bp) < 0) {
        free(bp);
        return NULL;
    }
    return bp;
}

/* Relocates the instruction at addr into a slot near it; fills bp->resume. */
static int place_out_of_line(struct process *p, pid_t tid, csh decoder, const uint8_t *code,
                             size_t avail, uint64_t addr, size_t chunk_hint, struct breakpoint *bp,
                             const char **why)
{
    uint64_t slot = scratch_alloc(p, tid, addr, SCRATCH_SLOT, chunk_hint);
    if (!slot) {
        *why = "no scratch page within reach";
        return -1;
    }
    struct relocation r;
    if (x86_relocate(decoder, code, avail, addr, slot, &r, why) < 0)
        return -1;
    if (r.kind == RELOC_JUMP) {
        bp->resume = r.resume;
        return 0;
    }
    if (mem_write(p->mem_fd, slot, r.code, r.code_len) < 0) {
        *why = "cannot write the scratch page";
        return -1;
    }
    bp->resume = slot;
    return 0;
}

/* Does the body of a function (code[0..size)) branch back to its first byte? A byte scan for
 * jmp/jcc rel8/rel32 that land on offset 0: exact for real branches, and a rare false match in
 * data only makes a re-entry of that function with the very same frame count as a loop. */
static bool branches_to_entry(const uint8_t *code, uint64_t size)
{
    for (uint64_t i = 0; i < size; i++) {
        struct arch_branch_bytes b;
        if (arch_branch_bytes_at(code + i, size - i, i, &b) && !b.is_call && b.target == 0)
            return true;
    }
    return false;
}

static int read_segment(struct process *p, uint64_t start, uint64_t size, uint8_t **out)
{
    *out = malloc(size + X86_MAX_INSN);
    if (!*out)
        return -1;
    memset(*out + size, 0, X86_MAX_INSN);
    if (mem_read(p->mem_fd, start, *out, size) < 0) {
        free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

/* Where a function comes from, for its arguments' DWARF: its image file and its link-time
 * address there; path NULL when unknown (its arguments are then shown as raw registers). And
 * whether it is a library's public function traced at the program's boundary (-L). */
struct entry_origin {
    const char *path;
    uint64_t link_addr;
    bool lib_call;
};

/* Puts an entry breakpoint at addr, whose bytes (as the program sees them) are code[0..avail);
 * body is how much of them is the function. Returns 1 when traced, 0 when skipped, -1 when out
 * of memory. */
static int insert_entry(struct session *s, struct process *p, pid_t tid, uint32_t image_id,
                        const uint8_t *code, size_t avail, uint64_t body, uint64_t addr,
                        uint64_t size, const char *name, size_t chunk_hint,
                        struct entry_origin origin)
{
    if (breakpoint_at(p->as, addr))
        return 0;
    struct breakpoint bp = {.addr = addr,
                            .orig = code[0],
                            .kinds = BP_ENTRY,
                            .loop_head = branches_to_entry(code, body),
                            .lib_call = origin.lib_call};
    const char *why = NULL;
    if (place_out_of_line(p, tid, s->decoder, code, avail, addr, chunk_hint, &bp, &why) < 0) {
        dbg(DBG_PROBE, 1, "skipping %s: %s", name, why);
        s->stats.skipped_functions++;
        return 0;
    }
    bp.func = s->next_func_id++;
    struct breakpoint *stored = add_breakpoint(p->as, addr, bp.orig);
    if (!stored)
        return -1;
    *stored = bp;
    /* marked when the run's engine is another: its times are not like the others' */
    unsigned flags = 0;
    if (s->backend != s->breakpoints) {
        flags = FUNC_BREAKPOINT;
        s->stats.breakpoint_functions++;
    }
    rec_func_flagged(s->rec, bp.func, image_id, addr, size, name, flags);
    capture_plan_function(s, origin.path, origin.link_addr, name, bp.func);
    if (mem_write(p->mem_fd, addr, &int3, 1) < 0) {
        dbg(DBG_PROBE, 1, "cannot write a breakpoint at %s: %s", name, strerror(errno));
        addr_map_del(&p->as->breakpoints, addr);
        free(stored);
        return 0;
    }
    return 1;
}

static long insert_segment(struct session *s, struct process *p, pid_t tid,
                           const struct elf_image *image, uint32_t image_id, uint64_t bias,
                           const struct exec_segment *seg, size_t chunk_hint)
{
    uint64_t start = seg->vaddr + bias;
    uint8_t *text;
    if (read_segment(p, start, seg->memsz, &text) < 0) {
        dbg(DBG_PROBE, 1, "cannot read text at %#llx: %s", (unsigned long long)start,
            strerror(errno));
        return -1;
    }
    long traced = 0;
    for (size_t i = 0; i < image->nfuncs; i++) {
        const struct func_symbol *f = &image->funcs[i];
        if (f->addr < seg->vaddr || f->addr >= seg->vaddr + seg->memsz)
            continue;
        if (!func_symbol_selected(&s->opts->filter, f)) {
            dbg(DBG_SYMBOLS, 2, "leaving out %s: -F/-N", f->name);
            continue;
        }
        if (f->skipped) {
            dbg(DBG_SYMBOLS, 1, "skipping %s: C runtime code, or the cold part of a function",
                f->name);
            continue;
        }
        uint64_t off = f->addr - seg->vaddr;
        size_t avail = (size_t)(seg->memsz - off) + X86_MAX_INSN;
        uint64_t body = f->size < seg->memsz - off ? f->size : seg->memsz - off;
        int rc = insert_entry(s, p, tid, image_id, text + off, avail, body, f->addr + bias, f->size,
                              f->name, chunk_hint,
                              (struct entry_origin){image->path, f->addr, f->lib_call});
        if (rc < 0)
            break;
        traced += rc;
    }
    free(text);
    return traced;
}

long probe_insert_entries(struct session *s, struct process *p, pid_t tid,
                          const struct elf_image *image, uint64_t bias)
{
    size_t chunk_hint = (image->nfuncs + RETURN_SITE_RESERVE) * SCRATCH_SLOT;
    uint32_t image_id = s->next_image_id++;
    rec_image(s->rec, image_id, p->pid, bias, image->path);
    long total = 0;
    for (size_t i = 0; i < image->nsegments; i++) {
        long n = insert_segment(s, p, tid, image, image_id, bias, &image->segments[i], chunk_hint);
        if (n < 0)
            return -1;
        total += n;
    }
    return total;
}

/* The bytes at addr as the program sees them: our int3s replaced by what they cover. */
static int read_original(struct process *p, uint64_t addr, uint8_t *buf, size_t len)
{
    if (mem_read(p->mem_fd, addr, buf, len) < 0) {
        /* near the end of a mapping: fall back to what can be read */
        memset(buf, 0, len);
        if (mem_read(p->mem_fd, addr, buf, 1) < 0)
            return -1;
        for (size_t n = 2; n <= len; n++)
            if (mem_read(p->mem_fd, addr, buf, n) < 0)
                break;
    }
    for (size_t i = 0; i < len; i++) {
        struct breakpoint *bp = breakpoint_at(p->as, addr + i);
        if (bp && buf[i] == int3)
            buf[i] = bp->orig;
    }
    return 0;
}

/* Return sites are checked against the cached maps; only an address they do not cover (a
 * library loaded since) costs a new read of /proc/PID/maps. */
static bool is_executable(struct process *p, uint64_t addr)
{
    const struct mapping *m = maps_find(&p->as->maps, addr);
    if (!m) {
        maps_free(&p->as->maps);
        if (maps_read(p->pid, &p->as->maps) < 0)
            return false;
        m = maps_find(&p->as->maps, addr);
    }
    return m && m->exec && !m->write;
}

struct breakpoint *probe_return_site(struct session *s, struct process *p, pid_t tid, uint64_t addr)
{
    struct breakpoint *bp = breakpoint_at(p->as, addr);
    if (bp) {
        if (bp->kinds & BP_ENTRY)
            bp->kinds |= BP_RETURN;
        return bp;
    }
    uint8_t code[X86_MAX_INSN];
    const char *why = "not in executable code";
    bool ok = is_executable(p, addr) && read_original(p, addr, code, sizeof(code)) == 0;
    bp = add_breakpoint(p->as, addr, code[0]);
    if (!bp)
        return NULL;
    if (ok && place_out_of_line(p, tid, s->decoder, code, sizeof(code), addr,
                                RETURN_SITE_RESERVE * SCRATCH_SLOT, bp, &why) == 0) {
        if (mem_write(p->mem_fd, addr, &int3, 1) == 0) {
            bp->kinds = BP_RETURN;
            return bp;
        }
        why = "cannot write the breakpoint";
    }
    dbg(DBG_PROBE, 1, "cannot catch returns at %#llx: %s", (unsigned long long)addr, why);
    s->stats.uncatchable_returns++;
    bp->kinds = 0;
    return bp;
}

int probe_insert_function(struct session *s, struct process *p, pid_t tid, uint32_t image_id,
                          uint64_t addr, const char *name, bool lib_call)
{
    uint8_t code[2 * X86_MAX_INSN];
    if (read_original(p, addr, code, sizeof(code)) < 0) {
        dbg(DBG_PROBE, 1, "skipping %s: cannot read its code at %#llx", name,
            (unsigned long long)addr);
        return 0;
    }
    /* No size is known: no loop-head scan (an implementation picked by an IFUNC resolver is a
     * leaf routine, not a loop back to its own first byte). */
    return insert_entry(s, p, tid, image_id, code, sizeof(code), 0, addr, 0, name,
                        RETURN_SITE_RESERVE * SCRATCH_SLOT,
                        (struct entry_origin){NULL, 0, lib_call});
}

int probe_insert_symbol(struct session *s, struct process *p, pid_t tid, uint32_t image_id,
                        const char *path, const struct func_symbol *f, uint64_t bias)
{
    uint64_t addr = f->addr + bias;
    size_t len = (size_t)f->size + X86_MAX_INSN;
    uint8_t *code = calloc(1, len);
    if (!code)
        return -1;
    /* The body must be readable; the bytes after it only may be (the decoder's look-ahead). */
    if (mem_read(p->mem_fd, addr, code, f->size ? f->size : 1) < 0) {
        dbg(DBG_PROBE, 1, "skipping %s: cannot read its code at %#llx", f->name,
            (unsigned long long)addr);
        free(code);
        return 0;
    }
    for (size_t n = X86_MAX_INSN; n > 0; n /= 2)
        if (mem_read(p->mem_fd, addr + f->size, code + f->size, n) == 0)
            break;
    for (size_t i = 0; i < len; i++) {
        struct breakpoint *bp = breakpoint_at(p->as, addr + i);
        if (bp && code[i] == int3)
            code[i] = bp->orig;
    }
    int rc = insert_entry(s, p, tid, image_id, code, len, f->size, addr, f->size, f->name,
                          RETURN_SITE_RESERVE * SCRATCH_SLOT,
                          (struct entry_origin){path, f->addr, f->lib_call});
    free(code);
    return rc;
}

struct breakpoint *probe_insert_hook(struct session *s, struct process *p, pid_t tid, uint64_t addr)
{
    struct breakpoint *bp = breakpoint_at(p->as, addr);
    if (bp && bp->kinds) {
        bp->kinds |= BP_HOOK;
        return bp;
    }
    uint8_t code[2 * X86_MAX_INSN];
    const char *why = "cannot read the code";
    if (bp || read_original(p, addr, code, sizeof(code)) < 0)
        goto fail;
    bp = add_breakpoint(p->as, addr, code[0]);
    if (!bp)
        return NULL;
    if (place_out_of_line(p, tid, s->decoder, code, sizeof(code), addr, 64 * SCRATCH_SLOT, bp,
                          &why) == 0 &&
        mem_write(p->mem_fd, addr, &int3, 1) == 0) {
        bp->kinds = BP_HOOK;
        return bp;
    }
    addr_map_del(&p->as->breakpoints, addr);
    free(bp);
fail:
    dbg(DBG_PROBE, 1, "cannot hook %#llx: %s", (unsigned long long)addr, why);
    return NULL;
}

void probe_forget(struct addrspace *as, uint64_t lo, uint64_t hi, uint32_t func_lo,
                  uint32_t func_hi)
{
    size_t n = 0, cap = 0;
    uint64_t *doomed = NULL;
    ADDR_MAP_FOREACH(&as->breakpoints, slot)
    {
        const struct breakpoint *bp = slot->value;
        bool in_range = bp->addr >= lo && bp->addr < hi;
        bool its_func = (bp->kinds & BP_ENTRY) && bp->func >= func_lo && bp->func < func_hi;
        if (!in_range && !its_func)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            uint64_t *more = reallocarray(doomed, cap, sizeof(*doomed));
            if (!more)
                break; /* what is left stays: it only costs memory */
            doomed = more;
        }
        doomed[n++] = bp->addr;
    }
    for (size_t i = 0; i < n; i++) {
        free(addr_map_get(&as->breakpoints, doomed[i]));
        addr_map_del(&as->breakpoints, doomed[i]);
    }
    free(doomed);
    dbg(DBG_PROBE, 2, "forgot %zu breakpoints in %#llx-%#llx", n, (unsigned long long)lo,
        (unsigned long long)hi);
}

uint64_t breakpoint_resume_at(void *as, uint64_t addr)
{
    const struct breakpoint *bp = breakpoint_at(as, addr);
    return bp && bp->kinds ? bp->resume : 0;
}
