#include "symbols/demangle.h"

#include <stdlib.h>
#include <string.h>

/* libstdc++ exports the demangler with C linkage. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *demangle(const char *name)
{
    if (strncmp(name, "_Z", 2) == 0) {
        int status = 0;
        char *plain = __cxa_demangle(name, NULL, NULL, &status);
        if (plain && status == 0)
            return plain;
        free(plain);
    }
    return strdup(name);
}
