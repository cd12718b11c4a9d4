/* calltrace calls [RUN] [FUNC N] [--json]: the arguments recorded with -A/-R, read back from
 * RUN/calls (output/call_dirs.h): per function, or one call by its number. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis/call_site.h"
#include "analysis/profile.h"
#include "analysis/replay.h"
#include "analysis/run_select.h"
#include "analysis/source_file.h"
#include "cmd/cli_util.h"
#include "cmd/commands.h"
#include "output/call_dirs.h"
#include "output/run_dir.h"
#include "symbols/demangle.h"
#include "util/duration.h"
#include "util/json_string.h"
#include "util/log.h"
#include "util/text_escape.h"

#define JSON_FILE_MAX (64 << 20)

/* --srcline: the functions of the run's record, to find a name's image and address. */
struct srclines {
    bool wanted;
    bool read;
    struct replay replay;
    struct source_files sources;
};

static int srclines_read(struct srclines *sl, const char *record)
{
    if (!sl->wanted)
        return 0;
    if (replay_open(&sl->replay, record) < 0 || replay_run(&sl->replay, NULL, NULL) != 0)
        return -1;
    sl->read = true;
    return 0;
}

static bool srcline_of(struct srclines *sl, const char *name, struct source_line *where)
{
    for (uint32_t s = 0; sl->read && s < sl->replay.nsyms; s++)
        if (strcmp(sl->replay.syms[s].name, name) == 0)
            return cli_srcline(&sl->sources, &sl->replay, s, where);
    return false;
}

/* Where call (its call.json) was made from: its return address (record --callsites) in its
 * process's images. */
static bool call_site_of(struct srclines *sl, const cJSON *call, struct source_line *where)
{
    const cJSON *ret = cJSON_GetObjectItemCaseSensitive(call, "return_address");
    const cJSON *pid = cJSON_GetObjectItemCaseSensitive(call, "pid");
    if (!sl->read || !cJSON_IsString(ret) || !cJSON_IsNumber(pid))
        return false;
    char *end;
    errno = 0;
    unsigned long long addr = strtoull(ret->valuestring, &end, 16);
    if (errno || *end || end == ret->valuestring)
        return false; /* the files of a run are untrusted */
    return call_site_line(&sl->sources, &sl->replay, (uint32_t)pid->valuedouble, addr, where);
}

static void srclines_free(struct srclines *sl)
{
    if (sl->read)
        replay_close(&sl->replay);
    source_files_free(&sl->sources);
}

static void add_srcline_json(cJSON *o, struct srclines *sl, const char *name)
{
    struct source_line where;
    if (sl->wanted && srcline_of(sl, name, &where)) {
        cJSON_AddStringToObject(o, "file", where.file);
        cJSON_AddNumberToObject(o, "line", where.line);
    }
}

/* -F, -N, --tid: the functions listed, and with --tid their calls on that thread, from the
 * record (graph's filters, through the profile). */
struct calls_filter {
    struct profile_filter filter;
    bool given;
    struct profile profile;
};

static int calls_filter_build(struct calls_filter *cf, const char *run, const char *record)
{
    if (!cf->given)
        return 0;
    if (profile_build(&cf->profile, record, &cf->filter, 0) < 0)
        return -1;
    if (cf->filter.tid && !cf->profile.saw_tid)
        return cli_missing_tid(&cf->profile.replay, run, cf->filter.tid);
    profile_warn_unmatched(&cf->profile);
    return 0;
}

/* The symbol of the record named name, or UINT32_MAX. */
static uint32_t sym_named(const struct replay *r, const char *name)
{
    for (uint32_t s = 0; s < r->nsyms; s++)
        if (strcmp(r->syms[s].name, name) == 0)
            return s;
    return UINT32_MAX;
}

