/* The relocator, checked by decoding what it emits and by the addresses it must reach. */
#include <capstone/capstone.h>
#include <stdint.h>
#include <string.h>

#include "arch/x86_64/relocate.h"
#include "unit.h"

static csh cs;

/* Decodes the out-of-line code (at ool) and returns the number of instructions. */
static size_t decode(const struct relocation *r, uint64_t ool, cs_insn **insn)
{
    return cs_disasm(cs, r->code, r->code_len, ool, 0, insn);
}

static uint64_t jmp_target(const cs_insn *i)
{
    return (uint64_t)i->detail->x86.operands[0].imm;
}

static void test_endbr64_is_skipped(void)
{
    const uint8_t code[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x55};
    struct relocation r;
    const char *why;
    CHECK(x86_relocate(cs, code, sizeof(code), 0x401000, 0x400000, &r, &why) == 0);
    CHECK(r.kind == RELOC_JUMP);
    CHECK_EQ_U64(r.resume, 0x401004);
}

static void test_plain_instruction_jumps_back(void)
{
    const uint8_t code[] = {0x55, 0x48, 0x89, 0xe5}; /* push rbp */
    struct relocation r;
    const char *why;
    CHECK(x86_relocate(cs, code, sizeof(code), 0x401000, 0x400000, &r, &why) == 0);
    CHECK(r.kind == RELOC_OUT_OF_LINE);
    CHECK_EQ_U64(r.insn_len, 1);
    cs_insn *insn;
    size_t n = decode(&r, 0x400000, &insn);
    CHECK_EQ_U64(n, 2);
    if (n == 2) {
        CHECK(insn[0].id == X86_INS_PUSH);
        CHECK(insn[1].id == X86_INS_JMP);
        CHECK_EQ_U64(jmp_target(&insn[1]), 0x401001);
    }
    cs_free(insn, n);
}

static void test_rip_relative_is_retargeted(void)
{
    /* lea rax, [rip+0x100] at 0x401000: refers to 0x401107 */
    const uint8_t code[] = {0x48, 0x8d, 0x05, 0x00, 0x01, 0x00, 0x00};
    struct relocation r;
    const char *why;
    CHECK(x86_relocate(cs, code, sizeof(code), 0x401000, 0x300000, &r, &why) == 0);
    cs_insn *insn;
    size_t n = decode(&r, 0x300000, &insn);
    CHECK(n >= 1);
    if (n >= 1) {
        const cs_x86_op *op = &insn[0].detail->x86.operands[1];
        CHECK(op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP);
        CHECK_EQ_U64(insn[0].address + insn[0].size + (uint64_t)op->mem.disp, 0x401107);
    }
    cs_free(insn, n);
}

/* capstone 4 reports no displacement size for this one: cmpw $0x0, disp(%rip) */
static void test_rip_relative_with_immediate(void)
{
    const uint8_t code[] = {0x66, 0x83, 0x3d, 0xa7, 0x27, 0x63, 0x00, 0x00};
    struct relocation r;
    const char *why = NULL;
    CHECK(x86_relocate(cs, code, sizeof(code), 0x451ac5, 0x400000, &r, &why) == 0);
    cs_insn *insn;
    size_t n = decode(&r, 0x400000, &insn);
    CHECK(n >= 1);
    if (n >= 1) {
        const cs_x86_op *op = &insn[0].detail->x86.operands[0];
        CHECK(op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP);
        CHECK_EQ_U64(insn[0].address + insn[0].size + (uint64_t)op->mem.disp,
                     0x451ac5 + 8 + 0x6327a7);
    }
    cs_free(insn, n);
}

static void test_rip_relative_out_of_reach_is_refused(void)
{
    const uint8_t code[] = {0x48, 0x8d, 0x05, 0x00, 0x01, 0x00, 0x00};
    struct relocation r;
    const char *why = NULL;
    CHECK(x86_relocate(cs, code, sizeof(code), 0x401000, 0x7f0000000000, &r, &why) < 0);
    CHECK(why != NULL);
}

static void test_call_pushes_original_return(void)
{
    /* call +0x20 at 0x401000 -> target 0x401025, returns to 0x401005 */
    const uint8_t code[] = {0xe8, 0x20, 0x00, 0x00, 0x00};
    struct relocation r;
    const char *why;
    CHECK(x86_relocate(cs, code, sizeof(code), 0x401000, 0x300000, &r, &why) == 0);
    /* push [rip+6]; jmp [rip+8]; .quad ret; .quad target */
    CHECK(r.code[0] == 0xff && r.code[1] == 0x35);
    CHECK(r.code[6] == 0xff && r.code[7] == 0x25);
    uint64_t ret, target;
    memcpy(&ret, r.code + 12, 8);
    memcpy(&target, r.code + 20, 8);
    CHECK_EQ_U64(ret, 0x401005);
    CHECK_EQ_U64(target, 0x401025);
}

