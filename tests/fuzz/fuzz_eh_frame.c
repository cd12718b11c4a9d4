/* Fuzz target: the .eh_frame parser (symbols/eh_frame.c) on arbitrary sections, as the file
 * being traced may hold. It must return FDEs sorted by start, distinct, none empty, none
 * wrapping around the address space, and never read outside the section. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "symbols/eh_frame.h"

#define VADDR 0x1000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly size bytes: ASan sees any read past it */
    uint8_t *copy = malloc(size ? size : 1);
    FUZZ_ASSERT(copy);
    memcpy(copy, data, size);
    struct fde_extent *fdes;
    long n = eh_frame_fdes(copy, size, VADDR, &fdes);
    FUZZ_ASSERT(n >= 0);
    for (long i = 0; i < n; i++) {
        FUZZ_ASSERT(fdes[i].size > 0 && fdes[i].start + fdes[i].size > fdes[i].start);
        FUZZ_ASSERT(i == 0 || fdes[i - 1].start < fdes[i].start);
    }
    free(fdes);
    free(copy);
    return 0;
}
