/* Folder names of the call folders (output/call_dirs.c): a safe name is kept, any other becomes
 * a safe name of at most 100 bytes that two different names never share. */
#include <stdbool.h>
#include <string.h>

#include "output/call_dirs.h"
#include "output/call_values.h"
#include "unit.h"

/* Two parameters whose names make the same file name (DWARF may repeat a name, or two hostile
 * names clean up alike) get two files; a parameter without bytes takes no name. */
static void test_arg_files_distinct(void)
{
    uint8_t byte = 1;
    struct arg_value args[] = {{.name = "buf", .bytes = &byte, .nbytes = 1},
                               {.name = "buf", .bytes = &byte, .nbytes = 1},
                               {.name = "n"},
                               {.name = "n", .bytes = &byte, .nbytes = 1},
                               {.name = "a/b", .bytes = &byte, .nbytes = 1},
                               {.name = "a/b", .bytes = &byte, .nbytes = 1}};
    struct call_values cv = {.args = args, .nargs = sizeof(args) / sizeof(args[0])};
    char names[6][160];
    for (size_t i = 0; i < cv.nargs; i++)
        call_dirs_arg_file_name(&cv, i, names[i], sizeof(names[i]));
    CHECK(strcmp(names[0], "arg_buf.bin") == 0);
    CHECK(strcmp(names[1], "arg_buf~2.bin") == 0);
    CHECK(strcmp(names[3], "arg_n.bin") == 0);
    CHECK(strncmp(names[4], "arg_a_b~", 8) == 0 && strcmp(names[4], names[5]) != 0);
    for (size_t i = 0; i < cv.nargs; i++)
        CHECK(!strchr(names[i], '/'));
}

static bool safe(const char *s)
{
    if (!*s || strlen(s) > 100 || s[0] == '.')
        return false;
    for (; *s; s++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.+~", *s))
            return false;
    return true;
}

int main(void)
{
    test_arg_files_distinct();
    char a[128], b[128];
    call_dirs_file_name("square", a, sizeof(a));
    CHECK(strcmp(a, "square") == 0);
    call_dirs_file_name("foo.isra.0", a, sizeof(a));
    CHECK(strcmp(a, "foo.isra.0") == 0);
    static const char *const hostile[] = {
        "Vec::operator+(Vec const&) const",
        "a/b",
        "..",
        ".hidden",
        "operator()",
        "",
        "std::vector<int, std::allocator<int> >::push_back(int const&)",
        "x~y",
        "a\nb",
        "p\x1b]0;title\x07", /* DWARF parameter names get the same rule (arg_NAME.bin) */
        "p\xc2\x9b"
        "2J"};
    for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
        call_dirs_file_name(hostile[i], a, sizeof(a));
        CHECK(safe(a));
        CHECK(strcmp(a, hostile[i]) != 0);
    }
    char longname[300];
    memset(longname, 'f', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    call_dirs_file_name(longname, a, sizeof(a));
    CHECK(safe(a));
    longname[0] = 'g'; /* cleaned up alike, told apart by the hash */
    call_dirs_file_name(longname, b, sizeof(b));
    CHECK(safe(b) && strcmp(a, b) != 0);
    call_dirs_file_name("a/b", a, sizeof(a));
    call_dirs_file_name("a:b", b, sizeof(b));
    CHECK(strcmp(a, b) != 0);
    return unit_finish("call_dirs");
}
