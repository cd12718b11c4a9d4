/* Choosing, relocating and patching the entries of an image's traced functions. */
#ifndef CALLTRACE_INJECT_PATCH_H
#define CALLTRACE_INJECT_PATCH_H

#include <stdint.h>

#include "engine/session.h"
#include "inject/space.h"
#include "symbols/elf_image.h"

/* How many bytes of code region patch_image may use for image (an upper bound). */
size_t patch_code_size(const struct elf_image *image);

/* Patches every traced function of image (loaded at bias in p) that can be patched safely:
 * its code goes at code (patch_code_size bytes in p), the shared trampoline at blob; -A/-R
 * tables (inject/captures.h) are placed through the stopped thread via.
 * Records the functions (ids from s->next_func_id) and keeps the original bytes in sp. Returns
 * the number patched, or -1 when the image could not be read. */
long patch_image(struct session *s, struct process *p, pid_t via, struct inject_space *sp,
                 const struct elf_image *image, uint64_t bias, uint64_t code, uint64_t blob);

#endif
