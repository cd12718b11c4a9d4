#include "control/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bsd/string.h>

#include "symbols/elf_image.h"
#include "util/log.h"

#define TRACE_OPTIONS                                                                              \
    (PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |          \
     PTRACE_O_TRACEEXEC)

/* Where a name is looked up when there is no PATH. */
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

static int search_path(const char *program, char *out, size_t outlen)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = DEFAULT_PATH;
    int first_errno = ENOENT;
    for (const char *p = path;; p++) {
        const char *end = strchrnul(p, ':');
        int n = end == p ? snprintf(out, outlen, "./%s", program)
                         : snprintf(out, outlen, "%.*s/%s", (int)(end - p), p, program);
        struct stat st;
        if (n > 0 && (size_t)n < outlen && stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(out, X_OK) == 0)
                return 0;
            first_errno = EACCES;
        }
        if (!*end)
            break;
        p = end;
    }
    errno = first_errno;
    return -1;
}

/* "#! interpreter [arg]": the interpreter's path, as the kernel reads it. */
static int script_interpreter(const char *path, char *interp, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char line[256];
    ssize_t n = read(fd, line, sizeof(line) - 1);
    close(fd);
    if (n < 2 || line[0] != '#' || line[1] != '!')
        return -1;
    line[n] = '\0';
    char *p = line + 2;
    p += strspn(p, " \t");
    size_t word = strcspn(p, " \t\n");
    if (!word)
        return -1;
    p[word] = '\0';
    strlcpy(interp, p, len);
    return 0;
}

/* A regular file with execute permission, name taken from dir_fd when it is relative. */
static bool executable_at(int dir_fd, const char *name)
{
    struct stat st;
    return fstatat(dir_fd, name, &st, 0) == 0 && S_ISREG(st.st_mode) &&
           faccessat(dir_fd, name, X_OK, 0) == 0;
}

bool launch_names_executable(const char *name, const char *path_var, int dir_fd)
{
    if (!*name)
        return false;
    if (strchr(name, '/'))
        return executable_at(dir_fd, name);
    const char *path = path_var && *path_var ? path_var : DEFAULT_PATH;
    char file[PATH_MAX];
    for (const char *dir = path;; dir++) {
        const char *end = strchrnul(dir, ':');
        int n = end == dir ? snprintf(file, sizeof(file), "%s", name)
                           : snprintf(file, sizeof(file), "%.*s/%s", (int)(end - dir), dir, name);
        if (n > 0 && (size_t)n < sizeof(file) && executable_at(dir_fd, file))
            return true;
        if (!*end)
            return false;
        dir = end;
    }
}

bool launch_findable(const char *program)
{
    return launch_names_executable(program, getenv("PATH"), AT_FDCWD);
}

int launch_resolve(const char *program, char *path, size_t pathlen, char *image_path,
                   size_t imagelen)
{
    if (strchr(program, '/')) {
        strlcpy(path, program, pathlen);
    } else if (search_path(program, path, pathlen) < 0) {
        if (errno == EACCES)
            err_msg("%s: permission denied (not executable)", program);
        else
            err_hint("check the name, or give a path such as ./prog", "%s: command not found",
                     program);
        return -1;
    }
    struct stat st;
    if (stat(path, &st) < 0) {
        err_msg("%s: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        err_msg("%s: is a directory", path);
        return -1;
    }
    if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0) {
        err_hint("chmod +x it", "%s: permission denied (not executable)", path);
        return -1;
    }
    char interp[256];
    char why[256];
    if (script_interpreter(path, interp, sizeof(interp)) == 0) {
        if (elf_check_executable(interp, why, sizeof(why)) < 0) {
            err_msg("%s: interpreter %s: %s", path, interp, why);
            return -1;
        }
        strlcpy(image_path, interp, imagelen);
        return 0;
    }
    if (elf_check_executable(path, why, sizeof(why)) < 0) {
        err_msg("%s: %s", path, why);
        return -1;
    }
    strlcpy(image_path, path, imagelen);
    return 0;
}

/* In the child: undo what calltrace changed in the inherited state, wait to be seized, exec. */
static void child_exec(const char *path, char *const argv[], int go_fd, int err_fd)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    char go;
    while (read(go_fd, &go, 1) < 0 && errno == EINTR)
        ;
    close(go_fd);
    execv(path, argv);
    int e = errno;
    if (write(err_fd, &e, sizeof(e)) < 0)
        _exit(127);
    _exit(127);
}

/* calltrace holds one descriptor per traced process (/proc/PID/mem) besides its own files: it
 * takes all the open files the hard limit allows. Only after the fork, so that the program
 * keeps the limit it was given. */
static void raise_fd_limit(void)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &lim) < 0)
            dbg(DBG_ENGINE, 1, "cannot raise the open files limit: %s", strerror(errno));
    }
}

pid_t launch_program(const char *path, char *const argv[], unsigned long extra_options)
{
    int go[2], err[2];
    if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
        err_msg("cannot create a pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        err_msg("cannot fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        close(go[1]);
        close(err[0]);
        child_exec(path, argv, go[0], err[1]);
    }
    close(go[0]);
    close(err[1]);
    raise_fd_limit();
    int rc = ptrace(PTRACE_SEIZE, pid, 0, TRACE_OPTIONS | extra_options);
    int seize_errno = errno;
    if (write(go[1], "g", 1) < 0 && rc == 0)
        rc = -1;
    close(go[1]);
    if (rc < 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(err[0]);
        err_hint("check /proc/sys/kernel/yama/ptrace_scope and seccomp or container limits",
                 "cannot trace %s: %s", path, strerror(seize_errno));
        return -1;
    }
    /* The exec closes err (O_CLOEXEC) before the tracee stops at PTRACE_EVENT_EXEC, so this
     * returns 0 bytes on success and the errno on failure. */
    int exec_errno = 0;
    ssize_t n;
    while ((n = read(err[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR)
        ;
    close(err[0]);
    if (n > 0) {
        waitpid(pid, NULL, __WALL);
        err_msg("cannot execute %s: %s", path, strerror(exec_errno));
        return -1;
    }
    return pid;
}
