#include "symbols/ctype.h"

bool ctype_is_string(const struct ctype *t)
{
    t = ctype_strip(t);
    if (!t || t->kind != CT_PTR)
        return false;
    const struct ctype *target = ctype_strip(t->target);
    return target && target->kind == CT_CHAR && target->size == 1;
}

unsigned ctype_natural_align(const struct ctype *t)
{
    t = ctype_strip(t);
    if (!t)
        return 1;
    switch (t->kind) {
    case CT_STRUCT:
    case CT_UNION:
    case CT_ARRAY:
        return t->align ? t->align : 1;
    default:
        return t->size >= 16 ? 16 : t->size ? (unsigned)t->size : 1;
    }
}
