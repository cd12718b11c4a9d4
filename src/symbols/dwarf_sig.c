#include "symbols/dwarf_sig.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bsd/string.h>
#include <unistd.h>

#include "symbols/debug_file.h"
#include "symbols/demangle.h"
#include "util/addr_map.h"

struct elf_sym {
    uint64_t addr;
    uint64_t size;
    char *name;
};

struct dwarf_sigs {
    int fd;
    Elf *elf;                /* the file's, or its debug file's (debug.elf) */
    struct debug_file debug; /* .dwfl: elf is the debug file's */
    Dwarf *dwarf;            /* NULL: no debug information */
    struct addr_map types;   /* DIE offset + 1 -> struct ctype */
    struct addr_map sigs;    /* function address + 1 -> struct func_sig, or &no_sig */
    void **owned;            /* every allocation, freed at close */
    size_t nowned, capowned;
    struct elf_sym *syms;
    size_t nsyms;
    bool cplusplus; /* of the compilation unit being read: spells "struct" or not */
};

static struct func_sig no_sig;

static void *own(struct dwarf_sigs *d, void *p)
{
    if (!p)
        return NULL;
    if (d->nowned == d->capowned) {
        size_t cap = d->capowned ? d->capowned * 2 : 256;
        void **owned = reallocarray(d->owned, cap, sizeof(*owned));
        if (!owned) {
            free(p);
            return NULL;
        }
        d->owned = owned;
        d->capowned = cap;
    }
    d->owned[d->nowned++] = p;
    return p;
}

static char *own_printf(struct dwarf_sigs *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return own(d, s);
}

static char *own_strdup(struct dwarf_sigs *d, const char *s)
{
    return s ? own(d, strdup(s)) : NULL;
}

static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

static bool die_ref(Dwarf_Die *die, int attr, Dwarf_Die *out)
{
    Dwarf_Attribute a;
    return dwarf_attr_integrate(die, attr, &a) && dwarf_formref_die(&a, out);
}

static uint64_t die_udata(Dwarf_Die *die, int attr, uint64_t dflt)
{
    Dwarf_Attribute a;
    Dwarf_Word w;
    if (!dwarf_attr_integrate(die, attr, &a) || dwarf_formudata(&a, &w) != 0)
        return dflt;
    return w;
}

static struct ctype *type_of(struct dwarf_sigs *d, Dwarf_Die *die);

/* The type named by die's DW_AT_type; NULL means void. */
static struct ctype *ref_type(struct dwarf_sigs *d, Dwarf_Die *die)
{
    Dwarf_Die t;
    return die_ref(die, DW_AT_type, &t) ? type_of(d, &t) : NULL;
}

/* A type still being read (damaged DWARF that refers back to it) has no name yet. */
static const char *spelled(const struct ctype *t)
{
    return t ? (t->name ? t->name : "?") : "void";
}

/* The size of t's type under its typedefs and qualifiers: 0 for void (a qualified void too). */
static uint64_t stripped_size(const struct ctype *t)
{
    const struct ctype *s = ctype_strip(t);
    return s ? s->size : 0;
}

/* Damaged DWARF can make a typedef or qualifier refer to itself through others: ctype_strip
 * would follow that chain for ever. The type that closes the loop stands for void instead. */
static struct ctype *alias_target(struct ctype *t, struct ctype *target)
{
    for (const struct ctype *s = target; s && s->kind == CT_ALIAS; s = s->target)
        if (s == t)
            return NULL;
    return target;
}

/* "int (int, char *)" from a subroutine type or a subprogram's parameters. */
static char *spell_params(struct dwarf_sigs *d, Dwarf_Die *die)
{
    char buf[512] = "";
    size_t n = 0;
    Dwarf_Die child;
    bool any = false;
    if (dwarf_child(die, &child) == 0) {
        do {
            int tag = dwarf_tag(&child);
            const char *p = NULL;
            if (tag == DW_TAG_formal_parameter)
                p = spelled(ref_type(d, &child));
            else if (tag == DW_TAG_unspecified_parameters)
                p = "...";
            if (!p)
                continue;
            n += (size_t)snprintf(buf + n, n < sizeof(buf) ? sizeof(buf) - n : 0, "%s%s",
                                  any ? ", " : "", p);
            any = true;
        } while (dwarf_siblingof(&child, &child) == 0);
    }
    if (!any)
        snprintf(buf, sizeof(buf), "void");
    return own_printf(d, "(%s)", buf);
}

