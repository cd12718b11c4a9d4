/* Function signatures from an image's DWARF (libdw), and its ELF symbols for naming addresses.
 * Used at setup (which bytes to capture) and when the record is written out (how to print
 * them); never at a stop. */
#ifndef CALLTRACE_SYMBOLS_DWARF_SIG_H
#define CALLTRACE_SYMBOLS_DWARF_SIG_H

#include <stdint.h>

#include "symbols/ctype.h"

struct dwarf_sigs;

/* Opens path; NULL (errno set) when it cannot be read as ELF. An image without DWARF opens
 * fine: every lookup then says "no signature". */
struct dwarf_sigs *dwarf_sigs_open(const char *path);
void dwarf_sigs_close(struct dwarf_sigs *d);
/* The signature of the function whose code starts at link-time address addr, or NULL when
 * DWARF does not describe it. Owned by d. */
const struct func_sig *dwarf_sigs_find(struct dwarf_sigs *d, uint64_t addr);
/* The ELF symbol (function or object) whose extent holds link-time address addr, with the
 * offset into it; NULL when none does. */
const char *dwarf_sigs_symbol(const struct dwarf_sigs *d, uint64_t addr, uint64_t *offset);
/* Does a function symbol named name (demangled) start at link-time address addr? Tells whether
 * the file is still the one a run recorded. */
bool dwarf_sigs_has_function(const struct dwarf_sigs *d, uint64_t addr, const char *name);

#endif
