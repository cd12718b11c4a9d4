#!/usr/bin/env bash
# attach-bench.sh - how fast calltrace -p takes over and lets go of a big process.
#
# Builds a program with 10,000 functions whose 16 threads keep calling some of them,
# then, REPEAT times (default 5), measures on CLOCK_MONOTONIC:
#   attach: from starting `calltrace -p PID` to the first recorded call (the smallest
#           ts in its trace.json, which is CLOCK_MONOTONIC too);
#   detach: from SIGINT to calltrace until the kernel shows the process untraced
#           (TracerPid 0), i.e. running free with every breakpoint out.
# Prints the median and the range, for each engine (ENGINES, default "ptrace inject").
# Pinning is pointless here: 16 threads.
set -euo pipefail
cd "$(dirname "$0")/.."
CALLTRACE=${CALLTRACE:-$PWD/calltrace}
REPEAT=${REPEAT:-5}
ENGINES=${ENGINES:-ptrace inject}
tmp=$(mktemp -d /tmp/calltrace-attach-bench.XXXXXX)
trap 'kill "$prog" 2>/dev/null; rm -rf "$tmp"' EXIT

bench/gen-funcs.sh 10000 | sed '/^int main(void)/,$d' >"$tmp/many.c"
cat >>"$tmp/many.c" <<'C'
#include <pthread.h>
#include <unistd.h>
static volatile int sink;
static void *worker(void *arg)
{
    for (long i = (long)arg;; i++) {
        sink = f0((int)i) + f1((int)i) + f9999((int)i);
        usleep(100);
    }
    return NULL;
}
int main(void)
{
    pthread_t t;
    for (long i = 0; i < 15; i++)
        pthread_create(&t, NULL, worker, (void *)i);
    worker((void *)15);
}
C
echo "attach-bench: building a program with 10,000 functions and 16 threads" >&2
cc -O1 -g -pthread -o "$tmp/many" "$tmp/many.c"
"$tmp/many" &
prog=$!

python3 - "$CALLTRACE" "$prog" "$tmp" "$REPEAT" $ENGINES <<'PY'
import json, os, signal, statistics, subprocess, sys, time
calltrace, pid, tmp, repeat = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
engines = sys.argv[5:]

def tracer_of(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("TracerPid:"):
                return int(line.split()[1])

def show(name, xs):
    print("%-32s median %7.1f ms   (min %.1f, max %.1f, %d runs)"
          % (name, statistics.median(xs), min(xs), max(xs), len(xs)))

def measure(engine):
    attach, detach = [], []
    for i in range(repeat):
        run = "%s/run-%s-%d" % (tmp, engine, i)
        t0 = time.monotonic()
        ct = subprocess.Popen([calltrace, "-q", "--engine=" + engine, "-p", str(pid), "-o", run])
        while tracer_of(pid) != ct.pid:
            time.sleep(0.001)
        time.sleep(0.5)  # a benchmark, not a test: let calls be recorded for a while
        while os.path.getsize(run + "/events.ctr") <= 4096 if os.path.exists(run + "/events.ctr") else True:
            time.sleep(0.01)  # a loaded machine: at least some calls
        t1 = time.monotonic()
        ct.send_signal(signal.SIGINT)
        while tracer_of(pid) != 0:
            time.sleep(0.0002)
        t2 = time.monotonic()
        ct.wait()
        with open(run + "/trace.json") as f:
            events = json.load(f)["traceEvents"]
        first = min(e["ts"] for e in events if e["ph"] == "X") / 1e6
        attach.append((first - t0) * 1000)
        detach.append((t2 - t1) * 1000)
    print("calltrace --engine=%s -p on 10,000 functions and 16 threads" % engine)
    show("attach: start to first call", attach)
    show("detach: SIGINT to running free", detach)

for engine in engines:
    measure(engine)
PY
