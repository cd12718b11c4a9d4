/* The inject engine's trampolines: the "blob" of code calltrace copies into the traced program
 * (see inject_tramp.h for how a patched function reaches it, arch/ring_abi.h for the rings it
 * writes). Assembly, not C: the fast path runs on every traced call, may not call anything, and
 * must save exactly the registers it touches. It is assembled into calltrace's .rodata
 * (section .rodata.calltrace_inject, between inject_blob and inject_blob_end) and copied into
 * the program as bytes (tracer/inject/space.c inject_write_blob); it addresses only its own data
 * rip-relatively (inject_blob_main_ctl, filled in at placement), so it runs wherever it is copied.
 *
 * S below is a call's slot: where its return address is, rsp at the function's entry. Everything
 * under rsp is the red zone (the System V ABI leaves 128 bytes there that a signal frame skips),
 * so the trampolines save registers there without moving rsp. */
#include <asm/unistd.h>

#include "arch/ring_abi.h"
#include "arch/x86_64/inject_tramp.h"

.pushsection .rodata.calltrace_inject, "a"
.intel_syntax noprefix
.p2align 6
/* The frames the stubs below save registers into, in the red zone under S (see their
 * pictures): the plain entry's, and the one the args entry and exit share (rbp = S; [S-8] rax
 * and [S-16] are written apart, as the two use them differently). */
.macro RESTORE_ENTRY_FRAME
    mov rax, [rsp-8]
    mov rdx, [rsp-16]
    mov rcx, [rsp-24]
    mov r11, [rsp-32]
    mov r10, [rsp-40]
.endm
.macro SAVE_ARGS_FRAME
    mov [rsp-24], rdx
    mov [rsp-32], rcx
    mov [rsp-40], r11
    mov [rsp-48], r10
    mov [rsp-56], rdi
    mov [rsp-64], rsi
    mov [rsp-72], r8
    mov [rsp-80], r9
    mov [rsp-88], rbx
    mov [rsp-96], rbp
    mov [rsp-104], r12
    mov [rsp-112], r13
    mov [rsp-120], r14
    mov [rsp-128], r15
.endm
.macro RESTORE_ARGS_FRAME
    mov rax, [rbp-8]
    mov rdx, [rbp-24]
    mov rcx, [rbp-32]
    mov r11, [rbp-40]
    mov r10, [rbp-48]
    mov rdi, [rbp-56]
    mov rsi, [rbp-64]
    mov r8, [rbp-72]
    mov r9, [rbp-80]
    mov rbx, [rbp-88]
    mov r12, [rbp-104]
    mov r13, [rbp-112]
    mov r14, [rbp-120]
    mov r15, [rbp-128]
.endm

/* -L: is the call of a library function whose return address is at [slot] the program's? Jumps
 * to yes when its return address is in one of the caller ranges (the executable, the -l
 * libraries: REGION_CALLERS), or when it is the tail call of a hooked function of the program
 * (the thread's newest shadow entry holds the same slot, without SH_FUNC_LIB_BIT); to no
 * otherwise: the library called itself, or a library another. The ranges are in the shared
 * region, which the program can write: the count is bounded. Clobbers rcx rdx r10 r11. */
.macro PROGRAM_CALL slot, yes, no
    mov r11, [rip+inject_blob_main_ctl]     /* the region's header */
    mov rdx, [\slot]                        /* the return address */
    mov rcx, [r11+REGION_CALLERS]
    cmp rcx, REGION_CALLERS_MAX
    jbe 1f
    mov ecx, REGION_CALLERS_MAX
1:
    dec rcx
    js 2f
    mov r10, rcx
    shl r10, 4
    cmp rdx, [r11+r10+REGION_CALLER_RANGES]
    jb 1b
    cmp rdx, [r11+r10+REGION_CALLER_RANGES+8]
    jb \yes
    jmp 1b
2:
    mov rcx, qword ptr fs:[INJECT_TCB_SLOT]
    cmp rcx, 1
    jbe \no
    mov rdx, [rcx+CTL_SHADOW_TOP]
    sub rdx, SHADOW_ENTRY_SIZE
    cmp rdx, [rcx+CTL_SHADOW_BASE]
    jb \no
    cmp [rdx+SH_SLOT], \slot
    jne \no
    bt qword ptr [rdx+SH_FUNC], SH_FUNC_LIB_BIT
    jc \no
    jmp \yes
.endm

/* Reserves a record in the ring of the control block ctl: r10 holds its size on the way in
 * and the stamp that will commit it on the way out; at: where it goes in the ring (it never
 * wraps: the ring has slack after its end). One instruction (xadd) reserves it, so a signal
 * handler's calls reserve theirs before or after it, never in between. The record is
 * committed by writing the stamp, 32 bits, at [at+EV_STAMP], last: x86 keeps stores in order. */
.macro RING_RESERVE ctl, at
    xadd [\ctl+CTL_HEAD], r10
    mov \at, r10
    and \at, [\ctl+CTL_MASK]
    add \at, [\ctl+CTL_RING]
    shr r10, EVENT_SHIFT                    /* position / event size + 1 */
    inc r10d
.endm

.globl inject_blob
inject_blob:
/* inject_blob_entry: a plain traced function F was called; F_stub jumped here.
 *
 *   at the entry (rax = &F_desc)         at the call below (the return hooked)
 *   S+8   caller's frame                 S+8   caller's frame        <- rsp
 *   S     return address to the caller   S     blob_exit (pushed by the call)
 *   S-8   the program's rax (F_stub)     S-8   rax   \
 *   S-16  rdx    saved here,             S-16  rdx    |  restored
 *   S-24  rcx    in the red zone         S-24  rcx    |  before
 *   S-32  r11                            S-32  r11    |  the call
 *   S-40  r10                            S-40  r10   /
 *   S-48  F_reloc (F_desc DESC_RELOC)    S-48  F_reloc: called, F runs
 *
 *   1. the thread's control block: fs:[INJECT_TCB_SLOT] (the main thread claims its own once)
 *   2. shadow entry reserved (xadd CTL_SHADOW_TOP): {SH_RET = [S], SH_SLOT = S, SH_FUNC = id}
 *   3. event reserved (xadd CTL_HEAD, EVENT_SIZE), room checked against CTL_TAIL first:
 *      EV_SLOT = S, EV_RET, EV_FUNC = id, EV_TSC = rdtsc, and EV_STAMP last: committed
 *   4. registers restored, rsp = S+8, call [S-48]: F returns to blob_exit. */
