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
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/log.h"

/* Any local user can connect and sit idle, and libmicrohttpd times connections out on
 * inactivity only. What keeps idle or slow clients from starving the browser's request: a
 * short timeout until a whole request has come, a connection limit far above what a few idle
 * clients hold, and errors that close their connection. Only a request with the token gets the
 * long timeout that a download to a busy browser needs (for the rest of its connection). */
#define REQUEST_TIMEOUT_S 5
#define SEND_TIMEOUT_S 60
#define MAX_CONNECTIONS 2048u
/* Descriptors kept for calltrace itself (standard ones, signalfd, eventfd, epoll, the
 * listening socket, libmicrohttpd's own) besides the traces and connections. */
#define FD_RESERVE 64
/* Connections waiting to be accepted: a burst of them is not dropped. */
#define LISTEN_BACKLOG 256

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
        bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, LISTEN_BACKLOG) < 0 ||
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
    MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)SEND_TIMEOUT_S);
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

/* Each connection takes a socket, and a duplicate of a trace's descriptor while one is sent
 * to it; the traces themselves are held open all along. The soft limit on open files is raised
 * (within the hard one) to make room for MAX_CONNECTIONS, and the limit is what room there is. */
static unsigned connection_limit(size_t held)
{
    struct rlimit lim;
    rlim_t want = 2 * (rlim_t)MAX_CONNECTIONS + held + FD_RESERVE;
    if (getrlimit(RLIMIT_NOFILE, &lim) < 0)
        return MAX_CONNECTIONS;
    if (lim.rlim_cur < want && lim.rlim_cur < lim.rlim_max) {
        struct rlimit raised = {.rlim_cur = want < lim.rlim_max ? want : lim.rlim_max,
                                .rlim_max = lim.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
            lim = raised;
    }
    rlim_t room = lim.rlim_cur > held + 2 * FD_RESERVE ? (lim.rlim_cur - held - FD_RESERVE) / 2
                                                       : FD_RESERVE / 2;
    return room < MAX_CONNECTIONS ? (unsigned)room : MAX_CONNECTIONS;
}

int http_server_start(struct http_server *s, int listen_fd)
{
    s->fetched_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (s->fetched_fd < 0) {
        err_msg("view: eventfd: %s", strerror(errno));
        close(listen_fd);
        return -1;
    }
    s->daemon = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, on_request, s,
                                 MHD_OPTION_LISTEN_SOCKET, listen_fd, MHD_OPTION_NOTIFY_COMPLETED,
                                 on_completed, s, MHD_OPTION_CONNECTION_TIMEOUT,
                                 (unsigned)REQUEST_TIMEOUT_S, MHD_OPTION_CONNECTION_LIMIT,
                                 connection_limit(s->target->n), MHD_OPTION_END);
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
