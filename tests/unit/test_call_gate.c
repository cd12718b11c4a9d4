/* The record-time call filters: what is written, held and dropped, and in which order. Records
 * here are 8-byte tags; "written" is what a recorder would append to the file. */
#include <stdint.h>
#include <string.h>

#include "record/call_gate.h"
#include "unit.h"

struct file {
    char text[512];
};

static void put(struct file *f, const void *rec, size_t size)
{
    for (size_t i = 0; i < size; i += 8)
        strncat(f->text, (const char *)rec + i, 8);
}

static void enter(struct call_gate *g, struct file *f, uint32_t tid, uint64_t t, const char *tag)
{
    char rec[8] = {0};
    strncpy(rec, tag, 7);
    if (call_gate_enter(g, tid, t, rec, sizeof(rec)) == GATE_WRITE)
        put(f, rec, sizeof(rec));
}

static void data(struct call_gate *g, struct file *f, uint32_t tid, const char *tag)
{
    char rec[8] = {0};
    strncpy(rec, tag, 7);
    if (call_gate_data(g, tid, rec, sizeof(rec)) == GATE_WRITE)
        put(f, rec, sizeof(rec));
}

static void leave(struct call_gate *g, struct file *f, uint32_t tid, uint64_t t, const char *tag)
{
    if (call_gate_exit(g, tid, t) != GATE_WRITE)
        return;
    size_t held;
    const void *bytes = call_gate_flush(g, tid, &held);
    if (held)
        put(f, bytes, held);
    strcat(f->text, tag);
}

static void test_short_calls_vanish_with_their_data(void)
{
    struct call_gate g;
    struct file f = {""};
    CHECK(call_gate_init(&g, 0, 10) == 0);
    enter(&g, &f, 1, 0, "A ");
    enter(&g, &f, 1, 1, "B ");
    data(&g, &f, 1, "argsB ");
    leave(&g, &f, 1, 3, "/B ");
    enter(&g, &f, 1, 4, "C ");
    data(&g, &f, 1, "argsC ");
    enter(&g, &f, 1, 5, "D ");
    leave(&g, &f, 1, 6, "/D ");
    data(&g, &f, 1, "retC ");
    leave(&g, &f, 1, 20, "/C ");
    enter(&g, &f, 1, 21, "E ");
    leave(&g, &f, 1, 22, "/E ");
    leave(&g, &f, 1, 30, "/A ");
    CHECK(strcmp(f.text, "A C argsC retC /C /A ") == 0);
    CHECK_EQ_U64(g.dropped_short, 3);
    call_gate_free(&g);
}

static void test_threads_are_independent(void)
{
    struct call_gate g;
    struct file f = {""};
    CHECK(call_gate_init(&g, 0, 10) == 0);
    enter(&g, &f, 1, 0, "A ");
    enter(&g, &f, 2, 1, "X ");
    leave(&g, &f, 2, 50, "/X ");
    leave(&g, &f, 1, 5, "/A ");
    CHECK(strcmp(f.text, "X /X ") == 0);
    call_gate_free(&g);
}

static void test_depth_limit(void)
{
    struct call_gate g;
    struct file f = {""};
    CHECK(call_gate_init(&g, 2, 0) == 0);
    enter(&g, &f, 1, 0, "A ");
    enter(&g, &f, 1, 1, "B ");
    enter(&g, &f, 1, 2, "C ");
    data(&g, &f, 1, "argsC ");
    leave(&g, &f, 1, 3, "/C ");
    data(&g, &f, 1, "retB ");
    leave(&g, &f, 1, 4, "/B ");
    leave(&g, &f, 1, 5, "/A ");
    CHECK(strcmp(f.text, "A B retB /B /A ") == 0);
    CHECK_EQ_U64(g.dropped_deep, 1);
    call_gate_free(&g);
}

static void test_ended_thread_forgets_what_it_held(void)
{
    struct call_gate g;
    struct file f = {""};
    CHECK(call_gate_init(&g, 0, 10) == 0);
    enter(&g, &f, 7, 0, "A ");
    call_gate_thread_end(&g, 7);
    enter(&g, &f, 7, 100, "B ");
    leave(&g, &f, 7, 200, "/B ");
    CHECK(strcmp(f.text, "B /B ") == 0);
    call_gate_free(&g);
}

int main(void)
{
    test_short_calls_vanish_with_their_data();
    test_threads_are_independent();
    test_depth_limit();
    test_ended_thread_forgets_what_it_held();
    return unit_finish("call_gate");
}
