#!/usr/bin/env python3
"""test_pftrace.py -- self-test of pftrace.py and of check_trace.py on
trace.pftrace files (stdlib unittest; run: python3 tests/lib/test_pftrace.py).

Traces are hand-encoded by the tiny protobuf encoder below (field numbers
from Perfetto's protos), independently of both pftrace.py and calltrace's
C writer.  Positive cases check what the reader builds and that every
check_trace.py subcommand answers on a .pftrace as on the equivalent
trace.json; negative cases check that each kind of broken trace is refused
with a message saying what and where.
"""

import gzip
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pftrace  # noqa: E402
import check_trace  # noqa: E402

# ---- a tiny protobuf encoder ---------------------------------------------


def varint(n):
    if n < 0:
        n += 1 << 64                    # int32/int64: two's complement, 10 bytes
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def f_varint(field, value):
    return varint(field << 3 | 0) + varint(int(value))


def f_len(field, payload):
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def f_str(field, text):
    return f_len(field, text.encode("utf-8") if isinstance(text, str) else text)


def f_double(field, value):
    return varint(field << 3 | 1) + struct.pack("<d", value)


# Perfetto field numbers (protos/perfetto/trace/...)
SEQ_CLEARED, SEQ_NEEDS = 1, 2
BEGIN, END, INSTANT = 1, 2, 3


def annotation(name, value, interned=False):
    out = f_varint(1, name) if interned else f_str(10, name)
    if value is True or value is False:
        return out + f_varint(2, value)
    if isinstance(value, float):
        return out + f_double(5, value)
    if isinstance(value, int):
        return out + f_varint(4, value)
    return out + f_str(6, value)


def track_event(etype, track=None, name=None, name_iid=None, annotations=(),
                extra=b""):
    out = f_varint(9, etype)
    if track is not None:
        out += f_varint(11, track)
    if name is not None:
        out += f_str(23, name)
    if name_iid is not None:
        out += f_varint(10, name_iid)
    for a in annotations:
        out += f_len(4, a)
    return out + extra


def process_track(uuid, pid, name=None, rank=None):
    proc = f_varint(1, pid) + f_str(2, "/bin/prog") + (
        f_str(6, name) if name is not None else b"")
    out = f_varint(1, uuid) + f_len(3, proc)
    if rank is not None:
        out += f_varint(12, rank)
    return out


def thread_track(uuid, parent, pid, tid, name=None):
    thread = f_varint(1, pid) + f_varint(2, tid) + (
        f_str(5, name) if name is not None else b"")
    return f_varint(1, uuid) + f_varint(5, parent) + f_len(4, thread)


def interned(event_names=(), annotation_names=()):
    out = b""
    for iid, name in event_names:
        out += f_len(2, f_varint(1, iid) + f_str(2, name))
    for iid, name in annotation_names:
        out += f_len(3, f_varint(1, iid) + f_str(2, name))
    return out


def clock(clock_id, ts, incremental=False, multiplier=None):
    out = f_varint(1, clock_id) + f_varint(2, ts)
    if incremental:
        out += f_varint(3, 1)
    if multiplier is not None:
        out += f_varint(4, multiplier)
    return out


def defaults(clock_id=None, track=None):
    out = b""
    if clock_id is not None:
        out += f_varint(58, clock_id)
    if track is not None:
        out += f_len(11, f_varint(11, track))
    return out


def packet(seq=None, flags=None, ts=None, clock_id=None, event=None,
           descriptor=None, interned_data=None, packet_defaults=None,
           clocks=None, raw=b""):
    out = b""
    if ts is not None:
        out += f_varint(8, ts)
    if clock_id is not None:
        out += f_varint(58, clock_id)
    if seq is not None:
        out += f_varint(10, seq)
    if flags is not None:
        out += f_varint(13, flags)
    if interned_data is not None:
        out += f_len(12, interned_data)
    if packet_defaults is not None:
        out += f_len(59, packet_defaults)
    if clocks is not None:
        out += f_len(6, b"".join(f_len(1, c) for c in clocks))
    if descriptor is not None:
        out += f_len(60, descriptor)
    if event is not None:
        out += f_len(11, event)
    return f_len(1, out + raw)


