#include "output/process_tracks.h"

int process_tracks_init(struct process_tracks *p)
{
    *p = (struct process_tracks){0};
    if (addr_map_init(&p->reuse, 64) < 0)
        return -1;
    if (addr_map_init(&p->with_calls, 64) < 0) {
        addr_map_free(&p->reuse);
        return -1;
    }
    return 0;
}

void process_tracks_free(struct process_tracks *p)
{
    addr_map_free(&p->reuse);
    addr_map_free(&p->with_calls);
}

uint64_t process_track(struct process_tracks *p, uint32_t pid)
{
    if (pid && pid == p->last_pid)
        return p->last_track;
    uintptr_t v = (uintptr_t)addr_map_get(&p->reuse, pid);
    p->last_pid = pid;
    p->last_track = v ? pid + ((v - 1) >> 1) * PID_SPACE : pid;
    return p->last_track;
}

void process_tracks_started(struct process_tracks *p, uint32_t pid)
{
    uintptr_t v = (uintptr_t)addr_map_get(&p->reuse, pid);
    uintptr_t gen = v ? ((v - 1) >> 1) + ((v - 1) & 1) : 0;
    p->last_pid = 0;
    /* Out of memory: the process shares its pid's earlier track, nothing worse. */
    (void)addr_map_put(&p->reuse, pid, (void *)((gen << 1) + 1));
}

bool process_tracks_first_call(struct process_tracks *p, uint32_t pid)
{
    uint64_t track = process_track(p, pid);
    if (addr_map_get(&p->with_calls, track))
        return false;
    (void)addr_map_put(&p->with_calls, track, (void *)1); /* out of memory: counted again */
    return true;
}

void process_tracks_ended(struct process_tracks *p, uint32_t pid)
{
    uintptr_t v = (uintptr_t)addr_map_get(&p->reuse, pid);
    if (v)
        (void)addr_map_put(&p->reuse, pid, (void *)(((v - 1) | 1) + 1));
    p->last_pid = 0;
}
