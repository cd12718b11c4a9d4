#include "util/proc_stat.h"

#include <stdio.h>
#include <string.h>

int proc_stat_read(pid_t pid, pid_t tid, char *state, unsigned long *flags)
{
    char path[64], buf[1024];
    if (tid)
        snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    else
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
    unsigned long ignored;
    if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", state, flags ? flags : &ignored) != 2)
        return -1;
    return 0;
}

bool proc_task_stopped(pid_t pid, pid_t tid)
{
    char state;
    return proc_stat_read(pid, tid, &state, NULL) == 0 && (state == 'T' || state == 't');
}
