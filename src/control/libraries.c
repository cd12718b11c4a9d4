/* -l GLOB: the functions of shared libraries, traced as the dynamic linker maps and unmaps them.
 *
 *   exec / attach ──> AT_BASE: the dynamic linker; a BP_HOOK on its _dl_debug_state
 *   _dl_debug_state hit with r_state CONSISTENT ──> walk r_debug.r_map's list:
 *        new object matching -l  ──> its functions get entry breakpoints (a REC_IMAGE of its own)
 *        object gone (dlclose)   ──> its breakpoints are forgotten, never written: the memory
 *                                    may already belong to something else
 *
 * IFUNC symbols (STT_GNU_IFUNC, libc's strlen, memcpy...) are resolvers, not functions: each is
 * called once in the program (a remote call, see remote_call.h) once its library is relocated,
 * and the implementation it returns is traced under the IFUNC's name. Libraries present at
 * start-up (or at attach) are relocated when the list is first whole; one that dlopen adds is
 * relocated only after the notification, so its IFUNCs wait for its first initializer (DT_INIT),
 * which the dynamic linker runs after relocating it and before anything else can call it. */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <bsd/string.h>

#include "control/control.h"
#include "tracer/addrspace.h"
#include "remote/call.h"
#include "tracer/scratch.h"
#include "symbols/elf_image.h"
#include "symbols/link_map.h"
#include "symbols/proc_maps.h"
#include "util/log.h"

#define MAX_IFUNC_NAME 256

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static bool path_matches(const char *glob, const char *path)
{
    return fnmatch(glob, base_name(path), 0) == 0 ||
           (strchr(glob, '/') && fnmatch(glob, path, 0) == 0);
}

/* fnmatch on the file's name (as the dynamic linker opened it, often a symbolic link named after
 * the soname, and the file it leads to), on its soname, and on the whole path for a glob with a
 * '/'. */
static bool lib_selected(struct session *s, const char *path, const char *soname)
{
    char real[PATH_MAX];
    bool has_real = realpath(path, real) != NULL;
    bool selected = false;
    for (size_t i = 0; i < s->opts->nlibs; i++) {
        const char *glob = s->opts->libs[i];
        if (path_matches(glob, path) || (has_real && path_matches(glob, real)) ||
            (soname && fnmatch(glob, soname, 0) == 0)) {
            s->stats.lib_globs_matched |= 1ull << i;
            selected = true;
        }
    }
    return selected;
}

static void note_seen(struct run_stats *stats, const char *path)
{
    const char *name = base_name(path);
    size_t len = strlen(name);
    char *seen = stats->libs_seen;
    for (const char *at = seen; (at = strstr(at, name)); at += len)
        if ((at == seen || at[-1] == ' ') && (at[len] == ',' || at[len] == '\0'))
            return;
    if (strlen(seen) + len + 3 >= sizeof(stats->libs_seen))
        return;
    if (*seen)
        strlcat(seen, ", ", sizeof(stats->libs_seen));
    strlcat(seen, name, sizeof(stats->libs_seen));
}

struct resolved {
    uint64_t impl;
    const char *name;
};

