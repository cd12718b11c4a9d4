/* Replays a run's binary record as calls, named: the calls come from the record's one pairing
 * reader (record/call_reader.h), with their depth, parent, inclusive and self time; the replay
 * adds the names. report, graph and tree are all consumers of it.
 *
 * Memory holds the functions, the threads and their open calls, never the events, so any size of
 * run replays in the same memory.
 *
 * Functions are merged by (image path, name) into symbols: the same function seen by several
 * processes (fork, exec of the same program) is one symbol, numbered from 0 in order of first
 * appearance. A call's frame->sym is its symbol, frame->recursive says whether the same symbol is
 * already open further out on its thread. */
#ifndef CALLTRACE_ANALYSIS_REPLAY_H
#define CALLTRACE_ANALYSIS_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/call_reader.h"
#include "util/addr_map.h"

#define REPLAY_NO_SYM UINT32_MAX

struct replay_image {
    char *path;
    uint64_t bias; /* of the first process that loaded it */
};

/* An image as one process loaded it: where it is there (a call site's address is looked up in
 * the images of the process that made the call). */
struct replay_load {
    uint32_t pid;
    uint32_t image; /* index into replay.images */
    uint64_t bias;
};

struct replay_sym {
    char *name;
    uint32_t image;     /* index into replay.images */
    uint64_t link_addr; /* address in the ELF file: runtime address minus bias */
    uint32_t next_same_hash;
    /* some process traced it by a breakpoint (FUNC_BREAKPOINT): its times include the stops */
    bool breakpoint;
};

/* Record ids (of functions, of images) to indexes: an array while the ids are dense, as the
 * engine numbers them; an id far past those seen so far (a damaged record may hold any 32-bit
 * id) goes to a hash map instead, so that memory stays in proportion to the record. */
struct replay_ids {
    uint32_t *dense; /* UINT32_MAX: not named */
    size_t ndense;
    size_t named;
    struct addr_map sparse; /* id -> index + 1 */
};

struct replay;

/* Every callback is optional; a non-zero return from one stops the replay. */
struct replay_ops {
    int (*enter)(void *ctx, struct replay *r, struct call_thread *t, struct call_frame *f);
    /* A REC_ARGS / REC_RETVAL of f, the innermost open call of t: 1 keeps a copy in f. NULL:
     * values are not kept. */
    int (*values)(void *ctx, struct replay *r, struct call_thread *t, struct call_frame *f,
                  const struct rec_hdr *h);
    int (*exit)(void *ctx, struct replay *r, const struct call_done *c);
    /* The records that are not entries and exits, as read: REC_FUNC and REC_IMAGE (after the
     * replay took them in). */
    int (*record)(void *ctx, struct replay *r, const struct rec_hdr *h);
};

struct replay {
    struct call_reader calls; /* the record, read as calls; its threads: tid -> call_thread */

    struct replay_image *images;
    size_t nimages;
    struct replay_sym *syms;
    size_t nsyms;
    struct replay_ids func_sym;  /* record function id -> symbol */
    struct addr_map sym_by_hash; /* hash of (image, name) -> first symbol + 1 */
    struct replay_ids image_ids; /* record image id -> index into images */
    struct replay_load *loads;   /* each (process, image) the record named, in its order */
    size_t nloads;
    struct addr_map open_counts; /* tid << 32 | sym -> open frames + 1 */

    uint64_t events;  /* records read */
    bool complete;    /* the header says the run ended cleanly */
    uint64_t dropped; /* calls the engine could not record (the header's count) */
    int damaged;      /* 1 truncated, 2 corrupt */

    const struct replay_ops *ops;
    void *ctx;
};

/* Opens record_path. Returns 0, or -1 after printing one error line. */
int replay_open(struct replay *r, const char *record_path);
/* Reads to the end. Returns 0, -1 after printing an error, or a callback's non-zero value. */
int replay_run(struct replay *r, const struct replay_ops *ops, void *ctx);
void replay_close(struct replay *r);

static inline const struct replay_sym *replay_sym(const struct replay *r, uint32_t sym)
{
    return &r->syms[sym];
}

static inline const char *replay_sym_image(const struct replay *r, uint32_t sym)
{
    return r->images[r->syms[sym].image].path;
}

#endif
