/* demangled_short_name: what a graph's node shows of a C++ name. */
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"
#include "unit.h"

static void check_short(const char *name, size_t max, const char *want)
{
    char got[256];
    demangled_short_name(name, max, got, sizeof(got));
    unit_checks++;
    if (strcmp(got, want) != 0) {
        unit_failures++;
        fprintf(stderr, "short name of '%s': '%s', expected '%s'\n", name, got, want);
    }
}

int main(void)
{
    check_short("main", 60, "main");
    check_short("lua_pcallk", 60, "lua_pcallk");
    check_short("std::vector<std::pair<int, std::__cxx11::basic_string<char, "
                "std::char_traits<char>, std::allocator<char> > >, std::allocator<std::pair<int, "
                "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > "
                "> >::_M_realloc_insert<int&, char const*&>(__gnu_cxx::__normal_iterator<std::pair<"
                "int, std::__cxx11::basic_string<char, std::char_traits<char>, "
                "std::allocator<char> > >*, std::vector<> >, int&, char const*&)",
                60, "std::vector<>::_M_realloc_insert<>()");
    check_short("Shape::area() const", 60, "Shape::area() const");
    check_short("(anonymous namespace)::parse(char const*, int)", 60,
                "(anonymous namespace)::parse()");
    check_short("Matrix::operator()(int, int)", 60, "Matrix::operator()()");
    check_short("operator<<(std::ostream&, Point const&)", 60, "operator<<()");
    check_short("Point::operator<(Point const&) const", 60, "Point::operator<() const");
    check_short("Node::operator->()", 60, "Node::operator->()");
    check_short("run(int)::{lambda(int)#1}::operator()(int) const", 60,
                "run()::{lambda()#1}::operator()() const");
    check_short("compute(int) [clone .constprop.0]", 60, "compute() [clone .constprop.0]");
    check_short("a::very::long_namespace::with::many::levels::Klass::method(int)", 24,
                "...vels::Klass::method()");
    static const struct {
        const char *name;
        size_t at;
    } params[] = {
        {"main", 4},
        {"parse(int)", 5},
        {"geo::Circle::area() const", 17},
        {"Matrix::operator()(int, int)", 18},
        {"Matrix::operator()()", 18},
        {"operator<<(std::ostream&, Point const&)", 10},
        {"Point::operator<(Point const&) const", 16},
        {"run(int)::{lambda(int)#1}::operator()(int) const", 37},
        {"(anonymous namespace)::parse(char const*, int)", 28},
        {"std::vector<int, std::allocator<int> >::push_back(int const&)", 49},
        {"compute(int) [clone .constprop.0]", 7},
        {"global constructors keyed to setup()", 34},
    };
    for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
        size_t at = demangled_params_at(params[i].name);
        unit_checks++;
        if (at != params[i].at) {
            unit_failures++;
            fprintf(stderr, "parameters of '%s' at %zu, expected %zu\n", params[i].name, at,
                    params[i].at);
        }
    }
    char *ctor = demangle("_GLOBAL__sub_I__Z5setupv");
    CHECK(ctor && strcmp(ctor, "global constructors keyed to setup()") == 0);
    free(ctor);
    ctor = demangle("_GLOBAL__sub_I_main.cc");
    CHECK(ctor && strcmp(ctor, "global constructors keyed to main.cc") == 0);
    free(ctor);
    char small[8];
    demangled_short_name("std::vector<int>::size() const", 60, small, sizeof(small));
    CHECK(strcmp(small, "std::ve") == 0); /* cut to the buffer, terminated */
    return unit_finish("test_short_name");
}
