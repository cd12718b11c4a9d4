/* Bad pointers for calltrace -A (tests/e2e/62): a char * into unmapped memory, a string that
 * runs into an unmapped page without its NUL, a buffer given with its length, and a function
 * called many times (--max-call-dirs). */
#include <string.h>
#include <sys/mman.h>

#include "common.h"

volatile long sink;

TRACED int show(const char *s)
{
    sink += (long)s;
    return 1;
}
TRACED int block(const unsigned char *buf, unsigned long len)
{
    sink += (long)buf + (long)len;
    return (int)len;
}
TRACED int tick(int i)
{
    return i + 1;
}

int main(void)
{
    long page = 4096;
    char *two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (two == MAP_FAILED)
        return 1;
    munmap(two + page, page); /* the second page is now a hole */
    memset(two, 'a', page);   /* no NUL up to the hole */
    show("fine");
    show((const char *)(two + page)); /* unmapped */
    show(two + page - 10);            /* ten 'a' then the hole */
    show(two);                        /* a page of 'a': longer than --string-max */
    unsigned char data[6] = {0, 1, 2, 0xfe, 0xff, 7};
    block(data, sizeof(data));
    int n = 0;
    for (int i = 0; i < 12; i++)
        n = tick(n);
    printf("ticks %d\n", n);
    return 0;
}
