#include "tracer/stack_region.h"

#include "symbols/proc_maps.h"

/* Reading /proc/PID/maps costs tens of microseconds: it happens once per thread and stack, the
 * two most recent stacks are remembered. The main stack's range includes the gap below it that
 * it grows into, so deep recursion does not miss. */
uint64_t stack_region(struct thread *t, uint64_t sp)
{
    for (int i = 0; i < 2; i++)
        if (sp >= t->region_lo[i] && sp < t->region_hi[i])
            return t->region_hi[i];
    struct mapping_list maps;
    if (maps_read(t->proc->pid, &maps) < 0)
        return 0;
    uint64_t lo = 0, hi = 0, prev_end = 0;
    for (size_t i = 0; i < maps.count; i++) {
        const struct mapping *m = &maps.maps[i];
        if (sp >= m->start && sp < m->end) {
            lo = m->is_stack ? prev_end : m->start;
            hi = m->end;
            break;
        }
        if (m->is_stack && sp >= prev_end && sp < m->start) {
            lo = prev_end; /* in the growth gap, not yet faulted in */
            hi = m->end;
            break;
        }
        prev_end = m->end;
    }
    maps_free(&maps);
    if (!hi)
        return 0;
    unsigned slot = t->region_next++ & 1;
    t->region_lo[slot] = lo;
    t->region_hi[slot] = hi;
    return hi;
}
