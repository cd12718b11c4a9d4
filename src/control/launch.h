/* Starting the program: resolving it like a shell would, and forking it under PTRACE_SEIZE. */
#ifndef CALLTRACE_CONTROL_LAUNCH_H
#define CALLTRACE_CONTROL_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Finds program in PATH (unless it contains '/') and checks it can be traced: an executable
 * ELF for x86_64, or a "#!" script whose interpreter is one. Fills path (what to exec) and
 * image_path (the ELF that will run). Prints one error line and returns -1 otherwise. */
int launch_resolve(const char *program, char *path, size_t pathlen, char *image_path,
                   size_t imagelen);

/* Is there an executable file program names (a path, or a name found in PATH)? Quiet. */
bool launch_findable(const char *program);
/* The same for a process whose PATH is path_var (NULL or empty: the default) and whose working
 * directory is dir_fd (AT_FDCWD: calltrace's), for a relative path or an empty PATH entry. */
bool launch_names_executable(const char *name, const char *path_var, int dir_fd);

/* Forks and execs path with argv, environment untouched; the child is seized before it execs,
 * with PTRACE_O_EXITKILL so it can never outlive calltrace with breakpoints in it, and
 * extra_options (PTRACE_O_*). Returns the child's pid, or -1 after printing why. */
pid_t launch_program(const char *path, char *const argv[], unsigned long extra_options);

#endif
