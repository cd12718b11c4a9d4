/* Separate debug files: distributions strip their binaries and ship the symbol table and DWARF
 * apart (Debian's -dbgsym packages, `objcopy --only-keep-debug`). A stripped program keeps only
 * its exported symbols, so without its debug file most of its functions and every argument type
 * would be invisible. */
#ifndef CALLTRACE_SYMBOLS_DEBUG_FILE_H
#define CALLTRACE_SYMBOLS_DEBUG_FILE_H

#include <libelf.h>

/* Where the debug file of the ELF at path (open as elf) is, looked up as gdb does:
 *   /usr/lib/debug/.build-id/XX/YYYY.debug        its build ID, which must match;
 *   DIR/NAME, DIR/.debug/NAME, /usr/lib/debug/DIR/NAME
 *                                                 its .gnu_debuglink NAME, whose CRC must match;
 * DIR being the directory of path. Returns a path to free, or NULL when there is none. */
char *debug_file_find(Elf *elf, const char *path);

/* Does elf have a section of this type holding data (a debug file's copies of the program's
 * sections are SHT_NOBITS)? */
int elf_has_section_type(Elf *elf, unsigned type);

#endif