inject_blob_entry:
    mov [rsp-16], rdx
    mov [rsp-24], rcx
    mov [rsp-32], r11
    mov [rsp-40], r10
    mov r11, [rax+DESC_RELOC]               /* the relocated start of the function */
    mov [rsp-48], r11
    test byte ptr [rax+DESC_FLAGS], DESC_LIB_CALL
    jnz .Lentry_lib_call
.Lentry_program_call:
    mov rcx, qword ptr fs:[INJECT_TCB_SLOT]
    cmp rcx, 1
    jbe .Lentry_noslot
.Lentry_slot:
    cmp byte ptr [rcx+CTL_BUSY], 0
    jne .Lentry_drop                        /* a vfork child on its parent's block */
/* Signal handlers may call traced functions anywhere in here: every shared index is
 * reserved by one instruction (xadd: a signal lands before or after it) before the entry
 * or event it reserves is written, and a handler's calls end before it returns. */
    mov edx, SHADOW_ENTRY_SIZE
    xadd [rcx+CTL_SHADOW_TOP], rdx
    cmp rdx, [rcx+CTL_SHADOW_END]
    jae .Lentry_shadow_full
    mov r11, [rsp]
    mov [rdx+SH_RET], r11                   /* shadow: real return address */
    mov [rdx+SH_SLOT], rsp                  /*         its slot */
    mov r10d, [rax+DESC_FUNC]
    test byte ptr [rax+DESC_FLAGS], DESC_LIB_CALL
    jnz .Lentry_lib_bit
.Lentry_lib_bit_set:
    mov [rdx+SH_FUNC], r10                  /*         function id */
    mov rdx, [rcx+CTL_HEAD]
    sub rdx, [rcx+CTL_TAIL]
    cmp rdx, [rcx+CTL_LIMIT]
    ja .Lentry_ring_wait
.Lentry_ring_ok:
    mov r10d, EVENT_SIZE
    RING_RESERVE rcx, rdx
    mov [rdx+EV_SLOT], rsp
    mov [rdx+EV_RET], r11
    mov r11d, [rax+DESC_FUNC]               /* func; the top bit clear: an entry */
    mov [rdx+EV_FUNC], r11d
    mov r11, rdx
    rdtsc
    shl rdx, 32
    or rax, rdx
    mov [r11+EV_TSC], rax
/* x86 keeps stores in order: the stamp, last, commits the event. */
    mov [r11+EV_STAMP], r10d
.Lentry_hook:
    RESTORE_ENTRY_FRAME
    lea rsp, [rsp+8]
    call qword ptr [rsp-56]                 /* S-48: the relocated start */
/* inject_blob_exit: F returned here through the slot S the entry hooked; rsp = S+8, F's
 * results in rax, rdx, xmm0/1.
 *
 *   S     (blob_exit, popped by F's ret)   the real return address pushed back here, then ret
 *   S-8   rax  \
 *   S-16  rdx   |  saved in the red zone
 *   S-24  rcx   |
 *   S-32  r11   |
 *   S-40  r10  /
 *   S-48  the real return address (from the shadow entry)
 *   S-56  the function id
 *
 *   1. the shadow entry whose SH_SLOT is S, from the top down (those above it were abandoned:
 *      longjmp), popped with them
 *   2. exit event: EV_FUNC = id | INJECT_EVENT_EXIT, reserved and committed as at the entry
 *   3. registers restored, push [S-48], ret: back in the caller. */
inject_blob_exit:
    mov [rsp-16], rax
    mov [rsp-24], rdx
    mov [rsp-32], rcx
    mov [rsp-40], r11
    mov [rsp-48], r10
    mov rcx, qword ptr fs:[INJECT_TCB_SLOT]
    lea r11, [rsp-8]
    mov rdx, [rcx+CTL_SHADOW_TOP]
/* The newest entry of this slot is this call; entries above it were abandoned (longjmp,
 * a handler left by siglongjmp): they go with it. */
.Lexit_find:
    sub rdx, SHADOW_ENTRY_SIZE
    cmp rdx, [rcx+CTL_SHADOW_BASE]
    jb .Lexit_lost
    cmp [rdx+SH_SLOT], r11
    jne .Lexit_find
    mov r10, [rdx+SH_RET]
    mov [rsp-56], r10                       /* the real return address */
    mov eax, [rdx+SH_FUNC]
    mov [rsp-64], rax                       /* the function id */
/* read before the pop: a handler may push over the entry right after it */
    mov [rcx+CTL_SHADOW_TOP], rdx
    mov rax, [rcx+CTL_HEAD]
    sub rax, [rcx+CTL_TAIL]
    cmp rax, [rcx+CTL_LIMIT]
    ja .Lexit_ring_wait
.Lexit_ring_ok:
    mov r10d, EVENT_SIZE
    RING_RESERVE rcx, rax
    mov [rax+EV_SLOT], r11
    mov rdx, [rsp-56]
    mov [rax+EV_RET], rdx
    mov rdx, [rsp-64]
    bts edx, INJECT_EVENT_EXIT_BIT          /* the top bit: an exit */
    mov [rax+EV_FUNC], edx
    mov r11, rax
    rdtsc
    shl rdx, 32
    or rax, rdx
    mov [r11+EV_TSC], rax
    mov [r11+EV_STAMP], r10d
.Lexit_done:
    mov rax, [rsp-16]
    mov rdx, [rsp-24]
    mov rcx, [rsp-32]
    mov r11, [rsp-40]
    mov r10, [rsp-48]
/* Back to the caller with a ret rather than a jmp: the CPU's return stack still holds the
 * caller's return address (the function's own ret took the trampoline's), and an indirect
 * jmp would leave it there, so that every later return would mispredict. */
    push qword ptr [rsp-56]
    ret
.Lexit_ring_wait:                           /* below the red zone the stub uses */
    lea rsp, [rsp-128]
    call .Lring_wait
    lea rsp, [rsp+128]
    test eax, eax
    jz .Lexit_ring_ok
