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

/* The name of mod's debug file, found by libdwfl's lookup as it reads DWARF, or else a symbol
 * table: a debug file may hold the symbol table alone, and a program stripped of its DWARF only
 * keeps its symbol table. The descriptors are libdwfl's own, closed by dwfl_end. NULL when there
 * is none. */
static const char *find_for_module(Dwfl_Module *mod)
{
    Dwarf_Addr bias;
    const char *debug = NULL;
    dwfl_module_getdwarf(mod, &bias);
    dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug);
    if (debug)
        return debug;
    dwfl_module_getsymtab(mod);
    dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug);
    return debug;
}

int debug_file_open(const char *path, char **found)
{
    *found = NULL;
    /* the file's own directory is where a debug link is looked for first: /proc/PID/exe's is
     * not the program's */
    char *real = realpath(path, NULL);
    char *search = debug_file_search_path();
    Dwfl_Callbacks callbacks = {
        .find_elf = dwfl_build_id_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .section_address = dwfl_offline_section_address,
        .debuginfo_path = &search,
    };
    Dwfl *dwfl = real && search ? dwfl_begin(&callbacks) : NULL;
    Dwfl_Module *mod = dwfl ? dwfl_report_offline(dwfl, real, real, -1) : NULL;
    if (dwfl)
        dwfl_report_end(dwfl, NULL, NULL);
    const char *name = mod ? find_for_module(mod) : NULL;
    int fd = name ? open(name, O_RDONLY | O_CLOEXEC) : -1;
    if (name && fd < 0)
        err_msg("%s: %s", name, strerror(errno));
    if (fd >= 0 && !(*found = strdup(name))) {
        close(fd);
        fd = -1;
    }
    if (fd >= 0)
        dbg(DBG_SYMBOLS, 1, "%s: debug file %s", path, *found);
    else
        dbg(DBG_SYMBOLS, 1,
            "%s: no debug file (by build ID and .gnu_debuglink in \"%s\"%s): its functions "
            "come from its own tables",
            path, search ? search : "", getenv("DEBUGINFOD_URLS") ? " and from debuginfod" : "");
    if (dwfl)
        dwfl_end(dwfl);
    free(search);
    free(real);
    return fd;
}
