/* The ring protocol of the inject engine: the one contract between the code calltrace places in
 * the traced program (the trampolines, arch/x86_64/inject_tramp.S) and calltrace itself (the
 * reader, tracer/inject/ring_reader.c; the C producer, tracer/inject/unwind.c). Every offset
 * either side uses is named here, once.
 *
 * Why under arch/: the trampolines are machine code and may include only arch/ and util/; the
 * tracer may include arch/. The layout itself is machine independent (little-endian words of a
 * 64-bit machine), so it sits in arch/ rather than in arch/x86_64/: another machine's trampolines
 * would write the same rings for the same reader.
 *
 * The file is read by the assembler too (gcc -c x.S runs the C preprocessor, __ASSEMBLER__
 * defined): plain #defines of numbers only above, the C structs and the static asserts tying
 * them to the #defines under #ifndef __ASSEMBLER__.
 *
 * One thread's slot in the region shared with calltrace (tracer/inject/space.h):
 *
 *   +0      control block (CTL_SIZE): indexes, counters, calltrace's tail on its own line
 *   +4096   shadow stack: its indexes (SHADOW_HEADER), then SHADOW_ENTRY_SIZE entries
 *   ...     the ring: a power of two bytes, then INJECT_RECORD_MAX bytes of slack
 *
 * Reserve and commit. A writer (the thread itself, or a signal handler interrupting it)
 * reserves a record with one instruction, head += size (xadd), writes the record, and commits
 * it by writing its stamp last: the low 32 bits of position / EVENT_SIZE + 1. x86 keeps stores
 * in order, so a reader that sees the stamp it expects at a position sees the whole record; one
 * that sees another stamp sees an event not committed yet (its words still those of the ring's
 * last turn, or 0) or, when the stamp is a whole number of turns ahead, one written over by a
 * writer a turn ahead. The reader moves the tail (CTL_TAIL) past what it consumed; a writer that
 * finds head - tail above CTL_LIMIT waits for room or drops the call. */
#ifndef CALLTRACE_ARCH_RING_ABI_H
#define CALLTRACE_ARCH_RING_ABI_H

/* The control block of one thread, at the start of its slot. */
#define CTL_HEAD 0          /* u64: bytes reserved in the ring, ever (producers) */
#define CTL_LIMIT 8         /* u64: ring size - event size: head - tail above this is full */
#define CTL_MASK 16         /* u64: ring size - 1 */
#define CTL_RING 24         /* u64: program address of the ring */
#define CTL_REGION 32       /* u64: program address of the region's header (REGION_COPIES below) */
#define CTL_DROPS_FULL 40   /* u64: of CTL_DROPS, those of a full ring */
#define CTL_DROPS_SHADOW 48 /* u64: of CTL_DROPS, those of a full shadow stack */
#define CTL_DROPS 56        /* u64: calls not recorded (ring full, shadow full, vfork child) */
#define CTL_BUSY 64         /* u8: a vfork child borrows the block: its calls are skipped */
#define CTL_GAVE_UP 65      /* u8: a full ring was not drained in time: drop, do not wait */
#define CTL_CONSUMER 72     /* u64: calltrace's pid, woken with SIGCHLD when the ring is full */
/* u64: returns not recorded (ring full): their calls end at the next event that shows them over */
#define CTL_LOST_RETURNS 80
#define CTL_PID 88 /* u64: the program's pid: process_vm_readv copies pointees (-A) */
/* u64: program address of a word calltrace bumps as it works (tracer/inject/space.h
 * REGION_PROGRESS); 0: none, the tail stands for it */
#define CTL_PROGRESS 96
#define CTL_DROPS_VFORK 104 /* u64: of CTL_DROPS, those of a vfork child (CTL_BUSY) */
#define CTL_TAIL 128        /* u64: bytes read by calltrace (consumer), on its own cache line */
/* u64: HOOK_LINKER requests the thread made, and those calltrace served (the futex word the
 * thread waits on: its low half), on a line of their own */
#define CTL_HOOK_REQ 256
#define CTL_HOOK_ACK 264
#define CTL_SIZE 4096

/* The shadow stack's indexes sit right after the control block, at the head of the shadow
 * stack itself: memory private to the program (copied at fork), where the rest of the block and
 * the ring are shared with calltrace. A forked child's returns then never take its parent's
 * entries, even when calltrace is no longer there to separate them (see tracer/inject/space.h). */
#define CTL_SHADOW_TOP 4096 /* CTL_SIZE: program address of the next free shadow entry */
#define CTL_SHADOW_END 4104
#define CTL_SHADOW_BASE 4112
#define SHADOW_HEADER 64 /* the indexes, then the entries */

