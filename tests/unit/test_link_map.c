/* link_map_read against structures laid out as <link.h> has them, in this process's own
 * memory, read back through /proc/self/mem as calltrace reads a program's: the list in order,
 * the state, names, the second namespace of an r_debug_extended, and a cycle bounded. The real
 * glibc layout is checked too: this process's own r_debug, found through DT_DEBUG (the name
 * _r_debug would give this executable's copy-relocated copy, not the dynamic linker's). */
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "symbols/link_map.h"
#include "unit.h"

struct fake_rdebug {
    int32_t version;
    uint64_t map;
    uint64_t brk;
    int32_t state;
    uint64_t ldbase;
    uint64_t next;
};

struct fake_map {
    uint64_t addr, name, ld, next, prev;
};

static void test_fake(int fd)
{
    static struct fake_map maps[3], other[1];
    static struct fake_rdebug rd, rd2;
    static const char *names[] = {"", "/lib/libone.so.1", "/usr/lib/libtwo.so"};
    for (int i = 0; i < 3; i++) {
        maps[i].addr = 0x1000 * (i + 1);
        maps[i].name = (uint64_t)(uintptr_t)names[i];
        maps[i].next = i < 2 ? (uint64_t)(uintptr_t)&maps[i + 1] : 0;
    }
    other[0] = (struct fake_map){0x9000, (uint64_t)(uintptr_t) "/ns2/libthree.so", 0, 0, 0};
    rd = (struct fake_rdebug){2, (uint64_t)(uintptr_t)maps, 0, LINK_MAP_CONSISTENT,
                              0, (uint64_t)(uintptr_t)&rd2};
    rd2 = (struct fake_rdebug){2, (uint64_t)(uintptr_t)other, 0, LINK_MAP_CONSISTENT, 0, 0};

    struct link_map_list list;
    CHECK(link_map_read(fd, (uint64_t)(uintptr_t)&rd, &list) == 0);
    CHECK_EQ_U64(list.count, 4);
    CHECK_EQ_U64(list.state, LINK_MAP_CONSISTENT);
    if (list.count == 4) {
        CHECK(strcmp(list.objects[0].path, "") == 0);
        CHECK(strcmp(list.objects[1].path, "/lib/libone.so.1") == 0);
        CHECK_EQ_U64(list.objects[2].bias, 0x3000);
        CHECK_EQ_U64(list.objects[2].map, (uintptr_t)&maps[2]);
        CHECK(strcmp(list.objects[3].path, "/ns2/libthree.so") == 0);
    }
    link_map_free(&list);

    /* being changed: no list */
    rd.state = LINK_MAP_ADD;
    CHECK(link_map_read(fd, (uint64_t)(uintptr_t)&rd, &list) == 0);
    CHECK_EQ_U64(list.state, LINK_MAP_ADD);
    CHECK_EQ_U64(list.count, 0);
    link_map_free(&list);

    /* a cycle ends at the bound instead of looping */
    rd = (struct fake_rdebug){1, (uint64_t)(uintptr_t)maps, 0, LINK_MAP_CONSISTENT, 0, 0};
    maps[2].next = (uint64_t)(uintptr_t)&maps[0];
    CHECK(link_map_read(fd, (uint64_t)(uintptr_t)&rd, &list) == 0);
    CHECK(list.count > 3 && list.count <= 4096);
    link_map_free(&list);

    /* unreadable memory */
    CHECK(link_map_read(fd, 8, &list) < 0);
    link_map_free(&list);
}

static void test_real(int fd)
{
    uint64_t r_debug = 0;
    for (const ElfW(Dyn) *d = _DYNAMIC; d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_DEBUG)
            r_debug = d->d_un.d_ptr;
    CHECK(r_debug != 0);
    struct link_map_list list;
    CHECK(link_map_read(fd, r_debug, &list) == 0);
    int libc = 0;
    for (size_t i = 0; i < list.count; i++)
        libc += strstr(list.objects[i].path, "/libc.so") != NULL;
    CHECK(libc == 1);
    link_map_free(&list);
}

int main(void)
{
    int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    if (fd >= 0) {
        test_fake(fd);
        test_real(fd);
        close(fd);
    }
    return unit_finish("test_link_map");
}