/* Is function name listed, and with --tid, its calls on that thread in *calls? */
static bool calls_filter_keeps(const struct calls_filter *cf, const char *name, double *calls)
{
    if (!cf->given)
        return true;
    uint32_t sym = sym_named(&cf->profile.replay, name);
    if (sym == UINT32_MAX || !sym_filter_kept(&cf->profile.names, sym))
        return false;
    if (cf->filter.tid)
        *calls = (double)cf->profile.stats[sym].calls;
    return true;
}

/* What the command was asked for. */
struct calls_opts {
    bool json;
    struct srclines sl;
    struct calls_filter filter;
    int64_t start_ns; /* the run's start, in the call folders' time */
};

static void usage(FILE *f)
{
    fputs("usage: calltrace calls [OPTIONS] [RUN]\n"
          "       calltrace calls [--json] [--srcline] [--tid TID] [RUN] FUNC N\n"
          "The arguments recorded with -A (and -R): each function with its captured calls and\n"
          "its parameters, or call N (from 1) of FUNC with its values (FUNC as the list\n"
          "prints it, or a C++ name without its parameter list: parse for parse(int)).\n"
          "RUN defaults to the newest run directory here. Times are from the run's start.\n"
          "  -j, --json          print JSON instead\n"
          "      --srcline       where each function is defined (file:line, from DWARF);\n"
          "                      with FUNC N of a run recorded with --callsites, also the\n"
          "                      line it was called from\n"
          "  -F, --include GLOB  only the functions whose name matches GLOB (repeatable; also\n"
          "                      --filter GLOB)\n"
          "  -N, --exclude GLOB  leave out the functions whose name matches GLOB (repeatable)\n"
          "  -t, --tid TID       only the calls of thread TID: in the list, its calls and\n"
          "                      folders; with FUNC N, FUNC's Nth call on that thread\n",
          f);
}

/* The JSON document in path; NULL after one error line. */
static cJSON *read_json(const char *path, const char *hint)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        err_hint(errno == ENOENT ? hint : NULL, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            cap = cap ? cap * 2 : 65536;
            char *nb = cap > JSON_FILE_MAX ? NULL : realloc(buf, cap + 1);
            if (!nb) {
                err_msg("%s: too large", path);
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    fclose(f);
    buf[len] = '\0';
    cJSON *doc = cJSON_ParseWithLength(buf, len);
    free(buf);
    if (!doc)
        err_hint("rebuild it with calltrace export RUN", "%s: not valid JSON", path);
    return doc;
}

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* "  name = value": a value as gdb prints it, escaped already when it was written. */
static void put_value_line(const char *name, const char *value)
{
    fputs("  ", stdout);
    fputs_name(name ? name : "?", stdout);
    fputs(" = ", stdout);
    fputs_escaped(value ? value : "?", stdout, TEXT_VALUE);
    putchar('\n');
}

/* "int square(int v)" from a call.json. */
static void print_signature(const char *name, const cJSON *call)
{
    const cJSON *ret = cJSON_GetObjectItemCaseSensitive(call, "return");
    const char *rtype = ret ? str_of(ret, "type") : NULL;
    /* a C++ name carries its parameter types already: the names follow in brackets */
    bool cxx = strchr(name, '(') != NULL;
    fputs_name(name, stdout);
    fputs(cxx ? "  [" : "(", stdout);
    const cJSON *p, *params = cJSON_GetObjectItemCaseSensitive(call, "params");
    const char *sep = "";
    cJSON_ArrayForEach(p, params)
    {
        fputs(sep, stdout);
        fputs_name(str_of(p, "type") ? str_of(p, "type") : "?", stdout);
        putchar(' ');
        fputs_name(str_of(p, "name") ? str_of(p, "name") : "?", stdout);
        sep = ", ";
    }
    fputs(cxx ? "] -> " : ") -> ", stdout);
    fputs_name(rtype ? rtype : "void", stdout);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(call, "raw_registers")))
        fputs(" [no DWARF: raw registers]", stdout);
}

