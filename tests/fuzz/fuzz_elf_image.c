/* Fuzz target: the ELF and symbol loader on arbitrary files (the program to trace, its script
 * interpreter, later its libraries). A corrupt image must be refused with one message or give
 * an image whose functions are sorted, distinct, named, and inside an executable segment. */
#include <string.h>

#include "fuzz.h"
#include "symbols/elf_image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_silence_stderr();
    return 0;
}

static bool in_segment(const struct elf_image *image, const struct func_symbol *f)
{
    for (size_t i = 0; i < image->nsegments; i++) {
        const struct exec_segment *s = &image->segments[i];
        if (f->addr >= s->vaddr && f->addr + f->size <= s->vaddr + s->memsz)
            return true;
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* libelf may convert a foreign-endian image in place: give it a copy it may write. */
    void *copy = malloc(size ? size : 1);
    FUZZ_ASSERT(copy);
    memcpy(copy, data, size);
    struct elf_image image;
    if (elf_image_load_memory(&image, "fuzz", copy, size) == 0) {
        FUZZ_ASSERT(image.nsegments > 0);
        for (size_t i = 0; i < image.nfuncs; i++) {
            const struct func_symbol *f = &image.funcs[i];
            FUZZ_ASSERT(f->name && f->size > 0 && in_segment(&image, f));
            FUZZ_ASSERT(i == 0 || image.funcs[i - 1].addr < f->addr);
        }
        elf_image_free(&image);
    }
    free(copy);
    return 0;
}
