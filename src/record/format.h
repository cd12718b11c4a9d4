/* The binary record (RUN/events.ctr): the source of truth of a run. The engine appends to it
 * as it goes; trace.json and every report are derived from it.
 *
 *   header   struct rec_header (64 bytes), end anchor filled in when the run ends cleanly
 *   records  each starts with struct rec_hdr {type, flags, size, tid}; size covers the whole
 *            record and is a multiple of 8; unknown types are skipped by size
 *
 * Entries and exits are written packed, many to a REC_CALLS record (record/call_pack.h); the
 * reader hands them out one by one as the 24-byte struct rec_call of REC_ENTER and REC_EXIT,
 * which a record may also hold whole. The engine emits exits in LIFO order per thread (it
 * resolves tail calls, longjmp and exceptions itself), so a reader pairs them with a stack per
 * thread.
 *
 * Call sites (record --callsites): each entry's return address, the address after the call
 * instruction, in records an older reader skips by their type or reads the start of, so that
 * the version stays 2 and a record without them is byte for byte what it was: a REC_CALLSITES
 * record right after each REC_CALLS record (one address per packed entry), and a REC_ENTER
 * record written whole is 32 bytes, struct rec_call_from. */
#ifndef CALLTRACE_RECORD_FORMAT_H
#define CALLTRACE_RECORD_FORMAT_H

#include <stdint.h>

#include "record/clock.h"

#define REC_MAGIC "CTRACE\x00\x01"
/* The version says what a reader must understand to read the calls at all: a new record type
 * or a longer record an older reader can skip or read the start of (REC_CALLSITES) keeps it. */
#define REC_VERSION 2     /* 2: entries and exits packed in REC_CALLS */
#define REC_VERSION_MIN 1 /* the oldest a reader still reads: 1 has the same records, unpacked */
#define REC_FILE_NAME "events.ctr"

struct rec_header {
    char magic[8];
    uint32_t version;
    uint32_t flags; /* REC_F_* */
    struct clock_anchor start;
    struct clock_anchor end; /* zero until the run ends cleanly */
    double ns_per_tick;      /* from the start-up calibration */
    uint64_t dropped_calls;  /* calls made but not recorded (inject: full rings); at the end */
};

#define REC_F_TSC 1u
#define REC_F_COMPLETE 2u /* the end anchor is valid and the run ended cleanly */

enum rec_type {
    REC_FUNC = 1,    /* a traced function: id, its image, address, size, name */
    REC_PROCESS,     /* a process starts or execs: pid, parent, command line */
    REC_THREAD,      /* a thread starts */
    REC_ENTER,       /* a call starts */
    REC_EXIT,        /* the innermost open call of the thread ends */
    REC_THREAD_END,  /* a thread ends */
    REC_PROCESS_END, /* a process ends: exit status */
    REC_CLOCK,       /* a clock anchor, written periodically for recovery */
    REC_IMAGE,       /* an executable or library functions were taken from: id, bias, path */
    REC_ARGS,        /* right after a REC_ENTER: the raw bytes of its arguments (rec_values) */
    REC_RETVAL,      /* right before the REC_EXIT of a call that returned: its result's bytes */
    REC_CALLS,       /* entries and exits of one thread, packed (record/call_pack.h) */
    REC_CALLSITES,   /* right after a REC_CALLS: the return address of each entry in it */
};

/* REC_EXIT flags */
#define EXIT_UNFINISHED 1u /* still open when its thread or process ended */
#define EXIT_UNWOUND 2u    /* left by longjmp or an exception; end time is when it was seen */
#define EXIT_INHERITED 4u  /* a frame a forked child inherited from its parent */

/* REC_FUNC flags; a record written before they existed has none, and an older reader ignores
 * them (no new REC_VERSION). FUNC_BREAKPOINT: traced by a breakpoint in a run of the inject
 * engine, so each of its calls' times includes two ptrace stops, unlike the others'. */
#define FUNC_BREAKPOINT 1u

/* REC_PROCESS flags */
#define PROCESS_EXEC 1u /* the same process, now running a new image */

