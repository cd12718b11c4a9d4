#include "view/target.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "output/run_dir.h"
#include "output/trace_file.h"
#include "record/format.h"
#include "util/log.h"
#include "view/trace_check.h"
#include "view/view.h"

#define WHY_MAX 256

/* What a directory holds: its trace file (the newer form if both exist), or only a record. */
enum run_kind { NOT_A_RUN, RUN_RECORD_ONLY, RUN_WITH_TRACE };

struct run_info {
    enum run_kind kind;
    char trace[PATH_MAX];
    struct stat st; /* of the trace, or of the record */
};

static bool newer(const struct stat *a, const struct stat *b)
{
    if (a->st_mtim.tv_sec != b->st_mtim.tv_sec)
        return a->st_mtim.tv_sec > b->st_mtim.tv_sec;
    return a->st_mtim.tv_nsec > b->st_mtim.tv_nsec;
}

static bool stat_file(const char *dir, const char *name, char *path, struct stat *st)
{
    return run_path(path, PATH_MAX, dir, name) == 0 && stat(path, st) == 0 && S_ISREG(st->st_mode);
}

static void inspect_run(const char *dir, struct run_info *r)
{
    /* First the protobuf: written after trace.json when both are, and it opens faster. */
    static const char *const traces[] = {TRACE_PFTRACE_NAME, TRACE_PFTRACE_GZ_NAME, TRACE_JSON_NAME,
                                         TRACE_JSON_GZ_NAME};
    char path[PATH_MAX];
    struct stat st;
    r->kind = NOT_A_RUN;
    for (size_t i = 0; i < sizeof(traces) / sizeof(traces[0]); i++) {
        if (stat_file(dir, traces[i], path, &st) &&
            (r->kind != RUN_WITH_TRACE || newer(&st, &r->st))) {
            r->kind = RUN_WITH_TRACE;
            r->st = st;
            memcpy(r->trace, path, sizeof(path));
        }
    }
    if (r->kind == NOT_A_RUN && stat_file(dir, REC_FILE_NAME, path, &st)) {
        r->kind = RUN_RECORD_ONLY;
        r->st = st;
    }
}

/* URL paths are compared byte for byte with a table, never mapped to files; names outside this
 * set get a made-up one so that no escaping is needed in URLs and deep links. */
