/* Replays a run's binary record as calls: pairs each thread's entries and exits with a stack and
 * hands every completed call, with its depth, parent, inclusive and self time, to a callback.
 * report, graph and tree are all consumers of it.
 *
 * Memory holds the functions, the threads and their open calls, never the events, so any size of
 * run replays in the same memory.
 *
 * Functions are merged by (image path, name) into symbols: the same function seen by several
 * processes (fork, exec of the same program) is one symbol, numbered from 0 in order of first
 * appearance. */
#ifndef CALLTRACE_ANALYSIS_REPLAY_H
#define CALLTRACE_ANALYSIS_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/reader.h"
#include "util/addr_map.h"

#define REPLAY_NO_SYM UINT32_MAX

struct replay_image {
    char *path;
    uint64_t bias; /* of the first process that loaded it */
};

struct replay_sym {
    char *name;
    uint32_t image;     /* index into replay.images */
    uint64_t link_addr; /* address in the ELF file: runtime address minus bias */
    uint32_t next_same_hash;
};

struct replay_frame {
    uint32_t sym;
    uint32_t user;  /* a consumer's per-call value, set by its enter callback */
    bool recursive; /* the same symbol is already open further out on this thread */
    int64_t start_ns;
    int64_t child_ns; /* inclusive time of the direct children so far */
};

struct replay_thread {
    uint32_t pid;
    uint32_t tid;
    uint32_t order; /* 0, 1, 2... in order of first appearance */
    struct replay_frame *stack;
    size_t depth;
    size_t cap;
    void *user;
};

struct replay_call {
    const struct replay_thread *thread;
    const struct replay_frame *frame;
    const struct replay_frame *parent; /* NULL for an outermost call */
    uint32_t depth;                    /* 1 for an outermost call */
    int64_t end_ns;
    int64_t total_ns; /* inclusive */
    int64_t self_ns;  /* minus the direct children's inclusive time */
    unsigned flags;   /* EXIT_*: unfinished, unwound, inherited */
};

struct replay;

/* Every callback is optional; a non-zero return from one stops the replay. */
struct replay_ops {
    int (*thread)(void *ctx, struct replay *r, struct replay_thread *t);
    int (*enter)(void *ctx, struct replay *r, struct replay_thread *t, struct replay_frame *f);
    int (*exit)(void *ctx, struct replay *r, const struct replay_call *c);
    /* The records that are not entries and exits, as read: REC_FUNC and REC_IMAGE (after the
     * replay took them in), and REC_ARGS / REC_RETVAL, which belong to the innermost open
     * call of thread h->tid. */
    int (*record)(void *ctx, struct replay *r, const struct rec_hdr *h);
};

struct replay {
    struct rec_reader reader;
    struct clock_anchor start;
    struct clock_anchor end;
    double ns_per_tick;
    int64_t first_ns; /* the earliest time seen */
    int64_t last_ns;  /* the latest time seen */

    struct replay_image *images;
    size_t nimages;
    struct replay_sym *syms;
    size_t nsyms;
    uint32_t *func_sym; /* record function id -> symbol */
    size_t nfunc_ids;
    struct addr_map sym_by_hash; /* hash of (image, name) -> first symbol + 1 */
    uint32_t *image_ids;         /* record image id -> index into images */
    size_t nimage_ids;

    struct addr_map threads; /* tid -> struct replay_thread */
    struct replay_thread *last_thread;
    uint32_t nthreads;
    struct addr_map open_counts; /* tid << 32 | sym -> open frames + 1 */

    uint64_t events;  /* records read */
    uint64_t calls;   /* completed calls handed out, inherited ones included */
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
