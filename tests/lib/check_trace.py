#!/usr/bin/env python3
"""check_trace.py -- validate and query calltrace's trace.json (stdlib only).

TRACE is a trace.json or a trace.pftrace (Perfetto's protobuf, possibly
gzip-compressed: trace.pftrace.gz), read by pftrace.py: a file whose name
ends in .pftrace or .pftrace.gz, or whose first byte (gunzipped) is 0x0a,
the tag of Trace.packet, is a trace.pftrace; anything else is read as JSON.
Every subcommand gives the same answers on both forms of one run.

Every subcommand first validates the file (shape of the Chrome Trace Event
Format subset calltrace promises, or pftrace.py's checks) and exits 1 with a
precise message if it is not valid.  Query subcommands print results on
stdout; check-* subcommands print nothing and exit 0 on success, or print
what differs on stderr and exit 1.  Usage errors exit 2.

Subcommands:
  validate TRACE                      only the format check
  summary TRACE                       "calls N", "threads N", "processes N",
                                      "unfinished N"
  counts TRACE                        "NAME N" per function, sorted by name
  check-counts TRACE [-f FILE] [NAME=N ...]
                                      FILE holds the program's stdout; its
                                      "count NAME N" lines are the expected
                                      counts (other lines are ignored); NAME=N
                                      arguments add exact expectations
  check-nesting TRACE                 X events on each (pid, tid) nest
                                      properly: no partial overlap
  parent TRACE CHILD                  "PARENT N": innermost enclosing call of
                                      each CHILD call ("<root>" if none)
  check-parent TRACE CHILD PARENT...  every CHILD call's innermost enclosing
                                      call is one of the PARENTs
  maxdepth TRACE NAME                 max number of NAME calls open at once
                                      on one thread
  unfinished TRACE                    names of unfinished calls, sorted, one
                                      per line (with repetitions)
  check-unfinished TRACE [NAME...] [--may NAME]...
                                      the unfinished calls are exactly NAMEs
                                      (a multiset; give none for "no call is
                                      unfinished"), plus any number of the
                                      --may NAMEs
  threads TRACE                       distinct "pid/tid" having X events
  processes TRACE                     distinct pids having X events
  per-tid TRACE NAME                  sorted per-thread call counts of NAME
                                      (threads with zero calls omitted)
  check-per-tid TRACE NAME N...       per-tid NAME counts are exactly N...
  arg-counts TRACE KEY                "NAME VALUE N" per function and value
                                      of its calls' argument KEY (calls
                                      without it: VALUE "-"), sorted
  check-metadata TRACE                every pid with calls has a
                                      process_name event, every thread with
                                      calls a thread_name event

Times are handled as integer nanoseconds (ts/dur have 3 decimals in us in
trace.json; trace.pftrace has ns already).
Containment tests accept --tolerance-ns (default 1) of rounding slack.
"""

import argparse
import collections
import decimal
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pftrace  # noqa: E402  (tests/lib/pftrace.py, next to this file)

PROG = "check_trace"
MAX_SHOWN = 10


class Bad(Exception):
    """A check failed: the message says what differs."""


def die(msg, code=1):
    sys.stderr.write("%s: %s\n" % (PROG, msg))
    sys.exit(code)


def is_number(v):
    return isinstance(v, (int, decimal.Decimal)) and not isinstance(v, bool)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def to_ns(v):
    """Microseconds (int or Decimal) -> integer nanoseconds."""
    return int((decimal.Decimal(v) * 1000).to_integral_value(
        rounding=decimal.ROUND_HALF_EVEN))


