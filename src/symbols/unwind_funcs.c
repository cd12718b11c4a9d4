#include "symbols/unwind_funcs.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/insn.h"
#include "symbols/eh_frame.h"

/* x86_64's DWARF numbering, and the state a call leaves: CFA = rsp + 8, return address at
 * CFA - 8. */
#define DWARF_REG_RSP 7
#define CALL_CFA_OFFSET 8
#define CALL_RA_OFFSET (-8)

#define OP_LEA 0x8d
#define MODRM_RIP_MASK 0xc7 /* mod and rm of a ModRM byte */
#define MODRM_RIP 0x05      /* mod 00, rm 101: [rip + disp32] */
#define LEA_RIP_LEN 6       /* 8d, ModRM, disp32 (a REX prefix comes before: same end) */

enum evidence {
    CALLED = 1,    /* a call rel32 lands on it */
    JUMPED = 2,    /* a rel32 jump from other code lands on it */
    ADDRESSED = 4, /* its address is computed or stored somewhere */
};

struct span {
    uint64_t lo, hi;
};

#define MAX_RUNTIME_SPANS 8

/* Where the file's bytes for a segment or section are: NULL when they are not all in the file. */
static const uint8_t *file_bytes(Elf *elf, uint64_t offset, uint64_t size)
{
    size_t raw_len;
    const uint8_t *raw = (const uint8_t *)elf_rawfile(elf, &raw_len);
    if (!raw || offset > raw_len || size > raw_len - offset)
        return NULL;
    return raw + offset;
}

/* The linker's and the C runtime's code that has FDEs: the PLT sections, .init and .fini. */
static size_t runtime_spans(Elf *elf, struct span *out)
{
    size_t shstrndx, n = 0;
    if (elf_getshdrstrndx(elf, &shstrndx) < 0)
        return 0;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn && n < MAX_RUNTIME_SPANS;
         scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        const char *name =
            gelf_getshdr(scn, &shdr) ? elf_strptr(elf, shstrndx, shdr.sh_name) : NULL;
        if (name && (strncmp(name, ".plt", 4) == 0 || strcmp(name, ".init") == 0 ||
                     strcmp(name, ".fini") == 0))
            out[n++] = (struct span){shdr.sh_addr, shdr.sh_addr + shdr.sh_size};
    }
    return n;
}

static bool in_spans(const struct span *v, size_t n, uint64_t addr)
{
    for (size_t i = 0; i < n; i++)
        if (addr >= v[i].lo && addr < v[i].hi)
            return true;
    return false;
}

/* .eh_frame's FDEs: found by its section header (a file without section headers has none). */
static long read_fdes(Elf *elf, struct fde_extent **fdes)
{
    *fdes = NULL;
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) < 0)
        return 0;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        const char *name =
            gelf_getshdr(scn, &shdr) ? elf_strptr(elf, shstrndx, shdr.sh_name) : NULL;
        if (!name || strcmp(name, ".eh_frame") != 0 || shdr.sh_type != SHT_PROGBITS)
            continue;
        const uint8_t *data = file_bytes(elf, shdr.sh_offset, shdr.sh_size);
        return data ? eh_frame_fdes(data, shdr.sh_size, shdr.sh_addr, fdes) : 0;
    }
    return 0;
}

/* Is the unwind state at addr the one a call leaves (CFA = rsp + 8, return address at
 * CFA - 8)? Code entered in the middle of a frame has a larger CFA offset, or another rule. */
