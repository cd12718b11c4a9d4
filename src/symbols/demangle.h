/* C++ (Itanium ABI) name demangling through libstdc++'s __cxa_demangle. */
#ifndef CALLTRACE_SYMBOLS_DEMANGLE_H
#define CALLTRACE_SYMBOLS_DEMANGLE_H

#include <stddef.h>

/* Returns a malloc'd demangled name, or a malloc'd copy of name when it is not mangled. A static
 * initialiser _GLOBAL__sub_I__Z5setupv is "global constructors keyed to setup()". */
char *demangle(const char *name);

/* Where the parameter list of a demangled function name starts ("parse(int)": 5, "Circle::area()
 * const": 12, "run(int)::{lambda(int)#1}::operator()(int) const": the last "(int)"), or
 * strlen(name) when it has none (a C name). */
size_t demangled_params_at(const char *name);

/* A demangled C++ name made short enough for a picture: template arguments and parameter lists
 * emptied ("std::vector<>::push_back()"), "(anonymous namespace)" and operators kept, and when
 * still longer than max bytes, only its end, after "...". A C name comes out as it is. out gets
 * at most len bytes with the terminating 0. */
void demangled_short_name(const char *name, size_t max, char *out, size_t len);

#endif