/* "<ns::Base>" for a DW_TAG_inheritance: the base's name with its enclosing namespaces and
 * classes. dwarf_getscopes_die walks the unit from its start, which is why only base classes
 * (few) are qualified this way. */
static char *base_label(struct dwarf_sigs *d, Dwarf_Die *inheritance)
{
    Dwarf_Attribute attr;
    Dwarf_Die base, *scopes = NULL;
    if (!dwarf_attr_integrate(inheritance, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &base))
        return NULL;
    char label[512] = "";
    int n = dwarf_getscopes_die(&base, &scopes);
    for (int i = n - 1; i >= 0; i--) { /* outermost first; scopes[0] is the base itself */
        const char *name = die_name(&scopes[i]);
        int tag = dwarf_tag(&scopes[i]);
        if (!name || tag == DW_TAG_compile_unit || tag == DW_TAG_partial_unit)
            continue;
        strlcat(label, *label ? "::" : "", sizeof(label));
        strlcat(label, name, sizeof(label));
    }
    free(scopes);
    if (!*label && die_name(&base))
        strlcpy(label, die_name(&base), sizeof(label));
    return *label ? own_printf(d, "<%s>", label) : NULL;
}

static void read_members(struct dwarf_sigs *d, Dwarf_Die *die, struct ctype *t)
{
    Dwarf_Die child;
    if (dwarf_child(die, &child) != 0)
        return;
    size_t cap = 0;
    unsigned align = 1;
    do {
        int tag = dwarf_tag(&child);
        bool base = tag == DW_TAG_inheritance;
        if ((tag != DW_TAG_member && !base) || dwarf_hasattr(&child, DW_AT_external))
            continue; /* static members are not part of the value */
        if (base && dwarf_hasattr(&child, DW_AT_virtuality))
            continue; /* a virtual base is found through the vtable at run time */
        if (t->nmembers == cap) {
            cap = cap ? cap * 2 : 8;
            struct ctype_member *m = reallocarray(NULL, cap, sizeof(*m));
            if (!m || !own(d, m))
                return;
            if (t->nmembers)
                memcpy(m, t->members, t->nmembers * sizeof(*m));
            t->members = m;
        }
        struct ctype_member *m = &t->members[t->nmembers++];
        memset(m, 0, sizeof(*m));
        m->type = ref_type(d, &child);
        if (base) /* shown as gdb shows it: {<ns::Base> = {...}, member = ...} */
            m->name = base_label(d, &child);
        else
            m->name = own_strdup(d, die_name(&child));
        m->bit_size = (unsigned)die_udata(&child, DW_AT_bit_size, 0);
        uint64_t bits = die_udata(&child, DW_AT_data_bit_offset, UINT64_MAX);
        if (bits != UINT64_MAX) {
            m->offset = bits / 8;
            m->bit_offset = (unsigned)(bits % 8);
        } else {
            m->offset = die_udata(&child, DW_AT_data_member_location, 0);
        }
        unsigned a = ctype_natural_align(m->type);
        align = a > align ? a : align;
    } while (dwarf_siblingof(&child, &child) == 0);
    t->align = align;
}

static void read_enumerators(struct dwarf_sigs *d, Dwarf_Die *die, struct ctype *t)
{
    Dwarf_Die child;
    if (dwarf_child(die, &child) != 0)
        return;
    size_t cap = 0;
    do {
        if (dwarf_tag(&child) != DW_TAG_enumerator)
            continue;
        Dwarf_Attribute a;
        if (!dwarf_attr(&child, DW_AT_const_value, &a))
            continue;
        if (t->nenums == cap) {
            cap = cap ? cap * 2 : 8;
            struct ctype_enumerator *e = reallocarray(NULL, cap, sizeof(*e));
            if (!e || !own(d, e))
                return;
            if (t->nenums)
                memcpy(e, t->enums, t->nenums * sizeof(*e));
            t->enums = e;
        }
        struct ctype_enumerator *e = &t->enums[t->nenums++];
        e->name = own_strdup(d, die_name(&child));
        Dwarf_Sword sv;
        Dwarf_Word uv;
        if (t->is_signed && dwarf_formsdata(&a, &sv) == 0)
            e->value = sv;
        else if (dwarf_formudata(&a, &uv) == 0)
            e->value = (int64_t)uv;
    } while (dwarf_siblingof(&child, &child) == 0);
}

