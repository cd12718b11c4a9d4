#!/usr/bin/env python3
"""compare_args.py GDB_OUT RUN: the values gdb printed (tests/lib/gdb_values.py) against the
ones calltrace -A -R wrote to RUN/calls, call by call of each function. Addresses are compared
as 0xADDR (gdb runs the program without ASLR, calltrace with it); a parameter gdb cannot show
after an optimised prologue (<optimized out>) is not compared. Prints what differs; exit 1."""
import json
import os
import re
import sys

ADDR = re.compile(r"0x[0-9a-f]+")


def norm(v):
    v = re.sub(r"^\([^()]*(\([^()]*\))?[^()]*\) (?=0x)", "", v)  # finish's "(int *) 0x..."
    return ADDR.sub(lambda m: "0x0" if m.group(0) == "0x0" else "0xADDR", v)


def gdb_calls(path):
    calls, rets = {}, {}
    cur = None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("CALL "):
            cur = {}
            calls.setdefault(line[5:], []).append(cur)
        elif line.startswith("  ") and cur is not None and " = " in line:
            k, v = line[2:].split(" = ", 1)
            cur[k] = v
        elif line.startswith("RET "):
            name, v = line[4:].split(" = ", 1)
            rets.setdefault(name, []).append(v)
    return calls, rets


def gdb_name(name):
    """gdb's frame name of a demangled C++ symbol: "long twice<long>(long)" is twice<long>."""
    if "(" not in name:
        return name
    return name[: name.index("(")].split(" ")[-1]


def ct_calls(run):
    root = os.path.join(run, "calls")
    index = json.load(open(os.path.join(root, "index.json")))
    calls, rets = {}, {}
    for f in index["functions"]:
        for n in range(1, f["folders"] + 1):
            c = json.load(open(os.path.join(root, f["folder"], str(n), "call.json")))
            name = gdb_name(f["name"])
            calls.setdefault(name, []).append({p["name"]: p["value"] for p in c["params"]})
            if "return" in c:
                rets.setdefault(name, []).append(c["return"]["value"])
    return calls, rets


def main():
    gcalls, grets = gdb_calls(sys.argv[1])
    ccalls, crets = ct_calls(sys.argv[2])
    bad, compared = [], 0
    if not gcalls:
        bad.append("gdb reported no call")
    for name, glist in gcalls.items():
        clist = ccalls.get(name, [])
        if len(clist) != len(glist):
            bad.append("%s: gdb saw %d calls, calltrace %d" % (name, len(glist), len(clist)))
            continue
        for i, (g, c) in enumerate(zip(glist, clist)):
            for k, v in g.items():
                if v == "<optimized out>":
                    continue
                compared += 1
                if k not in c or norm(c[k]) != norm(v):
                    bad.append("%s #%d %s: gdb %r, calltrace %r" % (name, i + 1, k, v, c.get(k)))
        gr, cr = grets.get(name, []), crets.get(name, [])
        if len(gr) != len(cr) and gr:
            bad.append("%s: gdb saw %d returns, calltrace %d" % (name, len(gr), len(cr)))
            continue
        for i, (g, c) in enumerate(zip(gr, cr)):
            compared += 1
            if norm(g) != norm(c):
                bad.append("%s #%d return: gdb %r, calltrace %r" % (name, i + 1, g, c))
    for b in bad:
        print(b)
    print("%d values compared, %d differ" % (compared, len(bad)))
    return 1 if bad else 0


sys.exit(main())
