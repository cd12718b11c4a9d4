/* C++ (Itanium ABI) name demangling through libstdc++'s __cxa_demangle. */
#ifndef CALLTRACE_SYMBOLS_DEMANGLE_H
#define CALLTRACE_SYMBOLS_DEMANGLE_H

/* Returns a malloc'd demangled name, or a malloc'd copy of name when it is not mangled. */
char *demangle(const char *name);

#endif
