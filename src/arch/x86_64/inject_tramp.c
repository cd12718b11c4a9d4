/* The inject engine's trampolines (see inject_tramp.h for the picture). Assembly, not C: the
 * fast path runs on every traced call, may not call anything, and must save exactly the
 * registers it touches. It sits in calltrace's .rodata and is copied into the program; it only
 * addresses its own data rip-relatively, so it runs wherever it is copied. */
#include "arch/x86_64/inject_tramp.h"

#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x)

/* clang-format off */
__asm__(
    ".pushsection .rodata.calltrace_inject, \"a\"\n"
    ".intel_syntax noprefix\n"
    ".p2align 6\n"
    ".globl inject_blob\n"
    "inject_blob:\n"
    /* Entry. rax: the function's descriptor; [rsp-8]: the program's rax; [rsp]: the return
     * address, in its slot S = rsp. Everything below rsp is the red zone the callee owns. */
    "inject_blob_entry:\n"
    "    mov [rsp-16], rdx\n"
    "    mov [rsp-24], rcx\n"
    "    mov [rsp-32], r11\n"
    "    mov [rsp-40], r10\n"
    "    mov r11, [rax]\n"                       /* the relocated start of the function */
    "    mov [rsp-48], r11\n"
    "    mov rcx, qword ptr fs:[" STR(INJECT_TCB_SLOT) "]\n"
    "    cmp rcx, 1\n"
    "    jbe .Lentry_noslot\n"
    ".Lentry_slot:\n"
    "    cmp byte ptr [rcx+" STR(CTL_BUSY) "], 0\n"
    "    jne .Lentry_drop\n"                     /* a vfork child on its parent's block */
    /* Signal handlers may call traced functions anywhere in here: every shared index is
     * reserved by one instruction (xadd: a signal lands before or after it) before the entry
     * or event it reserves is written, and a handler's calls end before it returns. */
    "    mov edx, " STR(SHADOW_ENTRY_SIZE) "\n"
    "    xadd [rcx+" STR(CTL_SHADOW_TOP) "], rdx\n"
    "    cmp rdx, [rcx+" STR(CTL_SHADOW_END) "]\n"
    "    jae .Lentry_shadow_full\n"
    "    mov r11, [rsp]\n"
    "    mov [rdx], r11\n"                       /* shadow: real return address */
    "    mov [rdx+8], rsp\n"                     /*         its slot */
    "    mov r10d, [rax+8]\n"
    "    mov [rdx+16], r10\n"                    /*         function id */
    "    mov rdx, [rcx+" STR(CTL_HEAD) "]\n"
    "    sub rdx, [rcx+" STR(CTL_TAIL) "]\n"
    "    cmp rdx, [rcx+" STR(CTL_LIMIT) "]\n"
    "    ja .Lentry_ring_wait\n"
    ".Lentry_ring_ok:\n"
    "    mov r10d, " STR(EVENT_SIZE) "\n"
    "    xadd [rcx+" STR(CTL_HEAD) "], r10\n"    /* r10: the event's position */
    "    mov rdx, r10\n"
    "    and rdx, [rcx+" STR(CTL_MASK) "]\n"
    "    add rdx, [rcx+" STR(CTL_RING) "]\n"
    "    shr r10, 5\n"                           /* its stamp: position / event size + 1 */
    "    inc r10d\n"
    "    mov [rdx+8], rsp\n"
    "    mov [rdx+16], r11\n"
    "    mov r11d, [rax+8]\n"                    /* func; the top bit clear: an entry */
    "    mov [rdx+24], r11d\n"
    "    mov r11, rdx\n"
    "    rdtsc\n"
    "    shl rdx, 32\n"
    "    or rax, rdx\n"
    "    mov [r11], rax\n"
    /* x86 keeps stores in order: the stamp, last, commits the event. */
    "    mov [r11+28], r10d\n"
    ".Lentry_hook:\n"
    "    mov rax, [rsp-8]\n"
    "    mov rdx, [rsp-16]\n"
    "    mov rcx, [rsp-24]\n"
    "    mov r11, [rsp-32]\n"
    "    mov r10, [rsp-40]\n"
    "    lea rsp, [rsp+8]\n"
    "    call qword ptr [rsp-56]\n"              /* S-48: the relocated start */
    /* Exit: the function returned here, rsp = S+8; its results are in rax, rdx, xmm0/1. */
    "inject_blob_exit:\n"
    "    mov [rsp-16], rax\n"
    "    mov [rsp-24], rdx\n"
    "    mov [rsp-32], rcx\n"
    "    mov [rsp-40], r11\n"
    "    mov [rsp-48], r10\n"
    "    mov rcx, qword ptr fs:[" STR(INJECT_TCB_SLOT) "]\n"
    "    lea r11, [rsp-8]\n"
    "    mov rdx, [rcx+" STR(CTL_SHADOW_TOP) "]\n"
    /* The newest entry of this slot is this call; entries above it were abandoned (longjmp,
     * a handler left by siglongjmp): they go with it. */
    ".Lexit_find:\n"
    "    sub rdx, " STR(SHADOW_ENTRY_SIZE) "\n"
    "    cmp rdx, [rcx+" STR(CTL_SHADOW_BASE) "]\n"
    "    jb .Lexit_lost\n"
    "    cmp [rdx+8], r11\n"
    "    jne .Lexit_find\n"
    "    mov r10, [rdx]\n"
    "    mov [rsp-56], r10\n"                    /* the real return address */
    "    mov eax, [rdx+16]\n"
    "    mov [rsp-64], rax\n"                    /* the function id */
    /* read before the pop: a handler may push over the entry right after it */
    "    mov [rcx+" STR(CTL_SHADOW_TOP) "], rdx\n"
    "    mov rax, [rcx+" STR(CTL_HEAD) "]\n"
    "    sub rax, [rcx+" STR(CTL_TAIL) "]\n"
    "    cmp rax, [rcx+" STR(CTL_LIMIT) "]\n"
    "    ja .Lexit_ring_wait\n"
    ".Lexit_ring_ok:\n"
    "    mov r10d, " STR(EVENT_SIZE) "\n"
    "    xadd [rcx+" STR(CTL_HEAD) "], r10\n"
    "    mov rax, r10\n"
    "    and rax, [rcx+" STR(CTL_MASK) "]\n"
    "    add rax, [rcx+" STR(CTL_RING) "]\n"
    "    shr r10, 5\n"
    "    inc r10d\n"
    "    mov [rax+8], r11\n"
    "    mov rdx, [rsp-56]\n"
    "    mov [rax+16], rdx\n"
    "    mov rdx, [rsp-64]\n"
    "    bts edx, 31\n"                          /* the top bit: an exit */
    "    mov [rax+24], edx\n"
    "    mov r11, rax\n"
    "    rdtsc\n"
    "    shl rdx, 32\n"
    "    or rax, rdx\n"
    "    mov [r11], rax\n"
    "    mov [r11+28], r10d\n"
    ".Lexit_done:\n"
    "    mov rax, [rsp-16]\n"
    "    mov rdx, [rsp-24]\n"
    "    mov rcx, [rsp-32]\n"
    "    mov r11, [rsp-40]\n"
    "    mov r10, [rsp-48]\n"
    "    jmp qword ptr [rsp-56]\n"
    ".Lexit_ring_wait:\n"                       /* below the red zone the stub uses */
    "    lea rsp, [rsp-128]\n"
    "    call .Lring_wait\n"
    "    lea rsp, [rsp+128]\n"
    "    test eax, eax\n"
    "    jz .Lexit_ring_ok\n"
    ".Lexit_ring_full:\n"                       /* the call stays recorded: it ends later */
    "    inc qword ptr [rcx+" STR(CTL_LOST_RETURNS) "]\n"
    "    jmp .Lexit_done\n"
    ".Lexit_lost:\n"
    "    ud2\n"                                  /* no entry for this slot: cannot happen */
    /* Slow paths of the entry. */
    ".Lentry_ring_wait:\n"
    "    lea rsp, [rsp-128]\n"
    "    push rax\n"
    "    call .Lring_wait\n"
    "    mov edx, eax\n"
    "    pop rax\n"
    "    lea rsp, [rsp+128]\n"
    "    test edx, edx\n"
    "    jz .Lentry_ring_ok\n"
    ".Lentry_ring_full:\n"                       /* hooked all the same, so returns pair up */
    "    inc qword ptr [rcx+" STR(CTL_DROPS) "]\n"
    "    jmp .Lentry_hook\n"
    ".Lentry_shadow_full:\n"
    "    sub qword ptr [rcx+" STR(CTL_SHADOW_TOP) "], " STR(SHADOW_ENTRY_SIZE) "\n"
    ".Lentry_drop:\n"
    "    inc qword ptr [rcx+" STR(CTL_DROPS) "]\n"
    ".Lentry_untraced:\n"                        /* run the function as if never patched */
    "    mov rax, [rsp-8]\n"
    "    mov rdx, [rsp-16]\n"
    "    mov rcx, [rsp-24]\n"
    "    mov r11, [rsp-32]\n"
    "    mov r10, [rsp-40]\n"
    "    jmp qword ptr [rsp-48]\n"
    /* No control block yet: the main thread takes the one reserved for it (every other thread
     * gets its own from calltrace before it runs); 1 marks a thread left untraced. */
    ".Lentry_noslot:\n"
    "    test rcx, rcx\n"
    "    jnz .Lentry_untraced\n"
    "    mov rcx, [rip+inject_blob_main_ctl]\n" /* the claim word, in the shared region */
    "    mov edx, 1\n"
    "    xchg rdx, [rcx]\n"
    "    mov qword ptr fs:[" STR(INJECT_TCB_SLOT) "], rdx\n"
    "    mov rcx, rdx\n"
    "    cmp rcx, 1\n"
    "    jbe .Lentry_untraced\n"
    "    jmp .Lentry_slot\n"
    /* The ring of the control block in rcx is full: wake calltrace and wait for room. Returns
     * eax 0 when there is room, 1 when the call is to be dropped. Every register but rax and
     * the flags is preserved. */
    ".Lring_wait:\n"
    "    push rdi\n"
    "    push rsi\n"
    "    push rdx\n"
    "    push r8\n"
    "    push r9\n"
    "    push r10\n"
    "    push r11\n"
    "    push rcx\n"
    "    push rbx\n"
    "    mov rbx, rcx\n"
    "    cmp byte ptr [rbx+" STR(CTL_GAVE_UP) "], 0\n"
    "    jne .Lwait_drop\n"
    "    sub rsp, 24\n"                          /* timespec, then the tries left */
    "    mov qword ptr [rsp], 0\n"
    "    mov qword ptr [rsp+8], " STR(RING_WAIT_NS) "\n"
    "    mov qword ptr [rsp+16], " STR(RING_WAIT_TRIES) "\n"
    ".Lwait_loop:\n"
    "    dec qword ptr [rsp+16]\n"
    "    js .Lwait_give_up\n"
    "    mov eax, 62\n"                          /* kill(calltrace, SIGCHLD): it drains */
    "    mov edi, [rbx+" STR(CTL_CONSUMER) "]\n"
    "    mov esi, 17\n"
    "    syscall\n"
    "    mov edx, [rbx+" STR(CTL_TAIL) "]\n"     /* the futex word: the tail's low half */
    "    mov rax, [rbx+" STR(CTL_HEAD) "]\n"
    "    sub rax, [rbx+" STR(CTL_TAIL) "]\n"
    "    cmp rax, [rbx+" STR(CTL_LIMIT) "]\n"
    "    jbe .Lwait_room\n"
    "    mov eax, 202\n"                         /* futex(&tail, FUTEX_WAIT, edx, 1 ms) */
    "    lea rdi, [rbx+" STR(CTL_TAIL) "]\n"
    "    xor esi, esi\n"
    "    mov r10, rsp\n"
    "    syscall\n"
    "    mov rax, [rbx+" STR(CTL_HEAD) "]\n"
    "    sub rax, [rbx+" STR(CTL_TAIL) "]\n"
    "    cmp rax, [rbx+" STR(CTL_LIMIT) "]\n"
    "    ja .Lwait_loop\n"
    ".Lwait_room:\n"
    "    add rsp, 24\n"
    "    xor eax, eax\n"
    "    jmp .Lwait_out\n"
    ".Lwait_give_up:\n"
    "    mov byte ptr [rbx+" STR(CTL_GAVE_UP) "], 1\n"
    "    add rsp, 24\n"
    ".Lwait_drop:\n"
    "    mov eax, 1\n"
    ".Lwait_out:\n"
    "    pop rbx\n"
    "    pop rcx\n"
    "    pop r11\n"
    "    pop r10\n"
    "    pop r9\n"
    "    pop r8\n"
    "    pop rdx\n"
    "    pop rsi\n"
    "    pop rdi\n"
    "    ret\n"
    ".p2align 3\n"
    "inject_blob_main_ctl:\n"
    "    .quad 0\n"
    "inject_blob_end:\n"
    ".p2align 3\n"
    ".globl inject_blob_size, inject_blob_entry_off, inject_blob_exit_off\n"
    ".globl inject_blob_main_ctl_off\n"
    "inject_blob_size: .quad inject_blob_end - inject_blob\n"
    "inject_blob_entry_off: .quad inject_blob_entry - inject_blob\n"
    "inject_blob_exit_off: .quad inject_blob_exit - inject_blob\n"
    "inject_blob_main_ctl_off: .quad inject_blob_main_ctl - inject_blob\n"
    ".att_syntax prefix\n"
    ".popsection\n");
/* clang-format on */

static void put_rel32(uint8_t *at, uint64_t from_end, uint64_t target)
{
    int32_t rel = (int32_t)(int64_t)(target - from_end);
    memcpy(at, &rel, 4);
}

void inject_func_stub(uint8_t *code, uint64_t at, uint64_t blob_entry, uint32_t func)
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
    memcpy(code + FUNC_DESC_OFF, &reloc, 8);
    memcpy(code + FUNC_DESC_OFF + 8, &func, 4);
    memset(code + FUNC_DESC_OFF + 12, 0, 4);
}

void inject_entry_jump(uint8_t *bytes, size_t len, uint64_t addr, uint64_t stub)
{
    memset(bytes, 0xcc, len);
    bytes[0] = 0xe9;
    put_rel32(bytes + 1, addr + 5, stub);
}