static int compare_resolved(const void *a, const void *b)
{
    const struct resolved *x = a, *y = b;
    if (x->impl != y->impl)
        return x->impl < y->impl ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The chosen implementations, one per address, each named after the IFUNCs that chose it:
 * IFUNCs that pick the same implementation (memcpy and memmove, often) cannot be told apart at
 * the callee, so the function is named after all of them, "memcpy/memmove". */
static size_t group_resolved(struct session *s, struct process *p, struct resolved *r, size_t n,
                             bool lib_calls, struct ifunc_impl *out)
{
    qsort(r, n, sizeof(*r), compare_resolved);
    size_t ngroups = 0;
    for (size_t i = 0, j; i < n; i = j) {
        char name[MAX_IFUNC_NAME] = "";
        bool wanted = false;
        for (j = i; j < n && r[j].impl == r[i].impl; j++) {
            wanted |= func_filter_selects(&s->opts->filter, r[j].name);
            if (j > i)
                strlcat(name, "/", sizeof(name));
            strlcat(name, r[j].name, sizeof(name));
        }
        if (!wanted)
            continue;
        if (p->backend->patched_at && p->backend->patched_at(s, p, r[i].impl)) {
            dbg(DBG_SYMBOLS, 1, "IFUNC %s: its implementation is traced under its own name", name);
            continue;
        }
        out[ngroups] = (struct ifunc_impl){r[i].impl, strdup(name), false, lib_calls};
        if (out[ngroups].name)
            ngroups++;
    }
    return ngroups;
}

/* The process's backend traces what it can (the inject backend must know an implementation's
 * extent), the breakpoints the rest. */
static long trace_resolved(struct session *s, struct process *p, pid_t tid,
                           const struct traced_lib *lib, struct resolved *r, size_t n)
{
    struct ifunc_impl *impls = calloc(n ? n : 1, sizeof(*impls));
    if (!impls)
        return 0;
    size_t ngroups = group_resolved(s, p, r, n, lib->lib_calls, impls);
    long traced = p->backend->trace_ifuncs(s, p, tid, lib->image_id, lib->bias, impls, ngroups);
    if (p->backend != s->breakpoints) /* those it left */
        traced += s->breakpoints->trace_ifuncs(s, p, tid, lib->image_id, lib->bias, impls, ngroups);
    for (size_t i = 0; i < ngroups; i++)
        free(impls[i].name);
    free(impls);
    return traced;
}

static bool any_selected(const struct session *s, const struct ifunc_symbol *ifuncs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (func_filter_selects(&s->opts->filter, ifuncs[i].name))
            return true;
    return false;
}

/* Calls every resolver of a relocated library and traces what they pick. */
static long resolve_ifuncs(struct session *s, struct process *p, pid_t tid,
                           const struct traced_lib *lib, const struct ifunc_symbol *ifuncs,
                           size_t n)
{
    if (!n || !any_selected(s, ifuncs, n))
        return 0;
    /* The resolver returns onto the scratch page's trap: make sure there is one. */
    if (!p->as->syscall_gadget && !scratch_alloc(p, tid, lib->lo, SCRATCH_SLOT, 4096))
        return 0;
    struct resolved *r = calloc(n, sizeof(*r));
    if (!r)
        return 0;
    size_t got = 0;
    /* a resolver that calls a traced function passes its breakpoint, recording nothing; one
     * that runs patched code writes into the thread's ring, which the backend skips after */
    struct remote_traps traps = {s->breakpoints->trap_resume_at, p->as};
    struct thread *t = thread_find(s, tid);
    if (t && p->backend->own_code)
        p->backend->own_code(s, t, false);
    for (size_t i = 0; i < n; i++) {
        uint64_t resolver = ifuncs[i].resolver + lib->bias, impl;
        if (remote_call(process_target(p, tid), resolver, &traps, &impl) < 0 || !impl) {
            dbg(DBG_SYMBOLS, 1, "IFUNC %s: its resolver failed (%s): not traced", ifuncs[i].name,
                strerror(errno));
            continue;
        }
        r[got++] = (struct resolved){impl, ifuncs[i].name};
    }
    if (t && p->backend->own_code)
        p->backend->own_code(s, t, true);
    long traced = trace_resolved(s, p, tid, lib, r, got);
    free(r);
    return traced;
}

static int keep_pending(struct traced_lib *lib, const struct elf_image *image)
{
    lib->pending = calloc(image->nifuncs, sizeof(*lib->pending));
    if (!lib->pending)
        return -1;
    for (size_t i = 0; i < image->nifuncs; i++) {
        lib->pending[i].resolver = image->ifuncs[i].resolver;
        lib->pending[i].name = strdup(image->ifuncs[i].name);
        lib->npending++;
        if (!lib->pending[i].name)
            return -1;
    }
    return 0;
}

/* The IFUNCs of a library not relocated yet wait for its DT_INIT. */
static void defer_ifuncs(struct session *s, struct process *p, pid_t tid, struct traced_lib *lib,
                         const struct elf_image *image)
{
    if (!image->nifuncs || !any_selected(s, image->ifuncs, image->nifuncs))
        return;
    if (!session_may_break(s)) { /* the wait would be a breakpoint */
        dbg(DBG_SYMBOLS, 1,
            "%s: loaded after the attach: its IFUNCs are left out (attached: no breakpoint)",
            image->path);
        s->stats.left_out_functions += image->nifuncs;
        return;
    }
    if (!image->init || !s->breakpoints->insert_hook(s, p, tid, image->init + lib->bias) ||
        keep_pending(lib, image) < 0) {
        dbg(DBG_SYMBOLS, 1, "%s: no initializer to wait for: its IFUNCs are not traced",
            image->path);
        traced_lib_clear(lib);
        return;
    }
    lib->init_hook = image->init + lib->bias;
}

void control_note_filter_hits(struct session *s, const struct elf_image *image)
{
    const struct func_filter *f = &s->opts->filter;
    for (size_t i = 0; i < image->nfuncs; i++) {
        if (image->funcs[i].skipped)
            continue;
        s->stats.only_matched |= func_symbol_glob_hits(f->only, f->nonly, &image->funcs[i]);
        s->stats.exclude_matched |=
            func_symbol_glob_hits(f->exclude, f->nexclude, &image->funcs[i]);
    }
    for (size_t i = 0; i < image->nifuncs; i++) {
        s->stats.only_matched |= func_filter_glob_hits(f->only, f->nonly, image->ifuncs[i].name);
        s->stats.exclude_matched |=
            func_filter_glob_hits(f->exclude, f->nexclude, image->ifuncs[i].name);
    }
}

void control_add_caller(struct session *s, struct process *p, uint64_t lo, uint64_t hi)
{
    struct caller_ranges *c = &p->as->callers;
    if (!s->opts->lib_calls)
        return;
    if (!caller_ranges_add(c, lo, hi)) {
        err_msg("warning: -L: more than %d images call into libraries in process %d: the calls "
                "of the ones after are left out",
                REGION_CALLERS_MAX, (int)p->pid);
        return;
    }
    if (p->backend->callers_changed)
        p->backend->callers_changed(s, p);
}

static void remove_caller(struct session *s, struct process *p, uint64_t lo, uint64_t hi)
{
    caller_ranges_remove(&p->as->callers, lo, hi);
    if (p->backend->callers_changed)
        p->backend->callers_changed(s, p);
}

static bool lib_call_wanted(struct session *s, const struct func_symbol *f)
{
    const struct trace_options *o = s->opts;
    if (!o->nlib_call_globs)
        return true;
    uint64_t hits = func_symbol_glob_hits(o->lib_call_globs, o->nlib_call_globs, f);
    s->stats.lib_call_globs_matched |= hits;
    return hits != 0;
}

/* -L GLOB: only the functions (and IFUNCs) it names stay in image. */
static void keep_lib_calls(struct session *s, struct elf_image *image)
{
    s->stats.lib_call_libs++;
    size_t kept = 0;
    for (size_t i = 0; i < image->nfuncs; i++) {
        if (lib_call_wanted(s, &image->funcs[i]))
            image->funcs[kept++] = image->funcs[i];
        else
            func_symbol_free(&image->funcs[i]);
    }
    image->nfuncs = kept;
    kept = 0;
    for (size_t i = 0; i < image->nifuncs; i++) {
        if (lib_call_wanted(s, &(struct func_symbol){.name = image->ifuncs[i].name}))
            image->ifuncs[kept++] = image->ifuncs[i];
        else
            free(image->ifuncs[i].name);
    }
    image->nifuncs = kept;
}

/* The process's backend traces a library's functions (the inject backend patches them when the
 * process has its rings), else the breakpoints do. */
static long trace_functions(struct session *s, struct process *p, pid_t tid,
                            const struct elf_image *image, uint64_t bias)
{
    long traced = p->backend->trace_library(s, p, tid, image, bias);
    if (traced < 0 && p->backend != s->breakpoints)
        traced = s->breakpoints->trace_library(s, p, tid, image, bias);
    return traced;
}

/* Instruments one new object when -l selects it; remembers it either way. */
static long add_library(struct session *s, struct process *p, pid_t tid,
                        const struct loaded_object *obj, bool relocated)
{
    struct linker_watch *lw = &p->as->linker;
    struct traced_lib *more = reallocarray(lw->libs, lw->nlibs + 1, sizeof(*lw->libs));
    if (!more)
        return 0;
    lw->libs = more;
    struct traced_lib *lib = &lw->libs[lw->nlibs++];
    *lib = (struct traced_lib){.map = obj->map, .bias = obj->bias};
    /* the vDSO has a name but no file; a library deleted since it was mapped has no file */
    if (access(obj->path, R_OK) < 0) {
        dbg(DBG_ENGINE, 1, "%s: %s: not traced", obj->path, strerror(errno));
        return 0;
    }
    note_seen(&s->stats, obj->path);
    /* Its symbols are read only when it is traced: a program may load hundreds of libraries. */
    struct elf_image image;
    if (elf_image_load_headers(&image, obj->path) < 0) /* it says why */
        return 0;
    /* Even untraced, its code may get return sites (a callback into the program returns
     * there): they go with it. */
    elf_image_exec_range(&image, obj->bias, &lib->lo, &lib->hi);
    bool selected = lib_selected(s, obj->path, image.soname);
    elf_image_free(&image);
    /* -L: a library -l does not trace gets its exported functions, at the boundary */
    lib->lib_calls = !selected && s->opts->lib_calls;
    if (lib->lib_calls ? elf_image_load_exports(&image, obj->path) < 0
                       : !selected || elf_image_load(&image, obj->path) < 0)
        return 0;
    if (lib->lib_calls)
        keep_lib_calls(s, &image);
    else
        control_add_caller(s, p, lib->lo, lib->hi);
    lib->traced = true;
    control_note_filter_hits(s, &image);
    lib->image_id = s->next_image_id;
    lib->func_lo = s->next_func_id;
    long traced = trace_functions(s, p, tid, &image, obj->bias);
    if (traced < 0)
        traced = 0;
    if (relocated)
        traced += resolve_ifuncs(s, p, tid, lib, image.ifuncs, image.nifuncs);
    else
        defer_ifuncs(s, p, tid, lib, &image);
    lib->func_hi = s->next_func_id;
    dbg(DBG_ENGINE, 1, "%s: %ld functions traced in process %d", obj->path, traced, (int)p->pid);
    elf_image_free(&image);
    return traced;
}

/* A thread with an open call of the library, or one that would return into it, can never see
 * those calls end: they are closed (as unwound) from the outermost such frame up. */
static void close_frames_in(struct session *s, struct addrspace *as, const struct traced_lib *lib,
                            uint64_t now)
{
    ADDR_MAP_FOREACH(&s->threads, slot)
    {
        struct thread *t = slot->value;
        if (!t->proc || t->proc->as != as)
            continue;
        for (size_t i = 0; i < t->stack.depth; i++) {
            const struct frame *f = &t->stack.frames[i];
            bool its_call = f->func >= lib->func_lo && f->func < lib->func_hi;
            bool returns_into = f->ret_addr >= lib->lo && f->ret_addr < lib->hi;
            if (its_call || returns_into) {
                struct frame_end_ctx ctx = {s, t, now};
                frames_close_from(&t->stack, i, EXIT_UNWOUND, session_frame_end, &ctx);
                break;
            }
        }
    }
}

static void remove_library(struct session *s, struct process *p, size_t index, uint64_t now)
{
    struct addrspace *as = p->as;
    struct linker_watch *lw = &as->linker;
    struct traced_lib *lib = &lw->libs[index];
    if (lib->traced && !lib->lib_calls && lib->hi)
        remove_caller(s, p, lib->lo, lib->hi);
    if (lib->hi) {
        /* every process has breakpoints: the backend's patches go, then they */
        if (p->backend != s->breakpoints)
            p->backend->forget_library(s, p, lib->lo, lib->hi, lib->func_lo, lib->func_hi);
        s->breakpoints->forget_library(s, p, lib->lo, lib->hi, lib->func_lo, lib->func_hi);
        close_frames_in(s, as, lib, now);
        maps_free(&as->maps); /* the cached maps still show it */
        dbg(DBG_ENGINE, 1, "library at %#llx unloaded: its breakpoints and patches are forgotten",
            (unsigned long long)lib->bias);
    }
    traced_lib_clear(lib);
    lw->libs[index] = lw->libs[--lw->nlibs];
}

static bool listed(const struct link_map_list *list, const struct traced_lib *lib)
{
    for (size_t i = 0; i < list->count; i++)
        if (list->objects[i].map == lib->map && list->objects[i].bias == lib->bias)
            return true;
    return false;
}

static bool known(const struct linker_watch *lw, const struct loaded_object *obj)
{
    for (size_t i = 0; i < lw->nlibs; i++)
        if (lw->libs[i].map == obj->map && lw->libs[i].bias == obj->bias)
            return true;
    return false;
}

/* Brings the traced libraries in line with the dynamic linker's list, when it is whole. */
static long sync_libraries(struct session *s, struct process *p, pid_t tid, uint64_t now)
{
    struct linker_watch *lw = &p->as->linker;
    struct link_map_list list;
    if (link_map_read(p->mem_fd, lw->r_debug, &list) < 0) {
        dbg(DBG_ENGINE, 1, "process %d: cannot read the list of libraries: %s", (int)p->pid,
            strerror(errno));
        link_map_free(&list);
        return 0;
    }
    if (list.state != LINK_MAP_CONSISTENT) {
        link_map_free(&list);
        return 0;
    }
    bool relocated = !lw->started;
    lw->started = true;
    for (size_t i = lw->nlibs; i-- > 0;)
        if (!listed(&list, &lw->libs[i]))
            remove_library(s, p, i, now);
    long traced = 0;
    for (size_t i = 0; i < list.count; i++) {
        const struct loaded_object *obj = &list.objects[i];
        /* the executable has no file name, nor has the vDSO: its name, linux-vdso.so.1, is
         * the only one without a '/' (the dynamic linker names every library it loads by the
         * path it found it at); the dynamic linker is never traced: calltrace's hook is in it */
        if (!strchr(obj->path, '/') || obj->bias == lw->ld_base || known(lw, obj))
            continue;
        if (p->backend->on_library)
            p->backend->on_library(s, p, tid, obj->path, obj->bias);
        traced += add_library(s, p, tid, obj, relocated);
    }
    link_map_free(&list);
    return traced;
}

void control_relearn_libraries(struct addrspace *as)
{
    struct linker_watch *lw = &as->linker;
    for (size_t i = 0; i < lw->nlibs; i++)
        traced_lib_clear(&lw->libs[i]);
    lw->nlibs = 0;
    lw->started = false; /* they are relocated: their IFUNCs can be resolved at once */
}

long control_watch_libraries(struct session *s, struct process *p, pid_t via, bool at_exec,
                             uint64_t now)
{
    /* the inject backend watches the libraries for their unwinder (tracer/inject/unwind.h) */
    const struct tracer_backend *b = p->backend;
    if (!s->opts->nlibs && !s->opts->lib_calls &&
        !(b->watches_libraries && b->watches_libraries(s, p)))
        return 0;
    uint64_t base = auxv_value(p->pid, AT_BASE);
    char ld_path[PATH_MAX];
    if (!base || maps_path_at(p->pid, base, ld_path, sizeof(ld_path)) < 0) {
        dbg(DBG_ENGINE, 1, "process %d: no dynamic linker (a static program): no libraries",
            (int)p->pid);
        return 0;
    }
    static const char *const names[] = {"_r_debug", "_dl_debug_state"};
    uint64_t at[2];
    if (elf_lookup_symbols(ld_path, names, at, 2) < 0 || !at[0] || !at[1]) {
        err_msg("warning: %s: no _r_debug or _dl_debug_state: libraries cannot be traced", ld_path);
        return 0;
    }
    /* The dynamic linker is linked at 0, so AT_BASE is its bias. */
    struct linker_watch *lw = &p->as->linker;
    lw->r_debug = base + at[0];
    lw->hook = base + at[1];
    lw->ld_base = base;
    /* attached, no breakpoint: the hook is the program's own (tracer/inject/requests.c) */
    const struct tracer_backend *hooks = session_may_break(s) ? s->breakpoints : p->backend;
    if (!hooks->insert_hook || !hooks->insert_hook(s, p, via, lw->hook)) {
        if (at_exec) {
            err_msg("warning: process %d: cannot watch its dynamic linker: libraries are not "
                    "traced",
                    (int)p->pid);
            lw->r_debug = 0;
            return 0;
        }
        err_msg("warning: process %d: cannot watch its dynamic linker: the libraries it loads "
                "from now on are not traced (-v says why)",
                (int)p->pid);
        lw->hook = 0;
    }
    /* At exec the dynamic linker has not run yet: its first notifications come later. */
    return at_exec ? 0 : sync_libraries(s, p, via, now);
}

void control_on_hook(struct session *s, struct thread *t, uint64_t addr, uint64_t now)
{
    struct process *p = t->proc;
    if (p->backend->on_hook && p->backend->on_hook(s, t, addr, now))
        return;
    struct linker_watch *lw = &p->as->linker;
    if (lw->r_debug && addr == lw->hook) {
        sync_libraries(s, p, t->tid, now);
        return;
    }
    for (size_t i = 0; i < lw->nlibs; i++) {
        struct traced_lib *lib = &lw->libs[i];
        if (lib->init_hook != addr || !lib->npending)
            continue;
        /* Their ids come after other libraries' ones: dlclose finds them by address. */
        resolve_ifuncs(s, p, t->tid, lib, lib->pending, lib->npending);
        traced_lib_clear(lib);
    }
}
