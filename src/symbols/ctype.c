#include "symbols/ctype.h"

bool ctype_is_string(const struct ctype *t)
{
    t = ctype_strip(t);
    if (!t || t->kind != CT_PTR)
        return false;
    const struct ctype *target = ctype_strip(t->target);
    return target && target->kind == CT_CHAR && target->size == 1;
}
