/* Functions the test renames (objcopy --redefine-sym) to hostile symbol names: '/', "..",
 * newlines, quotes, control characters, invalid UTF-8, 4 KiB and more. Each is called a known
 * number of times: hostile_N N times. hostile_text gets hostile strings as its argument. */
#include "common.h"
#include <string.h>

static volatile int sink;

TRACED void hostile_1(void)
{
    sink++;
}
TRACED void hostile_2(void)
{
    sink++;
}
TRACED void hostile_3(void)
{
    sink++;
}
TRACED void hostile_4(void)
{
    sink++;
}
TRACED void hostile_5(void)
{
    sink++;
}
TRACED void hostile_6(void)
{
    sink++;
}
TRACED void hostile_7(void)
{
    sink++;
}
TRACED void hostile_8(void)
{
    sink++;
}

TRACED size_t hostile_text(const char *s)
{
    return strlen(s);
}

int main(void)
{
    static char big[4097];
    memset(big, 'C', 4096);
    const char *const texts[] = {"../../escape/evil",   "line1\nline2",         "quote\"and\\back",
                                 "bad\xff\xfeutf8\xc3", "ctl\x01\x1b[31mred\t", big};
    size_t total = 0;
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        total += hostile_text(texts[i]);
    void (*const f[])(void) = {hostile_1, hostile_2, hostile_3, hostile_4,
                               hostile_5, hostile_6, hostile_7, hostile_8};
    for (int i = 0; i < 8; i++)
        for (int n = 0; n <= i; n++)
            f[i]();
    printf("done %zu\n", total);
    return 0;
}