static void test_indirect_call_through_rsp_is_adjusted(void)
{
    /* call [rsp+8] -> push [rip+x]; jmp [rsp+0x10] */
    const uint8_t code[] = {0xff, 0x54, 0x24, 0x08};
    struct relocation r;
    const char *why;
    CHECK(x86_relocate(cs, code, sizeof(code), 0x401000, 0x300000, &r, &why) == 0);
    cs_insn *insn;
    size_t n = cs_disasm(cs, r.code, 6 + 4, 0x300000, 2, &insn);
    CHECK_EQ_U64(n, 2);
    if (n == 2) {
        CHECK(insn[0].id == X86_INS_PUSH);
        CHECK(insn[1].id == X86_INS_JMP);
        const cs_x86_op *op = &insn[1].detail->x86.operands[0];
        CHECK(op->mem.base == X86_REG_RSP);
        CHECK_EQ_U64(op->mem.disp, 0x10);
    }
    uint64_t ret;
    memcpy(&ret, r.code + 10, 8);
    CHECK_EQ_U64(ret, 0x401004);
    cs_free(insn, n);
}

static void test_conditional_branch_both_ways(void)
{
    /* je +0x10 at 0x401000 (2 bytes): taken 0x401012, not taken 0x401002 */
    const uint8_t code[] = {0x74, 0x10};
    struct relocation r;
    const char *why;
    CHECK(x86_relocate(cs, code, sizeof(code), 0x401000, 0x300000, &r, &why) == 0);
    cs_insn *insn;
    size_t n = decode(&r, 0x300000, &insn);
    CHECK_EQ_U64(n, 3);
    if (n == 3) {
        CHECK(insn[0].id == X86_INS_JE);
        CHECK_EQ_U64(jmp_target(&insn[0]), insn[2].address);
        CHECK_EQ_U64(jmp_target(&insn[1]), 0x401002);
        CHECK_EQ_U64(jmp_target(&insn[2]), 0x401012);
    }
    cs_free(insn, n);
}

static void test_jmp_needs_no_code(void)
{
    const uint8_t code[] = {0xe9, 0x00, 0x10, 0x00, 0x00};
    struct relocation r;
    const char *why;
    CHECK(x86_relocate(cs, code, sizeof(code), 0x401000, 0x300000, &r, &why) == 0);
    CHECK(r.kind == RELOC_JUMP);
    CHECK_EQ_U64(r.resume, 0x402005);
}

static void test_ret_is_copied_alone(void)
{
    const uint8_t code[] = {0xc3};
    struct relocation r;
    const char *why;
    CHECK(x86_relocate(cs, code, sizeof(code), 0x401000, 0x300000, &r, &why) == 0);
    CHECK_EQ_U64(r.code_len, 1);
    CHECK(r.code[0] == 0xc3);
}

static void test_garbage_is_refused(void)
{
    const uint8_t code[] = {0x06}; /* push es: invalid in 64-bit mode */
    struct relocation r;
    const char *why = NULL;
    CHECK(x86_relocate(cs, code, sizeof(code), 0x401000, 0x300000, &r, &why) < 0);
}

/* x86_relocate_prologue: the instructions a 5-byte jump covers, as one block. */
static size_t prologue(const uint8_t *code, size_t len, uint64_t ool, uint8_t *out, size_t *covered,
                       const char **why)
{
    size_t out_len = 0;
    uint8_t padded[64] = {0};
    memcpy(padded, code, len);
    if (x86_relocate_prologue(cs, padded, sizeof(padded), 0x401000, 5, ool, out, 88, &out_len,
                              covered, why) < 0)
        return 0;
    return out_len;
}

static void test_prologue_covers_whole_instructions(void)
{
    /* endbr64; push rbp; mov rbp, rsp; sub rsp, 16 */
    const uint8_t code[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10};
    uint8_t out[88];
    size_t covered;
    const char *why;
    size_t len = prologue(code, sizeof(code), 0x400000, out, &covered, &why);
    CHECK(len > 0);
    CHECK_EQ_U64(covered, 5); /* endbr64 (dropped) and push rbp */
    cs_insn *insn;
    size_t n = cs_disasm(cs, out, len, 0x400000, 0, &insn);
    CHECK_EQ_U64(n, 2);
    if (n == 2) {
        CHECK(insn[0].id == X86_INS_PUSH);
        CHECK(insn[1].id == X86_INS_JMP);
        CHECK_EQ_U64(jmp_target(&insn[1]), 0x401005);
    }
    cs_free(insn, n);
}

static void test_prologue_retargets_rip_relative(void)
{
    /* mov eax, [rip+0x10] (6 bytes) at 0x401000: reads 0x401016 */
    const uint8_t code[] = {0x8b, 0x05, 0x10, 0x00, 0x00, 0x00};
    uint8_t out[88];
    size_t covered;
    const char *why;
    size_t len = prologue(code, sizeof(code), 0x300000, out, &covered, &why);
    CHECK(len > 0);
    CHECK_EQ_U64(covered, 6);
    cs_insn *insn;
    size_t n = cs_disasm(cs, out, len, 0x300000, 0, &insn);
    CHECK(n == 2);
    if (n == 2) {
        int64_t disp = insn[0].detail->x86.operands[1].mem.disp;
        CHECK_EQ_U64(0x300000 + insn[0].size + disp, 0x401016);
        CHECK_EQ_U64(jmp_target(&insn[1]), 0x401006);
    }
    cs_free(insn, n);
}

