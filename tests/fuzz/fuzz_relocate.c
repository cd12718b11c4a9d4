/* Fuzz target: the instruction relocator on arbitrary code bytes. The displaced instruction
 * comes from the traced program's own text, so any byte sequence must either be refused with a
 * reason or give out-of-line code that fits its buffer, decodes, and (for an ordinary
 * instruction) is the same instruction reaching the same rip-relative address.
 *
 * Input: 1 byte choosing where the scratch page lies relative to the code (near below, near
 * above, or too far for rel32), then the code bytes. */
#include <capstone/capstone.h>
#include <string.h>

#include "arch/x86_64/relocate.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static csh cs;

static uint64_t scratch_for(uint8_t choice, uint64_t addr)
{
    switch (choice % 4) {
    case 0:
        return addr - 0x10000;
    case 1:
        return addr + 0x7fff0000;
    case 2:
        return addr - 0x7fff0000;
    default:
        return addr + 0x300000000ull; /* beyond rel32: absolute jumps and refusals */
    }
}

/* An ordinary instruction is copied first: the same instruction, and a rip-relative operand
 * still designates the same address from the new place. */
static void check_same_insn(const cs_insn *orig, uint64_t addr, const struct relocation *r,
                            uint64_t ool)
{
    cs_insn *copy = NULL;
    size_t n = cs_disasm(cs, r->code, r->code_len, ool, 1, &copy);
    FUZZ_ASSERT(n == 1);
    FUZZ_ASSERT(copy->id == orig->id && copy->size == orig->size);
    const cs_x86 *a = &orig->detail->x86, *b = &copy->detail->x86;
    FUZZ_ASSERT(a->op_count == b->op_count);
    for (int i = 0; i < a->op_count; i++) {
        if (a->operands[i].type != X86_OP_MEM || a->operands[i].mem.base != X86_REG_RIP)
            continue;
        uint64_t want = addr + orig->size + (uint64_t)a->operands[i].mem.disp;
        uint64_t got = ool + copy->size + (uint64_t)b->operands[i].mem.disp;
        FUZZ_ASSERT(want == got);
    }
    cs_free(copy, n);
}

static bool is_plain(const cs_insn *insn)
{
    for (int i = 0; i < insn->detail->groups_count; i++) {
        uint8_t g = insn->detail->groups[i];
        if (g == X86_GRP_JUMP || g == X86_GRP_CALL || g == X86_GRP_RET ||
            g == X86_GRP_BRANCH_RELATIVE)
            return false;
    }
    return insn->id != X86_INS_NOP && insn->id != X86_INS_XBEGIN;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!cs && x86_decoder_open(&cs) < 0)
        abort();
    if (size < 2)
        return 0;
    uint64_t addr = 0x555555554000ull + 0x1000;
    uint64_t ool = scratch_for(data[0], addr);
    const uint8_t *code = data + 1;
    size_t avail = size - 1 > 32 ? 32 : size - 1;
    struct relocation r;
    const char *why = NULL;
    if (x86_relocate(cs, code, avail, addr, ool, &r, &why) < 0) {
        FUZZ_ASSERT(why && *why);
        return 0;
    }
    FUZZ_ASSERT(r.insn_len >= 1 && r.insn_len <= X86_MAX_INSN && r.insn_len <= avail);
    FUZZ_ASSERT(r.code_len <= RELOC_MAX_CODE);
    if (r.kind == RELOC_JUMP) {
        FUZZ_ASSERT(r.code_len == 0);
        return 0;
    }
    cs_insn *orig = NULL;
    size_t n = cs_disasm(cs, code, avail, addr, 1, &orig);
    FUZZ_ASSERT(n == 1 && orig->size == r.insn_len);
    if (is_plain(orig)) {
        /* Branches may shrink (prefixes dropped, jcc rel32 to rel8), a copy cannot. */
        FUZZ_ASSERT(r.code_len >= r.insn_len);
        check_same_insn(orig, addr, &r, ool);
    }
    cs_free(orig, n);
    return 0;
}
