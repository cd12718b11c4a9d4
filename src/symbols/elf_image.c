#include "symbols/elf_image.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbols/debug_file.h"
#include "symbols/demangle.h"
#include "symbols/unwind_funcs.h"
#include "util/log.h"

/* C runtime code the user never wrote. Tracing it would only add noise, and some of it runs
 * before the program's stack frames are set up in the usual way (_start is entered by a jump
 * from the kernel, __restore_rt by a return from a signal handler). */
static const char *const runtime_functions[] = {
    "_start",
    "_init",
    "_fini",
    "frame_dummy",
    "register_tm_clones",
    "deregister_tm_clones",
    "__do_global_dtors_aux",
    "__libc_csu_init",
    "__libc_csu_fini",
    "_dl_relocate_static_pie",
    "__libc_start_main",
    "__libc_start_call_main",
    "__restore_rt",
    "__x86.get_pc_thunk.ax",
    "__x86.get_pc_thunk.bx",
    NULL,
};

/* gcc's hot/cold splitting moves unlikely code into "f.cold" ("f.cold.3"): a part of f reached
 * by jumps, never called. A breakpoint there would count a call that never happened. */
static bool is_cold_part(const char *name)
{
    const char *cold = strstr(name, ".cold");
    if (!cold)
        return false;
    cold += 5;
    if (*cold == '.')
        cold += strspn(cold + 1, "0123456789") + 1;
    return *cold == '\0';
}

static bool is_runtime_function(const char *name)
{
    for (size_t i = 0; runtime_functions[i]; i++)
        if (strcmp(name, runtime_functions[i]) == 0)
            return true;
    return false;
}

/* Checks that elf is a 64-bit x86 executable or PIE; fills why when not. */
static int check_header(Elf *elf, char *why, size_t whylen)
{
    if (!elf || elf_kind(elf) != ELF_K_ELF) {
        snprintf(why, whylen, "not an ELF executable");
        return -1;
    }
    GElf_Ehdr ehdr;
    if (!gelf_getehdr(elf, &ehdr)) {
        snprintf(why, whylen, "truncated or corrupt ELF header");
        return -1;
    }
    if (gelf_getclass(elf) != ELFCLASS64 || ehdr.e_machine != EM_X86_64) {
        snprintf(why, whylen,
                 "not an x86_64 ELF (%s, machine %u): calltrace traces 64-bit x86 programs only",
                 gelf_getclass(elf) == ELFCLASS32 ? "32-bit" : "64-bit", ehdr.e_machine);
        return -1;
    }
    if (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN) {
        snprintf(why, whylen, "not an executable (ELF type %u)", ehdr.e_type);
        return -1;
    }
    return 0;
}

static int open_elf(const char *path, int *fd, Elf **elf, char *why, size_t whylen)
{
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        return -1;
    }
    elf_version(EV_CURRENT);
    *elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
    if (check_header(*elf, why, whylen) == 0)
        return 0;
    if (*elf)
        elf_end(*elf);
    *elf = NULL;
    close(*fd);
    *fd = -1;
    return -1;
}

int elf_check_executable(const char *path, char *why, size_t whylen)
{
    int fd;
    Elf *elf = NULL;
    if (open_elf(path, &fd, &elf, why, whylen) < 0)
        return -1;
    elf_end(elf);
    close(fd);
    return 0;
}

static int read_segments(struct elf_image *image, Elf *elf, char *why, size_t whylen)
{
    size_t phnum;
    if (elf_getphdrnum(elf, &phnum) < 0 || phnum == 0) {
        snprintf(why, whylen, "truncated or corrupt ELF: no program headers");
        return -1;
    }
    image->segments = calloc(phnum, sizeof(*image->segments));
    if (!image->segments) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    image->is_static = true;
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr phdr;
        if (!gelf_getphdr(elf, (int)i, &phdr)) {
            snprintf(why, whylen, "truncated or corrupt ELF program header");
            return -1;
        }
        if (phdr.p_type == PT_INTERP)
            image->is_static = false;
        if (phdr.p_type == PT_LOAD && phdr.p_vaddr + phdr.p_memsz < phdr.p_vaddr) {
            snprintf(why, whylen, "truncated or corrupt ELF: a segment wraps around the addresses");
            return -1;
        }
        if (phdr.p_type == PT_LOAD && (phdr.p_flags & PF_X) && phdr.p_memsz) {
            image->segments[image->nsegments].vaddr = phdr.p_vaddr;
            image->segments[image->nsegments].memsz = phdr.p_memsz;
            image->nsegments++;
        }
    }
    if (!image->nsegments) {
        snprintf(why, whylen, "truncated or corrupt ELF: no executable segment");
        return -1;
    }
    return 0;
}

