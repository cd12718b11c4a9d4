/* Subcommands: one file each under src/cmd/. */
#ifndef CALLTRACE_CMD_COMMANDS_H
#define CALLTRACE_CMD_COMMANDS_H

int cmd_record(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_graph(int argc, char **argv);
int cmd_tree(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_calls(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_flame(int argc, char **argv);

#endif
