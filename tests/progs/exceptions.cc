// C++ exceptions thrown through traced frames, caught higher up; the
// destructors of objects in the unwound frames must run (and be traced).
#include "common.h"
#include <stdexcept>

static unsigned long n_dtor, n_ctor, n_thrower, n_middle, n_catcher, n_rethrower;
static volatile int sink;

struct Obj {
    int v;
    TRACED Obj(int x);
    TRACED ~Obj();
};

Obj::Obj(int x) : v(x) { COUNT(n_ctor); }
Obj::~Obj() { COUNT(n_dtor); sink = v; }

TRACED void thrower(int n)
{
    COUNT(n_thrower);
    Obj o(n);
    if (n == 0)
        throw std::runtime_error("bottom");
    thrower(n - 1);
    sink = o.v;
}

TRACED void middle(int n)
{
    COUNT(n_middle);
    Obj o(100 + n);
    thrower(n);
    sink = o.v;
}

TRACED void rethrower(int n)
{
    COUNT(n_rethrower);
    try {
        Obj o(200 + n);
        middle(n);
    } catch (const std::exception &) {
        throw;                  // rethrow through this frame
    }
}

TRACED int catcher(int n)
{
    COUNT(n_catcher);
    try {
        if (n % 2)
            rethrower(n % 5);
        else
            middle(n % 5);
    } catch (const std::runtime_error &e) {
        return 1;
    }
    return 0;
}

int main()
{
    int caught = 0;
    for (int i = 0; i < 60; i++)
        caught += catcher(i);
    printf("caught %d\n", caught);
    printf("destructors ran %lu constructors ran %lu\n", n_dtor, n_ctor);
    PRINT_COUNT("Obj::~Obj()", n_dtor);
    PRINT_COUNT("Obj::Obj(int)", n_ctor);
    PRINT_COUNT("thrower(int)", n_thrower);
    PRINT_COUNT("middle(int)", n_middle);
    PRINT_COUNT("rethrower(int)", n_rethrower);
    PRINT_COUNT("catcher(int)", n_catcher);
    return 0;
}
