/* Functions the inject engine cannot patch with a 5-byte jump, written in assembly so that their
 * bytes are exactly these, mixed and nested with ordinary (patchable) C functions:
 *   short_lea   4 bytes, short_mov (3 bytes) right after it, then countdown: too short, and
 *               no padding after them
 *   countdown   its first instruction is the head of its own loop (a jump back to the entry)
 *   branch_rec  a branch lands at offset 2, inside the bytes a jump would cover; it calls
 *               mixed_rec (C), which calls it back: recursion through both kinds
 *   via_branch  the same shape; calls the function it is given (longjmp goes across it)
 *   tail_short  patchable, and tail-calls short_mov: the breakpointed callee enters with the
 *               patched caller's return slot
 * The asm functions cannot count their own calls: their C callers count each call they make, so
 * "count NAME N" is still the program's own count. Run from 4 threads and main, each the
 * same calls (so that each thread's tree is the same whichever order the threads show in).
 *
 * unpatchable [ROUNDS] */
#include <pthread.h>
#include <setjmp.h>
#include <stdlib.h>

#include "common.h"

/* clang-format off */
__asm__(
    ".intel_syntax noprefix\n"
    ".text\n"
    ".globl short_lea, short_mov, countdown, branch_rec, via_branch, tail_short\n"
    ".type short_lea, @function\n"
    "short_lea:\n"                  /* int short_lea(int x): x + 1 */
    "    lea eax, [rdi+1]\n"
    "    ret\n"
    ".size short_lea, .-short_lea\n"
    ".type short_mov, @function\n"
    "short_mov:\n"                  /* int short_mov(int x): x */
    "    mov eax, edi\n"
    "    ret\n"
    ".size short_mov, .-short_mov\n"
    ".type countdown, @function\n"
    "countdown:\n"                  /* int countdown(int n >= 1): 0, after n turns */
    "    sub edi, 1\n"
    "    jnz countdown\n"
    "    mov eax, edi\n"
    "    ret\n"
    ".size countdown, .-countdown\n"
    ".p2align 4\n"
    ".type branch_rec, @function\n"
    "branch_rec:\n"                 /* int branch_rec(int n): n > 0 ? mixed_rec(n - 1) : 0 */
    "    xor eax, eax\n"
    "1:  test edi, edi\n"           /* offset 2: the loop below comes back here */
    "    jle 2f\n"
    "    sub rsp, 8\n"
    "    sub edi, 1\n"
    "    call mixed_rec\n"
    "    add rsp, 8\n"
    "    xor edi, edi\n"
    "    jmp 1b\n"
    "2:  ret\n"
    ".size branch_rec, .-branch_rec\n"
    ".p2align 4\n"
    ".type via_branch, @function\n"
    "via_branch:\n"                 /* void via_branch(void (*fn)(void)): fn() once */
    "    xor eax, eax\n"
    "1:  test eax, eax\n"           /* offset 2 */
    "    jnz 2f\n"
    "    sub rsp, 8\n"
    "    call rdi\n"
    "    add rsp, 8\n"
    "    mov eax, 1\n"
    "    jmp 1b\n"
    "2:  ret\n"
    ".size via_branch, .-via_branch\n"
    ".p2align 4\n"
    ".type tail_short, @function\n"
    "tail_short:\n"                 /* int tail_short(int x): short_mov(x + 1), a tail call */
    "    nop dword ptr [rax+rax]\n"
    "    add edi, 1\n"
    "    jmp short_mov\n"
    ".size tail_short, .-tail_short\n"
    ".att_syntax prefix\n");
/* clang-format on */

int short_lea(int x);
int short_mov(int x);
int countdown(int n);
int branch_rec(int n);
void via_branch(void (*fn)(void));
int tail_short(int x);

static unsigned long n_short_lea, n_short_mov, n_countdown, n_branch_rec, n_via_branch,
    n_tail_short, n_mixed_rec, n_leaf, n_jumper, n_deep, n_worker, n_round;
static __thread jmp_buf env;
static volatile int sink;

TRACED int leaf(int x)
{
    COUNT(n_leaf);
    COUNT(n_countdown);
    return countdown(x % 7 + 1) + x;
}

/* Recursion through both kinds: mixed_rec -> branch_rec -> mixed_rec ... */
TRACED int mixed_rec(int n)
{
    COUNT(n_mixed_rec);
    COUNT(n_short_lea);
    int r = short_lea(leaf(n));
    if (n <= 0)
        return r;
    COUNT(n_branch_rec);
    return r + branch_rec(n);
}

TRACED void deep(void)
{
    COUNT(n_deep);
    sink = leaf(3);
    longjmp(env, 1);
}

/* longjmp from deep (patched) across via_branch (a breakpoint) back here. */
TRACED int jumper(void)
{
    COUNT(n_jumper);
    if (setjmp(env) == 0) {
        COUNT(n_via_branch);
        via_branch(deep);
        return 0;
    }
    return 1;
}

TRACED void round_of_calls(int i)
{
    COUNT(n_round);
    COUNT(n_short_mov);
    COUNT(n_short_mov); /* tail_short's */
    COUNT(n_tail_short);
    sink = short_mov(i) + tail_short(i);
    sink = mixed_rec(i % 4);
    sink = jumper();
}

static int rounds = 200;

TRACED void *worker(void *arg)
{
    (void)arg;
    COUNT(n_worker);
    for (int i = 0; i < rounds; i++)
        round_of_calls(i);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        rounds = atoi(argv[1]);
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    worker(NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    PRINT_COUNT("short_lea", n_short_lea);
    PRINT_COUNT("short_mov", n_short_mov);
    PRINT_COUNT("countdown", n_countdown);
    PRINT_COUNT("branch_rec", n_branch_rec);
    PRINT_COUNT("via_branch", n_via_branch);
    PRINT_COUNT("tail_short", n_tail_short);
    PRINT_COUNT("mixed_rec", n_mixed_rec);
    PRINT_COUNT("leaf", n_leaf);
    PRINT_COUNT("jumper", n_jumper);
    PRINT_COUNT("deep", n_deep);
    PRINT_COUNT("worker", n_worker);
    PRINT_COUNT("round_of_calls", n_round);
    return 0;
}
