#include "arch/x86_64/insn.h"

#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/insn_length.h"
#include "arch/x86_64/machine.h"

#define OP_CALL_REL32 0xe8
#define OP_JMP_REL32 0xe9
#define OP_JMP_REL8 0xeb
#define OP_JCC_REL8_FIRST 0x70 /* jo .. jg: 0x70 | condition */
#define OP_JCC_REL8_LAST 0x7f
#define OP_LOOP_FIRST 0xe0 /* loopne, loope, loop, jrcxz */
#define OP_LOOP_LAST 0xe3
#define OP_TWO_BYTE 0x0f
#define OP2_JCC_REL32_FIRST 0x80 /* 0f 80 .. 0f 8f: jcc rel32 */
#define OP2_JCC_REL32_LAST 0x8f
#define OP_XBEGIN 0xc7 /* c7 f8 rel32 */
#define MODRM_XBEGIN 0xf8
#define OP_GROUP5 0xff /* ff /4: jmp r/m, ff /5: jmp far m */
#define MODRM_REG(m) (((m) >> 3) & 7)
#define PREFIX_OPERAND_SIZE 0x66
#define REX_MASK 0xf0
#define REX 0x40

struct arch_decoder {
    csh cs;
    cs_insn *insn; /* capstone's buffer, reused for every instruction */
};

struct arch_decoder *arch_decoder_new(void)
{
    struct arch_decoder *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    /* Without details: see the header. */
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs) != CS_ERR_OK) {
        free(d);
        return NULL;
    }
    d->insn = cs_malloc(d->cs);
    if (!d->insn) {
        cs_close(&d->cs);
        free(d);
        return NULL;
    }
    return d;
}

void arch_decoder_free(struct arch_decoder *d)
{
    if (!d)
        return;
    cs_free(d->insn, 1);
    cs_close(&d->cs);
    free(d);
}

static bool in_range(uint8_t b, uint8_t first, uint8_t last)
{
    return b >= first && b <= last;
}

/* How many bytes of b[0..n) are legacy prefixes (lock, rep, segment, address size). */
static size_t legacy_prefixes(const uint8_t *b, size_t n)
{
    static const uint8_t prefixes[] = {0xf0, 0xf2, 0xf3, 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65, 0x67};
    size_t i = 0;
    while (i < n && memchr(prefixes, b[i], sizeof(prefixes)))
        i++;
    return i;
}

/* The displacement of a relative jump or call (jmp, jcc, call, loop, jrcxz, xbegin) whose
 * bytes, after its prefixes, are op[0..n); false for any other instruction. */
static bool relative_displacement(const uint8_t *op, size_t n, int32_t *rel)
{
    if ((op[0] == OP_CALL_REL32 || op[0] == OP_JMP_REL32) && n == 5)
        memcpy(rel, op + 1, 4);
    else if ((op[0] == OP_JMP_REL8 || in_range(op[0], OP_JCC_REL8_FIRST, OP_JCC_REL8_LAST) ||
              in_range(op[0], OP_LOOP_FIRST, OP_LOOP_LAST)) &&
             n == 2)
        *rel = (int8_t)op[1];
    else if (op[0] == OP_TWO_BYTE && n == 6 &&
             in_range(op[1], OP2_JCC_REL32_FIRST, OP2_JCC_REL32_LAST))
        memcpy(rel, op + 2, 4);
    else if (op[0] == OP_XBEGIN && n == 6 && op[1] == MODRM_XBEGIN)
        memcpy(rel, op + 2, 4);
    else
        return false;
    return true;
}

/* Fills the branch fields of out from the instruction's bytes b[0..out->len). */
static void read_branch(const uint8_t *b, struct arch_insn *out)
{
    size_t n = out->len, i = legacy_prefixes(b, n);
    if (i < n && b[i] == PREFIX_OPERAND_SIZE)
        return; /* a 16-bit displacement: not in 64-bit code */
    if (i < n && (b[i] & REX_MASK) == REX)
        i++;
    out->is_indirect_jump =
        i + 1 < n && b[i] == OP_GROUP5 && (MODRM_REG(b[i + 1]) == 4 || MODRM_REG(b[i + 1]) == 5);
    int32_t rel;
    if (i >= n || !relative_displacement(b + i, n - i, &rel))
        return;
    out->is_branch = true;
    out->is_call = b[i] == OP_CALL_REL32;
    out->target = out->addr + n + (int64_t)rel;
}

bool arch_decode(struct arch_decoder *d, const uint8_t *code, size_t avail, uint64_t addr,
                 struct arch_insn *out)
{
    struct x86_insn_kind kind;
    size_t len = x86_insn_length(code, avail, &kind); /* most of them, by hand: insn_length.h */
    if (len) {
        *out = (struct arch_insn){
            .addr = addr, .len = len, .is_nop = kind.is_nop, .is_ret = kind.is_ret};
        out->is_int3 = len == ARCH_BREAKPOINT_LEN && code[0] == ARCH_BREAKPOINT_BYTE;
        read_branch(code, out);
        return true;
    }
    const uint8_t *p = code;
    size_t left = avail;
    uint64_t at = addr;
    if (!cs_disasm_iter(d->cs, &p, &left, &at, d->insn))
        return false;
    const cs_insn *insn = d->insn;
    *out = (struct arch_insn){.addr = addr, .len = insn->size};
    out->is_int3 = insn->size == ARCH_BREAKPOINT_LEN && code[0] == ARCH_BREAKPOINT_BYTE;
    out->is_nop = insn->id == X86_INS_NOP;
    out->is_ret = insn->id == X86_INS_RET || insn->id == X86_INS_RETF;
    read_branch(insn->bytes, out);
    return true;
}

bool arch_branch_bytes_at(const uint8_t *code, size_t avail, uint64_t addr,
                          struct arch_branch_bytes *out)
{
    int32_t rel;
    *out = (struct arch_branch_bytes){0};
    if (avail >= 2 &&
        (code[0] == OP_JMP_REL8 || in_range(code[0], OP_JCC_REL8_FIRST, OP_JCC_REL8_LAST)))
        out->len = 2, rel = (int8_t)code[1];
    else if (avail >= 5 && (code[0] == OP_CALL_REL32 || code[0] == OP_JMP_REL32))
        out->len = 5, memcpy(&rel, code + 1, 4);
    else if (avail >= 6 && code[0] == OP_TWO_BYTE &&
             in_range(code[1], OP2_JCC_REL32_FIRST, OP2_JCC_REL32_LAST))
        out->len = 6, memcpy(&rel, code + 2, 4);
    else
        return false;
    out->rel32 = out->len > 2;
    out->is_call = code[0] == OP_CALL_REL32;
    out->target = addr + out->len + (int64_t)rel;
    return true;
}
