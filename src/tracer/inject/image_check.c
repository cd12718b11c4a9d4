/* What the inject engine cannot trace yet, read from the executable before it is patched. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "tracer/inject/inject.h"

/* Imports the trampolines cannot live with yet, and why: stack switching, which the shadow
 * stack of a thread does not follow. (Unwinders walking hooked frames are handled: unwind.h.) */
static const struct {
    const char *name;
    const char *why;
} unsupported_imports[] = {
    {"swapcontext", "switching stacks (swapcontext) is not supported yet"},
    {"setcontext", "switching stacks (setcontext) is not supported yet"},
    {"makecontext", "switching stacks (makecontext) is not supported yet"},
};

static const char *check_interp(Elf *elf)
{
    size_t n;
    if (elf_getphdrnum(elf, &n) != 0)
        return "unreadable program headers";
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_INTERP)
            continue;
        size_t size;
        const char *raw = elf_rawfile(elf, &size);
        if (!raw || ph.p_offset >= size || ph.p_filesz > size - ph.p_offset)
            return "unreadable interpreter";
        /* the thread control block layout the trampolines rely on is glibc's */
        if (!memmem(raw + ph.p_offset, ph.p_filesz, "ld-linux-x86-64.so", 18))
            return "not linked with glibc";
        return NULL;
    }
    return "static executables are not supported yet";
}

/* An unwinder linked into the executable (-static-libgcc, -static-libstdc++) has its entry
 * points patched like any function of it: unwind.c cannot stop there. */
static const char *const static_unwinder[] = {"_Unwind_RaiseException", "_Unwind_Backtrace",
                                              "_Unwind_ForcedUnwind", "__cxa_begin_catch"};

static const char *check_symbol(const GElf_Sym *sym, const char *name)
{
    if (sym->st_shndx == SHN_UNDEF) {
        const size_t n = sizeof(unsupported_imports) / sizeof(*unsupported_imports);
        for (size_t k = 0; k < n; k++)
            if (strcmp(name, unsupported_imports[k].name) == 0)
                return unsupported_imports[k].why;
        return NULL;
    }
    for (size_t k = 0; k < sizeof(static_unwinder) / sizeof(*static_unwinder); k++)
        if (strcmp(name, static_unwinder[k]) == 0)
            return "an unwinder linked into the executable (-static-libgcc, -static-libstdc++) "
                   "is not supported yet";
    return NULL;
}

static const char *check_symbols(Elf *elf)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
            !sh.sh_entsize)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        size_t count = sh.sh_size / sh.sh_entsize;
        for (size_t i = 0; data && i < count; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(data, (int)i, &sym))
                continue;
            const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
            const char *why = name ? check_symbol(&sym, name) : NULL;
            if (why)
                return why;
        }
    }
    return NULL;
}

const char *inject_image_unsupported(const char *path)
{
    if (elf_version(EV_CURRENT) == EV_NONE)
        return "libelf unusable";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return "unreadable executable";
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    const char *why = elf ? check_interp(elf) : "not an ELF file";
    if (!why)
        why = check_symbols(elf);
    if (elf)
        elf_end(elf);
    close(fd);
    return why;
}
