/* Part of tangle.c's call graph: its eval functions, in a source file of their own. */
#include "tangle.h"

TRACED void eval_node(int d)
{
    COUNT(n_eval_node);
    if (d <= 0)
        return;
    lex_peek(d - 1);
    parse_expr(d - 1);
    parse_term(d - 1);
    eval_bind(d - 1);
}

TRACED void eval_call(int d)
{
    COUNT(n_eval_call);
    if (d <= 0)
        return;
    lex_peek(d - 1);
    eval_node(d - 1);
}

TRACED void eval_bind(int d)
{
    COUNT(n_eval_bind);
    if (d <= 0)
        return;
}
