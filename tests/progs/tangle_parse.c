/* Part of tangle.c's call graph: its parse functions, in a source file of their own. */
#include "tangle.h"

TRACED void parse_expr(int d)
{
    COUNT(n_parse_expr);
    if (d <= 0)
        return;
}

TRACED void parse_term(int d)
{
    COUNT(n_parse_term);
    if (d <= 0)
        return;
    lex_skip(d - 1);
    parse_expr(d - 1);
    parse_call(d - 1);
    eval_call(d - 1);
}

TRACED void parse_call(int d)
{
    COUNT(n_parse_call);
    if (d <= 0)
        return;
    lex_peek(d - 1);
    parse_expr(d - 1);
}
