#include "symbols/capture_plan.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/format.h"
#include "symbols/dwarf_sig.h"
#include "symbols/elf_image.h"

static bool is_identifier(const char *s, size_t len)
{
    if (!len || len >= 64 || isdigit((unsigned char)s[0]))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_')
            return false;
    return true;
}

int capture_glob_check(const char *glob, char *why, size_t whylen)
{
    if (!*glob) {
        snprintf(why, whylen, "empty pattern");
        return -1;
    }
    for (const char *p = glob; *p; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            continue;
        }
        if (*p != '[')
            continue;
        const char *q = p + 1;
        if (*q == '!' || *q == '^')
            q++;
        if (*q == ']')
            q++;
        q = strchr(q, ']');
        if (!q) {
            snprintf(why, whylen, "'[' without its closing ']'");
            return -1;
        }
        p = q;
    }
    return 0;
}

int capture_rule_parse(const char *text, struct capture_rule *rule, char *why, size_t whylen)
{
    memset(rule, 0, sizeof(*rule));
    const char *c2 = strrchr(text, ':');
    const char *c1 = c2 && c2 > text ? memrchr(text, ':', (size_t)(c2 - text)) : NULL;
    if (!c1) {
        snprintf(why, whylen, "expected FUNC:BUF:LEN");
        return -1;
    }
    size_t flen = (size_t)(c1 - text), blen = (size_t)(c2 - c1 - 1);
    const char *len = c2 + 1;
    if (!flen) {
        snprintf(why, whylen, "no function before the first ':'");
        return -1;
    }
    if (!is_identifier(c1 + 1, blen)) {
        snprintf(why, whylen, "'%.*s' is not a parameter name", (int)blen, c1 + 1);
        return -1;
    }
    memcpy(rule->param, c1 + 1, blen);
    if (isdigit((unsigned char)*len)) {
        char *end;
        unsigned long long v = strtoull(len, &end, 0);
        if (*end || v == 0 || v > CAPTURE_BUFFER_MAX) {
            snprintf(why, whylen, "LEN '%s' is not a byte count from 1 to %d", len,
                     CAPTURE_BUFFER_MAX);
            return -1;
        }
        rule->len_const = v;
    } else if (is_identifier(len, strlen(len))) {
        memcpy(rule->len_param, len, strlen(len));
    } else {
        snprintf(why, whylen, "LEN '%s' is neither a parameter name nor a number", len);
        return -1;
    }
    if (flen >= sizeof(rule->func)) {
        snprintf(why, whylen, "the function pattern is longer than %zu bytes",
                 sizeof(rule->func) - 1);
        return -1;
    }
    memcpy(rule->func, text, flen);
    return capture_glob_check(rule->func, why, whylen);
}

bool capture_selects(const struct capture_options *o, const char *name)
{
    if (!o->args && !o->retval)
        return false;
    if (!o->nglobs)
        return true;
    for (size_t i = 0; i < o->nglobs; i++)
        if (fnmatch(o->globs[i], name, 0) == 0)
            return true;
    return false;
}

/* The word of a value at byte offset within a parameter located at loc; false when it is not
 * in an integer register or on the stack. */
static bool word_at(const struct abi_loc *loc, uint32_t offset, uint8_t size,
                    struct capture_word *w)
{
    memset(w, 0, sizeof(*w));
    w->size = size;
    if (loc->where == ABI_STACK) {
        w->src = SRC_STACK;
        w->offset = loc->stack_offset + offset;
        return true;
    }
    if (loc->where != ABI_REGS || offset / 8 >= loc->nparts ||
        loc->part[offset / 8].cls != ABI_CLASS_INT || offset % 8 + size > 8)
        return false;
    w->src = SRC_GPR;
    w->offset = loc->part[offset / 8].reg;
    return offset % 8 == 0;
}

struct read_list {
    struct capture_read *items;
    size_t n;
};

static int add_read(struct read_list *l, const struct capture_read *r)
{
    struct capture_read *items = reallocarray(l->items, l->n + 1, sizeof(*items));
    if (!items)
        return -1;
    items[l->n++] = *r;
    l->items = items;
    return 0;
}

