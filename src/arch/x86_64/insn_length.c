/* The length of an x86-64 instruction, by hand, for the instructions ordinary compiled code is
 * made of; capstone decodes the others (insn.c).
 *
 * Why by hand: attaching to a program scans every traced function's whole body (a branch into
 * the bytes a jump would cover makes a function unpatchable), with every thread of the program
 * stopped. capstone formats each instruction's text as it decodes it, which no option turns off:
 * on redis-server (3,250 functions, ~300k instructions) it took 85 % of the attach time, the
 * program frozen meanwhile. A table lookup per opcode is ~50 times cheaper.
 *
 * Whatever this decoder is not sure of, it leaves to capstone (returns 0): VEX, EVEX and XOP
 * instructions, the 0f 38 and 0f 3a maps, 3DNow!, opcodes invalid in 64-bit mode, control
 * and debug register moves, hint nops other than 0f 1f, a REX prefix that is not last, 16-bit
 * branches, more than 15 bytes. tests/unit/test_insn_length.c and the fuzz target
 * fuzz_insn_length check, on real programs' code and on random bytes, that every length it
 * gives is capstone's.
 *
 *   [legacy prefixes] [REX] opcode [ModRM [SIB] [displacement]] [immediate]
 *
 * ModRM: mod 3 is a register; else rm 4 adds a SIB byte, mod 1 a disp8, mod 2 a disp32, and
 * mod 0 a disp32 for rm 5 (rip-relative) or for a SIB whose base is 5. */
#include "arch/x86_64/insn_length.h"

#include <string.h>

#define MAX_INSN_LEN 15

/* How an opcode goes on after its byte(s). */
enum {
    NONE,   /* nothing more */
    MODRM,  /* a ModRM operand */
    MODRM1, /* a ModRM operand, then an imm8 */
    MODRMZ, /* a ModRM operand, then an imm16/32 (16 with the 66 prefix) */
    IMM1,   /* an imm8 (or rel8) */
    IMM2,   /* an imm16 */
    IMMZ,   /* an imm16/32 */
    IMMV,   /* b8..bf: an imm16/32, or an imm64 with REX.W */
    MOFFS,  /* a0..a3: an address, 8 bytes (4 with the 67 prefix) */
    ENTER,  /* c8: imm16, imm8 */
    GROUP3, /* f6/f7: a ModRM; test (reg 0, 1) has an imm8 (f6) or imm16/32 (f7) too */
    ASK,    /* capstone's: see the header */
};

