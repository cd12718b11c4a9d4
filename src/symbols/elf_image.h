/* An executable image on disk: validated ELF header, load segments and function symbols. */
#ifndef CALLTRACE_SYMBOLS_ELF_IMAGE_H
#define CALLTRACE_SYMBOLS_ELF_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/func_filter.h"

struct func_symbol {
    uint64_t addr; /* link-time address (st_value); add the load bias for the runtime one */
    uint64_t size;
    char *name;     /* demangled */
    bool skipped;   /* C runtime start-up code: known but never traced */
    bool unnamed;   /* from the unwind table alone: named func_0xADDRESS */
    bool lib_call;  /* -L: a library's public function, traced when the program calls it */
    char **aliases; /* its other names at the same address (__getpid for getpid), demangled */
    size_t naliases;
};

struct exec_segment {
    uint64_t vaddr; /* link-time */
    uint64_t memsz;
};

/* An STT_GNU_IFUNC symbol: addr is its resolver, which returns the implementation chosen for
 * this machine; the resolver is not the function and never gets a breakpoint itself. */
struct ifunc_symbol {
    uint64_t resolver; /* link-time */
    char *name;
    int rank; /* of its binding: the best-ranked name of a resolver is kept */
};

struct elf_image {
    char *path;
    char *soname;   /* DT_SONAME, NULL when it has none */
    uint64_t init;  /* DT_INIT, link-time: the first code the dynamic linker runs in it; 0: none */
    bool pie;       /* ET_DYN: loaded at a bias */
    bool is_static; /* no PT_INTERP */
    uint64_t entry; /* e_entry, link-time */
    struct func_symbol *funcs;
    size_t nfuncs;
    struct exec_segment *segments;
    size_t nsegments;
    struct ifunc_symbol *ifuncs;
    size_t nifuncs;
    bool lib_calls; /* loaded by elf_image_load_exports: every function is a lib_call */
};

/* Frees f's names. */
void func_symbol_free(struct func_symbol *f);
/* Do -F/-N select f, by its name or any of its aliases (-F: one of them matches, -N: none)? */
bool func_symbol_selected(const struct func_filter *filter, const struct func_symbol *f);
/* func_filter_glob_hits over f's names. */
uint64_t func_symbol_glob_hits(const char *const *globs, size_t n, const struct func_symbol *f);

/* Loads path; on failure prints one "calltrace: PATH: WHY" line and returns -1. */
int elf_image_load(struct elf_image *image, const char *path);
/* -L: the same with only the functions (and IFUNCs) .dynsym exports, under their public names,
 * each a lib_call; those no program may have hooked left out: the ones that return twice
 * (setjmp, vfork) or switch stacks (swapcontext), and the unwinder's. */
int elf_image_load_exports(struct elf_image *image, const char *path);
/* The same without the symbols (no funcs, no ifuncs): a quick look at a library that may not
 * be traced at all. */
int elf_image_load_headers(struct elf_image *image, const char *path);
/* The same from an image in memory (size bytes at data, which libelf may convert in place
 * and which must outlive the call); name is for messages. */
int elf_image_load_memory(struct elf_image *image, const char *name, void *data, size_t size);
void elf_image_free(struct elf_image *image);
/* How many of its functions may be traced (the C runtime's are skipped). */
size_t elf_image_traceable(const struct elf_image *image);
/* The runtime extent [lo, hi) of its executable segments, loaded at bias; hi 0 when none. */
void elf_image_exec_range(const struct elf_image *image, uint64_t bias, uint64_t *lo, uint64_t *hi);
/* Are all the functions it may trace unnamed (func_0xADDRESS: no symbol table, no debug file,
 * and none that .dynsym names)? True when it has none. */
bool elf_image_unnamed(const struct elf_image *image);
/* Looks the n names up in path's symbol tables (.symtab, then .dynsym): values[i] is the
 * link-time value of names[i], 0 when absent. Returns 0, or -1 when path is unreadable. */
int elf_lookup_symbols(const char *path, const char *const *names, uint64_t *values, size_t n);
/* Does path import (an undefined .dynsym symbol) one of the n names? false when unreadable. */
bool elf_imports_any(const char *path, const char *const *names, size_t n);
/* Checks only that path is an ELF executable for this machine; fills why on failure. */
int elf_check_executable(const char *path, char *why, size_t whylen);

#endif
