/* An interactive flame graph in SVG, drawn by calltrace itself from the weights of a calling-
 * context tree (analysis/flame.h): a frame per stack, as wide as its time (or calls), the
 * outermost at the bottom; a tooltip with its calls, time and share; click to zoom into a frame
 * (its callers stay, stretched), "Reset zoom"; "Search" (or Ctrl-F) highlights the frames whose
 * name matches a regular expression and says what share of the whole they cover. It opens in
 * any browser with no other file; without script (an image viewer) it is the unzoomed graph.
 *
 * Here rather than in analysis/ because it is a file format, like trace.json: the analysis
 * decides what the frames are, this only draws them. */
#ifndef CALLTRACE_OUTPUT_FLAME_SVG_H
#define CALLTRACE_OUTPUT_FLAME_SVG_H

#include <stdio.h>

#include "analysis/flame.h"

struct flame_svg_options {
    const char *title;    /* the heading, e.g. the run's path */
    const char *subtitle; /* what the widths are */
};

/* Writes the SVG document to out. Returns 0, or -1 after one error line (out of memory); a
 * write error shows in ferror(out). */
int flame_svg_write(FILE *out, const struct flame *f, call_tree_name_fn *name, void *name_ctx,
                    const struct flame_svg_options *opts);

#endif
