/* The calling-context tree built by hand: children found again rather than made twice, the
 * walk's order after sorting by name, the flame weights (subtrees add up, frames placed side
 * by side), the folded stacks, and diff_trees' alignment of two trees. */
#include <stdlib.h>
#include <string.h>

#include "analysis/call_tree.h"
#include "analysis/diff.h"
#include "analysis/flame.h"
#include "unit.h"

enum { MAIN, PARSE, LEX, EMIT, OLD, NEW, NSYMS };
static const char *const names[NSYMS] = {"main", "parse", "lex", "emit", "old", "new"};

static const char *name_of(void *ctx, uint32_t sym)
{
    (void)ctx;
    return names[sym];
}

/* main -> emit (self 5), main -> parse (self 10) -> lex (self 20, 3 calls); main's self 1 */
static void build(struct call_tree *t, uint32_t extra)
{
    CHECK(call_tree_init(t) == 0);
    uint32_t m = call_tree_child(t, CALL_TREE_ROOT, MAIN);
    uint32_t p = call_tree_child(t, m, PARSE);
    uint32_t l = call_tree_child(t, p, LEX);
    uint32_t e = call_tree_child(t, m, EMIT);
    CHECK_EQ_U64(call_tree_child(t, p, LEX), l); /* found, not made again */
    CHECK_EQ_U64(call_tree_child(t, m, PARSE), p);
    CHECK_EQ_U64(t->nodes[l].depth, 3);
    t->nodes[m].calls = 1, t->nodes[m].self_ns = 1;
    t->nodes[p].calls = 1, t->nodes[p].self_ns = 10;
    t->nodes[l].calls = 3, t->nodes[l].self_ns = 20;
    t->nodes[e].calls = 2, t->nodes[e].self_ns = 5;
    if (extra != CALL_TREE_NONE) {
        uint32_t x = call_tree_child(t, m, extra);
        t->nodes[x].calls = 1, t->nodes[x].self_ns = 7;
    }
}

struct collected {
    char text[512];
};

static int collect(void *ctx, const char *const *stack, uint32_t depth, uint64_t weight)
{
    struct collected *c = ctx;
    char line[128] = "";
    for (uint32_t i = 0; i < depth; i++) {
        strcat(line, i ? ";" : "");
        strcat(line, stack[i]);
    }
    snprintf(c->text + strlen(c->text), sizeof(c->text) - strlen(c->text), "%s %llu|", line,
             (unsigned long long)weight);
    return 0;
}

static int walk_names(void *ctx, const struct call_tree *t, uint32_t n)
{
    struct collected *c = ctx;
    strcat(c->text, names[t->nodes[n].sym]);
    strcat(c->text, " ");
    return 0;
}

static void tree_and_flame(void)
{
    struct call_tree t;
    build(&t, CALL_TREE_NONE);
    struct collected order = {""};
    call_tree_walk(&t, walk_names, &order);
    CHECK(strcmp(order.text, "main parse lex emit ") == 0); /* as made */
    CHECK(call_tree_sort(&t, name_of, NULL) == 0);
    order.text[0] = '\0';
    call_tree_walk(&t, walk_names, &order);
    CHECK(strcmp(order.text, "main emit parse lex ") == 0); /* by name */

    struct flame f;
    CHECK(flame_init(&f, &t, false) == 0);
    CHECK_EQ_U64(f.subtree[CALL_TREE_ROOT], 36); /* = main's total: the self times add up */
    uint32_t m = t.nodes[CALL_TREE_ROOT].first_child;
    uint32_t e = t.nodes[m].first_child, p = t.nodes[e].next_sibling;
    CHECK_EQ_U64(f.subtree[m], 36);
    CHECK_EQ_U64(f.subtree[p], 30);
    CHECK_EQ_U64(f.x[e], 0); /* emit first, then parse beside it */
    CHECK_EQ_U64(f.x[p], 5);
    CHECK_EQ_U64(f.x[t.nodes[p].first_child], 5);
    struct collected folded = {""};
    CHECK(flame_fold(&f, name_of, NULL, collect, &folded) == 0);
    CHECK(strcmp(folded.text, "main 1|main;emit 5|main;parse 10|main;parse;lex 20|") == 0);
    flame_free(&f);

    CHECK(flame_init(&f, &t, true) == 0); /* --calls */
    folded.text[0] = '\0';
    flame_fold(&f, name_of, NULL, collect, &folded);
    CHECK(strcmp(folded.text, "main 1|main;emit 2|main;parse 1|main;parse;lex 3|") == 0);
    CHECK_EQ_U64(f.subtree[CALL_TREE_ROOT], 7);
    flame_free(&f);
    call_tree_free(&t);
}

static void thread_nodes(void)
{
    struct call_tree t;
    CHECK(call_tree_init(&t) == 0);
    uint32_t a = call_tree_thread(&t, 10, 11), b = call_tree_thread(&t, 10, 12);
    CHECK(a != b && call_tree_thread(&t, 10, 11) == a);
    uint32_t m = call_tree_child(&t, a, MAIN);
    t.nodes[m].self_ns = 4;
    char buf[48];
    CHECK(strcmp(call_tree_node_name(&t, b, name_of, NULL, buf, sizeof(buf)), "[pid 10 tid 12]") ==
          0);
    struct flame f;
    CHECK(flame_init(&f, &t, false) == 0);
    struct collected folded = {""};
    flame_fold(&f, name_of, NULL, collect, &folded);
    CHECK(strcmp(folded.text, "[pid 10 tid 11];main 4|") == 0);
    flame_free(&f);
    call_tree_free(&t);
}

static int aligned(void *ctx, const struct diff_tree_row *row)
{
    static const char marks[] = " ~+-";
    struct collected *c = ctx;
    snprintf(c->text + strlen(c->text), sizeof(c->text) - strlen(c->text), "%c%u%s ",
             marks[row->status], row->depth, row->name);
    return 0;
}

static void alignment(void)
{
    struct call_tree a, b;
    build(&a, OLD);
    build(&b, NEW);
    /* in B lex is called 4 times, and there is a second outermost function */
    uint32_t bp = call_tree_child(&b, call_tree_child(&b, CALL_TREE_ROOT, MAIN), PARSE);
    b.nodes[call_tree_child(&b, bp, LEX)].calls = 4;
    call_tree_child(&b, CALL_TREE_ROOT, EMIT);
    CHECK(call_tree_sort(&a, name_of, NULL) == 0 && call_tree_sort(&b, name_of, NULL) == 0);
    struct collected rows = {""};
    CHECK(diff_trees(&a, name_of, NULL, &b, name_of, NULL, aligned, &rows) == 0);
    /* B's outermost emit appeared; main and its emit the same; new appeared, old vanished;
     * lex changed its count */
    CHECK(strcmp(rows.text, "+1emit  1main  2emit +2new -2old  2parse ~3lex ") == 0);
    call_tree_free(&a);
    call_tree_free(&b);
}

int main(void)
{
    tree_and_flame();
    thread_nodes();
    alignment();
    return unit_finish("test_call_tree");
}