static void read_base(Dwarf_Die *die, struct ctype *t)
{
    t->size = die_udata(die, DW_AT_byte_size, 0);
    switch (die_udata(die, DW_AT_encoding, 0)) {
    case DW_ATE_boolean:
        t->kind = CT_BOOL;
        break;
    case DW_ATE_float:
        t->kind = CT_FLOAT;
        t->is_x87 = t->size == 16 && t->name && strstr(t->name, "long double");
        break;
    case DW_ATE_signed_char:
        t->is_signed = true;
        t->kind = t->size == 1 ? CT_CHAR : CT_INT;
        break;
    case DW_ATE_unsigned_char:
        t->kind = t->size == 1 ? CT_CHAR : CT_INT;
        break;
    case DW_ATE_signed:
        t->is_signed = true;
        t->kind = CT_INT;
        break;
    case DW_ATE_unsigned:
    case DW_ATE_UTF:
        t->kind = CT_INT;
        break;
    default:
        t->kind = CT_UNKNOWN;
    }
    t->align = ctype_natural_align(t);
}

/* Array dimensions, outermost first: int a[2][3] is an array of 2 arrays of 3 ints. */
static struct ctype *read_array(struct dwarf_sigs *d, Dwarf_Die *die, struct ctype *t)
{
    struct ctype *elem = ref_type(d, die);
    uint64_t dims[8];
    size_t ndims = 0;
    Dwarf_Die child;
    if (dwarf_child(die, &child) == 0) {
        do {
            if (dwarf_tag(&child) != DW_TAG_subrange_type || ndims == 8)
                continue;
            uint64_t count = die_udata(&child, DW_AT_count, UINT64_MAX);
            if (count == UINT64_MAX) {
                uint64_t upper = die_udata(&child, DW_AT_upper_bound, UINT64_MAX);
                count = upper == UINT64_MAX ? 0 : upper + 1;
            }
            dims[ndims++] = count;
        } while (dwarf_siblingof(&child, &child) == 0);
    }
    if (!ndims)
        dims[ndims++] = 0;
    /* innermost first, each wrapping the previous */
    struct ctype *inner = elem;
    char suffix[256] = "";
    for (size_t i = ndims; i-- > 1;) {
        struct ctype *a = own(d, calloc(1, sizeof(*a)));
        if (!a)
            return t;
        char dim[32];
        int n = snprintf(dim, sizeof(dim), "[%llu]", (unsigned long long)dims[i]);
        size_t len = strlen(suffix);
        if (len + (size_t)n < sizeof(suffix)) {
            memmove(suffix + n, suffix, len + 1);
            memcpy(suffix, dim, (size_t)n);
        }
        *a = (struct ctype){.kind = CT_ARRAY, .target = inner, .count = dims[i]};
        a->size = dims[i] * stripped_size(inner);
        a->align = ctype_natural_align(inner);
        a->name = own_printf(d, "%s %s", spelled(elem), suffix);
        inner = a;
    }
    t->kind = CT_ARRAY;
    t->target = inner;
    t->count = dims[0];
    t->size = dims[0] * stripped_size(inner);
    t->align = ctype_natural_align(inner);
    t->incomplete = dims[0] == 0;
    t->name = own_printf(d, "%s [%llu]%s", spelled(elem), (unsigned long long)dims[0], suffix);
    return t;
}

static char *spell_pointer(struct dwarf_sigs *d, Dwarf_Die *die, const struct ctype *target,
                           const char *op)
{
    Dwarf_Die td;
    if (target && target->kind == CT_FUNC && die_ref(die, DW_AT_type, &td))
        return own_printf(d, "%s (%s)%s", spelled(target->target), op, spell_params(d, &td));
    if (target && target->kind == CT_ARRAY) {
        const char *br = target->name ? strchr(target->name, '[') : NULL;
        return own_printf(d, "%.*s(%s)%s", (int)(br ? br - target->name : 0), spelled(target), op,
                          br ? br : "");
    }
    const char *ts = spelled(target);
    size_t n = strlen(ts);
    return own_printf(d, "%s%s%s", ts, n && (ts[n - 1] == '*' || ts[n - 1] == '&') ? "" : " ", op);
}

