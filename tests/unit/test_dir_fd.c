/* util/dir_fd: files created only anew and never through a link; trees removed and copied
 * without following a link anywhere in them (a link to a directory outside is removed or
 * copied as a link, what it points to untouched); a directory others may write to and that is
 * not sticky is told apart from a sticky one. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/dir_fd.h"
#include "unit.h"

static int open_top(const char *dir)
{
    return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static bool exists_at(int dir, const char *name)
{
    struct stat st;
    return fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void test_create_never_follows(int top)
{
    CHECK(mkdirat(top, "outside", 0700) == 0);
    CHECK(symlinkat("outside/target", top, "link") == 0);
    errno = 0;
    CHECK(dir_fd_create(top, "link", 0600) < 0 && errno == EEXIST);
    CHECK(!exists_at(top, "outside/target"));
    CHECK(dir_fd_write_file(top, "file", 0600, "abc", 3) == 0);
    errno = 0;
    CHECK(dir_fd_write_file(top, "file", 0600, "xyz", 3) < 0 && errno == EEXIST);
    struct stat st;
    CHECK(fstatat(top, "file", &st, 0) == 0 && st.st_size == 3 && (st.st_mode & 0777) == 0600);
    errno = 0;
    CHECK(dir_fd_open(top, "link") < 0);
    CHECK(symlinkat("outside", top, "dirlink") == 0);
    errno = 0;
    CHECK(dir_fd_open(top, "dirlink") < 0 && (errno == ELOOP || errno == ENOTDIR));
}

static void test_remove_tree_keeps_what_links_point_to(int top)
{
    CHECK(mkdirat(top, "victim", 0700) == 0);
    CHECK(dir_fd_write_file(top, "victim/keep", 0600, "k", 1) == 0);
    CHECK(mkdirat(top, "tree", 0700) == 0 && mkdirat(top, "tree/sub", 0700) == 0);
    CHECK(dir_fd_write_file(top, "tree/sub/f", 0600, "f", 1) == 0);
    CHECK(symlinkat("../victim", top, "tree/to_victim") == 0);
    CHECK(symlinkat("../../victim/keep", top, "tree/sub/to_keep") == 0);
    CHECK(dir_fd_remove_tree(top, "tree") == 0);
    CHECK(!exists_at(top, "tree"));
    CHECK(exists_at(top, "victim/keep"));
    CHECK(dir_fd_remove_tree(top, "tree") == 0); /* gone already: not an error */
    CHECK(symlinkat("victim", top, "top_link") == 0);
    CHECK(dir_fd_remove_tree(top, "top_link") == 0);
    CHECK(!exists_at(top, "top_link") && exists_at(top, "victim/keep"));
}

static void test_copy_tree(int top)
{
    CHECK(mkdirat(top, "src", 0755) == 0 && mkdirat(top, "src/a", 0755) == 0);
    CHECK(dir_fd_write_file(top, "src/a/f", 0644, "hello", 5) == 0);
    CHECK(symlinkat("/etc/shadow", top, "src/a/l") == 0);
    CHECK(mkfifoat(top, "src/fifo", 0600) == 0);
    CHECK(dir_fd_copy_tree(top, "src", top, "dst", 0700, 0600) == 0);
    struct stat st;
    CHECK(fstatat(top, "dst/a/f", &st, 0) == 0 && st.st_size == 5 && (st.st_mode & 0777) == 0600);
    CHECK(fstatat(top, "dst/a", &st, 0) == 0 && (st.st_mode & 0777) == 0700);
    char target[64] = "";
    CHECK(readlinkat(top, "dst/a/l", target, sizeof(target) - 1) > 0);
    CHECK(strcmp(target, "/etc/shadow") == 0);
    CHECK(!exists_at(top, "dst/fifo"));
    errno = 0;
    CHECK(dir_fd_copy_tree(top, "src", top, "dst", 0700, 0600) < 0 && errno == EEXIST);
}

static void test_others_may_replace(int top)
{
    static const struct {
        mode_t mode;
        bool replace;
    } cases[] = {{0755, false},  {0700, false}, {0775, true},  {0777, true},
                 {01777, false}, {0757, true},  {01775, false}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char name[32];
        snprintf(name, sizeof(name), "m%zu", i);
        CHECK(mkdirat(top, name, 0700) == 0);
        CHECK(fchmodat(top, name, cases[i].mode, 0) == 0);
        int fd = dir_fd_open(top, name);
        CHECK(fd >= 0);
        CHECK(dir_fd_others_may_replace(fd) == cases[i].replace);
        close(fd);
    }
}

static void test_make(int top)
{
    int fd = dir_fd_make(top, "made", 0700);
    CHECK(fd >= 0);
    close(fd);
    errno = 0;
    CHECK(dir_fd_make(top, "made", 0700) < 0 && errno == EEXIST);
}

int main(void)
{
    char dir[] = "/tmp/calltrace-unit-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    int top = open_top(dir);
    CHECK(top >= 0);
    test_create_never_follows(top);
    test_remove_tree_keeps_what_links_point_to(top);
    test_copy_tree(top);
    test_others_may_replace(top);
    test_make(top);
    close(top);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    return unit_finish("dir_fd");
}
