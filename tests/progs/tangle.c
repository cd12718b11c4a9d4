/* A call graph Graphviz 2.43's dot cannot lay out grouped by source file ("trouble in
 * init_rank", as on lua, jq or redis: labelled edges between clusters whose functions call each
 * other back and forth), for tests/e2e/106: nine functions in three source files (this one,
 * tangle_parse.c and tangle_eval.c, built together), each calling others across the files while
 * DEPTH lasts. Prints each function's count.
 *
 * tangle [DEPTH] */
#include <stdlib.h>

#include "tangle.h"

unsigned long n_lex_next, n_lex_peek, n_lex_skip, n_parse_expr, n_parse_term, n_parse_call,
    n_eval_node, n_eval_call, n_eval_bind;

TRACED void lex_next(int d)
{
    COUNT(n_lex_next);
    if (d <= 0)
        return;
    lex_peek(d - 1);
    eval_call(d - 1);
}

TRACED void lex_peek(int d)
{
    COUNT(n_lex_peek);
    if (d <= 0)
        return;
    eval_bind(d - 1);
}

TRACED void lex_skip(int d)
{
    COUNT(n_lex_skip);
    if (d <= 0)
        return;
    parse_expr(d - 1);
    parse_term(d - 1);
    parse_call(d - 1);
}

int main(int argc, char **argv)
{
    lex_next(argc > 1 ? atoi(argv[1]) : 6);
    PRINT_COUNT("lex_next", n_lex_next);
    PRINT_COUNT("lex_peek", n_lex_peek);
    PRINT_COUNT("lex_skip", n_lex_skip);
    PRINT_COUNT("parse_expr", n_parse_expr);
    PRINT_COUNT("parse_term", n_parse_term);
    PRINT_COUNT("parse_call", n_parse_call);
    PRINT_COUNT("eval_node", n_eval_node);
    PRINT_COUNT("eval_call", n_eval_call);
    PRINT_COUNT("eval_bind", n_eval_bind);
    return 0;
}
