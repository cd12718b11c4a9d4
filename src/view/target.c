#include "view/target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/run_dir.h"
#include "output/trace_file.h"
#include "record/format.h"
#include "util/log.h"
#include "view/trace_check.h"
#include "view/view.h"

#define WHY_MAX 256

/* Inside a directory another user may write, nothing is opened through a link, a FIFO planted
 * under a trace's name cannot block the open, and no terminal is taken. */
#define OPEN_FILE_INSIDE (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
#define OPEN_DIR_INSIDE (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* What a directory holds: its trace file (the newer form if both exist), or only a record. */
enum run_kind { NOT_A_RUN, RUN_RECORD_ONLY, RUN_WITH_TRACE };

struct run_info {
    enum run_kind kind;
    const char *trace; /* its name in the run directory */
    struct stat st;    /* of the trace, or of the record */
};

static bool newer(const struct stat *a, const struct stat *b)
{
    if (a->st_mtim.tv_sec != b->st_mtim.tv_sec)
        return a->st_mtim.tv_sec > b->st_mtim.tv_sec;
    return a->st_mtim.tv_nsec > b->st_mtim.tv_nsec;
}

/* A regular file, not a link to one. */
static bool stat_file(int dir_fd, const char *name, struct stat *st)
{
    return fstatat(dir_fd, name, st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st->st_mode);
}

static void inspect_run(int run_fd, struct run_info *r)
{
    /* First the protobuf: written after trace.json when both are, and it opens faster. */
    static const char *const traces[] = {TRACE_PFTRACE_NAME, TRACE_PFTRACE_GZ_NAME, TRACE_JSON_NAME,
                                         TRACE_JSON_GZ_NAME};
    struct stat st;
    r->kind = NOT_A_RUN;
    for (size_t i = 0; i < sizeof(traces) / sizeof(traces[0]); i++) {
        if (stat_file(run_fd, traces[i], &st) &&
            (r->kind != RUN_WITH_TRACE || newer(&st, &r->st))) {
            r->kind = RUN_WITH_TRACE;
            r->st = st;
            r->trace = traces[i];
        }
    }
    if (r->kind == NOT_A_RUN && stat_file(run_fd, REC_FILE_NAME, &st)) {
        r->kind = RUN_RECORD_ONLY;
        r->st = st;
    }
}

/* Opens name in dir_fd (AT_FDCWD: a path of the user's) without following a link at its end:
 * a regular file, and when seen is given the very file inspected before (same device and
 * inode), not one swapped in since. Returns the descriptor, its stat in st, or -1 with why. */
static int open_trace_file(int dir_fd, const char *name, const struct stat *seen, struct stat *st,
                           char *why)
{
    int fd = openat(dir_fd, name, OPEN_FILE_INSIDE);
    if (fd < 0) {
        snprintf(why, WHY_MAX, "%s",
                 errno == ELOOP ? "a symbolic link: give the file itself (view follows no link, "
                                  "so that nobody can swap one in)"
                                : strerror(errno));
        return -1;
    }
    const char *bad = NULL;
    if (fstat(fd, st) < 0 || fcntl(fd, F_SETFL, 0) < 0) /* blocking again, as the server wants */
        bad = strerror(errno);
    else if (!S_ISREG(st->st_mode))
        bad = "not a trace file or a directory";
    else if (seen && (st->st_dev != seen->st_dev || st->st_ino != seen->st_ino))
        bad = "replaced while it was being opened";
    if (bad) {
        snprintf(why, WHY_MAX, "%s", bad);
        close(fd);
        return -1;
    }
    return fd;
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
    e->fd = -1;
    return e;
}

/* A JSON trace beyond this is only checked at its edges: reading gigabytes first would keep
 * the user waiting for the viewer. calltrace writes its traces whole (a temporary name, then a
 * rename), so a big one is whole unless something else damaged it. */
#define FULL_CHECK_MAX (256ll << 20)

