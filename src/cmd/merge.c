/* calltrace merge RUN... -o OUT: combines runs into one run directory: one record (and the
 * trace.json made from it) and every run's argument folders.
 *
 * Every input is read in full before anything is written, and the output is assembled in a
 * temporary directory renamed into place at the end, so bad input writes nothing.
 *
 * Runs have their own TSC rates, so the merged record keeps CLOCK_MONOTONIC nanoseconds as its
 * ticks (the non-TSC clock of format.h). Function and image ids are offset per run so they do
 * not collide; a pid or tid already used by an earlier run is given a fresh number. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bsd/stdlib.h>

#include "cmd/cli_util.h"
#include "cmd/commands.h"
#include "output/run_dir.h"
#include "output/trace_file.h"
#include "record/call_reader.h"
#include "record/reader.h"
#include "record/writer.h"
#include "util/addr_map.h"
#include "util/dir_fd.h"
#include "util/log.h"

#define CALLS_DIR "calls"

struct merge_input {
    const char *run;
    char record[PATH_MAX];
    struct rec_header header;
    struct rec_time time; /* the time base every reader of the record uses */
    uint32_t nfuncs;      /* highest function id + 1 */
    uint32_t nimages;     /* highest image id + 1 */
    struct addr_map ids;  /* pid/tid of the run -> the one in the merged record */
    int64_t shift_ns;     /* subtracted from every time (--align) */
};

struct merge_ctx {
    bool align;
    bool quiet;
    bool share; /* --share: OUT readable by others, as record's */
    const char *out;
    struct merge_input *inputs;
    size_t ninputs;
    struct addr_map used_ids; /* pids and tids of the merged record */
    uint32_t next_free_id;
    struct recorder rec;
    struct trace_file_options trace; /* --format, -z */
};

static void usage(FILE *f)
{
    fputs("usage: calltrace merge [OPTIONS] RUN... -o OUT\n"
          "Combines run directories into the new run directory OUT: one record and trace\n"
          "holding every run's processes, and every run's argument folders (calls/).\n"
          "\n"
          "  -o, --output OUT  the run directory to create (must not exist)\n"
          "  --align           shift each run to start at time zero (runs from different\n"
          "                    machines); by default runs keep their CLOCK_MONOTONIC times,\n"
          "                    which runs on one machine share\n"
          "  --format F        json (trace.json), perfetto (trace.pftrace) or both; by\n"
          "                    default trace.json up to 8 million calls, trace.pftrace beyond\n"
          "  -z, --compress    gzip the trace\n"
          "  --share           let other users read OUT (0755 and 0644, less the umask); by\n"
          "                    default it is private (0700, files 0600)\n"
          "  -q, --quiet       no closing summary line\n"
          "  -h, --help        show this help\n",
          f);
}

static int parse_args(int argc, char **argv, struct merge_ctx *m)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"align", no_argument, NULL, 'a'},
        {"quiet", no_argument, NULL, 'q'},        {"format", required_argument, NULL, 'f'},
        {"compress", no_argument, NULL, 'z'},     {"share", no_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:qzh", longopts, NULL)) != -1) {
        if (c == 'f') {
            if (trace_format_option(optarg, &m->trace.format) < 0)
                return -1;
        } else if (c == 'z') {
            m->trace.compress = true;
        } else if (c == 'o') {
            m->out = optarg;
        } else if (c == 'a') {
            m->align = true;
        } else if (c == 's') {
            m->share = true;
        } else if (c == 'q') {
            m->quiet = true;
        } else if (c == 'h') {
            usage(stdout);
            exit(0);
        } else {
            return cli_bad_option(argv, c, "merge");
        }
    }
    if (!m->out || !*m->out) {
        err_hint("usage: calltrace merge RUN... -o OUT", "merge: missing -o OUT");
        return -1;
    }
    if (optind == argc) {
        err_hint("usage: calltrace merge RUN... -o OUT", "merge: no run to merge");
        return -1;
    }
    m->ninputs = (size_t)(argc - optind);
    m->inputs = calloc(m->ninputs, sizeof(*m->inputs));
    if (!m->inputs) {
        err_msg("out of memory");
        return -1;
    }
    for (size_t i = 0; i < m->ninputs; i++)
        m->inputs[i].run = argv[optind + (int)i];
    return 0;
}

