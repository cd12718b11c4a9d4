#include "output/call_dirs.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/call_values.h"
#include "output/run_dir.h"
#include "record/call_reader.h"
#include "util/addr_map.h"
#include "util/dir_fd.h"
#include "util/json_string.h"
#include "util/log.h"

/* One captured function, by name: calls in several processes share one numbering. */
struct func_dir {
    char *name;
    char folder[128];
    uint32_t calls;
    uint32_t folders;
};

struct dirs_writer {
    int root;              /* the new calls/ being written (CALL_DIRS_NEW) */
    const char *root_path; /* RUN/calls, for messages */
    mode_t dir_mode, file_mode;
    struct func_dir *open_func; /* whose folder open_fd is, the last one written into */
    int open_fd;
    unsigned max_dirs;
    struct run_funcs *funcs;
    struct addr_map by_func; /* func id + 1 -> struct func_dir */
    struct func_dir **dirs;  /* in order of first call */
    size_t ndirs;
    struct call_dirs_stats *stats;
    int error; /* first errno writing */
};

static bool safe_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == '+';
}

void call_dirs_file_name(const char *name, char *out, size_t outlen)
{
    size_t len = strlen(name);
    bool safe = len && len <= 100 && name[0] != '.';
    for (size_t i = 0; safe && i < len; i++)
        safe = safe_char(name[i]);
    if (safe && strstr(name, "~") == NULL) {
        snprintf(out, outlen, "%s", name);
        return;
    }
    /* FNV-1a of the whole name keeps two names that clean up alike apart */
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)name[i]) * 1099511628211ull;
    char clean[64];
    size_t n = 0;
    for (size_t i = 0; i < len && n < 48; i++, n++)
        clean[n] = safe_char(name[i]) && !(n == 0 && name[i] == '.') ? name[i] : '_';
    clean[n] = '\0';
    snprintf(out, outlen, "%s~%016llx", clean, (unsigned long long)h);
}

static bool folder_taken(const struct dirs_writer *w, const char *folder)
{
    for (size_t i = 0; i < w->ndirs; i++)
        if (!strcmp(w->dirs[i]->folder, folder))
            return true;
    return false;
}

/* The folder of a new function: two names whose hashes collide (a binary can be made to have
 * them) get FOLDER and FOLDER~2, ~3..., which no other folder name ends with. */
static void unique_folder(const struct dirs_writer *w, const char *name, char *out, size_t len)
{
    char base[112]; /* a file name is at most 100 bytes: room for ~N */
    call_dirs_file_name(name, base, sizeof(base));
    snprintf(out, len, "%s", base);
    for (unsigned k = 2; folder_taken(w, out); k++)
        snprintf(out, len, "%s~%u", base, k);
}

static struct func_dir *dir_of(struct dirs_writer *w, uint32_t func)
{
    struct func_dir *d = addr_map_get(&w->by_func, (uint64_t)func + 1);
    if (d)
        return d;
    const char *name = run_funcs_name(w->funcs, func);
    for (size_t i = 0; i < w->ndirs; i++) /* the same function in another process */
        if (strcmp(w->dirs[i]->name, name) == 0)
            return addr_map_put(&w->by_func, (uint64_t)func + 1, w->dirs[i]) < 0 ? NULL
                                                                                 : w->dirs[i];
    struct func_dir **dirs = reallocarray(w->dirs, w->ndirs + 1, sizeof(*dirs));
    if (!dirs)
        return NULL;
    w->dirs = dirs;
    d = calloc(1, sizeof(*d));
    if (!d || !(d->name = strdup(name)) || addr_map_put(&w->by_func, (uint64_t)func + 1, d) < 0) {
        free(d ? d->name : NULL);
        free(d);
        return NULL;
    }
    unique_folder(w, name, d->folder, sizeof(d->folder));
    w->dirs[w->ndirs++] = d;
    w->stats->functions++;
    return d;
}

static void note_error(struct dirs_writer *w)
{
    if (!w->error)
        w->error = errno ? errno : EIO;
}

static void write_file(struct dirs_writer *w, int dir, const char *name, const void *data,
                       size_t len)
{
    if (dir_fd_write_file(dir, name, w->file_mode, data, len) < 0)
        note_error(w);
}

/* The folder of d, made at its first call; calls of one function tend to come together, so the
 * last one stays open. */
static int func_folder(struct dirs_writer *w, struct func_dir *d)
{
    if (w->open_func == d)
        return w->open_fd;
    if (w->open_fd >= 0)
        close(w->open_fd);
    w->open_func = NULL;
    w->open_fd = dir_fd_make(w->root, d->folder, w->dir_mode);
    if (w->open_fd < 0 && errno == EEXIST)
        w->open_fd = dir_fd_open(w->root, d->folder);
    if (w->open_fd < 0)
        note_error(w);
    else
        w->open_func = d;
    return w->open_fd;
}

/* Names and types come from the program's symbols and DWARF, any bytes at all, and cJSON writes
 * strings as they are: json_text_safe makes them valid UTF-8 and safe to `cat`. Consumes doc. */
