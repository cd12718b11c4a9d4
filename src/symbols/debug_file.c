#include "symbols/debug_file.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util/log.h"

#define DEBUG_ROOT "/usr/lib/debug"

int elf_has_section_type(Elf *elf, unsigned type)
{
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) && shdr.sh_type == type && shdr.sh_size)
            return 1;
    }
    return 0;
}

/* Is the file at candidate a debug file with this build ID? */
static bool build_id_matches(const char *candidate, const void *id, size_t len)
{
    int fd = open(candidate, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    const void *other = NULL;
    ssize_t olen = elf ? dwelf_elf_gnu_build_id(elf, &other) : -1;
    bool same = olen == (ssize_t)len && memcmp(other, id, len) == 0;
    if (elf)
        elf_end(elf);
    close(fd);
    return same;
}

static char *by_build_id(Elf *elf)
{
    const void *id = NULL;
    ssize_t len = dwelf_elf_gnu_build_id(elf, &id);
    if (len < 2)
        return NULL;
    const unsigned char *b = id;
    char hex[2 * 64 + 1];
    if ((size_t)len > 64)
        return NULL;
    for (ssize_t i = 0; i < len; i++)
        snprintf(hex + 2 * i, 3, "%02x", b[i]);
    char *candidate = NULL;
    if (asprintf(&candidate, DEBUG_ROOT "/.build-id/%.2s/%s.debug", hex, hex + 2) < 0)
        return NULL;
    if (build_id_matches(candidate, id, (size_t)len))
        return candidate;
    free(candidate);
    return NULL;
}

/* The CRC-32 that .gnu_debuglink records, the same as zlib's. */
static bool crc_matches(int fd, GElf_Word want)
{
    unsigned char buf[65536];
    uLong crc = crc32(0, Z_NULL, 0);
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        crc = crc32(crc, buf, (uInt)n);
    return n == 0 && (GElf_Word)crc == want;
}

/* Is candidate the debug file we want: not path itself, and with the recorded CRC? */
static bool debuglink_matches(const char *candidate, const struct stat *self, GElf_Word crc)
{
    int fd = open(candidate, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && !(st.st_dev == self->st_dev && st.st_ino == self->st_ino);
    if (ok && !crc_matches(fd, crc)) {
        dbg(DBG_SYMBOLS, 1, "%s: not the debug file wanted (CRC differs): ignored", candidate);
        ok = false;
    }
    close(fd);
    return ok;
}

static char *by_debuglink(Elf *elf, const char *path)
{
    GElf_Word crc;
    const char *name = dwelf_elf_gnu_debuglink(elf, &crc);
    struct stat self;
    if (!name || !*name || strchr(name, '/') || stat(path, &self) < 0)
        return NULL;
    char *real = realpath(path, NULL);
    if (!real)
        return NULL;
    const char *dir = dirname(real);
    const char *const formats[] = {"%s/%s", "%s/.debug/%s", DEBUG_ROOT "%s/%s"};
    char *found = NULL;
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]) && !found; i++) {
        char *candidate = NULL;
        if (asprintf(&candidate, formats[i], dir, name) < 0)
            break;
        if (debuglink_matches(candidate, &self, crc))
            found = candidate;
        else
            free(candidate);
    }
    free(real);
    return found;
}

char *debug_file_find(Elf *elf, const char *path)
{
    char *found = by_build_id(elf);
    if (!found)
        found = by_debuglink(elf, path);
    if (found)
        dbg(DBG_SYMBOLS, 1, "%s: debug file %s", path, found);
    return found;
}