static bool in_exec_segment(const struct elf_image *image, uint64_t addr, uint64_t size)
{
    for (size_t i = 0; i < image->nsegments; i++) {
        const struct exec_segment *seg = &image->segments[i];
        if (addr >= seg->vaddr && addr + size <= seg->vaddr + seg->memsz)
            return true;
    }
    return false;
}

/* The first section of this type, or NULL. */
static Elf_Scn *find_section(Elf *elf, Elf64_Word type, GElf_Shdr *shdr_out)
{
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn))
        if (gelf_getshdr(scn, shdr_out) && shdr_out->sh_type == type)
            return scn;
    return NULL;
}

/* .symtab, else .dynsym. */
static Elf_Scn *find_symtab(Elf *elf, GElf_Shdr *shdr_out)
{
    Elf_Scn *scn = find_section(elf, SHT_SYMTAB, shdr_out);
    return scn ? scn : find_section(elf, SHT_DYNSYM, shdr_out);
}

/* Why calls of the exported function name cannot be traced at the program's boundary (-L), or
 * NULL. */
static const char *lib_call_refused(const char *name)
{
    /* Hooked, their second return (or the return into another context) would come back
     * through a trampoline whose call already ended. */
    static const char *const returns_twice[] = {
        "setjmp",  "_setjmp",    "__sigsetjmp", "sigsetjmp",   "savectx",       "vfork",
        "__vfork", "getcontext", "setcontext",  "swapcontext", "clone",         "__clone",
        "clone3",  "longjmp",    "_longjmp",    "siglongjmp",  "__longjmp_chk",
    };
    for (size_t i = 0; i < sizeof(returns_twice) / sizeof(returns_twice[0]); i++)
        if (strcmp(name, returns_twice[i]) == 0)
            return "it returns twice or switches stacks";
    /* The unwinder runs through the program's hooked frames, which its hooks mend
     * (tracer/inject/unwind.h, where __cxa_begin_catch is one): its own entries must stay as
     * they are. */
    if (strncmp(name, "_Unwind_", 8) == 0 || strcmp(name, "__cxa_begin_catch") == 0)
        return "the unwinder's";
    return NULL;
}

/* -L: an exported function (global or weak, visible) whose calls may be hooked. */
static bool exported_lib_call(const GElf_Sym *sym, const char *name)
{
    int vis = GELF_ST_VISIBILITY(sym->st_other);
    return GELF_ST_BIND(sym->st_info) != STB_LOCAL && vis != STV_HIDDEN && vis != STV_INTERNAL &&
           !lib_call_refused(name);
}

/* Prefers a global name over a weak or local alias of the same address, and then a public
 * name over one starting with '_'. */
static int binding_rank(unsigned char info)
{
    switch (GELF_ST_BIND(info)) {
    case STB_GLOBAL:
        return 0;
    case STB_WEAK:
        return 1;
    default:
        return 2;
    }
}

/* A .dynsym name of a version that is not the default one (free's alias cfree@GLIBC_2.2.5, a
 * compatibility symbol no program links against any more): any other name comes first. */
#define RANK_HIDDEN_VERSION 3
#define VERSYM_HIDDEN 0x8000

static Elf_Data *find_versyms(Elf *elf)
{
    GElf_Shdr shdr;
    Elf_Scn *scn = find_section(elf, SHT_GNU_versym, &shdr);
    return scn ? elf_getdata(scn, NULL) : NULL;
}

struct raw_symbol {
    uint64_t addr;
    uint64_t size;
    int rank;
    const char *name;
    bool ifunc_choice; /* unnamed, and an IFUNC resolver may return it: traced under the IFUNC */
};

