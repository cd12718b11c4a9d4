#include "analysis/source_file.h"

#include <bsd/stdlib.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/debug_file.h"
#include "symbols/demangle.h"
#include "util/addr_map.h"
#include "util/log.h"

struct source_image {
    bool tried;
    char *debug_path;         /* the debug file lookup's search path (symbols/debug_file.h) */
    Dwfl_Callbacks callbacks; /* dwfl keeps a pointer to them */
    Dwfl *dwfl;
    Dwfl_Module *mod;
    Dwarf_Addr bias;       /* dwfl's addresses minus the file's */
    struct addr_map lines; /* link address + 1 -> struct source_line, or &no_line */
};

static struct source_line no_line;

static void open_image(struct source_image *im, const char *path)
{
    im->tried = true;
    if (strcmp(path, "?") == 0)
        return;
    /* Offline: the file as it is on disk, with its separate debug file found as the symbols'
     * is */
    im->debug_path = debug_file_search_path();
    im->callbacks = (Dwfl_Callbacks){
        .find_elf = dwfl_build_id_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .section_address = dwfl_offline_section_address,
        .debuginfo_path = &im->debug_path,
    };
    im->dwfl = im->debug_path ? dwfl_begin(&im->callbacks) : NULL;
    if (!im->dwfl)
        return;
    im->mod = dwfl_report_offline(im->dwfl, path, path, -1);
    dwfl_report_end(im->dwfl, NULL, NULL);
    if (!im->mod || !dwfl_module_getdwarf(im->mod, &im->bias)) {
        dbg(DBG_SYMBOLS, 1, "%s: no debug information: %s", path, dwfl_errmsg(-1));
        im->mod = NULL;
    }
}

/* The image's DWARF, opened on first use; NULL when it has none. */
static struct source_image *image_of(struct source_files *sf, size_t image, const char *image_path)
{
    if (image >= sf->nimages) {
        size_t n = image + 8;
        struct source_image *images = reallocarray(sf->images, n, sizeof(*images));
        if (!images)
            return NULL;
        memset(images + sf->nimages, 0, (n - sf->nimages) * sizeof(*images));
        sf->images = images;
        sf->nimages = n;
    }
    struct source_image *im = &sf->images[image];
    if (!im->tried)
        open_image(im, image_path);
    return im->mod ? im : NULL;
}

const char *source_file_of(struct source_files *sf, size_t image, const char *image_path,
                           uint64_t link_addr)
{
    struct source_image *im = image_of(sf, image, image_path);
    if (!im)
        return NULL;
    Dwarf_Addr cu_bias;
    Dwarf_Die *cu = dwfl_module_addrdie(im->mod, link_addr + im->bias, &cu_bias);
    return cu ? dwarf_diename(cu) : NULL;
}

/* The subprogram DIE whose code starts at addr (a dwfl address), among scope's children and
 * those of its namespaces and classes. */
static bool subprogram_at(Dwarf_Die *scope, Dwarf_Addr addr, Dwarf_Addr bias, Dwarf_Die *out,
                          int depth)
{
    Dwarf_Die child;
    if (depth > 8 || dwarf_child(scope, &child) != 0)
        return false;
    do {
        int tag = dwarf_tag(&child);
        Dwarf_Addr low;
        if (tag == DW_TAG_subprogram && dwarf_lowpc(&child, &low) == 0 && low + bias == addr) {
            *out = child;
            return true;
        }
        if ((tag == DW_TAG_namespace || tag == DW_TAG_structure_type || tag == DW_TAG_class_type) &&
            subprogram_at(&child, addr, bias, out, depth + 1))
            return true;
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

/* Is the function the record calls name the one at addr in this file? */
static bool same_function(Dwfl_Module *mod, Dwarf_Addr addr, const char *name)
{
    GElf_Sym sym;
    GElf_Off offset;
    const char *here = dwfl_module_addrinfo(mod, addr, &offset, &sym, NULL, NULL, NULL);
    if (!here || offset != 0)
        return false;
    char *dm = demangle(here);
    bool same = dm && strcmp(dm, name) == 0;
    free(dm);
    return same;
}

static struct source_line *look_up_line(struct source_image *im, uint64_t link_addr,
                                        const char *name)
{
    Dwarf_Addr addr = link_addr + im->bias, cu_bias;
    if (!same_function(im->mod, addr, name))
        return &no_line;
    struct source_line found = {0};
    Dwarf_Die *cu = dwfl_module_addrdie(im->mod, addr, &cu_bias);
    Dwarf_Die fn;
    int line;
    if (cu && subprogram_at(cu, addr, cu_bias, &fn, 0) && (found.file = dwarf_decl_file(&fn)) &&
        dwarf_decl_line(&fn, &line) == 0 && line > 0) {
        found.line = (unsigned)line;
    } else {
        Dwfl_Line *l = dwfl_module_getsrc(im->mod, addr);
        found.file = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
        found.line = found.file && line > 0 ? (unsigned)line : 0;
    }
    if (!found.file || !found.line)
        return &no_line;
    struct source_line *copy = malloc(sizeof(*copy));
    if (copy)
        *copy = found;
    return copy ? copy : &no_line;
}

bool source_line_of(struct source_files *sf, size_t image, const char *image_path,
                    uint64_t link_addr, const char *name, struct source_line *out)
{
    struct source_image *im = image_of(sf, image, image_path);
    if (!im || (!im->lines.slots && addr_map_init(&im->lines, 64) < 0))
        return false;
    struct source_line *known = addr_map_get(&im->lines, link_addr + 1);
    if (!known) {
        known = look_up_line(im, link_addr, name);
        if (addr_map_put(&im->lines, link_addr + 1, known) < 0) {
            if (known != &no_line)
                free(known);
            return false;
        }
    }
    *out = *known;
    return known != &no_line;
}

void source_files_free(struct source_files *sf)
{
    for (size_t i = 0; i < sf->nimages; i++) {
        ADDR_MAP_FOREACH(&sf->images[i].lines, slot)
        if (slot->value != &no_line)
            free(slot->value);
        addr_map_free(&sf->images[i].lines);
    }
    for (size_t i = 0; i < sf->nimages; i++) {
        if (sf->images[i].dwfl)
            dwfl_end(sf->images[i].dwfl);
        free(sf->images[i].debug_path);
    }
    free(sf->images);
    sf->images = NULL;
    sf->nimages = 0;
}
