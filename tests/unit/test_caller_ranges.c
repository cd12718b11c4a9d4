/* -L's caller ranges: the code whose calls into libraries are the program's. A range that goes
 * leaves an empty slot (the trampolines may be reading it), which the next one takes. */
#include "tracer/addrspace.h"
#include "unit.h"

static void lookup(void)
{
    struct caller_ranges c = {0};
    CHECK(!caller_ranges_has(&c, 0x1000));
    CHECK(caller_ranges_add(&c, 0x1000, 0x2000));
    CHECK(caller_ranges_add(&c, 0x8000, 0x9000));
    CHECK(caller_ranges_has(&c, 0x1000));
    CHECK(caller_ranges_has(&c, 0x1fff));
    CHECK(!caller_ranges_has(&c, 0x2000)); /* hi is past the end */
    CHECK(!caller_ranges_has(&c, 0xfff));
    CHECK(caller_ranges_has(&c, 0x8abc));
    CHECK_EQ_U64(c.n, 2);
}

static void reuse(void)
{
    struct caller_ranges c = {0};
    CHECK(caller_ranges_add(&c, 0x1000, 0x2000));
    CHECK(caller_ranges_add(&c, 0x3000, 0x4000));
    caller_ranges_remove(&c, 0x1000, 0x2000);
    CHECK(!caller_ranges_has(&c, 0x1800));
    CHECK(caller_ranges_has(&c, 0x3800));
    CHECK_EQ_U64(c.n, 2); /* emptied, not moved */
    CHECK_EQ_U64(c.r[0].hi, 0);
    CHECK(caller_ranges_add(&c, 0x5000, 0x6000));
    CHECK_EQ_U64(c.n, 2); /* the empty slot taken */
    CHECK_EQ_U64(c.r[0].lo, 0x5000);
    CHECK(caller_ranges_has(&c, 0x5800));
}

static void full(void)
{
    struct caller_ranges c = {0};
    for (uint64_t i = 0; i < REGION_CALLERS_MAX; i++)
        CHECK(caller_ranges_add(&c, 0x10000 * (i + 1), 0x10000 * (i + 1) + 0x100));
    CHECK(!caller_ranges_add(&c, 0x900000, 0x900100));
    CHECK(!caller_ranges_has(&c, 0x900010));
    CHECK_EQ_U64(c.n, REGION_CALLERS_MAX);
}

int main(void)
{
    lookup();
    reuse();
    full();
    return unit_finish("test_caller_ranges");
}