static int compare_raw(const void *a, const void *b)
{
    const struct raw_symbol *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    /* libc's printf is also _IO_printf, and its getpid the weak alias of a global __getpid: the
     * public name is the one users write with -F, whatever its binding */
    bool x_internal = x->name[0] == '_', y_internal = y->name[0] == '_';
    if (x_internal != y_internal)
        return x_internal ? 1 : -1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    /* strtol, not its alias strtoimax: the shorter name is the one programs call */
    size_t x_len = strcspn(x->name, "@"), y_len = strcspn(y->name, "@");
    if (x_len != y_len)
        return x_len < y_len ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The name without the version a .symtab spells in it ("memcpy@@GLIBC_2.14"; .dynsym keeps
 * versions apart): the name users know. */
static char *unversioned(const char *name)
{
    return strndup(name, strcspn(name, "@"));
}

/* One entry per resolver: a versioned symbol may be listed once per version, and a full symbol
 * table (a debug file's) has internal aliases of the same IFUNC (__GI_strlen): the public name
 * is kept, as for functions. */
static int add_ifunc(struct elf_image *image, uint64_t resolver, const char *name,
                     unsigned char info)
{
    struct raw_symbol candidate = {resolver, 0, binding_rank(info), name, false};
    for (size_t i = 0; i < image->nifuncs; i++) {
        struct ifunc_symbol *known = &image->ifuncs[i];
        if (known->resolver != resolver)
            continue;
        struct raw_symbol kept = {resolver, 0, known->rank, known->name, false};
        if (compare_raw(&candidate, &kept) >= 0)
            return 0;
        char *copy = unversioned(name);
        if (!copy)
            return -1;
        free(known->name);
        known->name = copy;
        known->rank = candidate.rank;
        return 0;
    }
    struct ifunc_symbol *list =
        reallocarray(image->ifuncs, image->nifuncs + 1, sizeof(*image->ifuncs));
    if (!list)
        return -1;
    image->ifuncs = list;
    char *copy = unversioned(name);
    if (!copy)
        return -1;
    image->ifuncs[image->nifuncs++] = (struct ifunc_symbol){resolver, copy, candidate.rank};
    return 0;
}

/* DT_SONAME, the name other objects ask for ("libsqlite3.so.0"), and DT_INIT. */
static void read_dynamic(struct elf_image *image, Elf *elf)
{
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNAMIC)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        size_t count = data && shdr.sh_entsize ? data->d_size / shdr.sh_entsize : 0;
        for (size_t i = 0; i < count; i++) {
            GElf_Dyn dyn;
            if (!gelf_getdyn(data, (int)i, &dyn))
                continue;
            if (dyn.d_tag == DT_INIT)
                image->init = dyn.d_un.d_ptr;
            if (dyn.d_tag != DT_SONAME || image->soname)
                continue;
            const char *name = elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val);
            if (name && *name)
                image->soname = strdup(name);
        }
        return;
    }
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The name .dynsym gives a function without a size at addr (hand-written code), or NULL. */
static const char *sizeless_name(const struct raw_symbol *sizeless, size_t n, uint64_t addr)
{
    for (size_t i = 0; i < n; i++)
        if (sizeless[i].addr == addr)
            return sizeless[i].name;
    return NULL;
}

/* The sorted starts of raw[0..n), then of more[0..nmore), then the IFUNC resolvers, in *out. */
static size_t sorted_starts(const struct elf_image *image, const struct raw_symbol *raw, size_t n,
                            const struct raw_symbol *more, size_t nmore, uint64_t **out)
{
    *out = calloc(n + nmore + image->nifuncs + 1, sizeof(**out));
    if (!*out)
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        (*out)[k++] = raw[i].addr;
    for (size_t i = 0; i < nmore; i++)
        (*out)[k++] = more[i].addr;
    for (size_t i = 0; i < image->nifuncs; i++)
        (*out)[k++] = image->ifuncs[i].resolver;
    qsort(*out, k, sizeof(**out), compare_u64);
    return k;
}

/* What the IFUNC resolvers among found[0..n) may return, sorted (an unnamed implementation,
 * libc's __strlen_avx2, is traced under its IFUNC's name): the addresses their code computes. */
