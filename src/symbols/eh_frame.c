#include "symbols/eh_frame.h"

#include <stdlib.h>
#include <string.h>

#define DW_EH_PE_OMIT 0xff
#define DW_EH_PE_FORMAT 0x0f /* the low nibble: how the value is stored */
#define DW_EH_PE_APPLY 0x70  /* what it is relative to */
#define DW_EH_PE_INDIRECT 0x80
#define DW_EH_PE_ABSPTR 0x00
#define DW_EH_PE_ULEB128 0x01
#define DW_EH_PE_UDATA2 0x02
#define DW_EH_PE_UDATA4 0x03
#define DW_EH_PE_UDATA8 0x04
#define DW_EH_PE_SLEB128 0x09
#define DW_EH_PE_SDATA2 0x0a
#define DW_EH_PE_SDATA4 0x0b
#define DW_EH_PE_SDATA8 0x0c
#define DW_EH_PE_PCREL 0x10

#define MAX_FDES 4000000 /* a sanity bound: 16 bytes each at least, a 64 MB section */

/* A bounded window of the section: a read past end sets bad and returns 0. */
struct cursor {
    const uint8_t *data;
    size_t pos, end;
    bool bad;
};

static uint64_t read_bytes(struct cursor *c, size_t n)
{
    if (c->bad || c->pos > c->end || n > c->end - c->pos) {
        c->bad = true;
        return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) /* little-endian, whatever the host */
        v |= (uint64_t)c->data[c->pos + i] << (8 * i);
    c->pos += n;
    return v;
}

static uint64_t read_leb(struct cursor *c, bool is_signed)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t byte;
    do {
        byte = (uint8_t)read_bytes(c, 1);
        if (shift < 64)
            v |= (uint64_t)(byte & 0x7f) << shift;
        shift += 7;
    } while ((byte & 0x80) && !c->bad);
    if (is_signed && shift < 64 && (byte & 0x40))
        v |= ~(uint64_t)0 << shift;
    return v;
}

/* A value stored as enc says, at vaddr (for pcrel); false when enc is not one this reads. */
static bool read_encoded(struct cursor *c, uint8_t enc, uint64_t vaddr, uint64_t *out)
{
    uint64_t at = vaddr + c->pos, v;
    switch (enc & DW_EH_PE_FORMAT) {
    case DW_EH_PE_ABSPTR:
    case DW_EH_PE_UDATA8:
    case DW_EH_PE_SDATA8:
        v = read_bytes(c, 8);
        break;
    case DW_EH_PE_UDATA4:
        v = read_bytes(c, 4);
        break;
    case DW_EH_PE_SDATA4:
        v = (uint64_t)(int64_t)(int32_t)(uint32_t)read_bytes(c, 4);
        break;
    case DW_EH_PE_UDATA2:
        v = read_bytes(c, 2);
        break;
    case DW_EH_PE_SDATA2:
        v = (uint64_t)(int64_t)(int16_t)(uint16_t)read_bytes(c, 2);
        break;
    case DW_EH_PE_ULEB128:
        v = read_leb(c, false);
        break;
    case DW_EH_PE_SLEB128:
        v = read_leb(c, true);
        break;
    default:
        return false;
    }
    switch (enc & DW_EH_PE_APPLY) {
    case 0:
        break;
    case DW_EH_PE_PCREL:
        v += at;
        break;
    default: /* textrel, datarel, funcrel: never in an x86_64 .eh_frame's FDEs */
        return false;
    }
    *out = v;
    return !c->bad && !(enc & DW_EH_PE_INDIRECT);
}

/* What an FDE needs of its CIE. */
struct cie_info {
    uint8_t fde_encoding;
    bool signal_frame;
};

