/* Separate debug files: distributions strip their binaries and ship the symbol table and DWARF
 * apart (Debian's -dbg and -dbgsym packages, `objcopy --only-keep-debug`). A stripped program
 * keeps only its exported symbols, so without its debug file its other functions have no name
 * and no argument has a type.
 *
 * They are looked up by libdwfl's standard lookup (dwfl_standard_find_debuginfo), as gdb and
 * elfutils' tools do:
 *   DIR/.build-id/XX/YYYY.debug                  by build ID, for each debug directory DIR;
 *   beside the file, in its .debug/, DIR/<the file's directory>/, DIR/
 *                                                by the name in .gnu_debuglink;
 *   the debuginfod servers of DEBUGINFOD_URLS, when it is set (libdebuginfod, downloaded into
 *                                                its cache).
 * A file found by name must have the same build ID (its CRC when there is none). The debug
 * directories are /usr/lib/debug, or those of CALLTRACE_DEBUG_DIRS (absolute, separated by
 * colons) instead. */
#ifndef CALLTRACE_SYMBOLS_DEBUG_FILE_H
#define CALLTRACE_SYMBOLS_DEBUG_FILE_H

#include <elfutils/libdwfl.h>
#include <libelf.h>

#define DEBUG_DIRS_ENV "CALLTRACE_DEBUG_DIRS"

/* libdwfl's search path (Dwfl_Callbacks.debuginfo_path) for the lookup above, to free; NULL out
 * of memory. */
char *debug_file_search_path(void);

/* A debug file found: libdwfl's session holds it (a file debuginfod gave has no name libdwfl
 * tells), or the descriptor does. */
struct debug_file {
    char *search;             /* debug_file_search_path() */
    Dwfl_Callbacks callbacks; /* the session keeps pointers to them */
    Dwfl *dwfl;
    int fd;     /* -1, or ours */
    Elf *elf;   /* valid until debug_file_close */
    char *name; /* for messages */
};

/* What the debug file is wanted for: its symbol table (or else its DWARF), or its DWARF. */
enum debug_want {
    DEBUG_SYMBOLS,
    DEBUG_DWARF,
};

/* Opens the debug file of the ELF file at path in *df: 0, or -1 when there is none. */
int debug_file_open(const char *path, enum debug_want want, struct debug_file *df);
void debug_file_close(struct debug_file *df);

/* Does elf have a section of this type holding data (a debug file's copies of the program's
 * sections are SHT_NOBITS)? */
int elf_has_section_type(Elf *elf, unsigned type);

#endif