/* The one-byte map. Prefixes (26 2e 36 3e 64 65 66 67 f0 f2 f3, REX 40..4f) are read before. */
static const unsigned char one_byte[256] = {
    /* 00 */ MODRM,  MODRM,  MODRM, MODRM,  IMM1,  IMMZ,  ASK,    ASK,
    /* 08 */ MODRM,  MODRM,  MODRM, MODRM,  IMM1,  IMMZ,  ASK,    ASK,
    /* 10 */ MODRM,  MODRM,  MODRM, MODRM,  IMM1,  IMMZ,  ASK,    ASK,
    /* 18 */ MODRM,  MODRM,  MODRM, MODRM,  IMM1,  IMMZ,  ASK,    ASK,
    /* 20 */ MODRM,  MODRM,  MODRM, MODRM,  IMM1,  IMMZ,  ASK,    ASK,
    /* 28 */ MODRM,  MODRM,  MODRM, MODRM,  IMM1,  IMMZ,  ASK,    ASK,
    /* 30 */ MODRM,  MODRM,  MODRM, MODRM,  IMM1,  IMMZ,  ASK,    ASK,
    /* 38 */ MODRM,  MODRM,  MODRM, MODRM,  IMM1,  IMMZ,  ASK,    ASK,
    /* 40 */ ASK,    ASK,    ASK,   ASK,    ASK,   ASK,   ASK,    ASK,
    /* 48 */ ASK,    ASK,    ASK,   ASK,    ASK,   ASK,   ASK,    ASK,
    /* 50 */ NONE,   NONE,   NONE,  NONE,   NONE,  NONE,  NONE,   NONE,
    /* 58 */ NONE,   NONE,   NONE,  NONE,   NONE,  NONE,  NONE,   NONE,
    /* 60 */ ASK,    ASK,    ASK,   MODRM,  ASK,   ASK,   ASK,    ASK,
    /* 68 */ IMMZ,   MODRMZ, IMM1,  MODRM1, NONE,  NONE,  NONE,   NONE,
    /* 70 */ IMM1,   IMM1,   IMM1,  IMM1,   IMM1,  IMM1,  IMM1,   IMM1,
    /* 78 */ IMM1,   IMM1,   IMM1,  IMM1,   IMM1,  IMM1,  IMM1,   IMM1,
    /* 80 */ MODRM1, MODRMZ, ASK,   MODRM1, MODRM, MODRM, MODRM,  MODRM,
    /* 88 */ MODRM,  MODRM,  MODRM, MODRM,  ASK,   MODRM, ASK,    ASK,
    /* 90 */ NONE,   NONE,   NONE,  NONE,   NONE,  NONE,  NONE,   NONE,
    /* 98 */ NONE,   NONE,   ASK,   ASK,    NONE,  NONE,  NONE,   NONE,
    /* a0 */ MOFFS,  MOFFS,  MOFFS, MOFFS,  NONE,  NONE,  NONE,   NONE,
    /* a8 */ IMM1,   IMMZ,   NONE,  NONE,   NONE,  NONE,  NONE,   NONE,
    /* b0 */ IMM1,   IMM1,   IMM1,  IMM1,   IMM1,  IMM1,  IMM1,   IMM1,
    /* b8 */ IMMV,   IMMV,   IMMV,  IMMV,   IMMV,  IMMV,  IMMV,   IMMV,
    /* c0 */ MODRM1, MODRM1, IMM2,  NONE,   ASK,   ASK,   MODRM1, MODRMZ,
    /* c8 */ ENTER,  NONE,   ASK,   ASK,    NONE,  IMM1,  ASK,    NONE,
    /* d0 */ MODRM,  MODRM,  MODRM, MODRM,  ASK,   ASK,   ASK,    NONE,
    /* d8 */ ASK,    ASK,    ASK,   ASK,    ASK,   ASK,   ASK,    ASK,
    /* e0 */ IMM1,   IMM1,   IMM1,  IMM1,   IMM1,  IMM1,  IMM1,   IMM1,
    /* e8 */ IMMZ,   IMMZ,   ASK,   IMM1,   NONE,  NONE,  NONE,   NONE,
    /* f0 */ ASK,    NONE,   ASK,   ASK,    NONE,  NONE,  GROUP3, GROUP3,
    /* f8 */ NONE,   NONE,   NONE,  NONE,   NONE,  NONE,  MODRM,  MODRM,
};

/* The two-byte map, after 0f. */
static const unsigned char two_byte[256] = {
    /* 00 */ ASK,    ASK,   MODRM,  MODRM, ASK,    NONE,  NONE,   NONE,
    /* 08 */ NONE,   NONE,  ASK,    NONE,  ASK,    ASK,   ASK,    ASK,
    /* 10 */ MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM,
    /* 18 */ ASK,    ASK,   ASK,    ASK,   ASK,    ASK,   ASK,    MODRM,
    /* 20 */ ASK,    ASK,   ASK,    ASK,   ASK,    ASK,   ASK,    ASK,
    /* 28 */ MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM,
    /* 30 */ NONE,   NONE,  NONE,   NONE,  NONE,   NONE,  ASK,    ASK,
    /* 38 */ ASK,    ASK,   ASK,    ASK,   ASK,    ASK,   ASK,    ASK,
    /* 40 */ MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM,
    /* 48 */ MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM,
    /* 50 */ ASK,    MODRM, MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM,
    /* 58 */ MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM,
    /* 60 */ MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM,
    /* 68 */ MODRM,  MODRM, MODRM,  MODRM, ASK,    ASK,   MODRM,  MODRM,
    /* 70 */ MODRM1, ASK,   ASK,    ASK,   MODRM,  MODRM, MODRM,  NONE,
    /* 78 */ ASK,    ASK,   ASK,    ASK,   ASK,    ASK,   MODRM,  MODRM,
    /* 80 */ IMMZ,   IMMZ,  IMMZ,   IMMZ,  IMMZ,   IMMZ,  IMMZ,   IMMZ,
    /* 88 */ IMMZ,   IMMZ,  IMMZ,   IMMZ,  IMMZ,   IMMZ,  IMMZ,   IMMZ,
    /* 90 */ MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM,
    /* 98 */ MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM,
    /* a0 */ NONE,   NONE,  NONE,   MODRM, MODRM1, MODRM, ASK,    ASK,
    /* a8 */ NONE,   NONE,  NONE,   MODRM, MODRM1, MODRM, ASK,    MODRM,
    /* b0 */ MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM,
    /* b8 */ ASK,    ASK,   MODRM1, MODRM, MODRM,  MODRM, MODRM,  MODRM,
    /* c0 */ MODRM,  MODRM, MODRM1, MODRM, MODRM1, ASK,   MODRM1, ASK,
    /* c8 */ NONE,   NONE,  NONE,   NONE,  NONE,   NONE,  NONE,   NONE,
    /* d0 */ ASK,    MODRM, MODRM,  MODRM, MODRM,  MODRM, ASK,    ASK,
    /* d8 */ MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM,
    /* e0 */ MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM, ASK,    MODRM,
    /* e8 */ MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM,
    /* f0 */ ASK,    MODRM, MODRM,  MODRM, MODRM,  MODRM, MODRM,  ASK,
    /* f8 */ MODRM,  MODRM, MODRM,  MODRM, MODRM,  MODRM, MODRM,  ASK,
};

