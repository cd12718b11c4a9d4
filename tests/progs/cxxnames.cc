// C++ names as users write them (-F parse for parse(int), tree without doubled parentheses):
// overloads, a const method in a namespace, a template, and a static initializer
// (_GLOBAL__sub_I_..., shown as "global constructors keyed to ..."). Prints its own counts.
#include "common.h"
#include <cstdlib>

static unsigned long n_parse_int, n_parse_str, n_area, n_twice_int, n_twice_double, n_setup;

template <typename T> static void count_twice();
template <> void count_twice<int>()
{
    COUNT(n_twice_int);
}
template <> void count_twice<double>()
{
    COUNT(n_twice_double);
}

TRACED int parse(int v)
{
    COUNT(n_parse_int);
    return v + 1;
}

TRACED int parse(const char *s)
{
    COUNT(n_parse_str);
    return atoi(s);
}

namespace geo
{
struct Circle {
    double r;
    TRACED double area() const;
};
double Circle::area() const
{
    COUNT(n_area);
    return 3 * r * r;
}
} // namespace geo

template <typename T> TRACED T twice(T v)
{
    count_twice<T>();
    return v + v;
}

TRACED int setup()
{
    COUNT(n_setup);
    return 7;
}

static int configured = setup(); // run by the file's static initializer

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    double sum = configured;
    for (int i = 0; i < rounds; i++) {
        geo::Circle c{(double)i};
        sum += parse(i) + parse("12") + c.area() + twice(i) + twice(0.5);
    }
    printf("sum %g\n", sum);
    PRINT_COUNT("parse(int)", n_parse_int);
    PRINT_COUNT("parse(char const*)", n_parse_str);
    PRINT_COUNT("geo::Circle::area() const", n_area);
    PRINT_COUNT("int twice<int>(int)", n_twice_int);
    PRINT_COUNT("double twice<double>(double)", n_twice_double);
    PRINT_COUNT("setup()", n_setup);
    return 0;
}
