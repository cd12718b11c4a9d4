#include "view/http_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/log.h"

/* A client that sends nothing for this long is dropped: it cannot hold the server. */
#define IDLE_TIMEOUT_S 30
#define MAX_CONNECTIONS 64

/* Marks, in a request's context, a GET that is being answered with a trace. */
static char trace_request_mark;

int http_token_new(char *hex)
{
    unsigned char bytes[HTTP_TOKEN_BYTES];
    ssize_t n;
    do
        n = getrandom(bytes, sizeof(bytes), 0);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof(bytes)) {
        err_msg("view: cannot make the URL's token: getrandom: %s",
                n < 0 ? strerror(errno) : "short read");
        return -1;
    }
    for (size_t i = 0; i < sizeof(bytes); i++)
        snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
    return 0;
}

int http_listen(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int one = 1;
    /* Lets a restarted viewer bind at once while the last one's connections are in TIME_WAIT;
     * Linux still refuses the port while anything listens on it. */
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)*port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *type,
                             const char *body)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    /* A client that got nothing useful keeps no connection: it must connect again. */
    if (code != MHD_HTTP_OK)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ok = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ok;
}

/* Every request is sent from the descriptor opened and checked before serving began (a
 * duplicate of it, which the response closes): the path is never opened again, so what
 * anyone puts there later is never sent. libmicrohttpd reads it at explicit offsets. */
static enum MHD_Result send_trace(struct http_server *s, struct MHD_Connection *c,
                                  const struct view_entry *e)
{
    int fd = fcntl(e->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
        err_msg("view: cannot send %s: %s", e->path ? e->path : e->name, strerror(errno));
        return MHD_NO;
    }
    struct MHD_Response *r = MHD_create_response_from_fd_at_offset64((uint64_t)e->size, fd, 0);
    if (!r) {
        close(fd);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            e->gzip       ? "application/gzip"
                            : e->protobuf ? "application/octet-stream"
                                          : "application/json");
    MHD_add_response_header(r, MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_ORIGIN, s->allow_origin);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ok;
}

/* The path after "/TOKEN" when url starts with it, else NULL. The token's digits are compared
 * in constant time: how long a wrong guess takes says nothing about how much of it was right. */
static const char *after_token(const char *url, const char *token)
{
    if (url[0] != '/' || strnlen(url + 1, HTTP_TOKEN_LEN) < HTTP_TOKEN_LEN)
        return NULL;
    unsigned char diff = 0;
    for (size_t i = 0; i < HTTP_TOKEN_LEN; i++)
        diff |= (unsigned char)(url[1 + i] ^ token[i]);
    const char *rest = url + 1 + HTTP_TOKEN_LEN;
    return diff == 0 && rest[0] == '/' ? rest : NULL;
}

/* A page on some other site whose name resolves to 127.0.0.1 (DNS rebinding) would be
 * same-origin with us and could read the trace despite CORS; its requests carry its own name in
 * Host, so only loopback names are answered. */
static bool loopback_host(struct MHD_Connection *c)
{
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (!host)
        return true; /* HTTP/1.0 without Host: not a browser */
    static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        size_t n = strlen(names[i]);
        if (!strncasecmp(host, names[i], n) && (host[n] == '\0' || host[n] == ':'))
            return true;
    }
    return false;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
    struct http_server *s = cls;
    (void)version, (void)upload_data, (void)upload_data_size;
    bool get = !strcmp(method, MHD_HTTP_METHOD_GET);
    if (!get && strcmp(method, MHD_HTTP_METHOD_HEAD))
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "only GET and HEAD\n");
    if (!loopback_host(c))
        return reply(c, MHD_HTTP_FORBIDDEN, "text/plain", "not a loopback Host\n");
    const char *path = after_token(url, s->token);
    if (!path)
        return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", "not found\n");
    if (s->index_html && !strcmp(path, "/"))
        return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", s->index_html);
    /* The URL is only ever compared with this table, never turned into a file name. */
    for (size_t i = 0; i < s->target->n; i++) {
        const struct view_entry *e = &s->target->entries[i];
        if (e->url_path && e->fd >= 0 && !strcmp(path, e->url_path)) {
            if (get)
                *req_cls = &trace_request_mark;
            return send_trace(s, c, e);
        }
    }
    return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", "not found\n");
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct http_server *s = cls;
    (void)c;
    /* Only a trace sent to the end counts: a client that gave up midway has not got it. */
    if (*req_cls == &trace_request_mark && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK) {
        uint64_t one = 1;
        if (write(s->fetched_fd, &one, sizeof(one)) < 0)
            err_msg("view: cannot note a finished download: %s", strerror(errno));
    }
    *req_cls = NULL;
}

int http_server_start(struct http_server *s, int listen_fd)
{
    s->fetched_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (s->fetched_fd < 0) {
        err_msg("view: eventfd: %s", strerror(errno));
        close(listen_fd);
        return -1;
    }
    s->daemon =
        MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, on_request, s,
                         MHD_OPTION_LISTEN_SOCKET, listen_fd, MHD_OPTION_NOTIFY_COMPLETED,
                         on_completed, s, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S,
                         MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS, MHD_OPTION_END);
    if (!s->daemon) {
        err_msg("view: cannot start the HTTP server (libmicrohttpd)");
        close(listen_fd);
        close(s->fetched_fd);
        s->fetched_fd = -1;
        return -1;
    }
    return 0;
}

void http_server_stop(struct http_server *s)
{
    if (s->daemon)
        MHD_stop_daemon(s->daemon); /* closes the listening socket too */
    s->daemon = NULL;
    if (s->fetched_fd >= 0)
        close(s->fetched_fd);
    s->fetched_fd = -1;
}
