/* calltrace graph [RUN] [-o FILE]: the call graph in Graphviz DOT, a node per function (calls,
 * total and self time, coloured by total time; C++ names shortened), an edge per caller and
 * callee (calls), nodes grouped by source file or image; -n keeps the hottest functions.
 * -o FILE.svg, .png, .pdf (any format dot renders) is rendered by Graphviz's dot, which is given
 * the graph from memory and whose error output is read back: when it cannot lay the groups out
 * (Graphviz 2.43's "trouble in init_rank" on big programs) the graph is drawn again without
 * them, and what dot said is summed up in one line. */
#include <bsd/stdlib.h>
#include <bsd/string.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/profile.h"
#include "analysis/run_select.h"
#include "analysis/source_file.h"
#include "cmd/cli_util.h"
#include "record/clock.h"
#include "cmd/commands.h"
#include "symbols/demangle.h"
#include "util/duration.h"
#include "util/log.h"
#include "util/text_escape.h"

enum group_by { GROUP_AUTO, GROUP_FILE, GROUP_IMAGE, GROUP_NONE };

struct graph_cli {
    const char *run;
    const char *output; /* NULL or "-": stdout */
    enum group_by group;
    struct profile_filter filter;
    long long top; /* -n: the hottest functions only; 0: all */
};

struct graph_node {
    uint32_t sym;
    const char *group;
};

struct graph_ctx {
    const struct graph_cli *cli;
    struct profile *p;
    struct source_files sources;
    struct graph_node *nodes;
    size_t nnodes;
    int64_t max_total;
    bool clusters;       /* groups are drawn (cleared when dot cannot lay them out) */
    size_t called_funcs; /* -n: the functions with calls, of which the hottest are drawn */
    FILE *out;
};

/* A node's label shows at most this much of a function's name (C++ names shortened first); the
 * whole name is its tooltip. */
#define LABEL_NAME_MAX 60

static void usage(FILE *f)
{
    fputs("usage: calltrace graph [OPTIONS] [RUN]\n"
          "The call graph of RUN (default: the newest run directory here) in Graphviz DOT:\n"
          "a node per function with its calls, total and self time, coloured by total time;\n"
          "an edge per caller and callee with the number of calls.\n"
          "\n"
          "  -o, --output FILE   write to FILE (default: standard output): DOT for FILE.dot,\n"
          "                      FILE.gv or a FILE without extension; else the picture dot\n"
          "                      renders in the format the extension names (svg, png, pdf,\n"
          "                      jpg, ...: dot -T? lists them); another is refused\n"
          "  -n, --top N         only the N functions with the largest total time; the calls\n"
          "                      of the others hang from their nearest drawn caller\n",
          f);
    fputs(CLI_FILTER_HELP, f);
    fputs("  -g, --group BY      cluster nodes by: file (source file, from debug info), image\n"
          "                      (executable or library), none; default: file where known,\n"
          "                      else image\n"
          "  -h, --help          show this help\n"
          "\n"
          "A call of a left-out function is not drawn; the calls it made hang from its\n"
          "nearest drawn caller. C++ names are shortened (template arguments and parameters\n"
          "left out); the whole name is the node's tooltip. When dot cannot lay out the\n"
          "groups of a big graph, it is drawn again without them, with a line saying so.\n",
          f);
}

static int parse_group(const char *value, enum group_by *group)
{
    static const char *const names[] = {"auto", "file", "image", "none"};
    for (size_t i = 0; i < 4; i++) {
        if (strcmp(value, names[i]) == 0) {
            *group = (enum group_by)i;
            return 0;
        }
    }
    err_hint("one of file, image, none", "--group '%s': unknown grouping", value);
    return -1;
}

static int parse_args(int argc, char **argv, struct graph_cli *cli)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"top", required_argument, NULL, 'n'},
        CLI_FILTER_LONG_OPTIONS,
        {"group", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c, rc = 0;
    opterr = 0;
    while (rc == 0 &&
           (c = getopt_long(argc, argv, ":o:n:" CLI_FILTER_OPTS "g:h", longopts, NULL)) != -1) {
        int taken = cli_filter_option(&cli->filter, c, optarg);
        if (taken) {
            rc = taken < 0 ? -1 : 0;
            continue;
        }
        switch (c) {
        case 'o':
            cli->output = optarg;
            break;
        case 'n':
            rc = cli_number("--top", optarg, 1, LLONG_MAX, &cli->top);
            break;
        case 'g':
            rc = parse_group(optarg, &cli->group);
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return cli_bad_option(argv, c, "graph");
        }
    }
    if (rc == 0 && cli_one_run(argc, argv, "graph", &cli->run) < 0)
        return -1;
    return rc;
}