/* Where Perfetto's browser UI (a 32-bit WebAssembly trace processor, 4 GB at most) starts to
 * run out of memory: about 1 GB of JSON, or 2 GB of protobuf. */
#define VIEW_LARGE (1000ll << 20)

static int check_file(int fd, long long size, bool *gzip, bool *protobuf, char *why)
{
    if (trace_sniff(fd, gzip, protobuf, why, WHY_MAX) < 0)
        return -1;
    if (size > FULL_CHECK_MAX)
        return *protobuf ? 0 : trace_check_quick(fd, gzip, why, WHY_MAX);
    return *protobuf ? trace_check_pftrace(fd, why, WHY_MAX) : trace_check(fd, gzip, why, WHY_MAX);
}

static const char *url_name(const char *name, const struct view_entry *e)
{
    if (url_safe(name))
        return name;
    if (e->protobuf)
        return e->gzip ? TRACE_PFTRACE_GZ_NAME : TRACE_PFTRACE_NAME;
    return e->gzip ? TRACE_JSON_GZ_NAME : TRACE_JSON_NAME;
}

/* Serves the trace name in dir_fd (AT_FDCWD: the user's path), path for messages; seen: what
 * inspecting the directory found under that name. */
static int single_file(struct view_target *t, int dir_fd, const char *name, const char *path,
                       const struct stat *seen)
{
    char why[WHY_MAX];
    struct stat st;
    bool gzip, protobuf;
    int fd = open_trace_file(dir_fd, name, seen, &st, why);
    if (fd < 0 || check_file(fd, st.st_size, &gzip, &protobuf, why) < 0) {
        if (fd >= 0)
            close(fd);
        err_msg("view: %s: %s", path, why);
        return -1;
    }
    struct view_entry *e = add_entry(t);
    if (!e) {
        close(fd);
        err_msg("view: %s: %s", path, strerror(ENOMEM));
        return -1;
    }
    e->fd = fd;
    e->gzip = gzip, e->protobuf = protobuf;
    const char *base = base_name(path);
    if (!(e->name = strdup(base)) || !(e->path = strdup(path)) ||
        asprintf(&e->url_path, "/%s", url_name(base, e)) < 0) {
        e->url_path = NULL;
        err_msg("view: %s: %s", path, strerror(ENOMEM));
        return -1;
    }
    e->mtime = st.st_mtim;
    e->size = st.st_size;
    if (st.st_size > VIEW_LARGE)
        note_msg("%s is %.1f GB: Perfetto's browser UI may run out of memory on a trace this "
                 "big; view a part of the run with --from/--to, --tid, -F or --max-calls (see "
                 "calltrace view --help)",
                 path, (double)st.st_size / 1e9);
    return 0;
}

static int serve_run_trace(struct view_target *t, int run_fd, const char *run,
                           const struct run_info *r)
{
    char path[PATH_MAX];
    if (run_path(path, sizeof(path), run, r->trace) < 0) {
        err_msg("view: %s: path too long", run);
        return -1;
    }
    return single_file(t, run_fd, r->trace, path, &r->st);
}

/* A run killed before it wrote its trace still has its record: make the trace from it, into the
 * run held at run_fd (the exporter refuses a run that is not the caller's). */
static int export_first(int run_fd, const char *run, struct run_info *r)
{
    note_msg("%s has no trace yet; making it from %s", run, REC_FILE_NAME);
    struct run_dir dir;
    if (run_dir_open_at(run_fd, ".", run, &dir) < 0)
        return -1;
    struct trace_stats stats;
    struct progress progress;
    progress_init(&progress, false);
    struct trace_file_options trace = {.format = TRACE_AUTO, .progress = &progress};
    int rc = trace_export(&dir, &trace, &stats);
    run_dir_close(&dir);
    if (rc < 0)
        return -1;
    if (stats.record_damaged)
        err_msg("%s: the record ends %s; the trace holds everything before that", run,
                stats.record_damaged == 1 ? "in the middle of an event" : "with damaged data");
    inspect_run(run_fd, r);
    return r->kind == RUN_WITH_TRACE ? 0 : -1;
}

