/* The track a process's calls are shown on: its pid, or, for a pid the kernel gave again to a
 * later process of the run, pid + generation * 2^22, so that two processes never share a track.
 * pid_max never exceeds 2^22. Shared by trace.json and trace.pftrace, which show the same
 * processes. */
#ifndef CALLTRACE_OUTPUT_PROCESS_TRACKS_H
#define CALLTRACE_OUTPUT_PROCESS_TRACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/addr_map.h"

#define PID_SPACE (1ull << 22)

struct process_tracks {
    struct addr_map reuse;      /* pid -> ((generation << 1) | ended) + 1 */
    struct addr_map with_calls; /* track -> (void *)1: a call of it was shown */
    uint32_t last_pid;          /* process_track's last answer, for a run of calls of one process */
    uint64_t last_track;
};

int process_tracks_init(struct process_tracks *p);
void process_tracks_free(struct process_tracks *p);
uint64_t process_track(struct process_tracks *p, uint32_t pid);
/* A REC_PROCESS that is not an exec: a pid whose earlier process ended gets a new track. */
void process_tracks_started(struct process_tracks *p, uint32_t pid);
void process_tracks_ended(struct process_tracks *p, uint32_t pid);
/* Is this the first call shown of the process pid runs now (its track's)? */
bool process_tracks_first_call(struct process_tracks *p, uint32_t pid);

#endif
