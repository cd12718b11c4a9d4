/* The hand-written length decoder (arch/x86_64/insn_length.h) against capstone: every length
 * it gives is capstone's, and so are its nops and rets, on the machine code of every object
 * this test has loaded (itself, libc, capstone, libelf, libdw...) and on random bytes. It must
 * also decode most real instructions itself, or it saves nothing. */
#include <capstone/capstone.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arch/x86_64/insn_length.h"
#include "unit.h"

#define RANDOM_SAMPLES 3000000
#define MAX_REPORTS 20

struct tally {
    csh cs;
    cs_insn *insn;
    unsigned long instructions, by_hand, mismatches;
};

static void report(struct tally *t, const uint8_t *code, size_t hand, const char *what)
{
    if (++t->mismatches > MAX_REPORTS)
        return;
    fprintf(stderr, "%s: bytes", what);
    for (int i = 0; i < 15; i++)
        fprintf(stderr, " %02x", code[i]);
    fprintf(stderr, ": by hand %zu, capstone %zu (%s %s)\n", hand,
            t->insn->size ? (size_t)t->insn->size : 0, t->insn->mnemonic, t->insn->op_str);
}

/* Compares the two at code[0..avail); returns capstone's length, 0 when it finds none. */
static size_t compare_at(struct tally *t, const uint8_t *code, size_t avail, const char *what)
{
    const uint8_t *p = code;
    size_t left = avail;
    uint64_t at = 0x400000;
    bool decoded = cs_disasm_iter(t->cs, &p, &left, &at, t->insn);
    struct x86_insn_kind kind;
    size_t hand = x86_insn_length(code, avail, &kind);
    if (decoded)
        t->instructions++;
    if (!hand)
        return decoded ? t->insn->size : 0;
    t->by_hand++;
    if (!decoded) {
        t->insn->size = 0;
        strcpy(t->insn->mnemonic, "invalid");
        t->insn->op_str[0] = 0;
        report(t, code, hand, what);
        return 0;
    }
    bool nop = t->insn->id == X86_INS_NOP,
         ret = t->insn->id == X86_INS_RET || t->insn->id == X86_INS_RETF;
    if (hand != t->insn->size || kind.is_nop != nop || kind.is_ret != ret)
        report(t, code, hand, what);
    return t->insn->size;
}

/* Every executable segment of every loaded object, swept from its start. */
static int sweep_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct tally *t = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !*info->dlpi_name)
            continue;
        const uint8_t *code = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        for (size_t off = 0; off + 16 <= ph->p_filesz;) {
            size_t len = compare_at(t, code + off, ph->p_filesz - off, info->dlpi_name);
            off += len ? len : 1;
        }
    }
    return 0;
}

static void test_real_code(struct tally *t)
{
    dl_iterate_phdr(sweep_object, t);
    fprintf(stderr, "real code: %lu instructions, %lu decoded by hand (%.1f%%)\n", t->instructions,
            t->by_hand, 100.0 * (double)t->by_hand / (double)t->instructions);
    CHECK_EQ_U64(t->mismatches, 0);
    CHECK(t->instructions > 100000);
    CHECK(t->by_hand * 10 > t->instructions * 9); /* most of it, or it saves nothing */
}

/* Random bytes, led more often than not by prefixes, REX, 0f, and ModRM forms. */
static void test_random_bytes(struct tally *t)
{
    static const uint8_t leads[] = {0x66, 0x67, 0xf2, 0xf3, 0xf0, 0x2e, 0x3e, 0x64,
                                    0x48, 0x41, 0x4c, 0x0f, 0x0f, 0x0f, 0x40};
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < RANDOM_SAMPLES; i++) {
        uint8_t code[16];
        for (size_t j = 0; j < sizeof(code); j++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            code[j] = (uint8_t)(x >> 24);
        }
        for (size_t j = 0; j < 3 && (x >> (40 + j)) & 1; j++)
            code[j] = leads[(x >> (48 + 4 * j)) % sizeof(leads)];
        size_t avail = 1 + (size_t)((x >> 8) % 16);
        compare_at(t, code, avail, "random");
    }
    CHECK_EQ_U64(t->mismatches, 0);
}

int main(void)
{
    struct tally t = {0};
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &t.cs) != CS_ERR_OK || !(t.insn = cs_malloc(t.cs))) {
        fprintf(stderr, "cannot start capstone\n");
        return 1;
    }
    test_real_code(&t);
    t.mismatches = 0;
    test_random_bytes(&t);
    cs_free(t.insn, 1);
    cs_close(&t.cs);
    return unit_finish("test_insn_length");
}
