/* Wrappers: env, nice, timeout, runuser, setsid, stdbuf, nohup, xargs, a shell run with -c, the
 * interpreter of a "#!" script. `calltrace env X=1 prog` means "trace prog". Debian ships these
 * stripped, and a stripped image has functions all the same (from its unwind table, all named
 * func_0xADDRESS), so "it has no function" no longer tells a wrapper; nor does "it can exec"
 * (Debian's ripgrep is stripped and spawns programs, and is the program to trace). The one
 * rule, for the program calltrace is given (cmd/record.c) and for each image a traced process
 * execs (control/exec.c):
 *   - with -l, an image is traced as any other (its libraries may have functions to trace);
 *   - an image without a function of its own to trace is followed to what it runs;
 *   - an image with a function named by a symbol table, .dynsym or a debug file is traced
 *     (Debian's bash exports its functions for loadable builtins: it is traced);
 *   - an image whose functions are all unnamed is a wrapper, followed untraced to what it runs
 *     (--trace-wrappers traces it all the same), when it is known to run a program: it is the
 *     interpreter of the "#!" script calltrace was given (the script is among its arguments),
 *     a shell run with -c, or one of its arguments that is not an option names an executable
 *     file (found through its own PATH for a bare name; a path with a '/' from its own working
 *     directory: a script a wrapper runs is such an argument of its interpreter); and when it
 *     can run one at all (it imports an exec, posix_spawn, system or popen function: sha256sum
 *     /usr/bin/env is no wrapper). Otherwise it is traced as any stripped program. */
#ifndef CALLTRACE_CONTROL_WRAPPER_H
#define CALLTRACE_CONTROL_WRAPPER_H

#include <stdbool.h>
#include <sys/types.h>

#include "symbols/elf_image.h"
#include "tracer/tracee.h"

/* How an image was started: what the rule reads of it. */
struct wrapper_exec {
    char *const *argv;    /* its arguments, argv[0] first, NULL-terminated */
    const char *path_var; /* the PATH it looks bare names up in; NULL: the default */
    int dir_fd;           /* its working directory (AT_FDCWD: calltrace's) */
    /* wrapper_exec_of's: the process, read from /proc when the rule needs it */
    pid_t pid;
    char *args_text, *env_text;
    char **args;
};

enum wrapper_verdict {
    WRAPPER_NOT,      /* a program: traced */
    WRAPPER_FOLLOWED, /* a wrapper, or nothing to trace: followed, untraced, to what it runs */
    WRAPPER_TRACED,   /* a wrapper traced all the same (--trace-wrappers) */
};

/* What the rule above makes of image, started as w, under opts (-l, --trace-wrappers, the
 * script calltrace was given). */
enum wrapper_verdict wrapper_verdict(const struct elf_image *image, struct wrapper_exec *w,
                                     const struct trace_options *opts);

/* Can the ELF image_path start another program (it imports one of libc's exec, posix_spawn,
 * system or popen functions)? */
bool wrapper_can_run_programs(const char *image_path);

/* w for process pid, stopped at its exec: its arguments, PATH and working directory, read from
 * /proc only when an image's functions are all unnamed. What cannot be read is left out (no
 * arguments, the default PATH, calltrace's directory). */
void wrapper_exec_of(pid_t pid, struct wrapper_exec *w);
void wrapper_exec_free(struct wrapper_exec *w);

#endif