class Call:
    __slots__ = ("idx", "origin", "name", "pid", "tid", "ts", "dur", "end",
                 "unfinished", "inherited", "parent", "depth", "args")

    def __init__(self, idx, name, pid, tid, ts_ns, dur_ns, args, origin):
        # idx orders calls that start and last alike: the order they were
        # written in (trace.json writes a call when it returns, as
        # trace.pftrace writes its SLICE_END)
        self.idx = idx
        self.origin = origin            # where it is in the file, for messages
        self.name = name
        self.pid = pid
        self.tid = tid
        self.ts = ts_ns
        self.dur = dur_ns
        self.end = self.ts + self.dur
        self.unfinished = args.get("unfinished") is True
        # a forked child's copy of a call its parent had open: shown for
        # nesting, but not a call the child made
        self.inherited = args.get("inherited") is True
        self.args = args
        self.parent = None
        self.depth = 0

    @classmethod
    def from_json(cls, idx, ev):
        """An "X" event of trace.json (ts, dur in us)."""
        return cls(idx, ev["name"], ev["pid"], ev["tid"], to_ns(ev["ts"]),
                   to_ns(ev["dur"]), ev.get("args") or {}, "event #%d" % idx)

    @classmethod
    def from_slice(cls, idx, s):
        """A pftrace.Slice (ts, dur already in ns)."""
        return cls(idx, s.name, s.pid, s.tid, s.ts, s.dur, s.args,
                   "packets #%d-#%d" % (s.begin_packet, s.end_packet))

    def where(self):
        return "%r (%s, pid %s tid %s, ts %s us, dur %s us%s)" % (
            self.name, self.origin, self.pid, self.tid, fmt_us(self.ts),
            fmt_us(self.dur), ", unfinished" if self.unfinished else "")


def fmt_us(ns):
    return "%d.%03d" % divmod(ns, 1000) if ns >= 0 else "-" + fmt_us(-ns)


