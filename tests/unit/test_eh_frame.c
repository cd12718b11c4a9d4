/* symbols/eh_frame.c on .eh_frame sections built here (CIE and FDE layouts, encodings, damaged
 * records), and with symbols/unwind_funcs.c on this test's own executable, whose symbol table
 * is the independent answer: each FDE at a function symbol has the symbol's size, and every FDE
 * kept as a function is a function's start, never a .cold part's. */
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/eh_frame.h"
#include "symbols/elf_image.h"
#include "symbols/unwind_funcs.h"
#include "unit.h"

#define VADDR 0x2000 /* where the built sections are "loaded" */
#define ENC_PCREL_SDATA4 0x1b
#define ENC_ABSPTR 0x00

struct section {
    uint8_t b[512];
    size_t n;
};

static void put(struct section *s, uint64_t v, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        s->b[s->n++] = (uint8_t)(v >> (8 * i));
}

/* A CIE "zR" (or "zRS") with the FDE encoding enc; returns its offset. */
static size_t add_cie(struct section *s, uint8_t enc, bool signal)
{
    size_t at = s->n;
    put(s, 0, 4); /* length, patched below */
    put(s, 0, 4); /* CIE id */
    put(s, 1, 1); /* version */
    const char *aug = signal ? "zRS" : "zR";
    memcpy(s->b + s->n, aug, strlen(aug) + 1);
    s->n += strlen(aug) + 1;
    put(s, 1, 1);    /* code alignment */
    put(s, 0x78, 1); /* data alignment -8 */
    put(s, 16, 1);   /* return address column */
    put(s, 1, 1);    /* augmentation data length */
    put(s, enc, 1);
    const uint8_t insns[] = {0x0c, 0x07, 0x08, 0x90, 0x01}; /* def_cfa rsp+8, ra at cfa-8 */
    memcpy(s->b + s->n, insns, sizeof(insns));
    s->n += sizeof(insns);
    while ((s->n - at) % 4)
        put(s, 0, 1); /* DW_CFA_nop */
    uint32_t len = (uint32_t)(s->n - at - 4);
    memcpy(s->b + at, &len, 4);
    return at;
}

static void add_fde(struct section *s, size_t cie, uint8_t enc, uint64_t start, uint64_t size)
{
    size_t at = s->n;
    put(s, 0, 4);
    put(s, (uint32_t)(s->n - cie), 4); /* back to the CIE, from this field */
    if (enc == ENC_PCREL_SDATA4) {
        put(s, (uint32_t)(int32_t)(start - (VADDR + s->n)), 4);
        put(s, size, 4);
    } else {
        put(s, start, 8);
        put(s, size, 8);
    }
    put(s, 0, 1); /* augmentation data length */
    while ((s->n - at) % 4)
        put(s, 0, 1);
    uint32_t len = (uint32_t)(s->n - at - 4);
    memcpy(s->b + at, &len, 4);
}

static long parse(const struct section *s, struct fde_extent **out)
{
    return eh_frame_fdes(s->b, s->n, VADDR, out);
}

static void test_sorted_and_deduplicated(void)
{
    struct section s = {0};
    size_t cie = add_cie(&s, ENC_PCREL_SDATA4, false);
    add_fde(&s, cie, ENC_PCREL_SDATA4, 0x1200, 0x40);
    add_fde(&s, cie, ENC_PCREL_SDATA4, 0x1100, 0x30);
    add_fde(&s, cie, ENC_PCREL_SDATA4, 0x1100, 0x10); /* same start: the widest stays */
    add_fde(&s, cie, ENC_PCREL_SDATA4, 0x1300, 0);    /* empty: left out */
    put(&s, 0, 4);                                    /* the terminator */
    add_fde(&s, cie, ENC_PCREL_SDATA4, 0x1400, 0x10); /* after it: never read */
    struct fde_extent *f;
    CHECK_EQ_U64(parse(&s, &f), 2);
    CHECK_EQ_U64(f[0].start, 0x1100);
    CHECK_EQ_U64(f[0].size, 0x30);
    CHECK_EQ_U64(f[1].start, 0x1200);
    CHECK_EQ_U64(f[1].size, 0x40);
    CHECK(!f[0].signal_frame);
    free(f);
}

static void test_encodings_and_signal_frames(void)
{
    struct section s = {0};
    size_t abs_cie = add_cie(&s, ENC_ABSPTR, false);
    size_t sig_cie = add_cie(&s, ENC_PCREL_SDATA4, true);
    add_fde(&s, abs_cie, ENC_ABSPTR, 0x401000, 0x22);
    add_fde(&s, sig_cie, ENC_PCREL_SDATA4, 0x1000, 0x8);
    struct fde_extent *f;
    CHECK_EQ_U64(parse(&s, &f), 2);
    CHECK_EQ_U64(f[0].start, 0x1000);
    CHECK(f[0].signal_frame);
    CHECK_EQ_U64(f[1].start, 0x401000);
    CHECK_EQ_U64(f[1].size, 0x22);
    CHECK(!f[1].signal_frame);
    free(f);
}

