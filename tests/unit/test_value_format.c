/* The value formatter (output/value_format.c) and the SysV classification (symbols/abi_sysv.c)
 * on hand-built types and bytes: gdb's print formats, and where each argument travels. */
#include <stdlib.h>
#include <string.h>

#include "output/value_format.h"
#include "record/format.h"
#include "symbols/abi_sysv.h"
#include "unit.h"

static struct ctype t_int = {
    .kind = CT_INT, .size = 4, .align = 4, .is_signed = true, .name = "int"};
static struct ctype t_uint = {.kind = CT_INT, .size = 4, .align = 4, .name = "unsigned int"};
static struct ctype t_i128 = {
    .kind = CT_INT, .size = 16, .align = 16, .is_signed = true, .name = "__int128"};
static struct ctype t_char = {
    .kind = CT_CHAR, .size = 1, .align = 1, .is_signed = true, .name = "char"};
static struct ctype t_bool = {.kind = CT_BOOL, .size = 1, .align = 1, .name = "_Bool"};
static struct ctype t_float = {.kind = CT_FLOAT, .size = 4, .align = 4, .name = "float"};
static struct ctype t_double = {.kind = CT_FLOAT, .size = 8, .align = 8, .name = "double"};
static struct ctype t_ldouble = {
    .kind = CT_FLOAT, .size = 16, .align = 16, .is_x87 = true, .name = "long double"};
static struct ctype t_cchar = {
    .kind = CT_ALIAS, .size = 1, .target = &t_char, .name = "const char"};
static struct ctype t_str = {
    .kind = CT_PTR, .size = 8, .align = 8, .target = &t_cchar, .name = "const char *"};
static struct ctype t_vptr = {.kind = CT_PTR, .size = 8, .align = 8, .name = "void *"};
static struct ctype t_iref = {
    .kind = CT_REF, .size = 8, .align = 8, .target = &t_int, .name = "int &"};
static struct ctype t_arr = {
    .kind = CT_ARRAY, .size = 12, .align = 4, .count = 3, .target = &t_int, .name = "int [3]"};
static struct ctype t_zeros = {
    .kind = CT_ARRAY, .size = 64, .align = 4, .count = 16, .target = &t_int, .name = "int [16]"};
static struct ctype t_carr = {
    .kind = CT_ARRAY, .size = 8, .align = 1, .count = 8, .target = &t_char, .name = "char [8]"};

static struct ctype_enumerator color_e[] = {{"RED", 0}, {"GREEN", 1}, {"BLUE", 2}};
static struct ctype t_color = {
    .kind = CT_ENUM, .size = 4, .align = 4, .enums = color_e, .nenums = 3, .name = "enum color"};
static struct ctype_enumerator flag_e[] = {{"A", 1}, {"B", 2}, {"C", 4}};
static struct ctype t_flags = {
    .kind = CT_ENUM, .size = 4, .align = 4, .enums = flag_e, .nenums = 3, .name = "enum flags"};

static struct ctype_member point_m[] = {{"x", 0, &t_int, 0, 0}, {"y", 4, &t_int, 0, 0}};
static struct ctype t_point = {.kind = CT_STRUCT,
                               .size = 8,
                               .align = 4,
                               .members = point_m,
                               .nmembers = 2,
                               .name = "struct point"};
static struct ctype_member mixed_m[] = {{"d", 0, &t_double, 0, 0}, {"l", 8, &t_int, 0, 0}};
static struct ctype t_mixed = {.kind = CT_STRUCT,
                               .size = 16,
                               .align = 8,
                               .members = mixed_m,
                               .nmembers = 2,
                               .name = "struct mixed"};
static struct ctype_member bits_m[] = {{"lo", 0, &t_uint, 3, 0}, {"hi", 0, &t_int, 5, 3}};
static struct ctype t_bits = {.kind = CT_STRUCT,
                              .size = 4,
                              .align = 4,
                              .members = bits_m,
                              .nmembers = 2,
                              .name = "struct bits"};
