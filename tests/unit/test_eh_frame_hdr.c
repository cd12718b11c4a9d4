/* symbols/eh_frame_hdr.c, on this test's own executable: the unwind table has a start for every
 * C function of it (gcc writes unwind information for each), sorted; the ranges keep the
 * symbols' indexes and tile each executable segment exactly. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/eh_frame_hdr.h"
#include "symbols/elf_image.h"
#include "unit.h"

static bool has(const uint64_t *v, long n, uint64_t x)
{
    for (long i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

int main(void)
{
    struct elf_image image;
    CHECK(elf_image_load(&image, "/proc/self/exe") == 0);
    uint64_t *starts;
    long n = eh_frame_starts(image.path, &starts);
    CHECK(n > 10);
    for (long i = 1; i < n; i++)
        CHECK(starts[i - 1] < starts[i]);
    size_t checked = 0;
    for (size_t i = 0; i < image.nfuncs; i++) {
        if (image.funcs[i].skipped || !image.funcs[i].size)
            continue; /* the C runtime's start-up code has no unwind information */
        CHECK(has(starts, n, image.funcs[i].addr));
        checked++;
    }
    CHECK(checked > 100);
    free(starts);

    size_t nranges = 0;
    struct func_symbol *f = eh_frame_ranges(&image, &nranges);
    CHECK(f != NULL);
    CHECK(nranges > image.nfuncs);
    for (size_t i = 0; i < image.nfuncs; i++)
        CHECK(f[i].addr == image.funcs[i].addr && f[i].name == image.funcs[i].name);
    for (size_t g = 0; g < image.nsegments; g++) {
        const struct exec_segment *seg = &image.segments[g];
        uint64_t covered = 0;
        for (size_t i = image.nfuncs; i < nranges; i++)
            if (f[i].addr >= seg->vaddr && f[i].addr < seg->vaddr + seg->memsz) {
                CHECK(f[i].addr + f[i].size <= seg->vaddr + seg->memsz);
                covered += f[i].size;
            }
        CHECK(covered == seg->memsz);
    }
    free(f);

    CHECK(eh_frame_starts("/nonexistent", &starts) == 0);
    elf_image_free(&image);
    return unit_finish("eh_frame_hdr");
}
