/* The source file a function was compiled from, read from the DWARF of its image (the name of
 * the compilation unit holding its address), for grouping functions in the call graph. */
#ifndef CALLTRACE_ANALYSIS_SOURCE_FILE_H
#define CALLTRACE_ANALYSIS_SOURCE_FILE_H

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
void source_files_free(struct source_files *sf);

#endif
