#include "analysis/call_site.h"

/* ret_addr in the images process pid loaded, or with any_pid in every process's (a forked
 * child's images are its parent's, which the record named). */
static bool in_loads(struct source_files *sf, const struct replay *r, bool any_pid, uint32_t pid,
                     uint64_t ret_addr, struct source_line *out)
{
    for (size_t i = 0; i < r->nloads; i++) {
        const struct replay_load *l = &r->loads[i];
        if (!any_pid && l->pid != pid)
            continue;
        /* the call instruction ends at the return address: its last byte is in the call's
         * line, the return address may begin the next one */
        if (source_line_at(sf, l->image, r->images[l->image].path, ret_addr - 1 - l->bias, out))
            return true;
    }
    return false;
}

/* Did the record name an image of process pid? */
static bool has_loads(const struct replay *r, uint32_t pid)
{
    for (size_t i = 0; i < r->nloads; i++)
        if (r->loads[i].pid == pid)
            return true;
    return false;
}

bool call_site_line(struct source_files *sf, const struct replay *r, uint32_t pid,
                    uint64_t ret_addr, struct source_line *out)
{
    if (!ret_addr)
        return false;
    /* a forked child is described by its parent's images: the record names them once */
    return in_loads(sf, r, !has_loads(r, pid), pid, ret_addr, out);
}