static long ifunc_choices(const struct elf_image *image, Elf *elf, const struct unwind_func *found,
                          long n, uint64_t **choices)
{
    *choices = NULL;
    long nchoices = 0;
    for (long i = 0; i < n; i++) {
        bool resolver = false;
        for (size_t k = 0; k < image->nifuncs && !resolver; k++)
            resolver = image->ifuncs[k].resolver == found[i].addr;
        uint64_t *more;
        long nmore = resolver ? unwind_lea_targets(elf, found[i].addr, found[i].size, &more) : 0;
        uint64_t *all = nmore > 0
                            ? reallocarray(*choices, (size_t)(nchoices + nmore), sizeof(**choices))
                            : NULL;
        if (all) {
            memcpy(all + nchoices, more, (size_t)nmore * sizeof(*more));
            *choices = all;
            nchoices += nmore;
        }
        if (nmore > 0)
            free(more);
        if (nmore < 0 || (nmore > 0 && !all))
            return -1;
    }
    if (nchoices)
        qsort(*choices, (size_t)nchoices, sizeof(**choices), compare_u64);
    return nchoices;
}

/* The functions .dynsym does not name, from the unwind table (symbols/unwind_funcs.h), added to
 * *raw (grown) with an empty name; the .dynsym names without a size (hand-written code) get the
 * unwind table's extent. An IFUNC's resolver is no function of the program. */
static int add_unwind_functions(struct elf_image *image, Elf *elf, struct raw_symbol **raw,
                                size_t *n, const struct raw_symbol *sizeless, size_t nsizeless)
{
    uint64_t *named, *known, *choices = NULL;
    size_t nnamed = sorted_starts(image, *raw, *n, sizeless, nsizeless, &named);
    size_t nknown = sorted_starts(image, *raw, *n, NULL, 0, &known);
    struct unwind_func *found = NULL;
    struct unwind_census census;
    long nfound =
        named && known ? unwind_funcs_read(elf, image, named, nnamed, &found, &census) : -1;
    long nchoices = nfound > 0 ? ifunc_choices(image, elf, found, nfound, &choices) : 0;
    struct raw_symbol *grown =
        nfound > 0 && nchoices >= 0 ? reallocarray(*raw, *n + (size_t)nfound, sizeof(**raw)) : NULL;
    if (grown) {
        *raw = grown;
        size_t added = 0;
        for (long i = 0; i < nfound; i++) {
            uint64_t addr = found[i].addr;
            if (bsearch(&addr, known, nknown, sizeof(*known), compare_u64))
                continue;
            const char *name = sizeless_name(sizeless, nsizeless, addr);
            bool choice = !name && nchoices > 0 &&
                          bsearch(&addr, choices, (size_t)nchoices, sizeof(*choices), compare_u64);
            (*raw)[(*n)++] = (struct raw_symbol){addr, found[i].size, 1, name ? name : "", choice};
            added += !name;
        }
        dbg(DBG_SYMBOLS, 1,
            "%s: no symbol table: %zu functions from its %zu FDEs, %zu of them unnamed "
            "(func_0xADDRESS); left out: %zu of the PLT, .init, .fini, the entry point or signal "
            "frames, %zu entered mid-frame (.cold parts), %zu only jumped to, %zu outside the code",
            image->path, (size_t)nfound, census.fdes, added, census.not_program, census.mid_frame,
            census.jumped_only, census.outside_code);
    }
    free(choices);
    free(found);
    free(named);
    free(known);
    return nfound < 0 || nchoices < 0 || (nfound > 0 && !grown) ? -1 : 0;
}

/* A function's name: its symbol's, unversioned and demangled, or func_0xADDRESS (link-time:
 * the offset in the image of a PIE or a library) for one the unwind table alone gives. */
static char *function_name(const struct raw_symbol *raw)
{
    if (!raw->name[0]) {
        char *name = NULL;
        return asprintf(&name, "func_0x%llx", (unsigned long long)raw->addr) < 0 ? NULL : name;
    }
    char *plain = unversioned(raw->name);
    char *name = plain ? demangle(plain) : NULL;
    free(plain);
    return name;
}

/* Keeps raw's name among f's aliases (-F/-N match any), once. */
static int add_alias(struct func_symbol *f, const struct raw_symbol *raw)
{
    if (!raw->name[0])
        return 0;
    char *name = function_name(raw);
    if (!name)
        return -1;
    bool known = strcmp(name, f->name) == 0;
    for (size_t i = 0; !known && i < f->naliases; i++)
        known = strcmp(name, f->aliases[i]) == 0;
    char **more = known ? NULL : reallocarray(f->aliases, f->naliases + 1, sizeof(*more));
    if (known || !more) {
        free(name);
        return known ? 0 : -1;
    }
    f->aliases = more;
    f->aliases[f->naliases++] = name;
    return 0;
}

