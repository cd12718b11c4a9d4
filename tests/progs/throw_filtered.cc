// Exceptions through frames -F leaves out: parse calls std::stoi, which throws for "x" and "y";
// helper (left out by -F parse -F after) passes the exception on to main's catch. Each parse is
// followed by an after(), which must never nest inside a parse the exception left.
#include "common.h"
#include <stdexcept>
#include <string>

static unsigned long n_parse, n_after, n_caught;
static volatile int sink;

TRACED int parse(const std::string &s)
{
    COUNT(n_parse);
    return std::stoi(s);
}

TRACED int helper(const std::string &s)
{
    return parse(s) + 1;
}

TRACED void after(int x)
{
    COUNT(n_after);
    sink = x;
}

int main()
{
    int ok = 0;
    const char *in[] = {"1", "x", "2", "y", "3"};
    for (const char *s : in) {
        try {
            ok += helper(s);
        } catch (const std::invalid_argument &) {
            COUNT(n_caught);
        }
        after(ok);
    }
    PRINT_COUNT("parse", n_parse);
    PRINT_COUNT("after", n_after);
    PRINT_COUNT("caught", n_caught);
    return 0;
}