static void test_damaged(void)
{
    struct section s = {0};
    size_t cie = add_cie(&s, ENC_PCREL_SDATA4, false);
    add_fde(&s, cie, ENC_PCREL_SDATA4, 0x1100, 0x30);
    size_t second = s.n;
    add_fde(&s, cie, ENC_PCREL_SDATA4, 0x1200, 0x30);
    struct fde_extent *f;
    struct section cut = s;
    cut.n = second + 10; /* the second record ends past the section */
    CHECK_EQ_U64(parse(&cut, &f), 1);
    CHECK_EQ_U64(f[0].start, 0x1100);
    free(f);
    struct section bad_pointer = s; /* the second FDE's CIE pointer leads before the section */
    uint32_t far = 0x10000;
    memcpy(bad_pointer.b + second + 4, &far, 4);
    CHECK_EQ_U64(parse(&bad_pointer, &f), 1);
    free(f);
    struct section to_fde = s; /* ... or to an FDE */
    uint32_t to_first_fde = (uint32_t)(second + 4 - (cie + 24));
    memcpy(to_fde.b + second + 4, &to_first_fde, 4);
    CHECK_EQ_U64(parse(&to_fde, &f), 1);
    free(f);
    struct section huge = s; /* a length beyond the section: nothing after it is read */
    uint32_t len = 0xfffffff0;
    memcpy(huge.b + second, &len, 4);
    CHECK_EQ_U64(parse(&huge, &f), 1);
    free(f);
    struct section short_record = s; /* shorter than its own CIE pointer: the walk ends */
    uint32_t two = 2;
    memcpy(short_record.b + second, &two, 4);
    CHECK_EQ_U64(parse(&short_record, &f), 1);
    free(f);
    CHECK_EQ_U64(eh_frame_fdes(s.b, 3, VADDR, &f), 0);
    CHECK(f == NULL);
}

/* This executable's .eh_frame, and its function symbols. */
struct own_file {
    int fd;
    Elf *elf;
    struct fde_extent *fdes;
    long nfdes;
};

static bool open_own(struct own_file *own)
{
    own->fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    elf_version(EV_CURRENT);
    own->elf = own->fd >= 0 ? elf_begin(own->fd, ELF_C_READ_MMAP, NULL) : NULL;
    size_t shstrndx;
    if (!own->elf || elf_getshdrstrndx(own->elf, &shstrndx) < 0)
        return false;
    for (Elf_Scn *scn = elf_nextscn(own->elf, NULL); scn; scn = elf_nextscn(own->elf, scn)) {
        GElf_Shdr shdr;
        gelf_getshdr(scn, &shdr);
        if (strcmp(elf_strptr(own->elf, shstrndx, shdr.sh_name), ".eh_frame") != 0)
            continue;
        Elf_Data *data = elf_rawdata(scn, NULL);
        own->nfdes = eh_frame_fdes(data->d_buf, data->d_size, shdr.sh_addr, &own->fdes);
        return own->nfdes > 0;
    }
    return false;
}

/* The function symbol at addr: its name, and its size in *size; NULL when there is none. */
static const char *function_at(Elf *elf, uint64_t addr, uint64_t *size)
{
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        for (size_t i = 0; i < data->d_size / shdr.sh_entsize; i++) {
            GElf_Sym sym;
            gelf_getsym(data, (int)i, &sym);
            if (sym.st_value == addr && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_size) {
                *size = sym.st_size;
                return elf_strptr(elf, shdr.sh_link, sym.st_name);
            }
        }
    }
    return NULL;
}

static void test_own_executable(void)
{
    struct own_file own = {0};
    CHECK(open_own(&own));
    size_t matched = 0;
    for (long i = 0; i < own.nfdes; i++) {
        uint64_t size;
        if (function_at(own.elf, own.fdes[i].start, &size)) {
            CHECK_EQ_U64(own.fdes[i].size, size);
            matched++;
        }
    }
    CHECK(matched > 100);
    struct elf_image image;
    CHECK(elf_image_load_headers(&image, "/proc/self/exe") == 0);
    struct unwind_func *funcs;
    struct unwind_census census;
    long n = unwind_funcs_read(own.elf, &image, NULL, 0, &funcs, &census);
    CHECK(n > 100 && (size_t)n <= matched);
    CHECK_EQ_U64(census.fdes, own.nfdes);
    for (long i = 0; i < n; i++) {
        uint64_t size = 0;
        const char *name = function_at(own.elf, funcs[i].addr, &size);
        CHECK(name && !strstr(name, ".cold") && size == funcs[i].size);
        if (!name || strstr(name, ".cold"))
            fprintf(stderr, "kept as a function: %#llx %s\n", (unsigned long long)funcs[i].addr,
                    name ? name : "(no symbol)");
    }
    free(funcs);
    elf_image_free(&image);
    free(own.fdes);
    elf_end(own.elf);
    close(own.fd);
}

int main(void)
{
    test_sorted_and_deduplicated();
    test_encodings_and_signal_frames();
    test_damaged();
    test_own_executable();
    return unit_finish("test_eh_frame");
}
