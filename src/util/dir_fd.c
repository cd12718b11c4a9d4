#include "util/dir_fd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Run directories are a few levels deep (RUN/calls/FUNC/N/file): a deeper tree is not one of
 * ours, and the limit bounds the descriptors a walk holds open. */
#define TREE_DEPTH_MAX 16

int dir_fd_open(int dir, const char *name)
{
    return openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int dir_fd_make(int dir, const char *name, mode_t mode)
{
    if (mkdirat(dir, name, mode) < 0)
        return -1;
    int fd = dir_fd_open(dir, name);
    if (fd < 0)
        return -1;
    /* Between the two calls another user who may write to dir could have put a directory of
     * their own in its place: it is not ours to write into. */
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
        int e = errno;
        close(fd);
        errno = st.st_uid != geteuid() ? EPERM : e;
        return -1;
    }
    return fd;
}

int dir_fd_create(int dir, const char *name, mode_t mode)
{
    return openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
}

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) {
            errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int dir_fd_write_file(int dir, const char *name, mode_t mode, const void *data, size_t len)
{
    int fd = dir_fd_create(dir, name, mode);
    if (fd < 0)
        return -1;
    int rc = write_all(fd, data, len);
    int e = errno;
    if (close(fd) < 0 && rc == 0)
        return -1;
    errno = e;
    return rc;
}

static bool is_dot(const char *name)
{
    return !strcmp(name, ".") || !strcmp(name, "..");
}

static int remove_tree(int dir, const char *name, int depth)
{
    int fd = dir_fd_open(dir, name);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        if (errno != ENOTDIR && errno != ELOOP)
            return -1;
        /* a file, or a link (removed, never followed) */
        return unlinkat(dir, name, 0) < 0 && errno != ENOENT ? -1 : 0;
    }
    if (depth >= TREE_DEPTH_MAX) {
        close(fd);
        errno = ELOOP;
        return -1;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    int rc = 0;
    for (struct dirent *e; rc == 0 && (errno = 0, e = readdir(d));) {
        if (is_dot(e->d_name))
            continue;
        if (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN)
            rc = remove_tree(dirfd(d), e->d_name, depth + 1);
        else if (unlinkat(dirfd(d), e->d_name, 0) < 0 && errno != ENOENT)
            rc = -1;
    }
    if (rc == 0 && errno) /* readdir failed */
        rc = -1;
    int e = errno;
    closedir(d);
    if (rc == 0 && unlinkat(dir, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        return -1;
    errno = e;
    return rc;
}

int dir_fd_remove_tree(int dir, const char *name)
{
    return remove_tree(dir, name, 0);
}

static int copy_file(int from_dir, const char *name, int to_dir, const char *to, mode_t mode)
{
    /* O_NONBLOCK: what was a file when looked at may be a FIFO now, whose open would wait */
    int in = openat(from_dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (in < 0)
        return -1;
    struct stat st;
    if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(in);
        errno = EINVAL;
        return -1;
    }
    int out = dir_fd_create(to_dir, to, mode);
    if (out < 0) {
        int e = errno;
        close(in);
        errno = e;
        return -1;
    }
    char buf[65536];
    int rc = 0;
    for (ssize_t n; rc == 0 && (n = read(in, buf, sizeof(buf))) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        rc = n < 0 ? -1 : write_all(out, buf, (size_t)n);
    }
    int e = errno;
    close(in);
    if (close(out) < 0 && rc == 0)
        return -1;
    errno = e;
    return rc;
}

static int copy_link(int from_dir, const char *name, int to_dir, const char *to)
{
    char target[PATH_MAX];
    ssize_t n = readlinkat(from_dir, name, target, sizeof(target) - 1);
    if (n < 0)
        return -1;
    target[n] = '\0';
    return symlinkat(target, to_dir, to);
}

static int copy_tree(int from_dir, const char *from, int to_dir, const char *to, mode_t dir_mode,
                     mode_t file_mode, int depth);

static int copy_entries(DIR *from, int to, mode_t dir_mode, mode_t file_mode, int depth)
{
    int rc = 0;
    for (struct dirent *e; rc == 0 && (errno = 0, e = readdir(from));)
        if (!is_dot(e->d_name))
            rc = copy_tree(dirfd(from), e->d_name, to, e->d_name, dir_mode, file_mode, depth + 1);
    return rc == 0 && errno ? -1 : rc;
}

static int copy_dir(int from_dir, const char *from, int to_dir, const char *to, mode_t dir_mode,
                    mode_t file_mode, int depth)
{
    if (depth >= TREE_DEPTH_MAX) {
        errno = ELOOP;
        return -1;
    }
    int in = dir_fd_open(from_dir, from);
    if (in < 0)
        return -1;
    DIR *d = fdopendir(in);
    int out = d ? dir_fd_make(to_dir, to, dir_mode) : -1;
    int rc = out < 0 ? -1 : copy_entries(d, out, dir_mode, file_mode, depth);
    int e = errno;
    if (out >= 0)
        close(out);
    if (d)
        closedir(d);
    else
        close(in);
    errno = e;
    return rc;
}

static int copy_tree(int from_dir, const char *from, int to_dir, const char *to, mode_t dir_mode,
                     mode_t file_mode, int depth)
{
    struct stat st;
    if (fstatat(from_dir, from, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return -1;
    if (S_ISDIR(st.st_mode))
        return copy_dir(from_dir, from, to_dir, to, dir_mode, file_mode, depth);
    if (S_ISLNK(st.st_mode))
        return copy_link(from_dir, from, to_dir, to);
    if (S_ISREG(st.st_mode))
        return copy_file(from_dir, from, to_dir, to, file_mode);
    return 0; /* sockets, fifos: nothing a run directory holds */
}

int dir_fd_copy_tree(int from_dir, const char *from, int to_dir, const char *to, mode_t dir_mode,
                     mode_t file_mode)
{
    return copy_tree(from_dir, from, to_dir, to, dir_mode, file_mode, 0);
}

bool dir_fd_others_may_replace(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return true;
    return (st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX);
}
