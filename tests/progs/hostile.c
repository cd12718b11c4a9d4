/* Functions the test renames (objcopy --redefine-sym) to hostile symbol names: '/', "..",
 * newlines, quotes, control characters, invalid UTF-8, 4 KiB and more. Each is called a known
 * number of times: hostile_N N times. */
#include "common.h"

static volatile int sink;

TRACED void hostile_1(void) { sink++; }
TRACED void hostile_2(void) { sink++; }
TRACED void hostile_3(void) { sink++; }
TRACED void hostile_4(void) { sink++; }
TRACED void hostile_5(void) { sink++; }
TRACED void hostile_6(void) { sink++; }
TRACED void hostile_7(void) { sink++; }
TRACED void hostile_8(void) { sink++; }

int main(void)
{
    void (*const f[])(void) = {hostile_1, hostile_2, hostile_3, hostile_4,
                               hostile_5, hostile_6, hostile_7, hostile_8};
    for (int i = 0; i < 8; i++)
        for (int n = 0; n <= i; n++)
            f[i]();
    printf("done\n");
    return 0;
}
