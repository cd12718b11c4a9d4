#include "output/value_format.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/format.h"

#define REPEAT_THRESHOLD 10 /* gdb's: runs longer than this print as <repeats N times> */
#define ELEMENTS_MAX 200    /* gdb's print elements */
#define DEPTH_MAX 8

static bool text_grow(struct text *t, size_t more)
{
    if (t->failed)
        return false;
    if (t->len + more + 1 <= t->cap)
        return true;
    size_t cap = t->cap ? t->cap : 64;
    while (cap < t->len + more + 1)
        cap *= 2;
    char *s = realloc(t->s, cap);
    if (!s) {
        t->failed = true;
        return false;
    }
    t->s = s;
    t->cap = cap;
    return true;
}

void text_put(struct text *t, const char *s, size_t len)
{
    if (!text_grow(t, len))
        return;
    memcpy(t->s + t->len, s, len);
    t->len += len;
    t->s[t->len] = '\0';
}

void text_printf(struct text *t, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(buf)) {
        text_put(t, buf, (size_t)n);
        return;
    }
    if (!text_grow(t, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

void text_free(struct text *t)
{
    free(t->s);
    memset(t, 0, sizeof(*t));
}

static uint64_t load_u(const uint8_t *b, size_t size)
{
    uint64_t v = 0;
    memcpy(&v, b, size > 8 ? 8 : size);
    return v;
}

static int64_t load_s(const uint8_t *b, size_t size)
{
    uint64_t v = load_u(b, size);
    if (size < 8 && (v >> (size * 8 - 1)) & 1)
        v |= ~0ull << (size * 8);
    return (int64_t)v;
}

static void put_u128(struct text *out, unsigned __int128 v)
{
    char buf[48];
    size_t i = sizeof(buf);
    buf[--i] = '\0';
    do {
        buf[--i] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    text_printf(out, "%s", buf + i);
}

static void put_int(struct text *out, const uint8_t *b, size_t size, bool is_signed)
{
    if (size == 16) {
        unsigned __int128 v;
        memcpy(&v, b, 16);
        if (is_signed && (__int128)v < 0) {
            text_put(out, "-", 1);
            v = -v;
        }
        put_u128(out, v);
    } else if (is_signed) {
        text_printf(out, "%lld", (long long)load_s(b, size));
    } else {
        text_printf(out, "%llu", (unsigned long long)load_u(b, size));
    }
}

/* One character as gdb writes it inside quotes q ('"' or '\''). */
static void put_char_escaped(struct text *out, uint8_t c, char q)
{
    static const char esc[] = {['\a'] = 'a', ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n',
                               ['\r'] = 'r', ['\t'] = 't', ['\v'] = 'v'};
    if (c < sizeof(esc) && esc[c])
        text_printf(out, "\\%c", esc[c]);
    else if (c == (uint8_t)q || c == '\\')
        text_printf(out, "\\%c", c);
    else if (c >= 0x20 && c < 0x7f)
        text_printf(out, "%c", c);
    else
        text_printf(out, "\\%03o", c);
}

static void put_char_literal(struct text *out, uint8_t c)
{
    text_put(out, "'", 1);
    put_char_escaped(out, c, '\'');
    text_put(out, "'", 1);
}

/* gdb's string layout: quoted runs, and runs of one character longer than the threshold as
 * 'c' <repeats N times>, separated by ", "; "..." when cut short. */
static void put_string(struct text *out, const uint8_t *s, size_t len, bool cut)
{
    bool in_quotes = false, any = false;
    size_t shown = 0;
    for (size_t i = 0; i < len;) {
        size_t run = 1;
        while (i + run < len && s[i + run] == s[i])
            run++;
        if (shown >= ELEMENTS_MAX) {
            cut = true;
            break;
        }
        if (run > REPEAT_THRESHOLD) {
            text_printf(out, "%s%s", in_quotes ? "\"" : "", any ? ", " : "");
            put_char_literal(out, s[i]);
            text_printf(out, " <repeats %zu times>", run);
            in_quotes = false;
            any = true;
            i += run;
            shown += REPEAT_THRESHOLD;
            continue;
        }
        if (!in_quotes) {
            text_printf(out, "%s\"", any ? ", " : "");
            in_quotes = any = true;
        }
        put_char_escaped(out, s[i], '"');
        i++;
        shown++;
    }
    if (in_quotes)
        text_put(out, "\"", 1);
    if (!any)
        text_put(out, "\"\"", 2);
    if (cut)
        text_put(out, "...", 3);
}

static void put_float(struct text *out, const struct ctype *t, const uint8_t *b)
{
    if (t->is_x87) {
        long double v = 0;
        memcpy(&v, b, 10);
        if (isinf(v) || isnan(v)) {
            text_printf(out, "%s%s", signbit(v) ? "-" : "", isinf(v) ? "inf" : "nan");
            return;
        }
        text_printf(out, "%.18Lg", v);
        return;
    }
    double v;
    uint64_t bits;
    int digits;
    if (t->size == 4) {
        float f;
        memcpy(&f, b, 4);
        v = f;
        uint32_t fb;
        memcpy(&fb, b, 4);
        bits = fb & 0x7fffff;
        digits = 9;
    } else if (t->size == 8) {
        memcpy(&v, b, 8);
        memcpy(&bits, b, 8);
        bits &= (1ull << 52) - 1;
        digits = 17;
    } else {
        text_printf(out, "<%llu-byte float>", (unsigned long long)t->size);
        return;
    }
    if (isnan(v))
        text_printf(out, "%snan(0x%llx)", signbit(v) ? "-" : "", (unsigned long long)bits);
    else if (isinf(v))
        text_printf(out, "%sinf", v < 0 ? "-" : "");
    else
        text_printf(out, "%.*g", digits, v);
}

/* Are the enumerators disjoint bit sets, so a value may be several of them or'ed? */
static bool is_flag_enum(const struct ctype *t)
{
    uint64_t seen = 0;
    for (size_t i = 0; i < t->nenums; i++) {
        int64_t v = t->enums[i].value;
        if (v < 0 || (seen & (uint64_t)v))
            return false;
        seen |= (uint64_t)v;
    }
    return t->nenums > 0;
}

static void put_enum(struct text *out, const struct ctype *t, const uint8_t *b)
{
    size_t size = t->size > 8 ? 8 : t->size;
    int64_t v = t->is_signed ? load_s(b, size) : (int64_t)load_u(b, size);
    for (size_t i = 0; i < t->nenums; i++) {
        if (t->enums[i].value == v) {
            text_printf(out, "%s", t->enums[i].name ? t->enums[i].name : "?");
            return;
        }
    }
    if (v == 0 || !is_flag_enum(t)) {
        text_printf(out, "%lld", (long long)v);
        return;
    }
    uint64_t left = (uint64_t)v;
    const char *sep = "(";
    for (size_t i = 0; i < t->nenums; i++) {
        uint64_t e = (uint64_t)t->enums[i].value;
        if (e && (left & e) == e) {
            text_printf(out, "%s%s", sep, t->enums[i].name ? t->enums[i].name : "?");
            left &= ~e;
            sep = " | ";
        }
    }
    if (left)
        text_printf(out, "%sunknown: 0x%llx", sep, (unsigned long long)left);
    text_put(out, ")", 1);
}

static const struct pointee *find_pointee(const struct value_ctx *ctx, uint64_t addr)
{
    for (size_t i = 0; ctx && i < ctx->npointees; i++)
        if (ctx->pointees[i].param == ctx->param && ctx->pointees[i].addr == addr)
            return &ctx->pointees[i];
    return NULL;
}

static void put_symbol(struct text *out, const struct value_ctx *ctx, uint64_t addr)
{
    uint64_t off = 0;
    const char *name = ctx && ctx->symbol ? ctx->symbol(ctx->symbol_arg, addr, &off) : NULL;
    if (!name)
        return;
    if (off)
        text_printf(out, " <%s+%llu>", name, (unsigned long long)off);
    else
        text_printf(out, " <%s>", name);
}

static void format_at(struct text *out, const struct ctype *t, const uint8_t *b, size_t len,
                      const struct value_ctx *ctx, int depth);

static void put_pointer(struct text *out, const struct ctype *t, const uint8_t *b,
                        const struct value_ctx *ctx, int depth)
{
    uint64_t addr = load_u(b, 8);
    const struct ctype *target = ctype_strip(t->target);
    if (t->kind == CT_REF) {
        text_printf(out, "@0x%llx", (unsigned long long)addr);
        const struct pointee *p = find_pointee(ctx, addr);
        if (p && p->flags & CHUNK_UNREADABLE) {
            text_put(out, " <unreadable>", 13);
        } else if (p && target && p->len >= target->size) {
            text_put(out, ": ", 2);
            format_at(out, t->target, p->bytes, p->len, ctx, depth + 1);
        }
        return;
    }
    text_printf(out, "0x%llx", (unsigned long long)addr);
    if (!addr)
        return;
    put_symbol(out, ctx, addr);
    const struct pointee *p = find_pointee(ctx, addr);
    if (!p)
        return;
    if (p->flags & CHUNK_UNREADABLE) {
        text_put(out, " <unreadable>", 13);
        return;
    }
    if (ctype_is_string(t)) {
        /* up to the first NUL, as C reads it, whatever length was captured */
        const uint8_t *nul = memchr(p->bytes, 0, p->len);
        text_put(out, " ", 1);
        put_string(out, p->bytes, nul ? (size_t)(nul - p->bytes) : p->len, !nul);
    }
}

static void put_array(struct text *out, const struct ctype *t, const uint8_t *b, size_t len,
                      const struct value_ctx *ctx, int depth)
{
    const struct ctype *e = ctype_strip(t->target);
    uint64_t esize = e ? e->size : 0;
    uint64_t count = t->count;
    if (esize && count * esize > len)
        count = len / esize;
    if (e && e->kind == CT_CHAR) {
        /* a char array prints as a string, less one trailing NUL */
        size_t n = (size_t)count;
        if (n && b[n - 1] == 0)
            n--;
        put_string(out, b, n, false);
        return;
    }
    text_put(out, "{", 1);
    uint64_t shown = 0;
    for (uint64_t i = 0; i < count && esize;) {
        uint64_t run = 1;
        while (i + run < count && memcmp(b + i * esize, b + (i + run) * esize, esize) == 0)
            run++;
        if (shown >= ELEMENTS_MAX) {
            text_put(out, "...", 3);
            break;
        }
        if (i)
            text_put(out, ", ", 2);
        format_at(out, t->target, b + i * esize, (size_t)esize, ctx, depth + 1);
        if (run > REPEAT_THRESHOLD) {
            text_printf(out, " <repeats %llu times>", (unsigned long long)run);
            i += run;
            shown += REPEAT_THRESHOLD;
        } else {
            i++;
            shown++;
        }
    }
    text_put(out, "}", 1);
}

static void put_bitfield(struct text *out, const struct ctype_member *m, const uint8_t *b,
                         size_t len)
{
    const struct ctype *mt = ctype_strip(m->type);
    uint8_t raw[16] = {0};
    memcpy(raw, b + m->offset, len - m->offset < 9 ? len - m->offset : 9);
    unsigned __int128 v;
    memcpy(&v, raw, 16);
    uint64_t x = (uint64_t)(v >> m->bit_offset);
    if (m->bit_size < 64)
        x &= (1ull << m->bit_size) - 1;
    bool neg = mt && mt->is_signed && m->bit_size < 64 && (x >> (m->bit_size - 1)) & 1;
    if (neg)
        x |= ~0ull << m->bit_size;
    uint8_t bytes[8];
    memcpy(bytes, &x, 8);
    if (mt && (mt->kind == CT_ENUM || mt->kind == CT_BOOL))
        format_at(out, m->type, bytes, 8, NULL, DEPTH_MAX);
    else if (neg)
        text_printf(out, "%lld", (long long)x);
    else
        text_printf(out, "%llu", (unsigned long long)x);
}

static void put_members(struct text *out, const struct ctype *t, const uint8_t *b, size_t len,
                        const struct value_ctx *ctx, int depth)
{
    if (depth >= DEPTH_MAX) {
        text_put(out, "{...}", 5);
        return;
    }
    text_put(out, "{", 1);
    for (size_t i = 0; i < t->nmembers; i++) {
        const struct ctype_member *m = &t->members[i];
        if (i)
            text_put(out, ", ", 2);
        if (m->name)
            text_printf(out, "%s = ", m->name);
        const struct ctype *mt = ctype_strip(m->type);
        uint64_t msize = mt ? mt->size : 0;
        if (m->offset >= len || (!m->bit_size && m->offset + msize > len)) {
            text_put(out, "<unavailable>", 13);
            continue;
        }
        if (m->bit_size > 64)
            text_put(out, "<unknown type>", 14);
        else if (m->bit_size)
            put_bitfield(out, m, b, len);
        else
            format_at(out, m->type, b + m->offset, (size_t)(len - m->offset), ctx, depth + 1);
    }
    text_put(out, "}", 1);
}

static void format_at(struct text *out, const struct ctype *t, const uint8_t *b, size_t len,
                      const struct value_ctx *ctx, int depth)
{
    const struct ctype *s = ctype_strip(t);
    if (!s || s->kind == CT_VOID) {
        text_put(out, "void", 4);
        return;
    }
    bool aggregate = s->kind == CT_STRUCT || s->kind == CT_UNION || s->kind == CT_ARRAY;
    if (s->size > len || s->kind == CT_UNKNOWN || (!aggregate && !s->size)) {
        text_printf(out, "%s", s->size > len ? "<unavailable>" : "<unknown type>");
        return;
    }
    switch (s->kind) {
    case CT_INT:
        put_int(out, b, (size_t)s->size, s->is_signed);
        break;
    case CT_CHAR:
        put_int(out, b, 1, s->is_signed);
        text_put(out, " ", 1);
        put_char_literal(out, b[0]);
        break;
    case CT_BOOL: {
        uint64_t v = load_u(b, (size_t)s->size);
        if (v <= 1)
            text_printf(out, "%s", v ? "true" : "false");
        else
            text_printf(out, "%llu", (unsigned long long)v);
        break;
    }
    case CT_FLOAT:
        put_float(out, s, b);
        break;
    case CT_ENUM:
        put_enum(out, s, b);
        break;
    case CT_PTR:
    case CT_REF:
        put_pointer(out, s, b, ctx, depth);
        break;
    case CT_STRUCT:
    case CT_UNION:
        put_members(out, s, b, len, ctx, depth);
        break;
    case CT_ARRAY:
        put_array(out, s, b, len, ctx, depth);
        break;
    default:
        text_put(out, "?", 1);
    }
}

void value_format(struct text *out, const struct ctype *t, const uint8_t *bytes, size_t len,
                  const struct value_ctx *ctx)
{
    format_at(out, t, bytes, len, ctx, 0);
}
