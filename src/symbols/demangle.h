/* C++ (Itanium ABI) name demangling through libstdc++'s __cxa_demangle. */
#ifndef CALLTRACE_SYMBOLS_DEMANGLE_H
#define CALLTRACE_SYMBOLS_DEMANGLE_H

#include <stddef.h>

/* Returns a malloc'd demangled name, or a malloc'd copy of name when it is not mangled. */
char *demangle(const char *name);

/* A demangled C++ name made short enough for a picture: template arguments and parameter lists
 * emptied ("std::vector<>::push_back()"), "(anonymous namespace)" and operators kept, and when
 * still longer than max bytes, only its end, after "...". A C name comes out as it is. out gets
 * at most len bytes with the terminating 0. */
void demangled_short_name(const char *name, size_t max, char *out, size_t len);

#endif
