/* /proc/PID/maps and /proc/PID/auxv: where things are mapped in a live process. */
#ifndef CALLTRACE_SYMBOLS_PROC_MAPS_H
#define CALLTRACE_SYMBOLS_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mapping {
    uint64_t start;
    uint64_t end;
    bool exec;
    bool write;
    bool is_stack; /* [stack]: grows down into the gap below it */
};

struct mapping_list {
    struct mapping *maps;
    size_t count;
};

int maps_read(pid_t pid, struct mapping_list *list);
void maps_free(struct mapping_list *list);
/* The mapping containing addr, or NULL. */
const struct mapping *maps_find(const struct mapping_list *list, uint64_t addr);
/* A free range of size bytes within +-reach of near, page aligned; 0 when none. */
uint64_t maps_find_gap(const struct mapping_list *list, uint64_t near, uint64_t size,
                       uint64_t reach);
/* AT_ENTRY from /proc/PID/auxv, or 0. */
uint64_t auxv_entry(pid_t pid);
/* Any entry of /proc/PID/auxv (AT_BASE: where the dynamic linker is), or 0. */
uint64_t auxv_value(pid_t pid, uint64_t type);
/* The file mapped at addr in pid; 0, or -1 when addr maps no file (or path is too short). */
int maps_path_at(pid_t pid, uint64_t addr, char *path, size_t len);

#endif