/* Inside a DOT string: the name escaped as in text output (util/text_escape.h), then its quotes
 * and backslashes escaped for DOT, so that the label shows what report shows. */
static void put_dot_escaped(FILE *out, const char *s)
{
    char *escaped = text_escape_dup(s, TEXT_NAME);
    for (const char *c = escaped ? escaped : "?"; *c; c++) {
        if (*c == '"' || *c == '\\')
            fputc('\\', out);
        fputc(*c, out);
    }
    free(escaped);
}

static void put_dot_string(FILE *out, const char *s)
{
    fputc('"', out);
    put_dot_escaped(out, s);
    fputc('"', out);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static const char *group_of(struct graph_ctx *g, uint32_t sym)
{
    const struct replay *r = &g->p->replay;
    const struct replay_sym *s = replay_sym(r, sym);
    const char *file = NULL;
    if (g->cli->group == GROUP_NONE)
        return "";
    if (g->cli->group != GROUP_IMAGE)
        file = source_file_of(&g->sources, s->image, replay_sym_image(r, sym), s->link_addr);
    return file ? file : base_name(replay_sym_image(r, sym));
}

static int node_order(const void *a, const void *b)
{
    const struct graph_node *x = a, *y = b;
    int c = strcmp(x->group, y->group);
    return c ? c : (x->sym > y->sym) - (x->sym < y->sym);
}

/* Nodes: every kept function with calls, and any that only an edge names (a forked child's
 * inherited caller). */
static int collect_nodes(struct graph_ctx *g, struct profile_edge **edges, size_t nedges)
{
    const struct profile *p = g->p;
    uint8_t *want = calloc(p->replay.nsyms + 1, 1);
    g->nodes = calloc(p->replay.nsyms + 1, sizeof(*g->nodes));
    if (!want || !g->nodes) {
        free(want);
        return -1;
    }
    for (size_t i = 0; i < nedges; i++)
        want[edges[i]->caller] = want[edges[i]->callee] = 1;
    for (uint32_t s = 0; s < p->replay.nsyms; s++) {
        if (!p->stats[s].calls && !want[s])
            continue;
        g->nodes[g->nnodes++] = (struct graph_node){s, group_of(g, s)};
        g->clusters |= *g->nodes[g->nnodes - 1].group != '\0';
        if (p->stats[s].total_ns > g->max_total)
            g->max_total = p->stats[s].total_ns;
    }
    free(want);
    qsort(g->nodes, g->nnodes, sizeof(*g->nodes), node_order);
    return 0;
}

/* Cold blue to hot red by share of the biggest total time. */
static void put_node(struct graph_ctx *g, const struct graph_node *n)
{
    const struct func_stats *s = &g->p->stats[n->sym];
    double share = g->max_total ? (double)s->total_ns / (double)g->max_total : 0;
    char total[32], self[32], name[4 * LABEL_NAME_MAX];
    const char *full = replay_sym(&g->p->replay, n->sym)->name;
    demangled_short_name(full, LABEL_NAME_MAX, name, sizeof(name));
    fprintf(g->out, "    f%u [label=\"", n->sym);
    put_dot_escaped(g->out, name);
    /* "\\n" is DOT's line break inside a label */
    fprintf(g->out,
            "\\ncalls: %llu\\ntotal: %s\\nself: %s\", tooltip=", (unsigned long long)s->calls,
            duration_format(total, sizeof(total), s->total_ns),
            duration_format(self, sizeof(self), s->self_ns));
    put_dot_string(g->out, full);
    fprintf(g->out, ", fillcolor=\"%.3f %.3f 1.000\"];\n", 0.6 * (1 - share), 0.25 + 0.6 * share);
}

static void put_nodes(struct graph_ctx *g)
{
    for (size_t i = 0; i < g->nnodes;) {
        const char *group = g->nodes[i].group;
        bool cluster = *group != '\0' && g->clusters;
        if (cluster) {
            fprintf(g->out, "  subgraph cluster_%zu {\n    label=", i);
            put_dot_string(g->out, group);
            fputs(";\n    style=\"rounded\";\n    color=\"gray60\";\n", g->out);
        }
        for (; i < g->nnodes && strcmp(g->nodes[i].group, group) == 0; i++)
            put_node(g, &g->nodes[i]);
        if (cluster)
            fputs("  }\n", g->out);
    }
}

static void put_graph(struct graph_ctx *g, const char *run, struct profile_edge **edges,
                      size_t nedges)
{
    fputs("digraph calltrace {\n  graph [fontname=\"Helvetica\", label=\"", g->out);
    put_dot_escaped(g->out, run);
    if (g->cli->top && (size_t)g->cli->top < g->called_funcs)
        fprintf(g->out, ": the %lld hottest of %zu functions", g->cli->top, g->called_funcs);
    fputs("\"];\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n"
          "  edge [fontname=\"Helvetica\"];\n",
          g->out);
    put_nodes(g);
    for (size_t i = 0; i < nedges; i++)
        fprintf(g->out, "  f%u -> f%u [label=\"%llu\"];\n", edges[i]->caller, edges[i]->callee,
                (unsigned long long)edges[i]->calls);
    fputs("}\n", g->out);
}

/* FILE's extension, lower-cased into ext; "" when it has none. */
static void extension_of(const char *file, char *ext, size_t len)
{
    const char *slash = strrchr(file, '/');
    const char *dot = strrchr(slash ? slash + 1 : file, '.');
    size_t i = 0;
    for (const char *p = dot && dot[1] ? dot + 1 : ""; *p && i + 1 < len; p++)
        ext[i++] = (char)tolower((unsigned char)*p);
    ext[i] = '\0';
}

/* The output formats dot can write to a file, space-separated, from the list its error for an
 * unknown -T format gives ("Use one of: bmp canon ... xlib"); "" when dot cannot be run. */
static void dot_formats(char *list, size_t len)
{
    list[0] = '\0';
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    char *argv[] = {"dot", "-T?", NULL};
    extern char **environ;
    pid_t pid;
    int rc = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    char text[8192];
    size_t n = 0;
    ssize_t got;
    while (
        rc == 0 && n + 1 < sizeof(text) &&
        ((got = read(fds[0], text + n, sizeof(text) - 1 - n)) > 0 || (got < 0 && errno == EINTR)))
        n += got > 0 ? (size_t)got : 0;
    close(fds[0]);
    if (rc == 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    text[n] = '\0';
    const char *from = strstr(text, "Use one of:");
    if (!from)
        return;
    from += strlen("Use one of:");
    for (char *word = strtok((char *)from, " \n"); word; word = strtok(NULL, " \n")) {
        /* these open a window instead of writing a file */
        if (strcmp(word, "x11") == 0 || strcmp(word, "xlib") == 0 || strcmp(word, "gtk") == 0)
            continue;
        strlcat(list, *list ? " " : "", len);
        strlcat(list, word, len);
    }
}

static bool in_list(const char *list, const char *word)
{
    size_t len = strlen(word);
    for (const char *p = list; (p = strstr(p, word)); p += len)
        if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
            return true;
    return false;
}

/* What -o FILE asks for, by its extension: DOT text (none, .dot, .gv: *format ""), or the
 * format dot renders of that name (.svg, .png, .pdf, .jpg, ...). Anything else is refused, not
 * given DOT. Returns 0, or -1 after one error line. */
static int output_format(const char *file, char *format, size_t len)
{
    char ext[16];
    format[0] = '\0';
    if (!file || strcmp(file, "-") == 0)
        return 0;
    extension_of(file, ext, sizeof(ext));
    if (!*ext || strcmp(ext, "dot") == 0 || strcmp(ext, "gv") == 0)
        return 0;
    char formats[4096];
    dot_formats(formats, sizeof(formats));
    if (!*formats) {
        err_hint("install Graphviz (apt-get install graphviz), or write DOT with -o FILE.dot",
                 "%s: cannot render .%s: Graphviz's dot is not installed", file, ext);
        return -1;
    }
    if (!in_list(formats, ext)) {
        char hint[4200];
        snprintf(hint, sizeof(hint), "-o FILE.dot writes DOT; dot renders %s", formats);
        err_hint(hint, "%s: dot cannot render .%s files", file, ext);
        return -1;
    }
    strlcpy(format, ext, len);
    return 0;
}

/* A file in memory (dot's input, dot's error output). -1 after an error line. */
static int memory_file(const char *name, const char *file)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0)
        err_msg("%s: cannot render: %s", file, strerror(errno));
    return fd;
}

