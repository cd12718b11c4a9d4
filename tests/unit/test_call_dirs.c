/* Folder names of the call folders (output/call_dirs.c): a safe name is kept, any other becomes
 * a safe name of at most 100 bytes that two different names never share. */
#include <stdbool.h>
#include <string.h>

#include "output/call_dirs.h"
#include "unit.h"

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
