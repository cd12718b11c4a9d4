#include "analysis/run_select.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "output/run_dir.h"
#include "record/format.h"
#include "util/log.h"

static int check_run(const char *run, char *record, size_t reclen)
{
    struct stat st;
    if (stat(run, &st) < 0) {
        err_msg("%s: %s", run, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        err_hint("give the directory calltrace wrote, e.g. calltrace-out",
                 "%s: not a run directory", run);
        return -1;
    }
    if (run_path(record, reclen, run, REC_FILE_NAME) < 0) {
        err_msg("%s: path too long", run);
        return -1;
    }
    if (stat(record, &st) < 0 || !S_ISREG(st.st_mode)) {
        err_hint("a run directory holds " REC_FILE_NAME, "%s: not a run directory: %s", run,
                 errno == ENOENT ? "it has no " REC_FILE_NAME : strerror(errno));
        return -1;
    }
    return 0;
}

/* The subdirectory of . whose events.ctr was modified last. */
static int find_newest(char *run, size_t runlen)
{
    DIR *d = opendir(".");
    if (!d) {
        err_msg("cannot read the current directory: %s", strerror(errno));
        return -1;
    }
    struct timespec best = {0, 0};
    int found = 0;
    char record[4096];
    for (struct dirent *e; (e = readdir(d));) {
        struct stat st;
        if (e->d_name[0] == '.' ||
            snprintf(record, sizeof(record), "%s/" REC_FILE_NAME, e->d_name) >=
                (int)sizeof(record) ||
            stat(record, &st) < 0 || !S_ISREG(st.st_mode))
            continue;
        if (found && (st.st_mtim.tv_sec < best.tv_sec ||
                      (st.st_mtim.tv_sec == best.tv_sec && st.st_mtim.tv_nsec <= best.tv_nsec)))
            continue;
        if (snprintf(run, runlen, "%s", e->d_name) >= (int)runlen)
            continue;
        best = st.st_mtim;
        found = 1;
    }
    closedir(d);
    if (!found) {
        err_hint(
            "trace a program first, or give RUN",
            "no run directory here: no subdirectory of the current directory holds " REC_FILE_NAME);
        return -1;
    }
    return 0;
}

int run_select(const char *arg, char *run, size_t runlen, char *record, size_t reclen)
{
    if (arg) {
        if (snprintf(run, runlen, "%s", arg) >= (int)runlen) {
            err_msg("%s: path too long", arg);
            return -1;
        }
    } else if (find_newest(run, runlen) < 0) {
        return -1;
    }
    return check_run(run, record, reclen);
}

void run_warn_dropped(const char *run, uint64_t dropped_calls)
{
    if (dropped_calls)
        err_hint("a larger --buffer-size keeps more",
                 "%s: %llu calls were not recorded (the rings were full): the figures leave them "
                 "out",
                 run, (unsigned long long)dropped_calls);
}

void run_note_breakpoints(const char *run, bool shown)
{
    if (shown)
        err_msg("%s: the functions marked breakpoint were traced by breakpoints (the inject engine "
                "could not patch them, or a forked process ran them before it exec'd): each of "
                "their calls' times includes two ptrace stops, some 25 us",
                run);
}

void run_warn_damaged(const char *run, int damaged)
{
    if (damaged)
        err_msg("%s/" REC_FILE_NAME ": the record ends %s (calltrace was killed, or the disk is "
                "full); this covers the events before that",
                run, damaged == 1 ? "in the middle of an event" : "with damaged data");
}