static bool url_safe(const char *s)
{
    if (!*s || !strcmp(s, ".") || !strcmp(s, ".."))
        return false;
    for (; *s; s++)
        if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') || ('0' <= *s && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '-'))
            return false;
    return true;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static struct view_entry *add_entry(struct view_target *t)
{
    struct view_entry *e = reallocarray(t->entries, t->n + 1, sizeof(*e));
    if (!e)
        return NULL;
    t->entries = e;
    e += t->n++;
    memset(e, 0, sizeof(*e));
    return e;
}

/* A JSON trace beyond this is only checked at its edges: reading gigabytes first would keep
 * the user waiting for the viewer. calltrace writes its traces whole (a temporary name, then a
 * rename), so a big one is whole unless something else damaged it. */
#define FULL_CHECK_MAX (256ll << 20)

/* Where Perfetto's browser UI (a 32-bit WebAssembly trace processor, 4 GB at most) starts to
 * run out of memory: about 1 GB of JSON, or 2 GB of protobuf. */
#define VIEW_LARGE (1000ll << 20)

static int check_file(const char *path, long long size, bool *gzip, bool *protobuf, char *why)
{
    if (trace_sniff(path, gzip, protobuf, why, WHY_MAX) < 0)
        return -1;
    if (size > FULL_CHECK_MAX)
        return *protobuf ? 0 : trace_check_quick(path, gzip, why, WHY_MAX);
    return *protobuf ? trace_check_pftrace(path, why, WHY_MAX)
                     : trace_check(path, gzip, why, WHY_MAX);
}

static const char *url_name(const char *name, const struct view_entry *e)
{
    if (url_safe(name))
        return name;
    if (e->protobuf)
        return e->gzip ? TRACE_PFTRACE_GZ_NAME : TRACE_PFTRACE_NAME;
    return e->gzip ? TRACE_JSON_GZ_NAME : TRACE_JSON_NAME;
}

static int single_file(struct view_target *t, const char *path)
{
    char why[WHY_MAX];
    struct stat st;
    if (stat(path, &st) < 0) {
        err_msg("view: %s: %s", path, strerror(errno));
        return -1;
    }
    bool gzip, protobuf;
    if (check_file(path, st.st_size, &gzip, &protobuf, why) < 0) {
        err_msg("view: %s: %s", path, why);
        return -1;
    }
    struct view_entry *e = add_entry(t);
    if (e)
        e->gzip = gzip, e->protobuf = protobuf;
    const char *name = base_name(path);
    if (!e || !(e->name = strdup(name)) || !(e->path = strdup(path)) ||
        asprintf(&e->url_path, "/%s", url_name(name, e)) < 0) {
        if (e)
            e->url_path = NULL;
        err_msg("view: %s: %s", path, strerror(errno));
        return -1;
    }
    e->mtime = st.st_mtim;
    e->size = st.st_size;
    if (st.st_size > VIEW_LARGE)
        fprintf(stderr,
                "calltrace: %s is %.1f GB: Perfetto's browser UI may run out of memory on a "
                "trace this big; view a part of the run with --from/--to, --tid, -F or "
                "--max-calls (see calltrace view --help)\n",
                path, (double)st.st_size / 1e9);
    return 0;
}

/* A run killed before it wrote its trace still has its record: make the trace from it. */
static int export_first(const char *run, struct run_info *r)
{
    fprintf(stderr, "calltrace: %s has no trace yet; making it from %s\n", run, REC_FILE_NAME);
    struct trace_stats stats;
    struct progress progress;
    progress_init(&progress, false);
    struct trace_file_options trace = {.format = TRACE_AUTO, .progress = &progress};
    struct run_dir dir;
    if (run_dir_open(run, &dir) < 0)
        return -1;
    int rc = trace_export(&dir, &trace, &stats);
    run_dir_close(&dir);
    if (rc < 0)
        return -1;

    if (stats.record_damaged)
        err_msg("%s: the record ends %s; the trace holds everything before that", run,
                stats.record_damaged == 1 ? "in the middle of an event" : "with damaged data");
    inspect_run(run, r);
    return r->kind == RUN_WITH_TRACE ? 0 : -1;
}

/* A window of the run: written from its record to RUN/window/, which is served instead. */
static int window_of_run(struct view_target *t, const char *run, const struct view_options *o)
{
    struct run_dir rd, window;
    if (run_dir_open(run, &rd) < 0)
        return -1;
    if (run_dir_sub(&rd, "window", &window) < 0) {
        run_dir_close(&rd);
        return -1;
    }
    struct progress progress;
    progress_init(&progress, false);
    /* A window is looked at in Perfetto: the protobuf unless asked for JSON. */
    struct trace_file_options trace = {.format =
                                           o->format == TRACE_AUTO ? TRACE_PERFETTO : o->format,
                                       .window = o->window,
                                       .out = &window,
                                       .progress = &progress};
    struct trace_stats stats;
    int rc = trace_export(&rd, &trace, &stats);
    run_dir_close(&rd);
    run_dir_close(&window);
    if (rc < 0)
        return -1;
    fprintf(stderr, "calltrace: %llu calls of the window in %s/%s\n",
            (unsigned long long)stats.calls, window.path, stats.files);
    struct run_info r;
    inspect_run(window.path, &r);
    if (r.kind != RUN_WITH_TRACE) {
        err_msg("view: %s: no trace was written", window.path);
        return -1;
    }
    return single_file(t, r.trace);
}

static int single_run(struct view_target *t, const char *run, struct run_info *r,
                      const struct view_options *o)
{
    if (!call_window_is_whole(&o->window)) {
        char record[PATH_MAX];
        struct stat st;
        if (stat_file(run, REC_FILE_NAME, record, &st))
            return window_of_run(t, run, o);
        err_hint("a window is made from a run's " REC_FILE_NAME, "view: %s: no record", run);
        return -1;
    }
    if (r->kind == RUN_RECORD_ONLY && export_first(run, r) < 0)
        return -1;
    return single_file(t, r->trace);
}

static int index_entry(struct view_target *t, const char *dir, const char *name)
{
    char run[PATH_MAX];
    struct run_info r;
    if (run_path(run, sizeof(run), dir, name) < 0)
        return 0;
    inspect_run(run, &r);
    if (r.kind == NOT_A_RUN)
        return 0;
    struct view_entry *e = add_entry(t);
    if (!e || !(e->name = strdup(name)))
        return -1;
    e->mtime = r.st.st_mtim;
    e->size = r.st.st_size;
    if (r.kind == RUN_RECORD_ONLY)
        return asprintf(&e->problem, "no trace yet: run calltrace export on it") < 0 ? -1 : 0;
    char why[WHY_MAX];
    if (trace_sniff(r.trace, &e->gzip, &e->protobuf, why, sizeof(why)) < 0 ||
        (!e->protobuf && trace_check_quick(r.trace, &e->gzip, why, sizeof(why)) < 0))
        return (e->problem = strdup(why)) ? 0 : -1;
    if (!(e->path = strdup(r.trace)))
        return -1;
    int n = url_safe(name) ? asprintf(&e->url_path, "/%s/%s", name, base_name(r.trace))
                           : asprintf(&e->url_path, "/run~%zu/%s", t->n, base_name(r.trace));
    if (n < 0)
        e->url_path = NULL;
    return n < 0 ? -1 : 0;
}

static int by_newest(const void *a, const void *b)
{
    const struct view_entry *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? 1 : -1;
    return x->mtime.tv_nsec < y->mtime.tv_nsec ? 1 : x->mtime.tv_nsec > y->mtime.tv_nsec ? -1 : 0;
}

static int index_dir(struct view_target *t, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        err_msg("view: %s: %s", dir, strerror(errno));
        return -1;
    }
    t->index = true;
    int rc = (t->dir = strdup(dir)) ? 0 : -1;
    for (struct dirent *de; rc == 0 && (de = readdir(d));)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            rc = index_entry(t, dir, de->d_name);
    closedir(d);
    if (rc < 0) {
        err_msg("view: %s: %s", dir, strerror(ENOMEM));
        return -1;
    }
    if (!t->n) {
        err_hint("a run directory holds " REC_FILE_NAME ", " TRACE_JSON_NAME
                 " or " TRACE_PFTRACE_NAME,
                 "view: %s: no run directories in it", dir);
        return -1;
    }
    qsort(t->entries, t->n, sizeof(*t->entries), by_newest);
    return 0;
}

