/* The code the inject engine places in the program: one shared entry/exit routine (the
 * "blob", written in assembly in inject_tramp.c) and, per traced function, a small stub and the
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

#include <stddef.h>
#include <stdint.h>

/* Where glibc's thread control block (at fs:0) has room the C library never uses:
 * tcbhead_t.__glibc_unused2 (kept only for its size). Holds the address of the thread's
 * control block; 0: not claimed yet (the main thread claims the reserved one), 1: untraced. */
#define INJECT_TCB_SLOT 0x80

/* The control block of one thread, in the shared region. Offsets are used by the assembly. */
#define CTL_HEAD 0      /* bytes written to the ring, ever (producer) */
#define CTL_LIMIT 8     /* ring size - event size: head - tail above this is full */
#define CTL_MASK 16     /* ring size - 1 */
#define CTL_RING 24     /* program address of the ring */
#define CTL_DROPS 56    /* calls not recorded (ring full, shadow full, re-entered) */
#define CTL_BUSY 64     /* byte: a vfork child borrows the block: its calls are skipped */
#define CTL_GAVE_UP 65  /* byte: a full ring was not drained in time: drop, do not wait */
#define CTL_CONSUMER 72 /* calltrace's pid, woken with SIGCHLD when the ring is full */
#define CTL_TAIL 128    /* bytes read by calltrace (consumer), on its own cache line */
#define CTL_SIZE 4096

/* The shadow stack's indexes sit right after the control block, at the head of the shadow
 * stack itself: memory private to the program (copied at fork), where the rest of the block and
 * the ring are shared with calltrace. A forked child's returns then never take its parent's
 * entries, even when calltrace is no longer there to separate them (see inject/space.h). */
#define CTL_SHADOW_TOP 4096 /* CTL_SIZE: program address of the next free shadow entry */
#define CTL_SHADOW_END 4104
#define CTL_SHADOW_BASE 4112
#define SHADOW_HEADER 64 /* the indexes, then the entries */

/* A ring event. The writer reserves it (head += EVENT_SIZE), fills it, and commits it by writing
 * its stamp last: the low 32 bits of position / EVENT_SIZE + 1, so the reader tells a committed
 * event from one still being written (a signal handler's events may come in between), one
 * left from the ring's previous turn, or fresh memory (0). */
#define EVENT_SIZE 32
struct inject_event {
    uint64_t tsc;
    uint64_t slot; /* address of the return address slot: rsp at the entry */
    uint64_t ret;  /* the real return address */
    uint32_t func; /* INJECT_EVENT_EXIT set: an exit */
    uint32_t stamp;
};
#define INJECT_EVENT_EXIT 0x80000000u

/* A shadow stack entry. */
#define SHADOW_ENTRY_SIZE 32

/* One traced function's code in the region: stub, descriptor, relocated instructions. */
/* A full ring: the thread wakes calltrace and waits for room, up to WAIT_TRIES futex waits of
 * WAIT_NS on the ring's tail; then it gives up and drops until calltrace drains again (it may
 * be gone: the program must never hang on it). */
#define RING_WAIT_NS 1000000
#define RING_WAIT_TRIES 200

#define FUNC_CODE_SIZE 128
#define FUNC_STUB_LEN 17
#define FUNC_DESC_OFF 24
#define FUNC_RELOC_OFF 40
#define FUNC_RELOC_MAX (FUNC_CODE_SIZE - FUNC_RELOC_OFF)

/* The blob, position independent, and its labels as offsets from its start. */
extern const uint8_t inject_blob[];
extern const size_t inject_blob_size;
extern const size_t inject_blob_entry_off;
extern const size_t inject_blob_exit_off;
/* .quad: the address of the word holding the main thread's control block (0 once taken); the
 * blob is read-only in the program, the word lives in the shared region. */
extern const size_t inject_blob_main_ctl_off;

/* Fills code[0..FUNC_RELOC_OFF) for a function placed at at (stub and descriptor), whose
 * relocated copy is at at + FUNC_RELOC_OFF; blob_entry is the blob's entry in the program. */
void inject_func_stub(uint8_t *code, uint64_t at, uint64_t blob_entry, uint32_t func);

/* The bytes written over a function's first len (>= 5) instructions: jmp stub, then int3s. */
void inject_entry_jump(uint8_t *bytes, size_t len, uint64_t addr, uint64_t stub);

#endif
