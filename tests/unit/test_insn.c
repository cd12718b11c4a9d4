/* The patcher's instruction decoding (arch/x86_64/insn.h): lengths, relative branch targets,
 * and the instructions that are not branches although they carry an address. */
#include <stdint.h>

#include "arch/x86_64/insn.h"
#include "arch/x86_64/machine.h"
#include "unit.h"

#define AT 0x401000

static struct arch_decoder *d;

static struct arch_insn decode(const uint8_t *code, size_t len)
{
    struct arch_insn insn = {0};
    CHECK(arch_decode(d, code, len, AT, &insn));
    CHECK_EQ_U64(insn.addr, AT);
    return insn;
}

static void test_call_rel32(void)
{
    const uint8_t code[] = {0xe8, 0x10, 0x00, 0x00, 0x00}; /* call AT+5+0x10 */
    struct arch_insn insn = decode(code, sizeof(code));
    CHECK_EQ_U64(insn.len, 5);
    CHECK(insn.is_branch && insn.is_call);
    CHECK_EQ_U64(insn.target, AT + 5 + 0x10);
}

static void test_jmp_rel32_backwards(void)
{
    const uint8_t code[] = {0xe9, 0xfb, 0xff, 0xff, 0xff}; /* jmp AT: a loop to itself */
    struct arch_insn insn = decode(code, sizeof(code));
    CHECK_EQ_U64(insn.len, 5);
    CHECK(insn.is_branch && !insn.is_call);
    CHECK_EQ_U64(insn.target, AT);
}

static void test_jmp_rel8(void)
{
    const uint8_t code[] = {0xeb, 0xfe}; /* jmp AT */
    struct arch_insn insn = decode(code, sizeof(code));
    CHECK_EQ_U64(insn.len, 2);
    CHECK(insn.is_branch && !insn.is_call);
    CHECK_EQ_U64(insn.target, AT);
}

static void test_jcc_rel8(void)
{
    const uint8_t code[] = {0x74, 0x20}; /* je AT+2+0x20 */
    struct arch_insn insn = decode(code, sizeof(code));
    CHECK_EQ_U64(insn.len, 2);
    CHECK(insn.is_branch);
    CHECK_EQ_U64(insn.target, AT + 2 + 0x20);
}

static void test_jcc_rel32(void)
{
    const uint8_t code[] = {0x0f, 0x85, 0x00, 0x01, 0x00, 0x00}; /* jne AT+6+0x100 */
    struct arch_insn insn = decode(code, sizeof(code));
    CHECK_EQ_U64(insn.len, 6);
    CHECK(insn.is_branch && !insn.is_call);
    CHECK_EQ_U64(insn.target, AT + 6 + 0x100);
}

static void test_prefixed_jcc(void)
{
    const uint8_t code[] = {0x3e, 0x74, 0x05}; /* ds (a branch hint) je AT+3+5 */
    struct arch_insn insn = decode(code, sizeof(code));
    CHECK_EQ_U64(insn.len, 3);
    CHECK(insn.is_branch);
    CHECK_EQ_U64(insn.target, AT + 3 + 5);
}

static void test_loop_and_xbegin(void)
{
    const uint8_t loop[] = {0xe2, 0xfe}; /* loop AT */
    struct arch_insn insn = decode(loop, sizeof(loop));
    CHECK(insn.is_branch);
    CHECK_EQ_U64(insn.target, AT);
    const uint8_t xbegin[] = {0xc7, 0xf8, 0x10, 0x00, 0x00, 0x00}; /* xbegin AT+6+0x10 */
    insn = decode(xbegin, sizeof(xbegin));
    CHECK_EQ_U64(insn.len, 6);
    CHECK(insn.is_branch);
    CHECK_EQ_U64(insn.target, AT + 6 + 0x10);
}

static void test_int3_ret_nop(void)
{
    const uint8_t int3[] = {ARCH_BREAKPOINT_BYTE};
    struct arch_insn insn = decode(int3, sizeof(int3));
    CHECK_EQ_U64(insn.len, 1);
    CHECK(insn.is_int3 && !insn.is_branch && !insn.is_ret);
    const uint8_t ret[] = {0xc3};
    insn = decode(ret, sizeof(ret));
    CHECK_EQ_U64(insn.len, 1);
    CHECK(insn.is_ret && !insn.is_branch && !insn.is_int3);
    const uint8_t nop[] = {0x0f, 0x1f, 0x44, 0x00, 0x00}; /* nopl 0(rax,rax) */
    insn = decode(nop, sizeof(nop));
    CHECK_EQ_U64(insn.len, 5);
    CHECK(insn.is_nop && !insn.is_branch);
}