/* A shadow stack entry: one hooked call not returned yet. */
#define SHADOW_ENTRY_SIZE 32
#define SH_RET 0    /* u64: the real return address */
#define SH_SLOT 8   /* u64: its slot (rsp at the entry) */
#define SH_FUNC 16  /* u64: the function id; bit SH_FUNC_TABLE_BIT: entered with a capture table */
#define SH_TABLE 24 /* u64: that capture table, in the program */
#define SH_FUNC_TABLE_BIT 32
/* bit SH_FUNC_LIB_BIT: a library call (-L): a call it tail-calls is the library's own */
#define SH_FUNC_LIB_BIT 33

/* A ring event (struct inject_event). */
#define EVENT_SIZE 32
#define EVENT_SHIFT 5            /* log2(EVENT_SIZE): the stamp is position >> EVENT_SHIFT, + 1 */
#define EV_TSC 0                 /* u64: the time stamp counter */
#define EV_SLOT 8                /* u64: address of the return address slot: rsp at the entry */
#define EV_RET 16                /* u64: the real return address */
#define EV_FUNC 24               /* u32: the function id and the flags below */
#define EV_STAMP 28              /* u32: written last: commits the record */
#define INJECT_EVENT_EXIT_BIT 31 /* an exit */
/* -A/-R: data follows the event, its first word the data's length (a multiple of EVENT_SIZE),
 * laid out as its function's capture table says (tracer/inject/capture_table.h). The whole record
 * is reserved at once and committed by the event's stamp; the ring has INJECT_RECORD_MAX bytes of
 * slack after its end, so a record never wraps: it is written and read in one piece. */
#define INJECT_EVENT_DATA_BIT 30
#define EV_DATA_LEN EVENT_SIZE /* u64: bytes of data after the event, this word included */
#define EV_DATA                                                                                    \
    (EVENT_SIZE + 8) /* the values: at an entry rdi rsi rdx rcx r8 r9..., an exit rax rdx... */
#define INJECT_EVENT_EXIT (1u << INJECT_EVENT_EXIT_BIT)
#define INJECT_EVENT_DATA (1u << INJECT_EVENT_DATA_BIT)
#define INJECT_EVENT_FUNC 0x3fffffffu
#define INJECT_RECORD_MAX (64u << 10)

/* A captured function's table, in the program next to its code, found from its descriptor at
 * the entry and from its shadow entry at the exit. */
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
#define CT_OP_SHIFT 5  /* log2(CT_OP_SIZE) */
#define OP_PTR_SRC 0   /* u8: CT_SRC_* */
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
/* In a record's data, one copied block (stack arguments, a result in memory, a pointee): */
#define CAP_SLOT_COUNT 0 /* s64: the bytes process_vm_readv copied, -errno, 0: no read */
#define CAP_SLOT_SIZE 8  /* u64: the bytes reserved for it, padded to 8 */
#define CAP_SLOT_HEAD 16 /* then the bytes */

/* The region's header (tracer/inject/space.h) lists where each copy of the blob is, and which
 * functions' stubs enter it: the in-process unwinder hooks (inject_blob_hook) find there which
 * return addresses are a trampoline's exit, and which exit a call returns through, without
 * calltrace. The executable's copy is listed first, for every function id; a library's, for
 * its own, is found before it (the list is searched from its end). */
#define REGION_COPIES 256 /* u64: copies listed */
#define REGION_COPY 264   /* the first: */
#define COPY_BASE 0       /* u64: program address of the copy */
#define COPY_FIRST_FUNC 8 /* u32: the ids of the functions whose stubs enter it */
#define COPY_END_FUNC 12  /* u32 */
#define COPY_SIZE 16
#define REGION_COPIES_MAX ((4096 - REGION_COPY) / COPY_SIZE)

/* What an in-process hook does (its stub's descriptor, DESC_FUNC), at the start of libgcc's
 * unwinder (tracer/inject/unwind.h): */
#define HOOK_UNHOOK 1 /* an unwinding starts or goes on: real return addresses back */
#define HOOK_CATCH 2  /* a handler starts: the unwound calls popped, the others hooked again */
#define HOOK_WALK 3   /* a stack walk: real return addresses back, the calls' returns lost */
/* The dynamic linker's _dl_debug_state (a library list changed): the thread asks calltrace to
 * look (CTL_HOOK_REQ, then kill(CTL_CONSUMER, SIGCHLD)) and waits for the answer (CTL_HOOK_ACK)
 * as a full ring waits for room: as long as calltrace's progress word moves, and never again
 * once it stood still for RING_WAIT_TRIES waits (REGION_GONE set: calltrace is gone). */
#define HOOK_LINKER 4
/* In the region's header: u64, set by a thread that waited for calltrace in vain; calltrace
 * clears it as it works (a loaded machine may make it look gone for a while). */
