/* In-process hooks on the entry of a function calltrace acts at but does not trace (libgcc's
 * unwinder, unwind.h), for a program calltrace attached to, where no breakpoint may go
 * (session_may_break): the function's first instructions are relocated, as a traced function's
 * are, and its entry jumps to a stub that enters the blob's hook routine, inject_blob_hook
 * (arch/x86_64/inject_tramp.S), which does the work in the program, calltrace there or not.
 *
 *   H:  jmp H_stub                 a code region near H (rel32 reach), one per hook:
 *       ...rest of H... <------.     blob copy | H_stub -> blob copy's inject_blob_hook
 *                              |                 H_desc {H_reloc, HOOK_*}
 *                              '---------------- H_reloc: H's first instructions; jmp H+len
 *
 * The functions hooked are libgcc's and libstdc++'s exported entries, whose first bytes no branch
 * of theirs comes back into (their prologues are compiled C); the one check left to make, as
 * for any patch, is that no stopped thread sits inside the bytes the jump covers. The patch
 * joins the traced entries' list (struct inject_space: patches), so that a detach restores it
 * with them. */
#include "tracer/inject/entry_hook.h"

#include "tracer/inject/hops.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/inject_tramp.h"
#include "arch/x86_64/insn.h"
#include "arch/x86_64/machine.h"
#include "arch/x86_64/relocate.h"
#include "remote/memory.h"
#include "tracer/inject/inject.h"
#include "tracer/inject/positions.h"
#include "tracer/scratch.h"
#include "util/log.h"

#define HOOK_READ 48 /* bytes of H read: a prologue to relocate, and the padding after a ret */

/* Does nothing but padding (nop, int3) fill code[covered..ARCH_JUMP_LEN)? A function whose first
 * instruction returns (the dynamic linker's _dl_debug_state is a lone ret) has room for the
 * jump only there. */
static bool padding_until_jump(const uint8_t *code, uint64_t addr, size_t covered)
{
    struct arch_decoder *d = arch_decoder_new();
    bool ok = d != NULL;
    for (size_t at = covered; ok && at < ARCH_JUMP_LEN;) {
        struct arch_insn insn;
        ok = arch_decode(d, code + at, HOOK_READ - at, addr + at, &insn) &&
             (insn.is_int3 || insn.is_nop);
        at += ok ? insn.len : 0;
    }
    arch_decoder_free(d);
    return ok;
}

static bool patched_at(const struct inject_space *sp, uint64_t addr)
{
    for (size_t i = 0; i < sp->npatches; i++)
        if (sp->patches[i].entry && sp->patches[i].addr == addr)
            return true;
    return false;
}

/* H_stub and H_reloc in buf, for the code at stub (the blob copy at blob); the bytes of H the
 * jump covers in *covered. NULL, or why not. */
static const char *plan_hook(struct session *s, const uint8_t *code, uint64_t addr, uint64_t stub,
                             uint64_t blob, int kind, uint8_t *buf, size_t *covered)
{
    const char *why = NULL;
    size_t reloc_len;
    inject_func_stub(buf, stub, blob + inject_blob_hook_off, (uint32_t)kind, 0, 0);
    if (x86_relocate_prologue(s->decoder, code, HOOK_READ, addr, ARCH_JUMP_LEN,
                              stub + FUNC_RELOC_OFF, buf + FUNC_RELOC_OFF, FUNC_RELOC_MAX,
                              &reloc_len, covered, &why) < 0)
        return why;
    if (*covered < ARCH_JUMP_LEN) {
        if (!padding_until_jump(code, addr, *covered))
            return "too short for a jump, and no padding after it";
        *covered = ARCH_JUMP_LEN;
    }
    memset(buf + FUNC_RELOC_OFF + reloc_len, ARCH_BREAKPOINT_BYTE, FUNC_RELOC_MAX - reloc_len);
    return NULL;
}

/* Would the jump over [addr, addr + len) cut through where a stopped thread of p goes on? */
static bool thread_inside(struct session *s, const struct process *p, uint64_t addr, size_t len)
{
    uint64_t *at = NULL;
    size_t n = thread_positions(s, p, addr + 1, addr + len, &at);
    free(at);
    return n > 0;
}

static int reserve_patch(struct inject_space *sp)
{
    if (sp->npatches < sp->patches_cap)
        return 0;
    size_t cap = sp->patches_cap ? 2 * sp->patches_cap : 16;
    struct inject_patch *more = reallocarray(sp->patches, cap, sizeof(*more));
    if (!more)
        return -1;
    sp->patches = more;
    sp->patches_cap = cap;
    return 0;
}

const char *inject_hook_entry(struct session *s, struct process *p, struct inject_space *sp,
                              pid_t via, uint64_t addr, int kind)
{
    uint8_t code[HOOK_READ + ARCH_MAX_INSN_LEN] = {0}, buf[FUNC_CODE_SIZE];
    size_t covered;
    if (patched_at(sp, addr))
        return "its entry is patched already (traced, with -l)";
    if (mem_read(p->mem_fd, addr, code, HOOK_READ) < 0)
        return strerror(errno);
    uint64_t blob = scratch_alloc(p, via, addr, BLOB_ROOM + FUNC_CODE_SIZE, 0);
    if (!blob)
        return "no room for code near it";
    uint64_t stub = blob + BLOB_ROOM;
    const char *why = plan_hook(s, code, addr, stub, blob, kind, buf, &covered);
    if (why)
        return why;
    if (thread_inside(s, p, addr, covered))
        return "a thread may resume in the middle of the bytes the jump would cover";
    if (crosses_page(addr, covered))
        return "its jump would cross a page boundary (calltrace killed while writing it could "
               "leave half of it)";
    if (reserve_patch(sp) < 0)
        return "out of memory";
    if (inject_write_blob(p, blob, sp) < 0 || mem_write(p->mem_fd, stub, buf, sizeof(buf)) < 0)
        return strerror(errno);
    struct inject_patch *pt = &sp->patches[sp->npatches];
    *pt = (struct inject_patch){.addr = addr, .len = (uint8_t)covered, .entry = true};
    memcpy(pt->orig, code, covered);
    uint8_t jump[sizeof(pt->orig)];
    inject_entry_jump(jump, covered, addr, stub);
    if (mem_write(p->mem_fd, addr, jump, covered) < 0)
        return strerror(errno);
    sp->npatches++;
    return NULL;
}

bool inject_insert_linker_hook(struct session *s, struct process *p, pid_t via, uint64_t addr)
{
    struct inject_space *sp = s->inject ? addr_map_get(&s->inject->spaces, (uint64_t)p->pid) : NULL;
    if (!sp)
        return false;
    if (sp->linker_hook == addr)
        return true;
    const char *why = inject_hook_entry(s, p, sp, via, addr, HOOK_LINKER);
    if (why) {
        dbg(DBG_INJECT, 1, "process %d: cannot hook the dynamic linker in the program: %s",
            (int)p->pid, why);
        return false;
    }
    sp->linker_hook = addr;
    return true;
}
