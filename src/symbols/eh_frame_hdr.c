#include "symbols/eh_frame_hdr.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ENC_PCREL_SDATA4 0x1b
#define ENC_UDATA4 0x03
#define ENC_DATAREL_SDATA4 0x3b
#define HDR_SIZE 12      /* the four encodings, eh_frame_ptr, fde_count */
#define MAX_FDES 1000000 /* a sanity bound on what the file claims */

static long read_table(const uint8_t *hdr, size_t len, uint64_t vaddr, uint64_t **starts)
{
    if (len < HDR_SIZE || hdr[0] != 1 || hdr[1] != ENC_PCREL_SDATA4 || hdr[2] != ENC_UDATA4 ||
        hdr[3] != ENC_DATAREL_SDATA4)
        return 0;
    uint32_t count;
    memcpy(&count, hdr + 8, 4);
    if (count > MAX_FDES || HDR_SIZE + (size_t)count * 8 > len)
        return 0;
    *starts = calloc(count ? count : 1, sizeof(**starts));
    if (!*starts)
        return -1;
    for (uint32_t i = 0; i < count; i++) {
        int32_t rel;
        memcpy(&rel, hdr + HDR_SIZE + (size_t)i * 8, 4);
        (*starts)[i] = vaddr + (int64_t)rel; /* datarel: from the table's own address */
    }
    return count;
}

static size_t add_range(struct func_symbol *f, size_t k, uint64_t start, uint64_t end)
{
    if (end > start)
        f[k++] = (struct func_symbol){.addr = start, .size = end - start, .name = (char *)""};
    return k;
}

struct func_symbol *eh_frame_ranges(const struct elf_image *image, size_t *n)
{
    uint64_t *starts;
    long nstarts = eh_frame_starts(image->path, &starts);
    struct func_symbol *f =
        nstarts > 0 ? calloc(image->nfuncs + (size_t)nstarts + image->nsegments, sizeof(*f)) : NULL;
    if (!f) {
        free(starts);
        return NULL;
    }
    if (image->nfuncs)
        memcpy(f, image->funcs, image->nfuncs * sizeof(*f));
    size_t k = image->nfuncs;
    for (size_t g = 0; g < image->nsegments; g++) {
        const struct exec_segment *seg = &image->segments[g];
        uint64_t end = seg->vaddr + seg->memsz, prev = seg->vaddr;
        for (long i = 0; i < nstarts; i++) {
            if (starts[i] < seg->vaddr || starts[i] >= end)
                continue;
            k = add_range(f, k, prev, starts[i]);
            prev = starts[i];
        }
        k = add_range(f, k, prev, end);
    }
    free(starts);
    *n = k;
    return f;
}

long eh_frame_starts(const char *path, uint64_t **starts)
{
    *starts = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    size_t nphdr = 0;
    long n = 0;
    if (elf && elf_getphdrnum(elf, &nphdr) == 0) {
        for (size_t i = 0; i < nphdr; i++) {
            GElf_Phdr ph;
            if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
                continue;
            size_t raw_len;
            const uint8_t *raw = (const uint8_t *)elf_rawfile(elf, &raw_len);
            if (raw && ph.p_offset <= raw_len && ph.p_filesz <= raw_len - ph.p_offset)
                n = read_table(raw + ph.p_offset, ph.p_filesz, ph.p_vaddr, starts);
            break;
        }
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return n;
}