static int rewind_empty(int fd)
{
    return ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0 ? 0 : -1;
}

/* The graph's DOT text into fd, from its start. */
static int write_dot_text(struct graph_ctx *g, const char *run, struct profile_edge **edges,
                          size_t nedges, int fd)
{
    int copy = rewind_empty(fd) == 0 ? dup(fd) : -1;
    FILE *out = copy >= 0 ? fdopen(copy, "w") : NULL;
    if (!out) {
        if (copy >= 0)
            close(copy);
        return -1;
    }
    g->out = out;
    put_graph(g, run, edges, nedges);
    g->out = NULL;
    return fclose(out) == 0 ? 0 : -1;
}

/* Runs `dot -TFMT -o FILE` on the DOT text in in_fd, its error output into err_fd. Returns its
 * wait status, or -1 after an error line. */
static int run_dot(const char *format, const char *file, int in_fd, int err_fd)
{
    if (lseek(in_fd, 0, SEEK_SET) != 0 || rewind_empty(err_fd) < 0) {
        err_msg("%s: cannot render: %s", file, strerror(errno));
        return -1;
    }
    char tflag[16];
    snprintf(tflag, sizeof(tflag), "-T%s", format);
    char *argv[] = {"dot", tflag, "-o", (char *)file, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
    posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    extern char **environ;
    pid_t pid;
    int rc = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        err_msg("%s: cannot start dot: %s", file, strerror(rc));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            err_msg("%s: waiting for dot: %s", file, strerror(errno));
            return -1;
        }
    }
    return status;
}