/* The pointers worth following in a value of type t at offset of a parameter: strings, arrays
 * pointed to, references; char * members of structs passed by value too. */
static int plan_pointers(const struct capture_options *o, struct read_list *l, uint16_t param,
                         const struct abi_loc *loc, const struct ctype *t, uint32_t offset,
                         int depth)
{
    const struct ctype *s = ctype_strip(t);
    if (!s || depth > 3)
        return 0;
    if (s->kind == CT_STRUCT || s->kind == CT_UNION) {
        for (size_t i = 0; i < s->nmembers; i++)
            if (plan_pointers(o, l, param, loc, s->members[i].type,
                              offset + (uint32_t)s->members[i].offset, depth + 1) < 0)
                return -1;
        return 0;
    }
    if (s->kind != CT_PTR && s->kind != CT_REF)
        return 0;
    struct capture_read r = {.param = param};
    if (!word_at(loc, offset, 8, &r.ptr))
        return 0;
    const struct ctype *target = ctype_strip(s->target);
    if (ctype_is_string(s)) {
        r.kind = READ_STRING;
        r.size = o->string_max;
    } else if (target && !target->incomplete && target->size &&
               (s->kind == CT_REF || target->kind == CT_ARRAY)) {
        r.kind = READ_FIXED;
        r.size = target->size > CAPTURE_BUFFER_MAX ? CAPTURE_BUFFER_MAX : (uint32_t)target->size;
    } else {
        return 0;
    }
    return add_read(l, &r);
}

