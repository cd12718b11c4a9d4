#include "output/trace_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/run_dir.h"
#include "output/trace_json.h"
#include "output/trace_pftrace.h"
#include "record/format.h"
#include "util/log.h"

int trace_format_parse(const char *text, enum trace_format *format)
{
    static const struct {
        const char *name;
        enum trace_format format;
    } names[] = {{"json", TRACE_JSON},
                 {"perfetto", TRACE_PERFETTO},
                 {"pftrace", TRACE_PERFETTO},
                 {"both", TRACE_BOTH},
                 {"auto", TRACE_AUTO}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (!strcmp(text, names[i].name)) {
            *format = names[i].format;
            return 0;
        }
    }
    return -1;
}

int trace_format_option(const char *arg, enum trace_format *format)
{
    if (trace_format_parse(arg, format) == 0)
        return 0;
    err_hint("give json, perfetto or both", "--format %s: not a trace format", arg);
    return -1;
}

/* A record holds about 4 bytes a call (entry and exit packed, record/call_pack.h);
 * argument values add more, and they make trace.json's events larger in proportion. */
#define RECORD_BYTES_PER_CALL 4

uint64_t trace_estimated_calls(int dir, const char *name)
{
    struct stat st;
    if (fstatat(dir, name, &st, 0) < 0 || st.st_size < 0)
        return 0;
    return (uint64_t)st.st_size / RECORD_BYTES_PER_CALL;
}

void trace_size_guard_init(struct trace_size_guard *g)
{
    const char *text = getenv("CALLTRACE_SIZE_WARNING");
    const char *errstr = NULL;
    long long limit = text ? strtonum(text, 1, LLONG_MAX, &errstr) : 0;
    *g = (struct trace_size_guard){.limit = text && !errstr ? (uint64_t)limit : TRACE_SIZE_WARNING};
}

void trace_size_warn(struct trace_size_guard *g, const char *name)
{
    g->warned = true;
    bool json = !strncmp(name, TRACE_JSON_NAME, strlen(TRACE_JSON_NAME));
    err_hint(json ? "--format perfetto writes a trace 4x smaller; a window (calltrace export "
                    "--from/--to, --tid, -F, --max-calls) or -z smaller still"
                  : "a window (calltrace export --from/--to, --tid, -F, --max-calls) or -z makes "
                    "it smaller",
             "%s has passed %.1f %s, more than a viewer opens whole (the record keeps every "
             "call)",
             name, (double)g->limit / (g->limit >= (1u << 30) ? 1 << 30 : 1 << 20),
             g->limit >= (1u << 30) ? "GB" : "MB");
}

/* The formats to write, and with TRACE_AUTO why. */
static unsigned formats_for(const struct trace_file_options *opts, const struct run_dir *run,
                            struct trace_stats *stats)
{
    enum { JSON = 1, PERFETTO = 2 };
    switch (opts->format) {
    case TRACE_JSON:
        return JSON;
    case TRACE_PERFETTO:
        return PERFETTO;
    case TRACE_BOTH:
        return JSON | PERFETTO;
    case TRACE_AUTO:
        break;
    }
    /* A window makes a big run small: it is the calls shown that count, but they are known
     * only once written. Its user asked to look at a part: JSON unless the whole is big. */
    if (trace_estimated_calls(run->fd, REC_FILE_NAME) <= TRACE_AUTO_JSON_MAX_CALLS)
        return JSON;
    stats->why = "the run is too big for trace.json to open in Perfetto's browser UI (about "
                 "1 GB); --format json writes it anyway";
    return PERFETTO;
}

struct trace_target {
    const char *name, *gz_name;
    int (*write)(const struct trace_io *io, const struct trace_file_options *opts,
                 struct trace_stats *stats);
};

static const struct trace_target targets[] = {
    {TRACE_JSON_NAME, TRACE_JSON_GZ_NAME, trace_json_write},
    {TRACE_PFTRACE_NAME, TRACE_PFTRACE_GZ_NAME, trace_pftrace_write},
};

/* Writes one trace file through a temporary name, in the directory out. */
static int write_target(const struct run_dir *run, const struct run_dir *out,
                        const struct trace_target *t, const struct trace_file_options *opts,
                        struct trace_stats *stats)
{
    const char *name = opts->compress ? t->gz_name : t->name;
    char tmp[64], path[PATH_MAX], tmp_path[PATH_MAX], record_path[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s.tmp", name);
    if (run_path(path, sizeof(path), out->path, name) < 0 ||
        run_path(tmp_path, sizeof(tmp_path), out->path, tmp) < 0 ||
        run_path(record_path, sizeof(record_path), run->path, REC_FILE_NAME) < 0) {
        err_msg("%s: path too long", out->path);
        return -1;
    }
    const struct trace_io io = {.record_dir = run->fd,
                                .record_name = REC_FILE_NAME,
                                .record_path = record_path,
                                .out_dir = out->fd,
                                .out_name = tmp,
                                .out_path = tmp_path,
                                .mode = out->file_mode};
    unlinkat(out->fd, tmp, 0);
    if (t->write(&io, opts, stats) < 0) {
        unlinkat(out->fd, tmp, 0);
        return -1;
    }
    if (renameat(out->fd, tmp, out->fd, name) < 0) {
        err_msg("cannot rename %s to %s: %s", tmp_path, path, strerror(errno));
        unlinkat(out->fd, tmp, 0);
        return -1;
    }
    return 0;
}

/* A trace file this export did not write, left by an earlier one, is removed. */
static void remove_stale(const struct run_dir *out, const char *name)
{
    if (unlinkat(out->fd, name, 0) < 0 && errno != ENOENT)
        err_msg("cannot remove the older %s/%s: %s", out->path, name, strerror(errno));
}

static void note_written(struct trace_stats *stats, const char *name)
{
    size_t len = strlen(stats->files);
    snprintf(stats->files + len, sizeof(stats->files) - len, "%s%s", len ? " and " : "", name);
}

int trace_export(const struct run_dir *run, const struct trace_file_options *opts,
                 struct trace_stats *stats)
{
    const struct run_dir *out = opts->out ? opts->out : run;
    *stats = (struct trace_stats){0};
    unsigned formats = formats_for(opts, run, stats);
    const char *why = stats->why;
    if (why && !opts->quiet)
        fprintf(stderr, "calltrace: writing trace.pftrace, not trace.json: %s\n", why);
    bool written = false;
    for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) { /* bit i: targets[i] */
        const struct trace_target *t = &targets[i];
        if (!(formats & (1u << i))) {
            remove_stale(out, t->name);
            remove_stale(out, t->gz_name);
            continue;
        }
        struct trace_stats one = {0};
        if (write_target(run, out, t, opts, &one) < 0)
            return -1;
        if (!written) { /* the formats show the same calls: the first one's counts */
            one.why = why;
            *stats = one;
            written = true;
        }
        note_written(stats, opts->compress ? t->gz_name : t->name);
        remove_stale(out, opts->compress ? t->name : t->gz_name);
    }
    return 0;
}