static int write_json(struct dirs_writer *w, int dir, const char *name, cJSON *doc)
{
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    char *safe = text ? json_text_safe(text) : NULL;
    free(text);
    if (!safe) {
        errno = ENOMEM;
        note_error(w);
        return -1;
    }
    write_file(w, dir, name, safe, strlen(safe));
    free(safe);
    return 0;
}

static cJSON *value_json(const struct arg_value *a, const char *bin)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", a->name);
    cJSON_AddStringToObject(o, "type", a->type);
    cJSON_AddStringToObject(o, "value", a->value);
    if (bin)
        cJSON_AddStringToObject(o, "bytes", bin);
    return o;
}

void call_dirs_arg_file_name(const struct call_values *cv, size_t i, char *out, size_t outlen)
{
    char safe[128], other[128];
    call_dirs_file_name(cv->args[i].name, safe, sizeof(safe));
    bool taken = false;
    for (size_t j = 0; j < i && !taken; j++) {
        call_dirs_file_name(cv->args[j].name, other, sizeof(other));
        taken = cv->args[j].bytes && !strcmp(safe, other);
    }
    if (taken)
        snprintf(out, outlen, "arg_%s~%zu.bin", safe, i + 1);
    else
        snprintf(out, outlen, "arg_%s.bin", safe);
}

/* A call's frame->user is its number: N of its function, 0 when its values are not kept. */
static void write_call(struct dirs_writer *w, struct func_dir *d, const struct call_done *call)
{
    const struct call_frame *f = call->frame;
    char number[16];
    snprintf(number, sizeof(number), "%u", f->user);
    int folder = func_folder(w, d);
    int dir = folder < 0 ? -1 : dir_fd_make(folder, number, w->dir_mode);
    if (dir < 0) {
        note_error(w);
        return;
    }
    struct call_values cv;
    if (call_values_decode(w->funcs, f->func, f->args, f->ret, &cv) < 0) {
        errno = ENOMEM;
        note_error(w);
        call_values_free(&cv);
        close(dir);
        return;
    }
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "function", d->name);
    cJSON_AddNumberToObject(root, "call", f->user);
    cJSON_AddNumberToObject(root, "pid", call->thread->pid);
    cJSON_AddNumberToObject(root, "tid", call->thread->tid);
    cJSON_AddNumberToObject(root, "entry_us", (double)f->start_ns / 1000.0);
    cJSON_AddNumberToObject(root, "exit_us", (double)call->end_ns / 1000.0);
    if (call->flags & EXIT_UNFINISHED)
        cJSON_AddTrueToObject(root, "unfinished");
    if (call->flags & EXIT_UNWOUND)
        cJSON_AddTrueToObject(root, "unwound");
    if (cv.raw)
        cJSON_AddTrueToObject(root, "raw_registers");
    cJSON *params = cJSON_AddArrayToObject(root, "params");
    for (size_t i = 0; i < cv.nargs; i++) {
        char bin[160] = "";
        if (cv.args[i].bytes) {
            call_dirs_arg_file_name(&cv, i, bin, sizeof(bin));
            write_file(w, dir, bin, cv.args[i].bytes, cv.args[i].nbytes);
        }
        cJSON_AddItemToArray(params, value_json(&cv.args[i], bin[0] ? bin : NULL));
    }
    if (cv.has_result)
        cJSON_AddItemToObject(root, "return", value_json(&cv.result, NULL));
    call_values_free(&cv);
    int written = write_json(w, dir, CALL_JSON_NAME, root);
    close(dir);
    if (written < 0)
        return;
    d->folders++;
    w->stats->folders++;
}

static int end_call(void *ctx, struct call_reader *cr, const struct call_done *call)
{
    struct dirs_writer *w = ctx;
    uint32_t number = call->frame->user;
    (void)cr;
    if (!number || (call->flags & EXIT_INHERITED))
        return 0;
    struct func_dir *d = dir_of(w, call->frame->func);
    if (d && (!w->max_dirs || number <= w->max_dirs))
        write_call(w, d, call);
    return 0;
}

/* Calls are numbered in call order, from their REC_ARGS; past max_dirs, their values are not
 * kept: they get no folder. */
static int number_call(void *ctx, struct call_reader *cr, struct call_thread *t,
                       struct call_frame *call, const struct rec_hdr *h)
{
    struct dirs_writer *w = ctx;
    (void)cr, (void)t;
    if (h->type == REC_ARGS && !call->user) {
        struct func_dir *d = dir_of(w, call->func);
        if (!d)
            return -1;
        call->user = ++d->calls;
        w->stats->calls++;
        if (w->max_dirs && d->calls == w->max_dirs + 1)
            w->stats->capped++;
    }
    return call->user && (!w->max_dirs || call->user <= w->max_dirs);
}

static int note_funcs(void *ctx, struct call_reader *cr, const struct rec_hdr *h)
{
    struct dirs_writer *w = ctx;
    (void)cr;
    return run_funcs_note(w->funcs, h);
}