static bool entered_by_call(Dwarf_CFI *cfi, uint64_t addr)
{
    Dwarf_Frame *frame;
    if (!cfi || dwarf_cfi_addrframe(cfi, addr, &frame) != 0)
        return false;
    Dwarf_Op *cfa, ra_mem[3], *ra;
    size_t ncfa, nra;
    int ra_reg = dwarf_frame_info(frame, NULL, NULL, NULL);
    /* libdw gives "CFA = reg + offset" as one DW_OP_bregx, "saved at CFA + N" as
     * DW_OP_call_frame_cfa, DW_OP_plus_uconst N */
    bool call_state = ra_reg >= 0 && dwarf_frame_cfa(frame, &cfa, &ncfa) == 0 && ncfa == 1 &&
                      cfa[0].atom == DW_OP_bregx && cfa[0].number == DWARF_REG_RSP &&
                      cfa[0].number2 == CALL_CFA_OFFSET &&
                      dwarf_frame_register(frame, ra_reg, ra_mem, &ra, &nra) == 0 && nra == 2 &&
                      ra[0].atom == DW_OP_call_frame_cfa && ra[1].atom == DW_OP_plus_uconst &&
                      (int64_t)ra[1].number == CALL_RA_OFFSET;
    free(frame);
    return call_state;
}

/* The candidates' starts and what is known of each. */
struct candidates {
    const struct fde_extent **fde; /* sorted by start */
    uint8_t *evidence;             /* enum evidence bits */
    size_t n;
    uint64_t lo, hi;                        /* the lowest start, the highest end */
    struct span runtime[MAX_RUNTIME_SPANS]; /* runtime_spans() */
    size_t nruntime;
};

static long candidate_at(const struct candidates *c, uint64_t addr)
{
    if (addr < c->lo || addr >= c->hi)
        return -1;
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->fde[mid]->start < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->n && c->fde[lo]->start == addr ? (long)lo : -1;
}

static void note(struct candidates *c, uint64_t target, enum evidence what)
{
    long k = candidate_at(c, target);
    if (k >= 0)
        c->evidence[k] |= what;
}

/* Do code[0..avail), at addr, read as a rip-relative lea? *target: the address it computes. */
static bool lea_rip_at(const uint8_t *code, size_t avail, uint64_t addr, uint64_t *target)
{
    if (avail < LEA_RIP_LEN || code[0] != OP_LEA || (code[1] & MODRM_RIP_MASK) != MODRM_RIP)
        return false;
    int32_t disp;
    memcpy(&disp, code + 2, 4);
    *target = addr + LEA_RIP_LEN + (int64_t)disp;
    return true;
}

/* Calls, jumps and rip-relative address computations in code[0..len) at vaddr, read at every
 * offset; in a non-PIE, absolute addresses are 32-bit immediates too. */
static void scan_code(struct candidates *c, const uint8_t *code, size_t len, uint64_t vaddr,
                      bool pie)
{
    for (size_t i = 0; i < len; i++) {
        uint64_t at = vaddr + i;
        struct arch_branch_bytes b;
        if (arch_branch_bytes_at(code + i, len - i, at, &b)) {
            long k = candidate_at(c, b.target);
            const struct fde_extent *f = k >= 0 ? c->fde[k] : NULL;
            if (f && b.is_call)
                c->evidence[k] |= CALLED;
            else if (f && b.rel32 && (at < f->start || at >= f->start + f->size))
                c->evidence[k] |= JUMPED;
        }
        uint64_t computed;
        if (lea_rip_at(code + i, len - i, at, &computed))
            note(c, computed, ADDRESSED);
        if (!pie && len - i >= 4) {
            uint32_t imm;
            memcpy(&imm, code + i, 4);
            note(c, imm, ADDRESSED);
        }
    }
}

/* Pointers in the data (a non-PIE's, and a PIE's with RELR relocations, are in the file). */
static void scan_data(struct candidates *c, const uint8_t *data, size_t len, uint64_t vaddr)
{
    size_t first = (8 - vaddr % 8) % 8;
    for (size_t i = first; i + 8 <= len; i += 8) {
        uint64_t word;
        memcpy(&word, data + i, 8);
        note(c, word, ADDRESSED);
    }
}