static void test_prologue_moves_an_early_branch(void)
{
    /* test edi, edi; je +0x10; nop: the jcc among the covered instructions becomes rel32 */
    const uint8_t code[] = {0x85, 0xff, 0x74, 0x10, 0x90, 0x90, 0x90};
    uint8_t out[88];
    size_t covered;
    const char *why = NULL;
    size_t len = prologue(code, sizeof(code), 0x300000, out, &covered, &why);
    CHECK(len > 0);
    CHECK_EQ_U64(covered, 5);
    cs_insn *insn;
    size_t n = cs_disasm(cs, out, len, 0x300000, 0, &insn);
    CHECK(n == 4);
    if (n == 4) {
        CHECK(insn[0].id == X86_INS_TEST);
        CHECK(insn[1].id == X86_INS_JE && insn[1].size == 6);
        CHECK_EQ_U64(insn[1].detail->x86.operands[0].imm, 0x401014);
        CHECK(insn[2].id == X86_INS_NOP);
        CHECK(insn[3].id == X86_INS_JMP);
        CHECK_EQ_U64(insn[3].detail->x86.operands[0].imm, 0x401005);
    }
    cs_free(insn, n);
}

static void test_prologue_loops_in_its_copy(void)
{
    /* countdown: sub edi, 1; jne countdown; ...: the loop turns in the copy, not through the
     * entry (each turn would look like a call) */
    const uint8_t code[] = {0x83, 0xef, 0x01, 0x75, 0xfb, 0x89, 0xf8, 0xc3};
    uint8_t out[88];
    size_t covered;
    const char *why = NULL;
    size_t len = prologue(code, sizeof(code), 0x300000, out, &covered, &why);
    CHECK(len > 0);
    CHECK_EQ_U64(covered, 5);
    cs_insn *insn;
    size_t n = cs_disasm(cs, out, len, 0x300000, 0, &insn);
    CHECK(n == 3);
    if (n == 3) {
        CHECK(insn[1].id == X86_INS_JNE);
        CHECK_EQ_U64(insn[1].detail->x86.operands[0].imm, 0x300000);
        CHECK_EQ_U64(insn[2].detail->x86.operands[0].imm, 0x401005);
    }
    cs_free(insn, n);
}

static void test_prologue_refuses_an_early_call(void)
{
    /* call +0; nop: the callee would return into the covered bytes */
    const uint8_t code[] = {0xe8, 0, 0, 0, 0, 0x90};
    uint8_t out[88];
    size_t covered;
    const char *why = NULL;
    CHECK(prologue(code, sizeof(code), 0x400000, out, &covered, &why) > 0);
    const uint8_t two[] = {0xff, 0xd0, 0x90, 0x90, 0x90, 0x90}; /* call rax; nop... */
    CHECK(prologue(two, sizeof(two), 0x400000, out, &covered, &why) == 0);
    CHECK(why != NULL);
}

static void test_prologue_ends_at_ret(void)
{
    /* lea eax, [rdi+1]; ret: shorter than the jump, the caller decides about the padding */
    const uint8_t code[] = {0x8d, 0x47, 0x01, 0xc3};
    uint8_t out[88];
    size_t covered;
    const char *why;
    size_t len = prologue(code, sizeof(code), 0x400000, out, &covered, &why);
    CHECK(len > 0);
    CHECK_EQ_U64(covered, 4);
    cs_insn *insn;
    size_t n = cs_disasm(cs, out, len, 0x400000, 0, &insn);
    CHECK(n >= 2);
    if (n >= 2) {
        CHECK(insn[0].id == X86_INS_LEA);
        CHECK(insn[1].id == X86_INS_RET);
    }
    cs_free(insn, n);
}

int main(void)
{
    if (x86_decoder_open(&cs) < 0)
        return 1;
    test_endbr64_is_skipped();
    test_plain_instruction_jumps_back();
    test_rip_relative_is_retargeted();
    test_rip_relative_with_immediate();
    test_rip_relative_out_of_reach_is_refused();
    test_call_pushes_original_return();
    test_indirect_call_through_rsp_is_adjusted();
    test_conditional_branch_both_ways();
    test_jmp_needs_no_code();
    test_ret_is_copied_alone();
    test_garbage_is_refused();
    test_prologue_covers_whole_instructions();
    test_prologue_retargets_rip_relative();
    test_prologue_moves_an_early_branch();
    test_prologue_loops_in_its_copy();
    test_prologue_refuses_an_early_call();
    test_prologue_ends_at_ret();
    x86_decoder_close(&cs);
    return unit_finish("relocate");
}
