/* calltrace calls [RUN] [FUNC N] [--json]: the arguments recorded with -A/-R, read back from
 * RUN/calls (output/call_dirs.h): per function, or one call by its number. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis/replay.h"
#include "analysis/run_select.h"
#include "analysis/source_file.h"
#include "cmd/cli_util.h"
#include "cmd/commands.h"
#include "output/call_dirs.h"
#include "output/run_dir.h"
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

static void usage(FILE *f)
{
    fputs("usage: calltrace calls [--json] [--srcline] [RUN]\n"
          "       calltrace calls [--json] [--srcline] [RUN] FUNC N\n"
          "The arguments recorded with -A (and -R): each function with its captured calls and\n"
          "its parameters, or call N (from 1) of FUNC with its values (FUNC as the list\n"
          "prints it). RUN defaults to the newest run directory here.\n"
          "  -j, --json       print JSON instead\n"
          "      --srcline    where each function is defined (file:line, from DWARF)\n",
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

static int summary(const char *run, cJSON *index, bool json, struct srclines *sl)
{
    const cJSON *f, *funcs = cJSON_GetObjectItemCaseSensitive(index, "functions");
    cJSON *out = json ? cJSON_CreateArray() : NULL;
    if (!json)
        printf("%-10s %-10s %s\n", "CALLS", "FOLDERS", "FUNCTION");
    cJSON_ArrayForEach(f, funcs)
    {
        const char *name = str_of(f, "name"), *folder = str_of(f, "folder");
        if (!name || !folder)
            continue;
        cJSON *first = num_of(f, "folders") >= 1 ? read_call(run, folder, 1) : NULL;
        if (json) {
            cJSON *o = cJSON_Duplicate(f, true);
            if (first) {
                cJSON *params =
                    cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(first, "params"), true);
                cJSON *p;
                cJSON_ArrayForEach(p, params) /* names and types only */
                {
                    cJSON_DeleteItemFromObject(p, "value");
                    cJSON_DeleteItemFromObject(p, "bytes");
                }
                cJSON_AddItemToObject(o, "params", params);
                const cJSON *ret = cJSON_GetObjectItemCaseSensitive(first, "return");
                if (ret && str_of(ret, "type"))
                    cJSON_AddStringToObject(o, "return_type", str_of(ret, "type"));
            }
            add_srcline_json(o, sl, name);
            cJSON_AddItemToArray(out, o);
        } else {
            printf("%-10.0f %-10.0f ", num_of(f, "calls"), num_of(f, "folders"));
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

static int one_call(const char *run, cJSON *index, const char *func, const char *number, bool json,
                    struct srclines *sl)
{
    long long n;
    if (cli_number("N", number, 1, UINT32_MAX, &n) < 0)
        return 2;
    const cJSON *f, *funcs = cJSON_GetObjectItemCaseSensitive(index, "functions");
    const cJSON *found = NULL;
    cJSON_ArrayForEach(f, funcs) if (str_of(f, "name") && names_function(str_of(f, "name"), func))
        found = f;
    if (!found) {
        err_hint("calltrace calls RUN lists them", "%s: no arguments of %s were recorded", run,
                 func);
        return 1;
    }
    func = str_of(found, "name"); /* as recorded, when FUNC was given escaped */
    if (n > num_of(found, "calls")) {
        err_msg("%s: %s has %.0f recorded calls, not %lld", run, func, num_of(found, "calls"), n);
        return 1;
    }
    if (n > num_of(found, "folders")) {
        err_hint("record again with a larger --max-call-dirs",
                 "%s: call %lld of %s has no folder: only the first %.0f were kept", run, n, func,
                 num_of(found, "folders"));
        return 1;
    }
    cJSON *call = read_call(run, str_of(found, "folder"), (long)n);
    if (!call)
        return 1;
    if (json) {
        add_srcline_json(call, sl, func);
        cli_put_json(call);
        return 0;
    }
    fputs_name(func, stdout);
    printf(" #%lld  pid %.0f  tid %.0f  entry %.3f us  exit %.3f us%s\n", n, num_of(call, "pid"),
           num_of(call, "tid"), num_of(call, "entry_us"), num_of(call, "exit_us"),
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(call, "unfinished")) ? "  (unfinished)"
                                                                              : "");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(call, "raw_registers")))
        printf("  (its argument registers, raw: no DWARF for it, or its file changed)\n");
    struct source_line where;
    if (sl->wanted && srcline_of(sl, func, &where))
        cli_put_srcline(stdout, "  defined at ", &where, "\n");
    const cJSON *p, *params = cJSON_GetObjectItemCaseSensitive(call, "params");
    cJSON_ArrayForEach(p, params) put_value_line(str_of(p, "name"), str_of(p, "value"));
    const cJSON *ret = cJSON_GetObjectItemCaseSensitive(call, "return");
    if (ret)
        put_value_line("return", str_of(ret, "value"));
    cJSON_Delete(call);
    return 0;
}

int cmd_calls(int argc, char **argv)
{
    enum { OPT_SRCLINE = 0xa00 };
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},
        {"srcline", no_argument, NULL, OPT_SRCLINE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false;
    struct srclines sl = {0};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":jh", longopts, NULL)) != -1) {
        if (c == 'j') {
            json = true;
        } else if (c == OPT_SRCLINE) {
            sl.wanted = true;
        } else if (c == 'h') {
            usage(stdout);
            return 0;
        } else {
            cli_bad_option(argv, c, "calls");
            return 2;
        }
    }
    int rest = argc - optind;
    if (rest > 3) {
        err_hint("usage: calltrace calls [RUN] [FUNC N]", "calls: too many arguments");
        return 2;
    }
    const char *run_arg = rest == 1 || rest == 3 ? argv[optind] : NULL;
    const char *func = rest >= 2 ? argv[argc - 2] : NULL;
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
    int rc = srclines_read(&sl, record) < 0 ? 1
             : func                         ? one_call(run, index, func, argv[argc - 1], json, &sl)
                                            : summary(run, index, json, &sl);
    srclines_free(&sl);
    cJSON_Delete(index);
    return rc;
}