/* A PIE's or a library's pointers are relocations: their addends. */
static void scan_relocations(struct candidates *c, Elf *elf)
{
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_RELA || !shdr.sh_entsize)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        size_t count = data ? data->d_size / shdr.sh_entsize : 0;
        for (size_t i = 0; i < count; i++) {
            GElf_Rela rela;
            if (gelf_getrela(data, (int)i, &rela))
                note(c, (uint64_t)rela.r_addend, ADDRESSED);
        }
    }
}

/* Every loaded byte of the file searched for what enters or names the candidates. */
static void gather_evidence(struct candidates *c, Elf *elf, bool pie)
{
    size_t phnum;
    if (elf_getphdrnum(elf, &phnum) < 0)
        return;
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
            continue;
        const uint8_t *bytes = file_bytes(elf, ph.p_offset, ph.p_filesz);
        if (!bytes)
            continue;
        if (ph.p_flags & PF_X)
            scan_code(c, bytes, ph.p_filesz, ph.p_vaddr, pie);
        else
            scan_data(c, bytes, ph.p_filesz, ph.p_vaddr);
    }
    scan_relocations(c, elf);
}

static bool is_named(const uint64_t *named, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (named[mid] < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && named[lo] == addr;
}

static bool in_exec_segment(const struct elf_image *image, const struct fde_extent *f)
{
    for (size_t i = 0; i < image->nsegments; i++) {
        const struct exec_segment *seg = &image->segments[i];
        if (f->start >= seg->vaddr && f->size <= seg->memsz &&
            f->start - seg->vaddr <= seg->memsz - f->size)
            return true;
    }
    return false;
}

/* The FDEs that may be functions: inside the code, not the runtime's, entered by a call. */
static size_t pick_candidates(Elf *elf, const struct elf_image *image, const uint64_t *named,
                              size_t nnamed, const struct fde_extent *fdes, size_t nfdes,
                              struct candidates *c, struct unwind_census *census)
{
    c->nruntime = runtime_spans(elf, c->runtime);
    Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);
    for (size_t i = 0; i < nfdes; i++) {
        const struct fde_extent *f = &fdes[i];
        bool is_function = is_named(named, nnamed, f->start);
        if (!in_exec_segment(image, f))
            census->outside_code++;
        else if (!is_function && (f->signal_frame || f->start == image->entry ||
                                  in_spans(c->runtime, c->nruntime, f->start)))
            census->not_program++;
        else if (!is_function && !entered_by_call(cfi, f->start))
            census->mid_frame++;
        else {
            c->evidence[c->n] = is_function ? CALLED : 0;
            c->fde[c->n++] = f;
        }
    }
    if (cfi)
        dwarf_cfi_end(cfi);
    if (c->n) {
        c->lo = c->fde[0]->start;
        for (size_t i = 0; i < c->n; i++)
            if (c->fde[i]->start + c->fde[i]->size > c->hi)
                c->hi = c->fde[i]->start + c->fde[i]->size;
    }
    return c->n;
}

/* Where link-time addr's code is in the file, and how many bytes of it (0: not in the file). */
static const uint8_t *code_at(Elf *elf, uint64_t addr, size_t *avail)
{
    size_t phnum;
    *avail = 0;
    if (elf_getphdrnum(elf, &phnum) < 0)
        return NULL;
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
            addr < ph.p_vaddr || addr - ph.p_vaddr >= ph.p_filesz)
            continue;
        const uint8_t *bytes = file_bytes(elf, ph.p_offset, ph.p_filesz);
        *avail = bytes ? ph.p_filesz - (addr - ph.p_vaddr) : 0;
        return bytes ? bytes + (addr - ph.p_vaddr) : NULL;
    }
    return NULL;
}