class Trace:
    def __init__(self, path):
        self.path = path
        self.errors = []
        self.calls = []
        self.meta = []
        self.load()

    def err(self, msg):
        self.errors.append(msg)

    def load(self):
        try:
            with open(self.path, "rb") as f:
                raw = f.read()
        except OSError as e:
            raise Bad("cannot read %s: %s" % (self.path, e.strerror))
        if self.load_pftrace(raw):
            return
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise Bad("%s: not valid UTF-8 at byte %d" % (self.path, e.start))
        try:
            doc = json.loads(text, parse_float=decimal.Decimal,
                             parse_constant=self._bad_constant)
        except json.JSONDecodeError as e:
            ctx = text[max(0, e.pos - 40):e.pos + 40].replace("\n", "\\n")
            raise Bad("%s: invalid JSON: %s (line %d column %d), near: %s"
                      % (self.path, e.msg, e.lineno, e.colno, ctx))
        except ValueError as e:
            raise Bad("%s: invalid JSON: %s" % (self.path, e))
        self.check_top(doc)
        if self.errors:
            shown = self.errors[:MAX_SHOWN]
            more = len(self.errors) - len(shown)
            raise Bad("%s: invalid trace (%d problem%s):\n  %s%s" % (
                self.path, len(self.errors),
                "" if len(self.errors) == 1 else "s", "\n  ".join(shown),
                "\n  ... and %d more" % more if more else ""))

    def load_pftrace(self, raw):
        """Reads raw as a trace.pftrace if it is one (see the module's doc);
        -> False, leaving it to the JSON reader, if it is not."""
        try:
            data, compressed = pftrace.gunzip(raw, self.path)
        except pftrace.PftraceError as e:
            if not pftrace.is_pftrace(b"", self.path):
                return False            # not ours: the JSON reader says why
            raise Bad(str(e))
        if not pftrace.is_pftrace(data, self.path):
            return False
        try:
            pf = pftrace.parse_gunzipped(data, self.path, compressed, len(raw))
        except pftrace.PftraceError as e:
            raise Bad(str(e))
        self.calls = [Call.from_slice(i, s) for i, s in enumerate(pf.calls)]
        self.meta = pf.meta
        return True

    @staticmethod
    def _bad_constant(name):
        raise ValueError("non-standard JSON constant %s" % name)

    def check_top(self, doc):
        if not isinstance(doc, dict):
            self.err("top level is a JSON %s, expected an object"
                     % type(doc).__name__)
            return
        for key in ("traceEvents", "displayTimeUnit", "otherData"):
            if key not in doc:
                self.err("top-level key %r is missing" % key)
        if doc.get("displayTimeUnit", "ns") != "ns":
            self.err('displayTimeUnit is %r, expected "ns"'
                     % doc.get("displayTimeUnit"))
        if "otherData" in doc and not isinstance(doc["otherData"], dict):
            self.err("otherData is not an object")
        evs = doc.get("traceEvents")
        if evs is None:
            return
        if not isinstance(evs, list):
            self.err("traceEvents is not an array")
            return
        for i, ev in enumerate(evs):
            self.check_event(i, ev)

    def check_event(self, i, ev):
        if len(self.errors) > 200:
            return
        where = "event #%d" % i
        if not isinstance(ev, dict):
            self.err("%s is not an object: %s" % (where, short(ev)))
            return
        ph = ev.get("ph")
        if ph == "X":
            ok = True
            name = ev.get("name")
            if not isinstance(name, str) or not name:
                self.err("%s: X event without a non-empty string name: %s"
                         % (where, short(ev)))
                ok = False
            if ev.get("cat") != "function":
                self.err('%s: cat is %s, expected "function": %s'
                         % (where, short(ev.get("cat")), short(ev)))
            for k in ("ts", "dur"):
                v = ev.get(k)
                if not is_number(v):
                    self.err("%s: %s is %s, expected a number: %s"
                             % (where, k, "missing" if v is None else short(v),
                                short(ev)))
                    ok = False
                    continue
                if isinstance(v, decimal.Decimal):
                    if not v.is_finite():
                        self.err("%s: %s is not finite" % (where, k))
                        ok = False
                        continue
                    if v.as_tuple().exponent < -3:
                        self.err("%s: %s = %s has more than 3 decimals"
                                 % (where, k, v))
                if v < 0:
                    self.err("%s: %s = %s is negative: %s"
                             % (where, k, v, short(ev)))
                    ok = False
            for k in ("pid", "tid"):
                if not is_int(ev.get(k)):
                    self.err("%s: %s is %s, expected an integer: %s"
                             % (where, k, short(ev.get(k)), short(ev)))
                    ok = False
            args = ev.get("args")
            if args is not None:
                if not isinstance(args, dict):
                    self.err("%s: args is not an object: %s"
                             % (where, short(ev)))
                    ok = False
                elif "unfinished" in args and args["unfinished"] is not True:
                    self.err("%s: args.unfinished is %s, expected true"
                             % (where, short(args["unfinished"])))
            if ok:
                self.calls.append(Call.from_json(i, ev))
        elif ph == "M":
            name = ev.get("name")
            if name not in ("process_name", "thread_name",
                            "process_sort_index", "thread_sort_index",
                            "process_labels"):
                self.err("%s: unexpected metadata name %s: %s"
                         % (where, short(name), short(ev)))
                return
            if not is_int(ev.get("pid")):
                self.err("%s: metadata without an integer pid: %s"
                         % (where, short(ev)))
                return
            if name == "thread_name" and not is_int(ev.get("tid")):
                self.err("%s: thread_name without an integer tid: %s"
                         % (where, short(ev)))
                return
            args = ev.get("args")
            if name in ("process_name", "thread_name") and (
                    not isinstance(args, dict)
                    or not isinstance(args.get("name"), str)):
                self.err('%s: %s needs args {"name": STRING}: %s'
                         % (where, name, short(ev)))
                return
            self.meta.append(ev)
        else:
            self.err("%s: ph is %s, expected \"X\" or \"M\": %s"
                     % (where, short(ph), short(ev)))

    # ---- structure -----------------------------------------------------

    def by_thread(self):
        th = collections.OrderedDict()
        for c in self.calls:
            th.setdefault((c.pid, c.tid), []).append(c)
        return th

    def analyse(self, tol):
        """Compute parent/depth of each call; return partial overlaps."""
        overlaps = []
        for key, calls in self.by_thread().items():
            calls.sort(key=lambda c: (c.ts, -c.dur, c.idx))
            stack = []
            for c in calls:
                while stack:
                    top = stack[-1]
                    if c.end <= top.end + tol:
                        break           # c is inside top
                    if c.ts < top.end - tol:
                        overlaps.append((top, c))
                    stack.pop()
                c.parent = stack[-1] if stack else None
                c.depth = len(stack)
                stack.append(c)
        return overlaps


