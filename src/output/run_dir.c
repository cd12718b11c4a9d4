#include "output/run_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/dir_fd.h"
#include "util/log.h"

#define PRIVATE_DIR_MODE 0700
#define PRIVATE_FILE_MODE 0600
#define SHARED_DIR_MODE 0755 /* less the umask, as any file */
#define SHARED_FILE_MODE 0644

int run_path(char *out, size_t outlen, const char *dir, const char *name)
{
    int n = snprintf(out, outlen, "%s/%s", dir, name);
    return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

int run_dir_parent(const char *path, char *name, size_t namelen, const char *what)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    const char *slash = memrchr(path, '/', len);
    const char *last = slash ? slash + 1 : path;
    size_t last_len = len - (size_t)(last - path);
    if (!last_len || last_len >= namelen || !strncmp(last, ".", last_len) ||
        !strncmp(last, "..", last_len)) {
        err_hint("give a new directory's name, such as -o out", "%s: not a name for a %s", path,
                 what);
        return -1;
    }
    memcpy(name, last, last_len);
    name[last_len] = '\0';
    char parent[PATH_MAX];
    size_t parent_len = slash ? (size_t)(slash - path) : 1;
    snprintf(parent, sizeof(parent), "%.*s", (int)parent_len,
             !slash          ? "."
             : slash == path ? "/"
                             : path);
    int fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        err_hint("choose another place with -o DIR", "cannot create %s %.*s: %s: %s", what,
                 (int)len, path, parent, strerror(errno));
        return -1;
    }
    if (dir_fd_others_may_replace(fd)) {
        err_hint("choose a directory only you can write to (-o DIR), or make this one sticky as "
                 "/tmp is (chmod +t)",
                 "cannot create %s %.*s: other users may write to %s and it is not sticky: one "
                 "of them could replace the %s",
                 what, (int)len, path, parent, what);
        close(fd);
        return -1;
    }
    return fd;
}

int run_dir_create(const char *base, bool share, struct run_dir *run)
{
    *run = (struct run_dir){.fd = -1,
                            .dir_mode = share ? SHARED_DIR_MODE : PRIVATE_DIR_MODE,
                            .file_mode = share ? SHARED_FILE_MODE : PRIVATE_FILE_MODE};
    char last[NAME_MAX + 1], name[NAME_MAX + 1];
    int parent = run_dir_parent(base, last, sizeof(last), "run directory");
    if (parent < 0)
        return -1;
    size_t len = strlen(base);
    while (len > 1 && base[len - 1] == '/')
        len--;
    for (unsigned i = 0; i < 100000; i++) {
        int n = i ? snprintf(name, sizeof(name), "%s-%u", last, i)
                  : snprintf(name, sizeof(name), "%s", last);
        if (n < 0 || (size_t)n >= sizeof(name) ||
            snprintf(run->path, sizeof(run->path), "%.*s%s", (int)len, base, name + strlen(last)) >=
                (int)sizeof(run->path)) {
            err_msg("%s: name too long", base);
            errno = ENAMETOOLONG;
            break;
        }
        run->fd = dir_fd_make(parent, name, run->dir_mode);
        if (run->fd >= 0 || errno != EEXIST)
            break;
    }
    int e = errno;
    close(parent);
    if (run->fd >= 0)
        return 0;
    if (e == EEXIST)
        err_msg("%s: too many run directories already", base);
    else if (e != ENAMETOOLONG)
        err_hint("choose another place with -o DIR", "cannot create run directory %s: %s",
                 run->path, strerror(e));
    return -1;
}

/* One line when the caller does not own st: whose it is and what to do. */
static int check_owner(const char *path, const struct stat *st)
{
    if (st->st_uid == geteuid())
        return 0;
    char buf[1024], owner[64];
    struct passwd pw, *found = NULL;
    if (getpwuid_r(st->st_uid, &pw, buf, sizeof(buf), &found) == 0 && found)
        snprintf(owner, sizeof(owner), "%s", found->pw_name);
    else
        snprintf(owner, sizeof(owner), "uid %u", (unsigned)st->st_uid);
    err_hint("run calltrace as its owner, or copy the run (cp -r) and give the copy",
             "%s: owned by %s, not by you: calltrace writes into and merges only run directories "
             "of its own user",
             path, owner);
    return -1;
}

