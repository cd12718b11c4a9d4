/* The hops' room (tracer/inject/hops.c): a slot only where a rel8 jump reaches it (128 bytes
 * back, 127 on from the instruction after the jump), whole inside its padding, never given twice
 * nor over bytes reserved for a jump covering the padding after a short function. */
#include "tracer/inject/hops.h"
#include "unit.h"

int main(void)
{
    struct hop_gaps g = {0};
    CHECK(hop_gaps_add(&g, 0x1200, 0x1208) == 0); /* 8 bytes: one slot */
    CHECK(hop_gaps_add(&g, 0x1000, 0x100a) == 0); /* 10 bytes: two */
    CHECK(hop_gaps_add(&g, 0x1100, 0x1103) == 0); /* too small: not kept */
    hop_gaps_sort(&g);
    CHECK_EQ_U64(g.n, 2);
    CHECK_EQ_U64(hop_take(&g, 0x1000 + 128), 0x1000); /* exactly 128 back */
    CHECK_EQ_U64(hop_take(&g, 0x1005 + 129), 0);      /* the second slot, 0x1005: too far back */
    CHECK_EQ_U64(hop_take(&g, 0x1005 + 128), 0x1005);
    CHECK_EQ_U64(hop_take(&g, 0x1000 + 2), 0);   /* the gap is full */
    CHECK_EQ_U64(hop_take(&g, 0x1200 - 128), 0); /* 128 on: out of reach */
    CHECK(!hop_gaps_taken(&g, 0x1200, 0x1203));
    hop_gaps_reserve(&g, 0x1200, 0x1202); /* a short function's jump covers 2 bytes */
    CHECK(hop_gaps_taken(&g, 0x1201, 0x1202));
    CHECK_EQ_U64(hop_take(&g, 0x1200 - 126), 0);      /* the slot after them: 128 on */
    CHECK_EQ_U64(hop_take(&g, 0x1200 - 125), 0x1202); /* 127 on */
    CHECK_EQ_U64(hop_take(&g, 0x1200), 0);
    hop_gaps_free(&g);
    return unit_finish("hops");
}