def short(v, limit=200):
    try:
        s = json.dumps(v, default=float)
    except (TypeError, ValueError):
        s = repr(v)
    return s if len(s) <= limit else s[:limit] + "..."


def pname(c):
    return c.parent.name if c.parent is not None else "<root>"


# ---- subcommands -------------------------------------------------------

def cmd_validate(t, a):
    pass


def real_calls(t):
    return [c for c in t.calls if not c.inherited]


def cmd_summary(t, a):
    calls = real_calls(t)
    print("calls %d" % len(calls))
    print("threads %d" % len({(c.pid, c.tid) for c in calls}))
    print("processes %d" % len({c.pid for c in calls}))
    print("unfinished %d" % sum(1 for c in calls if c.unfinished))


def counts_of(t):
    return collections.Counter(c.name for c in real_calls(t))


def cmd_counts(t, a):
    for name, n in sorted(counts_of(t).items()):
        print("%s %d" % (name, n))


def parse_expect_file(path):
    exp = collections.OrderedDict()
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        die("cannot read expected-counts file %s: %s" % (path, e.strerror), 2)
    for ln, line in enumerate(lines, 1):
        parts = line.split()
        if not parts or parts[0] != "count":
            continue
        if len(parts) < 3 or not parts[-1].isdigit():
            die("%s:%d: malformed count line %r (want: count NAME N)"
                % (path, ln, line), 2)
        name = " ".join(parts[1:-1])
        if name in exp and exp[name] != int(parts[-1]):
            die("%s:%d: conflicting counts for %r" % (path, ln, name), 2)
        exp[name] = int(parts[-1])
    return exp


def cmd_check_counts(t, a):
    exp = collections.OrderedDict()
    if a.file:
        exp.update(parse_expect_file(a.file))
        if not exp:
            die("%s: no 'count NAME N' lines (did the program run?)"
                % a.file, 2)
    for spec in a.expect:
        name, sep, n = spec.rpartition("=")
        if not sep or not name or not n.isdigit():
            die("bad expectation %r (want NAME=N)" % spec, 2)
        exp[name] = int(n)
    if not exp:
        die("check-counts: nothing to check (give -f FILE or NAME=N)", 2)
    got = counts_of(t)
    bad = []
    for name, n in exp.items():
        if got.get(name, 0) != n:
            bad.append("  %-24s trace has %d call%s, expected %d%s" % (
                name, got.get(name, 0), "" if got.get(name, 0) == 1 else "s",
                n, similar_names(name, got) if got.get(name, 0) == 0 else ""))
    if bad:
        raise Bad("%s: call counts differ from the program's own counts:\n%s"
                  % (t.path, "\n".join(bad)))


def similar_names(name, got):
    base = name.split("(")[0]
    sim = [n for n in got if n != name and (base in n or n in name)]
    if not sim:
        return ""
    return " (names in the trace that look similar: %s)" % ", ".join(
        "%r x%d" % (n, got[n]) for n in sorted(sim)[:5])


