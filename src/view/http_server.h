/* The HTTP side of `calltrace view`: libmicrohttpd on a socket bound to 127.0.0.1, answering
 * only the URL paths of the target's traces (and "/" for an index) under a secret first
 * component, the token, 404 for anything else. The port is open to every local user: the
 * token is what keeps them from fetching the trace, which may hold what root took from the
 * traced program. */
#ifndef CALLTRACE_VIEW_HTTP_SERVER_H
#define CALLTRACE_VIEW_HTTP_SERVER_H

#include "view/target.h"

struct MHD_Daemon;

/* 128 random bits, in hex: not to be guessed, and no escaping in URLs. */
#define HTTP_TOKEN_BYTES 16
#define HTTP_TOKEN_LEN (2 * HTTP_TOKEN_BYTES)

struct http_server {
    struct MHD_Daemon *daemon;
    const struct view_target *target;
    const char *allow_origin; /* Access-Control-Allow-Origin of the traces */
    const char *index_html;   /* the page at "/" of an index, NULL for one trace */
    const char *token;        /* HTTP_TOKEN_LEN hex digits: every path is "/TOKEN/..." */
    int fetched_fd;           /* eventfd: counts traces sent completely */
};

/* A new token from getrandom(2) into hex (HTTP_TOKEN_LEN + 1 bytes). Returns 0, or -1 after
 * printing why. */
int http_token_new(char *hex);

/* Binds and listens on 127.0.0.1:*port (0: any free port; *port is then set). Returns the
 * socket, or -errno. */
int http_listen(int *port);

/* Starts serving on listen_fd in a thread of libmicrohttpd's, which then owns the socket.
 * s->target, allow_origin, index_html and token must be set and stay valid until
 * http_server_stop. Returns 0, or -1 after printing why. */
int http_server_start(struct http_server *s, int listen_fd);
void http_server_stop(struct http_server *s);

#endif