.Lexit_ring_full:                           /* the call stays recorded: it ends later */
    inc qword ptr [rcx+CTL_LOST_RETURNS]
    jmp .Lexit_done
.Lexit_lost:
    ud2                                     /* no entry for this slot: cannot happen */
/* Slow paths of the entry. */
.Lentry_lib_call:                           /* -L: recorded when the program calls */
    PROGRAM_CALL rsp, .Lentry_program_call, .Lentry_untraced
.Lentry_lib_bit:
    bts r10, SH_FUNC_LIB_BIT
    jmp .Lentry_lib_bit_set
.Lentry_ring_wait:
    lea rsp, [rsp-128]
    push rax
    call .Lring_wait
    mov edx, eax
    pop rax
    lea rsp, [rsp+128]
    test edx, edx
    jz .Lentry_ring_ok
.Lentry_ring_full:                          /* hooked all the same, so returns pair up */
    inc qword ptr [rcx+CTL_DROPS_FULL]
    inc qword ptr [rcx+CTL_DROPS]
    jmp .Lentry_hook
.Lentry_shadow_full:
    sub qword ptr [rcx+CTL_SHADOW_TOP], SHADOW_ENTRY_SIZE
    inc qword ptr [rcx+CTL_DROPS_SHADOW]
    jmp .Lentry_dropped
.Lentry_drop:                               /* a vfork child on its parent's block */
    inc qword ptr [rcx+CTL_DROPS_VFORK]
.Lentry_dropped:
    inc qword ptr [rcx+CTL_DROPS]
.Lentry_untraced:                           /* run the function as if never patched */
    RESTORE_ENTRY_FRAME
    jmp qword ptr [rsp-48]
/* No control block yet: the main thread takes the one reserved for it (every other thread
 * gets its own from calltrace before it runs); 1 marks a thread left untraced. */
.Lentry_noslot:
    test rcx, rcx
    jnz .Lentry_untraced
    mov rcx, [rip+inject_blob_main_ctl]     /* the claim word, in the shared region */
    mov edx, 1
    xchg rdx, [rcx]
    mov qword ptr fs:[INJECT_TCB_SLOT], rdx
    mov rcx, rdx
    cmp rcx, 1
    jbe .Lentry_untraced
    jmp .Lentry_slot
/* .Lring_wait: the ring of the control block in rcx is full (head - tail > CTL_LIMIT).
 *
 *   kill(CTL_CONSUMER, SIGCHLD)                        calltrace wakes and drains
 *   futex(&CTL_TAIL, FUTEX_WAIT, tail, RING_WAIT_NS)   until the tail moves, or the timeout
 *   ... until there is room (eax 0), or RING_WAIT_TRIES waits in a row saw calltrace's progress
 *   word (CTL_PROGRESS, or the tail) stand still: CTL_GAVE_UP set, the call dropped (eax 1).
 *
 * Called with rsp moved under the caller's red zone. .Lring_wait_room: room for an event and
 * rax bytes more. Every register but rax and the flags is preserved. */
.Lring_wait:
    xor eax, eax
.Lring_wait_room:
    push rdi
    push rsi
    push rdx
    push r8
    mov r8, rax
    push r9
    push r10
    push r11
    push rcx
    push rbx
    mov rbx, rcx
    cmp byte ptr [rbx+CTL_GAVE_UP], 0
    jne .Lwait_drop
    sub rsp, 32                             /* timespec, the tries left, the progress seen */
    mov qword ptr [rsp], 0
    mov qword ptr [rsp+8], RING_WAIT_NS
    lea r9, [rbx+CTL_TAIL]                  /* r9: the word that says calltrace works */
    mov rax, [rbx+CTL_PROGRESS]
    test rax, rax
    cmovnz r9, rax
    mov rax, [r9]
    mov [rsp+24], rax
    mov qword ptr [rsp+16], RING_WAIT_TRIES
.Lwait_loop:
/* a progress word that moved: calltrace is alive and working, however slowly (valgrind, a
 * loaded machine), if on other rings or other stops for now: the tries start again, only
 * a calltrace that does nothing for RING_WAIT_TRIES waits is given up on */
    mov rax, [r9]
    cmp rax, [rsp+24]
    je .Lwait_count
    mov [rsp+24], rax
    mov qword ptr [rsp+16], RING_WAIT_TRIES
.Lwait_count:
/* given up on meanwhile: the calltrace attaching after this one was killed, which steps this
 * thread out of here, or a detach */
    cmp byte ptr [rbx+CTL_GAVE_UP], 0
    jne .Lwait_give_up
    dec qword ptr [rsp+16]
    js .Lwait_give_up
    mov eax, __NR_kill                      /* kill(calltrace, SIGCHLD): it drains */
    mov edi, [rbx+CTL_CONSUMER]
    mov esi, TRAMP_SIGCHLD
    syscall
    mov edx, [rbx+CTL_TAIL]                 /* the futex word: the tail's low half */
    mov rax, [rbx+CTL_HEAD]
    sub rax, [rbx+CTL_TAIL]
    add rax, r8
    cmp rax, [rbx+CTL_LIMIT]
    jbe .Lwait_room
    mov eax, __NR_futex                     /* futex(&tail, FUTEX_WAIT, edx, 1 ms) */
    lea rdi, [rbx+CTL_TAIL]
    xor esi, esi                            /* TRAMP_FUTEX_WAIT: 0 */
    mov r10, rsp
    syscall
    mov rax, [rbx+CTL_HEAD]
    sub rax, [rbx+CTL_TAIL]
    add rax, r8
    cmp rax, [rbx+CTL_LIMIT]
    ja .Lwait_loop
.Lwait_room:
    add rsp, 32
    xor eax, eax
    jmp .Lwait_out
.Lwait_give_up:
    mov byte ptr [rbx+CTL_GAVE_UP], 1
    add rsp, 32
.Lwait_drop:
    mov eax, 1
.Lwait_out:
    pop rbx
    pop rcx
    pop r11
    pop r10
    pop r9
    pop r8
    pop rdx
    pop rsi
    pop rdi
    ret
