/* What a killed calltrace left in a program's code, undone before another attaches: the jumps it
 * wrote over entries (traced functions, in-process hooks) still lead to its stubs, whose
 * trampolines now find the new calltrace's control block (the thread control block word is
 * the new one's) and would record the old function ids into the new rings, or leave return
 * addresses the new unwinder hooks do not know. Each such jump is found by comparing the
 * executable mappings with the files they map, and recognised by where it goes: a stub of ours
 * (its first bytes, inject_func_stub's). Those bytes get the file's back; the old stubs and
 * relocated code stay mapped, so a thread inside them still goes on to the function's rest, and
 * the calls the old trampolines hooked are put back by running_threads.c (unhook_stale).
 * Anything else that differs from the file (another tool's patch) is left as it is.
 *
 * The code those jumps led to (each stub, and the blob copy it enters) is noted in a
 * struct stale_code: a thread stopped there now is halfway through that calltrace's entry or
 * exit, and must finish it before its thread gets a block of ours (control/attach.c steps it). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "arch/x86_64/inject_tramp.h"
#include "arch/x86_64/insn.h"
#include "tracer/inject/hops.h"
#include "remote/memory.h"
#include "tracer/inject/inject.h"
#include "tracer/inject/space.h"
#include "util/log.h"

#define MAX_TEXT (256u << 20) /* larger executable mappings are not compared */
#define ARCH_MAX_BRANCH_LEN 6 /* jcc rel32 */

/* A file-backed executable mapping of /proc/PID/maps. */
struct text_map {
    uint64_t lo, hi, offset, inode;
    unsigned major, minor;
    char path[4096];
};

static bool parse_text_map(const char *line, struct text_map *m)
{
    char perms[8];
    int path_at = 0;
    if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n", &m->lo, &m->hi,
               perms, &m->offset, &m->major, &m->minor, &m->inode, &path_at) < 7 ||
        perms[2] != 'x' || !m->inode || line[path_at] != '/')
        return false;
    snprintf(m->path, sizeof(m->path), "%s", line + path_at);
    m->path[strcspn(m->path, "\n")] = '\0';
    return m->hi > m->lo && m->hi - m->lo <= MAX_TEXT;
}

/* Is there one of calltrace's stubs at addr in p? */
static bool stub_at(const struct process *p, uint64_t addr)
{
    uint8_t want[FUNC_CODE_SIZE], got[8];
    inject_func_stub(want, addr, addr, 0, 0, 0); /* its first 8 bytes do not depend on the rest */
    return mem_read(p->mem_fd, addr, got, sizeof(got)) == 0 && memcmp(got, want, sizeof(got)) == 0;
}

static void note_range(struct stale_code *old, uint64_t lo, uint64_t hi)
{
    for (size_t i = 0; i < old->n; i++)
        if (old->v[i].lo == lo)
            return;
    struct code_range *more = reallocarray(old->v, old->n + 1, sizeof(*more));
    if (!more)
        return; /* the thread stopped there is stepped no further: rare, and said at attach */
    old->v = more;
    old->v[old->n++] = (struct code_range){lo, hi};
}

uint64_t inject_blob_copy_of(const struct process *p, uint64_t addr, const size_t *offs, size_t n)
{
    uint8_t head[32];
    for (size_t i = 0; i < n; i++) {
        uint64_t base = addr - offs[i];
        if (mem_read(p->mem_fd, base, head, sizeof(head)) == 0 &&
            memcmp(head, inject_blob, sizeof(head)) == 0)
            return base;
    }
    return 0;
}

/* The stub at stub and the blob copy its jump enters. */
static void note_stub(const struct process *p, uint64_t stub, struct stale_code *old)
{
    note_range(old, stub, stub + FUNC_CODE_SIZE);
    uint8_t jump[5];
    if (mem_read(p->mem_fd, stub + FUNC_STUB_LEN - 5, jump, sizeof(jump)) < 0 || jump[0] != 0xe9)
        return;
    int32_t rel;
    memcpy(&rel, jump + 1, sizeof(rel));
    uint64_t entry = stub + FUNC_STUB_LEN + (uint64_t)(int64_t)rel;
    const size_t offs[] = {inject_blob_entry_off, inject_blob_entry_args_off, inject_blob_hook_off};
    uint64_t base = inject_blob_copy_of(p, entry, offs, sizeof(offs) / sizeof(offs[0]));
    if (base)
        note_range(old, base, base + inject_blob_size);
}

/* Where a jump or jcc that differs from the file at mem[i] leads: its length in *len, and its
 * target; 0 when it is not one. */
static uint64_t branch_at(const struct text_map *m, const uint8_t *mem, size_t len, size_t i,
                          size_t *blen)
{
    struct arch_branch_bytes b;
    if (!arch_branch_bytes_at(mem + i, len - i, m->lo + i, &b) || b.is_call)
        return 0;
    *blen = b.len;
    return b.target;
}

/* Does the stale jump at mem[i] (length blen, to target) lead to a stub or to a stub's
 * relocated instructions (a loop's retargeted branch), directly or through a hop in the same
 * mapping (hops.h)? *stub: that stub. */