def trace(*packets):
    return b"".join(packets)


# ---- one run, as a tree of calls, written both ways ----------------------

# (pid, tid, thread name) -> calls; a call is (name, ts ns, dur ns, args, children)
PROCESSES = {100: "prog", 200: "child"}
THREADS = {
    (100, 100, "main 100"): [
        ("main", 1000, 9000, {}, [
            ("work", 2000, 3000, {"n": "3"}, [
                ("leaf", 2500, 500, {}, []),
                ("leaf", 3000, 0, {}, [
                    ("leaf", 3000, 0, {}, []),      # zero-length, same start
                ]),
            ]),
            ("work", 6000, 4000, {"unfinished": True}, []),
        ]),
    ],
    (100, 101, "thread 101"): [
        ("worker", 1500, 1000, {"return": "7"}, [
            ("leaf", 1600, 100, {}, []),
        ]),
        ("worker", 2600, 400, {}, []),
    ],
    (200, 200, "main 200"): [
        ("main", 5000, 3000, {"inherited": True}, [
            ("child_work", 5100, 100, {}, []),
        ]),
    ],
}


def run_as_json():
    """trace.json as calltrace writes it: an X event per call, when it
    returns (inner before outer), ts/dur in us with 3 decimals."""
    events = []
    for pid, name in PROCESSES.items():
        events.append({"name": "process_name", "ph": "M", "pid": pid, "tid": pid,
                       "args": {"name": name}})
    for (pid, tid, tname) in THREADS:
        events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                       "args": {"name": tname}})

    def us(ns):
        return "%d.%03d" % divmod(ns, 1000)

    def walk(pid, tid, call):
        name, ts, dur, args, children = call
        for c in children:
            walk(pid, tid, c)
        events.append('{"name":%s,"cat":"function","ph":"X","ts":%s,"dur":%s,'
                      '"pid":%d,"tid":%d,"args":%s}' % (
                          json.dumps(name), us(ts), us(dur), pid, tid,
                          json.dumps(args)))
    for (pid, tid, _), calls in THREADS.items():
        for c in calls:
            walk(pid, tid, c)
    body = ",\n".join(e if isinstance(e, str) else json.dumps(e) for e in events)
    return ('{"displayTimeUnit":"ns","traceEvents":[\n%s\n],"otherData":'
            '{"producer":"calltrace"}}\n' % body).encode()


def run_as_pftrace():
    """The same run as a trace.pftrace: one sequence per thread, names
    interned in the packet that first uses them, marks and -A values on the
    SLICE_END, plain BOOTTIME timestamps on thread 100 and an incremental
    sequence clock (in 100 ns) elsewhere -- the writer's freedom, the same ns."""
    packets = []
    for i, (pid, name) in enumerate(PROCESSES.items()):
        packets.append(packet(descriptor=process_track(pid, pid, name, rank=i)))
    seq = 0
    for (pid, tid, tname), calls in THREADS.items():
        seq += 1
        uuid = pid * 1000 + tid
        packets.append(packet(seq=seq, flags=SEQ_CLEARED,
                              descriptor=thread_track(uuid, pid, pid, tid, tname)))
        names = {}
        incremental = tid != 100
        state = {"last": 0}
        if incremental:
            # clock 64 counts 100 ns; BOOTTIME 0 is its 0
            packets.append(packet(seq=seq, clocks=[clock(6, 0), clock(64, 0, True, 100)]))
            packets.append(packet(seq=seq, flags=SEQ_NEEDS,
                                  packet_defaults=defaults(64, uuid)))

        def event(ts, ev_type, name, args):
            fields = {}
            if ev_type == BEGIN:
                if name not in names:
                    names[name] = len(names) + 1
                    fields["interned_data"] = interned([(names[name], name)])
                ev = track_event(ev_type, None if incremental else uuid,
                                 name_iid=names[name])
            else:
                ev = track_event(ev_type, None if incremental else uuid,
                                 annotations=[annotation(k, v) for k, v in args.items()])
            if incremental:
                assert ts % 100 == 0
                delta = ts // 100 - state["last"]
                state["last"] = ts // 100
                packets.append(packet(seq=seq, flags=SEQ_NEEDS, ts=delta,
                                      event=ev, **fields))
            else:
                packets.append(packet(seq=seq, flags=SEQ_NEEDS, ts=ts, event=ev,
                                      **fields))

        def walk(call):
            name, ts, dur, args, children = call
            event(ts, BEGIN, name, {})
            for c in children:
                walk(c)
            event(ts + dur, END, name, args)
        for c in calls:
            walk(c)
    return trace(*packets)