/* inject_blob_entry_args: the entry of a function with a capture table (-A/-R): as
 * blob_entry, and the entry event carries the values its table names. Slower, so it saves
 * every register it may touch in one frame under S, and moves rsp under it (rbp = S):
 *
 *   S     return address to the caller (then blob_exit_args, pushed by the call)
 *   S-8   rax (F_stub)       S-56  rdi       S-88   rbx       S-120 r14
 *   S-16  F_reloc            S-64  rsi       S-96   rbp       S-128 r15   <- rsp
 *   S-24  rdx                S-72  r8        S-104  r12
 *   S-32  rcx  S-40 r11      S-80  r9        S-112  r13
 *   S-48  r10
 *
 *   shadow entry: SH_FUNC = id with SH_FUNC_TABLE_BIT, SH_TABLE = the table (F_desc DESC_TABLE)
 *   record, reserved whole (its size known from the registers before it is written):
 *     event (INJECT_EVENT_DATA) | EV_DATA_LEN | rdi rsi rdx rcx r8 r9 | [xmm0-7]
 *     | [stack arguments: CAP_SLOT] | the entry's pointer reads: CAP_SLOT each
 *   committed by its stamp once all of it is written. */
inject_blob_entry_args:
    SAVE_ARGS_FRAME
    mov rbp, rsp                            /* rbp: S */
    lea rsp, [rsp-128]
    mov r11, [rax+DESC_RELOC]
    mov [rbp-16], r11
    mov rbx, rax                            /* rbx: the descriptor */
    test byte ptr [rbx+DESC_FLAGS], DESC_LIB_CALL
    jz .La_program_call
    PROGRAM_CALL rbp, .La_program_call, .La_untraced
.La_program_call:
    mov r12, qword ptr fs:[INJECT_TCB_SLOT]
    cmp r12, 1
    jbe .La_noslot
.La_slot:
    cmp byte ptr [r12+CTL_BUSY], 0
    jne .La_drop
    mov edx, SHADOW_ENTRY_SIZE
    xadd [r12+CTL_SHADOW_TOP], rdx
    cmp rdx, [r12+CTL_SHADOW_END]
    jae .La_shadow_full
    movsxd r13, dword ptr [rbx+DESC_TABLE]
    add r13, rbx                            /* r13: the table */
    mov r11, [rbp]
    mov [rdx+SH_RET], r11
    mov [rdx+SH_SLOT], rbp
    mov r10d, [rbx+DESC_FUNC]
    bts r10, SH_FUNC_TABLE_BIT              /* marks an entry with a table, */
    test byte ptr [rbx+DESC_FLAGS], DESC_LIB_CALL
    jz .La_lib_bit_set
    bts r10, SH_FUNC_LIB_BIT
.La_lib_bit_set:
    mov [rdx+SH_FUNC], r10
    mov [rdx+SH_TABLE], r13                 /* this one */
/* The record's size: the fixed part, and each read's bytes, known from the registers. */
    push rbx
    sub rsp, 48
    mov rax, [rbp-56]                       /* rdi rsi rdx rcx r8 r9, in order */
    mov [rsp], rax
    mov rax, [rbp-64]
    mov [rsp+8], rax
    mov rax, [rbp-24]
    mov [rsp+16], rax
    mov rax, [rbp-32]
    mov [rsp+24], rax
    mov rax, [rbp-72]
    mov [rsp+32], rax
    mov rax, [rbp-80]
    mov [rsp+40], rax
    mov r8, rsp
    mov r11d, [r13+CT_ENTRY_SIZE]
    lea rbx, [r13+CT_HEAD]
    movzx r9d, word ptr [r13+CT_NREADS]
    call .Lreads_size
    add rsp, 48
    pop rbx
    lea r14, [r11+EVENT_SIZE+EVENT_SIZE-1]
    and r14, -EVENT_SIZE                    /* r14: the record's size */
    mov rdx, [r12+CTL_HEAD]
    sub rdx, [r12+CTL_TAIL]
    add rdx, r14
    sub rdx, EVENT_SIZE
    cmp rdx, [r12+CTL_LIMIT]
    ja .La_ring_wait
.La_ring_ok:
    mov r10, r14
    RING_RESERVE r12, r15
    push r10                                /* its stamp, written last */
    mov [r15+EV_SLOT], rbp
    mov r11, [rbp]
    mov [r15+EV_RET], r11
    mov r11d, [rbx+DESC_FUNC]
    bts r11d, INJECT_EVENT_DATA_BIT
    mov [r15+EV_FUNC], r11d
    rdtsc
    shl rdx, 32
    or rax, rdx
    mov [r15+EV_TSC], rax
    lea rax, [r14-EVENT_SIZE]
    mov [r15+EV_DATA_LEN], rax
    mov rax, [rbp-56]
    mov [r15+EV_DATA], rax                  /* rdi rsi rdx rcx r8 r9 */
    mov rax, [rbp-64]
    mov [r15+EV_DATA+8], rax
    mov rax, [rbp-24]
    mov [r15+EV_DATA+16], rax
    mov rax, [rbp-32]
    mov [r15+EV_DATA+24], rax
    mov rax, [rbp-72]
    mov [r15+EV_DATA+32], rax
    mov rax, [rbp-80]
    mov [r15+EV_DATA+40], rax
    lea r14, [r15+EV_DATA+48]               /* r14: where the next bytes go */
    cmp byte ptr [r13+CT_ENTRY_XMM], 0
    je .La_no_xmm
    movdqu [r14], xmm0
    movdqu [r14+16], xmm1
    movdqu [r14+32], xmm2
    movdqu [r14+48], xmm3
    movdqu [r14+64], xmm4
    movdqu [r14+80], xmm5
    movdqu [r14+96], xmm6
    movdqu [r14+112], xmm7
    add r14, 128
.La_no_xmm:
    xor r10d, r10d                          /* r10: the stack arguments copied, or 0 */
    mov edx, [r13+CT_STACK_BYTES]
    test edx, edx
    jz .La_no_stack
    lea rsi, [rbp+8]
    call .Lread_slot
    lea r10, [r14+CAP_SLOT_HEAD]
    add r14, rax
.La_no_stack:
    lea rbx, [r13+CT_HEAD]
    movzx r9d, word ptr [r13+CT_NREADS]
    lea r8, [r15+EV_DATA]
    call .Lcapture_reads
    pop r10
    mov [r15+EV_STAMP], r10d                /* commits the record */