struct prefixes {
    size_t len;        /* bytes of prefixes, REX included */
    bool operand_size; /* 66 */
    bool address_size; /* 67 */
    bool rep;          /* f3 */
    bool repne;        /* f2 */
    bool lock;         /* f0 */
    unsigned rex;      /* the REX byte, or 0 */
};

static bool is_legacy_prefix(uint8_t b)
{
    static const bool legacy[256] = {
        [0x26] = 1, [0x2e] = 1, [0x36] = 1, [0x3e] = 1, [0x64] = 1, [0x65] = 1,
        [0x66] = 1, [0x67] = 1, [0xf0] = 1, [0xf2] = 1, [0xf3] = 1};
    return legacy[b];
}

/* False when the prefixes are not ones this decoder knows the meaning of (a REX not last). */
static bool read_prefixes(const uint8_t *b, size_t n, struct prefixes *p)
{
    *p = (struct prefixes){0};
    size_t i = 0;
    for (; i < n && is_legacy_prefix(b[i]); i++) {
        p->operand_size |= b[i] == 0x66;
        p->address_size |= b[i] == 0x67;
        p->rep |= b[i] == 0xf3;
        p->repne |= b[i] == 0xf2;
        p->lock |= b[i] == 0xf0;
    }
    if (i < n && (b[i] & 0xf0) == 0x40) {
        p->rex = b[i++];
        if (i < n && (is_legacy_prefix(b[i]) || (b[i] & 0xf0) == 0x40))
            return false;
    }
    p->len = i;
    return i < n;
}

#define CUT_SHORT ((size_t)-1)

/* The bytes of a ModRM operand at b[0..n) (ModRM, SIB, displacement), CUT_SHORT when n is too
 * few. */
static size_t modrm_length(const uint8_t *b, size_t n)
{
    if (n < 1)
        return CUT_SHORT;
    unsigned mod = b[0] >> 6, rm = b[0] & 7;
    size_t len = 1;
    if (mod == 3)
        return len;
    bool sib = rm == 4;
    if (sib && n < 2)
        return CUT_SHORT;
    len += sib;
    if (mod == 1)
        len += 1;
    else if (mod == 2 || (mod == 0 && (sib ? (b[1] & 7) == 5 : rm == 5)))
        len += 4;
    return len <= n ? len : CUT_SHORT;
}

static size_t immediate_z(const struct prefixes *p)
{
    return p->operand_size && !(p->rex & 8) ? 2 : 4;
}

/* The bytes after the opcode of the instruction whose opcode's kind is kind, at b[0..n), or
 * CUT_SHORT. */