#define REGION_GONE 72
/* -L: the code whose calls into a library are the program's (its executable, the -l libraries),
 * u64 count then {lo, hi} runtime ranges. calltrace writes a range's lo while its hi is 0 (an
 * empty range), then its hi; a range that goes is emptied hi first: a trampoline reading it at
 * any moment sees a range or nothing. */
#define REGION_CALLERS 80
#define REGION_CALLER_RANGES 88
#define REGION_CALLERS_MAX 10 /* up to REGION_COPIES */

/* A full ring: the thread wakes calltrace and waits for room, futex waits of WAIT_NS on the
 * ring's tail; after WAIT_TRIES of them in a row with the tail not moving, it gives up and
 * drops until calltrace drains again (it may be gone or stopped: the program must never hang
 * on it). */
#define RING_WAIT_NS 1000000
#define RING_WAIT_TRIES 200

#ifndef __ASSEMBLER__
#include <stddef.h>
#include <stdint.h>

struct ring_ctl {
    uint64_t head, limit, mask, ring;
    uint64_t region;
    uint64_t drops_full, drops_shadow;
    uint64_t drops;
    uint8_t busy, gave_up;
    uint8_t unused_66[6];
    uint64_t consumer, lost_returns, pid, progress;
    uint64_t drops_vfork;
    uint64_t unused_112[2];
    uint64_t tail;
    uint8_t unused_136[120];
    uint64_t hook_req, hook_ack;
    uint8_t unused_272[CTL_SIZE - 272];
};
_Static_assert(offsetof(struct ring_ctl, head) == CTL_HEAD, "ring abi");
_Static_assert(offsetof(struct ring_ctl, limit) == CTL_LIMIT, "ring abi");
_Static_assert(offsetof(struct ring_ctl, mask) == CTL_MASK, "ring abi");
_Static_assert(offsetof(struct ring_ctl, ring) == CTL_RING, "ring abi");
_Static_assert(offsetof(struct ring_ctl, region) == CTL_REGION, "ring abi");
_Static_assert(offsetof(struct ring_ctl, drops) == CTL_DROPS, "ring abi");
_Static_assert(offsetof(struct ring_ctl, drops_full) == CTL_DROPS_FULL, "ring abi");
_Static_assert(offsetof(struct ring_ctl, drops_shadow) == CTL_DROPS_SHADOW, "ring abi");
_Static_assert(offsetof(struct ring_ctl, drops_vfork) == CTL_DROPS_VFORK, "ring abi");
_Static_assert(offsetof(struct ring_ctl, busy) == CTL_BUSY, "ring abi");
_Static_assert(offsetof(struct ring_ctl, gave_up) == CTL_GAVE_UP, "ring abi");
_Static_assert(offsetof(struct ring_ctl, consumer) == CTL_CONSUMER, "ring abi");
_Static_assert(offsetof(struct ring_ctl, lost_returns) == CTL_LOST_RETURNS, "ring abi");
_Static_assert(offsetof(struct ring_ctl, pid) == CTL_PID, "ring abi");
_Static_assert(offsetof(struct ring_ctl, progress) == CTL_PROGRESS, "ring abi");
_Static_assert(offsetof(struct ring_ctl, tail) == CTL_TAIL, "ring abi");
_Static_assert(offsetof(struct ring_ctl, hook_req) == CTL_HOOK_REQ, "ring abi");
_Static_assert(offsetof(struct ring_ctl, hook_ack) == CTL_HOOK_ACK, "ring abi");
_Static_assert(sizeof(struct ring_ctl) == CTL_SIZE, "ring abi");

/* At CTL_SIZE: the shadow stack's indexes, program addresses. */
struct shadow_indexes {
    uint64_t top, end, base;
};
_Static_assert(CTL_SIZE + offsetof(struct shadow_indexes, top) == CTL_SHADOW_TOP, "ring abi");
_Static_assert(CTL_SIZE + offsetof(struct shadow_indexes, end) == CTL_SHADOW_END, "ring abi");
_Static_assert(CTL_SIZE + offsetof(struct shadow_indexes, base) == CTL_SHADOW_BASE, "ring abi");
_Static_assert(sizeof(struct shadow_indexes) <= SHADOW_HEADER, "ring abi");

struct region_copy {
    uint64_t base;
    uint32_t first_func, end_func;
};
_Static_assert(offsetof(struct region_copy, base) == COPY_BASE, "ring abi");
_Static_assert(offsetof(struct region_copy, first_func) == COPY_FIRST_FUNC, "ring abi");
_Static_assert(offsetof(struct region_copy, end_func) == COPY_END_FUNC, "ring abi");
_Static_assert(sizeof(struct region_copy) == COPY_SIZE, "ring abi");