.La_hook:
    RESTORE_ARGS_FRAME
    lea rsp, [rbp+8]
    mov rbp, [rsp-104]
    call qword ptr [rsp-24]                 /* S-16: the relocated start */
/* inject_blob_exit_args: the exit of a function entered through inject_blob_entry_args (or
 * of a plain function it tail-called): rsp = S+8 on arrival, moved back to S. The same frame as
 * the args entry, but [S-16]: the real return address.
 *
 *   record: event (INJECT_EVENT_EXIT, INJECT_EVENT_DATA when the table wants the result)
 *     | EV_DATA_LEN | rax rdx | [xmm0 xmm1 st(0)] | [a result in memory: CAP_SLOT]
 *     | the exit's pointer reads: CAP_SLOT each */
inject_blob_exit_args:
    lea rsp, [rsp-8]
    mov [rsp-8], rax
    SAVE_ARGS_FRAME
    mov rbp, rsp
    lea rsp, [rsp-128]
    mov r12, qword ptr fs:[INJECT_TCB_SLOT]
    mov rdx, [r12+CTL_SHADOW_TOP]
.Lxa_find:
    sub rdx, SHADOW_ENTRY_SIZE
    cmp rdx, [r12+CTL_SHADOW_BASE]
    jb .Lexit_lost
    cmp [rdx+SH_SLOT], rbp
    jne .Lxa_find
    mov r10, [rdx+SH_RET]
    mov [rbp-16], r10
    mov rbx, [rdx+SH_FUNC]
    mov r13, [rdx+SH_TABLE]
    mov [r12+CTL_SHADOW_TOP], rdx
    xor r14d, r14d                          /* r14: bytes of data */
    bt rbx, SH_FUNC_TABLE_BIT               /* a plain entry (a tail call): no data */
    jnc .Lxa_sized
    mov r11d, [r13+CT_EXIT_SIZE]
    test r11d, r11d
    jz .Lxa_sized                           /* no return value wanted */
    push rbx
    push qword ptr [rbp-24]                 /* rax rdx, in order */
    push qword ptr [rbp-8]
    mov r8, rsp
    movzx eax, word ptr [r13+CT_NREADS]
    shl eax, CT_OP_SHIFT
    lea rbx, [r13+rax+CT_HEAD]
    movzx r9d, word ptr [r13+CT_NRESULT_READS]
    call .Lreads_size
    add rsp, 16
    pop rbx
    lea r14, [r11+EVENT_SIZE-1]
    and r14, -EVENT_SIZE
.Lxa_sized:
    mov ebx, ebx                            /* rbx: the function id */
    lea rdx, [r14+EVENT_SIZE]
    add rdx, [r12+CTL_HEAD]
    sub rdx, [r12+CTL_TAIL]
    sub rdx, EVENT_SIZE
    cmp rdx, [r12+CTL_LIMIT]
    ja .Lxa_ring_wait
.Lxa_ring_ok:
    lea r10, [r14+EVENT_SIZE]
    RING_RESERVE r12, r15
    push r10
    mov [r15+EV_SLOT], rbp
    mov rax, [rbp-16]
    mov [r15+EV_RET], rax
    mov eax, ebx
    bts eax, INJECT_EVENT_EXIT_BIT
    test r14, r14
    jz .Lxa_plain_flag
    bts eax, INJECT_EVENT_DATA_BIT
.Lxa_plain_flag:
    mov [r15+EV_FUNC], eax
    rdtsc
    shl rdx, 32
    or rax, rdx
    mov [r15+EV_TSC], rax
    test r14, r14
    jz .Lxa_commit
    mov [r15+EV_DATA_LEN], r14
    mov rax, [rbp-8]
    mov [r15+EV_DATA], rax                  /* rax rdx */
    mov rax, [rbp-24]
    mov [r15+EV_DATA+8], rax
    lea r14, [r15+EV_DATA+16]
    cmp byte ptr [r13+CT_RESULT_FP], 0
    je .Lxa_no_fp
    movdqu [r14], xmm0
    movdqu [r14+16], xmm1
    sub rsp, 528                            /* st(0): fxsave's image, 16-aligned */
    lea rax, [rsp+15]
    and rax, -16
    fxsave64 [rax]
    mov rcx, [rax+32]
    mov [r14+32], rcx
    mov rcx, [rax+40]
    mov [r14+40], rcx
    add rsp, 528
    add r14, 48
.Lxa_no_fp:
    mov edx, [r13+CT_HIDDEN_SIZE]
    test edx, edx
    jz .Lxa_no_hidden
    mov rsi, [rbp-8]                        /* the result's address, in rax */
    call .Lread_slot
    add r14, rax
.Lxa_no_hidden:
    movzx eax, word ptr [r13+CT_NREADS]
    shl eax, CT_OP_SHIFT
    lea rbx, [r13+rax+CT_HEAD]
    movzx r9d, word ptr [r13+CT_NRESULT_READS]
    lea r8, [r15+EV_DATA]
    xor r10d, r10d
    call .Lcapture_reads
.Lxa_commit:
    pop r10
    mov [r15+EV_STAMP], r10d
.Lxa_done:
    RESTORE_ARGS_FRAME
    lea rsp, [rbp+8]
    mov rbp, [rsp-104]
    push qword ptr [rsp-24]                 /* the real return address: see inject_blob_exit */
    ret
.Lxa_ring_wait:
    mov rcx, r12
    mov rax, r14
    call .Lring_wait_room
    test eax, eax
    jnz .Lxa_ring_full
    lea rdx, [r14+EVENT_SIZE]
    add rdx, [r12+CTL_HEAD]
    sub rdx, [r12+CTL_TAIL]
    sub rdx, EVENT_SIZE
    cmp rdx, [r12+CTL_LIMIT]
    jbe .Lxa_ring_ok
.Lxa_ring_full:
    inc qword ptr [r12+CTL_DROPS_FULL]
    inc qword ptr [r12+CTL_DROPS]
    jmp .Lxa_done
/* Slow paths of the args entry. */
.La_ring_wait:
    mov rcx, r12
    lea rax, [r14-EVENT_SIZE]
    call .Lring_wait_room
    test eax, eax
    jnz .La_ring_full
    mov rdx, [r12+CTL_HEAD]
    sub rdx, [r12+CTL_TAIL]
    add rdx, r14
    sub rdx, EVENT_SIZE
    cmp rdx, [r12+CTL_LIMIT]
    jbe .La_ring_ok