static void write_index(struct dirs_writer *w)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "max_call_dirs", w->max_dirs);
    cJSON *funcs = cJSON_AddArrayToObject(root, "functions");
    for (size_t i = 0; i < w->ndirs; i++) {
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "name", w->dirs[i]->name);
        cJSON_AddStringToObject(f, "folder", w->dirs[i]->folder);
        cJSON_AddNumberToObject(f, "calls", w->dirs[i]->calls);
        cJSON_AddNumberToObject(f, "folders", w->dirs[i]->folders);
        cJSON_AddItemToArray(funcs, f);
    }
    write_json(w, w->root, CALL_DIRS_INDEX, root);
}

static void free_writer(struct dirs_writer *w)
{
    if (w->open_fd >= 0)
        close(w->open_fd);
    addr_map_free(&w->by_func);
    for (size_t i = 0; i < w->ndirs; i++) {
        free(w->dirs[i]->name);
        free(w->dirs[i]);
    }
    free(w->dirs);
    run_funcs_free(w->funcs);
}

static int replay(struct dirs_writer *w, const struct run_dir *run)
{
    static const struct call_reader_ops calls = {
        .record = note_funcs, .values = number_call, .exit = end_call};
    char why[256];
    struct call_reader cr;
    if (call_reader_open(&cr, run->fd, REC_FILE_NAME, &calls, w, why, sizeof(why)) < 0) {
        err_msg("%s/%s: %s", run->path, REC_FILE_NAME, why);
        return -1;
    }
    int failed = call_reader_run(&cr);
    call_reader_close(&cr);
    if (failed)
        err_msg("%s: out of memory while writing the call folders", w->root_path);
    return failed ? -1 : 0;
}

/* The folders just written in CALL_DIRS_NEW take calls/'s place in one step (the older ones,
 * exchanged into CALL_DIRS_NEW, are removed then); a run with no call captured has none. */
static int replace_calls(const struct run_dir *run, bool any, const char *root_path)
{
    int rc = 0;
    if (!any)
        rc = dir_fd_remove_tree(run->fd, CALL_DIRS_NAME);
    else if (renameat2(run->fd, CALL_DIRS_NEW, run->fd, CALL_DIRS_NAME, RENAME_EXCHANGE) < 0)
        rc = errno == ENOENT
                 ? renameat2(run->fd, CALL_DIRS_NEW, run->fd, CALL_DIRS_NAME, RENAME_NOREPLACE)
                 : -1;
    if (rc < 0)
        err_msg("cannot replace %s: %s", root_path, strerror(errno));
    dir_fd_remove_tree(run->fd, CALL_DIRS_NEW);
    return rc;
}

int call_dirs_export(const struct run_dir *run, unsigned max_dirs, struct call_dirs_stats *stats)
{
    memset(stats, 0, sizeof(*stats));
    char root_path[PATH_MAX];
    if (run_path(root_path, sizeof(root_path), run->path, CALL_DIRS_NAME) < 0) {
        err_msg("%s: path too long", run->path);
        return -1;
    }
    struct dirs_writer w = {.root_path = root_path,
                            .max_dirs = max_dirs,
                            .stats = stats,
                            .dir_mode = run->dir_mode,
                            .file_mode = run->file_mode,
                            .open_fd = -1};
    dir_fd_remove_tree(run->fd, CALL_DIRS_NEW); /* an export killed half-way */
    w.root = dir_fd_make(run->fd, CALL_DIRS_NEW, run->dir_mode);
    if (w.root < 0) {
        err_msg("cannot create %s/%s: %s", run->path, CALL_DIRS_NEW, strerror(errno));
        return -1;
    }
    if (addr_map_init(&w.by_func, 64) < 0 || !(w.funcs = run_funcs_new())) {
        err_msg("%s: out of memory", root_path);
        free_writer(&w);
        close(w.root);
        dir_fd_remove_tree(run->fd, CALL_DIRS_NEW);
        return -1;
    }
    int rc = replay(&w, run);
    if (rc == 0 && stats->calls)
        write_index(&w);
    free_writer(&w);
    close(w.root);
    if (rc == 0 && replace_calls(run, stats->calls > 0, root_path) < 0)
        return -1;
    if (rc < 0)
        dir_fd_remove_tree(run->fd, CALL_DIRS_NEW);
    if (rc == 0 && w.error) {
        err_hint(w.error == ENOSPC ? "free some space, then run `calltrace export RUN`" : NULL,
                 "writing %s: %s", root_path, strerror(w.error));
        return -1;
    }
    return rc;
}

void call_dirs_print_summary(const char *run, const struct call_dirs_stats *stats,
                             unsigned max_dirs)
{
    char capped[160] = "";
    if (stats->capped)
        snprintf(capped, sizeof(capped),
                 "; %llu function%s had more calls than --max-call-dirs %u: the folders hold "
                 "their first %u, the trace all of them",
                 (unsigned long long)stats->capped, stats->capped == 1 ? "" : "s", max_dirs,
                 max_dirs);
    note_msg("arguments of %llu calls of %llu functions in %s/%s%s",
             (unsigned long long)stats->calls, (unsigned long long)stats->functions, run,
             CALL_DIRS_NAME, capped);
}
