#include "symbols/demangle.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++ exports the demangler with C linkage. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static char *demangle_mangled(const char *name)
{
    int status = 0;
    char *plain = __cxa_demangle(name, NULL, NULL, &status);
    if (plain && status == 0)
        return plain;
    free(plain);
    return NULL;
}

/* gcc's static initialisers and finalisers of a file, named after a function of it:
 * _GLOBAL__sub_I__Z5setupv. __cxa_demangle knows only the function's part; the words are
 * libiberty's (gdb's) for the older _GLOBAL__I_ form. */
static char *demangle_global_ctor(const char *name)
{
    static const struct {
        const char *prefix, *words;
    } kinds[] = {{"_GLOBAL__sub_I_", "global constructors keyed to "},
                 {"_GLOBAL__sub_D_", "global destructors keyed to "},
                 {"_GLOBAL__I_", "global constructors keyed to "},
                 {"_GLOBAL__D_", "global destructors keyed to "}};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        size_t n = strlen(kinds[i].prefix);
        if (strncmp(name, kinds[i].prefix, n) != 0 || !name[n])
            continue;
        char *rest = strncmp(name + n, "_Z", 2) == 0 ? demangle_mangled(name + n) : NULL;
        const char *key = rest ? rest : name + n;
        size_t len = strlen(kinds[i].words) + strlen(key) + 1;
        char *out = malloc(len);
        if (out) {
            strcpy(out, kinds[i].words);
            strcat(out, key);
        }
        free(rest);
        return out;
    }
    return NULL;
}

char *demangle(const char *name)
{
    char *plain = strncmp(name, "_Z", 2) == 0         ? demangle_mangled(name)
                  : strncmp(name, "_GLOBAL_", 8) == 0 ? demangle_global_ctor(name)
                                                      : NULL;
    return plain ? plain : strdup(name);
}

/* Does name[at] start (or, for the second '<' of operator<<, go on with) an operator's name,
 * name[0..at) ending with "operator"? */
static bool after_operator(const char *name, size_t at)
{
    static const char word[] = "operator";
    size_t n = sizeof(word) - 1;
    if (at >= n && memcmp(name + at - n, word, n) == 0)
        return true;
    return name[at] == '<' && at >= n + 1 && name[at - 1] == '<' &&
           memcmp(name + at - n - 1, word, n) == 0;
}

/* The end of the bracketed group that starts at name[at] (open, close), or of name. */
static size_t group_end(const char *name, size_t at, char open, char close)
{
    int depth = 0;
    size_t i = at;
    for (; name[i]; i++) {
        depth += name[i] == open;
        depth -= name[i] == close;
        if (depth == 0)
            return i + 1;
    }
    return i;
}

static void put_char(char *out, size_t len, size_t *o, char c)
{
    if (*o + 1 < len)
        out[(*o)++] = c;
}

void demangled_short_name(const char *name, size_t max, char *out, size_t len)
{
    static const char anonymous[] = "(anonymous namespace)";
    size_t o = 0;
    for (size_t i = 0; name[i];) {
        char c = name[i];
        bool group = (c == '<' || c == '(') && !after_operator(name, i) &&
                     strncmp(name + i, anonymous, sizeof(anonymous) - 1) != 0;
        if (!group) {
            put_char(out, len, &o, c);
            i++;
            continue;
        }
        char close = c == '<' ? '>' : ')';
        put_char(out, len, &o, c);
        put_char(out, len, &o, close);
        i = group_end(name, i, c, close);
    }
    if (len)
        out[o < len ? o : len - 1] = '\0';
    if (o > max && max > 3 && max < len) { /* its end: the function's own name */
        memmove(out + 3, out + o - (max - 3), max - 3 + 1);
        memcpy(out, "...", 3);
    }
}

size_t demangled_params_at(const char *name)
{
    static const char anonymous[] = "(anonymous namespace)";
    size_t params = strlen(name), depth = 0;
    for (size_t i = 0; name[i]; i++) {
        char c = name[i];
        if (c == '(' && after_operator(name, i)) { /* operator() names a function */
            if (name[i + 1] == ')')
                i++;
            continue;
        }
        if (c == '<' && after_operator(name, i))
            continue;
        if (depth == 0 && c == '(' && strncmp(name + i, anonymous, sizeof(anonymous) - 1) != 0) {
            size_t end = group_end(name, i, '(', ')');
            if (!strstr(name + end, "::")) /* nothing after it but qualifiers, a clone */
                return i;
        }
        if (c == '<' || c == '(' || c == '{' || c == '[')
            depth++;
        else if ((c == '>' || c == ')' || c == '}' || c == ']') && depth)
            depth--;
    }
    return params;
}
