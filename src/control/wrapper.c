#include "control/wrapper.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control/launch.h"
#include "util/log.h"

bool wrapper_can_run_programs(const char *image_path)
{
    static const char *const starters[] = {
        "execve",  "execv",    "execvp",      "execvpe",      "execl",  "execlp", "execle",
        "fexecve", "execveat", "posix_spawn", "posix_spawnp", "system", "popen",
    };
    return elf_imports_any(image_path, starters, sizeof(starters) / sizeof(starters[0]));
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* rule 1: the interpreter of the script calltrace was given has the script among its
 * arguments (the kernel puts it there). */
static bool runs_script(const struct wrapper_exec *w, const char *script)
{
    for (size_t i = 1; script && w->argv[0] && w->argv[i]; i++)
        if (strcmp(w->argv[i], script) == 0)
            return true;
    return false;
}

static bool is_shell(const char *path)
{
    static const char *const shells[] = {"sh",  "dash", "bash", "ash",
                                         "ksh", "mksh", "zsh",  "busybox"};
    const char *name = base_name(path);
    name += *name == '-'; /* a login shell's argv[0] */
    for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++)
        if (strcmp(name, shells[i]) == 0)
            return true;
    return false;
}

/* rule 2: a shell with -c among its options (-c, -ec, -xc...). -o and +o take a word. */
static bool shell_command(const struct elf_image *image, const struct wrapper_exec *w)
{
    if (!w->argv[0] || (!is_shell(image->path) && !is_shell(w->argv[0])))
        return false;
    for (size_t i = 1; w->argv[i]; i++) {
        const char *arg = w->argv[i];
        if ((arg[0] != '-' && arg[0] != '+') || !arg[1] || strcmp(arg, "--") == 0)
            return false;
        if (arg[0] == '-' && arg[1] != '-' && strchr(arg + 1, 'c'))
            return true;
        if (strcmp(arg + 1, "o") == 0 || strcmp(arg + 1, "O") == 0)
            i += w->argv[i + 1] != NULL;
    }
    return false;
}

/* rule 3: an argument that is not an option names an executable file (env X=1 prog, nice -n 5
 * prog, timeout 60 prog, runuser -u nobody -- prog, xargs -n1 prog). */
static bool names_program(const struct wrapper_exec *w)
{
    bool options_over = false;
    for (size_t i = 1; w->argv[0] && w->argv[i]; i++) {
        const char *arg = w->argv[i];
        if (!options_over && arg[0] == '-') {
            options_over = strcmp(arg, "--") == 0;
            continue;
        }
        if (launch_names_executable(arg, w->path_var, w->dir_fd))
            return true;
    }
    return false;
}

/* The whole of a /proc file, NUL-terminated (its length in *len); NULL when unreadable. */
static char *read_proc_file(pid_t pid, const char *what, size_t *len)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, used = 0;
    char *text = malloc(cap);
    for (ssize_t got = 1; text && got > 0;) {
        if (used + 1 == cap) {
            char *more = realloc(text, cap * 2);
            if (!more) {
                free(text);
                text = NULL;
                break;
            }
            text = more;
            cap *= 2;
        }
        got = read(fd, text + used, cap - 1 - used);
        if (got < 0 && errno == EINTR)
            got = 1;
        else if (got > 0)
            used += (size_t)got;
        else if (got < 0) {
            free(text);
            text = NULL;
        }
    }
    close(fd);
    if (!text)
        return NULL;
    text[used] = '\0';
    *len = used;
    return text;
}

/* argv from /proc/PID/cmdline: NUL-separated strings. */
static void read_args(pid_t pid, struct wrapper_exec *w)
{
    size_t len;
    w->args_text = read_proc_file(pid, "cmdline", &len);
    size_t count = 0;
    for (size_t i = 0; w->args_text && i < len; i++)
        count += w->args_text[i] == '\0';
    w->args = calloc(count + 2, sizeof(*w->args));
    if (!w->args || !w->args_text)
        return;
    size_t k = 0;
    for (size_t i = 0; i < len; i += strlen(w->args_text + i) + 1)
        w->args[k++] = w->args_text + i;
    w->argv = w->args;
}

void wrapper_exec_of(pid_t pid, struct wrapper_exec *w)
{
    static char *const no_args[] = {NULL};
    *w = (struct wrapper_exec){.argv = no_args, .dir_fd = AT_FDCWD, .pid = pid};
}

static void read_process(struct wrapper_exec *w)
{
    if (!w->pid || w->args)
        return;
    read_args(w->pid, w);
    size_t len;
    w->env_text = read_proc_file(w->pid, "environ", &len);
    for (size_t i = 0; w->env_text && i < len; i += strlen(w->env_text + i) + 1)
        if (strncmp(w->env_text + i, "PATH=", 5) == 0)
            w->path_var = w->env_text + i + 5;
    char cwd[64];
    snprintf(cwd, sizeof(cwd), "/proc/%d/cwd", (int)w->pid);
    int fd = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0)
        w->dir_fd = fd;
    else
        dbg(DBG_ENGINE, 1, "%s: %s: relative names looked up from calltrace's directory", cwd,
            strerror(errno));
}

void wrapper_exec_free(struct wrapper_exec *w)
{
    if (w->dir_fd >= 0)
        close(w->dir_fd);
    free(w->args);
    free(w->args_text);
    free(w->env_text);
}

enum wrapper_verdict wrapper_verdict(const struct elf_image *image, struct wrapper_exec *w,
                                     const struct trace_options *opts)
{
    if (opts->nlibs)
        return WRAPPER_NOT;
    if (elf_image_traceable(image) == 0)
        return WRAPPER_FOLLOWED;
    if (!elf_image_unnamed(image))
        return WRAPPER_NOT;
    read_process(w);
    bool runs = runs_script(w, opts->script) || shell_command(image, w) || names_program(w);
    if (!runs || !wrapper_can_run_programs(image->path))
        return WRAPPER_NOT;
    return opts->trace_wrappers ? WRAPPER_TRACED : WRAPPER_FOLLOWED;
}
