/* Fuzz target: the DWARF signature and type reader (symbols/dwarf_sig.c) on arbitrary images,
 * and what is built on its types: the SysV classification, the capture plan and the value
 * formatter. Whatever the bytes, opening fails cleanly or every function's signature gives a
 * plan and prints from any bytes, without reading out of bounds or looping on cyclic types. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "output/value_format.h"
#include "symbols/abi_sysv.h"
#include "symbols/capture_plan.h"
#include "symbols/dwarf_sig.h"
#include "symbols/elf_image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_silence_stderr();
    return 0;
}

/* Prints a value of type t from the input's own bytes (short ones too). */
static void print_value(const struct ctype *t, const uint8_t *data, size_t size)
{
    static const uint8_t zeros[64];
    struct text out = {0};
    value_format(&out, t, size ? data : zeros, size ? size : sizeof(zeros), NULL);
    FUZZ_ASSERT(!out.s || strlen(out.s) == out.len);
    text_free(&out);
}

static void check_function(struct dwarf_sigs *d, uint64_t addr, const uint8_t *data, size_t size)
{
    const struct func_sig *sig = dwarf_sigs_find(d, addr);
    if (!sig)
        return;
    FUZZ_ASSERT(dwarf_sigs_find(d, addr) == sig); /* cached */
    struct capture_options o = {.args = true, .retval = true, .string_max = 64};
    struct capture_plan *plan = capture_plan_build(&o, sig->name ? sig->name : "f", sig);
    FUZZ_ASSERT(plan);
    FUZZ_ASSERT(plan->stack_bytes <= CAPTURE_STACK_MAX);
    capture_plan_free(plan);
    for (size_t i = 0; i < sig->nparams; i++) {
        FUZZ_ASSERT(!sig->params[i].type || sig->params[i].type->name);
        print_value(sig->params[i].type, data, size);
    }
    print_value(sig->ret, data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz-dwarf", MFD_CLOEXEC);
    FUZZ_ASSERT(fd >= 0);
    FUZZ_ASSERT(write(fd, data, size) == (ssize_t)size);
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    struct dwarf_sigs *d = dwarf_sigs_open(path);
    if (d) {
        /* the functions as the tracer sees them: from the ELF symbols */
        void *copy = malloc(size ? size : 1);
        FUZZ_ASSERT(copy);
        memcpy(copy, data, size);
        struct elf_image image;
        if (elf_image_load_memory(&image, "fuzz", copy, size) == 0) {
            for (size_t i = 0; i < image.nfuncs && i < 64; i++)
                check_function(d, image.funcs[i].addr, data, size);
            elf_image_free(&image);
        }
        free(copy);
        uint64_t off;
        dwarf_sigs_symbol(d, 0, &off);
        dwarf_sigs_symbol(d, UINT64_MAX, &off);
        dwarf_sigs_close(d);
    }
    close(fd);
    return 0;
}
