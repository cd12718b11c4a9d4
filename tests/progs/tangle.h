/* tests/progs/tangle*.c: nine functions in three source files that call each other back and
 * forth while their depth argument lasts (see tangle.c). */
#ifndef CT_TANGLE_H
#define CT_TANGLE_H
#include "common.h"

void lex_next(int d);
void lex_peek(int d);
void lex_skip(int d);
void parse_expr(int d);
void parse_term(int d);
void parse_call(int d);
void eval_node(int d);
void eval_call(int d);
void eval_bind(int d);
extern unsigned long n_lex_next, n_lex_peek, n_lex_skip, n_parse_expr, n_parse_term, n_parse_call,
    n_eval_node, n_eval_call, n_eval_bind;
#endif