static struct ctype_member big_m[] = {{"a", 0, &t_arr, 0, 0}, {"b", 12, &t_arr, 0, 0}};
static struct ctype t_big = {.kind = CT_STRUCT,
                             .size = 24,
                             .align = 4,
                             .members = big_m,
                             .nmembers = 2,
                             .name = "struct big"};

static char *fmt(const struct ctype *t, const void *bytes, size_t len, const struct value_ctx *ctx)
{
    static struct text out;
    text_free(&out);
    value_format(&out, t, bytes, len, ctx);
    return out.s ? out.s : "";
}

#define CHECK_FMT(t, value, want)                                                                  \
    do {                                                                                           \
        __typeof__(value) v_ = (value);                                                            \
        const char *got_ = fmt(t, &v_, sizeof(v_), NULL);                                          \
        unit_checks++;                                                                             \
        if (strcmp(got_, want) != 0) {                                                             \
            unit_failures++;                                                                       \
            fprintf(stderr, "%s:%d: got [%s], expected [%s]\n", __FILE__, __LINE__, got_, want);   \
        }                                                                                          \
    } while (0)

static const char *symbols(const void *arg, uint64_t addr, uint64_t *off)
{
    (void)arg;
    if (addr < 0x1000 || addr >= 0x1010)
        return NULL;
    *off = addr - 0x1000;
    return "square";
}

static void test_scalars(void)
{
    CHECK_FMT(&t_int, (int)42, "42");
    CHECK_FMT(&t_int, (int)-1, "-1");
    CHECK_FMT(&t_uint, (unsigned)4000000000u, "4000000000");
    CHECK_FMT(&t_i128, (__int128)-5, "-5");
    CHECK_FMT(&t_char, (char)65, "65 'A'");
    CHECK_FMT(&t_char, (char)-5, "-5 '\\373'");
    CHECK_FMT(&t_char, (char)'\n', "10 '\\n'");
    CHECK_FMT(&t_char, (char)'\'', "39 '\\''");
    CHECK_FMT(&t_bool, (char)1, "true");
    CHECK_FMT(&t_bool, (char)0, "false");
    CHECK_FMT(&t_float, 3.5f, "3.5");
    CHECK_FMT(&t_float, 0.1f, "0.100000001");
    CHECK_FMT(&t_double, 0.1, "0.10000000000000001");
    CHECK_FMT(&t_double, -0.25, "-0.25");
    CHECK_FMT(&t_double, 1.0 / 0.0, "inf");
    CHECK_FMT(&t_ldouble, 2.5L, "2.5");
    CHECK_FMT(&t_color, 1, "GREEN");
    CHECK_FMT(&t_color, 7, "(GREEN | BLUE | unknown: 0x4)"); /* as gdb: disjoint values */
    CHECK_FMT(&t_flags, 3, "(A | B)");
    CHECK_FMT(&t_flags, 0, "0");
    CHECK_FMT(&t_flags, 9, "(A | unknown: 0x8)");
    CHECK_FMT(&t_vptr, (uint64_t)0, "0x0");
    CHECK_FMT(&t_vptr, (uint64_t)0x7ffd5e3c1a40, "0x7ffd5e3c1a40");
}

static void test_aggregates(void)
{
    int arr[3] = {1, 2, 3};
    CHECK(strcmp(fmt(&t_arr, arr, sizeof(arr), NULL), "{1, 2, 3}") == 0);
    int zeros[16] = {0};
    CHECK(strcmp(fmt(&t_zeros, zeros, sizeof(zeros), NULL), "{0 <repeats 16 times>}") == 0);
    CHECK(strcmp(fmt(&t_carr, "hi\0\0\0\0\0", 8, NULL), "\"hi\\000\\000\\000\\000\\000\"") == 0);
    int pt[2] = {1, 2};
    CHECK(strcmp(fmt(&t_point, pt, sizeof(pt), NULL), "{x = 1, y = 2}") == 0);
    struct {
        double d;
        int l, pad;
    } m = {1.5, 10, 0};
    CHECK(strcmp(fmt(&t_mixed, &m, sizeof(m), NULL), "{d = 1.5, l = 10}") == 0);
    uint32_t bits = 5 | (uint32_t)(0x1f << 3); /* lo = 5, hi = -1 */
    CHECK(strcmp(fmt(&t_bits, &bits, sizeof(bits), NULL), "{lo = 5, hi = -1}") == 0);
    int big[6] = {1, 2, 3, 4, 5, 6};
    CHECK(strcmp(fmt(&t_big, big, sizeof(big), NULL), "{a = {1, 2, 3}, b = {4, 5, 6}}") == 0);
    /* fewer bytes than the type: never read past them */
    CHECK(strcmp(fmt(&t_point, pt, 4, NULL), "<unavailable>") == 0);
}