/* An address in a rip-relative operand is data, or an indirect branch: no target to note. */
static void test_rip_relative_is_not_a_branch(void)
{
    const uint8_t lea[] = {0x48, 0x8d, 0x05, 0x00, 0x01, 0x00, 0x00}; /* lea rax, [rip+0x100] */
    struct arch_insn insn = decode(lea, sizeof(lea));
    CHECK_EQ_U64(insn.len, 7);
    CHECK(!insn.is_branch && !insn.is_nop);
    const uint8_t jmp[] = {0xff, 0x25, 0x00, 0x01, 0x00, 0x00}; /* jmp [rip+0x100] */
    insn = decode(jmp, sizeof(jmp));
    CHECK_EQ_U64(insn.len, 6);
    CHECK(!insn.is_branch);
    const uint8_t call[] = {0xff, 0x15, 0x00, 0x01, 0x00, 0x00}; /* call [rip+0x100] */
    insn = decode(call, sizeof(call));
    CHECK_EQ_U64(insn.len, 6);
    CHECK(!insn.is_branch && !insn.is_call);
}

static void test_undecodable_and_short(void)
{
    struct arch_insn insn;
    const uint8_t bad[] = {0x06}; /* push es: not in 64-bit mode */
    CHECK(!arch_decode(d, bad, sizeof(bad), AT, &insn));
    const uint8_t cut[] = {0xe8, 0x10, 0x00}; /* a call cut short */
    CHECK(!arch_decode(d, cut, sizeof(cut), AT, &insn));
}

/* The byte scan: every jump and call form at an offset, whatever the instruction boundaries. */
static void test_branch_byte_scan(void)
{
    struct arch_branch_bytes b;
    const uint8_t call[] = {0xe8, 0x00, 0x01, 0x00, 0x00};
    CHECK(arch_branch_bytes_at(call, sizeof(call), AT, &b));
    CHECK(b.rel32 && b.is_call);
    CHECK_EQ_U64(b.len, 5);
    CHECK_EQ_U64(b.target, AT + 5 + 0x100);
    const uint8_t jcc[] = {0x0f, 0x8f, 0xf0, 0xff, 0xff, 0xff}; /* jg AT+6-0x10 */
    CHECK(arch_branch_bytes_at(jcc, sizeof(jcc), AT, &b));
    CHECK(b.rel32 && !b.is_call);
    CHECK_EQ_U64(b.target, AT + 6 - 0x10);
    const uint8_t jmp8[] = {0xeb, 0xfe}; /* jmp AT */
    CHECK(arch_branch_bytes_at(jmp8, sizeof(jmp8), AT, &b));
    CHECK(!b.rel32 && !b.is_call);
    CHECK_EQ_U64(b.target, AT);
    const uint8_t jcc8[] = {0x7c, 0x10}; /* jl AT+2+0x10 */
    CHECK(arch_branch_bytes_at(jcc8, sizeof(jcc8), AT, &b));
    CHECK_EQ_U64(b.target, AT + 2 + 0x10);
    CHECK(!arch_branch_bytes_at(call, 4, AT, &b)); /* cut short */
    CHECK(!arch_branch_bytes_at(jcc, 5, AT, &b));
    CHECK(!arch_branch_bytes_at(jmp8, 1, AT, &b));
    const uint8_t other[] = {0x48, 0x89, 0xe5, 0x90, 0x90, 0x90}; /* mov rbp, rsp */
    CHECK(!arch_branch_bytes_at(other, sizeof(other), AT, &b));
}

/* Tail calls through a pointer: ff /4 through a register or memory (a GOT slot, with the
 * notrack prefix of CET), not a call (ff /2) nor a push (ff /6). */
static void test_indirect_jump(void)
{
    const uint8_t jmp_got[] = {0xff, 0x25, 0x22, 0xbc, 0x18, 0x00};  /* jmp *disp(%rip) */
    const uint8_t jmp_rax[] = {0xff, 0xe0};                          /* jmp *%rax */
    const uint8_t jmp_r11[] = {0x41, 0xff, 0xe3};                    /* jmp *%r11 */
    const uint8_t notrack[] = {0x3e, 0xff, 0xe0};                    /* notrack jmp *%rax */
    const uint8_t call_rax[] = {0xff, 0xd0};                         /* call *%rax */
    const uint8_t push_mem[] = {0xff, 0x35, 0x00, 0x00, 0x00, 0x00}; /* push disp(%rip) */
    CHECK(decode(jmp_got, sizeof(jmp_got)).is_indirect_jump);
    CHECK(decode(jmp_rax, sizeof(jmp_rax)).is_indirect_jump);
    CHECK(decode(jmp_r11, sizeof(jmp_r11)).is_indirect_jump);
    CHECK(decode(notrack, sizeof(notrack)).is_indirect_jump);
    struct arch_insn call = decode(call_rax, sizeof(call_rax));
    CHECK(!call.is_indirect_jump && !call.is_branch);
    CHECK(!decode(push_mem, sizeof(push_mem)).is_indirect_jump);
}

int main(void)
{
    d = arch_decoder_new();
    CHECK(d != NULL);
    if (!d)
        return unit_finish("test_insn");
    test_call_rel32();
    test_jmp_rel32_backwards();
    test_jmp_rel8();
    test_jcc_rel8();
    test_jcc_rel32();
    test_prefixed_jcc();
    test_loop_and_xbegin();
    test_int3_ret_nop();
    test_rip_relative_is_not_a_branch();
    test_undecodable_and_short();
    test_branch_byte_scan();
    test_indirect_jump();
    arch_decoder_free(d);
    return unit_finish("test_insn");
}