.La_ring_full:                              /* hooked all the same, so returns pair up */
    inc qword ptr [r12+CTL_DROPS_FULL]
    inc qword ptr [r12+CTL_DROPS]
    jmp .La_hook
.La_shadow_full:
    sub qword ptr [r12+CTL_SHADOW_TOP], SHADOW_ENTRY_SIZE
    inc qword ptr [r12+CTL_DROPS_SHADOW]
    jmp .La_dropped
.La_drop:                                   /* a vfork child on its parent's block */
    inc qword ptr [r12+CTL_DROPS_VFORK]
.La_dropped:
    inc qword ptr [r12+CTL_DROPS]
.La_untraced:
    RESTORE_ARGS_FRAME
    mov rsp, rbp
    mov rbp, [rsp-96]
    jmp qword ptr [rsp-16]
.La_noslot:
    test r12, r12
    jnz .La_untraced
    mov r12, [rip+inject_blob_main_ctl]
    mov edx, 1
    xchg rdx, [r12]
    mov qword ptr fs:[INJECT_TCB_SLOT], rdx
    mov r12, rdx
    cmp r12, 1
    jbe .La_untraced
    jmp .La_slot
/* The pointer reads of a table: rbx the first op, r9d how many, r8 the registers copied,
 * r10 the stack arguments copied (or 0), r13 the table, r14 where the slots go (advanced),
 * r12 the control block. Each slot: the count read (or -errno, 0: no read), its bytes
 * reserved (.Lop_reserve), then them. Clobbers rax rcx rdx rsi rdi r11. */
.Lcapture_reads:
    test r9d, r9d
    jz .Lcr_done
.Lcr_loop:
    xor esi, esi                            /* rsi: the pointer */
    mov eax, [rbx+OP_PTR_OFF]
    movzx ecx, byte ptr [rbx+OP_PTR_SRC]
    cmp ecx, CT_SRC_GPR
    jne .Lcr_ptr_stack
    mov rsi, [r8+rax]
    jmp .Lcr_len
.Lcr_ptr_stack:
    cmp ecx, CT_SRC_STACK
    jne .Lcr_len
    call .Lstack_word
    mov rsi, rax
.Lcr_len:
    call .Lop_reserve
    mov [r14+CAP_SLOT_SIZE], rax
    mov rdx, rax                            /* rdx: the length, the reserve at most */
    cmp byte ptr [rbx+OP_COUNT_SRC], CT_SRC_STACK
    jne .Lcr_read
    mov eax, [rbx+OP_COUNT_OFF]
    call .Lstack_word
    movzx ecx, byte ptr [rbx+OP_SHIFT]
    shl rax, cl
    shr rax, cl
    cmp rax, rdx
    cmovb rdx, rax
.Lcr_read:
    mov qword ptr [r14+CAP_SLOT_COUNT], 0
    test rsi, rsi
    jz .Lcr_next
    call .Lread_mem
.Lcr_next:
    mov rax, [r14+CAP_SLOT_SIZE]
    lea r14, [r14+rax+CAP_SLOT_HEAD]
    add rbx, CT_OP_SIZE
    dec r9d
    jnz .Lcr_loop
.Lcr_done:
    ret
/* r11 += the bytes of the slots of r9d ops from rbx, with the registers at r8. Clobbers
 * rax rcx rdx rbx r9. */
.Lreads_size:
    test r9d, r9d
    jz .Lrs_done
.Lrs_loop:
    call .Lop_reserve
    lea r11, [r11+rax+CAP_SLOT_HEAD]
    add rbx, CT_OP_SIZE
    dec r9d
    jnz .Lrs_loop
.Lrs_done:
    ret
/* rax: the bytes op rbx reserves, padded to 8: its cap, or less when its count is a
 * constant or in a register (a count in the stack arguments is only known once they are
 * copied). The same before and after the reservation: registers do not change. Clobbers
 * rcx rdx. */
.Lop_reserve:
    mov edx, [rbx+OP_CAP]
    movzx ecx, byte ptr [rbx+OP_COUNT_SRC]
    cmp ecx, CT_SRC_CONST
    je .Lor_const
    cmp ecx, CT_SRC_GPR
    jne .Lor_cap
    mov eax, [rbx+OP_COUNT_OFF]
    mov rax, [r8+rax]
    movzx ecx, byte ptr [rbx+OP_SHIFT]
    shl rax, cl
    shr rax, cl
    jmp .Lor_min
.Lor_const:
    mov rax, [rbx+OP_COUNT_CONST]
.Lor_min:
    cmp rax, rdx
    cmovb rdx, rax
.Lor_cap:
    lea rax, [rdx+7]
    and rax, -8
    ret
/* The word at offset eax of the stack arguments copied at r10, or 0 past them. Clobbers
 * rcx r11. */
.Lstack_word:
    test r10, r10
    jz .Lsw_none
    lea rcx, [rax+8]
    mov r11d, [r13+CT_STACK_BYTES]
    cmp rcx, r11
    ja .Lsw_none
    mov rax, [r10+rax]
    ret
.Lsw_none:
    xor eax, eax
    ret
/* A slot of edx bytes (padded to 8) read from rsi (none when 0) at r14; rax: its size. */
.Lread_slot:
    lea rax, [rdx+7]
    and rax, -8
    mov [r14+CAP_SLOT_SIZE], rax
    mov qword ptr [r14+CAP_SLOT_COUNT], 0
    test rsi, rsi
    jz .Lrsl_done
    call .Lread_mem
.Lrsl_done:
    mov rax, [r14+CAP_SLOT_SIZE]
    add rax, CAP_SLOT_HEAD
    ret
/* Copies rdx bytes at rsi of this process to r14+16, the count (or -errno) to [r14]:
 * process_vm_readv fails cleanly on a bad pointer where a load would crash the program.
 * Clobbers rax rcx rdx rsi rdi r11. */