static struct ctype *type_of(struct dwarf_sigs *d, Dwarf_Die *die)
{
    uint64_t key = dwarf_dieoffset(die) + 1;
    struct ctype *t = addr_map_get(&d->types, key);
    if (t)
        return t;
    t = own(d, calloc(1, sizeof(*t)));
    if (!t || addr_map_put(&d->types, key, t) < 0)
        return NULL;
    t->kind = CT_UNKNOWN;
    const char *name = die_name(die);
    t->name = own_strdup(d, name);
    int tag = dwarf_tag(die);
    switch (tag) {
    case DW_TAG_base_type:
        read_base(die, t);
        break;
    case DW_TAG_unspecified_type: /* decltype(nullptr) */
        t->kind = CT_PTR;
        t->size = 8;
        t->align = 8;
        break;
    case DW_TAG_enumeration_type: {
        t->kind = CT_ENUM;
        t->size = die_udata(die, DW_AT_byte_size, 4);
        struct ctype *under = ref_type(d, die);
        t->is_signed = ctype_strip(under) ? ctype_strip(under)->is_signed : false;
        t->align = ctype_natural_align(t);
        t->name = d->cplusplus && name ? t->name : own_printf(d, "enum %s", name ? name : "{...}");
        read_enumerators(d, die, t);
        break;
    }
    case DW_TAG_structure_type:
    case DW_TAG_class_type:
    case DW_TAG_union_type: {
        bool is_union = tag == DW_TAG_union_type;
        t->kind = is_union ? CT_UNION : CT_STRUCT;
        t->size = die_udata(die, DW_AT_byte_size, 0);
        t->incomplete = dwarf_hasattr(die, DW_AT_declaration);
        const char *word = is_union ? "union" : tag == DW_TAG_class_type ? "class" : "struct";
        if (!name || !d->cplusplus)
            t->name = own_printf(d, "%s %s", word, name ? name : "{...}");
        read_members(d, die, t);
        break;
    }
    case DW_TAG_array_type:
        return read_array(d, die, t);
    case DW_TAG_pointer_type:
    case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type:
    case DW_TAG_ptr_to_member_type: {
        bool ref = tag == DW_TAG_reference_type || tag == DW_TAG_rvalue_reference_type;
        t->kind = ref ? CT_REF : CT_PTR;
        t->size = die_udata(die, DW_AT_byte_size, 8);
        t->align = 8;
        t->target = ref_type(d, die);
        t->name = spell_pointer(d, die, t->target,
                                tag == DW_TAG_rvalue_reference_type ? "&&"
                                : ref                               ? "&"
                                                                    : "*");
        break;
    }
    case DW_TAG_subroutine_type:
        t->kind = CT_FUNC;
        t->target = ref_type(d, die);
        t->name = own_printf(d, "%s %s", spelled(t->target), spell_params(d, die));
        break;
    case DW_TAG_typedef:
    case DW_TAG_const_type:
    case DW_TAG_volatile_type:
    case DW_TAG_restrict_type:
    case DW_TAG_atomic_type: {
        t->kind = CT_ALIAS;
        t->target = alias_target(t, ref_type(d, die));
        const struct ctype *s = ctype_strip(t->target);
        t->size = s ? s->size : 0;
        t->align = ctype_natural_align(t->target);
        if (tag != DW_TAG_typedef) {
            const char *q = tag == DW_TAG_const_type      ? "const"
                            : tag == DW_TAG_volatile_type ? "volatile"
                            : tag == DW_TAG_restrict_type ? "restrict"
                                                          : "_Atomic";
            bool after = t->target && t->target->kind == CT_PTR;
            t->name = after ? own_printf(d, "%s %s", spelled(t->target), q)
                            : own_printf(d, "%s %s", q, spelled(t->target));
        }
        if (!t->target) /* const void */
            t->kind = CT_VOID;
        break;
    }
    default:
        break;
    }
    if (!t->name)
        t->name = own_strdup(d, "?");
    return t;
}

/* The parameters in declaration order, from the abstract origin when the function has one (an
 * out-of-line copy of an inline function lists only some of them), with whether this copy has
 * a location for each. */