static cJSON *read_call(const char *run, const char *folder, long n)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/%s/%s/%ld/%s", run, CALL_DIRS_NAME, folder, n,
                 CALL_JSON_NAME) >= (int)sizeof(path)) {
        err_msg("%s: path too long", run);
        return NULL;
    }
    return read_json(path, "the call folders of that function stop earlier (--max-call-dirs)");
}

/* --tid: how many of the first folders of function folder hold a call of thread tid; *nth set
 * to the number of the nth of them (0: there are fewer). */
static long folders_on_thread(const char *run, const char *folder, long folders, uint32_t tid,
                              long nth, long *nth_folder)
{
    long on_thread = 0;
    *nth_folder = 0;
    for (long k = 1; k <= folders; k++) {
        cJSON *call = read_call(run, folder, k);
        if (call && num_of(call, "tid") == (double)tid && ++on_thread == nth)
            *nth_folder = k;
        cJSON_Delete(call);
    }
    return on_thread;
}

static int summary(const char *run, cJSON *index, struct calls_opts *o)
{
    bool json = o->json;
    struct srclines *sl = &o->sl;
    const struct calls_filter *cf = &o->filter;
    const cJSON *f, *funcs = cJSON_GetObjectItemCaseSensitive(index, "functions");
    cJSON *out = json ? cJSON_CreateArray() : NULL;
    if (!json)
        printf("%-10s %-10s %s\n", "CALLS", "FOLDERS", "FUNCTION");
    cJSON_ArrayForEach(f, funcs)
    {
        const char *name = str_of(f, "name"), *folder = str_of(f, "folder");
        double calls = num_of(f, "calls"), folders = num_of(f, "folders");
        if (!name || !folder || !calls_filter_keeps(cf, name, &calls))
            continue;
        long first_folder = folders >= 1;
        if (cf->filter.tid)
            folders = (double)folders_on_thread(run, folder, (long)folders, cf->filter.tid, 1,
                                                &first_folder);
        cJSON *first = first_folder ? read_call(run, folder, first_folder) : NULL;
        if (json) {
            cJSON *item = cJSON_Duplicate(f, true);
            if (cf->filter.tid) {
                cJSON_ReplaceItemInObject(item, "calls", cJSON_CreateNumber(calls));
                cJSON_ReplaceItemInObject(item, "folders", cJSON_CreateNumber(folders));
                cJSON_AddNumberToObject(item, "tid", cf->filter.tid);
            }
            if (first) {
                cJSON *params =
                    cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(first, "params"), true);
                cJSON *p;
                cJSON_ArrayForEach(p, params) /* names and types only */
                {
                    cJSON_DeleteItemFromObject(p, "value");
                    cJSON_DeleteItemFromObject(p, "bytes");
                }
                cJSON_AddItemToObject(item, "params", params);
                const cJSON *ret = cJSON_GetObjectItemCaseSensitive(first, "return");
                if (ret && str_of(ret, "type"))
                    cJSON_AddStringToObject(item, "return_type", str_of(ret, "type"));
            }
            add_srcline_json(item, sl, name);
            cJSON_AddItemToArray(out, item);
        } else {
            printf("%-10.0f %-10.0f ", calls, folders);
            if (first)
                print_signature(name, first);
            else
                fputs_name(name, stdout);
            struct source_line where;
            if (sl->wanted && srcline_of(sl, name, &where))
                cli_put_srcline(stdout, "  at ", &where, "");
            putchar('\n');
        }
        cJSON_Delete(first);
    }
    if (json) {
        cli_put_json(out); /* the files of a run are untrusted, like the names in them */
    }
    return 0;
}

/* The run's start (its record's start anchor), which the call folders' times are printed from:
 * they hold the trace's own times. */
static int run_start_ns(const char *record, int64_t *start)
{
    struct replay r;
    if (replay_open(&r, record) < 0)
        return -1;
    *start = (int64_t)r.calls.time.start.mono_ns;
    replay_close(&r);
    return 0;
}

/* --tid: the number of the folder of FUNC's nth call on that thread, or 0 after one error
 * line. */