def cmd_check_nesting(t, a):
    ov = t.analyse(a.tolerance_ns)
    if ov:
        lines = []
        for outer, inner in ov[:MAX_SHOWN]:
            lines.append("  %s\n    starts inside %s\n    but ends %s us after it"
                         % (inner.where(), outer.where(),
                            fmt_us(inner.end - outer.end)))
        raise Bad("%s: %d partial overlap%s (calls on one thread must nest):\n%s%s"
                  % (t.path, len(ov), "" if len(ov) == 1 else "s",
                     "\n".join(lines),
                     "\n  ... and %d more" % (len(ov) - MAX_SHOWN)
                     if len(ov) > MAX_SHOWN else ""))


def calls_named(t, name):
    cs = [c for c in t.calls if c.name == name]
    if not cs:
        got = counts_of(t)
        raise Bad("%s: no call of %r in the trace%s" % (
            t.path, name, similar_names(name, got)))
    return cs


def cmd_parent(t, a):
    t.analyse(a.tolerance_ns)
    cnt = collections.Counter(pname(c) for c in calls_named(t, a.child))
    for name, n in sorted(cnt.items()):
        print("%s %d" % (name, n))


def cmd_check_parent(t, a):
    t.analyse(a.tolerance_ns)
    allowed = set(a.parents)
    cs = calls_named(t, a.child)
    wrong = [c for c in cs if pname(c) not in allowed]
    if wrong:
        cnt = collections.Counter(pname(c) for c in wrong)
        ex = "\n".join("    %s\n      is directly inside %s" % (
            c.where(), c.parent.where() if c.parent else "nothing (<root>)")
            for c in wrong[:5])
        raise Bad("%s: %d of %d calls of %r are not directly inside %s;\n"
                  "  their innermost enclosing calls: %s\n  examples:\n%s"
                  % (t.path, len(wrong), len(cs), a.child,
                     " or ".join(repr(p) for p in a.parents),
                     ", ".join("%r x%d" % kv for kv in sorted(cnt.items())),
                     ex))


def cmd_maxdepth(t, a):
    t.analyse(a.tolerance_ns)
    best = 0
    # number of `name` frames on the stack at each `name` call
    memo = {}
    for key, calls in t.by_thread().items():
        calls.sort(key=lambda c: (c.ts, -c.dur, c.idx))
        for c in calls:
            if c.name != a.name:
                continue
            p, d = c.parent, 1
            while p is not None:
                if id(p) in memo:
                    d += memo[id(p)]
                    break
                if p.name == a.name:
                    d += 1
                p = p.parent
            memo[id(c)] = d
            best = max(best, d)
    print(best)


def unfinished_names(t):
    return sorted(c.name for c in real_calls(t) if c.unfinished)


def cmd_unfinished(t, a):
    for n in unfinished_names(t):
        print(n)


def cmd_check_unfinished(t, a):
    got = collections.Counter(unfinished_names(t))
    exp = collections.Counter(a.names)
    may = set(a.may or [])
    for name in list(got):
        if name in may and got[name] > exp.get(name, 0):
            got[name] = exp.get(name, 0)
    got += collections.Counter()        # drop zero entries
    if got != exp:
        extra = got - exp
        missing = exp - got
        msg = []
        if missing:
            msg.append("  expected unfinished but not marked so: %s" % ", ".join(
                "%r x%d" % kv for kv in sorted(missing.items())))
        if extra:
            msg.append("  marked unfinished unexpectedly: %s" % ", ".join(
                "%r x%d" % kv for kv in sorted(extra.items())))
        raise Bad("%s: unfinished calls differ (expected: %s; got: %s)\n%s"
                  % (t.path, fmt_ms(exp), fmt_ms(got), "\n".join(msg)))


def fmt_ms(c):
    if not c:
        return "none"
    return ", ".join("%s x%d" % kv for kv in sorted(c.items()))


def cmd_threads(t, a):
    for pid, tid in sorted({(c.pid, c.tid) for c in t.calls}):
        print("%d/%d" % (pid, tid))


def cmd_processes(t, a):
    for pid in sorted({c.pid for c in t.calls}):
        print(pid)


def per_tid(t, name):
    cnt = collections.Counter((c.pid, c.tid) for c in real_calls(t) if c.name == name)
    return sorted(cnt.values())