/* A window of the run: written from its record to RUN/window/ (made by us now or earlier, a
 * directory of our own nobody else may write, never a link), which is served instead. */
static int window_of_run(struct view_target *t, int run_fd, const char *run,
                         const struct view_options *o)
{
    struct run_dir dir, window;
    if (run_dir_open_at(run_fd, ".", run, &dir) < 0)
        return -1;
    int rc = run_dir_sub(&dir, "window", &window);
    if (rc < 0) {
        run_dir_close(&dir);
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
    struct run_info r;
    rc = trace_export(&dir, &trace, &stats);
    run_dir_close(&dir);
    if (rc == 0) {
        note_msg("%llu calls of the window in %s/%s", (unsigned long long)stats.calls, window.path,
                 stats.files);
        inspect_run(window.fd, &r);
        if (r.kind != RUN_WITH_TRACE) {
            err_msg("view: %s: no trace was written", window.path);
            rc = -1;
        }
    }
    if (rc == 0)
        rc = serve_run_trace(t, window.fd, window.path, &r);
    run_dir_close(&window);
    return rc;
}

static int single_run(struct view_target *t, int run_fd, const char *run, struct run_info *r,
                      const struct view_options *o)
{
    if (!call_window_is_whole(&o->window)) {
        struct stat st;
        if (stat_file(run_fd, REC_FILE_NAME, &st))
            return window_of_run(t, run_fd, run, o);
        err_hint("a window is made from a run's " REC_FILE_NAME, "view: %s: no record", run);
        return -1;
    }
    if (r->kind == RUN_RECORD_ONLY && export_first(run_fd, run, r) < 0)
        return -1;
    return serve_run_trace(t, run_fd, run, r);
}

/* One run of a directory's index: a problem to show, or its trace open and checked at its
 * edges (reading every trace in full would keep the user waiting). */
static int index_trace(struct view_entry *e, int run_fd, const struct run_info *r, size_t nth)
{
    char why[WHY_MAX];
    struct stat st;
    e->fd = open_trace_file(run_fd, r->trace, &r->st, &st, why);
    if (e->fd < 0 || trace_sniff(e->fd, &e->gzip, &e->protobuf, why, sizeof(why)) < 0 ||
        (!e->protobuf && trace_check_quick(e->fd, &e->gzip, why, sizeof(why)) < 0)) {
        if (e->fd >= 0)
            close(e->fd);
        e->fd = -1;
        return (e->problem = strdup(why)) ? 0 : -1;
    }
    e->size = st.st_size;
    int n = url_safe(e->name) ? asprintf(&e->url_path, "/%s/%s", e->name, r->trace)
                              : asprintf(&e->url_path, "/run~%zu/%s", nth, r->trace);
    if (n < 0)
        e->url_path = NULL;
    return n < 0 ? -1 : 0;
}

static int index_run(struct view_target *t, int run_fd, const struct run_info *r, const char *name)
{
    struct view_entry *e = add_entry(t);
    if (!e || !(e->name = strdup(name)))
        return -1;
    e->mtime = r->st.st_mtim;
    e->size = r->st.st_size;
    if (r->kind == RUN_RECORD_ONLY)
        return (e->problem = strdup("no trace yet: run calltrace export on it")) ? 0 : -1;
    return index_trace(e, run_fd, r, t->n);
}

static int index_entry(struct view_target *t, int dir_fd, const char *name)
{
    struct run_info r;
    int run_fd = openat(dir_fd, name, OPEN_DIR_INSIDE);
    if (run_fd < 0)
        return 0; /* not a directory, or a link to one */
    inspect_run(run_fd, &r);
    int rc = r.kind == NOT_A_RUN ? 0 : index_run(t, run_fd, &r, name);
    close(run_fd);
    return rc;
}

static int by_newest(const void *a, const void *b)
{
    const struct view_entry *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? 1 : -1;
    return x->mtime.tv_nsec < y->mtime.tv_nsec ? 1 : x->mtime.tv_nsec > y->mtime.tv_nsec ? -1 : 0;
}

static int index_dir(struct view_target *t, int dir_fd, const char *dir)
{
    int list_fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
    DIR *d = list_fd < 0 ? NULL : fdopendir(list_fd);
    if (!d) {
        err_msg("view: %s: %s", dir, strerror(errno));
        if (list_fd >= 0)
            close(list_fd);
        return -1;
    }
    t->index = true;
    int rc = (t->dir = strdup(dir)) ? 0 : -1;
    for (struct dirent *de; rc == 0 && (de = readdir(d));)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            rc = index_entry(t, dir_fd, de->d_name);
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
    char best[NAME_MAX + 1] = "";
    int best_fd = -1;
    struct run_info bi = {.kind = NOT_A_RUN};
    for (struct dirent *de; (de = readdir(d));) {
        struct run_info r;
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        int run_fd = openat(dirfd(d), de->d_name, OPEN_DIR_INSIDE);
        if (run_fd < 0)
            continue;
        inspect_run(run_fd, &r);
        if (r.kind != NOT_A_RUN && (bi.kind == NOT_A_RUN || newer(&r.st, &bi.st)) &&
            snprintf(best, sizeof(best), "%s", de->d_name) < (int)sizeof(best)) {
            bi = r;
            if (best_fd >= 0)
                close(best_fd);
            best_fd = run_fd;
        } else {
            close(run_fd);
        }
    }
    closedir(d);
    if (bi.kind == NOT_A_RUN) {
        err_hint("give RUN, FILE or DIR, or record one with calltrace --open PROGRAM",
                 "view: no run directory in the current directory");
        return -1;
    }
    note_msg("the newest run here is %s", best); /* a name anyone here may have chosen */
    int rc = single_run(t, best_fd, best, &bi, o);
    close(best_fd);
    return rc;
}

/* arg is a directory (opened at dir_fd): a run, or a directory of runs. */
static int run_or_index(struct view_target *t, int dir_fd, const char *arg,
                        const struct view_options *o)
{
    struct run_info r;
    inspect_run(dir_fd, &r);
    if (r.kind == NOT_A_RUN && !call_window_is_whole(&o->window)) {
        err_hint("give one run directory",
                 "view: %s: a window is made from one run, and this is not a run directory", arg);
        return -1;
    }
    return r.kind == NOT_A_RUN ? index_dir(t, dir_fd, arg) : single_run(t, dir_fd, arg, &r, o);
}

int view_target_resolve(struct view_target *t, const char *arg, const struct view_options *o)
{
    memset(t, 0, sizeof(*t));
    if (!arg)
        return newest_run(t, o);
    /* The one time the user's path is resolved, links and all: what it names is theirs. */
    int dir_fd = open(arg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
        int rc = run_or_index(t, dir_fd, arg, o);
        close(dir_fd);
        return rc;
    }
    if (errno != ENOTDIR) {
        err_msg("view: %s: %s", arg, strerror(errno));
        return -1;
    }
    if (!call_window_is_whole(&o->window)) {
        err_hint("give the run directory it belongs to",
                 "view: %s: a window is made from a run's " REC_FILE_NAME ", not from a trace file",
                 arg);
        return -1;
    }
    return single_file(t, AT_FDCWD, arg, arg, NULL);
}

void view_target_free(struct view_target *t)
{
    for (size_t i = 0; i < t->n; i++) {
        struct view_entry *e = &t->entries[i];
        if (e->fd >= 0)
            close(e->fd);
        free(e->name);
        free(e->path);
        free(e->url_path);
        free(e->problem);
    }
    free(t->entries);
    free(t->dir);
    memset(t, 0, sizeof(*t));
}
