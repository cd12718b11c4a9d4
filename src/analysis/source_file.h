/* Where a function's source is, read from the DWARF of its image: the source file it was
 * compiled from (the name of the compilation unit holding its address), for grouping functions
 * in the call graph, and the file and line it is defined at (--srcline). Each image's DWARF is
 * opened once, on first use, and each function looked up once. */
#ifndef CALLTRACE_ANALYSIS_SOURCE_FILE_H
#define CALLTRACE_ANALYSIS_SOURCE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct source_image;

struct source_files {
    struct source_image *images; /* by replay image index, opened on first use */
    size_t nimages;
};

/* NULL when the image has no debug information (or is gone); the string lives until
 * source_files_free. */
const char *source_file_of(struct source_files *sf, size_t image, const char *image_path,
                           uint64_t link_addr);

struct source_line {
    const char *file; /* as the DWARF names it; lives until source_files_free */
    unsigned line;
};

/* Where the function name, at link_addr in the image, is defined: its DIE's DW_AT_decl_file and
 * DW_AT_decl_line, else the line table's line for its first instruction. false when the image
 * has no debug information for it, or when the image on disk is no longer the one recorded
 * (no function of that name at that address): a line of another build would mislead. */
bool source_line_of(struct source_files *sf, size_t image, const char *image_path,
                    uint64_t link_addr, const char *name, struct source_line *out);

/* The line of the instruction at link_addr in the image (its line table's), for a call site:
 * false when the image has no debug information or link_addr is not in it. */
bool source_line_at(struct source_files *sf, size_t image, const char *image_path,
                    uint64_t link_addr, struct source_line *out);

void source_files_free(struct source_files *sf);

#endif
