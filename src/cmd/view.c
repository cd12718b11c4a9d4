/* calltrace view [OPTIONS] [RUN|FILE|DIR]: serves an existing run's trace on 127.0.0.1 and opens
 * it in Perfetto, or lists the runs of a directory with a link to each. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd/commands.h"
#include "view/view.h"
#include "util/log.h"

static void usage(FILE *f)
{
    fputs("usage: calltrace view [OPTIONS] [RUN|FILE|DIR]\n"
          "\n"
          "Serves a trace on 127.0.0.1 and opens it in the Perfetto UI (ui.perfetto.dev) in your\n"
          "browser ($BROWSER, else xdg-open). RUN is a run directory, FILE a trace (.json,\n"
          ".pftrace, or either .gz), DIR a directory of runs (served as a page listing them); the\n"
          "default is the newest run in the current directory. The URL is printed on "
          "standard\noutput; it holds a random token, without which other local users cannot "
          "fetch\nthe trace.\n"
          "A trace too big for the browser (beyond about 1 GB) can be viewed a part at a time:\n"
          "a window (--from/--to, --tid, -F/-N, --max-calls) of RUN is written from its\n"
          "record to RUN/window/ and served instead.\n"
          "\n"
          "Options:\n" VIEW_OPTIONS_HELP
          "  -F GLOB, -N GLOB   a window of the calls of functions matching / not matching GLOB\n"
          "      --format F     the window's trace: perfetto (the default) or json\n"
          "  -h, --help         show this help and exit\n",
          f);
}

int cmd_view(int argc, char **argv)
{
    static const struct option longopts[] = {
        VIEW_LONG_OPTIONS,
        {"filter", required_argument, NULL, 'F'},
        {"exclude", required_argument, NULL, 'N'},
        {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct view_options o;
    view_options_init(&o);
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":hF:N:", longopts, NULL)) != -1) {
        int handled = c == 'F' || c == 'N' ? call_window_option(&o.window, c, optarg)
                                           : view_option(&o, c, optarg);
        if (handled < 0)
            return 2;
        if (handled)
            continue;
        if (c == 'h') {
            usage(stdout);
            return 0;
        }
        if (c == 'f') {
            if (trace_format_option(optarg, &o.format) < 0)
                return 2;
            continue;
        }
        if (c == ':')
            err_hint("see calltrace view --help", "view: %s: missing value", argv[optind - 1]);
        else
            err_hint("see calltrace view --help", "view: %s: unknown option", argv[optind - 1]);
        return 2;
    }
    if (argc - optind > 1) {
        err_hint("give one run, trace file or directory", "view: %s: too many arguments",
                 argv[optind + 1]);
        return 2;
    }
    return view_open(optind < argc ? argv[optind] : NULL, &o) < 0 ? 1 : 0;
}
