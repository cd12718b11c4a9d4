/* The code the inject engine places in the program: one shared entry/exit routine (the
 * "blob", written in assembly in inject_tramp.S) and, per traced function, a small stub and the
 * relocated copy of the instructions its jump covers.
 *
 *   F:       jmp F_stub           <- 5 bytes over F's first instructions (rest: int3)
 *            ...rest of F...  <-------------------------------------------.
 *                                                                         |
 *   F_stub:  mov [rsp-8], rax     ; the program's rax, kept in the red zone |
 *            lea rax, [rip+F_desc]                                        |
 *            jmp blob_entry                                               |
 *   F_desc:  .quad F_reloc, .long func_id                                 |
 *   F_reloc: <F's first instructions, relocated>; jmp F+len --------------'
 *
 *   blob_entry: saves rdx rcx r10 r11 in the red zone, finds the thread's control block
 *            (fs:[INJECT_TCB_SLOT]), pushes {return address, slot} on its shadow stack, writes
 *            an entry event with rdtsc into its ring, restores every register it used, then
 *                lea rsp, [rsp+8]        ; drop the real return address (kept in the shadow)
 *                call [F_reloc]          ; a real call: the slot now holds blob_exit
 *   blob_exit: (F returned here) pops the shadow entry of this slot (and every abandoned one
 *            above it), writes an exit event, restores, and jumps to the real return address.
 *
 * Both returns are real call/ret pairs, so the CPU predicts them. Flags are not preserved: no
 * ABI lets a caller or callee rely on them across a call. */
#ifndef CALLTRACE_ARCH_X86_64_INJECT_TRAMP_H
#define CALLTRACE_ARCH_X86_64_INJECT_TRAMP_H

#include "arch/ring_abi.h"

/* Where glibc's thread control block (at fs:0) has room the C library never uses:
 * tcbhead_t.__glibc_unused2 (kept only for its size). Holds the address of the thread's
 * control block; 0: not claimed yet (the main thread claims the reserved one), 1: untraced. */
#define INJECT_TCB_SLOT 0x80

/* One traced function's code in the region: stub, descriptor, relocated instructions. The
 * descriptor, read by the blob's entries: */
#define FUNC_CODE_SIZE 128
#define FUNC_STUB_LEN 17
#define FUNC_DESC_OFF 24
#define FUNC_RELOC_OFF 40
#define FUNC_RELOC_MAX (FUNC_CODE_SIZE - FUNC_RELOC_OFF)
#define DESC_RELOC 0  /* u64: program address of the relocated start */
#define DESC_FUNC 8   /* u32: the function id */
#define DESC_TABLE 12 /* s32: its capture table, relative to the descriptor; 0: none */
/* u8 just before the descriptor, in the stub's padding: */
#define DESC_FLAGS (-1)
#define DESC_LIB_CALL 1 /* -L: recorded only when the program calls it (see the blob's entry) */

/* What the blob's ring wait asks of the kernel, where the C headers that name them cannot be
 * included by the assembler (checked against them in inject_stub.c). */
#define TRAMP_SIGCHLD 17
#define TRAMP_FUTEX_WAIT 0
#define TRAMP_ARCH_GET_FS 0x1003

#ifndef __ASSEMBLER__
#include <stddef.h>
#include <stdint.h>

/* The blob, position independent, and its labels as offsets from its start. */
extern const uint8_t inject_blob[];
extern const size_t inject_blob_size;
extern const size_t inject_blob_entry_off;
extern const size_t inject_blob_exit_off;
/* The same for functions with a capture table (-A/-R). */
extern const size_t inject_blob_entry_args_off;
extern const size_t inject_blob_exit_args_off;
/* The entry of the in-process unwinder hooks (attached: no breakpoint), stubs whose descriptor's
 * function word is a HOOK_* of arch/ring_abi.h. */
extern const size_t inject_blob_hook_off;
/* .quad: the address of the word holding the main thread's control block (0 once taken); the
 * blob is read-only in the program, the word lives in the shared region. */
extern const size_t inject_blob_main_ctl_off;

/* Fills code[0..FUNC_RELOC_OFF) for a function placed at at (stub and descriptor), whose
 * relocated copy is at at + FUNC_RELOC_OFF; blob_entry is the blob's entry in the program
 * (its args entry when table, the function's capture table, is not 0); flags: DESC_LIB_CALL
 * or 0. */
void inject_func_stub(uint8_t *code, uint64_t at, uint64_t blob_entry, uint32_t func,
                      uint64_t table, uint8_t flags);

/* The bytes written over a function's first len (>= 5) instructions: jmp stub, then int3s. */
void inject_entry_jump(uint8_t *bytes, size_t len, uint64_t addr, uint64_t stub);
#endif

#endif
