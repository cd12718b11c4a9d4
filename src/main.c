/* calltrace: trace the function calls of native programs from the outside. */
#include <string.h>

#include "cmd/commands.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} subcommands[] = {
    {"export", cmd_export}, {"report", cmd_report}, {"graph", cmd_graph}, {"tree", cmd_tree},
    {"merge", cmd_merge},   {"view", cmd_view},     {"calls", cmd_calls}, {"diff", cmd_diff},
    {"flame", cmd_flame},   {"record", cmd_record}, /* uftrace's verb: the same as no subcommand */
};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc > 1 && i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
        if (strcmp(argv[1], subcommands[i].name) == 0)
            return subcommands[i].run(argc - 1, argv + 1);
    return cmd_record(argc, argv);
}
