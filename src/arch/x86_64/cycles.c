#include "arch/x86_64/cycles.h"

#include <stdio.h>
#include <string.h>

bool arch_cycles_invariant(void)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (!f)
        return false;
    char line[4096];
    bool constant = false, nonstop = false;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        break;
    }
    fclose(f);
    return constant && nonstop;
}