/* The FDE whose code holds addr, or NULL. */
static const struct fde_extent *fde_of(const struct fde_extent *fdes, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* past the last FDE starting at or below addr */
        size_t mid = (lo + hi) / 2;
        if (fdes[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct fde_extent *f = lo ? &fdes[lo - 1] : NULL;
    return f && addr - f->start < f->size ? f : NULL;
}

/* Code only ever jumped to is a function reached by tail jumps alone, or a part of another
 * function. Such a part jumps into the middle of other code, which no function does, or never
 * leaves on its own (neither a ret nor a tail jump: to the start of other code, into the PLT or
 * through a pointer; it ends in a call of abort). An instruction that does not decode keeps it
 * a function. */
static bool is_part_of_another(struct arch_decoder *d, Elf *elf, const struct fde_extent *f,
                               const struct candidates *c, const struct fde_extent *fdes,
                               size_t nfdes)
{
    size_t avail;
    const uint8_t *code = code_at(elf, f->start, &avail);
    if (!code || avail < f->size)
        return false;
    bool leaves = false;
    for (uint64_t off = 0; off < f->size;) {
        struct arch_insn insn;
        if (!arch_decode(d, code + off, (size_t)(f->size - off), f->start + off, &insn))
            return false;
        const struct fde_extent *to =
            insn.is_branch && !insn.is_call ? fde_of(fdes, nfdes, insn.target) : NULL;
        bool tail_jump = to && to != f &&
                         (insn.target == to->start || in_spans(c->runtime, c->nruntime, to->start));
        if (to && to != f && !tail_jump)
            return true;
        leaves |= insn.is_ret || insn.is_indirect_jump || tail_jump;
        off += insn.len;
    }
    return !leaves;
}

/* The candidates kept as functions, in out; the others counted in census. */
static long keep_functions(Elf *elf, const struct candidates *c, const struct fde_extent *fdes,
                           size_t nfdes, struct unwind_func *out, struct unwind_census *census)
{
    struct arch_decoder *d = NULL;
    long n = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct fde_extent *f = c->fde[i];
        if (c->evidence[i] == JUMPED) { /* nothing but jumps lead there */
            if (!d && !(d = arch_decoder_new()))
                return -1;
            if (is_part_of_another(d, elf, f, c, fdes, nfdes)) {
                census->jumped_only++;
                continue;
            }
        }
        out[n++] = (struct unwind_func){f->start, f->size};
    }
    arch_decoder_free(d);
    return n;
}

long unwind_funcs_read(Elf *elf, const struct elf_image *image, const uint64_t *named,
                       size_t nnamed, struct unwind_func **out, struct unwind_census *census)
{
    *out = NULL;
    memset(census, 0, sizeof(*census));
    struct fde_extent *fdes;
    long nfdes = read_fdes(elf, &fdes);
    if (nfdes <= 0)
        return nfdes;
    census->fdes = (size_t)nfdes;
    struct candidates c = {.fde = calloc((size_t)nfdes, sizeof(*c.fde)),
                           .evidence = calloc((size_t)nfdes, 1)};
    *out = calloc((size_t)nfdes, sizeof(**out));
    long n = -1;
    if (c.fde && c.evidence && *out) {
        if (pick_candidates(elf, image, named, nnamed, fdes, (size_t)nfdes, &c, census))
            gather_evidence(&c, elf, image->pie);
        n = keep_functions(elf, &c, fdes, (size_t)nfdes, *out, census);
    }
    if (n < 0) {
        free(*out);
        *out = NULL;
    }
    free(c.fde);
    free(c.evidence);
    free(fdes);
    return n;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

long unwind_lea_targets(Elf *elf, uint64_t start, uint64_t size, uint64_t **out)
{
    *out = NULL;
    size_t avail;
    const uint8_t *code = code_at(elf, start, &avail);
    if (!code || avail < size)
        return 0;
    long n = 0;
    for (uint64_t i = 0; i < size; i++) {
        uint64_t target;
        if (!lea_rip_at(code + i, (size_t)(size - i), start + i, &target))
            continue;
        uint64_t *more = reallocarray(*out, (size_t)n + 1, sizeof(**out));
        if (!more) {
            free(*out);
            *out = NULL;
            return -1;
        }
        *out = more;
        (*out)[n++] = target;
    }
    if (n)
        qsort(*out, (size_t)n, sizeof(**out), compare_u64);
    return n;
}