static long nth_on_thread(const char *run, const cJSON *found, const char *func, uint32_t tid,
                          long long n)
{
    long folder;
    long on_thread = folders_on_thread(run, str_of(found, "folder"), (long)num_of(found, "folders"),
                                       tid, (long)n, &folder);
    if (!folder)
        err_hint(num_of(found, "folders") < num_of(found, "calls")
                     ? "only the first calls have folders: record with a larger --max-call-dirs"
                     : NULL,
                 "%s: %s has %ld call%s with a folder on thread %u, not %lld", run, func, on_thread,
                 on_thread == 1 ? "" : "s", tid, n);
    return folder;
}

/* FUNC as the summary prints it (escaped: util/text_escape.h), or its bytes as they are. */
static bool names_function(const char *name, const char *func)
{
    if (strcmp(name, func) == 0)
        return true;
    char *shown = text_escape_dup(name, TEXT_NAME);
    bool same = shown && strcmp(shown, func) == 0;
    free(shown);
    return same;
}

/* FUNC is a C++ name without its parameter list: parse for parse(int). */
static bool names_without_params(const char *name, const char *func)
{
    size_t at = demangled_params_at(name);
    return name[at] && strlen(func) == at && strncmp(name, func, at) == 0;
}

static int one_call(const char *run, cJSON *index, const char *func, const char *number,
                    struct calls_opts *o)
{
    long long n;
    if (cli_number("N", number, 1, UINT32_MAX, &n) < 0)
        return 2;
    const cJSON *f, *funcs = cJSON_GetObjectItemCaseSensitive(index, "functions");
    const cJSON *found = NULL, *bare = NULL;
    int nbare = 0;
    cJSON_ArrayForEach(f, funcs)
    {
        const char *name = str_of(f, "name");
        if (name && names_function(name, func))
            found = f;
        else if (name && names_without_params(name, func))
            bare = f, nbare++;
    }
    if (!found && nbare > 1) {
        err_hint("give its whole name, as calltrace calls RUN lists it",
                 "%s: %s names %d overloads", run, func, nbare);
        return 1;
    }
    if (!found)
        found = bare;
    if (!found) {
        err_hint("calltrace calls RUN lists them", "%s: no arguments of %s were recorded", run,
                 func);
        return 1;
    }
    func = str_of(found, "name"); /* as recorded, when FUNC was given escaped */
    if (o->filter.filter.tid) {
        if (!(n = nth_on_thread(run, found, func, o->filter.filter.tid, n)))
            return 1;
    } else if (n > num_of(found, "calls")) {
        err_msg("%s: %s has %.0f recorded calls, not %lld", run, func, num_of(found, "calls"), n);
        return 1;
    } else if (n > num_of(found, "folders")) {
        err_hint("record again with a larger --max-call-dirs",
                 "%s: call %lld of %s has no folder: only the first %.0f were kept", run, n, func,
                 num_of(found, "folders"));
        return 1;
    }
    cJSON *call = read_call(run, str_of(found, "folder"), (long)n);
    if (!call)
        return 1;
    /* in whole ns, as the record has them: no floating-point residue in what is printed */
    int64_t entry_ns = llround(num_of(call, "entry_us") * 1000) - o->start_ns;
    int64_t exit_ns = llround(num_of(call, "exit_us") * 1000) - o->start_ns;
    struct source_line from;
    bool called = o->sl.wanted && call_site_of(&o->sl, call, &from);
    if (o->json) {
        add_srcline_json(call, &o->sl, func);
        if (called) {
            cJSON *site = cJSON_AddObjectToObject(call, "called_from");
            cJSON_AddStringToObject(site, "file", from.file);
            cJSON_AddNumberToObject(site, "line", from.line);
        }
        cJSON_AddNumberToObject(call, "entry_from_start_us", (double)entry_ns / 1000);
        cJSON_AddNumberToObject(call, "exit_from_start_us", (double)exit_ns / 1000);
        cli_put_json(call);
        return 0;
    }
    char entry[32], exit[32];
    fputs_name(func, stdout);
    printf(" #%lld  pid %.0f  tid %.0f  entry %s  exit %s%s\n", n, num_of(call, "pid"),
           num_of(call, "tid"), duration_format(entry, sizeof(entry), entry_ns),
           duration_format(exit, sizeof(exit), exit_ns),
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(call, "unfinished")) ? "  (unfinished)"
                                                                              : "");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(call, "raw_registers")))
        printf("  (its argument registers, raw: no DWARF for it, or its file changed)\n");
    struct source_line where;
    if (o->sl.wanted && srcline_of(&o->sl, func, &where))
        cli_put_srcline(stdout, "  defined at ", &where, "\n");
    if (called)
        cli_put_srcline(stdout, "  called from ", &from, "\n");
    const cJSON *p, *params = cJSON_GetObjectItemCaseSensitive(call, "params");
    cJSON_ArrayForEach(p, params) put_value_line(str_of(p, "name"), str_of(p, "value"));
    const cJSON *ret = cJSON_GetObjectItemCaseSensitive(call, "return");
    if (ret)
        put_value_line("return", str_of(ret, "value"));
    cJSON_Delete(call);
    return 0;
}

