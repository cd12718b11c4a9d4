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
    } units[] = {{"", 1e9},   {"ns", 1},  {"us", 1e3}, {"\u00b5s", 1e3},
                 {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
    /* digits with at most one point, nothing else: strtod alone would take "-1", " 2",
     * "0x10", "1e3" and "inf" */
    size_t digits = strspn(text, "0123456789");
    size_t len = digits;
    if (text[len] == '.')
        len += 1 + strspn(text + len + 1, "0123456789");
    if (len == 0 || (len == 1 && !digits)) /* nothing, or a point alone */
        return -1;
    char number[64];
    if (len >= sizeof(number))
        return -1;
    memcpy(number, text, len);
    number[len] = '\0';
    double value = strtod(number, NULL);
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(text + len, units[i].unit) != 0)
            continue;
        double total = value * units[i].scale;
        if (!isfinite(total) || total > (double)DURATION_MAX_NS)
            return -1;
        *ns = (uint64_t)llround(total);
        return 0;
    }
    return -1;
}
