#include "view/browser.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

/* How long a browser command may take to fail before it counts as started: xdg-open, and a
 * browser that hands the URL to its running instance, exit at once; a browser started fresh
 * keeps running, and is left to run. */
#define START_WAIT_MS 3000
#define POLL_MS 10

/* The shell command for one $BROWSER entry, the URL passed as "$1" so it is never parsed. */
static char *browser_command(const char *entry, size_t len)
{
    char *cmd = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&cmd, &size);
    if (!f)
        return NULL;
    bool has_url = false;
    for (size_t i = 0; i < len; i++) {
        if (entry[i] == '%' && i + 1 < len && (entry[i + 1] == 's' || entry[i + 1] == '%')) {
            has_url |= entry[i + 1] == 's';
            fputs(entry[i + 1] == 's' ? "\"$1\"" : "%", f);
            i++;
        } else {
            fputc(entry[i], f);
        }
    }
    if (!has_url)
        fputs(" \"$1\"", f);
    if (fclose(f) != 0) {
        free(cmd);
        return NULL;
    }
    return cmd;
}

/* Runs cmd under sh with the URL as $1, its output dropped: the terminal is calltrace's. */
static int spawn_shell(const char *cmd, const char *url, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1;
    char *argv[] = {"sh", "-c", (char *)cmd, "sh", (char *)url, NULL};
    int rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0)
        rc = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (rc == 0)
        rc = posix_spawn(pid, "/bin/sh", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    return rc == 0 ? 0 : -1;
}

/* 0 when the command is still running or exited 0, else its exit status (128+N: signal N). */
static int wait_started(pid_t pid)
{
    struct timespec tick = {0, POLL_MS * 1000000L};
    for (int waited = 0; waited < START_WAIT_MS; waited += POLL_MS) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (r < 0 && errno != EINTR)
            return 0; /* reaped elsewhere: nothing says it failed */
        nanosleep(&tick, NULL);
    }
    return 0;
}

static int try_command(const char *entry, size_t len, const char *url, char *why, size_t whylen)
{
    char *cmd = browser_command(entry, len);
    pid_t pid;
    if (!cmd || spawn_shell(cmd, url, &pid) < 0) {
        snprintf(why, whylen, "cannot run %.*s", (int)len, entry);
        free(cmd);
        return -1;
    }
    free(cmd);
    int status = wait_started(pid);
    if (status == 0)
        return 0;
    snprintf(why, whylen, "%.*s %s", (int)len, entry, status == 127 ? "was not found" : "failed");
    return -1;
}

int browser_open(const char *url, char *why, size_t whylen)
{
    const char *list = getenv("BROWSER");
    if (list && *list) {
        snprintf(why, whylen, "$BROWSER is empty");
        for (const char *p = list; *p;) {
            size_t len = strcspn(p, ":");
            if (len && try_command(p, len, url, why, whylen) == 0)
                return 0;
            p += len + (p[len] == ':');
        }
        return -1;
    }
    const char *x11 = getenv("DISPLAY"), *wayland = getenv("WAYLAND_DISPLAY");
    if (!(x11 && *x11) && !(wayland && *wayland)) {
        snprintf(why, whylen, "no $BROWSER and no display");
        return -1;
    }
    return try_command("xdg-open", strlen("xdg-open"), url, why, whylen);
}
