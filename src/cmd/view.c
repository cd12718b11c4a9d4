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
          "browser ($BROWSER, else xdg-open). RUN is a run directory, FILE a trace.json or\n"
          "trace.json.gz, DIR a directory of runs (served as a page listing them); the default\n"
          "is the newest run in the current directory. The URL is printed on standard output.\n"
          "\n"
          "Options:\n" VIEW_OPTIONS_HELP "  -h, --help         show this help and exit\n",
          f);
}

int cmd_view(int argc, char **argv)
{
    static const struct option longopts[] = {
        VIEW_LONG_OPTIONS,
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct view_options o;
    view_options_init(&o);
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        int handled = view_option(&o, c, optarg);
        if (handled < 0)
            return 2;
        if (handled)
            continue;
        if (c == 'h') {
            usage(stdout);
            return 0;
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
