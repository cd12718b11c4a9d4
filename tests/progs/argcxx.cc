// C++ parameters for calltrace -A -R (tests/e2e/60-61): references, `this`, an operator and a
// template instance, whose names are not safe as file names.
#include "common.h"

struct Vec {
    int x, y;
    TRACED Vec operator+(const Vec &o) const { return Vec{x + o.x, y + o.y}; }
    TRACED int scaled(int &factor, const int &&bias) const { factor++; return (x + y) * factor + bias; }
};

template <typename T> TRACED T twice(T v) { return v + v; }

namespace shapes {
struct Base { int id; };
}
struct Mid : shapes::Base { short level; };
struct Leaf : Mid { long extra; };
TRACED long leaf_sum(Leaf l, const Leaf *p) { return l.id + l.level + l.extra + p->extra; }

int main()
{
    Vec a{1, 2}, b{10, 20};
    int factor = 3;
    Vec c = a + b;
    int s = c.scaled(factor, 5);
    long t = twice<long>(21);
    Leaf leaf;
    leaf.id = 7;
    leaf.level = 2;
    leaf.extra = 100;
    t += leaf_sum(leaf, &leaf);
    printf("%d %d %d %ld\n", c.x, c.y, s, t);
    return 0;
}