static int find_param(const struct func_sig *sig, const char *name)
{
    for (size_t i = 0; i < sig->nparams; i++)
        if (sig->params[i].name && strcmp(sig->params[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* --capture rules naming this function: they replace what the type alone would read. */
static int plan_rules(const struct capture_options *o, const char *name, const struct func_sig *sig,
                      const struct abi_loc *locs, struct read_list *l)
{
    for (size_t i = 0; i < o->nrules; i++) {
        const struct capture_rule *rule = &o->rules[i];
        if (fnmatch(rule->func, name, 0) != 0)
            continue;
        int p = find_param(sig, rule->param);
        struct capture_read r = {.kind = READ_COUNTED};
        if (p < 0 || !word_at(&locs[p], 0, 8, &r.ptr))
            continue;
        r.param = (uint16_t)p;
        if (rule->len_param[0]) {
            int c = find_param(sig, rule->len_param);
            const struct ctype *ct = c < 0 ? NULL : ctype_strip(sig->params[c].type);
            if (!ct || ct->size > 8 || !word_at(&locs[c], 0, (uint8_t)ct->size, &r.count))
                continue;
        } else {
            r.count = (struct capture_word){.src = SRC_CONST, .value = rule->len_const};
        }
        for (size_t k = 0; k < l->n; k++) /* the rule wins over the type's own read */
            if (l->items[k].param == r.param)
                l->items[k] = l->items[--l->n];
        if (add_read(l, &r) < 0)
            return -1;
    }
    return 0;
}

static bool plan_entry(const struct capture_options *o, const char *name, struct capture_plan *plan)
{
    const struct func_sig *sig = plan->sig;
    struct abi_loc *locs = calloc(sig->nparams ? sig->nparams : 1, sizeof(*locs)), ret;
    if (!locs)
        return false;
    plan->stack_bytes = abi_locate(sig, locs, &ret);
    if (plan->stack_bytes > CAPTURE_STACK_MAX)
        plan->stack_bytes = CAPTURE_STACK_MAX;
    struct read_list l = {0};
    bool ok = true;
    for (size_t i = 0; ok && i < sig->nparams; i++) {
        for (unsigned k = 0; k < locs[i].nparts; k++)
            plan->entry_xmm |= locs[i].where == ABI_REGS && locs[i].part[k].cls == ABI_CLASS_SSE;
        ok = plan_pointers(o, &l, (uint16_t)i, &locs[i], sig->params[i].type, 0, 0) == 0;
    }
    ok = ok && plan_rules(o, name, sig, locs, &l) == 0;
    plan->reads = l.items;
    plan->nreads = l.n;
    free(locs);
    return ok;
}

static bool plan_result(const struct capture_options *o, struct capture_plan *plan)
{
    struct func_sig none = {.ret = plan->sig->ret};
    struct abi_loc ret;
    abi_locate(&none, NULL, &ret);
    struct read_list l = {0};
    if (ret.where == ABI_X87)
        plan->result_fp = true;
    for (unsigned k = 0; k < ret.nparts; k++)
        plan->result_fp |= ret.part[k].cls == ABI_CLASS_SSE;
    if (ret.where == ABI_HIDDEN)
        plan->hidden_size = ret.size > CAPTURE_BUFFER_MAX ? CAPTURE_BUFFER_MAX : ret.size;
    bool ok = ret.where != ABI_REGS ||
              plan_pointers(o, &l, CHUNK_RESULT, &ret, plan->sig->ret, 0, 0) == 0;
    plan->result_reads = l.items;
    plan->nresult_reads = l.n;
    return ok;
}

struct capture_plan *capture_plan_build(const struct capture_options *o, const char *name,
                                        const struct func_sig *sig)
{
    struct capture_plan *plan = calloc(1, sizeof(*plan));
    if (!plan)
        return NULL;
    plan->sig = sig;
    plan->entry = o->args;
    plan->result = o->retval;
    if (sig && ((o->args && !plan_entry(o, name, plan)) || (o->retval && !plan_result(o, plan)))) {
        capture_plan_free(plan);
        return NULL;
    }
    return plan;
}

void capture_plan_free(struct capture_plan *plan)
{
    if (!plan)
        return;
    free(plan->reads);
    free(plan->result_reads);
    free(plan);
}

/* "int *buf, size_t len": what a function takes, for the messages below. */
static void spell_params(const struct func_sig *sig, char *out, size_t outlen)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sig->nparams && n < outlen; i++)
        n += (size_t)snprintf(out + n, outlen - n, "%s%s %s", i ? ", " : "",
                              sig->params[i].type ? sig->params[i].type->name : "void",
                              sig->params[i].name ? sig->params[i].name : "?");
}

static int check_rule_on(const struct capture_rule *r, const char *name, const struct func_sig *sig,
                         char *why, size_t whylen)
{
    char params[160];
    spell_params(sig, params, sizeof(params));
    int p = find_param(sig, r->param);
    const struct ctype *pt = p < 0 ? NULL : ctype_strip(sig->params[p].type);
    if (!pt || pt->kind != CT_PTR) {
        snprintf(why, whylen, "%s(%s) has no pointer parameter %s", name, params, r->param);
        return -1;
    }
    if (!r->len_param[0])
        return 0;
    int c = find_param(sig, r->len_param);
    const struct ctype *ct = c < 0 ? NULL : ctype_strip(sig->params[c].type);
    if (!ct || (ct->kind != CT_INT && ct->kind != CT_CHAR && ct->kind != CT_ENUM)) {
        snprintf(why, whylen, "%s(%s) has no integer parameter %s", name, params, r->len_param);
        return -1;
    }
    return 0;
}

int capture_rules_check(const struct capture_options *o, const struct elf_image *image,
                        int *unmatched, char *why, size_t whylen)
{
    *unmatched = -1;
    if (!o->nrules)
        return 0;
    struct dwarf_sigs *d = dwarf_sigs_open(image->path);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < o->nrules; i++) {
        const struct capture_rule *r = &o->rules[i];
        bool matched = false;
        for (size_t f = 0; rc == 0 && f < image->nfuncs; f++) {
            const struct func_symbol *fs = &image->funcs[f];
            if (fs->skipped || fnmatch(r->func, fs->name, 0) != 0)
                continue;
            matched = true;
            const struct func_sig *sig = d ? dwarf_sigs_find(d, fs->addr) : NULL;
            if (sig) /* without DWARF the rule cannot apply: the values are raw anyway */
                rc = check_rule_on(r, fs->name, sig, why, whylen);
        }
        if (!matched && *unmatched < 0)
            *unmatched = (int)i;
    }
    dwarf_sigs_close(d);
    return rc;
}
