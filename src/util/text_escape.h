/* How text output (report, tree, calls, graph's labels, error and -v lines) shows bytes that
 * calltrace did not choose: names from the traced program's symbols and DWARF, library and
 * program paths, run directory names, strings read back from a run directory. A terminal takes
 * some bytes as commands (ESC [ 2 J clears it, ESC ] 0 ; ... BEL retitles it, and some take the
 * C1 control U+009B as ESC [), and `cat report.txt` shows a file on a terminal later, so files
 * and pipes get the same escaping as a terminal.
 *
 * The rule (the man page's "Names in text output"):
 *   - printable ASCII and valid UTF-8 of printable characters are shown as they are;
 *   - each byte of a C0 control (0x00-0x1f, tab and newline included), DEL (0x7f), a C1
 *     control written in UTF-8 (U+0080-U+009F: two bytes), a bidirectional formatting
 *     character (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069: they reorder the rest
 *     of the line) and each byte that is not part of valid UTF-8 becomes \xNN (two lowercase
 *     hex digits of that byte);
 *   - a backslash becomes \\ in a name, so that every escaped name stands for one byte string.
 * A value printed as gdb prints it (tree's and calls' values) is escaped by calltrace already:
 * its backslashes stay as they are, and any control byte left in it still becomes \xNN. */
#ifndef CALLTRACE_UTIL_TEXT_ESCAPE_H
#define CALLTRACE_UTIL_TEXT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum text_kind {
    TEXT_NAME,  /* a name, a path: a backslash doubled */
    TEXT_VALUE, /* already escaped as gdb prints values: backslashes kept */
};

/* Bytes that every kind shows as they are: printable ASCII but the backslash. */
extern const bool text_plain_byte[256];

/* bytes[0..len) escaped into dst (at most cap bytes with the NUL, when cap is not 0); returns
 * the length the whole escaped text needs, like snprintf. */
size_t text_escape(char *dst, size_t cap, const char *bytes, size_t len, enum text_kind kind);
/* The escaped text as a heap string; NULL when out of memory. */
char *text_escape_dup(const char *s, enum text_kind kind);
/* s escaped to out; plain text (most names) goes out in one write. */
void fputs_escaped(const char *s, FILE *out, enum text_kind kind);

static inline void fputs_name(const char *s, FILE *out)
{
    fputs_escaped(s, out, TEXT_NAME);
}

#endif
