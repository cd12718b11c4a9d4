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
/* returns not recorded (ring full): their calls end at the next event that shows them over */
#define CTL_LOST_RETURNS 80
#define CTL_PID 88 /* the program's pid: process_vm_readv copies pointees (-A) */
/* program address of a word calltrace bumps as it works (tracer/inject/space.h REGION_PROGRESS); 0:
 * none, the tail stands for it */
#define CTL_PROGRESS 96
#define CTL_TAIL 128 /* bytes read by calltrace (consumer), on its own cache line */
#define CTL_SIZE 4096

/* The shadow stack's indexes sit right after the control block, at the head of the shadow
 * stack itself: memory private to the program (copied at fork), where the rest of the block and
 * the ring are shared with calltrace. A forked child's returns then never take its parent's
 * entries, even when calltrace is no longer there to separate them (see tracer/inject/space.h). */
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
/* -A/-R: data follows the event, its first word the data's length (a multiple of EVENT_SIZE),
 * laid out as its function's capture table says (tracer/inject/capture_table.h). The whole record is
 * reserved at once and committed by the event's stamp; the ring has INJECT_RECORD_MAX bytes of
 * slack after its end, so a record never wraps: it is written and read in one piece. */
#define INJECT_EVENT_DATA 0x40000000u
#define INJECT_EVENT_FUNC 0x3fffffffu
#define INJECT_RECORD_MAX (64u << 10)

/* A captured function's table, in the program next to its code, found from its descriptor
 * (a rel32 at FUNC_DESC_OFF + 12) at the entry and from its shadow entry at the exit. */
#define CT_ENTRY_SIZE 0     /* u32: bytes of data after the entry event */
#define CT_EXIT_SIZE 4      /* u32: after the exit event; 0: a plain exit */
#define CT_ENTRY_XMM 8      /* u8: copy xmm0-7 */
#define CT_RESULT_FP 9      /* u8: copy xmm0, xmm1 and st(0) */
#define CT_NREADS 10        /* u16: pointer reads at the entry */
#define CT_NRESULT_READS 12 /* u16: at the exit, after them */
#define CT_STACK_BYTES 16   /* u32: stack arguments to copy */
#define CT_HIDDEN_SIZE 20   /* u32: bytes of a result returned in memory at rax */
#define CT_HEAD 32
/* One pointer read: ptr from a register or the copied stack arguments; its length the cap, or
 * a count (masked to its size by shl/shr OP_SHIFT) when smaller. */
#define CT_OP_SIZE 32
#define OP_PTR_SRC 0   /* u8: enum ct_src */
#define OP_COUNT_SRC 1 /* u8 */
#define OP_SHIFT 2     /* u8: 64 - 8 * the count's size, or 0 */
#define OP_PTR_OFF 4   /* u32: register index * 8, or stack byte offset */
#define OP_COUNT_OFF 8 /* u32 */
#define OP_CAP 12      /* u32: bytes reserved for it in the record */
#define OP_COUNT_CONST 16
#define CT_SRC_GPR 0
#define CT_SRC_STACK 1
#define CT_SRC_CONST 2
#define CT_SRC_NONE 3 /* count: the cap; pointer: no read */

/* A shadow stack entry. */
#define SHADOW_ENTRY_SIZE 32

/* One traced function's code in the region: stub, descriptor, relocated instructions. */
/* A full ring: the thread wakes calltrace and waits for room, futex waits of WAIT_NS on the
 * ring's tail; after WAIT_TRIES of them in a row with the tail not moving, it gives up and
 * drops until calltrace drains again (it may be gone or stopped: the program must never hang
 * on it). */
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
/* The same for functions with a capture table (-A/-R). */
extern const size_t inject_blob_entry_args_off;
extern const size_t inject_blob_exit_args_off;
/* .quad: the address of the word holding the main thread's control block (0 once taken); the
 * blob is read-only in the program, the word lives in the shared region. */
extern const size_t inject_blob_main_ctl_off;

/* Fills code[0..FUNC_RELOC_OFF) for a function placed at at (stub and descriptor), whose
 * relocated copy is at at + FUNC_RELOC_OFF; blob_entry is the blob's entry in the program
 * (its args entry when table, the function's capture table, is not 0). */
void inject_func_stub(uint8_t *code, uint64_t at, uint64_t blob_entry, uint32_t func,
                      uint64_t table);

/* The bytes written over a function's first len (>= 5) instructions: jmp stub, then int3s. */
void inject_entry_jump(uint8_t *bytes, size_t len, uint64_t addr, uint64_t stub);

#endif
