/* The machine as the rest of calltrace sees it: the registers of a stopped thread by role, the
 * breakpoint instruction and the system call gadget. Only src/arch/ names x86_64 registers or
 * opcodes; everything above it asks for "the program counter" or "the first argument".
 *
 * Registers by role (System V AMD64 ABI, Linux system call convention):
 *
 *   role                   register        role                   register
 *   program counter        rip             syscall number in      rax
 *   stack pointer          rsp             syscall being run      orig_rax (-1: none)
 *   integer result         rax (, rdx)     syscall arguments      rdi rsi rdx r10 r8 r9
 *   integer arguments      rdi rsi rdx rcx r8 r9   thread pointer (TLS)   fs_base
 *
 * Instruction decoding for the patcher is in insn.h, relocation of the instructions a
 * breakpoint or a patch displaces in relocate.h, the inject backend's stubs in inject_tramp.h.
 */
#ifndef CALLTRACE_ARCH_X86_64_MACHINE_H
#define CALLTRACE_ARCH_X86_64_MACHINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

/* A stopped thread's general registers, as PTRACE_GETREGS gives them. */
typedef struct user_regs_struct arch_regs;
/* Its floating-point and vector registers, as PTRACE_GETFPREGS gives them. */
typedef struct user_fpregs_struct arch_fpregs;

/* int3: one byte, and a thread that runs it stops with the program counter just past it. */
#define ARCH_BREAKPOINT_BYTE 0xcc
#define ARCH_BREAKPOINT_LEN 1
/* "syscall; int3": a thread sent here runs one system call and stops. */
#define ARCH_SYSCALL_GADGET                                                                        \
    {                                                                                              \
        0x0f, 0x05, 0xcc                                                                           \
    }
#define ARCH_SYSCALL_GADGET_LEN 3
/* The instruction a thread interrupted in a system call restarts: syscall is 2 bytes. */
#define ARCH_SYSCALL_INSN_LEN 2
/* Below the stack pointer a function may keep data without moving it (the ABI's red zone). */
#define ARCH_RED_ZONE 128
/* The number of integer arguments passed in registers, and of integer result registers. */
#define ARCH_INT_ARG_REGS 6
#define ARCH_INT_RESULT_REGS 2
/* The stack pointer's alignment at a call (before it pushes the return address). */
#define ARCH_STACK_ALIGN 16
/* A call pushes the return address: at a function's entry it is at sp, and after the return
 * the stack pointer is this much above the entry's. */
#define ARCH_RETURN_ADDR_SIZE 8
/* The longest instruction there is: a decoder given this many bytes never reads past them. */
#define ARCH_MAX_INSN_LEN 15
/* A jump that reaches +-2 GiB (jmp rel32): what a patched function entry starts with. */
#define ARCH_JUMP_LEN 5

/* Where PTRACE_POKEUSER writes the program counter. */
#define ARCH_PC_USER_OFFSET offsetof(struct user_regs_struct, rip)

static inline uint64_t arch_pc(const arch_regs *r)
{
    return r->rip;
}
static inline void arch_set_pc(arch_regs *r, uint64_t pc)
{
    r->rip = pc;
}
static inline uint64_t arch_sp(const arch_regs *r)
{
    return r->rsp;
}
static inline void arch_set_sp(arch_regs *r, uint64_t sp)
{
    r->rsp = sp;
}
/* The function's integer result (the first of rax:rdx). */
static inline uint64_t arch_retval(const arch_regs *r)
{
    return r->rax;
}
/* The i-th integer result register (0-based, i < ARCH_INT_RESULT_REGS) at a return. */
static inline uint64_t arch_int_result(const arch_regs *r, unsigned i)
{
    return i == 0 ? r->rax : r->rdx;
}
/* The thread pointer: the base of the thread's TLS block (glibc's TCB). */
static inline uint64_t arch_tls_base(const arch_regs *r)
{
    return r->fs_base;
}
/* The system call the thread is in, or a negative number when it is in none. */
static inline int64_t arch_syscall_nr(const arch_regs *r)
{
    return (int64_t)r->orig_rax;
}

/* The vector argument registers (xmm0-7 at an entry, xmm0-1 at a return; 16 bytes each). */
static inline const uint8_t *arch_vector_regs(const arch_fpregs *fp)
{
    return (const uint8_t *)fp->xmm_space;
}
/* The top of the x87 stack (st(0), 16 bytes): where a long double result is. */
static inline const uint8_t *arch_x87_top(const arch_fpregs *fp)
{
    return (const uint8_t *)fp->st_space;
}

/* The i-th integer argument (0-based, i < ARCH_INT_ARG_REGS) at a function's entry. */
static inline uint64_t arch_int_arg(const arch_regs *r, unsigned i)
{
    switch (i) {
    case 0:
        return r->rdi;
    case 1:
        return r->rsi;
    case 2:
        return r->rdx;
    case 3:
        return r->rcx;
    case 4:
        return r->r8;
    default:
        return r->r9;
    }
}

/* The i-th argument of the system call the thread is entering or in (0-based, i < 6): the
 * function's registers, but r10 for rcx (the syscall instruction overwrites rcx). */
static inline uint64_t arch_syscall_arg(const arch_regs *r, unsigned i)
{
    return i == 3 ? r->r10 : arch_int_arg(r, i);
}

/* Sets r up to run system call nr with args from pc; the kernel must not restart an
 * interrupted call there (orig_rax -1). */
static inline void arch_setup_syscall(arch_regs *r, long nr, const uint64_t args[6], uint64_t pc)
{
    r->rax = (uint64_t)nr;
    r->orig_rax = (uint64_t)-1;
    r->rdi = args[0];
    r->rsi = args[1];
    r->rdx = args[2];
    r->r10 = args[3];
    r->r8 = args[4];
    r->r9 = args[5];
    r->rip = pc;
}

/* The stack pointer for a call made for calltrace in a thread stopped with stack pointer sp:
 * below its red zone and 64 more bytes, aligned as a call instruction leaves it (16 bytes, less
 * the return address), so that the return address goes at it. */
static inline uint64_t arch_call_sp(uint64_t sp)
{
    return ((sp - ARCH_RED_ZONE - 64) & ~(uint64_t)0xf) - 8;
}

/* Sets r up to call func with no arguments, returning to a return address the caller pushes
 * at sp (already below the red zone and aligned as a call leaves it). */
static inline void arch_setup_call(arch_regs *r, uint64_t func, uint64_t sp)
{
    r->rsp = sp;
    r->rip = func;
    r->rax = 0; /* no vector registers used by a variadic callee */
    r->orig_rax = (uint64_t)-1;
}

#endif
