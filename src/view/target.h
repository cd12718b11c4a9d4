/* What `calltrace view` serves: one trace, or an index of the runs in a directory. */
#ifndef CALLTRACE_VIEW_TARGET_H
#define CALLTRACE_VIEW_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct view_entry {
    char *name;     /* the run directory's name (index) or the file's (single) */
    char *path;     /* the file served, as the user knows it: for messages only */
    int fd;         /* the trace, opened once without following a link and checked: every
                     * request is answered from it, never by opening the path again; -1 */
    char *url_path; /* the only URL path that serves it, e.g. "/trace.json" */
    char *problem;  /* index only: why this run cannot be viewed, or NULL */
    bool gzip;      /* served as application/gzip, as it is */
    bool protobuf;  /* a Perfetto protobuf trace, not JSON */
    struct timespec mtime;
    long long size;
};

struct view_target {
    bool index; /* a directory of runs: "/" lists them */
    char *dir;  /* index: the directory listed */
    struct view_entry *entries;
    size_t n;
};

struct view_options;

/* Resolves a RUN, FILE or DIR argument (NULL: the newest run in the current directory), opens
 * and checks every trace it will serve; with a window in o, the window of the run is written
 * to RUN/window/ and served. The argument is resolved once; inside it, directories and traces
 * are opened relative to their directory's descriptor, following no link, so that another
 * user who can write there cannot swap in a file of theirs, or one only root may read.
 * Returns 0, or -1 after printing one error line. */
int view_target_resolve(struct view_target *t, const char *arg, const struct view_options *o);
void view_target_free(struct view_target *t);

#endif
