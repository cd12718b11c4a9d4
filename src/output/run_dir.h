/* The run directory: created fresh for every run, never overwriting an earlier one, and held by
 * a descriptor from then on. Every file calltrace writes or removes in it goes through that
 * descriptor (util/dir_fd.h), so that another user who can rename entries of its parent (the
 * parent's owner, or anyone in a directory all may write to) cannot make calltrace, often run
 * as root, write through a link they planted.
 *
 * A run holds what calltrace read from the programs it traced (-A strings, --capture buffers,
 * function names): it is private (0700, its files 0600) unless --share asks for the umask's
 * modes. */
#ifndef CALLTRACE_OUTPUT_RUN_DIR_H
#define CALLTRACE_OUTPUT_RUN_DIR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define RUN_DIR_DEFAULT "calltrace-out"

struct run_dir {
    int fd;              /* the directory, opened once; -1 when closed */
    char path[PATH_MAX]; /* as the user named it: for messages */
    mode_t dir_mode;     /* of the directories calltrace makes in it */
    mode_t file_mode;    /* of its files */
};

/* Creates base, or base-1, base-2, ... when it exists, private unless share. Refused, with one
 * error line, when other users may replace entries of base's parent (group- or
 * world-writable, not sticky). Returns 0, or -1 after one error line. */
int run_dir_create(const char *base, bool share, struct run_dir *run);
/* An existing run directory calltrace is to write into (export, view's window). Refused
 * unless the caller owns it and no one else may replace its entries; what calltrace makes in
 * it gets the directory's own modes. Returns 0, or -1 after one error line. */
int run_dir_open(const char *path, struct run_dir *run);
/* The same for the directory name in dir (AT_FDCWD: a path; "." in a directory held open),
 * path for messages. */
int run_dir_open_at(int dir, const char *name, const char *path, struct run_dir *run);
/* The directory name in run (made, or opened when it exists: never through a link, and only
 * one of the caller's that no one else may write to), as a run directory of the same modes:
 * where view writes a window. -1 after one error line. */
int run_dir_sub(const struct run_dir *run, const char *name, struct run_dir *sub);
/* Checks, for merge's inputs, that path is a directory the caller owns. 0, or -1 after one
 * error line. */
int run_dir_check_owner(const char *path);
void run_dir_close(struct run_dir *run);
/* Removes a run directory this run created and left without results (launch failed); closes
 * it. */
void run_dir_discard(struct run_dir *run);
/* dir/name into out; -1 if it does not fit. */
int run_path(char *out, size_t outlen, const char *dir, const char *name);

/* The parent directory of path (".", or what precedes its last component) opened, and that
 * component into name; trailing slashes ignored. -1 after one error line. what: the messages'
 * subject ("run directory"). */
int run_dir_parent(const char *path, char *name, size_t namelen, const char *what);

#endif
