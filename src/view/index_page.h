/* The page at "/TOKEN/" when a directory of runs is served: each run links to its Perfetto
 * deep link. */
#ifndef CALLTRACE_VIEW_INDEX_PAGE_H
#define CALLTRACE_VIEW_INDEX_PAGE_H

#include "view/target.h"

/* Builds the deep link that makes the Perfetto UI at ui_base fetch url_path from this server,
 * whose URLs start with server ("http://127.0.0.1:PORT/TOKEN"). */
int view_deep_link(char *out, size_t outlen, const char *ui_base, const char *server,
                   const char *url_path);

/* The HTML page (malloc'd), or NULL when out of memory. */
char *index_page(const struct view_target *t, const char *ui_base, const char *server);

#endif
