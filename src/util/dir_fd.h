/* Files in directories other users may be able to change (a run directory in a shared place, or
 * one whose parent another user owns). Everything is done relative to a directory descriptor
 * opened once: a file is created with O_EXCL and O_NOFOLLOW, a directory opened with
 * O_DIRECTORY|O_NOFOLLOW, a tree removed or copied level by level through descriptors. No
 * path is resolved again between a check and a use, and no symbolic link planted by someone
 * else is ever followed, so root's calltrace cannot be made to write, truncate or remove a file
 * it did not create.
 *
 * Every function returns -1 with errno set on failure, and prints nothing. */
#ifndef CALLTRACE_UTIL_DIR_FD_H
#define CALLTRACE_UTIL_DIR_FD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The directory name in dir (AT_FDCWD: a path), opened for *at calls; name itself is not
 * followed when it is a link (ELOOP or ENOTDIR). */
int dir_fd_open(int dir, const char *name);
/* Makes the directory name in dir (mode) and opens it: -1 with EEXIST when name was there
 * already, EPERM when what was opened is not the directory just made by this user. */
int dir_fd_make(int dir, const char *name, mode_t mode);
/* Creates the file name in dir for writing: never an existing file, never through a link. */
int dir_fd_create(int dir, const char *name, mode_t mode);
/* Creates the file name in dir holding data[0..len). */
int dir_fd_write_file(int dir, const char *name, mode_t mode, const void *data, size_t len);
/* Removes name from dir, with everything under it when it is a directory; a link is removed,
 * never followed. ENOENT is not an error. */
int dir_fd_remove_tree(int dir, const char *name);
/* Copies the tree name of from_dir to the new name to of to_dir: directories dir_mode, files
 * file_mode, links as links, anything else left out. */
int dir_fd_copy_tree(int from_dir, const char *from, int to_dir, const char *to, mode_t dir_mode,
                     mode_t file_mode);
/* Can a user other than the owner create, rename or remove entries in the open directory fd?
 * Group or others may write to it, and it is not sticky (in a sticky directory such as /tmp
 * they can only touch their own entries). */
bool dir_fd_others_may_replace(int fd);

#endif