def tmpfile(test, name, data):
    d = tempfile.mkdtemp(prefix="pftrace-test.")
    test.addCleanup(lambda: (os.remove(path), os.rmdir(d)))
    path = os.path.join(d, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def check_trace_output(args):
    """check_trace.py's exit status and stdout, run as the tests run it."""
    p = subprocess.run([sys.executable, os.path.join(HERE, "check_trace.py")] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


# ---- positive cases -------------------------------------------------------

class TestReading(unittest.TestCase):

    def test_calls_of_a_run(self):
        t = pftrace.parse(run_as_pftrace())
        got = sorted((c.pid, c.tid, c.ts, c.dur, c.name) for c in t.calls)
        want = []

        def walk(pid, tid, call):
            name, ts, dur, args, children = call
            want.append((pid, tid, ts, dur, name))
            for c in children:
                walk(pid, tid, c)
        for (pid, tid, _), calls in THREADS.items():
            for c in calls:
                walk(pid, tid, c)
        self.assertEqual(got, sorted(want))
        marks = sorted((c.name, c.unfinished, c.inherited) for c in t.calls
                       if c.unfinished or c.inherited)
        self.assertEqual(marks, [("main", False, True), ("work", True, False)])
        worker = [c for c in t.calls if c.name == "worker" and c.ts == 1500][0]
        self.assertEqual(worker.args, {"return": "7"})
        names = sorted((m["name"], m["pid"], m["tid"], m["args"].get("name"))
                       for m in t.meta if m["name"] != "process_sort_index")
        self.assertEqual(names, [
            ("process_name", 100, 100, "prog"), ("process_name", 200, 200, "child"),
            ("thread_name", 100, 100, "main 100"),
            ("thread_name", 100, 101, "thread 101"),
            ("thread_name", 200, 200, "main 200")])

    def test_same_answers_as_json(self):
        json_path = tmpfile(self, "trace.json", run_as_json())
        pf = run_as_pftrace()
        pf_path = tmpfile(self, "trace.pftrace", pf)
        gz_path = tmpfile(self, "trace.pftrace.gz", gzip.compress(pf))
        # sniffed by content, whatever the name
        anon_path = tmpfile(self, "trace.bin", gzip.compress(pf))
        commands = [
            ["validate"], ["summary"], ["counts"], ["check-counts", "leaf=4"],
            ["check-counts", "leaf=3"], ["check-nesting"], ["parent", "leaf"],
            ["check-parent", "leaf", "work", "worker"],
            ["check-parent", "leaf", "work"], ["maxdepth", "leaf"],
            ["unfinished"], ["check-unfinished", "work"], ["check-unfinished"],
            ["threads"], ["processes"], ["per-tid", "leaf"],
            ["check-per-tid", "leaf", "1", "3"], ["check-per-tid", "leaf", "4"],
            ["check-metadata"],
        ]
        for cmd in commands:
            rc, out, err = check_trace_output(cmd[:1] + [json_path] + cmd[1:])
            self.assertIn(rc, (0, 1), "%s: %s" % (cmd, err))
            for path in (pf_path, gz_path, anon_path):
                rc2, out2, err2 = check_trace_output(cmd[:1] + [path] + cmd[1:])
                self.assertEqual((rc2, out2), (rc, out),
                                 "%s on %s: %s / json: %s" % (cmd, path, err2, err))
        # a zero-length call where another ends is inside it (check_trace's
        # rule): leaf 2500+500 > leaf 3000+0 > leaf 3000+0
        rc, out, _ = check_trace_output(["maxdepth", pf_path, "leaf"])
        self.assertEqual(out, "3\n")

    def test_incremental_clock_units_and_snapshot_reset(self):
        uuid = 11
        packets = [
            packet(descriptor=process_track(1, 10, "p")),
            packet(seq=5, flags=SEQ_CLEARED | SEQ_NEEDS,
                   descriptor=thread_track(uuid, 1, 10, 10, "main 10"),
                   packet_defaults=defaults(64, uuid)),
            # clock 64 = 100 <-> BOOTTIME 1_000_000, in units of 10 ns
            packet(seq=5, clocks=[clock(6, 1_000_000), clock(64, 100, True, 10)]),
            packet(seq=5, flags=SEQ_NEEDS, ts=5, event=track_event(BEGIN, name="a")),
            packet(seq=5, flags=SEQ_NEEDS, ts=3, event=track_event(END)),
            # a new snapshot: the next delta counts from its value again
            packet(seq=5, clocks=[clock(6, 2_000_000), clock(64, 500, True, 10)]),
            packet(seq=5, flags=SEQ_NEEDS, ts=0, event=track_event(BEGIN, name="b")),
            # an explicit BOOTTIME timestamp next to defaults
            packet(seq=5, flags=SEQ_NEEDS, ts=2_000_070, clock_id=6,
                   event=track_event(END)),
        ]
        t = pftrace.parse(trace(*packets))
        self.assertEqual([(c.name, c.ts, c.dur) for c in t.calls],
                         [("a", 1_000_000 + 5 * 10, 3 * 10), ("b", 2_000_000, 70)])

    def test_exec_renames_and_pid_reuse(self):
        packets = [
            packet(descriptor=process_track(1, 10, "sh")),
            packet(descriptor=thread_track(2, 1, 10, 10, "main 10")),
            packet(ts=5, event=track_event(BEGIN, 2, name="f")),
            packet(ts=6, event=track_event(END, 2)),
            packet(descriptor=process_track(1, 10, "prog")),      # exec
            # pid 10 given again to a later process: a process of its own
            packet(descriptor=process_track(3, 10, "again")),
            packet(descriptor=thread_track(4, 3, 10, 10, "main 10")),
            packet(ts=7, event=track_event(BEGIN, 4, name="g")),
            packet(ts=8, event=track_event(END, 4)),
        ]
        t = pftrace.parse(trace(*packets))
        self.assertEqual([(c.name, c.pid, c.tid) for c in t.calls],
                         [("f", 10, 10), ("g", 10 + (1 << 22), 10)])
        self.assertEqual([(m["pid"], m["args"]["name"]) for m in t.meta
                          if m["name"] == "process_name"],
                         [(10, "sh"), (10, "prog"), (10 + (1 << 22), "again")])

    def test_interned_annotation_names_packed_ids_unknown_fields(self):
        unknown = f_varint(2000, 1) + f_str(2001, "x") + varint(2002 << 3 | 5) + b"abcd"
        ev = track_event(BEGIN, 2, name_iid=1,
                         annotations=[annotation(1, "v", interned=True),
                                      annotation("d", 1.5)],
                         extra=f_len(3, varint(1) + varint(2)) + unknown)
        packets = [
            packet(descriptor=process_track(1, 10, "p")),
            packet(descriptor=thread_track(2, 1, 10, 10, "t")),
            packet(seq=1, flags=SEQ_CLEARED | SEQ_NEEDS, ts=1, event=ev,
                   interned_data=interned([(1, "f")], [(1, "arg")]), raw=unknown),
            packet(seq=1, flags=SEQ_NEEDS, ts=2,
                   event=track_event(END, 2, annotations=[annotation("unwound", True)])),
            packet(ts=3, event=track_event(INSTANT, 2, name="mark")),
        ]
        t = pftrace.parse(trace(*packets))
        self.assertEqual(len(t.calls), 1)
        self.assertEqual(t.calls[0].name, "f")
        self.assertEqual(t.calls[0].args, {"arg": "v", "d": 1.5, "unwound": True})
        self.assertEqual(t.instants, 1)

    def test_negative_pid_is_int32(self):
        packets = [
            packet(descriptor=process_track(1, -5, "p")),
            packet(descriptor=thread_track(2, 1, -5, 7, "t")),
            packet(ts=1, event=track_event(BEGIN, 2, name="f")),
            packet(ts=2, event=track_event(END, 2)),
        ]
        self.assertEqual(pftrace.parse(trace(*packets)).calls[0].pid, -5)

    def test_standalone_dump_and_stats(self):
        path = tmpfile(self, "trace.pftrace", run_as_pftrace())
        script = os.path.join(HERE, "pftrace.py")
        out = subprocess.run([sys.executable, script, "dump", path], check=True,
                             stdout=subprocess.PIPE, text=True).stdout.splitlines()
        self.assertEqual(out[:6], [
            "100 100 0 1000 9000 main",
            "100 100 1 2000 3000 work n=3",
            "100 100 2 2500 500 leaf",
            "100 100 3 3000 0 leaf",
            "100 100 4 3000 0 leaf",
            "100 100 1 6000 4000 work unfinished=true",
        ])
        self.assertEqual(len(out), 11)
        stats = subprocess.run([sys.executable, script, "stats", path], check=True,
                               stdout=subprocess.PIPE, text=True).stdout
        self.assertIn("calls 11\n", stats)
        self.assertIn("sequences 4\n", stats)     # 3 threads, and "no sequence"
        self.assertIn("tracks 5 (process 2, thread 3, other 0)\n", stats)
        self.assertIn("interned_names 7 (event 7, annotation 0)\n", stats)
        rc = subprocess.run([sys.executable, script, "stats"],
                            stderr=subprocess.DEVNULL).returncode
        self.assertEqual(rc, 2)


# ---- negative cases -------------------------------------------------------

HEAD = [packet(descriptor=process_track(1, 10, "p")),
        packet(descriptor=thread_track(2, 1, 10, 10, "t"))]


def begin(ts=1, name="f", **kw):
    return packet(ts=ts, event=track_event(BEGIN, 2, name=name), **kw)


def end(ts=2, **kw):
    return packet(ts=ts, event=track_event(END, 2), **kw)


class TestRefusing(unittest.TestCase):

    def refused(self, data, *expected):
        """data must be refused, with each expected text in the message."""
        with self.assertRaises(pftrace.PftraceError) as cm:
            pftrace.parse(data, "t.pftrace")
        msg = str(cm.exception)
        for text in expected:
            self.assertIn(text, msg)
        return msg

    def test_good_head_is_good(self):
        pftrace.parse(trace(*HEAD, begin(), end()))

    def test_empty_file(self):
        self.refused(b"", "no packets")

    def test_truncated_varint(self):
        self.refused(trace(*HEAD) + b"\x0a\x80", "packet #2 (byte %d)"
                     % len(trace(*HEAD)), "varint runs past the end")

    def test_overlong_varint(self):
        bad = f_len(1, varint(8 << 3) + b"\xff" * 10 + b"\x01")
        self.refused(trace(*HEAD, bad), "packet #2", "longer than 10 bytes")

    def test_length_past_end(self):
        data = trace(*HEAD, begin())
        self.refused(data[:-3], "packet #2", "runs past the end of the file")

    def test_nested_length_past_end(self):
        inner = varint(11 << 3 | 2) + varint(50) + b"\x08\x01"
        self.refused(trace(*HEAD, f_len(1, inner)), "TracePacket: field 11: length 50")

    def test_top_level_field_not_packet(self):
        self.refused(trace(*HEAD, f_varint(2, 1)), "packet #2", "a Trace holds only")

    def test_wire_type_mismatch(self):
        ev = f_varint(9, BEGIN) + f_varint(11, 2) + f_varint(23, 5)   # name as varint
        msg = self.refused(trace(*HEAD, packet(ts=1, event=ev)),
                           "TracePacket.track_event.name (field 23, string) has "
                           "wire type 0 (varint), expected 2")
        self.assertIn("packet #2 (byte %d), at byte" % len(trace(*HEAD)), msg)

    def test_group_wire_type(self):
        self.refused(trace(*HEAD, f_len(1, varint(3 << 3 | 3))), "wire type 3")

    def test_bad_utf8_name(self):
        bad = packet(ts=1, event=f_varint(9, BEGIN) + f_varint(11, 2) +
                     f_str(23, b"f\xc3("))
        self.refused(trace(*HEAD, bad, end()), "track_event.name is not valid UTF-8")

    def test_bad_utf8_interned_name(self):
        self.refused(trace(*HEAD, packet(seq=1, flags=SEQ_CLEARED,
                                         interned_data=interned([(1, b"\xff")]))),
                     "event_names.name is not valid UTF-8")

    def test_empty_names(self):
        self.refused(trace(*HEAD, begin(name=""), end()), "BEGIN has an empty name")
        self.refused(trace(*HEAD, packet(seq=1, flags=SEQ_CLEARED,
                                         interned_data=interned([(1, "")]))),
                     "iid 1 has an empty name")
        ev = track_event(END, 2, annotations=[annotation("", "x")])
        self.refused(trace(*HEAD, begin(), packet(ts=2, event=ev)),
                     "debug annotation has an empty name")

    def test_event_without_name(self):
        self.refused(trace(*HEAD, packet(ts=1, event=track_event(BEGIN, 2)), end()),
                     "BEGIN without a name")

    def test_interned_without_cleared(self):
        self.refused(trace(*HEAD, packet(seq=1, flags=SEQ_NEEDS, ts=1,
                                         event=track_event(BEGIN, 2, name_iid=1)),
                           end()),
                     "never had SEQ_INCREMENTAL_STATE_CLEARED")
        self.refused(trace(*HEAD, packet(seq=1, interned_data=interned([(1, "f")]))),
                     "interned_data on sequence 1 before any packet with "
                     "SEQ_INCREMENTAL_STATE_CLEARED")

    def test_interned_without_needs(self):
        self.refused(trace(*HEAD, packet(seq=1, flags=SEQ_CLEARED, ts=1,
                                         interned_data=interned([(1, "f")]),
                                         event=track_event(BEGIN, 2, name_iid=1)),
                           end()),
                     "packet #2", "lacks SEQ_NEEDS_INCREMENTAL_STATE")

    def test_iid_before_definition(self):
        self.refused(trace(*HEAD,
                           packet(seq=1, flags=SEQ_CLEARED | SEQ_NEEDS, ts=1,
                                  event=track_event(BEGIN, 2, name_iid=1)),
                           packet(seq=1, flags=SEQ_NEEDS, ts=2,
                                  interned_data=interned([(1, "f")]),
                                  event=track_event(END, 2))),
                     "packet #2", "name_iid 1, not defined on sequence 1")

    def test_iid_of_another_sequence(self):
        self.refused(trace(*HEAD,
                           packet(seq=1, flags=SEQ_CLEARED, interned_data=interned([(1, "f")])),
                           packet(seq=2, flags=SEQ_CLEARED | SEQ_NEEDS, ts=1,
                                  event=track_event(BEGIN, 2, name_iid=1)),
                           end()),
                     "packet #3", "not defined on sequence 2")

    def test_iid_after_state_cleared(self):
        self.refused(trace(*HEAD,
                           packet(seq=1, flags=SEQ_CLEARED, interned_data=interned([(1, "f")])),
                           packet(seq=1, flags=SEQ_CLEARED | SEQ_NEEDS, ts=1,
                                  event=track_event(BEGIN, 2, name_iid=1)),
                           end()),
                     "packet #3", "not defined on sequence 1")

    def test_iid_redefined(self):
        self.refused(trace(*HEAD, packet(seq=1, flags=SEQ_CLEARED,
                                         interned_data=interned([(1, "f"), (1, "g")]))),
                     "iid 1 redefined")

    def test_annotation_iid_undefined(self):
        ev = track_event(END, 2, annotations=[annotation(4, "x", interned=True)])
        self.refused(trace(*HEAD, begin(), packet(seq=1, flags=SEQ_CLEARED | SEQ_NEEDS,
                                                  ts=2, event=ev)),
                     "debug annotation uses name_iid 4, not defined")

    def test_defaults_without_cleared_or_needs(self):
        self.refused(trace(*HEAD, packet(seq=1, packet_defaults=defaults(track=2))),
                     "trace_packet_defaults on sequence 1 before")
        self.refused(trace(*HEAD,
                           packet(seq=1, flags=SEQ_CLEARED, packet_defaults=defaults(track=2)),
                           packet(seq=1, ts=1, event=track_event(BEGIN, name="f"))),
                     "default track_uuid relies on", "lacks SEQ_NEEDS_INCREMENTAL_STATE")

    def test_defaults_reset_by_cleared(self):
        self.refused(trace(*HEAD,
                           packet(seq=1, flags=SEQ_CLEARED, packet_defaults=defaults(track=2)),
                           packet(seq=1, flags=SEQ_CLEARED | SEQ_NEEDS, ts=1,
                                  event=track_event(BEGIN, name="f"))),
                     "no track_uuid and its sequence no default one")

    def test_state_without_sequence_id(self):
        self.refused(trace(*HEAD, packet(flags=SEQ_CLEARED)),
                     "without trusted_packet_sequence_id")

    def test_unknown_track(self):
        self.refused(trace(*HEAD, packet(ts=1, event=track_event(BEGIN, 99, name="f"))),
                     "packet #2", "track_uuid 99, which no earlier TrackDescriptor")

    def test_event_on_process_track(self):
        self.refused(trace(*HEAD, packet(ts=1, event=track_event(BEGIN, 1, name="f"))),
                     "on process track 1 (pid 10)")

    def test_thread_parent_not_process(self):
        self.refused(trace(packet(descriptor=f_varint(1, 1) + f_str(2, "plain")),
                           packet(descriptor=thread_track(2, 1, 10, 10)),
                           begin(), end()),
                     "thread track 2 (pid 10 tid 10) has parent track 1, which is "
                     "not a process track")
        # unused, with no parent at all: found at the end
        self.refused(trace(packet(descriptor=f_varint(1, 2) + f_len(
            4, f_varint(1, 10) + f_varint(2, 10)))), "has no parent_uuid")
        self.refused(trace(packet(descriptor=thread_track(2, 7, 10, 10))),
                     "parent_uuid 7, which no TrackDescriptor defines")
        self.refused(trace(HEAD[0], packet(descriptor=thread_track(2, 1, 11, 11)),
                           begin(), end()), "says pid 11 but its parent is process track 1")

    def test_track_changed_on_reemission(self):
        self.refused(trace(*HEAD, packet(descriptor=thread_track(2, 1, 10, 12))),
                     "track 2 re-emitted as a different track")

    def test_end_without_begin(self):
        self.refused(trace(*HEAD, end()), "packet #2",
                     "SLICE_END on thread track 2 (pid 10 tid 10), which has no open slice")

    def test_slice_never_ends(self):
        self.refused(trace(*HEAD, begin(), begin(ts=2, name="g"), end(ts=3)),
                     "slice 'f' begun in packet #2", "never ends")

    def test_time_goes_backwards(self):
        self.refused(trace(*HEAD, begin(ts=10), end(ts=5)), "packet #3",
                     "timestamps go backwards")

    def test_oneof_conflicts(self):
        ev = track_event(BEGIN, 2, name="f", name_iid=1)
        self.refused(trace(*HEAD, packet(ts=1, event=ev)),
                     "name_iid and name are members of one oneof")
        self.refused(trace(*HEAD, packet(ts=1, event=track_event(BEGIN, 2, name="f"),
                                         descriptor=process_track(5, 5))),
                     "track_event and track_descriptor are members of one oneof")

    def test_bad_marks_and_duplicates(self):
        ev = track_event(END, 2, annotations=[annotation("unfinished", "yes")])
        self.refused(trace(*HEAD, begin(), packet(ts=2, event=ev)),
                     "'unfinished' is 'yes', expected bool true")
        b = packet(ts=1, event=track_event(BEGIN, 2, name="f",
                                           annotations=[annotation("x", 1)]))
        e = packet(ts=2, event=track_event(END, 2, annotations=[annotation("x", 2)]))
        self.refused(trace(*HEAD, b, e), "'x' is on both its BEGIN and its END")

    def test_bad_event_type(self):
        self.refused(trace(*HEAD, packet(ts=1, event=track_event(4, 2, name="c"))),
                     "type is TYPE_COUNTER")

    def test_clock_problems(self):
        self.refused(trace(*HEAD, packet(seq=1, ts=1, clock_id=64,
                                         event=track_event(BEGIN, 2, name="f"))),
                     "clock 64, which no earlier ClockSnapshot of sequence 1")
        # a sequence clock is scoped to its sequence
        self.refused(trace(*HEAD, packet(seq=1, clocks=[clock(6, 0), clock(64, 0)]),
                           packet(seq=2, ts=1, clock_id=64,
                                  event=track_event(BEGIN, 2, name="f"))),
                     "no earlier ClockSnapshot of sequence 2")
        self.refused(trace(*HEAD, packet(seq=1, clocks=[clock(64, 0)])),
                     "no BOOTTIME clock (6)")
        self.refused(trace(*HEAD, packet(seq=1, clocks=[clock(6, 0), clock(64, 0, True, 1000)]),
                           packet(seq=1, clocks=[clock(6, 0), clock(64, 0, True, 10)])),
                     "all snapshots of a clock must use one unit")
        self.refused(trace(*HEAD, packet(seq=1, clocks=[clock(6, 10), clock(64, 50)]),
                           packet(seq=1, ts=1, clock_id=64,
                                  event=track_event(BEGIN, 2, name="f"))),
                     "before BOOTTIME 0")

    def test_bad_gzip(self):
        data = gzip.compress(trace(*HEAD, begin(), end()))
        self.refused(data[:-6], "not a valid gzip stream")

    def test_gzip_offsets_are_said_to_be_gunzipped(self):
        self.refused(gzip.compress(trace(*HEAD, end())),
                     "byte offsets are into the gunzipped data", "no open slice")


class TestCheckTraceFormats(unittest.TestCase):

    def test_invalid_pftrace_fails_check_trace(self):
        path = tmpfile(self, "trace.pftrace", trace(*HEAD, end()))
        rc, out, err = check_trace_output(["summary", path])
        self.assertEqual(rc, 1)
        self.assertIn("invalid trace.pftrace (1 problem)", err)

    def test_json_named_pftrace_is_refused_as_pftrace(self):
        path = tmpfile(self, "trace.pftrace", run_as_json())
        rc, out, err = check_trace_output(["validate", path])
        self.assertEqual(rc, 1)
        self.assertIn("a Trace holds only", err)

    def test_gzipped_json_keeps_its_old_error(self):
        path = tmpfile(self, "trace.json.gz", gzip.compress(run_as_json()))
        rc, out, err = check_trace_output(["validate", path])
        self.assertEqual(rc, 1)
        self.assertIn("not valid UTF-8 at byte 1", err)

    def test_trace_object(self):
        path = tmpfile(self, "x.pftrace", run_as_pftrace())
        t = check_trace.Trace(path)
        self.assertEqual(len(t.calls), 11)
        self.assertTrue(t.calls[0].where().startswith("'leaf' (packets #"))


if __name__ == "__main__":
    unittest.main(verbosity=1)
