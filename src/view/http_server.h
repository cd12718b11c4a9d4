/* The HTTP side of `calltrace view`: libmicrohttpd on a socket bound to 127.0.0.1, answering
 * only the URL paths of the target's traces (and "/" for an index), 404 for anything else. */
#ifndef CALLTRACE_VIEW_HTTP_SERVER_H
#define CALLTRACE_VIEW_HTTP_SERVER_H

#include "view/target.h"

struct MHD_Daemon;

struct http_server {
    struct MHD_Daemon *daemon;
    const struct view_target *target;
    const char *allow_origin; /* Access-Control-Allow-Origin of the traces */
    const char *index_html;   /* the page at "/" of an index, NULL for one trace */
    int fetched_fd;           /* eventfd: counts traces sent completely */
};

/* Binds and listens on 127.0.0.1:*port (0: any free port; *port is then set). Returns the
 * socket, or -errno. */
int http_listen(int *port);

/* Starts serving on listen_fd in a thread of libmicrohttpd's, which then owns the socket.
 * s->target, allow_origin and index_html must be set and stay valid until http_server_stop.
 * Returns 0, or -1 after printing why. */
int http_server_start(struct http_server *s, int listen_fd);
void http_server_stop(struct http_server *s);

#endif
