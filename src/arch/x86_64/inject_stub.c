/* The C side of the inject engine's trampolines: the per-function stub and the jump patched over
 * a function's entry, written as bytes at placement time. The shared code they lead to, the blob,
 * is assembly (inject_tramp.S). */
#include "arch/x86_64/inject_tramp.h"

#include <asm/prctl.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>

/* The constants the assembly cannot take from the C headers. */
_Static_assert(TRAMP_SIGCHLD == SIGCHLD, "the signal the ring wait sends");
_Static_assert(TRAMP_FUTEX_WAIT == FUTEX_WAIT, "the futex operation the ring wait makes");
_Static_assert(TRAMP_ARCH_GET_FS == ARCH_GET_FS, "how the hooks read the TLS base");
/* The descriptor inject_func_stub writes is the one the blob reads. */
struct func_desc {
    uint64_t reloc;
    uint32_t func;
    int32_t table;
};
_Static_assert(offsetof(struct func_desc, reloc) == DESC_RELOC, "descriptor layout");
_Static_assert(offsetof(struct func_desc, func) == DESC_FUNC, "descriptor layout");
_Static_assert(offsetof(struct func_desc, table) == DESC_TABLE, "descriptor layout");
_Static_assert(FUNC_DESC_OFF + sizeof(struct func_desc) <= FUNC_RELOC_OFF, "the descriptor fits");
_Static_assert(FUNC_DESC_OFF + DESC_FLAGS >= FUNC_STUB_LEN, "the flags are after the stub");

static void put_rel32(uint8_t *at, uint64_t from_end, uint64_t target)
{
    int32_t rel = (int32_t)(int64_t)(target - from_end);
    memcpy(at, &rel, 4);
}

void inject_func_stub(uint8_t *code, uint64_t at, uint64_t blob_entry, uint32_t func,
                      uint64_t table, uint8_t flags)
{
    static const uint8_t save_rax[] = {0x48, 0x89, 0x44, 0x24, 0xf8}; /* mov [rsp-8], rax */
    memset(code, 0xcc, FUNC_RELOC_OFF);
    memcpy(code, save_rax, 5);
    code[5] = 0x48; /* lea rax, [rip+desc] */
    code[6] = 0x8d;
    code[7] = 0x05;
    put_rel32(code + 8, at + 12, at + FUNC_DESC_OFF);
    code[12] = 0xe9; /* jmp blob_entry */
    put_rel32(code + 13, at + FUNC_STUB_LEN, blob_entry);
    uint64_t reloc = at + FUNC_RELOC_OFF;
    memcpy(code + FUNC_DESC_OFF + DESC_RELOC, &reloc, 8);
    memcpy(code + FUNC_DESC_OFF + DESC_FUNC, &func, 4);
    memset(code + FUNC_DESC_OFF + DESC_TABLE, 0, 4);
    code[FUNC_DESC_OFF + DESC_FLAGS] = flags;
    if (table)
        put_rel32(code + FUNC_DESC_OFF + DESC_TABLE, at + FUNC_DESC_OFF, table);
}

void inject_entry_jump(uint8_t *bytes, size_t len, uint64_t addr, uint64_t stub)
{
    memset(bytes, 0xcc, len);
    bytes[0] = 0xe9;
    put_rel32(bytes + 1, addr + 5, stub);
}
