#include "util/duration.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int duration_parse(const char *text, uint64_t *ns)
{
    static const struct {
        const char *unit;
        double scale;
    } units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
    char *end;
    double value = strtod(text, &end);
    if (end == text || !isfinite(value) || value < 0 || *text == '-' || *text == '+')
        return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].unit) != 0)
            continue;
        double total = value * units[i].scale;
        if (total > 86400e9)
            return -1;
        *ns = (uint64_t)llround(total);
        return 0;
    }
    return -1;
}