struct shadow_entry {
    uint64_t ret;
    uint64_t slot;
    uint64_t func;
    uint64_t table;
};
_Static_assert(offsetof(struct shadow_entry, ret) == SH_RET, "ring abi");
_Static_assert(offsetof(struct shadow_entry, slot) == SH_SLOT, "ring abi");
_Static_assert(offsetof(struct shadow_entry, func) == SH_FUNC, "ring abi");
_Static_assert(offsetof(struct shadow_entry, table) == SH_TABLE, "ring abi");
_Static_assert(sizeof(struct shadow_entry) == SHADOW_ENTRY_SIZE, "ring abi");

struct inject_event {
    uint64_t tsc;
    uint64_t slot; /* address of the return address slot: rsp at the entry */
    uint64_t ret;  /* the real return address */
    uint32_t func; /* INJECT_EVENT_EXIT set: an exit */
    uint32_t stamp;
};
_Static_assert(offsetof(struct inject_event, tsc) == EV_TSC, "ring abi");
_Static_assert(offsetof(struct inject_event, slot) == EV_SLOT, "ring abi");
_Static_assert(offsetof(struct inject_event, ret) == EV_RET, "ring abi");
_Static_assert(offsetof(struct inject_event, func) == EV_FUNC, "ring abi");
_Static_assert(offsetof(struct inject_event, stamp) == EV_STAMP, "ring abi");
_Static_assert(sizeof(struct inject_event) == EVENT_SIZE, "ring abi");
_Static_assert(1u << EVENT_SHIFT == EVENT_SIZE, "ring abi");
_Static_assert(EV_DATA == EV_DATA_LEN + sizeof(uint64_t), "ring abi");
_Static_assert((INJECT_EVENT_FUNC & (INJECT_EVENT_EXIT | INJECT_EVENT_DATA)) == 0, "ring abi");
_Static_assert(INJECT_RECORD_MAX % EVENT_SIZE == 0, "ring abi");

struct capture_table_head {
    uint32_t entry_size, exit_size;
    uint8_t entry_xmm, result_fp;
    uint16_t nreads, nresult_reads, unused_14;
    uint32_t stack_bytes, hidden_size;
    uint8_t unused_24[CT_HEAD - 24];
};
_Static_assert(offsetof(struct capture_table_head, entry_size) == CT_ENTRY_SIZE, "ring abi");
_Static_assert(offsetof(struct capture_table_head, exit_size) == CT_EXIT_SIZE, "ring abi");
_Static_assert(offsetof(struct capture_table_head, entry_xmm) == CT_ENTRY_XMM, "ring abi");
_Static_assert(offsetof(struct capture_table_head, result_fp) == CT_RESULT_FP, "ring abi");
_Static_assert(offsetof(struct capture_table_head, nreads) == CT_NREADS, "ring abi");
_Static_assert(offsetof(struct capture_table_head, nresult_reads) == CT_NRESULT_READS, "ring abi");
_Static_assert(offsetof(struct capture_table_head, stack_bytes) == CT_STACK_BYTES, "ring abi");
_Static_assert(offsetof(struct capture_table_head, hidden_size) == CT_HIDDEN_SIZE, "ring abi");
_Static_assert(sizeof(struct capture_table_head) == CT_HEAD, "ring abi");

struct capture_table_op {
    uint8_t ptr_src, count_src, shift, unused_3;
    uint32_t ptr_off, count_off, cap;
    uint64_t count_const;
    uint8_t unused_24[CT_OP_SIZE - 24];
};
_Static_assert(offsetof(struct capture_table_op, ptr_src) == OP_PTR_SRC, "ring abi");
_Static_assert(offsetof(struct capture_table_op, count_src) == OP_COUNT_SRC, "ring abi");
_Static_assert(offsetof(struct capture_table_op, shift) == OP_SHIFT, "ring abi");
_Static_assert(offsetof(struct capture_table_op, ptr_off) == OP_PTR_OFF, "ring abi");
_Static_assert(offsetof(struct capture_table_op, count_off) == OP_COUNT_OFF, "ring abi");
_Static_assert(offsetof(struct capture_table_op, cap) == OP_CAP, "ring abi");
_Static_assert(offsetof(struct capture_table_op, count_const) == OP_COUNT_CONST, "ring abi");
_Static_assert(sizeof(struct capture_table_op) == CT_OP_SIZE, "ring abi");
_Static_assert(1u << CT_OP_SHIFT == CT_OP_SIZE, "ring abi");

/* The stamp that commits the record at ring position pos. */
static inline uint32_t ring_stamp(uint64_t pos)
{
    return (uint32_t)(pos >> EVENT_SHIFT) + 1;
}
#endif

#endif