/* The function and IFUNC symbols of elf's table (its .symtab, else its .dynsym): those of size 0
 * in *sizeless, the others in *raw. */
static int read_symbols(struct elf_image *image, Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr,
                        struct raw_symbol **raw, size_t *n, struct raw_symbol **sizeless,
                        size_t *nsizeless)
{
    Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
    if (scn && !data)
        return -1;
    size_t count = data && shdr->sh_entsize ? data->d_size / shdr->sh_entsize : 0;
    Elf_Data *versyms = scn && shdr->sh_type == SHT_DYNSYM ? find_versyms(elf) : NULL;
    *raw = calloc(count ? count : 1, sizeof(**raw));
    *sizeless = calloc(count ? count : 1, sizeof(**sizeless));
    if (!*raw || !*sizeless)
        return -1;
    for (size_t i = 0; i < count; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, (int)i, &sym))
            continue;
        int type = GELF_ST_TYPE(sym.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF)
            continue;
        const char *name = elf_strptr(elf, shdr->sh_link, sym.st_name);
        if (!name || !*name || !in_exec_segment(image, sym.st_value, sym.st_size ? sym.st_size : 1))
            continue;
        if (image->lib_calls && !exported_lib_call(&sym, name))
            continue;
        struct raw_symbol entry = {sym.st_value, sym.st_size, binding_rank(sym.st_info), name,
                                   false};
        GElf_Versym version;
        if (versyms && gelf_getversym(versyms, (int)i, &version) && (version & VERSYM_HIDDEN))
            entry.rank = RANK_HIDDEN_VERSION;
        if (!sym.st_size) {
            if (type == STT_FUNC)
                (*sizeless)[(*nsizeless)++] = entry;
            continue;
        }
        if (type == STT_GNU_IFUNC) {
            /* a debug file's full table lists internal IFUNCs too (glibc's __x86_cacheinfo):
             * their resolvers are not the program's to run again */
            if (GELF_ST_BIND(sym.st_info) != STB_LOCAL &&
                add_ifunc(image, sym.st_value, name, sym.st_info) < 0)
                return -1;
            continue;
        }
        (*raw)[(*n)++] = entry;
    }
    return 0;
}

/* The function symbols; a file without a .symtab (stripped) has its exported functions in
 * .dynsym, and the others only in its unwind table. */
static int read_functions(struct elf_image *image, Elf *elf, char *why, size_t whylen)
{
    GElf_Shdr shdr;
    /* -L: the exported functions alone, which only .dynsym tells apart */
    Elf_Scn *scn =
        image->lib_calls ? find_section(elf, SHT_DYNSYM, &shdr) : find_symtab(elf, &shdr);
    struct raw_symbol *raw = NULL, *sizeless = NULL;
    size_t n = 0, nsizeless = 0;
    int rc = read_symbols(image, elf, scn, &shdr, &raw, &n, &sizeless, &nsizeless);
    if (rc == 0 && !image->lib_calls && (!scn || shdr.sh_type != SHT_SYMTAB))
        rc = add_unwind_functions(image, elf, &raw, &n, sizeless, nsizeless);
    if (rc == 0) {
        qsort(raw, n, sizeof(*raw), compare_raw);
        image->funcs = calloc(n ? n : 1, sizeof(*image->funcs));
        rc = image->funcs ? 0 : -1;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (image->nfuncs && image->funcs[image->nfuncs - 1].addr == raw[i].addr) {
            /* an alias: the best-ranked name came first */
            rc = add_alias(&image->funcs[image->nfuncs - 1], &raw[i]);
            continue;
        }
        struct func_symbol *f = &image->funcs[image->nfuncs++];
        f->addr = raw[i].addr;
        f->size = raw[i].size;
        f->name = function_name(&raw[i]);
        f->unnamed = !raw[i].name[0];
        f->lib_call = image->lib_calls;
        char *plain = unversioned(raw[i].name);
        f->skipped =
            raw[i].ifunc_choice || (plain && (is_runtime_function(plain) || is_cold_part(plain)));
        free(plain);
        if (!f->name)
            rc = -1;
    }
    free(raw);
    free(sizeless);
    if (rc < 0)
        snprintf(why, whylen,
                 scn && !elf_getdata(scn, NULL)
                     ? "truncated or corrupt ELF: unreadable symbol table"
                     : "out of memory");
    return rc;
}

