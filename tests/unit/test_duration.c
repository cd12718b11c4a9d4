/* The one duration syntax of every option: a decimal number, a unit or none (seconds). */
#include "util/duration.h"
#include "unit.h"

static uint64_t parsed(const char *text)
{
    uint64_t ns = 12345; /* left alone on failure */
    return duration_parse(text, &ns) == 0 ? ns : UINT64_MAX;
}

static void accepted(void)
{
    CHECK_EQ_U64(parsed("250ns"), 250);
    CHECK_EQ_U64(parsed("250us"), 250000);
    CHECK_EQ_U64(parsed("250\u00b5s"), 250000);
    CHECK_EQ_U64(parsed("500ms"), 500000000);
    CHECK_EQ_U64(parsed("1.5ms"), 1500000);
    CHECK_EQ_U64(parsed("2s"), 2000000000);
    CHECK_EQ_U64(parsed("0.5"), 500000000); /* no unit: seconds */
    CHECK_EQ_U64(parsed("3"), 3000000000);
    CHECK_EQ_U64(parsed(".25"), 250000000);
    CHECK_EQ_U64(parsed("2."), 2000000000);
    CHECK_EQ_U64(parsed("1m"), 60000000000);
    CHECK_EQ_U64(parsed("1.5h"), 5400000000000);
    CHECK_EQ_U64(parsed("0"), 0);
    CHECK_EQ_U64(parsed("0.0000000004"), 0); /* rounded to the nanosecond */
    CHECK_EQ_U64(parsed("744h"), DURATION_MAX_NS);
}

static void refused(void)
{
    static const char *const bad[] = {"",
                                      "s",
                                      ".",
                                      ".s",
                                      "-1",
                                      "+1",
                                      " 1",
                                      "1 s",
                                      "1x",
                                      "5xs",
                                      "1sec",
                                      "1S",
                                      "0x10",
                                      "1e3",
                                      "inf",
                                      "nan",
                                      "1.2.3",
                                      "744.001h",
                                      "99999999999999999999",
                                      "1mss",
                                      "ms"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint64_t ns = 12345;
        CHECK(duration_parse(bad[i], &ns) < 0);
        if (ns != 12345)
            fprintf(stderr, "  %s was taken\n", bad[i]);
        CHECK_EQ_U64(ns, 12345);
    }
}

int main(void)
{
    accepted();
    refused();
    return unit_finish("test_duration");
}
