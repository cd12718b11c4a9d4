/* Functions and DWARF names that e2e 94 rewrites to hold terminal escapes: escape_N is renamed
 * (objcopy --redefine-sym) and called N times; escape_args is renamed too, and the names of its
 * parameter, of that parameter's type and of an enumerator are 12-byte placeholders that the
 * test overwrites in the DWARF strings. */
#include "common.h"
#include <string.h>

typedef const char *tPLACEHOLDER;
enum mood { ePLACEHOLDER = 1, calm = 2 };

static volatile int sink;

TRACED void escape_1(void)
{
    sink++;
}
TRACED void escape_2(void)
{
    sink++;
}
TRACED void escape_3(void)
{
    sink++;
}
TRACED void escape_4(void)
{
    sink++;
}
TRACED void escape_5(void)
{
    sink++;
}
TRACED void escape_6(void)
{
    sink++;
}
TRACED void escape_7(void)
{
    sink++;
}
TRACED void escape_8(void)
{
    sink++;
}
TRACED void escape_9(void)
{
    sink++;
}
TRACED void escape_10(void)
{
    sink++;
}

TRACED size_t escape_args(tPLACEHOLDER pPLACEHOLDER, enum mood m)
{
    return strlen(pPLACEHOLDER) + (size_t)m;
}

int main(void)
{
    void (*const f[])(void) = {escape_1, escape_2, escape_3, escape_4, escape_5,
                               escape_6, escape_7, escape_8, escape_9, escape_10};
    for (int i = 0; i < 10; i++)
        for (int n = 0; n <= i; n++)
            f[i]();
    printf("done %zu\n", escape_args("text", ePLACEHOLDER));
    return 0;
}