.Lread_mem:
    push r8
    push r9
    push r10
    sub rsp, 32                             /* the local iovec, then the remote one */
    lea rax, [r14+CAP_SLOT_HEAD]
    mov [rsp], rax
    mov [rsp+8], rdx
    mov [rsp+16], rsi
    mov [rsp+24], rdx
    mov edi, [r12+CTL_PID]
    mov rsi, rsp
    mov edx, 1
    lea r10, [rsp+16]
    mov r8d, 1
    xor r9d, r9d
    mov eax, __NR_process_vm_readv          /* process_vm_readv */
    syscall
    mov [r14+CAP_SLOT_COUNT], rax
    add rsp, 32
    pop r10
    pop r9
    pop r8
    ret
/* inject_blob_hook: a function H whose entry calltrace hooked in a program it attached to was
 * called (libgcc's unwinder: tracer/inject/unwind.h says why it must see the real return
 * addresses; the dynamic linker's _dl_debug_state); H_stub jumped here. For the unwinder it does
 * in the program what the ptrace engine's stop there does in calltrace, so that it needs no
 * calltrace at all: a program calltrace left by dying (kill -9) unwinds through hooked calls as
 * well as one it is attached to.
 *
 *   at the entry (rax = &H_desc)          while here (rsp below the red zone)
 *   S     return address of H's caller    S      return address of H's caller
 *   S-8   the program's rax (H_stub)      S-8    rax
 *                                         S-16.. rdx rcx rsi rdi r8 r9 r10 r11 rbx rbp r12-r15
 *                                         S-128  H_reloc, the jump's target once restored
 *
 *   HOOK_UNHOOK (_Unwind_RaiseException, _Resume, _Resume_or_Rethrow, _ForcedUnwind), newest
 *       first: each shadow entry of a live frame (SH_SLOT >= S) whose slot holds a trampoline's
 *       exit gets its real return address back (a tail call's entry puts its caller's exit
 *       back, which the caller's entry, older, then replaces; an entry longjmp abandoned finds
 *       its slot reused, not an exit, and is left alone)
 *   HOOK_CATCH (__cxa_begin_catch, the handler's sp = S+8): the entries below that sp were
 *       unwound: popped, no exit (the drain ends them as it ends frames longjmp abandoned);
 *       each live one whose slot holds its real return address gets its exit back
 *   HOOK_WALK (_Unwind_Backtrace): as HOOK_UNHOOK, then every entry is popped: those calls
 *       return to their callers directly, and their returns are counted lost
 *   HOOK_LINKER (the dynamic linker's _dl_debug_state): the one that needs calltrace, to trace
 *       the library dlopen just mapped; asked as arch/ring_abi.h says, never waited for again
 *       once calltrace is gone
 *
 * The exits are found in the region's header (arch/ring_abi.h REGION_COPIES); registers and
 * rsp are as they were when H starts. */
inject_blob_hook:
    lea rsp, [rsp-8]
    push rdx
    push rcx
    push rsi
    push rdi
    push r8
    push r9
    push r10
    push r11
    push rbx
    push rbp
    push r12
    push r13
    push r14
    push r15
    mov rbx, rax                            /* rbx: H_desc */
    lea r13, [rsp+120]                      /* r13: S */
/* The dynamic linker calls _dl_debug_state before it has set up the thread's TLS (a program
 * that execs): fs may not be read before its base is known to be set. */
    sub rsp, 8
    mov eax, __NR_arch_prctl                /* arch_prctl(ARCH_GET_FS, rsp) */
    mov edi, TRAMP_ARCH_GET_FS
    mov rsi, rsp
    syscall
    pop rax
    test rax, rax
    jz .Lhook_out
    mov r12, qword ptr fs:[INJECT_TCB_SLOT] /* r12: the thread's control block */
    test r12, r12
    jz .Lhook_claim
.Lhook_block:
    cmp r12, 1
    jbe .Lhook_out                          /* untraced: none of its calls is hooked */
    cmp byte ptr [r12+CTL_BUSY], 0
    jne .Lhook_out                          /* a vfork child: its parent's calls */
    mov r8, [r12+CTL_REGION]                /* r8: the region's header */
    test r8, r8
    jz .Lhook_out
/* r14, r15: where the exits are in a copy (computed: not every assembler takes a difference of
 * two labels as an operand) */
    lea r14, [rip+inject_blob_exit]
    lea r15, [rip+inject_blob_exit_args]
    lea rax, [rip+inject_blob]
    sub r14, rax
    sub r15, rax
    mov eax, [rbx+DESC_FUNC]
    cmp eax, HOOK_CATCH
    je .Lhook_catch
    cmp eax, HOOK_LINKER
    je .Lhook_linker
    call .Lhook_unhook
    cmp dword ptr [rbx+DESC_FUNC], HOOK_WALK
    jne .Lhook_out
    mov rax, [r12+CTL_SHADOW_TOP]           /* HOOK_WALK: every entry goes, its return lost */
    sub rax, [r12+CTL_SHADOW_BASE]
    shr rax, 5                              /* SHADOW_ENTRY_SIZE */
    add [r12+CTL_LOST_RETURNS], rax
    mov rax, [r12+CTL_SHADOW_BASE]
    mov [r12+CTL_SHADOW_TOP], rax
.Lhook_out:
    mov r11, [rbx+DESC_RELOC]
    mov [rsp-8], r11                        /* S-128: still within the red zone at the jump */
    pop r15
    pop r14
    pop r13
    pop r12
    pop rbp
    pop rbx
    pop r11
    pop r10
    pop r9
    pop r8
    pop rdi
    pop rsi
    pop rcx
    pop rdx
    pop rax
    jmp qword ptr [rsp-128]
/* HOOK_LINKER: request r13 = CTL_HOOK_ACK + 1, calltrace woken, then futex waits of
 * RING_WAIT_NS on CTL_HOOK_ACK until it is served, or calltrace's progress word (r15, last seen
 * r14) stood still for RING_WAIT_TRIES of them (r9): REGION_GONE, and H goes on alone. */
.Lhook_linker:
    cmp qword ptr [r8+REGION_GONE], 0
    jne .Lhook_out
    mov rbp, r8
    mov r13, [r12+CTL_HOOK_ACK]
    inc r13
    mov [r12+CTL_HOOK_REQ], r13
    mov r15, [r12+CTL_PROGRESS]
    mov r14, [r15]
    mov r9d, RING_WAIT_TRIES
    mov eax, __NR_kill                      /* kill(calltrace, SIGCHLD): it looks */
    mov edi, [r12+CTL_CONSUMER]
    mov esi, TRAMP_SIGCHLD
    syscall
