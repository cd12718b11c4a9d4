#include "analysis/source_file.h"

#include <bsd/stdlib.h>
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

struct source_image {
    bool tried;
    Dwfl *dwfl;
    Dwfl_Module *mod;
    Dwarf_Addr bias; /* dwfl's addresses minus the file's */
};

/* Offline: the file as it is on disk, with separate debug files found the standard way
 * (/usr/lib/debug, .gnu_debuglink, build-id). */
static const Dwfl_Callbacks offline = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static void open_image(struct source_image *im, const char *path)
{
    im->tried = true;
    if (strcmp(path, "?") == 0)
        return;
    im->dwfl = dwfl_begin(&offline);
    if (!im->dwfl)
        return;
    im->mod = dwfl_report_offline(im->dwfl, path, path, -1);
    dwfl_report_end(im->dwfl, NULL, NULL);
    if (!im->mod || !dwfl_module_getdwarf(im->mod, &im->bias)) {
        dbg(DBG_SYMBOLS, 1, "%s: no debug information: %s", path, dwfl_errmsg(-1));
        im->mod = NULL;
    }
}

const char *source_file_of(struct source_files *sf, size_t image, const char *image_path,
                           uint64_t link_addr)
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
    if (!im->mod)
        return NULL;
    Dwarf_Addr cu_bias;
    Dwarf_Die *cu = dwfl_module_addrdie(im->mod, link_addr + im->bias, &cu_bias);
    return cu ? dwarf_diename(cu) : NULL;
}

void source_files_free(struct source_files *sf)
{
    for (size_t i = 0; i < sf->nimages; i++)
        if (sf->images[i].dwfl)
            dwfl_end(sf->images[i].dwfl);
    free(sf->images);
    sf->images = NULL;
    sf->nimages = 0;
}
