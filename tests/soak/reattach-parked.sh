#!/bin/bash
# Soak, not part of make check: e2e 88 with, before its last attachment, a worker parked inside
# the killed calltrace's entry trampoline by tests/progs/park.c, which leaves the whole process
# in group stop (SIGSTOP) until the test's SIGCONT. It fails about 1 run in 5 (SIGILL: the main
# thread, blocked in read() and group-stopped, resumes 3 bytes into the instruction after the
# system call: a remote system call's gadget over its instruction, in a group-stopped process);
# issue 16's note. Run: CALLTRACE=$PWD/calltrace bash tests/soak/reattach-parked.sh
CT_PARK=1 exec bash "$(dirname "$0")/../e2e/88-attach-no-breakpoints.sh" "$@"