/* Reads the CIE whose record is c[c->pos, c->end) after its id; false when it does not parse. */
static bool read_cie(struct cursor *c, uint64_t vaddr, struct cie_info *cie)
{
    *cie = (struct cie_info){DW_EH_PE_ABSPTR, false};
    uint8_t version = (uint8_t)read_bytes(c, 1);
    const char *aug = (const char *)c->data + c->pos;
    size_t auglen = c->bad ? 0 : strnlen(aug, c->end - c->pos);
    if (c->bad || c->pos + auglen >= c->end || (version != 1 && version != 3))
        return false;
    c->pos += auglen + 1;
    read_leb(c, false); /* code alignment */
    read_leb(c, true);  /* data alignment */
    if (version == 1)
        read_bytes(c, 1); /* the return address column */
    else
        read_leb(c, false);
    if (aug[0] != 'z') /* no augmentation data: the default encoding */
        return !c->bad && auglen == 0;
    uint64_t datalen = read_leb(c, false);
    if (c->bad || datalen > c->end - c->pos)
        return false;
    struct cursor d = {c->data, c->pos, c->pos + (size_t)datalen, false};
    for (size_t i = 1; i < auglen && !d.bad; i++) {
        uint64_t ignored;
        switch (aug[i]) {
        case 'R':
            cie->fde_encoding = (uint8_t)read_bytes(&d, 1);
            break;
        case 'S':
            cie->signal_frame = true;
            break;
        case 'L':
            read_bytes(&d, 1);
            break;
        case 'P': {
            uint8_t enc = (uint8_t)read_bytes(&d, 1);
            if (!read_encoded(&d, enc & ~DW_EH_PE_INDIRECT, vaddr, &ignored))
                return false;
            break;
        }
        default: /* an augmentation not known: the data length says where it ends */
            i = auglen;
            break;
        }
    }
    return !d.bad;
}

/* The length word of the record at c->pos and where the record ends; false at the terminator or
 * when it does not fit. */
static bool next_record(struct cursor *c, size_t *record_end)
{
    uint64_t len = read_bytes(c, 4);
    if (len == 0xffffffff) /* 64-bit DWARF */
        len = read_bytes(c, 8);
    if (c->bad || len < 4 || len > c->end - c->pos) /* 4: the CIE id or pointer at least */
        return false;
    *record_end = c->pos + (size_t)len;
    return true;
}

/* The FDE whose record is c[c->pos, record_end) after its CIE pointer, which sits at id_pos. */
static bool read_fde(const struct cursor *whole, size_t id_pos, uint32_t cie_pointer, size_t pos,
                     size_t record_end, uint64_t vaddr, struct fde_extent *fde)
{
    if (cie_pointer > id_pos)
        return false;
    struct cursor cie_at = {whole->data, id_pos - cie_pointer, whole->end, false};
    size_t cie_end;
    if (!next_record(&cie_at, &cie_end) || read_bytes(&cie_at, 4) != 0)
        return false;
    cie_at.end = cie_end;
    struct cie_info cie;
    if (!read_cie(&cie_at, vaddr, &cie))
        return false;
    struct cursor c = {whole->data, pos, record_end, false};
    uint64_t start, size;
    uint8_t range_encoding = cie.fde_encoding & DW_EH_PE_FORMAT; /* a length: no base */
    if (cie.fde_encoding == DW_EH_PE_OMIT || !read_encoded(&c, cie.fde_encoding, vaddr, &start) ||
        !read_encoded(&c, range_encoding, vaddr, &size))
        return false;
    *fde = (struct fde_extent){start, size, cie.signal_frame};
    return true;
}

static int compare_fde(const void *a, const void *b)
{
    const struct fde_extent *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->size < y->size ? 1 : x->size > y->size ? -1 : 0; /* the widest first */
}

static int add_fde(struct fde_extent **v, size_t *n, size_t *cap, const struct fde_extent *fde)
{
    if (*n == *cap) {
        size_t more = *cap ? 2 * *cap : 256;
        struct fde_extent *grown = reallocarray(*v, more, sizeof(**v));
        if (!grown)
            return -1;
        *v = grown;
        *cap = more;
    }
    (*v)[(*n)++] = *fde;
    return 0;
}

long eh_frame_fdes(const uint8_t *data, size_t len, uint64_t vaddr, struct fde_extent **out)
{
    *out = NULL;
    size_t n = 0, cap = 0;
    struct cursor c = {data, 0, len, false};
    size_t record_end;
    while (n < MAX_FDES && next_record(&c, &record_end)) {
        size_t id_pos = c.pos;
        uint32_t id = (uint32_t)read_bytes(&c, 4);
        struct fde_extent fde;
        if (!c.bad && id != 0 && /* 0: a CIE, read when an FDE points to it */
            read_fde(&c, id_pos, id, c.pos, record_end, vaddr, &fde) && fde.size &&
            fde.start + fde.size > fde.start && add_fde(out, &n, &cap, &fde) < 0) {
            free(*out);
            *out = NULL;
            return -1;
        }
        c.pos = record_end;
    }
    if (!n)
        return 0;
    qsort(*out, n, sizeof(**out), compare_fde);
    size_t kept = 1;
    for (size_t i = 1; i < n; i++)
        if ((*out)[i].start != (*out)[kept - 1].start)
            (*out)[kept++] = (*out)[i];
    return (long)kept;
}