/* What dot wrote on its error output, in one line: its first error (or first line) and how
 * many more lines there were (Graphviz 2.43 writes thousands on a big graph). *init_rank: the
 * error was "trouble in init_rank", its failure to lay out clusters. */
static void sum_up_dot(int err_fd, char *said, size_t len, bool *init_rank)
{
    char buf[65536];
    ssize_t n = pread(err_fd, buf, sizeof(buf) - 1, 0);
    struct stat st;
    bool more = fstat(err_fd, &st) == 0 && n >= 0 && st.st_size > n;
    buf[n > 0 ? n : 0] = '\0';
    *init_rank = strstr(buf, "trouble in init_rank") != NULL;
    said[0] = '\0';
    if (n <= 0)
        return;
    const char *first = strstr(buf, "Error");
    if (!first || (first != buf && first[-1] != '\n'))
        first = buf;
    int first_len = (int)strcspn(first, "\n");
    size_t lines = buf[n - 1] != '\n';
    for (ssize_t i = 0; i < n; i++)
        lines += buf[i] == '\n';
    if (more) /* the rest was not read: at least as many lines again */
        snprintf(said, len, "%.*s (and more than %zu more lines)", first_len, first, lines);
    else if (lines > 1)
        snprintf(said, len, "%.*s (and %zu more lines)", first_len, first, lines - 1);
    else
        snprintf(said, len, "%.*s", first_len, first);
    for (char *c = said; *c; c++) /* one line of calltrace's: no control bytes of dot's */
        if ((unsigned char)*c < 0x20)
            *c = ' ';
}

static const char *status_text(int status, char *buf, size_t len)
{
    if (WIFEXITED(status))
        snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
    else
        snprintf(buf, len, "signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return buf;
}

/* dot, once; a second time without the groups when it could not lay them out. */
static int render_with(struct graph_ctx *g, const char *run, struct profile_edge **edges,
                       size_t nedges, const char *format, const char *file, int in_fd, int err_fd)
{
    char said[512], what[32];
    bool init_rank = false;
    int status = -1;
    for (;;) {
        if (write_dot_text(g, run, edges, nedges, in_fd) < 0) {
            err_msg("%s: cannot render: %s", file, strerror(errno));
            return -1;
        }
        if ((status = run_dot(format, file, in_fd, err_fd)) < 0)
            return -1;
        sum_up_dot(err_fd, said, sizeof(said), &init_rank);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            if (*said)
                err_msg("%s: dot: %s", file, said);
            return 0;
        }
        if (!init_rank || !g->clusters)
            break;
        err_msg("%s: Graphviz's dot cannot lay out this graph grouped by %s (\"trouble in "
                "init_rank\"): drawn without the groups",
                file, g->cli->group == GROUP_IMAGE ? "image" : "source file");
        g->clusters = false;
    }
    err_hint("`calltrace graph -o FILE.dot` writes the DOT text", "%s: dot failed (%s): %s", file,
             status_text(status, what, sizeof(what)), *said ? said : "it said nothing");
    unlink(file);
    return -1;
}

static int render(struct graph_ctx *g, const char *run, struct profile_edge **edges, size_t nedges,
                  const char *format, const char *file)
{
    int in_fd = memory_file("calltrace-graph.dot", file);
    int err_fd = in_fd >= 0 ? memory_file("calltrace-dot-errors", file) : -1;
    int rc = err_fd >= 0 ? render_with(g, run, edges, nedges, format, file, in_fd, err_fd) : -1;
    if (in_fd >= 0)
        close(in_fd);
    if (err_fd >= 0)
        close(err_fd);
    return rc;
}

