#include "symbols/proc_maps.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int maps_read(pid_t pid, struct mapping_list *list)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    memset(list, 0, sizeof(*list));
    if (!f)
        return -1;
    size_t cap = 0;
    char line[4096 + 128];
    while (fgets(line, sizeof(line), f)) {
        unsigned long long start, end;
        char perms[8] = "";
        int name_at = 0;
        if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &start, &end, perms, &name_at) < 3)
            continue;
        if (list->count == cap) {
            cap = cap ? cap * 2 : 64;
            struct mapping *m = reallocarray(list->maps, cap, sizeof(*m));
            if (!m) {
                fclose(f);
                maps_free(list);
                return -1;
            }
            list->maps = m;
        }
        struct mapping *m = &list->maps[list->count++];
        m->start = start;
        m->end = end;
        m->exec = perms[2] == 'x';
        m->write = perms[1] == 'w';
        m->is_stack = name_at && strncmp(line + name_at, "[stack]", 7) == 0;
    }
    fclose(f);
    return 0;
}

void maps_free(struct mapping_list *list)
{
    free(list->maps);
    memset(list, 0, sizeof(*list));
}

const struct mapping *maps_find(const struct mapping_list *list, uint64_t addr)
{
    for (size_t i = 0; i < list->count; i++)
        if (addr >= list->maps[i].start && addr < list->maps[i].end)
            return &list->maps[i];
    return NULL;
}

static bool range_free(const struct mapping_list *list, uint64_t start, uint64_t size)
{
    for (size_t i = 0; i < list->count; i++)
        if (start < list->maps[i].end && list->maps[i].start < start + size)
            return false;
    return true;
}

/* Candidates sit just below existing mappings (never below [stack], whose growth room that is),
 * and only as a last resort far above one: right above the executable is where brk() grows the
 * heap, and taking that room would change how the program's malloc behaves. */
uint64_t maps_find_gap(const struct mapping_list *list, uint64_t near, uint64_t size,
                       uint64_t reach)
{
    const uint64_t guard = 64ull << 10;
    const uint64_t far_above = 256ull << 20;
    const uint64_t low_limit = 1ull << 20;
    uint64_t best = 0, best_dist = UINT64_MAX;
    for (int pass = 0; pass < 2 && !best; pass++) {
        for (size_t i = 0; i < list->count; i++) {
            const struct mapping *m = &list->maps[i];
            uint64_t at = 0;
            if (pass == 0 && !m->is_stack && m->start > size + guard + low_limit)
                at = (m->start - size - guard) & ~0xfffull;
            if (pass == 1 && !m->is_stack)
                at = (m->end + far_above + 0xfff) & ~0xfffull;
            if (!at || at < low_limit || at + size > 0x7ffffffff000ull)
                continue;
            uint64_t dist = at > near ? at + size - near : near - at;
            if (dist > reach || dist >= best_dist)
                continue;
            if (range_free(list, at - guard, size + 2 * guard)) {
                best = at;
                best_dist = dist;
            }
        }
    }
    return best;
}

uint64_t auxv_entry(pid_t pid)
{
    return auxv_value(pid, AT_ENTRY);
}

uint64_t auxv_value(pid_t pid, uint64_t type)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    Elf64_auxv_t aux[64];
    ssize_t n = read(fd, aux, sizeof(aux));
    close(fd);
    for (ssize_t i = 0; n > 0 && i < n / (ssize_t)sizeof(aux[0]); i++)
        if (aux[i].a_type == type)
            return aux[i].a_un.a_val;
    return 0;
}

int maps_path_at(pid_t pid, uint64_t addr, char *path, size_t len)
{
    char name[64], line[4096 + 128];
    snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(name, "re");
    if (!f)
        return -1;
    int rc = -1;
    while (rc < 0 && fgets(line, sizeof(line), f)) {
        unsigned long long start, end;
        int name_at = 0;
        if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &start, &end, &name_at) < 2 ||
            addr < start || addr >= end || !name_at || line[name_at] != '/')
            continue;
        line[strcspn(line, "\n")] = '\0';
        if (strlen(line + name_at) < len) {
            strcpy(path, line + name_at);
            rc = 0;
        }
    }
    fclose(f);
    return rc;
}