.Llinker_wait:
    cmp [r12+CTL_HOOK_ACK], r13
    jae .Lhook_out
    mov rax, [r15]
    cmp rax, r14
    je .Llinker_count
    mov r14, rax
    mov r9d, RING_WAIT_TRIES
.Llinker_count:
    dec r9d
    js .Llinker_gone
    sub rsp, 16                             /* the timespec */
    mov qword ptr [rsp], 0
    mov qword ptr [rsp+8], RING_WAIT_NS
    mov eax, __NR_futex                     /* futex(&ack, FUTEX_WAIT, request - 1, 1 ms) */
    lea rdi, [r12+CTL_HOOK_ACK]
    xor esi, esi
    lea rdx, [r13-1]
    mov r10, rsp
    syscall
    add rsp, 16
    jmp .Llinker_wait
.Llinker_gone:
    mov qword ptr [rbp+REGION_GONE], 1
    jmp .Lhook_out
/* No control block yet: the main thread takes the one reserved for it, as .Lentry_noslot. */
.Lhook_claim:
    mov rcx, [rip+inject_blob_main_ctl]
    mov r12d, 1
    xchg r12, [rcx]
    mov qword ptr fs:[INJECT_TCB_SLOT], r12
    jmp .Lhook_block
.Lhook_catch:
    lea r13, [r13+8]                        /* the handler's frame */
    mov rsi, [r12+CTL_SHADOW_TOP]
.Lcatch_pop:
    cmp rsi, [r12+CTL_SHADOW_BASE]
    jbe .Lcatch_popped
    cmp [rsi-SHADOW_ENTRY_SIZE+SH_SLOT], r13
    jae .Lcatch_popped
    sub rsi, SHADOW_ENTRY_SIZE
    jmp .Lcatch_pop
.Lcatch_popped:
    mov [r12+CTL_SHADOW_TOP], rsi
.Lcatch_next:
    sub rsi, SHADOW_ENTRY_SIZE
    cmp rsi, [r12+CTL_SHADOW_BASE]
    jb .Lhook_out
    mov r10, [rsi+SH_SLOT]
    cmp r10, r13
    jb .Lcatch_next
    mov rdi, [rsi+SH_RET]
    call .Lis_exit                          /* a tail call's: its caller's entry hooks the slot */
    test eax, eax
    jnz .Lcatch_next
    cmp [r10], rdi                          /* unhooked at the throw, and still so */
    jne .Lcatch_next
    mov rdx, [rsi+SH_FUNC]
    call .Lexit_of
    test rax, rax
    jz .Lcatch_next
    mov [r10], rax
    jmp .Lcatch_next
/* .Lhook_unhook: the live entries above S (r13) of the block r12 get their real return
 * addresses back, newest first. Clobbers rax rcx rdx rsi rdi r9 r10. */
.Lhook_unhook:
    mov rsi, [r12+CTL_SHADOW_TOP]
.Lunhook_next:
    sub rsi, SHADOW_ENTRY_SIZE
    cmp rsi, [r12+CTL_SHADOW_BASE]
    jb .Lunhook_done
    mov r10, [rsi+SH_SLOT]
    cmp r10, r13
    jb .Lunhook_next
    mov rdi, [r10]
    call .Lis_exit
    test eax, eax
    jz .Lunhook_next
    mov rax, [rsi+SH_RET]
    mov [r10], rax
    jmp .Lunhook_next
.Lunhook_done:
    ret
/* .Lis_exit: eax 1 when rdi is the exit of a copy of the blob the header r8 lists (r14, r15: the
 * exits' offsets in a copy), else 0. Clobbers rcx r9. */
.Lis_exit:
    mov rcx, [r8+REGION_COPIES]
.Lie_next:
    dec rcx
    js .Lie_no
    mov r9, rcx
    shl r9, 4                               /* COPY_SIZE */
    mov rax, rdi
    sub rax, [r8+r9+REGION_COPY+COPY_BASE]
    cmp rax, r14
    je .Lie_yes
    cmp rax, r15
    jne .Lie_next
.Lie_yes:
    mov eax, 1
    ret
.Lie_no:
    xor eax, eax
    ret
/* .Lexit_of: rax = the exit a call of the shadow entry's function word rdx returns through (the
 * -A/-R exit for bit SH_FUNC_TABLE_BIT), from the header r8 and the offsets r14, r15; 0 when no
 * copy lists it.
 * Clobbers rcx r9. */
.Lexit_of:
    mov rcx, [r8+REGION_COPIES]
.Leo_next:
    dec rcx
    js .Leo_none
    mov r9, rcx
    shl r9, 4
    lea r9, [r8+r9+REGION_COPY]
    cmp edx, [r9+COPY_FIRST_FUNC]
    jb .Leo_next
    cmp edx, [r9+COPY_END_FUNC]
    jae .Leo_next
    mov rax, [r9+COPY_BASE]
    bt rdx, SH_FUNC_TABLE_BIT
    jc .Leo_args
    add rax, r14
    ret
.Leo_args:
    add rax, r15
    ret
.Leo_none:
    xor eax, eax
    ret
.p2align 3
inject_blob_main_ctl:
    .quad 0
inject_blob_end:
.p2align 3
.globl inject_blob_size, inject_blob_entry_off, inject_blob_exit_off
.globl inject_blob_main_ctl_off, inject_blob_entry_args_off, inject_blob_exit_args_off
inject_blob_size: .quad inject_blob_end - inject_blob
inject_blob_entry_off: .quad inject_blob_entry - inject_blob
inject_blob_exit_off: .quad inject_blob_exit - inject_blob
inject_blob_main_ctl_off: .quad inject_blob_main_ctl - inject_blob
inject_blob_entry_args_off: .quad inject_blob_entry_args - inject_blob
inject_blob_exit_args_off: .quad inject_blob_exit_args - inject_blob
.globl inject_blob_hook_off
inject_blob_hook_off: .quad inject_blob_hook - inject_blob
.att_syntax prefix
.popsection

/* The blob needs no executable stack. */
.section .note.GNU-stack, "", @progbits
