/* Many small functions close together, to attach to, have calltrace SIGKILLed while they are
 * patched, and attach to again (tests/e2e/114). Each entry then starts with a stale jump to a
 * stub of the dead calltrace, and the 4 bytes of each jump's displacement are whatever the
 * distance to its stub is: among 4096 of them, some displacement bytes read as a 2-byte jcc
 * whose target is another stale jump, the shape of a hop. A calltrace that took those bytes for
 * a hop and put the file's 2 bytes back over them tore the jump in two, and the next call of
 * that function ran the torn half (SIGTRAP, SIGSEGV or a wrong result).
 *
 * A thread calls every function, round after round, and checks the sum against the same
 * arithmetic done inline; it stops when a line arrives on stdin, prints "rounds ok" when every
 * round was right, and exits 0 only then. */
#include "common.h"
#include <pthread.h>
#include <stdlib.h>

#define F(n)                                                                                       \
    TRACED unsigned long f##n(unsigned long x)                                                     \
    {                                                                                              \
        return x * (n + 3) + n;                                                                    \
    }
#define F4(n) F(n##0) F(n##1) F(n##2) F(n##3)
#define F16(n) F4(n##0) F4(n##1) F4(n##2) F4(n##3)
#define F64(n) F16(n##0) F16(n##1) F16(n##2) F16(n##3)
#define F256(n) F64(n##0) F64(n##1) F64(n##2) F64(n##3)
#define F1024(n) F256(n##0) F256(n##1) F256(n##2) F256(n##3)
typedef unsigned long (*fn)(unsigned long);

/* f1000000 ... f1333333: 1, then 6 base-4 digits, 4096 functions, and a table of them. */
// clang-format off
F1024(10) F1024(11) F1024(12) F1024(13)
#undef F
#define F(n) f##n,
static const fn table[] = {F1024(10) F1024(11) F1024(12) F1024(13)};
// clang-format on
#define NFUNCS (sizeof(table) / sizeof(table[0]))

/* The n of table[i]: its name read as a decimal number, 1 then i's 6 base-4 digits. */
static unsigned long literal_of(size_t i)
{
    unsigned long lit = 1;
    for (int d = 5; d >= 0; d--)
        lit = lit * 10 + ((i >> (2 * d)) & 3);
    return lit;
}

static volatile int stopping;
static unsigned long rounds, bad_rounds;

static void *caller(void *arg)
{
    (void)arg;
    while (!stopping) {
        unsigned long traced = 0, plain = 0, x = rounds;
        for (size_t i = 0; i < NFUNCS; i++) {
            unsigned long n = literal_of(i);
            traced += table[i](x + i);
            plain += (x + i) * (n + 3) + n;
        }
        if (traced != plain)
            COUNT(bad_rounds);
        COUNT(rounds);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, caller, NULL) != 0)
        return 2;
    printf("ready\n");
    fflush(stdout);
    char line[64];
    if (!fgets(line, sizeof(line), stdin))
        line[0] = '\0';
    stopping = 1;
    pthread_join(t, NULL);
    printf("rounds %lu bad %lu\n", rounds, bad_rounds);
    if (bad_rounds || !rounds)
        return 1;
    printf("rounds ok\n");
    return 0;
}
