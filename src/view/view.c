#include "view/view.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "util/duration.h"
#include "util/log.h"
#include "view/browser.h"
#include "view/http_server.h"
#include "view/index_page.h"
#include "view/port_owner.h"
#include "view/target.h"

#define URL_MAX 4096

/* One `view`: what is served, where, and how it is announced. */
struct view_ctx {
    const struct view_options *o;
    struct view_target target;
    struct http_server server;
    char origin[URL_MAX];  /* the UI's origin, allowed to read the traces */
    char ui_base[URL_MAX]; /* the UI's page, deep links are made from it */
    char url[URL_MAX];     /* what is printed and opened */
    char token[HTTP_TOKEN_LEN + 1];
    char server_url[64]; /* http://127.0.0.1:PORT/TOKEN: what every served URL starts with */
    char *index_html;
    int port;
};

void view_options_init(struct view_options *o)
{
    memset(o, 0, sizeof(*o));
    o->port = VIEW_DEFAULT_PORT;
    o->ui_url = VIEW_DEFAULT_UI;
}

/* Splits a UI URL into its origin (scheme://host[:port], for CORS) and the page deep links
 * start from. The URL ends up in a response header and in links: no spaces, quotes or
 * fragment of its own. */
static int parse_ui_url(const char *url, char *origin, char *base)
{
    size_t scheme = !strncmp(url, "https://", 8) ? 8 : !strncmp(url, "http://", 7) ? 7 : 0;
    size_t host = scheme ? strcspn(url + scheme, "/") : 0;
    if (!host || strlen(url) >= URL_MAX - 1 || strpbrk(url, " \t\r\n\"'<>\\#?`"))
        return -1;
    for (const char *p = url; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return -1;
    snprintf(origin, URL_MAX, "%.*s", (int)(scheme + host), url);
    snprintf(base, URL_MAX, "%s%s", url, url[scheme + host] ? "" : "/");
    return 0;
}

static int parse_number(const char *arg, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || end == arg || *end || v < 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

static const char *option_name(int c)
{
    switch (c) {
    case VIEW_OPT_PORT:
        return "--port";
    case VIEW_OPT_TIMEOUT:
        return "--timeout";
    case VIEW_OPT_ONCE:
        return "--once";
    case VIEW_OPT_SERVER_ONLY:
        return "--server-only";
    case VIEW_OPT_UI_ORIGIN:
        return "--ui-origin";
    case WINDOW_OPT_FROM:
        return "--from";
    case WINDOW_OPT_TO:
        return "--to";
    case WINDOW_OPT_TID:
        return "--tid";
    case WINDOW_OPT_MAX_CALLS:
        return "--max-calls";
    default:
        return NULL;
    }
}

int view_option(struct view_options *o, int c, const char *arg)
{
    char origin[URL_MAX], base[URL_MAX];
    const char *spelled = option_name(c);
    long v;
    uint64_t ns;
    switch (c) {
    case VIEW_OPT_PORT:
        if (parse_number(arg, 65535, &v) < 0) {
            err_hint("0 picks a free port", "%s: %s: not a port number (0-65535)", spelled, arg);
            return -1;
        }
        o->port = (int)v;
        break;
    case VIEW_OPT_TIMEOUT:
        /* in ms, poll's unit: 1 ms at least */
        if (duration_parse(arg, &ns) < 0 || ns < 1000000) {
            err_hint("give a duration of 1 ms or more: " DURATION_SYNTAX, "%s: %s: not a duration",
                     spelled, arg);
            return -1;
        }
        o->timeout_ms = (int64_t)(ns / 1000000);
        break;
    case VIEW_OPT_ONCE:
        o->once = true;
        break;
    case VIEW_OPT_SERVER_ONLY:
        o->server_only = true;
        break;
    case VIEW_OPT_UI_ORIGIN:
        if (parse_ui_url(arg, origin, base) < 0) {
            err_hint("for example https://perfetto.example.com", "%s: %s: not an http(s) URL",
                     spelled, arg);
            return -1;
        }
        o->ui_url = arg;
        break;
    case WINDOW_OPT_FROM:
    case WINDOW_OPT_TO:
    case WINDOW_OPT_TID:
    case WINDOW_OPT_MAX_CALLS:
        if (call_window_option(&o->window, c, arg) < 0)
            return -1;
        break;
    default:
        return 0;
    }
    if (!o->given)
        o->given = spelled;
    return 1;
}

static void report_busy_port(int port, int err)
{
    const char *hint = port == VIEW_DEFAULT_PORT
                           ? "stop it: ui.perfetto.dev fetches traces from port 9001 only"
                           : "stop it, or choose another port with --port";
    char owner[128];
    if (err != EADDRINUSE)
        err_msg("view: cannot serve on 127.0.0.1:%d: %s", port, strerror(err));
    else if (port_owner(port, owner, sizeof(owner)) == 0)
        err_hint(hint, "view: port %d: already in use by %s", port, owner);
    else
        err_hint(hint, "view: port %d: already in use by another program", port);
}

static void announce(const struct view_ctx *v)
{
    const struct view_options *o = v->o;
    const char *until = o->once ? " until it is fetched" : " (Ctrl-C to stop)";
    if (v->target.index)
        note_msg("serving %zu run%s of %s at %s/%s", v->target.n, v->target.n == 1 ? "" : "s",
                 v->target.dir, v->server_url, until);
    else
        note_msg("serving %s at %s%s%s", v->target.entries[0].path, v->server_url,
                 v->target.entries[0].url_path, until);
    if (v->port != VIEW_DEFAULT_PORT && !strcmp(o->ui_url, VIEW_DEFAULT_UI))
        fprintf(stderr, "calltrace: note: ui.perfetto.dev fetches traces from port %d only\n",
                VIEW_DEFAULT_PORT);
    /* The URL alone on standard output: the one thing to copy, or to read from a script. */
    printf("%s\n", v->url);
    fflush(stdout);
}

static void start_browser(const struct view_ctx *v)
{
    char why[256], host[256];
    if (!v->o->server_only && browser_open(v->url, why, sizeof(why)) == 0)
        return;
    if (gethostname(host, sizeof(host)) < 0)
        snprintf(host, sizeof(host), "HOST");
    host[sizeof(host) - 1] = '\0';
    fprintf(stderr,
            "calltrace: %s%s%sopen the URL above in a browser; from another machine, forward the "
            "port first: ssh -L %d:127.0.0.1:%d %s\n",
            v->o->server_only ? "" : "no browser started (", v->o->server_only ? "" : why,
            v->o->server_only ? "" : "): ", v->port, v->port, host);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Serves until a stop signal, the timeout, or (--once) the first complete download. */
static int wait_loop(const struct view_ctx *v, int sigfd)
{
    const struct view_options *o = v->o;
    int64_t timeout_ms = o->timeout_ms ? o->timeout_ms : o->once ? VIEW_ONCE_TIMEOUT * 1000 : 0;
    int64_t deadline = now_ms() + timeout_ms;
    struct pollfd fds[2] = {{.fd = sigfd, .events = POLLIN},
                            {.fd = v->server.fetched_fd, .events = POLLIN}};
    for (;;) {
        int64_t left = timeout_ms ? deadline - now_ms() : -1;
        if (timeout_ms && left <= 0)
            break;
        if (poll(fds, 2, timeout_ms ? (int)(left < INT_MAX ? left : INT_MAX) : -1) < 0) {
            if (errno == EINTR)
                continue;
            err_msg("view: poll: %s", strerror(errno));
            return -1;
        }
        if (fds[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(sigfd, &si, sizeof(si)) < 0 && errno != EAGAIN)
                err_msg("view: reading the signal: %s", strerror(errno));
            fprintf(stderr, "calltrace: stopped serving\n");
            return 0;
        }
        uint64_t fetched;
        if ((fds[1].revents & POLLIN) &&
            read(v->server.fetched_fd, &fetched, sizeof(fetched)) > 0) {
            fprintf(stderr, "calltrace: the trace was fetched%s\n", o->once ? "; done" : "");
            if (o->once)
                return 0;
        }
    }
    if (o->once) {
        err_hint("open the URL above, or serve longer with --timeout",
                 "view: nobody fetched the trace within %g s", (double)timeout_ms / 1000);
        return -1;
    }
    fprintf(stderr, "calltrace: stopped serving after %g s\n", (double)timeout_ms / 1000);
    return 0;
}

/* Stop signals are taken through a signalfd, blocked before the server's threads start so that
 * they inherit the mask and the waiting thread alone sees them. A client that goes away while
 * a trace is sent must not kill calltrace with SIGPIPE. */
static int take_signals(sigset_t *old_mask, struct sigaction *old_pipe)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    struct sigaction ign = {.sa_handler = SIG_IGN};
    if (sigprocmask(SIG_BLOCK, &set, old_mask) < 0 || sigaction(SIGPIPE, &ign, old_pipe) < 0) {
        err_msg("view: cannot set up signals: %s", strerror(errno));
        return -1;
    }
    int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd < 0) {
        err_msg("view: signalfd: %s", strerror(errno));
        sigprocmask(SIG_SETMASK, old_mask, NULL);
        sigaction(SIGPIPE, old_pipe, NULL);
    }
    return fd;
}

/* Every URL starts with the token: only who was given one can fetch what is served. */
static int make_url(struct view_ctx *v)
{
    if (http_token_new(v->token) < 0)
        return -1;
    snprintf(v->server_url, sizeof(v->server_url), "http://127.0.0.1:%d/%s", v->port, v->token);
    if (v->target.index) {
        snprintf(v->url, sizeof(v->url), "%s/", v->server_url);
        if (!(v->index_html = index_page(&v->target, v->ui_base, v->server_url))) {
            err_msg("view: out of memory");
            return -1;
        }
        return 0;
    }
    if (view_deep_link(v->url, sizeof(v->url), v->ui_base, v->server_url,
                       v->target.entries[0].url_path) < 0) {
        err_msg("view: %s: the URL is too long", v->o->ui_url);
        return -1;
    }
    return 0;
}

static int serve(struct view_ctx *v)
{
    v->port = v->o->port;
    int fd = http_listen(&v->port);
    if (fd < 0) {
        report_busy_port(v->o->port, -fd);
        return -1;
    }
    if (make_url(v) < 0) {
        close(fd);
        return -1;
    }
    sigset_t old_mask;
    struct sigaction old_pipe;
    int sigfd = take_signals(&old_mask, &old_pipe);
    if (sigfd < 0) {
        close(fd);
        return -1;
    }
    v->server.target = &v->target;
    v->server.allow_origin = v->origin;
    v->server.index_html = v->index_html;
    v->server.token = v->token;
    int rc = http_server_start(&v->server, fd);
    if (rc == 0) {
        announce(v);
        start_browser(v);
        rc = wait_loop(v, sigfd);
        http_server_stop(&v->server);
    }
    /* The same stop may come twice (timeout(1) signals the process, then its group), the
     * second one after the first was read: neither what is pending nor what comes later may
     * kill calltrace once the mask is restored. Serving is over, calltrace only exits now. */
    struct sigaction ign = {.sa_handler = SIG_IGN};
    sigaction(SIGINT, &ign, NULL);
    sigaction(SIGTERM, &ign, NULL);
    sigaction(SIGHUP, &ign, NULL);
    struct signalfd_siginfo si;
    while (read(sigfd, &si, sizeof(si)) > 0)
        ;
    close(sigfd);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
    return rc;
}

int view_open(const char *target, const struct view_options *o)
{
    struct view_ctx v = {.o = o, .server = {.fetched_fd = -1}};
    if (parse_ui_url(o->ui_url, v.origin, v.ui_base) < 0) {
        err_msg("view: %s: not an http(s) URL", o->ui_url);
        return -1;
    }
    if (call_window_check(&o->window) < 0)
        return -1;
    if (view_target_resolve(&v.target, target, o) < 0) {
        view_target_free(&v.target);
        return -1;
    }
    int rc = serve(&v);
    free(v.index_html);
    view_target_free(&v.target);
    return rc;
}
