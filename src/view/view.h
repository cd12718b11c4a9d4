/* Showing a trace in Perfetto: serve it on 127.0.0.1 and open the UI's deep link to it. Used by
 * `calltrace view` and by `calltrace --open` after recording. */
#ifndef CALLTRACE_VIEW_VIEW_H
#define CALLTRACE_VIEW_VIEW_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "output/trace_file.h"

/* The only port ui.perfetto.dev's content-security policy lets it fetch traces from. */
#define VIEW_DEFAULT_PORT 9001
#define VIEW_DEFAULT_UI "https://ui.perfetto.dev"
/* How long --once waits for the trace to be fetched when no --timeout is given. */
#define VIEW_ONCE_TIMEOUT 60

struct view_options {
    int port;           /* 0: any free port */
    bool once;          /* stop after the trace was fetched once */
    bool server_only;   /* do not start a browser */
    const char *ui_url; /* the Perfetto UI to link to and let fetch (CORS) */
    int64_t timeout_ms; /* how long to serve; 0: until Ctrl-C (VIEW_ONCE_TIMEOUT with --once) */
    const char *given;  /* the first view option given, for "needs --open" errors */
    /* --from, --to, --tid, --max-calls (and view's -F, -N): a window of the run is written to
     * RUN/window/ and served instead of the whole trace; --format for that trace */
    struct call_window window;
    enum trace_format format;
};

/* The long options shared by `view` and `--open`; codes above any short option and any long
 * option of the record command's own. */
enum {
    VIEW_OPT_PORT = 0x300,
    VIEW_OPT_ONCE,
    VIEW_OPT_SERVER_ONLY,
    VIEW_OPT_UI_ORIGIN,
    VIEW_OPT_TIMEOUT,
};
/* clang-format off */
#define VIEW_LONG_OPTIONS                                          \
    {"port", required_argument, NULL, VIEW_OPT_PORT},              \
    {"once", no_argument, NULL, VIEW_OPT_ONCE},                    \
    {"server-only", no_argument, NULL, VIEW_OPT_SERVER_ONLY},      \
    {"ui-origin", required_argument, NULL, VIEW_OPT_UI_ORIGIN},    \
    {"timeout", required_argument, NULL, VIEW_OPT_TIMEOUT},        \
    {"from", required_argument, NULL, WINDOW_OPT_FROM},            \
    {"to", required_argument, NULL, WINDOW_OPT_TO},                \
    {"tid", required_argument, NULL, WINDOW_OPT_TID},              \
    {"max-calls", required_argument, NULL, WINDOW_OPT_MAX_CALLS}
/* clang-format on */

/* The option lines for a usage message. */
#define VIEW_OPTIONS_HELP                                                                          \
    "  --port N           serve on 127.0.0.1:N (default 9001, the only port ui.perfetto.dev\n"     \
    "                     fetches from; 0 picks a free one)\n"                                     \
    "  --once             stop once the trace was fetched (or after --timeout, default 60 s)\n"    \
    "  --timeout TIME     stop serving after TIME (2s, 500ms, 0.5, 1m)\n"                          \
    "  --server-only      do not start a browser; just print the URL and serve\n"                  \
    "  --ui-origin URL    a self-hosted Perfetto UI to link to and let fetch the trace\n"          \
    "                     (default " VIEW_DEFAULT_UI ")\n"                                         \
    "  --from TIME, --to TIME  a window: only the calls running between these times of\n"          \
    "                     the run (from its start: 1.5s, 250ms), with the calls open around\n"     \
    "                     them, written to RUN/window/ and served instead of the whole run\n"      \
    "  --tid TID          a window of thread TID's calls\n"                                        \
    "  --max-calls N      a window of at most N calls, the first ones\n"

void view_options_init(struct view_options *o);
/* Handles one getopt_long result. Returns 1 when c was a view option, 0 when it was not, and
 * -1 after printing an error for a bad value. */
int view_option(struct view_options *o, int c, const char *arg);

/* Serves what target names (a run directory, a trace file, a directory of runs; NULL: the
 * newest run in the current directory) and opens it in Perfetto. Returns 0, or -1 after
 * printing why nothing could be served. */
int view_open(const char *target, const struct view_options *o);

#endif