static int read_params(struct dwarf_sigs *d, Dwarf_Die *fn, struct func_sig *sig)
{
    Dwarf_Die origin, *decl = fn, child;
    if (die_ref(fn, DW_AT_abstract_origin, &origin))
        decl = &origin;
    Dwarf_Die spec;
    if (dwarf_tag(decl) == DW_TAG_subprogram && die_ref(decl, DW_AT_specification, &spec) &&
        !dwarf_haschildren(decl))
        decl = &spec;
    if (dwarf_child(decl, &child) != 0)
        return 0;
    size_t cap = 0;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_unspecified_parameters)
            sig->variadic = true;
        if (tag != DW_TAG_formal_parameter)
            continue;
        if (sig->nparams == cap) {
            cap = cap ? cap * 2 : 8;
            struct func_param *p = reallocarray(NULL, cap, sizeof(*p));
            if (!p || !own(d, p))
                return -1;
            if (sig->nparams)
                memcpy(p, sig->params, sig->nparams * sizeof(*p));
            sig->params = p;
        }
        struct func_param *p = &sig->params[sig->nparams++];
        p->name = own_strdup(d, die_name(&child));
        p->type = ref_type(d, &child);
        bool located =
            dwarf_hasattr(&child, DW_AT_location) || dwarf_hasattr(&child, DW_AT_const_value);
        if (decl != fn) { /* find this copy's own entry for it */
            located = false;
            Dwarf_Die own_child, ref;
            if (dwarf_child(fn, &own_child) == 0) {
                do {
                    if (dwarf_tag(&own_child) == DW_TAG_formal_parameter &&
                        die_ref(&own_child, DW_AT_abstract_origin, &ref) &&
                        dwarf_dieoffset(&ref) == dwarf_dieoffset(&child))
                        located = dwarf_hasattr(&own_child, DW_AT_location) ||
                                  dwarf_hasattr(&own_child, DW_AT_const_value);
                } while (dwarf_siblingof(&own_child, &own_child) == 0);
            }
        }
        p->optimized_out = !located;
    } while (dwarf_siblingof(&child, &child) == 0);
    return 0;
}

/* Does the subprogram die start at addr? Its DW_AT_low_pc, or, for a function gcc split in hot
 * and cold parts (-O2: a throwing path moved to .text.unlikely), one of its DW_AT_ranges. */
static bool starts_at(Dwarf_Die *die, uint64_t addr)
{
    Dwarf_Addr low, base, start, end;
    if (dwarf_lowpc(die, &low) == 0)
        return low == addr;
    ptrdiff_t at = 0;
    int ranges = 0;
    while ((at = dwarf_ranges(die, at, &base, &start, &end)) > 0 && ranges++ < 64)
        if (start == addr)
            return true;
    return false;
}

static bool find_subprogram(Dwarf_Die *scope, uint64_t addr, Dwarf_Die *out, int depth)
{
    Dwarf_Die child;
    if (depth > 8 || dwarf_child(scope, &child) != 0)
        return false;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_subprogram && starts_at(&child, addr)) {
            *out = child;
            return true;
        }
        if ((tag == DW_TAG_namespace || tag == DW_TAG_structure_type || tag == DW_TAG_class_type) &&
            find_subprogram(&child, addr, out, depth + 1))
            return true;
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

const struct func_sig *dwarf_sigs_find(struct dwarf_sigs *d, uint64_t addr)
{
    struct func_sig *sig = addr_map_get(&d->sigs, addr + 1);
    if (sig)
        return sig == &no_sig ? NULL : sig;
    Dwarf_Die cu, fn;
    if (!d->dwarf || !dwarf_addrdie(d->dwarf, addr, &cu) || !find_subprogram(&cu, addr, &fn, 0)) {
        addr_map_put(&d->sigs, addr + 1, &no_sig);
        return NULL;
    }
    int lang = dwarf_srclang(&cu);
    d->cplusplus = lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_11 ||
                   lang == DW_LANG_C_plus_plus_14 || lang == DW_LANG_C_plus_plus_03;
    sig = own(d, calloc(1, sizeof(*sig)));
    if (!sig)
        return NULL;
    sig->name = own_strdup(d, die_name(&fn));
    sig->ret = ref_type(d, &fn);
    if (read_params(d, &fn, sig) < 0 || addr_map_put(&d->sigs, addr + 1, sig) < 0)
        return NULL;
    return sig;
}