static FILE *open_output(const char *file)
{
    if (!file || strcmp(file, "-") == 0)
        return stdout;
    FILE *out = fopen(file, "w");
    if (!out)
        err_msg("cannot create %s: %s", file, strerror(errno));
    return out;
}

static int close_output(FILE *out, const char *file)
{
    if (out == stdout) {
        if (fflush(out) == 0)
            return 0;
        err_msg("writing the graph: %s", strerror(errno));
        return -1;
    }
    if (fclose(out) == 0)
        return 0;
    err_msg("writing %s: %s", file, strerror(errno));
    return -1;
}

/* The graph, as DOT text to the output, or rendered by dot (format). */
static int build_graph(struct graph_ctx *g, const char *run, const char *format)
{
    size_t nedges;
    struct profile_edge **edges = profile_edges(g->p, &nedges);
    if (!edges || collect_nodes(g, edges, nedges) < 0) {
        free(edges);
        err_msg("out of memory");
        return -1;
    }
    const char *file = g->cli->output;
    int rc = -1;
    if (format) {
        rc = render(g, run, edges, nedges, format, file);
    } else if ((g->out = open_output(file))) {
        put_graph(g, run, edges, nedges);
        rc = close_output(g->out, file);
    }
    free(edges);
    return rc;
}

static int hotter(const void *a, const void *b, void *ctx)
{
    const struct func_stats *stats = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (stats[x].total_ns != stats[y].total_ns)
        return stats[x].total_ns < stats[y].total_ns ? 1 : -1;
    if (stats[x].calls != stats[y].calls)
        return stats[x].calls < stats[y].calls ? 1 : -1;
    return (x > y) - (x < y);
}

/* -n: a first replay picks the top functions by total time; the graph's replay keeps only them
 * (filter->syms), so that the calls of the others hang from their nearest drawn caller. */
static int pick_hottest(const char *record, struct graph_cli *cli, uint8_t **keep, size_t *called)
{
    struct profile p;
    if (profile_build(&p, record, &cli->filter, 0) < 0)
        return -1;
    uint32_t *order = calloc(p.replay.nsyms + 1, sizeof(*order));
    *keep = calloc(p.replay.nsyms + 1, 1);
    if (!order || !*keep) {
        free(order);
        profile_free(&p);
        err_msg("out of memory");
        return -1;
    }
    size_t n = 0;
    for (uint32_t s = 0; s < p.replay.nsyms; s++)
        if (p.stats[s].calls)
            order[n++] = s;
    qsort_r(order, n, sizeof(*order), hotter, p.stats);
    for (size_t i = 0; i < n && i < (size_t)cli->top; i++)
        (*keep)[order[i]] = 1;
    *called = n;
    cli->filter.syms = *keep;
    cli->filter.nsyms = p.replay.nsyms;
    free(order);
    profile_free(&p);
    return 0;
}

int cmd_graph(int argc, char **argv)
{
    uint64_t start_ns = clock_mono_ns();
    struct graph_cli cli = {.group = GROUP_AUTO};
    char run[PATH_MAX], record[PATH_MAX];
    if (parse_args(argc, argv, &cli) < 0)
        return 2;
    if (run_select(cli.run, run, sizeof(run), record, sizeof(record)) < 0)
        return 1;
    char format_name[32];
    if (output_format(cli.output, format_name, sizeof(format_name)) < 0)
        return 1;
    const char *format = *format_name ? format_name : NULL;
    uint8_t *hottest = NULL;
    struct graph_ctx g = {.cli = &cli};
    if (cli.top && pick_hottest(record, &cli, &hottest, &g.called_funcs) < 0) {
        cli_filter_free(&cli.filter);
        return 1;
    }
    struct profile p;
    g.p = &p;
    int rc = profile_build(&p, record, &cli.filter, PROFILE_EDGES);
    if (rc == 0 && cli.filter.tid && !p.saw_tid)
        rc = cli_missing_tid(&p.replay, run, cli.filter.tid);
    if (rc == 0) {
        profile_warn_unmatched(&p);
        rc = build_graph(&g, run, format);
    }
    if (rc == 0)
        run_warn_damaged(run, p.replay.damaged);
    if (rc == 0)
        run_warn_dropped(run, p.replay.dropped);
    cli_print_stats("graph", p.replay.events, start_ns);
    source_files_free(&g.sources);
    free(g.nodes);
    profile_free(&p);
    free(hottest);
    cli_filter_free(&cli.filter);
    return rc == 0 ? 0 : 1;
}
