/* calltrace graph [RUN] [-o FILE]: the call graph in Graphviz DOT, a node per function (calls,
 * total and self time, coloured by total time), an edge per caller and callee (calls), nodes
 * grouped by source file or image. .svg/.png/.pdf outputs are rendered by Graphviz's dot. */
#include <bsd/stdlib.h>
#include <bsd/string.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/profile.h"
#include "analysis/run_select.h"
#include "analysis/source_file.h"
#include "cmd/cli_util.h"
#include "record/clock.h"
#include "cmd/commands.h"
#include "util/duration.h"
#include "util/log.h"
#include "util/text_escape.h"

enum group_by { GROUP_AUTO, GROUP_FILE, GROUP_IMAGE, GROUP_NONE };

struct graph_cli {
    const char *run;
    const char *output; /* NULL or "-": stdout */
    enum group_by group;
    struct profile_filter filter;
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
    FILE *out;
};

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
          "                      jpg, ...: dot -T? lists them); another is refused\n",
          f);
    fputs(CLI_FILTER_HELP, f);
    fputs("  -g, --group BY      cluster nodes by: file (source file, from debug info), image\n"
          "                      (executable or library), none; default: file where known,\n"
          "                      else image\n"
          "  -h, --help          show this help\n"
          "\n"
          "A call of a left-out function is not drawn; the calls it made hang from its\n"
          "nearest drawn caller.\n",
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
        CLI_FILTER_LONG_OPTIONS,
        {"group", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c, rc = 0;
    opterr = 0;
    while (rc == 0 &&
           (c = getopt_long(argc, argv, ":o:" CLI_FILTER_OPTS "g:h", longopts, NULL)) != -1) {
        int taken = cli_filter_option(&cli->filter, c, optarg);
        if (taken) {
            rc = taken < 0 ? -1 : 0;
            continue;
        }
        switch (c) {
        case 'o':
            cli->output = optarg;
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
    if (rc == 0 && optind < argc - 1) {
        err_hint("give one run directory", "graph: too many arguments");
        return -1;
    }
    cli->run = optind < argc ? argv[optind] : NULL;
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
    char total[32], self[32];
    fprintf(g->out, "    f%u [label=\"", n->sym);
    put_dot_escaped(g->out, replay_sym(&g->p->replay, n->sym)->name);
    /* "\\n" is DOT's line break inside a label */
    fprintf(g->out, "\\ncalls: %llu\\ntotal: %s\\nself: %s\", fillcolor=\"%.3f %.3f 1.000\"];\n",
            (unsigned long long)s->calls, duration_format(total, sizeof(total), s->total_ns),
            duration_format(self, sizeof(self), s->self_ns), 0.6 * (1 - share), 0.25 + 0.6 * share);
}

static void put_nodes(struct graph_ctx *g)
{
    for (size_t i = 0; i < g->nnodes;) {
        const char *group = g->nodes[i].group;
        bool cluster = *group != '\0';
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
    fputs("digraph calltrace {\n  graph [fontname=\"Helvetica\", label=", g->out);
    put_dot_string(g->out, run);
    fputs("];\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n"
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

/* Starts `dot -TFMT -o FILE` reading from the returned stream. */
static FILE *start_dot(const char *format, const char *file, pid_t *pid)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) {
        err_msg("%s: cannot start dot: %s", file, strerror(errno));
        return NULL;
    }
    char tflag[16];
    snprintf(tflag, sizeof(tflag), "-T%s", format);
    char *argv[] = {"dot", tflag, "-o", (char *)file, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
    extern char **environ;
    int rc = posix_spawnp(pid, "dot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[0]);
    if (rc != 0) {
        close(fds[1]);
        err_msg("%s: cannot start dot: %s", file, strerror(rc));
        return NULL;
    }
    FILE *out = fdopen(fds[1], "w");
    if (!out) {
        close(fds[1]);
        waitpid(*pid, NULL, 0);
    }
    return out;
}

static int finish_dot(FILE *out, pid_t pid, const char *file)
{
    int write_failed = fclose(out) != 0;
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            err_msg("%s: waiting for dot: %s", file, strerror(errno));
            return -1;
        }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || write_failed) {
        err_msg("%s: dot failed (%s %d); the DOT text is what `calltrace graph` prints", file,
                WIFEXITED(status) ? "exit status" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        unlink(file);
        return -1;
    }
    return 0;
}

static FILE *open_output(const char *file, const char *format, pid_t *pid)
{
    if (!file || strcmp(file, "-") == 0)
        return stdout;
    if (format)
        return start_dot(format, file, pid);
    FILE *out = fopen(file, "w");
    if (!out)
        err_msg("cannot create %s: %s", file, strerror(errno));
    return out;
}

static int close_output(FILE *out, const char *file, const char *format, pid_t pid)
{
    if (out == stdout) {
        if (fflush(out) == 0)
            return 0;
        err_msg("writing the graph: %s", strerror(errno));
        return -1;
    }
    if (format)
        return finish_dot(out, pid, file);
    if (fclose(out) == 0)
        return 0;
    err_msg("writing %s: %s", file, strerror(errno));
    return -1;
}

static int build_graph(struct graph_ctx *g, const char *run)
{
    size_t nedges;
    struct profile_edge **edges = profile_edges(g->p, &nedges);
    if (!edges || collect_nodes(g, edges, nedges) < 0) {
        free(edges);
        err_msg("out of memory");
        return -1;
    }
    put_graph(g, run, edges, nedges);
    free(edges);
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
    struct profile p;
    int rc = profile_build(&p, record, &cli.filter, PROFILE_EDGES);
    if (rc == 0 && cli.filter.tid && !p.saw_tid)
        rc = cli_missing_tid(&p.replay, run, cli.filter.tid);
    struct graph_ctx g = {.cli = &cli, .p = &p};
    pid_t pid = 0;
    if (rc == 0) {
        profile_warn_unmatched(&p);
        signal(SIGPIPE, SIG_IGN); /* a dot that dies early is reported by its status */
        g.out = open_output(cli.output, format, &pid);
        rc = g.out ? build_graph(&g, run) : -1;
        if (g.out && close_output(g.out, cli.output, format, pid) < 0)
            rc = -1;
    }
    if (rc == 0)
        run_warn_damaged(run, p.replay.damaged);
    if (rc == 0)
        run_warn_dropped(run, p.replay.dropped);
    cli_print_stats("graph", p.replay.events, start_ns);
    source_files_free(&g.sources);
    free(g.nodes);
    profile_free(&p);
    cli_filter_free(&cli.filter);
    return rc == 0 ? 0 : 1;
}
