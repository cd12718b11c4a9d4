/* Fuzz target: the hand-written instruction length decoder (arch/x86_64/insn_length.h) against
 * capstone, on arbitrary code bytes (a traced program's text is input calltrace does not
 * control). Whenever the decoder gives a length, capstone decodes the same bytes to an
 * instruction of that length, a nop exactly when capstone says nop, a return when it says ret;
 * and the decoder never reads past what it was given.
 *
 * Input: the code bytes, decoded at every offset. */
#include <capstone/capstone.h>
#include <string.h>

#include "arch/x86_64/insn_length.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static csh cs;
static cs_insn *insn;

static void check_at(const uint8_t *code, size_t avail)
{
    struct x86_insn_kind kind;
    size_t len = x86_insn_length(code, avail, &kind);
    if (!len)
        return;
    FUZZ_ASSERT(len <= avail && len <= 15);
    const uint8_t *p = code;
    size_t left = avail;
    uint64_t at = 0x400000;
    FUZZ_ASSERT(cs_disasm_iter(cs, &p, &left, &at, insn));
    FUZZ_ASSERT(insn->size == len);
    FUZZ_ASSERT(kind.is_nop == (insn->id == X86_INS_NOP));
    FUZZ_ASSERT(kind.is_ret == (insn->id == X86_INS_RET));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!insn) {
        if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK || !(insn = cs_malloc(cs)))
            abort();
    }
    /* a copy of exactly size bytes: ASan sees any read past them */
    uint8_t *code = malloc(size ? size : 1);
    if (!code)
        return 0;
    memcpy(code, data, size);
    for (size_t off = 0; off < size && off < 256; off++)
        check_at(code + off, size - off);
    free(code);
    return 0;
}