static int sym_cmp(const void *a, const void *b)
{
    const struct elf_sym *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void read_symbols(struct dwarf_sigs *d)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(d->elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        size_t n = data ? sh.sh_size / sh.sh_entsize : 0;
        d->syms = calloc(n ? n : 1, sizeof(*d->syms));
        if (!d->syms)
            return;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym s;
            if (!gelf_getsym(data, (int)i, &s) || !s.st_value || s.st_shndx == SHN_UNDEF)
                continue;
            int type = GELF_ST_TYPE(s.st_info);
            if (type != STT_FUNC && type != STT_OBJECT)
                continue;
            const char *name = elf_strptr(d->elf, sh.sh_link, s.st_name);
            if (!name || !*name)
                continue;
            d->syms[d->nsyms++] = (struct elf_sym){s.st_value, s.st_size, (char *)name};
            if (type == STT_OBJECT) /* a static local: gdb names "nums.0" after its variable */
                d->syms[d->nsyms - 1].name = own(d, strndup(name, strcspn(name, ".")));
            if (!d->syms[d->nsyms - 1].name)
                d->nsyms--;
        }
        qsort(d->syms, d->nsyms, sizeof(*d->syms), sym_cmp);
        return;
    }
}

const char *dwarf_sigs_symbol(const struct dwarf_sigs *d, uint64_t addr, uint64_t *offset)
{
    size_t lo = 0, hi = d->nsyms;
    while (lo < hi) { /* the last symbol starting at or below addr */
        size_t mid = (lo + hi) / 2;
        if (d->syms[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0 && lo - i <= 4;) { /* overlapping symbols: the nearest fit */
        const struct elf_sym *s = &d->syms[i];
        if (addr < s->addr + (s->size ? s->size : 1)) {
            *offset = addr - s->addr;
            return s->name;
        }
    }
    return NULL;
}

bool dwarf_sigs_has_function(const struct dwarf_sigs *d, uint64_t addr, const char *name)
{
    size_t lo = 0, hi = d->nsyms;
    while (lo < hi) { /* the first symbol at or above addr */
        size_t mid = (lo + hi) / 2;
        if (d->syms[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < d->nsyms && d->syms[i].addr == addr; i++) {
        char *dm = demangle(d->syms[i].name);
        bool same = dm && strcmp(dm, name) == 0;
        free(dm);
        if (same)
            return true;
    }
    return false;
}

/* A stripped program's DWARF and symbol table are in its debug file: read both from there. */
static void use_debug_file(struct dwarf_sigs *d, const char *path)
{
    if (debug_file_open(path, DEBUG_DWARF, &d->debug) < 0)
        return;
    Dwarf *dwarf = dwarf_begin_elf(d->debug.elf, DWARF_C_READ, NULL);
    if (!dwarf) {
        debug_file_close(&d->debug);
        return;
    }
    elf_end(d->elf);
    d->elf = d->debug.elf;
    d->dwarf = dwarf;
}

struct dwarf_sigs *dwarf_sigs_open(const char *path)
{
    struct dwarf_sigs *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->debug.fd = -1;
    elf_version(EV_CURRENT);
    d->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (d->fd < 0 || !(d->elf = elf_begin(d->fd, ELF_C_READ_MMAP, NULL)) ||
        elf_kind(d->elf) != ELF_K_ELF || addr_map_init(&d->types, 256) < 0 ||
        addr_map_init(&d->sigs, 64) < 0) {
        int e = errno ? errno : EINVAL;
        dwarf_sigs_close(d);
        errno = e;
        return NULL;
    }
    d->dwarf = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
    if (!d->dwarf)
        use_debug_file(d, path);
    read_symbols(d);
    return d;
}

void dwarf_sigs_close(struct dwarf_sigs *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->nowned; i++)
        free(d->owned[i]);
    free(d->owned);
    free(d->syms);
    addr_map_free(&d->types);
    addr_map_free(&d->sigs);
    if (d->dwarf)
        dwarf_end(d->dwarf);
    if (d->elf && d->elf != d->debug.elf)
        elf_end(d->elf);
    debug_file_close(&d->debug);
    if (d->fd >= 0)
        close(d->fd);
    free(d);
}