def cmd_per_tid(t, a):
    print(" ".join(str(n) for n in per_tid(t, a.name)))


def cmd_check_per_tid(t, a):
    got = per_tid(t, a.name)
    exp = sorted(a.counts)
    if got != exp:
        raise Bad("%s: per-thread counts of %r differ:\n  trace:    %s\n"
                  "  expected: %s" % (t.path, a.name,
                                      " ".join(map(str, got)) or "(none)",
                                      " ".join(map(str, exp))))


def cmd_arg_counts(t, a):
    cnt = collections.Counter((c.name, str(c.args.get(a.key, "-"))) for c in real_calls(t))
    for (name, value), n in sorted(cnt.items()):
        print("%s %s %d" % (name, value, n))


def cmd_check_metadata(t, a):
    pnames = {m["pid"] for m in t.meta if m["name"] == "process_name"}
    tnames = {(m["pid"], m["tid"]) for m in t.meta if m["name"] == "thread_name"}
    msg = []
    for pid in sorted({c.pid for c in t.calls} - pnames):
        msg.append("  pid %d has calls but no process_name metadata event" % pid)
    for pid, tid in sorted({(c.pid, c.tid) for c in t.calls} - tnames):
        msg.append("  pid %d tid %d has calls but no thread_name metadata event"
                   % (pid, tid))
    if msg:
        raise Bad("%s: missing metadata:\n%s" % (t.path, "\n".join(msg)))


def main(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tolerance-ns", type=int, default=1,
                    help="slack for time containment (default 1 ns)")
    sub = ap.add_subparsers(dest="cmd", metavar="SUBCOMMAND")
    sub.required = True

    def add(name, fn, *args):
        p = sub.add_parser(name)
        p.add_argument("trace")
        for a in args:
            if isinstance(a, tuple):
                p.add_argument(a[0], **a[1])
            else:
                p.add_argument(a)
        p.set_defaults(fn=fn)
        return p

    add("validate", cmd_validate)
    add("summary", cmd_summary)
    add("counts", cmd_counts)
    p = add("check-counts", cmd_check_counts)
    p.add_argument("-f", "--file", help="program stdout with 'count NAME N' lines")
    p.add_argument("expect", nargs="*", help="NAME=N")
    add("check-nesting", cmd_check_nesting)
    add("parent", cmd_parent, "child")
    p = add("check-parent", cmd_check_parent, "child")
    p.add_argument("parents", nargs="+")
    add("maxdepth", cmd_maxdepth, "name")
    add("unfinished", cmd_unfinished)
    p = add("check-unfinished", cmd_check_unfinished)
    p.add_argument("names", nargs="*")
    p.add_argument("--may", action="append", metavar="NAME",
                   help="NAME may also be unfinished, any number of times")
    add("threads", cmd_threads)
    add("processes", cmd_processes)
    add("per-tid", cmd_per_tid, "name")
    p = add("check-per-tid", cmd_check_per_tid, "name")
    p.add_argument("counts", nargs="+", type=int)
    add("arg-counts", cmd_arg_counts, "key")
    add("check-metadata", cmd_check_metadata)

    # argparse cannot take "-f FILE" between two runs of positionals: move
    # the options of check-counts in front of its positionals.
    if "check-counts" in argv:
        i = argv.index("check-counts")
        head, tail, opts, rest = argv[:i + 1], argv[i + 1:], [], []
        while tail:
            x = tail.pop(0)
            if x in ("-f", "--file") and tail:
                opts += [x, tail.pop(0)]
            elif x.startswith("--file="):
                opts.append(x)
            else:
                rest.append(x)
        argv = head + opts + rest
    a = ap.parse_args(argv)
    try:
        t = Trace(a.trace)
        a.fn(t, a)
    except Bad as e:
        die("%s: %s" % (a.cmd, e))
    except BrokenPipeError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