static int newest_run(struct view_target *t, const struct view_options *o)
{
    DIR *d = opendir(".");
    if (!d) {
        err_msg("view: the current directory: %s", strerror(errno));
        return -1;
    }
    char best[PATH_MAX] = "";
    struct run_info bi = {.kind = NOT_A_RUN};
    for (struct dirent *de; (de = readdir(d));) {
        struct run_info r;
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        inspect_run(de->d_name, &r);
        if (r.kind != NOT_A_RUN && (bi.kind == NOT_A_RUN || newer(&r.st, &bi.st)) &&
            snprintf(best, sizeof(best), "%s", de->d_name) < (int)sizeof(best))
            bi = r;
    }
    closedir(d);
    if (bi.kind == NOT_A_RUN) {
        err_hint("give RUN, FILE or DIR, or record one with calltrace --open PROGRAM",
                 "view: no run directory in the current directory");
        return -1;
    }
    fprintf(stderr, "calltrace: the newest run here is %s\n", best);
    return single_run(t, best, &bi, o);
}

int view_target_resolve(struct view_target *t, const char *arg, const struct view_options *o)
{
    memset(t, 0, sizeof(*t));
    if (!arg)
        return newest_run(t, o);
    struct stat st;
    if (stat(arg, &st) < 0) {
        err_msg("view: %s: %s", arg, strerror(errno));
        return -1;
    }
    bool whole = call_window_is_whole(&o->window);
    if (!whole && !S_ISDIR(st.st_mode)) {
        err_hint("give the run directory it belongs to",
                 "view: %s: a window is made from a run's " REC_FILE_NAME ", not from a trace file",
                 arg);
        return -1;
    }
    if (S_ISREG(st.st_mode))
        return single_file(t, arg);
    if (!S_ISDIR(st.st_mode)) {
        err_msg("view: %s: not a trace file or a directory", arg);
        return -1;
    }
    struct run_info r;
    inspect_run(arg, &r);
    if (r.kind == NOT_A_RUN && !whole) {
        err_hint("give one run directory",
                 "view: %s: a window is made from one run, and this is not a run directory", arg);
        return -1;
    }
    return r.kind == NOT_A_RUN ? index_dir(t, arg) : single_run(t, arg, &r, o);
}

void view_target_free(struct view_target *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->entries[i].name);
        free(t->entries[i].path);
        free(t->entries[i].url_path);
        free(t->entries[i].problem);
    }
    free(t->entries);
    free(t->dir);
    memset(t, 0, sizeof(*t));
}
