/* Copying and removing directory trees, for outputs assembled in a temporary directory. */
#ifndef CALLTRACE_UTIL_DIR_TREE_H
#define CALLTRACE_UTIL_DIR_TREE_H

/* Copies the regular files, directories and symbolic links under from into to (created).
 * Returns 0, or -1 after printing one error line. */
int dir_tree_copy(const char *from, const char *to);
/* Removes path and everything under it, without following symbolic links. */
void dir_tree_remove(const char *path);

#endif
