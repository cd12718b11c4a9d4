/* Choosing, relocating and patching the entries of an image's traced functions. */
#ifndef CALLTRACE_TRACER_INJECT_PATCH_H
#define CALLTRACE_TRACER_INJECT_PATCH_H

#include <stdint.h>

#include "tracer/tracee.h"
#include "tracer/inject/space.h"
#include "symbols/elf_image.h"

/* How many bytes of code region patch_image may use for image (an upper bound). */
size_t patch_code_size(const struct elf_image *image);

/* Patches every traced function of image (loaded at bias in p, stopped thread via) that can be
 * patched safely: its code goes at code (patch_code_size bytes in p, within a jump of the
 * image), the trampolines' blob at blob; -A/-R tables (tracer/inject/captures.h) are placed there
 * too. The others (too short, a branch into the bytes the jump would cover, an unrelocatable
 * prologue) get the ptrace engine's entry breakpoint, and -v says which and why. Records the
 * functions (ids from s->next_func_id) and adds the original bytes to sp's patches. Returns the
 * number traced, or -1 when the image could not be read. */
long patch_image(struct session *s, struct process *p, pid_t via, struct inject_space *sp,
                 const struct elf_image *image, uint64_t bias, uint64_t code, uint64_t blob);

/* Where to patch: p (stopped thread via), image loaded at bias there and recorded as
 * image_id, code room in p within a jump of it, the blob (both trampoline entries). */
struct patch_target {
    struct process *p;
    pid_t via;
    struct inject_space *sp;
    const struct elf_image *image;
    uint64_t bias;
    uint32_t image_id;
    uint64_t code, blob;
    size_t first_range; /* 0, or image->funcs from here on are its unwind ranges (eh_frame_hdr.h) */
    bool lib_calls;     /* -L: a library's public functions, recorded when the program calls them */
};
/* A function of the image to patch, and the name it is traced under. */
struct patch_pick {
    size_t index; /* in image->funcs */
    const char *name;
};
/* Like patch_image, for picks[0..n) only (code has room for n functions): IFUNC
 * implementations, under their IFUNC's name, in an image already recorded. */
long patch_functions(struct session *s, const struct patch_target *target,
                     const struct patch_pick *picks, size_t n);

/* Attaching (sp->hold_jumps): the jumps planned meanwhile go in now, the hops and loops first,
 * once the in-process unwinder hooks are in (a return address a trampoline hooks must never
 * meet an exception thrown with no hook there to put it back, calltrace killed in between).
 * -1 when a write failed. */
int patch_flush_held(struct inject_space *sp);

/* Forgets, without writing, the patches in [lo, hi): their library was unmapped (dlclose). */
void patch_forget(struct inject_space *sp, uint64_t lo, uint64_t hi);

#endif