static void test_pointers(void)
{
    struct pointee mem[] = {
        {0, 0, 0x5000, (const uint8_t *)"hello", 6},
        {0, CHUNK_UNREADABLE, 0x6000, NULL, 0},
        {0, CHUNK_CUT, 0x7000, (const uint8_t *)"aaaa", 4},
        {0, 0, 0x8000, (const uint8_t *)"\x2a\0\0\0", 4},
        {1, 0, 0x9000, (const uint8_t *)"other", 6},
    };
    struct value_ctx ctx = {mem, 5, 0, symbols, NULL};
    uint64_t p = 0x5000;
    CHECK(strcmp(fmt(&t_str, &p, 8, &ctx), "0x5000 \"hello\"") == 0);
    p = 0x6000;
    CHECK(strcmp(fmt(&t_str, &p, 8, &ctx), "0x6000 <unreadable>") == 0);
    p = 0x7000;
    CHECK(strcmp(fmt(&t_str, &p, 8, &ctx), "0x7000 \"aaaa\"...") == 0);
    p = 0x8000;
    CHECK(strcmp(fmt(&t_iref, &p, 8, &ctx), "@0x8000: 42") == 0);
    p = 0x9000; /* another parameter's memory is not this one's */
    CHECK(strcmp(fmt(&t_str, &p, 8, &ctx), "0x9000") == 0);
    p = 0x1000;
    CHECK(strcmp(fmt(&t_vptr, &p, 8, &ctx), "0x1000 <square>") == 0);
    p = 0x1004;
    CHECK(strcmp(fmt(&t_vptr, &p, 8, &ctx), "0x1004 <square+4>") == 0);
}

static void test_abi(void)
{
    struct func_param params[] = {{"a", &t_int, false},     {"m", &t_mixed, false},
                                  {"b", &t_big, false},     {"f", &t_double, false},
                                  {"x", &t_ldouble, false}, {"p", &t_point, false}};
    struct func_sig sig = {"f", params, 6, &t_big, false};
    struct abi_loc locs[6], ret;
    uint32_t stack = abi_locate(&sig, locs, &ret);
    CHECK(ret.where == ABI_HIDDEN); /* 24 bytes: in memory, its address in rdi */
    CHECK(locs[0].where == ABI_REGS && locs[0].part[0].cls == ABI_CLASS_INT &&
          locs[0].part[0].reg == 1);
    CHECK(locs[1].where == ABI_REGS && locs[1].nparts == 2 &&
          locs[1].part[0].cls == ABI_CLASS_SSE && locs[1].part[0].reg == 0 &&
          locs[1].part[1].cls == ABI_CLASS_INT && locs[1].part[1].reg == 2);
    CHECK(locs[2].where == ABI_STACK && locs[2].stack_offset == 0);
    CHECK(locs[3].where == ABI_REGS && locs[3].part[0].cls == ABI_CLASS_SSE &&
          locs[3].part[0].reg == 1);
    CHECK(locs[4].where == ABI_STACK && locs[4].stack_offset == 32); /* 16-aligned */
    CHECK(locs[5].where == ABI_REGS && locs[5].part[0].reg == 3);
    CHECK_EQ_U64(stack, 48);
}

int main(void)
{
    test_scalars();
    test_aggregates();
    test_pointers();
    test_abi();
    return unit_finish("value_format");
}