static int note_id(struct merge_input *in, uint32_t id)
{
    if (!id || addr_map_get(&in->ids, id))
        return 0;
    return addr_map_put(&in->ids, id, (void *)(uintptr_t)id);
}

static int scan_record(struct merge_input *in, const struct rec_hdr *h)
{
    switch (h->type) {
    case REC_FUNC: {
        uint32_t id = ((const struct rec_func *)h)->func;
        in->nfuncs = id >= in->nfuncs ? id + 1 : in->nfuncs;
        return 0;
    }
    case REC_IMAGE: {
        uint32_t id = ((const struct rec_image *)h)->image;
        in->nimages = id >= in->nimages ? id + 1 : in->nimages;
        return note_id(in, h->tid);
    }
    case REC_THREAD:
        return note_id(in, h->tid) | note_id(in, ((const struct rec_thread *)h)->pid);
    case REC_ENTER:
    case REC_EXIT:
        return note_id(in, h->tid) | note_id(in, ((const struct rec_call *)h)->pid);
    case REC_PROCESS:
    case REC_THREAD_END:
    case REC_PROCESS_END:
        return note_id(in, h->tid);
    default:
        return 0;
    }
}

/* Reads a whole input: a run still being written or damaged is refused before anything is
 * created. Collects its ids for the remapping. */
