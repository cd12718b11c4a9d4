#!/bin/bash
# Callbacks from libc into the program: qsort and bsearch call cmp_int.
# Every cmp_int call is directly inside sort_them or find (libc frames are
# not traced), and counts match the program's own.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
for opt in O0 O2; do
    CTX="[qsort_cb -$opt]"
    build qsort_cb "$opt"
    standard_case "$BIN"
    chk check-parent cmp_int sort_them find
    chk check-parent sort_them main
    chk check-unfinished
done
