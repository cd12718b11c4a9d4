#include "util/duration.h"

#include <stdio.h>

char *duration_format(char *buf, size_t len, int64_t ns)
{
    static const struct {
        int64_t scale;
        const char *unit;
    } units[] = {{1000000000, "s"}, {1000000, "ms"}, {1000, "us"}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (ns >= units[i].scale) {
            /* integers, not %f: the same digits on every machine */
            snprintf(buf, len, "%lld.%03lld %s", (long long)(ns / units[i].scale),
                     (long long)(ns % units[i].scale * 1000 / units[i].scale), units[i].unit);
            return buf;
        }
    }
    snprintf(buf, len, "%lld ns", (long long)ns);
    return buf;
}