static size_t operand_length(unsigned kind, const uint8_t *b, size_t n, const struct prefixes *p)
{
    size_t m;
    switch (kind) {
    case NONE:
        return 0;
    case IMM1:
        return 1;
    case IMM2:
        return 2;
    case IMMZ:
        return immediate_z(p);
    case IMMV:
        return p->rex & 8 ? 8 : immediate_z(p);
    case MOFFS:
        return p->address_size ? 4 : 8;
    case ENTER:
        return 3;
    case MODRM:
        return modrm_length(b, n);
    case MODRM1:
        return (m = modrm_length(b, n)) != CUT_SHORT ? m + 1 : CUT_SHORT;
    case MODRMZ:
        return (m = modrm_length(b, n)) != CUT_SHORT ? m + immediate_z(p) : CUT_SHORT;
    case GROUP3:
        if ((m = modrm_length(b, n)) == CUT_SHORT)
            return CUT_SHORT;
        if (((b[0] >> 3) & 7) > 1)
            return m;
        return m + (b[-1] == 0xf6 ? 1 : immediate_z(p));
    default:
        return CUT_SHORT;
    }
}

/* The 0f opcodes that take a memory operand only (a register is no instruction). */
static bool memory_only(uint8_t op2)
{
    static const uint8_t ops[] = {0x13, 0x17, 0x2b, 0xb2, 0xb4, 0xb5, 0xc3, 0xe7};
    return memchr(ops, op2, sizeof(ops)) != NULL;
}

/* The ModRM forms that are no instruction (capstone rejects them); op: the opcode byte(s), the
 * ModRM after them. */
static bool invalid_form(const uint8_t *op, size_t oplen, size_t left)
{
    if (left < oplen + 1)
        return false;
    uint8_t modrm = op[oplen];
    unsigned reg = (modrm >> 3) & 7, mod = modrm >> 6;
    if (oplen == 2)
        return (memory_only(op[1]) && mod == 3) || (op[1] == 0xba && reg < 4) ||
               (op[1] == 0x1f && (reg != 0 || mod == 3));
    switch (op[0]) {
    case 0x8d: /* lea of a register */
        return mod == 3;
    case 0xfe:
        return reg > 1;
    case 0xff:
        return reg == 7 || (mod == 3 && (reg == 3 || reg == 5));
    case 0xc6:
    case 0xc7:
        return reg != 0 && modrm != 0xf8;
    case 0x8f: /* reg != 0: an XOP prefix (AMD) */
        return reg != 0;
    default:
        return false;
    }
}

/* Relative branches and near returns with the 66 or 67 prefix: 16-bit forms, on some
 * processors only, and capstone's lengths for them differ. */
static bool size_sensitive(const uint8_t *op, size_t n)
{
    return op[0] == 0xc2 || op[0] == 0xc3 || op[0] == 0xe8 || op[0] == 0xe9 || op[0] == 0xeb ||
           (op[0] >= 0x70 && op[0] <= 0x7f) || (op[0] >= 0xe0 && op[0] <= 0xe3) ||
           (op[0] == 0xc7 && n > 1 && op[1] == 0xf8) ||
           (op[0] == 0x0f && n > 1 && op[1] >= 0x80 && op[1] <= 0x8f);
}

size_t x86_insn_length(const uint8_t *code, size_t avail, struct x86_insn_kind *kind)
{
    struct prefixes p;
    size_t n = avail < MAX_INSN_LEN ? avail : MAX_INSN_LEN;
    if (!read_prefixes(code, n, &p))
        return 0;
    const uint8_t *op = code + p.len;
    size_t left = n - p.len, oplen = 1;
    unsigned k = one_byte[op[0]];
    if (op[0] == 0x0f) {
        if (left < 2)
            return 0;
        k = two_byte[op[1]];
        oplen = 2;
    }
    if (k == ASK || p.lock || invalid_form(op, oplen, left) ||
        ((p.operand_size || p.address_size) && size_sensitive(op, left)) ||
        (p.operand_size && (p.rep || p.repne)) || /* capstone reads these combinations apart */
        (op[0] == 0x90 && (p.rep || p.rex)))      /* pause, xchg */
        return 0;
    size_t rest = operand_length(k, op + oplen, left - oplen, &p);
    if (rest == CUT_SHORT || p.len + oplen + rest > n)
        return 0;
    size_t len = p.len + oplen + rest;
    *kind = (struct x86_insn_kind){
        .is_nop = op[0] == 0x90 || (op[0] == 0x0f && op[1] == 0x1f),
        .is_ret = op[0] == 0xc3 || op[0] == 0xc2,
    };
    return len;
}
