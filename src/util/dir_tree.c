#include "util/dir_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"

static int copy_file(const char *from, const char *to, mode_t mode)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 0777);
    if (out < 0) {
        close(in);
        return -1;
    }
    char buf[65536];
    ssize_t n;
    int rc = 0;
    while (rc == 0 && (n = read(in, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        for (ssize_t off = 0; n > 0 && off < n && rc == 0;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno != EINTR)
                rc = -1;
            off += w > 0 ? w : 0;
        }
        if (n < 0)
            rc = -1;
    }
    int saved = errno;
    close(in);
    if (close(out) < 0 && rc == 0)
        return -1;
    errno = saved;
    return rc;
}

static int copy_link(const char *from, const char *to)
{
    char target[PATH_MAX];
    ssize_t n = readlink(from, target, sizeof(target) - 1);
    if (n < 0)
        return -1;
    target[n] = '\0';
    return symlink(target, to);
}

static int copy_entry(const char *from, const char *to);

static int copy_dir(const char *from, const char *to, mode_t mode)
{
    if (mkdir(to, mode & 0777) < 0)
        return -1;
    DIR *d = opendir(from);
    if (!d)
        return -1;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char a[PATH_MAX], b[PATH_MAX];
        if (snprintf(a, sizeof(a), "%s/%s", from, e->d_name) >= (int)sizeof(a) ||
            snprintf(b, sizeof(b), "%s/%s", to, e->d_name) >= (int)sizeof(b)) {
            errno = ENAMETOOLONG;
            rc = -1;
        } else {
            rc = copy_entry(a, b);
        }
    }
    int saved = errno;
    closedir(d);
    errno = saved;
    return rc;
}

static int copy_entry(const char *from, const char *to)
{
    struct stat st;
    if (lstat(from, &st) < 0)
        return -1;
    if (S_ISDIR(st.st_mode))
        return copy_dir(from, to, st.st_mode);
    if (S_ISLNK(st.st_mode))
        return copy_link(from, to);
    if (S_ISREG(st.st_mode))
        return copy_file(from, to, st.st_mode);
    return 0; /* sockets, fifos: nothing a run directory should hold */
}

int dir_tree_copy(const char *from, const char *to)
{
    if (copy_entry(from, to) == 0)
        return 0;
    err_msg("copying %s to %s: %s", from, to, strerror(errno));
    return -1;
}

void dir_tree_remove(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(path);
        return;
    }
    DIR *d = opendir(path);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            char sub[PATH_MAX];
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
                snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) < (int)sizeof(sub))
                dir_tree_remove(sub);
        }
        closedir(d);
    }
    rmdir(path);
}
