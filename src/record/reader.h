/* Streams the records of RUN/events.ctr back, validating each one: memory stays bounded by the
 * read buffer whatever the size of the run. */
#ifndef CALLTRACE_RECORD_READER_H
#define CALLTRACE_RECORD_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/format.h"

struct rec_reader {
    int fd;
    struct rec_header header;
    uint8_t *buf;
    size_t cap;
    size_t pos;
    size_t len;
    bool eof;
    bool truncated;                  /* the file ends inside a record */
    bool corrupt;                    /* a record with an impossible size or type layout */
    uint64_t offset;                 /* file offset of buf[0] */
    struct clock_anchor last_anchor; /* the latest REC_CLOCK seen */
    /* The REC_CALLS record being handed out, one struct rec_call at a time (an entry whose
     * return address the REC_CALLSITES record after it holds: a struct rec_call_from). */
    struct {
        uint8_t *bytes; /* its packed events, copied out of buf */
        size_t len, pos;
        uint32_t left;  /* events still to come */
        uint64_t ticks; /* the last one's */
        struct rec_call_from call;
        uint8_t *sites; /* the packed addresses, copied out of buf: allocated on first sight */
        size_t sites_len, sites_pos;
        uint32_t sites_left;
        uint64_t site; /* the last one */
    } calls;
};

/* Opens the record name in the directory dir (AT_FDCWD: name is a path). Returns 0, or -1
 * with why filled (not a record, unreadable). */
int rec_reader_open(struct rec_reader *r, int dir, const char *name, char *why, size_t whylen);
/* The next record, valid until the next call; NULL at the end or on damage. Packed entries
 * and exits (REC_CALLS) come out one by one as REC_ENTER and REC_EXIT, an entry with its
 * return address (REC_CALLSITES) as a struct rec_call_from. */
const struct rec_hdr *rec_reader_next(struct rec_reader *r);
void rec_reader_close(struct rec_reader *r);
/* The name bytes that follow a REC_FUNC, REC_PROCESS or REC_IMAGE record. */
const char *rec_name(const struct rec_hdr *h, uint32_t *len);

#endif