static int check_input(struct merge_input *in)
{
    struct stat st;
    if (stat(in->run, &st) < 0) {
        err_msg("%s: %s", in->run, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        err_msg("%s: not a run directory", in->run);
        return -1;
    }
    if (run_dir_check_owner(in->run) < 0)
        return -1;
    if (run_path(in->record, sizeof(in->record), in->run, REC_FILE_NAME) < 0) {
        err_msg("%s: path too long", in->run);
        return -1;
    }
    char why[256];
    struct rec_reader r;
    if (rec_reader_open(&r, AT_FDCWD, in->record, why, sizeof(why)) < 0) {
        err_msg("%s: not a run directory: %s: %s", in->run, REC_FILE_NAME, why);
        return -1;
    }
    in->header = r.header;
    rec_time_of(&in->time, AT_FDCWD, in->record,
                &r.header); /* a run merged ended cleanly: no pass */
    int rc = addr_map_init(&in->ids, 64);
    for (const struct rec_hdr *h; rc == 0 && (h = rec_reader_next(&r));)
        rc = scan_record(in, h);
    if (rc < 0)
        err_msg("out of memory");
    else if (r.truncated || r.corrupt)
        err_hint("calltrace export can still make its trace.json", "%s: the record %s", in->run,
                 r.truncated ? "is truncated" : "is damaged");
    else if (!(r.header.flags & REC_F_COMPLETE))
        err_hint("wait for it to finish; a killed run cannot be merged",
                 "%s: the run is still being written, or its calltrace was killed", in->run);
    rc = rc < 0 || r.truncated || r.corrupt || !(r.header.flags & REC_F_COMPLETE) ? -1 : 0;
    rec_reader_close(&r);
    return rc;
}

static int64_t to_ns(const struct merge_input *in, uint64_t ticks)
{
    int64_t ns = rec_time_ns(&in->time, ticks) - in->shift_ns;
    return ns > 0 ? ns : 0;
}

/* Later runs give up the pids and tids earlier runs already use. */
static int assign_ids(struct merge_ctx *m)
{
    for (size_t i = 0; i < m->ninputs; i++) {
        struct merge_input *in = &m->inputs[i];
        ADDR_MAP_FOREACH(&in->ids, slot)
        {
            uint32_t id = (uint32_t)slot->key;
            if (addr_map_get(&m->used_ids, id)) {
                do
                    id = m->next_free_id++;
                while (addr_map_get(&m->used_ids, id) || id == 0);
            }
            slot->value = (void *)(uintptr_t)id;
            if (addr_map_put(&m->used_ids, id, (void *)1) < 0)
                return -1;
        }
    }
    return 0;
}

static uint32_t map_id(const struct merge_input *in, uint32_t id)
{
    uintptr_t v = (uintptr_t)addr_map_get(&in->ids, id);
    return v ? (uint32_t)v : id;
}

/* A record's name as a C string: names are length-counted in the record. */
static const char *name_of(const struct rec_hdr *h, char *buf, size_t len)
{
    uint32_t n;
    const char *name = rec_name(h, &n);
    snprintf(buf, len, "%.*s", (int)n, name);
    return buf;
}

static void copy_record(struct merge_ctx *m, const struct merge_input *in, uint32_t func_base,
                        uint32_t image_base, const struct rec_hdr *h)
{
    char name[REC_MAX_NAME + 1];
    uint32_t tid = map_id(in, h->tid);
    switch (h->type) {
    case REC_IMAGE: {
        const struct rec_image *r = (const void *)h;
        rec_image(&m->rec, r->image + image_base, tid, r->bias, name_of(h, name, sizeof(name)));
        break;
    }
    case REC_FUNC: {
        const struct rec_func *r = (const void *)h;
        rec_func_flagged(&m->rec, r->func + func_base, r->image + image_base, r->addr, r->size,
                         name_of(h, name, sizeof(name)), h->flags);
        break;
    }
    case REC_PROCESS: {
        const struct rec_process *r = (const void *)h;
        rec_process(&m->rec, tid, map_id(in, r->ppid), to_ns(in, r->ticks),
                    name_of(h, name, sizeof(name)), h->flags & PROCESS_EXEC);
        break;
    }
    case REC_THREAD: {
        const struct rec_thread *r = (const void *)h;
        rec_thread(&m->rec, map_id(in, r->pid), tid, to_ns(in, r->ticks));
        break;
    }
    case REC_ENTER:
    case REC_EXIT: {
        const struct rec_call *r = (const void *)h;
        if (h->type == REC_ENTER)
            rec_enter(&m->rec, map_id(in, r->pid), tid, r->func + func_base, to_ns(in, r->ticks));
        else
            rec_exit(&m->rec, map_id(in, r->pid), tid, r->func + func_base, to_ns(in, r->ticks),
                     h->flags);
        break;
    }
    case REC_THREAD_END: {
        const struct rec_end *r = (const void *)h;
        rec_thread_end(&m->rec, map_id(in, r->pid), tid, to_ns(in, r->ticks));
        break;
    }
    case REC_PROCESS_END: {
        const struct rec_end *r = (const void *)h;
        rec_process_end(&m->rec, tid, r->status, to_ns(in, r->ticks));
        break;
    }
    default:
        break; /* clock anchors: the merged record's ticks are nanoseconds already */
    }
}

static int copy_run(struct merge_ctx *m, const struct merge_input *in, uint32_t func_base,
                    uint32_t image_base)
{
    char why[256];
    struct rec_reader r;
    if (rec_reader_open(&r, AT_FDCWD, in->record, why, sizeof(why)) < 0) {
        err_msg("%s: %s", in->record, why);
        return -1;
    }
    for (const struct rec_hdr *h; (h = rec_reader_next(&r));)
        copy_record(m, in, func_base, image_base, h);
    int damaged = r.truncated || r.corrupt;
    rec_reader_close(&r);
    if (damaged)
        err_msg("%s: the record changed while it was merged", in->record);
    return damaged ? -1 : 0;
}

/* The merged record starts at the earliest run's start, or at zero with --align. */
static struct clock_calibration merged_clock(struct merge_ctx *m)
{
    uint64_t start = UINT64_MAX;
    for (size_t i = 0; i < m->ninputs; i++) {
        struct merge_input *in = &m->inputs[i];
        in->shift_ns = m->align ? (int64_t)in->header.start.mono_ns : 0;
        if (in->header.start.mono_ns - (uint64_t)in->shift_ns < start)
            start = in->header.start.mono_ns - (uint64_t)in->shift_ns;
    }
    return (struct clock_calibration){.use_tsc = false, .start = {start, start}, .ns_per_tick = 1};
}

static int write_record(struct merge_ctx *m, const struct run_dir *out)
{
    struct clock_calibration clock = merged_clock(m);
    int rc = recorder_open(&m->rec, out->fd, REC_FILE_NAME, out->file_mode, &clock);
    if (rc < 0) {
        err_msg("cannot create %s/%s: %s", out->path, REC_FILE_NAME, strerror(-rc));
        return -1;
    }
    uint32_t func_base = 0, image_base = 0;
    for (size_t i = 0; i < m->ninputs && rc == 0; i++) {
        rc = copy_run(m, &m->inputs[i], func_base, image_base);
        m->rec.dropped_calls += m->inputs[i].header.dropped_calls; /* missing from the merge too */
        func_base += m->inputs[i].nfuncs;
        image_base += m->inputs[i].nimages;
    }
    int err = recorder_close(&m->rec);
    if (err && rc == 0) {
        err_msg("writing %s/%s: %s", out->path, REC_FILE_NAME, strerror(err));
        rc = -1;
    }
    return rc;
}

/* The name of run in OUT/calls: its last component, made unique with -2, -3... */
static int calls_name(int calls, const char *run, char *name, size_t len)
{
    char base[PATH_MAX];
    snprintf(base, sizeof(base), "%s", run);
    size_t n = strlen(base);
    while (n > 1 && base[n - 1] == '/')
        base[--n] = '\0';
    const char *last = strrchr(base, '/') ? strrchr(base, '/') + 1 : base;
    for (unsigned k = 1; k < 100000; k++) {
        int w = k == 1 ? snprintf(name, len, "%s", last) : snprintf(name, len, "%s-%u", last, k);
        if (w < 0 || (size_t)w >= len)
            break;
        struct stat st;
        if (fstatat(calls, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
            return 0;
    }
    errno = ENAMETOOLONG;
    return -1;
}

/* Each run's calls/ goes to OUT/calls/<run's name>. */
static int copy_calls(struct merge_ctx *m, const struct run_dir *out)
{
    int calls = -1, rc = 0;
    for (size_t i = 0; i < m->ninputs && rc == 0; i++) {
        int from = open(m->inputs[i].run, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat st;
        if (from < 0 || fstatat(from, CALLS_DIR, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISDIR(st.st_mode)) {
            if (from >= 0)
                close(from);
            continue;
        }
        if (calls < 0 && (calls = dir_fd_make(out->fd, CALLS_DIR, out->dir_mode)) < 0) {
            err_msg("cannot create %s/" CALLS_DIR ": %s", out->path, strerror(errno));
            rc = -1;
        }
        char name[NAME_MAX + 1];
        if (rc == 0 &&
            (calls_name(calls, m->inputs[i].run, name, sizeof(name)) < 0 ||
             dir_fd_copy_tree(from, CALLS_DIR, calls, name, out->dir_mode, out->file_mode) < 0)) {
            err_msg("copying %s/" CALLS_DIR " to %s/" CALLS_DIR ": %s", m->inputs[i].run, out->path,
                    strerror(errno));
            rc = -1;
        }
        close(from);
    }
    if (calls >= 0)
        close(calls);
    return rc;
}

static int check_output(const char *out)
{
    struct stat st;
    if (lstat(out, &st) == 0) {
        err_hint("merge never overwrites; choose a new name", "%s: already exists", out);
        return -1;
    }
    return 0;
}

/* OUT.partial-XXXXXX beside OUT, so the final rename stays on one file system; parent: the
 * directory both are in. */
static int make_temp_dir(const struct merge_ctx *m, int parent, const char *name,
                         struct run_dir *tmp, char *tmp_name, size_t len)
{
    *tmp = (struct run_dir){
        .fd = -1, .dir_mode = m->share ? 0755 : 0700, .file_mode = m->share ? 0644 : 0600};
    for (int tries = 0; tries < 100 && tmp->fd < 0; tries++) {
        if (snprintf(tmp_name, len, "%s.partial-%06x", name, arc4random() & 0xffffff) >= (int)len ||
            snprintf(tmp->path, sizeof(tmp->path), "%s.partial-%s", m->out,
                     tmp_name + strlen(name) + strlen(".partial-")) >= (int)sizeof(tmp->path)) {
            errno = ENAMETOOLONG;
            break;
        }
        tmp->fd = dir_fd_make(parent, tmp_name, tmp->dir_mode);
        if (tmp->fd < 0 && errno != EEXIST)
            break;
    }
    if (tmp->fd < 0)
        err_msg("cannot create %s: %s", m->out, strerror(errno));
    return tmp->fd < 0 ? -1 : 0;
}

static int build_in(struct merge_ctx *m, int parent, const char *name, struct trace_stats *stats)
{
    char tmp_name[NAME_MAX + 1];
    struct run_dir tmp;
    if (make_temp_dir(m, parent, name, &tmp, tmp_name, sizeof(tmp_name)) < 0)
        return -1;
    int rc = write_record(m, &tmp);
    if (rc == 0)
        rc = trace_export(&tmp, &m->trace, stats);
    if (rc == 0)
        rc = copy_calls(m, &tmp);
    run_dir_close(&tmp);
    if (rc == 0 && renameat2(parent, tmp_name, parent, name, RENAME_NOREPLACE) < 0) {
        err_msg("cannot create %s: %s", m->out, strerror(errno));
        rc = -1;
    }
    if (rc < 0)
        dir_fd_remove_tree(parent, tmp_name);
    return rc;
}

static int build_output(struct merge_ctx *m, struct trace_stats *stats)
{
    char name[NAME_MAX + 1];
    int parent = run_dir_parent(m->out, name, sizeof(name), "run directory");
    if (parent < 0)
        return -1;
    int rc = build_in(m, parent, name, stats);
    close(parent);
    return rc;
}

static void free_ctx(struct merge_ctx *m)
{
    for (size_t i = 0; i < m->ninputs; i++)
        addr_map_free(&m->inputs[i].ids);
    free(m->inputs);
    addr_map_free(&m->used_ids);
}

int cmd_merge(int argc, char **argv)
{
    struct merge_ctx m = {.next_free_id = 1u << 22}; /* above Linux's pid_max by default */
    int rc = parse_args(argc, argv, &m) < 0 ? 2 : 0;
    for (size_t i = 0; rc == 0 && i < m.ninputs; i++)
        rc = check_input(&m.inputs[i]) < 0 ? 1 : 0;
    if (rc == 0)
        rc = check_output(m.out) < 0 ? 1 : 0;
    if (rc == 0 && (addr_map_init(&m.used_ids, 256) < 0 || assign_ids(&m) < 0)) {
        err_msg("out of memory");
        rc = 1;
    }
    struct trace_stats stats;
    if (rc == 0)
        rc = build_output(&m, &stats) < 0 ? 1 : 0;
    if (rc == 0 && !m.quiet)
        note_msg("merged %zu runs into %s: %llu calls, %llu processes", m.ninputs, m.out,
                 (unsigned long long)stats.calls, (unsigned long long)stats.processes);
    free_ctx(&m);
    return rc;
}