static bool leads_to_stub(const struct process *p, const struct text_map *m, const uint8_t *mem,
                          const uint8_t *file, size_t len, size_t blen, uint64_t target,
                          uint64_t *stub)
{
    if (blen == HOP_REACH && target >= m->lo && target + HOP_LEN <= m->lo + len) {
        size_t h = target - m->lo, hlen; /* a hop: a jump the file does not have */
        if (mem[h] == file[h] || mem[h] != 0xe9 || !(target = branch_at(m, mem, len, h, &hlen)))
            return false;
    }
    if (stub_at(p, target)) {
        *stub = target;
        return true;
    }
    if (stub_at(p, target - FUNC_RELOC_OFF)) {
        *stub = target - FUNC_RELOC_OFF;
        return true;
    }
    return false;
}

/* Is mem[i] inside (not at the start of) a stale rel32 jump to a stub? Its displacement bytes are
 * whatever the distance to the stub is, and among thousands of entries some read as a 2-byte jcc
 * whose target is another stale jump: the shape of a hop. Taken for one, the file's 2 bytes put
 * back over them tore the jump in two, and the next call ran the torn half (SIGTRAP on redis
 * attached again after a SIGKILLed calltrace; tests/e2e/114). */
static bool inside_stale_jump(const struct process *p, const struct text_map *m, const uint8_t *mem,
                              const uint8_t *file, size_t len, size_t i)
{
    for (size_t back = 1; back < ARCH_MAX_BRANCH_LEN && back <= i; back++) {
        size_t at = i - back, blen;
        uint64_t target, stub;
        if ((target = branch_at(m, mem, len, at, &blen)) && blen != HOP_REACH && at + blen > i &&
            memcmp(mem + at, file + at, blen) != 0 &&
            leads_to_stub(p, m, mem, file, len, blen, target, &stub))
            return true;
    }
    return false;
}

/* Puts the file's bytes back over each jump to a stub in the mapping m (an entry's jump, a hop,
 * a loop's branch retargeted), first those through hops, while the hops are still there;
 * returns how many. */
static size_t repair_map(const struct process *p, const struct text_map *m, uint8_t *mem,
                         const uint8_t *file, size_t len, struct stale_code *old)
{
    size_t repaired = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t diff = 0; /* the next byte that differs from the file */
        for (size_t i = 0; i + HOP_REACH <= len; i++) {
            while (diff < len && (diff < i || mem[diff] == file[diff]))
                diff++;
            if (diff >= len)
                break;
            if (diff > i + ARCH_MAX_BRANCH_LEN) /* no branch from here to there differs */
                i = diff - ARCH_MAX_BRANCH_LEN;
            size_t blen;
            uint64_t target, stub;
            if (!(target = branch_at(m, mem, len, i, &blen)) || i + blen <= diff ||
                (blen == HOP_REACH) != (pass == 0) ||
                !leads_to_stub(p, m, mem, file, len, blen, target, &stub) ||
                (pass == 0 && inside_stale_jump(p, m, mem, file, len, i)))
                continue;
            note_stub(p, stub, old);
            note_range(old, m->lo + i, m->lo + i + blen); /* a hop in padding, too */
            size_t end = i + blen; /* the jump, then the int3s of the bytes it covered */
            while (end < len && end < i + sizeof(((struct inject_patch *)0)->orig) &&
                   mem[end] != file[end] && mem[end] == 0xcc)
                end++;
            if (mem_write(p->mem_fd, m->lo + i, file + i, end - i) < 0) {
                dbg(DBG_INJECT, 1, "process %d: cannot restore %#" PRIx64 ": %s", (int)p->pid,
                    m->lo + i, strerror(errno));
                continue;
            }
            memcpy(mem + i, file + i, end - i);
            repaired++;
            i = end - 1;
        }
    }
    return repaired;
}

/* Compares the mapping with its file (the same file: the same inode), and repairs it. The path
 * is the program's to change (it may be another user's): a link or a FIFO planted there is not
 * followed or waited on, and a file that is not the one mapped is not read. */
static size_t check_map(const struct process *p, const struct text_map *m, struct stale_code *old)
{
    size_t len = m->hi - m->lo, repaired = 0;
    int fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    uint8_t *mem = malloc(len), *file = malloc(len);
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_ino == m->inode &&
        major(st.st_dev) == m->major && minor(st.st_dev) == m->minor && mem && file &&
        mem_read(p->mem_fd, m->lo, mem, len) == 0) {
        ssize_t got = pread(fd, file, len, (off_t)m->offset);
        if (got > 0)
            repaired = repair_map(p, m, mem, file, (size_t)got, old);
    }
    if (fd >= 0)
        close(fd);
    free(mem);
    free(file);
    return repaired;
}

void inject_undo_stale_patches(struct process *p, struct stale_code *old)
{
    char path[64], line[4400];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
    FILE *f = fopen(path, "re");
    if (!f) {
        dbg(DBG_INJECT, 1, "process %d: cannot read its maps: %s", (int)p->pid, strerror(errno));
        return;
    }
    size_t repaired = 0;
    struct text_map m;
    while (fgets(line, sizeof(line), f))
        if (parse_text_map(line, &m))
            repaired += check_map(p, &m, old);
    fclose(f);
    if (repaired)
        dbg(DBG_INJECT, 1, "process %d: %zu entries an earlier calltrace patched put back",
            (int)p->pid, repaired);
}

bool stale_code_has(const struct stale_code *old, uint64_t pc)
{
    for (size_t i = 0; i < old->n; i++)
        if (pc >= old->v[i].lo && pc < old->v[i].hi)
            return true;
    return false;
}
