/* Every kind of parameter and return value calltrace formats from DWARF (tests/e2e/60-62):
 * each function is called with known values, so the values calltrace records can be compared
 * with what gdb prints for the same calls. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

enum color { RED, GREEN, BLUE };
enum flags { F_READ = 1, F_WRITE = 2, F_EXEC = 4 };
struct point {
    int x, y;
};
struct mixed {
    double d;
    long l;
};
struct big {
    long a, b, c;
    int arr[3];
};
struct named {
    const char *name;
    unsigned char tag;
    short s;
};
union number {
    int i;
    float f;
};
typedef unsigned long ulong_t;
typedef int (*unary_fn)(int);

volatile long sink; /* keeps every parameter alive at -O2, so gdb can show it too */
#define USE(v) (sink += (long)(v))

TRACED int square(int v)
{
    USE(v);
    return v * v;
}
TRACED int integers(signed char sc, unsigned char uc, short s, unsigned short us, int i, unsigned u)
{
    USE(sc);
    USE(uc);
    USE(s);
    USE(us);
    USE(i);
    USE(u);
    return i - 1;
}
TRACED long long wide(long l, unsigned long ul, long long ll, unsigned long long ull, int64_t i64,
                      ulong_t t)
{
    USE(l);
    USE(ul);
    USE(ll);
    USE(ull);
    USE(i64);
    USE(t);
    return ll * 2;
}
TRACED char chars(char c, bool b, bool nb)
{
    USE(c);
    USE(b);
    USE(nb);
    return (char)(c + 1);
}
TRACED enum color enums(enum color c, enum flags f, enum flags none)
{
    USE(c);
    USE(f);
    USE(none);
    return BLUE;
}
TRACED double floats(float f, double d, float g, double e)
{
    USE(f);
    USE(d);
    USE(g);
    USE(e);
    return d * 2;
}
TRACED float half(float f)
{
    USE(f);
    return f / 2;
}
TRACED long double ldouble(long double x, int after)
{
    USE(after);
    sink += (long)x;
    return x * 2;
}
struct ldbox {
    long double v;
};
/* returned in st0 like a long double (classes X87, X87UP); passed in memory */
TRACED struct ldbox boxed(struct ldbox b, long double k)
{
    sink += (long)k;
    return (struct ldbox){b.v * k};
}
TRACED const char *strings(const char *s, char *m, const char *null)
{
    USE(s);
    USE(m);
    USE(null);
    return s + 1;
}
TRACED int *pointers(int *p, void *v, int *null)
{
    USE(p);
    USE(v);
    USE(null);
    return p;
}
TRACED int call_fn(unary_fn fn, int v)
{
    USE(fn);
    return fn(v);
}
TRACED struct point points(struct point p, const struct point *pp)
{
    USE(p.x);
    USE(p.y);
    USE(pp);
    return (struct point){p.y, p.x};
}
TRACED struct mixed mixed(struct mixed m)
{
    USE(m.l);
    sink += (long)m.d;
    return (struct mixed){m.d + 1, m.l + 1};
}
TRACED struct big bigs(struct big b, int after)
{
    USE(b.a);
    USE(b.arr[2]);
    USE(after);
    b.a++;
    return b;
}
TRACED int named(struct named n)
{
    USE(n.name);
    USE(n.tag);
    USE(n.s);
    return n.s;
}
TRACED int unions(union number n)
{
    USE(n.i);
    return n.i;
}
TRACED long many(int a, int b, int c, int d, int e, int f, int g, long h, double x1, double x2,
                 double x3, double x4, double x5, double x6, double x7, double x8, double x9)
{
    USE(a);
    USE(b);
    USE(c);
    USE(d);
    USE(e);
    USE(f);
    USE(g);
    USE(h);
    sink += (long)(x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9);
    return a + b + c + d + e + f + g + h;
}
TRACED int arrays(int (*three)[3])
{
    USE((*three)[0]);
    return (*three)[2];
}
TRACED void nothing(void)
{
    USE(0);
}
/* unaligned members: passed and returned in memory, whatever their size (the ABI's MEMORY) */
struct __attribute__((packed)) packed {
    char c;
    int i;
    short s;
};
TRACED int packs(struct packed p, int after)
{
    USE(p.i);
    return p.i + after;
}
TRACED struct packed repack(int v)
{
    return (struct packed){'p', v, (short)-v};
}
TRACED int variadic(const char *fmt, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    int sum = 0;
    for (int i = 0; i < n; i++)
        sum += va_arg(ap, int);
    va_end(ap);
    USE(fmt);
    return sum;
}

int main(void)
{
    static int nums[3] = {1, 2, 3};
    char buf[16];
    strcpy(buf, "mutable");
    int value = 7;
    struct point pt = {3, 4};
    USE(square(5));
    USE(integers(-5, 200, -300, 60000, -70000, 4000000000u));
    USE(wide(-1, 18446744073709551615ul, -9000000000ll, 9000000000ull, -42, 77));
    USE(chars('A', true, false));
    USE(enums(GREEN, F_READ | F_WRITE, 0));
    USE(floats(3.5f, -0.25, 0.1f, 0.1));
    USE(half(5.0f));
    USE(ldouble(2.5L, 9));
    USE((long)boxed((struct ldbox){1.5L}, 3.0L).v);
    USE(strings("hello", buf, NULL));
    USE(pointers(&value, NULL, NULL));
    USE(call_fn(square, 6));
    USE(points(pt, &pt).x);
    USE(mixed((struct mixed){1.5, 10}).l);
    USE(bigs((struct big){1, 2, 3, {4, 5, 6}}, 8).a);
    USE(named((struct named){"tagged", 'z', -2}));
    USE(unions((union number){.i = 1078530011}));
    USE(many(1, 2, 3, 4, 5, 6, 7, 8, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.5));
    USE(arrays(&nums));
    nothing();
    USE(variadic("ints", 3, 10, 20, 30));
    USE(packs((struct packed){'q', 123456, -7}, 11));
    USE(repack(99).i);
    return 0;
}