/* Refuses, in one line, a directory calltrace is not to write into: another user's, or one
 * others may replace entries of. */
static int check_writable_run(const char *path, int fd, struct stat *st)
{
    if (fstat(fd, st) < 0) {
        err_msg("%s: %s", path, strerror(errno));
        return -1;
    }
    if (check_owner(path, st) < 0)
        return -1;
    if (dir_fd_others_may_replace(fd)) {
        err_hint("make it yours alone: chmod go-w DIR",
                 "%s: other users may write to it: one of them could replace a file calltrace "
                 "writes with a link",
                 path);
        return -1;
    }
    return 0;
}

int run_dir_open_at(int dir, const char *name, const char *path, struct run_dir *run)
{
    *run = (struct run_dir){.fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    snprintf(run->path, sizeof(run->path), "%s", path);
    struct stat st;
    if (run->fd < 0) {
        err_msg("%s: %s", path, errno == ENOTDIR ? "not a run directory" : strerror(errno));
        return -1;
    }
    if (check_writable_run(path, run->fd, &st) < 0) {
        run_dir_close(run);
        return -1;
    }
    run->dir_mode = st.st_mode & 0777;
    run->file_mode = run->dir_mode & 0666;
    return 0;
}

int run_dir_open(const char *path, struct run_dir *run)
{
    return run_dir_open_at(AT_FDCWD, path, path, run);
}

int run_dir_sub(const struct run_dir *run, const char *name, struct run_dir *sub)
{
    *sub = (struct run_dir){
        .fd = dir_fd_make(run->fd, name, run->dir_mode),
        .dir_mode = run->dir_mode,
        .file_mode = run->file_mode,
    };
    if (run_path(sub->path, sizeof(sub->path), run->path, name) < 0)
        snprintf(sub->path, sizeof(sub->path), "%s", name);
    struct stat st;
    if (sub->fd < 0 && errno == EEXIST) { /* an earlier one: ours alone, or refused */
        sub->fd = dir_fd_open(run->fd, name);
        if (sub->fd >= 0 && check_writable_run(sub->path, sub->fd, &st) < 0) {
            run_dir_close(sub);
            return -1;
        }
    }
    if (sub->fd < 0) {
        err_hint(errno == ELOOP || errno == ENOTDIR ? "remove it or move it away" : NULL,
                 "cannot create %s: %s", sub->path,
                 errno == ELOOP || errno == ENOTDIR ? "something other than a directory is in "
                                                      "its place (a link?)"
                                                    : strerror(errno));
        return -1;
    }
    return 0;
}

int run_dir_check_owner(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        err_msg("%s: %s", path, strerror(errno));
        return -1;
    }
    return check_owner(path, &st);
}

void run_dir_close(struct run_dir *run)
{
    if (run->fd >= 0)
        close(run->fd);
    run->fd = -1;
}

/* The entries of a run that failed are removed through its descriptor; the directory itself
 * only when its name still leads to it. */
void run_dir_discard(struct run_dir *run)
{
    if (run->fd < 0)
        return;
    DIR *d = fdopendir(dup(run->fd));
    if (d) {
        for (struct dirent *e; (e = readdir(d));)
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                dir_fd_remove_tree(run->fd, e->d_name);
        closedir(d);
    }
    char name[NAME_MAX + 1];
    struct stat ours, named;
    int parent = run_dir_parent(run->path, name, sizeof(name), "run directory");
    if (parent >= 0 && fstat(run->fd, &ours) == 0 &&
        fstatat(parent, name, &named, AT_SYMLINK_NOFOLLOW) == 0 && ours.st_ino == named.st_ino &&
        ours.st_dev == named.st_dev)
        unlinkat(parent, name, AT_REMOVEDIR);
    if (parent >= 0)
        close(parent);
    run_dir_close(run);
}