static int parse_args(int argc, char **argv, struct calls_opts *o)
{
    enum { OPT_SRCLINE = 0xa00 };
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},          {"srcline", no_argument, NULL, OPT_SRCLINE},
        {"include", required_argument, NULL, 'F'}, {"filter", required_argument, NULL, 'F'},
        {"exclude", required_argument, NULL, 'N'}, {"tid", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":jhF:N:t:", longopts, NULL)) != -1) {
        int taken = cli_filter_option(&o->filter.filter, c, optarg);
        if (taken < 0)
            return -1;
        o->filter.given |= taken > 0;
        if (taken) {
            continue;
        } else if (c == 'j') {
            o->json = true;
        } else if (c == OPT_SRCLINE) {
            o->sl.wanted = true;
        } else if (c == 'h') {
            usage(stdout);
            exit(0);
        } else {
            return cli_bad_option(argv, c, "calls");
        }
    }
    return 0;
}

int cmd_calls(int argc, char **argv)
{
    struct calls_opts o = {0};
    if (parse_args(argc, argv, &o) < 0)
        return 2;
    int rest = argc - optind;
    if (rest > 3) {
        err_hint("usage: calltrace calls [RUN] [FUNC N]", "calls: too many arguments");
        return 2;
    }
    const char *run_arg = rest == 1 || rest == 3 ? argv[optind] : NULL;
    const char *func = rest >= 2 ? argv[argc - 2] : NULL;
    if (func && (o.filter.filter.ninclude || o.filter.filter.nexclude)) {
        err_hint("name the function alone", "calls: -F and -N choose the functions listed, not "
                                            "with FUNC N");
        return 2;
    }
    char run[PATH_MAX], record[PATH_MAX], index_path[PATH_MAX];
    if (run_select(run_arg, run, sizeof(run), record, sizeof(record)) < 0)
        return 1;
    if (snprintf(index_path, sizeof(index_path), "%s/%s/%s", run, CALL_DIRS_NAME,
                 CALL_DIRS_INDEX) >= (int)sizeof(index_path)) {
        err_msg("%s: path too long", run);
        return 1;
    }
    cJSON *index = read_json(index_path, "this run recorded no arguments: record with -A");
    if (!index)
        return 1;
    int rc = srclines_read(&o.sl, record) < 0 || run_start_ns(record, &o.start_ns) < 0 ||
                     calls_filter_build(&o.filter, run, record) < 0
                 ? 1
             : func ? one_call(run, index, func, argv[argc - 1], &o)
                    : summary(run, index, &o);
    srclines_free(&o.sl);
    if (o.filter.given)
        profile_free(&o.filter.profile);
    cli_filter_free(&o.filter.filter);
    cJSON_Delete(index);
    return rc;
}