/* Everything after the header check, shared by the file and memory loaders. symbols: where the
 * function symbols are read (elf, or its separate debug file), NULL: not read. */
static int load_checked(struct elf_image *image, Elf *elf, const char *path, Elf *symbols)
{
    char why[256];
    GElf_Ehdr ehdr;
    gelf_getehdr(elf, &ehdr);
    image->path = strdup(path);
    image->pie = ehdr.e_type == ET_DYN;
    image->entry = ehdr.e_entry;
    int rc = image->path ? 0 : -1;
    if (!image->path)
        snprintf(why, sizeof(why), "out of memory");
    if (rc == 0)
        rc = read_segments(image, elf, why, sizeof(why));
    if (rc == 0 && symbols)
        rc = read_functions(image, symbols, why, sizeof(why));
    if (rc == 0)
        read_dynamic(image, elf);
    if (rc < 0) {
        err_msg("%s: %s", path, why);
        elf_image_free(image);
        return -1;
    }
    dbg(DBG_SYMBOLS, 2, "%s: %zu functions, %s, %s", path, image->nfuncs,
        image->pie ? "PIE" : "non-PIE", image->is_static ? "static" : "dynamic");
    return 0;
}

/* A stripped file keeps only .dynsym: its debug file, when there is one, has every function.
 * Returns the debug file's Elf when it has a symbol table, else NULL. */
static Elf *open_debug_symbols(struct debug_file *debug, Elf *elf, const char *path)
{
    *debug = (struct debug_file){.fd = -1};
    if (elf_has_section_type(elf, SHT_SYMTAB) || debug_file_open(path, DEBUG_SYMBOLS, debug) < 0)
        return NULL;
    if (elf_has_section_type(debug->elf, SHT_SYMTAB))
        return debug->elf;
    dbg(DBG_SYMBOLS, 1, "%s: no symbol table in it", debug->name);
    return NULL;
}

