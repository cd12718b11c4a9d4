int cmd_graph(int argc, char **argv);
int cmd_graph(int argc, char **argv) { (void)argc; (void)argv; return 1; }
int cmd_tree(int argc, char **argv);
int cmd_tree(int argc, char **argv) { (void)argc; (void)argv; return 1; }
int cmd_merge(int argc, char **argv);
int cmd_merge(int argc, char **argv) { (void)argc; (void)argv; return 1; }
