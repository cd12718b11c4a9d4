#include "arch/x86_64/relocate.h"

#include <stdbool.h>
#include <string.h>

int x86_decoder_open(csh *handle)
{
    if (cs_open(CS_ARCH_X86, CS_MODE_64, handle) != CS_ERR_OK)
        return -1;
    if (cs_option(*handle, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK) {
        cs_close(handle);
        return -1;
    }
    return 0;
}

void x86_decoder_close(csh *handle)
{
    cs_close(handle);
}

struct emitter {
    uint8_t *buf;
    size_t len;
    uint64_t base; /* runtime address of buf[0] */
};

static void emit(struct emitter *e, const void *bytes, size_t n)
{
    memcpy(e->buf + e->len, bytes, n);
    e->len += n;
}

static void emit_u32(struct emitter *e, uint32_t v)
{
    emit(e, &v, 4);
}

static void emit_u64(struct emitter *e, uint64_t v)
{
    emit(e, &v, 8);
}

static bool fits_rel32(int64_t v)
{
    return v >= INT32_MIN && v <= INT32_MAX;
}

/* jmp target: rel32 when in reach, else "jmp [rip+0]" followed by the absolute address. */
static void emit_jmp(struct emitter *e, uint64_t target)
{
    int64_t rel = (int64_t)(target - (e->base + e->len + 5));
    if (fits_rel32(rel)) {
        uint8_t op = 0xe9;
        emit(e, &op, 1);
        emit_u32(e, (uint32_t)(int32_t)rel);
        return;
    }
    static const uint8_t jmp_abs[] = {0xff, 0x25, 0, 0, 0, 0};
    emit(e, jmp_abs, sizeof(jmp_abs));
    emit_u64(e, target);
}

/* The branch target of a relative jmp/jcc/call/loop: capstone resolves it to an immediate. */
static uint64_t relative_target(const cs_insn *insn)
{
    const cs_x86 *x = &insn->detail->x86;
    for (int i = 0; i < x->op_count; i++)
        if (x->operands[i].type == X86_OP_IMM)
            return (uint64_t)x->operands[i].imm;
    return 0;
}

static bool has_group(const cs_insn *insn, uint8_t group)
{
    const cs_detail *d = insn->detail;
    for (int i = 0; i < d->groups_count; i++)
        if (d->groups[i] == group)
            return true;
    return false;
}

static bool is_rip_relative(const cs_insn *insn)
{
    const cs_x86 *x = &insn->detail->x86;
    for (int i = 0; i < x->op_count; i++)
        if (x->operands[i].type == X86_OP_MEM && x->operands[i].mem.base == X86_REG_RIP)
            return true;
    return false;
}

static bool uses_rsp_base(const cs_insn *insn)
{
    const cs_x86 *x = &insn->detail->x86;
    for (int i = 0; i < x->op_count; i++)
        if (x->operands[i].type == X86_OP_MEM && x->operands[i].mem.base == X86_REG_RSP)
            return true;
    return false;
}

/* Where the disp32 of a rip-relative operand sits: right after ModRM (mod 00, rm 101 takes no
 * SIB). capstone 4 reports disp_size 0 for some of these (cmpw $imm, disp(%rip)), so the offset
 * is derived here and checked against the decoded displacement. Returns 0 when unsure. */
static size_t rip_disp_offset(const cs_insn *insn)
{
    const cs_x86 *x = &insn->detail->x86;
    size_t at = x->encoding.modrm_offset ? x->encoding.modrm_offset + 1u : 0;
    if (!at || at + 4 > insn->size)
        return 0;
    int32_t disp;
    memcpy(&disp, insn->bytes + at, 4);
    for (int i = 0; i < x->op_count; i++)
        if (x->operands[i].type == X86_OP_MEM && x->operands[i].mem.base == X86_REG_RIP)
            return x->operands[i].mem.disp == disp ? at : 0;
    return 0;
}

/* Copies insn to e, retargeting a rip-relative displacement to the new location.
 * new_len_delta: bytes that will follow the copy before "rip" as the CPU sees it (0 here). */
static int copy_rip_fixed(struct emitter *e, const cs_insn *insn, uint64_t addr, const char **why)
{
    uint8_t bytes[X86_MAX_INSN];
    memcpy(bytes, insn->bytes, insn->size);
    if (is_rip_relative(insn)) {
        size_t at = rip_disp_offset(insn);
        if (!at) {
            *why = "rip-relative operand in an unexpected encoding";
            return -1;
        }
        int32_t disp;
        memcpy(&disp, bytes + at, 4);
        uint64_t target = addr + insn->size + (int64_t)disp;
        int64_t new_disp = (int64_t)(target - (e->base + e->len + insn->size));
        if (!fits_rel32(new_disp)) {
            *why = "rip-relative operand out of reach of the scratch page";
            return -1;
        }
        int32_t d32 = (int32_t)new_disp;
        memcpy(bytes + at, &d32, 4);
    }
    emit(e, bytes, insn->size);
    return 0;
}

/*   call rel32             ->   push [rip+lit_ret]      ; the original return address
 *                               jmp  [rip+lit_target]
 *                               lit_ret: .quad addr+len ; lit_target: .quad target */
static void relocate_call_rel(struct emitter *e, uint64_t ret, uint64_t target)
{
    static const uint8_t push_lit[] = {0xff, 0x35, 6, 0, 0, 0};
    static const uint8_t jmp_lit[] = {0xff, 0x25, 8, 0, 0, 0};
    emit(e, push_lit, sizeof(push_lit));
    emit(e, jmp_lit, sizeof(jmp_lit));
    emit_u64(e, ret);
    emit_u64(e, target);
}

/* An rsp-based operand always has a SIB byte after ModRM; its displacement size comes from
 * ModRM's mod field. Adds 8 to it, for the return address pushed just before. */
static int adjust_rsp_disp(uint8_t *bytes, size_t modrm_at, const char **why)
{
    unsigned mod = bytes[modrm_at] >> 6;
    size_t at = modrm_at + 2;
    if (mod == 1) {
        int v = (int8_t)bytes[at] + 8;
        if (v > INT8_MAX) {
            *why = "rsp-relative indirect call with a large displacement";
            return -1;
        }
        bytes[at] = (uint8_t)(int8_t)v;
        return 0;
    }
    if (mod == 2) {
        int32_t d;
        memcpy(&d, bytes + at, 4);
        if (d > INT32_MAX - 8) {
            *why = "rsp-relative indirect call with a large displacement";
            return -1;
        }
        d += 8;
        memcpy(bytes + at, &d, 4);
        return 0;
    }
    *why = "rsp-relative indirect call without displacement";
    return -1;
}

/*   call r/m (ff /2)       ->   push [rip+lit_ret]
 *                               jmp  r/m (ff /4)        ; rsp-based operands +8 for the push
 *                               lit_ret: .quad addr+len */
static int relocate_call_indirect(struct emitter *e, const cs_insn *insn, uint64_t addr,
                                  const char **why)
{
    const cs_x86_encoding *enc = &insn->detail->x86.encoding;
    uint8_t bytes[X86_MAX_INSN];
    memcpy(bytes, insn->bytes, insn->size);
    if (!enc->modrm_offset || bytes[enc->modrm_offset - 1] != 0xff) {
        *why = "unexpected encoding of an indirect call";
        return -1;
    }
    bytes[enc->modrm_offset] = (uint8_t)((bytes[enc->modrm_offset] & ~0x38) | (4 << 3));
    if (uses_rsp_base(insn) && adjust_rsp_disp(bytes, enc->modrm_offset, why) < 0)
        return -1;
    static const uint8_t push_lit[] = {0xff, 0x35, 0, 0, 0, 0};
    size_t push_at = e->len;
    emit(e, push_lit, sizeof(push_lit));
    if (is_rip_relative(insn)) {
        size_t at = rip_disp_offset(insn);
        if (!at) {
            *why = "rip-relative operand in an unexpected encoding";
            return -1;
        }
        int32_t disp;
        memcpy(&disp, bytes + at, 4);
        uint64_t target = addr + insn->size + (int64_t)disp;
        int64_t nd = (int64_t)(target - (e->base + e->len + insn->size));
        if (!fits_rel32(nd)) {
            *why = "rip-relative operand out of reach of the scratch page";
            return -1;
        }
        int32_t d32 = (int32_t)nd;
        memcpy(bytes + at, &d32, 4);
    }
    emit(e, bytes, insn->size);
    uint32_t lit_disp = (uint32_t)(e->len - (push_at + sizeof(push_lit)));
    memcpy(e->buf + push_at + 2, &lit_disp, 4);
    emit_u64(e, addr + insn->size);
    return 0;
}

/*   jcc target             ->   j<cc> short taken        (jrcxz/loop keep their opcode)
 *                               jmp addr+len
 *                        taken: jmp target */
static int relocate_cond_branch(struct emitter *e, const cs_insn *insn, uint64_t addr,
                                const char **why)
{
    const cs_x86 *x = &insn->detail->x86;
    uint64_t target = relative_target(insn);
    uint8_t op[X86_MAX_INSN];
    size_t oplen;
    if (x->opcode[0] >= 0x70 && x->opcode[0] <= 0x7f) {
        op[0] = x->opcode[0];
        oplen = 1;
    } else if (x->opcode[0] == 0x0f && x->opcode[1] >= 0x80 && x->opcode[1] <= 0x8f) {
        op[0] = (uint8_t)(0x70 | (x->opcode[1] & 0x0f));
        oplen = 1;
    } else if (x->opcode[0] >= 0xe0 && x->opcode[0] <= 0xe3 && insn->size <= X86_MAX_INSN) {
        /* loop/loope/loopne/jrcxz: rel8 only; keep any address-size prefix. */
        oplen = insn->size - 1;
        memcpy(op, insn->bytes, oplen);
    } else {
        *why = "unknown conditional branch encoding";
        return -1;
    }
    size_t branch_at = e->len;
    emit(e, op, oplen);
    uint8_t rel8 = 0;
    emit(e, &rel8, 1);
    emit_jmp(e, addr + insn->size);
    e->buf[branch_at + oplen] = (uint8_t)(e->len - (branch_at + oplen + 1));
    emit_jmp(e, target);
    return 0;
}

static bool is_endbr64(const uint8_t *code, size_t avail)
{
    static const uint8_t endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
    return avail >= 4 && memcmp(code, endbr64, 4) == 0;
}

int x86_relocate(csh handle, const uint8_t *code, size_t avail, uint64_t addr, uint64_t ool,
                 struct relocation *out, const char **why)
{
    memset(out, 0, sizeof(*out));
    if (is_endbr64(code, avail)) {
        /* Without user-space IBT (not enabled on this kernel's user space) endbr64 is a nop. */
        out->kind = RELOC_JUMP;
        out->insn_len = 4;
        out->resume = addr + 4;
        return 0;
    }
    cs_insn *insn = NULL;
    if (cs_disasm(handle, code, avail, addr, 1, &insn) != 1) {
        *why = "undecodable instruction";
        return -1;
    }
    struct emitter e = {out->code, 0, ool};
    int rc = 0;
    out->insn_len = insn->size;
    out->kind = RELOC_OUT_OF_LINE;
    switch (insn->id) {
    case X86_INS_NOP:
        out->kind = RELOC_JUMP;
        out->resume = addr + insn->size;
        break;
    case X86_INS_JMP:
        if (has_group(insn, X86_GRP_BRANCH_RELATIVE)) {
            out->kind = RELOC_JUMP;
            out->resume = relative_target(insn);
        } else {
            rc = copy_rip_fixed(&e, insn, addr, why);
        }
        break;
    case X86_INS_CALL:
        if (has_group(insn, X86_GRP_BRANCH_RELATIVE))
            relocate_call_rel(&e, addr + insn->size, relative_target(insn));
        else
            rc = relocate_call_indirect(&e, insn, addr, why);
        break;
    case X86_INS_RET:
    case X86_INS_RETF:
        emit(&e, insn->bytes, insn->size);
        break;
    case X86_INS_XBEGIN:
        *why = "transactional xbegin";
        rc = -1;
        break;
    default:
        if (has_group(insn, X86_GRP_BRANCH_RELATIVE)) {
            rc = relocate_cond_branch(&e, insn, addr, why);
        } else {
            rc = copy_rip_fixed(&e, insn, addr, why);
            if (rc == 0)
                emit_jmp(&e, addr + insn->size);
        }
        break;
    }
    out->code_len = e.len;
    cs_free(insn, 1);
    return rc;
}

static bool may_branch(const cs_insn *insn)
{
    return has_group(insn, X86_GRP_JUMP) || has_group(insn, X86_GRP_CALL) ||
           has_group(insn, X86_GRP_RET) || has_group(insn, X86_GRP_INT) ||
           has_group(insn, X86_GRP_IRET) || has_group(insn, X86_GRP_BRANCH_RELATIVE) ||
           insn->id == X86_INS_XBEGIN;
}

/* The last instruction of a prologue that may branch (a call, ret, indirect jump, jrcxz):
 * whatever x86_relocate makes of it, placed at e's end. */
static int relocate_last(struct emitter *e, csh handle, const uint8_t *code, size_t avail,
                         uint64_t addr, const char **why)
{
    struct relocation r;
    if (x86_relocate(handle, code, avail, addr, e->base + e->len, &r, why) < 0)
        return -1;
    if (r.kind == RELOC_JUMP)
        emit_jmp(e, r.resume);
    else
        emit(e, r.code, r.code_len);
    return 0;
}

/* A jcc with a rel8 or rel32 form (not jrcxz/loop, which only have rel8): its condition code. */
static int jcc_condition(const cs_insn *insn)
{
    const cs_x86 *x = &insn->detail->x86;
    if (x->opcode[0] >= 0x70 && x->opcode[0] <= 0x7f)
        return x->opcode[0] & 0x0f;
    if (x->opcode[0] == 0x0f && x->opcode[1] >= 0x80 && x->opcode[1] <= 0x8f)
        return x->opcode[1] & 0x0f;
    return -1;
}

/* The instructions a prologue relocation copies: offsets from addr, and where each went. */
#define PROLOGUE_MAX_INSNS 16

struct prologue {
    const uint8_t *code;
    size_t avail;
    uint64_t addr;
    size_t n;
    size_t off[PROLOGUE_MAX_INSNS + 1]; /* off[n]: the end of the last */
    size_t copy_at[PROLOGUE_MAX_INSNS];
    bool ends_flow; /* the last is a ret or jmp */
};

/* Where a branch of the prologue to target goes in the copy: the copy of the instruction that
 * starts there when target is inside the covered bytes (the start too: a loop whose head is the
 * entry turns in the copy, not through the trampoline again), else target itself; *index: the
 * instruction, or SIZE_MAX. -1: a branch into the middle of one. */
static int map_target(const struct prologue *pl, uint64_t ool, uint64_t target, uint64_t *to,
                      size_t *index)
{
    *index = SIZE_MAX;
    *to = target;
    if (target < pl->addr || target >= pl->addr + pl->off[pl->n])
        return target == pl->addr ? (*to = ool, 0) : 0; /* the start, before a dropped endbr64 */
    for (size_t i = 0; i < pl->n; i++)
        if (pl->addr + pl->off[i] == target) {
            *index = i;
            return 0;
        }
    return target == pl->addr ? (*to = ool, 0) : -1;
}

/* Pass 1: which instructions the jump covers (at least min_len bytes, a leading endbr64 left
 * out), stopping early at a ret or jmp. A call may only be the last one: the callee returns to
 * the address after it, in the original code. */
static int plan_prologue(csh handle, struct prologue *pl, size_t min_len, const char **why)
{
    size_t off = is_endbr64(pl->code, pl->avail) ? 4 : 0; /* a nop without user-space IBT */
    pl->n = 0;
    pl->ends_flow = false;
    while (off < min_len) {
        cs_insn *insn = NULL;
        if (off >= pl->avail || pl->n == PROLOGUE_MAX_INSNS ||
            cs_disasm(handle, pl->code + off, pl->avail - off, pl->addr + off, 1, &insn) != 1) {
            *why = "undecodable instruction";
            return -1;
        }
        size_t size = insn->size;
        bool ends = insn->id == X86_INS_RET || insn->id == X86_INS_RETF || insn->id == X86_INS_JMP;
        bool last = off + size >= min_len || ends;
        bool fine = !may_branch(insn) || last ||
                    (jcc_condition(insn) >= 0 && has_group(insn, X86_GRP_BRANCH_RELATIVE));
        cs_free(insn, 1);
        if (!fine) {
            *why = "a call or indirect branch among the instructions the jump would cover";
            return -1;
        }
        pl->off[pl->n++] = off;
        off += size;
        if (ends) {
            pl->ends_flow = true;
            break;
        }
    }
    pl->off[pl->n] = off;
    return 0;
}

/* A jcc of the prologue, as jcc rel32 (patched in pass 3 when its target is in the copy). */
struct fixup {
    size_t at;    /* where its rel32 is, in the copy */
    size_t index; /* the instruction it goes to */
};

/* Pass 2: the copy. Conditional branches become rel32 (the copy is far from their targets) and
 * those whose target is in the covered bytes go to the copy's instruction; the last one is
 * relocated as x86_relocate does, a jump to the covered bytes going to the copy too. */
static int emit_prologue(struct emitter *e, csh handle, struct prologue *pl, struct fixup *fix,
                         size_t *nfix, const char **why)
{
    *nfix = 0;
    for (size_t i = 0; i < pl->n; i++) {
        size_t off = pl->off[i];
        pl->copy_at[i] = e->len;
        cs_insn *insn = NULL;
        if (cs_disasm(handle, pl->code + off, pl->avail - off, pl->addr + off, 1, &insn) != 1) {
            *why = "undecodable instruction";
            return -1;
        }
        int rc = 0, cc = jcc_condition(insn);
        bool branch = may_branch(insn), rel = has_group(insn, X86_GRP_BRANCH_RELATIVE);
        uint64_t to = 0;
        size_t index = SIZE_MAX;
        if (branch && rel && (cc >= 0 || insn->id == X86_INS_JMP) &&
            map_target(pl, e->base, relative_target(insn), &to, &index) < 0) {
            *why = "a branch into the middle of an instruction the jump would cover";
            rc = -1;
        } else if (branch && rel && cc >= 0) {
            const uint8_t op[2] = {0x0f, (uint8_t)(0x80 | cc)};
            int64_t rel32 = (int64_t)(to - (e->base + e->len + 6));
            if (index == SIZE_MAX && !fits_rel32(rel32)) {
                *why = "a conditional branch out of reach of the scratch page";
                rc = -1;
            }
            emit(e, op, 2);
            if (index != SIZE_MAX)
                fix[(*nfix)++] = (struct fixup){e->len, index};
            emit_u32(e, (uint32_t)(int32_t)rel32);
        } else if (branch && rel && insn->id == X86_INS_JMP) {
            if (index != SIZE_MAX) {
                static const uint8_t jmp32[] = {0xe9};
                emit(e, jmp32, 1);
                fix[(*nfix)++] = (struct fixup){e->len, index};
                emit_u32(e, 0);
            } else {
                emit_jmp(e, to);
            }
        } else if (branch) {
            rc = relocate_last(e, handle, pl->code + off, pl->avail - off, pl->addr + off, why);
            pl->ends_flow = true; /* it goes on (or returns) where it would have */
        } else {
            rc = copy_rip_fixed(e, insn, pl->addr + off, why);
        }
        cs_free(insn, 1);
        if (rc < 0)
            return -1;
    }
    if (!pl->ends_flow)
        emit_jmp(e, pl->addr + pl->off[pl->n]);
    return 0;
}

int x86_relocate_prologue(csh handle, const uint8_t *code, size_t avail, uint64_t addr,
                          size_t min_len, uint64_t ool, uint8_t *out, size_t out_max,
                          size_t *out_len, size_t *covered, const char **why)
{
    uint8_t buf[RELOC_MAX_CODE * 4 + PROLOGUE_MAX_INSNS * 6];
    struct emitter e = {buf, 0, ool};
    struct prologue pl = {.code = code, .avail = avail, .addr = addr};
    struct fixup fix[PROLOGUE_MAX_INSNS];
    size_t nfix;
    if (plan_prologue(handle, &pl, min_len, why) < 0 ||
        emit_prologue(&e, handle, &pl, fix, &nfix, why) < 0)
        return -1;
    for (size_t i = 0; i < nfix; i++) { /* pass 3: branches within the copy */
        int32_t rel = (int32_t)(pl.copy_at[fix[i].index] - (fix[i].at + 4));
        memcpy(buf + fix[i].at, &rel, 4);
    }
    if (e.len > out_max) {
        *why = "relocated instructions too long";
        return -1;
    }
    memcpy(out, buf, e.len);
    *out_len = e.len;
    *covered = pl.off[pl.n];
    return 0;
}