/* Monotonic milliseconds, for -v's timing of the symbol loading (0 when the clock fails). */
static double mono_ms(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
        return 0;
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

enum symbols_read {
    SYMBOLS_NONE,
    SYMBOLS_ALL,     /* every function: .symtab (the file's or its debug file's), else .dynsym */
    SYMBOLS_EXPORTS, /* .dynsym's exported functions (-L) */
};

static int load_file(struct elf_image *image, const char *path, enum symbols_read which)
{
    double start = mono_ms();
    char why[256];
    int fd;
    Elf *elf = NULL;
    memset(image, 0, sizeof(*image));
    image->lib_calls = which == SYMBOLS_EXPORTS;
    bool symbols = which != SYMBOLS_NONE;
    if (open_elf(path, &fd, &elf, why, sizeof(why)) < 0) {
        err_msg("%s: %s", path, why);
        return -1;
    }
    struct debug_file debug = {.fd = -1};
    Elf *debug_symbols = which == SYMBOLS_ALL ? open_debug_symbols(&debug, elf, path) : NULL;
    int rc = load_checked(image, elf, path, debug_symbols ? debug_symbols : symbols ? elf : NULL);
    if (rc == 0 && symbols)
        dbg(DBG_SYMBOLS, 1, "%s: %zu functions, symbols read in %.1f ms (%s)", path, image->nfuncs,
            mono_ms() - start,
            debug_symbols                           ? "from its debug file"
            : image->lib_calls                      ? "exported ones, from .dynsym"
            : elf_has_section_type(elf, SHT_SYMTAB) ? "from its symbol table"
                                                    : "from .dynsym and its unwind table");
    debug_file_close(&debug);
    elf_end(elf);
    close(fd);
    return rc;
}

int elf_image_load(struct elf_image *image, const char *path)
{
    return load_file(image, path, SYMBOLS_ALL);
}

int elf_image_load_exports(struct elf_image *image, const char *path)
{
    return load_file(image, path, SYMBOLS_EXPORTS);
}

int elf_image_load_headers(struct elf_image *image, const char *path)
{
    return load_file(image, path, SYMBOLS_NONE);
}

int elf_image_load_memory(struct elf_image *image, const char *name, void *data, size_t size)
{
    char why[256];
    memset(image, 0, sizeof(*image));
    elf_version(EV_CURRENT);
    Elf *elf = elf_memory(data, size);
    if (check_header(elf, why, sizeof(why)) < 0) {
        if (elf)
            elf_end(elf);
        err_msg("%s: %s", name, why);
        return -1;
    }
    int rc = load_checked(image, elf, name, elf);
    elf_end(elf);
    return rc;
}

void func_symbol_free(struct func_symbol *f)
{
    free(f->name);
    for (size_t i = 0; i < f->naliases; i++)
        free(f->aliases[i]);
    free(f->aliases);
}

bool func_symbol_selected(const struct func_filter *filter, const struct func_symbol *f)
{
    uint64_t only = func_symbol_glob_hits(filter->only, filter->nonly, f);
    uint64_t exclude = func_symbol_glob_hits(filter->exclude, filter->nexclude, f);
    return (!filter->nonly || only) && !exclude;
}

uint64_t func_symbol_glob_hits(const char *const *globs, size_t n, const struct func_symbol *f)
{
    uint64_t hits = func_filter_glob_hits(globs, n, f->name);
    for (size_t i = 0; i < f->naliases; i++)
        hits |= func_filter_glob_hits(globs, n, f->aliases[i]);
    return hits;
}

void elf_image_free(struct elf_image *image)
{
    for (size_t i = 0; i < image->nfuncs; i++)
        func_symbol_free(&image->funcs[i]);
    free(image->funcs);
    for (size_t i = 0; i < image->nifuncs; i++)
        free(image->ifuncs[i].name);
    free(image->ifuncs);
    free(image->soname);
    free(image->segments);
    free(image->path);
    memset(image, 0, sizeof(*image));
}

/* Reads both tables: .symtab has local names (a stripped file has none), .dynsym the exported
 * ones, and the dynamic linker's _r_debug is only in the latter once stripped. */
int elf_lookup_symbols(const char *path, const char *const *names, uint64_t *values, size_t n)
{
    char why[256];
    int fd;
    Elf *elf = NULL;
    memset(values, 0, n * sizeof(*values));
    if (open_elf(path, &fd, &elf, why, sizeof(why)) < 0) {
        dbg(DBG_SYMBOLS, 1, "%s: %s", path, why);
        return -1;
    }
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr) || (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM))
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        size_t count = data && shdr.sh_entsize ? data->d_size / shdr.sh_entsize : 0;
        for (size_t i = 0; i < count; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
                continue;
            const char *name = elf_strptr(elf, shdr.sh_link, sym.st_name);
            for (size_t k = 0; name && k < n; k++)
                if (!values[k] && strcmp(name, names[k]) == 0)
                    values[k] = sym.st_value;
        }
    }
    elf_end(elf);
    close(fd);
    return 0;
}

bool elf_imports_any(const char *path, const char *const *names, size_t n)
{
    char why[256];
    int fd;
    Elf *elf = NULL;
    if (open_elf(path, &fd, &elf, why, sizeof(why)) < 0) {
        dbg(DBG_SYMBOLS, 1, "%s: %s", path, why);
        return false;
    }
    bool found = false;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn && !found; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNSYM)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        size_t count = data && shdr.sh_entsize ? data->d_size / shdr.sh_entsize : 0;
        for (size_t i = 0; i < count && !found; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx != SHN_UNDEF)
                continue;
            const char *name = elf_strptr(elf, shdr.sh_link, sym.st_name);
            for (size_t k = 0; name && k < n && !found; k++)
                found = strcmp(name, names[k]) == 0;
        }
    }
    elf_end(elf);
    close(fd);
    return found;
}

size_t elf_image_traceable(const struct elf_image *image)
{
    size_t n = 0;
    for (size_t i = 0; i < image->nfuncs; i++)
        n += !image->funcs[i].skipped;
    return n;
}

bool elf_image_unnamed(const struct elf_image *image)
{
    for (size_t i = 0; i < image->nfuncs; i++)
        if (!image->funcs[i].skipped && !image->funcs[i].unnamed)
            return false;
    return true;
}

void elf_image_exec_range(const struct elf_image *image, uint64_t bias, uint64_t *lo, uint64_t *hi)
{
    *lo = UINT64_MAX;
    *hi = 0;
    for (size_t i = 0; i < image->nsegments; i++) {
        const struct exec_segment *seg = &image->segments[i];
        if (seg->vaddr + bias < *lo)
            *lo = seg->vaddr + bias;
        if (seg->vaddr + seg->memsz + bias > *hi)
            *hi = seg->vaddr + seg->memsz + bias;
    }
}
