#include "output/run_dir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"

int run_path(char *out, size_t outlen, const char *dir, const char *name)
{
    int n = snprintf(out, outlen, "%s/%s", dir, name);
    return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

int run_dir_create(const char *base, char *out, size_t outlen)
{
    size_t len = strlen(base);
    while (len > 1 && base[len - 1] == '/')
        len--;
    for (unsigned i = 0; i < 100000; i++) {
        int n = i ? snprintf(out, outlen, "%.*s-%u", (int)len, base, i)
                  : snprintf(out, outlen, "%.*s", (int)len, base);
        if (n < 0 || (size_t)n >= outlen) {
            err_msg("%s: name too long", base);
            return -1;
        }
        if (mkdir(out, 0755) == 0)
            return 0;
        if (errno != EEXIST) {
            err_hint("choose another place with -o DIR", "cannot create run directory %s: %s", out,
                     strerror(errno));
            return -1;
        }
    }
    err_msg("%s: too many run directories already", base);
    return -1;
}

void run_dir_discard(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
    rmdir(dir);
}