struct rec_hdr {
    uint8_t type;
    uint8_t flags;
    uint16_t size;
    uint32_t tid;
};

struct rec_call {
    struct rec_hdr hdr; /* REC_ENTER / REC_EXIT */
    uint32_t func;
    uint32_t pid;
    uint64_t ticks;
};

/* A REC_ENTER record with the call's return address: its size says which it is. */
struct rec_call_from {
    struct rec_call call;
    uint64_t ret_addr; /* 0: not known */
};

struct rec_calls {
    struct rec_hdr hdr; /* REC_CALLS: tid; size: padded to 8 */
    uint32_t pid;
    uint32_t count; /* events packed after it */
    uint64_t ticks; /* what the first event's delta is from */
};

/* REC_CALLSITES: then count varints (record/call_pack.h), zigzag(address - the one before; the
 * first: from 0), one per REC_ENTER of the REC_CALLS record just before, in their order; an
 * address of 0 is not known. Zero bytes pad it to a multiple of 8. */
struct rec_callsites {
    struct rec_hdr hdr; /* REC_CALLSITES: the tid of its REC_CALLS */
    uint32_t pid;
    uint32_t count;
};

struct rec_func {
    struct rec_hdr hdr;
    uint32_t func;
    uint32_t image;
    uint64_t addr; /* runtime address in the process that loaded the image */
    uint32_t size;
    uint32_t name_len;
    /* name bytes follow, padded to 8 */
};

struct rec_image {
    struct rec_hdr hdr; /* tid = pid of the process it was loaded in */
    uint32_t image;
    uint32_t name_len;
    uint64_t bias; /* runtime address minus link-time address */
    /* path bytes follow, padded to 8 */
};

struct rec_process {
    struct rec_hdr hdr; /* tid = pid */
    uint32_t ppid;
    uint32_t name_len;
    uint64_t ticks;
    /* name bytes follow (the command line, arguments separated by spaces), padded to 8 */
};

struct rec_thread {
    struct rec_hdr hdr;
    uint32_t pid;
    uint32_t reserved;
    uint64_t ticks;
};

struct rec_end {
    struct rec_hdr hdr; /* REC_THREAD_END: tid; REC_PROCESS_END: tid = pid */
    int32_t status;     /* wait status for a process */
    uint32_t pid;
    uint64_t ticks;
};

struct rec_clock {
    struct rec_hdr hdr;
    uint32_t reserved[2];
    struct clock_anchor anchor;
};

/* REC_ARGS / REC_RETVAL: what the engine copied at the stop, unformatted (the DWARF types that
 * give it meaning are read again when the record is written out). nchunks struct rec_chunk
 * follow, each followed by its len bytes padded to 8. */
struct rec_values {
    struct rec_hdr hdr;
    uint32_t func;
    uint32_t nchunks;
};

enum rec_chunk_kind {
    CHUNK_GPR = 1, /* entry: rdi rsi rdx rcx r8 r9; return: rax rdx (8 bytes each) */
    CHUNK_XMM,     /* entry: xmm0-7; return: xmm0 xmm1 (16 bytes each) */
    CHUNK_X87,     /* return: st(0), 16 bytes of which 10 hold the value */
    CHUNK_STACK,   /* entry: the stack arguments, from addr = rsp + 8 */
    CHUNK_MEM,     /* memory a pointer of parameter `param` points to, from addr */
};

#define CHUNK_UNREADABLE 1u  /* CHUNK_MEM/CHUNK_STACK: nothing could be read at addr */
#define CHUNK_CUT 2u         /* the bytes stop at a limit: a string without its end, a cap */
#define CHUNK_RESULT 0xffffu /* param of a CHUNK_MEM read for the return value */

struct rec_chunk {
    uint8_t kind;  /* enum rec_chunk_kind */
    uint8_t flags; /* CHUNK_* */
    uint16_t param;
    uint32_t len;
    uint64_t addr;
};

#define REC_MAX_SIZE 65528 /* rec_hdr.size is 16 bits and records are multiples of 8 */

#define REC_MAX_NAME 4096

#endif
