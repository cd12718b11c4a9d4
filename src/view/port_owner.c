#include "view/port_owner.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TCP_LISTEN 0x0A

/* The socket inode of a listener on port, from a /proc/net/tcp-style table; 0 if none. */
static unsigned long listener_inode(const char *table, int port)
{
    FILE *f = fopen(table, "re");
    if (!f)
        return 0;
    char line[512];
    unsigned long found = 0;
    if (!fgets(line, sizeof(line), f)) { /* the column titles */
        fclose(f);
        return 0;
    }
    while (!found && fgets(line, sizeof(line), f)) {
        unsigned lport, state;
        unsigned long inode;
        if (sscanf(line, " %*d: %*[0-9A-Fa-f]:%x %*s %x %*s %*s %*s %*u %*u %lu", &lport, &state,
                   &inode) == 3 &&
            (int)lport == port && state == TCP_LISTEN)
            found = inode;
    }
    fclose(f);
    return found;
}

static bool pid_has_socket(const char *pid, const char *want)
{
    char dir[PATH_MAX], link[PATH_MAX + 256], target[64];
    snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
    DIR *d = opendir(dir);
    if (!d)
        return false; /* gone, or not ours to look at */
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(d));) {
        if (snprintf(link, sizeof(link), "%s/%s", dir, e->d_name) >= (int)sizeof(link))
            continue;
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        if (n > 0) {
            target[n] = '\0';
            found = !strcmp(target, want);
        }
    }
    closedir(d);
    return found;
}

static void describe(const char *pid, char *out, size_t outlen)
{
    char path[PATH_MAX], comm[64] = "?";
    snprintf(path, sizeof(path), "/proc/%s/comm", pid);
    FILE *f = fopen(path, "re");
    if (f) {
        if (fgets(comm, sizeof(comm), f))
            comm[strcspn(comm, "\n")] = '\0';
        fclose(f);
    }
    snprintf(out, outlen, "%s (pid %s)", comm, pid);
}

int port_owner(int port, char *out, size_t outlen)
{
    unsigned long inode = listener_inode("/proc/net/tcp", port);
    if (!inode)
        inode = listener_inode("/proc/net/tcp6", port);
    if (!inode)
        return -1;
    char want[64];
    snprintf(want, sizeof(want), "socket:[%lu]", inode);
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    int rc = -1;
    for (struct dirent *e; rc < 0 && (e = readdir(d));) {
        if (!isdigit((unsigned char)e->d_name[0]) || !pid_has_socket(e->d_name, want))
            continue;
        describe(e->d_name, out, outlen);
        rc = 0;
    }
    closedir(d);
    return rc;
}
