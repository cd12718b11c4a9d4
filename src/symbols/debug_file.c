#include "symbols/debug_file.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"

#define DEFAULT_DEBUG_DIRS "/usr/lib/debug"

int elf_has_section_type(Elf *elf, unsigned type)
{
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) && shdr.sh_type == type && shdr.sh_size)
            return 1;
    }
    return 0;
}

char *debug_file_search_path(void)
{
    const char *dirs = getenv(DEBUG_DIRS_ENV);
    char *path = NULL;
    /* "": the file's own directory; ".debug": below it; absolute: build IDs, and names below */
    if (asprintf(&path, ":.debug:%s", dirs ? dirs : DEFAULT_DEBUG_DIRS) < 0)
        return NULL;
    return path;
}

/* mod's debug file as libdwfl reads its symbol table (a debug file may hold one alone), opened
 * here by its name; -1 when libdwfl found none, or one without a name (from debuginfod). */
static int find_symbols(Dwfl_Module *mod, struct debug_file *df)
{
    const char *name = NULL;
    dwfl_module_getsymtab(mod);
    dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &name);
    if (!name)
        return -1;
    df->fd = open(name, O_RDONLY | O_CLOEXEC);
    if (df->fd < 0) {
        err_msg("%s: %s", name, strerror(errno));
        return -1;
    }
    df->elf = elf_begin(df->fd, ELF_C_READ_MMAP, NULL);
    df->name = strdup(name);
    return df->elf && df->name ? 0 : -1;
}

/* mod's debug file as libdwfl reads its DWARF (the Elf then is libdwfl's). */
static int find_dwarf(Dwfl_Module *mod, struct debug_file *df)
{
    Dwarf_Addr bias;
    const char *name = NULL;
    Dwarf *dwarf = dwfl_module_getdwarf(mod, &bias);
    dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &name);
    if (!dwarf || (!name && !getenv("DEBUGINFOD_URLS")))
        return -1;
    df->elf = dwarf_getelf(dwarf);
    df->name = strdup(name ? name : "(from debuginfod)");
    return df->elf && df->name ? 0 : -1;
}

int debug_file_open(const char *path, enum debug_want want, struct debug_file *df)
{
    *df = (struct debug_file){.fd = -1};
    /* the file's own directory is where a debug link is looked for first: /proc/PID/exe's is
     * not the program's */
    char *real = realpath(path, NULL);
    df->search = debug_file_search_path();
    df->callbacks = (Dwfl_Callbacks){
        .find_elf = dwfl_build_id_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .section_address = dwfl_offline_section_address,
        .debuginfo_path = &df->search,
    };
    df->dwfl = real && df->search ? dwfl_begin(&df->callbacks) : NULL;
    Dwfl_Module *mod = df->dwfl ? dwfl_report_offline(df->dwfl, real, real, -1) : NULL;
    if (df->dwfl)
        dwfl_report_end(df->dwfl, NULL, NULL);
    /* reading only the symbol table is several times cheaper (libc: DWARF's headers) */
    int rc = -1;
    if (mod && want == DEBUG_SYMBOLS)
        rc = find_symbols(mod, df);
    if (mod && rc < 0)
        rc = find_dwarf(mod, df);
    if (rc == 0)
        dbg(DBG_SYMBOLS, 1, "%s: debug file %s", path, df->name);
    else
        dbg(DBG_SYMBOLS, 1,
            "%s: no debug file (by build ID and .gnu_debuglink in \"%s\"%s): its functions "
            "come from its own tables",
            path, df->search ? df->search : "",
            getenv("DEBUGINFOD_URLS") ? " and from debuginfod" : "");
    free(real);
    if (rc < 0)
        debug_file_close(df);
    return rc;
}

void debug_file_close(struct debug_file *df)
{
    if (df->fd >= 0 && df->elf)
        elf_end(df->elf);
    if (df->fd >= 0)
        close(df->fd);
    if (df->dwfl) /* the session's Elf handles and descriptors with it */
        dwfl_end(df->dwfl);
    free(df->name);
    free(df->search);
    *df = (struct debug_file){.fd = -1};
}
