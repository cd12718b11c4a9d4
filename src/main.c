/* calltrace: trace the function calls of native programs from the outside. */
#include <string.h>

#include "cmd/commands.h"

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "export") == 0)
        return cmd_export(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "view") == 0)
        return cmd_view(argc - 1, argv + 1);
    return cmd_record(argc, argv);
}
