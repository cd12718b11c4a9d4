#!/usr/bin/env python3
"""pftrace.py -- an independent reader of calltrace's trace.pftrace (stdlib only).

trace.pftrace is a Perfetto protobuf trace (a `Trace` message: a sequence of
`TracePacket`s), possibly gzip-compressed.  This reader is written from
Perfetto's .proto definitions (protos/perfetto/trace/...), not from
calltrace's C writer, so that the tests catch the writer's mistakes instead
of sharing them.  It validates strictly -- framing, wire types, UTF-8,
sequence/interning rules, clocks, tracks, slice pairing -- and turns each
SLICE_BEGIN / SLICE_END pair into one call, with the same fields
check_trace.py reads from trace.json.

Usage:
  pftrace.py dump FILE     one line per call, per thread in time order:
                           "pid tid depth ts dur name [key=value ...]"
                           (ts, dur in ns; depth 0 = outermost)
  pftrace.py stats FILE    packets, bytes, calls, bytes per call, sequences,
                           tracks, interned names (calls counts every
                           slice, a forked child's inherited copies too)
Exit status: 0, 1 if the file is not a valid trace (the problems on stderr),
2 on a usage error.

As a module: read_trace(path) -> PfTrace (raises PftraceError).
"""

import collections
import gzip
import struct
import sys
import zlib

MAX_ERRORS = 200        # past this, stop collecting: the first ones tell
MAX_SHOWN = 10          # problems shown in an error message

GZIP_MAGIC = b"\x1f\x8b"

# ---- protobuf wire format -------------------------------------------------

WIRE_VARINT, WIRE_FIXED64, WIRE_LEN, WIRE_FIXED32 = 0, 1, 2, 5
WIRE_NAMES = {0: "varint", 1: "fixed64", 2: "length-delimited",
              3: "start-group", 4: "end-group", 5: "fixed32"}

# field kind -> the wire type it must arrive with
KIND_WIRE = {
    "uint32": WIRE_VARINT, "uint64": WIRE_VARINT, "int32": WIRE_VARINT,
    "int64": WIRE_VARINT, "bool": WIRE_VARINT, "enum": WIRE_VARINT,
    "double": WIRE_FIXED64, "fixed64": WIRE_FIXED64,
    "string": WIRE_LEN, "bytes": WIRE_LEN, "message": WIRE_LEN,
}
VARINT_KINDS = {k for k, w in KIND_WIRE.items() if w == WIRE_VARINT}


class Schema:
    """One protobuf message type: field number -> (name, kind, repeated,
    sub-schema for kind "message"), plus its oneof groups (at most one
    member of each may be present)."""

    def __init__(self, name, fields, oneofs=()):
        self.name = name
        self.fields = {}
        for number, spec in fields.items():
            fname, kind = spec[0], spec[1]
            repeated = "repeated" in spec[2:]
            sub = next((s for s in spec[2:] if isinstance(s, Schema)), None)
            if kind == "message" and sub is None:
                raise ValueError("%s.%s: message without schema" % (name, fname))
            self.fields[number] = (fname, kind, repeated, sub)
        self.oneofs = [tuple(g) for g in oneofs]


R = "repeated"

# Field numbers and types from google/perfetto protos/perfetto/trace/.
# Only what calltrace's trace uses; other fields are skipped (a valid
# protobuf may hold fields a reader does not know), but their framing is
# still checked.

# clock_snapshot.proto
CLOCK = Schema("Clock", {
    1: ("clock_id", "uint32"), 2: ("timestamp", "uint64"),
    3: ("is_incremental", "bool"), 4: ("unit_multiplier_ns", "uint64")})
CLOCK_SNAPSHOT = Schema("ClockSnapshot", {
    1: ("clocks", "message", R, CLOCK), 2: ("primary_trace_clock", "enum")})

# track_event/process_descriptor.proto, thread_descriptor.proto
PROCESS_DESCRIPTOR = Schema("ProcessDescriptor", {
    1: ("pid", "int32"), 2: ("cmdline", "string", R),
    6: ("process_name", "string")})
THREAD_DESCRIPTOR = Schema("ThreadDescriptor", {
    1: ("pid", "int32"), 2: ("tid", "int32"), 5: ("thread_name", "string")})

# track_event/track_descriptor.proto
TRACK_DESCRIPTOR = Schema("TrackDescriptor", {
    1: ("uuid", "uint64"), 5: ("parent_uuid", "uint64"), 2: ("name", "string"),
    3: ("process", "message", PROCESS_DESCRIPTOR),
    4: ("thread", "message", THREAD_DESCRIPTOR),
    11: ("child_ordering", "enum"), 12: ("sibling_order_rank", "int32")})

# track_event/debug_annotation.proto
DEBUG_ANNOTATION_VALUES = ("bool_value", "uint_value", "int_value",
                           "double_value", "string_value", "pointer_value",
                           "nested_value", "legacy_json_value")
DEBUG_ANNOTATION = Schema("DebugAnnotation", {
    1: ("name_iid", "uint64"), 10: ("name", "string"),
    2: ("bool_value", "bool"), 3: ("uint_value", "uint64"),
    4: ("int_value", "int64"), 5: ("double_value", "double"),
    6: ("string_value", "string"), 7: ("pointer_value", "uint64"),
    8: ("nested_value", "bytes"), 9: ("legacy_json_value", "string")},
    oneofs=[("name_iid", "name"), DEBUG_ANNOTATION_VALUES])

# track_event/track_event.proto
TYPE_SLICE_BEGIN, TYPE_SLICE_END, TYPE_INSTANT = 1, 2, 3
TYPE_NAMES = {0: "TYPE_UNSPECIFIED", 1: "TYPE_SLICE_BEGIN",
              2: "TYPE_SLICE_END", 3: "TYPE_INSTANT", 4: "TYPE_COUNTER"}
TRACK_EVENT = Schema("TrackEvent", {
    9: ("type", "enum"), 11: ("track_uuid", "uint64"),
    10: ("name_iid", "uint64"), 23: ("name", "string"),
    3: ("category_iids", "uint64", R), 22: ("categories", "string", R),
    4: ("debug_annotations", "message", R, DEBUG_ANNOTATION)},
    oneofs=[("name_iid", "name")])
TRACK_EVENT_DEFAULTS = Schema("TrackEventDefaults", {
    11: ("track_uuid", "uint64")})

# trace_packet_defaults.proto
TRACE_PACKET_DEFAULTS = Schema("TracePacketDefaults", {
    58: ("timestamp_clock_id", "uint32"),
    11: ("track_event_defaults", "message", TRACK_EVENT_DEFAULTS)})

# interned_data/interned_data.proto (EventCategory, EventName and
# DebugAnnotationName all are {iid = 1, name = 2})
INTERNED_STRING = Schema("InternedString", {
    1: ("iid", "uint64"), 2: ("name", "string")})
INTERNED_DATA = Schema("InternedData", {
    1: ("event_categories", "message", R, INTERNED_STRING),
    2: ("event_names", "message", R, INTERNED_STRING),
    3: ("debug_annotation_names", "message", R, INTERNED_STRING)})

# trace_packet.proto
SEQ_INCREMENTAL_STATE_CLEARED = 1
SEQ_NEEDS_INCREMENTAL_STATE = 2
TRACE_PACKET = Schema("TracePacket", {
    8: ("timestamp", "uint64"), 58: ("timestamp_clock_id", "uint32"),
    10: ("trusted_packet_sequence_id", "uint32"),
    13: ("sequence_flags", "uint32"),
    41: ("incremental_state_cleared", "bool"),   # deprecated form of flag 1
    11: ("track_event", "message", TRACK_EVENT),
    60: ("track_descriptor", "message", TRACK_DESCRIPTOR),
    12: ("interned_data", "message", INTERNED_DATA),
    6: ("clock_snapshot", "message", CLOCK_SNAPSHOT),
    59: ("trace_packet_defaults", "message", TRACE_PACKET_DEFAULTS)},
    # members of TracePacket's `oneof data` (Perfetto reads one)
    oneofs=[("track_event", "track_descriptor", "clock_snapshot")])

# trace.proto: message Trace { repeated TracePacket packet = 1; }
TRACE_PACKET_FIELD = 1

# common/builtin_clock.proto; clock_snapshot.proto
BOOTTIME = 6
FIRST_BUILTIN_CLOCK, LAST_BUILTIN_CLOCK = 1, 63
FIRST_SEQUENCE_CLOCK, LAST_SEQUENCE_CLOCK = 64, 127

# calltrace's marks on a call (bool annotations, true when present)
MARKS = ("unfinished", "unwound", "inherited")

# a pid the kernel gave again to a later process gets its own number,
# pid + generation * 2^22 (pid_max <= 2^22), as in calltrace's trace.json
PID_SPACE = 1 << 22


class DecodeError(Exception):
    """Bytes that are not the protobuf they should be, at offset `at`."""

    def __init__(self, at, msg):
        Exception.__init__(self, msg)
        self.at = at
        self.msg = msg


class Msg(dict):
    """A decoded message: field name -> value (a list for repeated fields).
    `start` is the offset of its first byte; `at` maps each field name to the
    offset of its (last) tag, for error messages."""
    __slots__ = ("start", "at")


def read_varint(buf, pos, end):
    """-> (value, position after it); a varint is at most 10 bytes, 64 bits."""
    start = pos
    if pos < end and buf[pos] < 0x80:       # the common one-byte case
        return buf[pos], pos + 1
    result = shift = 0
    while True:
        if pos >= end:
            raise DecodeError(start, "varint runs past the end of its message")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift >= 70:
            raise DecodeError(start, "varint longer than 10 bytes")
    if result >> 64:
        raise DecodeError(start, "varint does not fit in 64 bits")
    return result, pos


def convert_varint(kind, v, at, what):
    """Checks a varint's range for its declared type; signed types are two's
    complement over 64 bits (an int32 -1 is a 10-byte varint)."""
    if kind == "uint64":
        return v
    if kind == "uint32":
        if v >> 32:
            raise DecodeError(at, "%s = %d does not fit uint32" % (what, v))
        return v
    if kind == "bool":
        if v > 1:
            raise DecodeError(at, "%s: bool encoded as %d (expected 0 or 1)"
                              % (what, v))
        return bool(v)
    if v >> 63:
        v -= 1 << 64
    if kind in ("int32", "enum") and not -(1 << 31) <= v < (1 << 31):
        raise DecodeError(at, "%s = %d does not fit int32" % (what, v))
    return v


def decode(buf, pos, end, schema, path):
    """Decodes buf[pos:end] as a `schema` message -> Msg.  Raises DecodeError
    for bad framing, a wire type that does not match the field's type,
    invalid UTF-8, or two members of one oneof."""
    msg = Msg()
    msg.start = pos
    msg.at = {}
    fields = schema.fields
    while pos < end:
        tag_at = pos
        tag, pos = read_varint(buf, pos, end)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise DecodeError(tag_at, "%s: field number 0 (tag %d)" % (path, tag))
        # framing first: the value's extent, whatever the field
        if wire == WIRE_VARINT:
            value, pos = read_varint(buf, pos, end)
        elif wire == WIRE_FIXED64 or wire == WIRE_FIXED32:
            size = 8 if wire == WIRE_FIXED64 else 4
            if pos + size > end:
                raise DecodeError(tag_at, "%s: field %d: %d-byte value runs past "
                                  "the end of its message" % (path, number, size))
            value = buf[pos:pos + size]
            pos += size
        elif wire == WIRE_LEN:
            length, pos = read_varint(buf, pos, end)
            if length > end - pos:
                raise DecodeError(tag_at, "%s: field %d: length %d runs past the "
                                  "end of its message (%d bytes left)"
                                  % (path, number, length, end - pos))
            value = (pos, pos + length)
            pos += length
        else:
            raise DecodeError(tag_at, "%s: field %d has wire type %d (%s), which "
                              "Perfetto does not use" % (
                                  path, number, wire, WIRE_NAMES.get(wire, "invalid")))
        spec = fields.get(number)
        if spec is None:
            continue                    # a field this reader does not need
        name, kind, repeated, sub = spec
        what = "%s.%s" % (path, name)
        expected = KIND_WIRE[kind]
        if wire != expected:
            if not (repeated and kind in VARINT_KINDS and wire == WIRE_LEN):
                raise DecodeError(tag_at, "%s (field %d, %s) has wire type %d (%s), "
                                  "expected %d (%s)" % (
                                      what, number, kind, wire, WIRE_NAMES[wire],
                                      expected, WIRE_NAMES[expected]))
            # packed repeated varints
            p, p_end = value
            items = msg.setdefault(name, [])
            while p < p_end:
                v, p = read_varint(buf, p, p_end)
                items.append(convert_varint(kind, v, tag_at, what))
            msg.at[name] = tag_at
            continue
        if kind in VARINT_KINDS:
            value = convert_varint(kind, value, tag_at, what)
        elif kind == "double":
            value = struct.unpack("<d", value)[0]
        elif kind == "fixed64":
            value = struct.unpack("<Q", value)[0]
        elif kind == "string":
            s, e = value
            try:
                value = buf[s:e].decode("utf-8")
            except UnicodeDecodeError as ue:
                raise DecodeError(s + ue.start, "%s is not valid UTF-8 (bad byte "
                                  "0x%02x at byte %d)" % (what, buf[s + ue.start],
                                                         s + ue.start))
        elif kind == "bytes":
            value = buf[value[0]:value[1]]
        else:                           # "message"
            value = decode(buf, value[0], value[1], sub, what)
        if repeated:
            msg.setdefault(name, []).append(value)
        else:
            msg[name] = value           # protobuf: the last one wins
        msg.at[name] = tag_at
    for group in schema.oneofs:
        present = [f for f in group if f in msg]
        if len(present) > 1:
            raise DecodeError(msg.at[present[1]], "%s: %s are members of one "
                              "oneof, at most one may be set" % (
                                  path, " and ".join(present)))
    return msg


# ---- what the reader builds -----------------------------------------------

class Slice:
    """One call: a SLICE_BEGIN and its SLICE_END.  ts, dur in integer ns
    (trace clock, BOOTTIME); args merges both events' debug annotations."""
    __slots__ = ("name", "pid", "tid", "ts", "dur", "args", "begin_packet",
                 "end_packet", "track_uuid")

    @property
    def unfinished(self):
        return self.args.get("unfinished") is True

    @property
    def inherited(self):
        return self.args.get("inherited") is True


class Track:
    """A TrackDescriptor as last emitted (names may change; nothing else)."""
    __slots__ = ("uuid", "parent_uuid", "kind", "raw_pid", "pid", "tid",
                 "name", "process_name", "thread_name", "sort_rank",
                 "packet", "checked")

    def where(self):
        if self.kind == "thread":
            return "thread track %d (pid %d tid %d)" % (self.uuid, self.raw_pid,
                                                       self.tid)
        if self.kind == "process":
            return "process track %d (pid %d)" % (self.uuid, self.raw_pid)
        return "track %d" % self.uuid


class ClockDomain:
    """A clock related to BOOTTIME by its latest ClockSnapshot."""
    __slots__ = ("clock_id", "ref_value", "boottime_at_ref", "multiplier",
                 "incremental", "last_value")

    def to_boottime(self, value):
        return self.boottime_at_ref + (value - self.ref_value) * self.multiplier


class SequenceState:
    """What one trusted_packet_sequence_id's packets share.  Interned data
    and defaults are incremental state: valid from a packet with
    SEQ_INCREMENTAL_STATE_CLEARED on; such a packet starts them afresh."""

    def __init__(self, seq_id):
        self.seq_id = seq_id
        self.cleared = False            # had SEQ_INCREMENTAL_STATE_CLEARED
        self.generation = 0             # how many times it was cleared
        self.packets = 0
        self.reset()
        self.clocks = {}                # sequence-scoped clock id -> ClockDomain

    def reset(self):
        self.event_names = {}
        self.annotation_names = {}
        self.categories = {}
        self.default_clock_id = None
        self.default_track_uuid = None


class PftraceError(Exception):
    """The file is not a valid trace: the message says where and why."""


class PfTrace:
    """The calls and metadata of a trace.pftrace.

    calls: Slice objects in the order their SLICE_END came (as trace.json
           writes a call when it returns);
    meta:  dicts shaped like trace.json's metadata events:
           {"name": "process_name" | "thread_name" | "process_sort_index",
            "ph": "M", "pid": .., "tid": .., "args": {...}}.
    """

    def __init__(self, path):
        self.path = path
        self.calls = []
        self.meta = []
        self.errors = []
        self.tracks = {}
        self.sequences = {}
        self.packets = 0
        self.file_bytes = 0
        self.data_bytes = 0
        self.compressed = False
        self.instants = 0
        # names interned, over all sequences and generations
        self.interned = collections.Counter()


# ---- the reader -----------------------------------------------------------

class Reader:
    def __init__(self, trace, data):
        self.t = trace
        self.data = data
        self.global_clocks = {}         # builtin clock id (not BOOTTIME) -> domain
        self.open_slices = {}           # track uuid -> stack of Slice
        self.track_last_ts = {}         # track uuid -> latest event ts
        self.pid_generations = {}       # raw pid -> [process track uuids]
        # for an error's location
        self.packet_index = -1
        self.packet_at = 0

    # -- errors --

    def err(self, msg, at=None):
        errors = self.t.errors
        if len(errors) >= MAX_ERRORS:
            return
        where = "packet #%d (byte %d)" % (self.packet_index, self.packet_at)
        if at is not None and at != self.packet_at:
            where += ", at byte %d" % at
        errors.append("%s: %s" % (where, msg))

    # -- framing --

    def run(self):
        data, end = self.data, len(self.data)
        if end == 0:
            self.t.errors.append("the file holds no packets (it is empty)")
            return
        pos = 0
        while pos < end:
            self.packet_index += 1
            self.packet_at = pos
            try:
                tag, pos = read_varint(data, pos, end)
                if tag != (TRACE_PACKET_FIELD << 3 | WIRE_LEN):
                    raise DecodeError(self.packet_at, (
                        "Trace field %d with wire type %d (%s): a Trace holds only "
                        "`packet` (field 1, length-delimited)" % (
                            tag >> 3, tag & 7, WIRE_NAMES.get(tag & 7, "invalid"))))
                length, pos = read_varint(data, pos, end)
                if length > end - pos:
                    raise DecodeError(self.packet_at, (
                        "packet length %d runs past the end of the file (%d bytes "
                        "left): truncated?" % (length, end - pos)))
            except DecodeError as e:
                # the stream cannot be followed past here
                self.err(e.msg, e.at)
                return
            body_at, pos = pos, pos + length
            self.t.packets += 1
            try:
                packet = decode(data, body_at, pos, TRACE_PACKET, "TracePacket")
            except DecodeError as e:
                self.err(e.msg, e.at)   # this packet only: its length is known
                continue
            self.packet(packet)
        self.finish()

    # -- one packet --

    def packet(self, p):
        seq_id = p.get("trusted_packet_sequence_id", 0)
        flags = p.get("sequence_flags", 0)
        if flags & ~(SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE):
            self.err("sequence_flags = %d has unknown bits" % flags,
                     p.at["sequence_flags"])
        cleared = bool(flags & SEQ_INCREMENTAL_STATE_CLEARED) or \
            p.get("incremental_state_cleared", False)
        uses_state = (flags or "interned_data" in p or
                      "trace_packet_defaults" in p)
        if seq_id == 0 and uses_state:
            self.err("sequence flags, interned data or defaults on a packet "
                     "without trusted_packet_sequence_id")
            return
        seq = self.t.sequences.get(seq_id)
        if seq is None:
            seq = self.t.sequences[seq_id] = SequenceState(seq_id)
        seq.packets += 1
        ctx = PacketContext(p, seq, bool(flags & SEQ_NEEDS_INCREMENTAL_STATE))

        if cleared:
            seq.reset()
            seq.cleared = True
            seq.generation += 1
        if "interned_data" in p:
            self.interned_data(ctx, p["interned_data"])
        if "trace_packet_defaults" in p:
            self.defaults(ctx, p["trace_packet_defaults"])
        if "clock_snapshot" in p:
            # Perfetto reads a clock snapshot packet for its clocks only:
            # its own timestamp is not one of a sequence's timestamps
            self.clock_snapshot(ctx, p["clock_snapshot"])
            return
        ts = self.timestamp(ctx) if "timestamp" in p else None
        if "track_descriptor" in p:
            self.track_descriptor(ctx, p["track_descriptor"])
        if "track_event" in p:
            if ts is None:
                if "timestamp" not in p:
                    self.err("track_event in a packet without a timestamp")
                return
            self.track_event(ctx, p["track_event"], ts)

    def use_state(self, ctx, what, at):
        """A packet relies on its sequence's incremental state (an interned
        iid or a default): the sequence must have been cleared, and the
        packet must say it needs the state (else Perfetto may read it after
        a data loss with the wrong state)."""
        seq = ctx.seq
        if not seq.cleared:
            self.err("%s relies on the incremental state of sequence %d, which "
                     "never had SEQ_INCREMENTAL_STATE_CLEARED" % (what, seq.seq_id), at)
            return False
        if not ctx.needs_state:
            self.err("%s relies on the incremental state of sequence %d but the "
                     "packet lacks SEQ_NEEDS_INCREMENTAL_STATE" % (what, seq.seq_id), at)
            return False
        return True

    # -- incremental state --

    def interned_data(self, ctx, interned):
        seq = ctx.seq
        if not seq.cleared:
            self.err("interned_data on sequence %d before any packet with "
                     "SEQ_INCREMENTAL_STATE_CLEARED" % seq.seq_id, interned.start)
            return
        for field, table in (("event_names", seq.event_names),
                             ("debug_annotation_names", seq.annotation_names),
                             ("event_categories", seq.categories)):
            for entry in interned.get(field, ()):
                iid, name = entry.get("iid"), entry.get("name")
                if iid is None or name is None:
                    self.err("interned_data.%s entry without %s" % (
                        field, "an iid" if iid is None else "a name"), entry.start)
                    continue
                if not name:
                    self.err("interned_data.%s: iid %d has an empty name"
                             % (field, iid), entry.start)
                    continue
                old = table.get(iid)
                if old is not None and old != name:
                    self.err("interned_data.%s: iid %d redefined as %r (it was %r)"
                             % (field, iid, name, old), entry.start)
                    continue
                if old is None:
                    self.t.interned[field] += 1
                table[iid] = name

    def defaults(self, ctx, defaults):
        seq = ctx.seq
        if not seq.cleared:
            self.err("trace_packet_defaults on sequence %d before any packet "
                     "with SEQ_INCREMENTAL_STATE_CLEARED" % seq.seq_id,
                     defaults.start)
            return
        if "timestamp_clock_id" in defaults:
            seq.default_clock_id = defaults["timestamp_clock_id"]
        ted = defaults.get("track_event_defaults")
        if ted is not None and "track_uuid" in ted:
            seq.default_track_uuid = ted["track_uuid"]

    # -- clocks --

    def clock_snapshot(self, ctx, snap):
        primary = snap.get("primary_trace_clock", BOOTTIME)
        if primary != BOOTTIME:
            self.err("primary_trace_clock is %d; calltrace's trace clock is "
                     "BOOTTIME (%d)" % (primary, BOOTTIME), snap.at["primary_trace_clock"])
        clocks = {}
        for c in snap.get("clocks", ()):
            cid, value = c.get("clock_id"), c.get("timestamp")
            if cid is None or value is None:
                self.err("ClockSnapshot clock without %s" % (
                    "a clock_id" if cid is None else "a timestamp"), c.start)
                continue
            if cid in clocks:
                self.err("ClockSnapshot lists clock %d twice" % cid, c.start)
                continue
            clocks[cid] = c
        others = [cid for cid in clocks if cid != BOOTTIME]
        if BOOTTIME not in clocks:
            if others:
                self.err("ClockSnapshot has no BOOTTIME clock (%d) to relate clock%s "
                         "%s to" % (BOOTTIME, "s" if len(others) > 1 else "",
                                    ", ".join(map(str, sorted(others)))), snap.start)
            return
        if clocks[BOOTTIME].get("unit_multiplier_ns", 1) != 1 or \
                clocks[BOOTTIME].get("is_incremental"):
            self.err("the BOOTTIME clock of a ClockSnapshot must be absolute ns",
                     clocks[BOOTTIME].start)
            return
        boottime = clocks[BOOTTIME]["timestamp"]
        for cid in others:
            c = clocks[cid]
            if FIRST_SEQUENCE_CLOCK <= cid <= LAST_SEQUENCE_CLOCK:
                if ctx.seq.seq_id == 0:
                    self.err("sequence-scoped clock %d in a ClockSnapshot without "
                             "trusted_packet_sequence_id" % cid, c.start)
                    continue
                table = ctx.seq.clocks
            elif FIRST_BUILTIN_CLOCK <= cid <= LAST_BUILTIN_CLOCK:
                table = self.global_clocks
                if c.get("is_incremental"):
                    self.err("builtin clock %d is_incremental: only sequence-scoped "
                             "clocks (64-127) may be" % cid, c.start)
                    continue
            else:
                self.err("clock id %d is reserved (ids are 1-63 builtin, 64-127 "
                         "sequence-scoped)" % cid, c.start)
                continue
            multiplier = c.get("unit_multiplier_ns", 1)
            if multiplier == 0:
                self.err("clock %d: unit_multiplier_ns is 0" % cid, c.start)
                continue
            old = table.get(cid)
            if old is not None and old.multiplier != multiplier:
                self.err("clock %d: unit_multiplier_ns %d, an earlier snapshot said "
                         "%d (all snapshots of a clock must use one unit)"
                         % (cid, multiplier, old.multiplier), c.start)
                continue
            dom = ClockDomain()
            dom.clock_id = cid
            dom.ref_value = c["timestamp"]
            dom.boottime_at_ref = boottime
            dom.multiplier = multiplier
            dom.incremental = bool(c.get("is_incremental"))
            # the first timestamp after a snapshot is relative to its value
            dom.last_value = c["timestamp"]
            table[cid] = dom

    def timestamp(self, ctx):
        """The packet's timestamp on the trace clock (BOOTTIME ns), or None
        after an error."""
        p, seq = ctx.packet, ctx.seq
        value = p["timestamp"]
        if "timestamp_clock_id" in p:
            cid = p["timestamp_clock_id"]
        elif seq.default_clock_id is not None:
            if not self.use_state(ctx, "the timestamp's default clock", p.at["timestamp"]):
                return None
            cid = seq.default_clock_id
        else:
            cid = BOOTTIME
        if cid == BOOTTIME:
            return value
        if FIRST_SEQUENCE_CLOCK <= cid <= LAST_SEQUENCE_CLOCK:
            dom = seq.clocks.get(cid)
        else:
            dom = self.global_clocks.get(cid)
        if dom is None:
            self.err("timestamp on clock %d, which no earlier ClockSnapshot%s "
                     "relates to BOOTTIME" % (
                         cid, " of sequence %d" % seq.seq_id
                         if cid >= FIRST_SEQUENCE_CLOCK else ""), p.at["timestamp"])
            return None
        if dom.incremental:
            value += dom.last_value
            dom.last_value = value
        ts = dom.to_boottime(value)
        if ts < 0:
            self.err("timestamp %d on clock %d is before BOOTTIME 0" % (value, cid),
                     p.at["timestamp"])
            return None
        return ts

    # -- tracks --

    def track_descriptor(self, ctx, d):
        uuid = d.get("uuid")
        if uuid is None:
            self.err("TrackDescriptor without a uuid", d.start)
            return
        proc, thread = d.get("process"), d.get("thread")
        if proc is not None and thread is not None:
            self.err("track %d has both a process and a thread descriptor" % uuid,
                     d.start)
            return
        new = Track()
        new.uuid = uuid
        new.parent_uuid = d.get("parent_uuid")
        new.name = d.get("name")
        new.sort_rank = d.get("sibling_order_rank")
        new.process_name = new.thread_name = None
        new.tid = None
        new.packet = self.packet_index
        new.checked = False
        if proc is not None:
            new.kind = "process"
            new.raw_pid = proc.get("pid")
            new.process_name = proc.get("process_name")
            if new.raw_pid is None:
                self.err("process track %d: ProcessDescriptor without a pid" % uuid,
                         proc.start)
                return
            if new.process_name == "":
                self.err("process track %d: empty process_name" % uuid,
                         proc.at["process_name"])
        elif thread is not None:
            new.kind = "thread"
            new.raw_pid, new.tid = thread.get("pid"), thread.get("tid")
            new.thread_name = thread.get("thread_name")
            if new.raw_pid is None or new.tid is None:
                self.err("thread track %d: ThreadDescriptor without a %s" % (
                    uuid, "pid" if new.raw_pid is None else "tid"), thread.start)
                return
            if new.thread_name == "":
                self.err("thread track %d: empty thread_name" % uuid,
                         thread.at["thread_name"])
        else:
            new.kind = "plain"
            new.raw_pid = None
        old = self.t.tracks.get(uuid)
        if old is not None:
            # re-emitted: only the names may change (exec renames a process)
            same = (old.kind, old.raw_pid, old.tid, old.parent_uuid) == \
                (new.kind, new.raw_pid, new.tid, new.parent_uuid)
            if not same:
                self.err("track %d re-emitted as a different track: %s then %s" % (
                    uuid, describe_track(old), describe_track(new)), d.start)
                return
            new.pid, new.checked = old.pid, old.checked
        elif new.kind == "process":
            # a second process track for a pid: the kernel reused the pid
            owners = self.pid_generations.setdefault(new.raw_pid, [])
            new.pid = new.raw_pid + len(owners) * PID_SPACE
            owners.append(uuid)
        else:
            new.pid = None              # a thread's comes from its process track
        self.t.tracks[uuid] = new
        if new.kind == "process":
            if new.process_name is not None and (
                    old is None or old.process_name != new.process_name):
                self.t.meta.append({"name": "process_name", "ph": "M",
                                    "pid": new.pid, "tid": new.pid,
                                    "args": {"name": new.process_name}})
            if new.sort_rank is not None and (old is None or old.sort_rank != new.sort_rank):
                self.t.meta.append({"name": "process_sort_index", "ph": "M",
                                    "pid": new.pid, "tid": new.pid,
                                    "args": {"sort_index": new.sort_rank}})
        elif new.kind == "thread" and new.thread_name is not None and (
                old is None or old.thread_name != new.thread_name):
            # its pid is known once its process track is: see thread_identity
            self.t.meta.append({"name": "thread_name", "ph": "M",
                                "pid": None, "tid": new.tid, "track": uuid,
                                "args": {"name": new.thread_name}})

    def thread_identity(self, track, at):
        """A thread track's (pid, tid), its parent being its process track;
        None (after one error per track) if the tracks do not say."""
        parent = self.t.tracks.get(track.parent_uuid) \
            if track.parent_uuid is not None else None
        problem = None
        if track.parent_uuid is None:
            problem = "has no parent_uuid (it must be its process's track)"
        elif parent is None:
            problem = "has parent_uuid %d, which no TrackDescriptor defines" \
                % track.parent_uuid
        elif parent.kind != "process":
            problem = "has parent %s, which is not a process track" % parent.where()
        elif parent.raw_pid != track.raw_pid:
            problem = "says pid %d but its parent is %s" % (track.raw_pid,
                                                            parent.where())
        if problem:
            if not track.checked:
                self.err("%s %s" % (track.where(), problem), at)
            track.checked = True
            return None
        track.checked = True
        track.pid = parent.pid
        return track.pid, track.tid

    # -- events --

    def resolve_name(self, ctx, msg, table, what):
        """The name of an event or annotation: its plain `name` or its
        interned `name_iid`.  None (after an error) if it has none usable."""
        if "name" in msg:
            name = msg["name"]
            if not name:
                self.err("%s has an empty name" % what, msg.at["name"])
                return None
            return name
        if "name_iid" not in msg:
            return None
        iid, at = msg["name_iid"], msg.at["name_iid"]
        if not self.use_state(ctx, "%s's name_iid %d" % (what, iid), at):
            return None
        name = table(ctx.seq).get(iid)
        if name is None:
            self.err("%s uses name_iid %d, not defined on sequence %d (since its "
                     "last SEQ_INCREMENTAL_STATE_CLEARED)" % (what, iid, ctx.seq.seq_id),
                     at)
        return name

    def annotations(self, ctx, ev, what):
        args = {}
        for a in ev.get("debug_annotations", ()):
            if "name" not in a and "name_iid" not in a:
                self.err("%s: debug annotation without a name" % what, a.start)
                continue
            key = self.resolve_name(ctx, a, lambda s: s.annotation_names,
                                    "%s's debug annotation" % what)
            if key is None:
                continue
            present = [f for f in DEBUG_ANNOTATION_VALUES if f in a]
            if not present:
                self.err("%s: debug annotation %r has no value" % (what, key), a.start)
                continue
            value = a[present[0]]
            if isinstance(value, bytes):
                value = "<nested %d bytes>" % len(value)
            if key in MARKS and value is not True:
                self.err("%s: debug annotation %r is %r, expected bool true"
                         % (what, key, value), a.start)
                continue
            if key in args:
                self.err("%s: debug annotation %r given twice" % (what, key), a.start)
                continue
            args[key] = value
        return args

    def track_event(self, ctx, ev, ts):
        p, seq = ctx.packet, ctx.seq
        etype = ev.get("type")
        if etype not in (TYPE_SLICE_BEGIN, TYPE_SLICE_END, TYPE_INSTANT):
            self.err("track_event type is %s, expected SLICE_BEGIN, SLICE_END or "
                     "INSTANT" % ("missing" if etype is None else
                                  TYPE_NAMES.get(etype, str(etype))),
                     ev.at.get("type", ev.start))
            return
        what = TYPE_NAMES[etype][5:]
        if "track_uuid" in ev:
            uuid = ev["track_uuid"]
        elif seq.default_track_uuid is not None:
            if not self.use_state(ctx, "%s's default track_uuid" % what, ev.start):
                return
            uuid = seq.default_track_uuid
        else:
            self.err("%s has no track_uuid and its sequence no default one" % what,
                     ev.start)
            return
        track = self.t.tracks.get(uuid)
        if track is None:
            self.err("%s on track_uuid %d, which no earlier TrackDescriptor "
                     "defines" % (what, uuid), ev.at.get("track_uuid", ev.start))
            return
        if track.kind != "thread":
            self.err("%s on %s: calls belong on thread tracks" % (what, track.where()),
                     ev.at.get("track_uuid", ev.start))
            return
        ident = self.thread_identity(track, ev.at.get("track_uuid", ev.start))
        if ident is None:
            return
        last = self.track_last_ts.get(uuid)
        if last is not None and ts < last:
            self.err("%s at ts %d ns on %s, before the track's previous event at "
                     "%d ns: timestamps go backwards" % (what, ts, track.where(), last),
                     p.at["timestamp"])
            return
        self.track_last_ts[uuid] = ts
        name = self.resolve_name(ctx, ev, lambda s: s.event_names, what)
        if name is None and etype != TYPE_SLICE_END:
            if "name" not in ev and "name_iid" not in ev:
                self.err("%s without a name" % what, ev.start)
            return
        args = self.annotations(ctx, ev, what)
        if etype == TYPE_INSTANT:
            self.t.instants += 1
            return
        stack = self.open_slices.setdefault(uuid, [])
        if etype == TYPE_SLICE_BEGIN:
            s = Slice()
            s.name, (s.pid, s.tid), s.ts, s.args = name, ident, ts, args
            s.begin_packet, s.track_uuid = self.packet_index, uuid
            stack.append(s)
            return
        if not stack:
            self.err("SLICE_END on %s, which has no open slice" % track.where(),
                     ev.start)
            return
        s = stack.pop()
        s.dur = ts - s.ts
        s.end_packet = self.packet_index
        for key, value in args.items():
            if key in s.args:
                self.err("SLICE_END of %r (begun in packet #%d): debug annotation %r "
                         "is on both its BEGIN and its END" % (s.name, s.begin_packet, key),
                         ev.start)
                continue
            s.args[key] = value
        self.t.calls.append(s)

    def finish(self):
        self.packet_index = self.t.packets      # "past the last packet"
        self.packet_at = len(self.data)
        for uuid, stack in self.open_slices.items():
            for s in stack:
                self.err("slice %r begun in packet #%d on %s never ends (an "
                         "unfinished call still needs its SLICE_END)"
                         % (s.name, s.begin_packet, self.t.tracks[uuid].where()))
        for track in self.t.tracks.values():
            if track.kind == "thread" and not track.checked:
                self.thread_identity(track, None)
        # thread_name metadata takes its pid from the process track
        for m in self.t.meta:
            if m["name"] == "thread_name":
                track = self.t.tracks[m.pop("track")]
                m["pid"] = track.pid
        self.t.meta = [m for m in self.t.meta if m["pid"] is not None]


class PacketContext:
    __slots__ = ("packet", "seq", "needs_state")

    def __init__(self, packet, seq, needs_state):
        self.packet = packet
        self.seq = seq
        self.needs_state = needs_state


def describe_track(t):
    if t.kind == "thread":
        return "thread pid %s tid %s parent %s" % (t.raw_pid, t.tid, t.parent_uuid)
    if t.kind == "process":
        return "process pid %s parent %s" % (t.raw_pid, t.parent_uuid)
    return "plain track parent %s" % t.parent_uuid


def is_pftrace(data, path=""):
    """Whether bytes (already gunzipped) or a file name look like a
    trace.pftrace: its name says so, or its first byte is the tag of
    Trace.packet (field 1, length-delimited: 0x0a) -- a trace.json starts
    with "{" or white space."""
    name = path[:-3] if path.endswith(".gz") else path
    return name.endswith(".pftrace") or data[:1] == b"\x0a"


def gunzip(raw, path):
    """raw, gunzipped if it starts with gzip's magic.  -> (data, compressed)"""
    if raw[:2] != GZIP_MAGIC:
        return raw, False
    try:
        return gzip.decompress(raw), True
    except (OSError, EOFError, zlib.error) as e:
        raise PftraceError("%s: not a valid gzip stream: %s" % (path, e))


def parse(raw, path="<bytes>"):
    """Reads a trace from bytes (gzip-compressed or not) -> PfTrace; raises
    PftraceError listing the problems if it is not valid."""
    data, compressed = gunzip(raw, path)
    return parse_gunzipped(data, path, compressed, len(raw))


def parse_gunzipped(data, path, compressed=False, file_bytes=None):
    """parse() for bytes already gunzipped (compressed, file_bytes: what the
    file was, for stats and messages)."""
    t = PfTrace(path)
    t.file_bytes = len(data) if file_bytes is None else file_bytes
    t.compressed = compressed
    t.data_bytes = len(data)
    Reader(t, data).run()
    if t.errors:
        shown = t.errors[:MAX_SHOWN]
        more = len(t.errors) - len(shown)
        raise PftraceError("%s: invalid trace.pftrace (%d problem%s%s):\n  %s%s" % (
            path, len(t.errors), "" if len(t.errors) == 1 else "s",
            "; byte offsets are into the gunzipped data" if t.compressed else "",
            "\n  ".join(shown), "\n  ... and %d more" % more if more else ""))
    return t


def read_trace(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise PftraceError("cannot read %s: %s" % (path, e.strerror))
    return parse(raw, path)


# ---- standalone use -------------------------------------------------------

def calls_with_depth(t):
    """-> [(call, depth)] per thread (sorted by pid, tid), in time order;
    depth = number of calls of the thread enclosing it."""
    by_thread = collections.defaultdict(list)
    for order, c in enumerate(t.calls):
        by_thread[(c.pid, c.tid)].append((c.ts, -c.dur, order, c))
    out = []
    for key in sorted(by_thread):
        stack = []                      # end times of the enclosing calls
        for ts, _, _, c in sorted(by_thread[key], key=lambda x: x[:3]):
            # as check_trace.py nests: c is inside a call it does not outlast
            while stack and ts + c.dur > stack[-1]:
                stack.pop()
            out.append((c, len(stack)))
            stack.append(c.ts + c.dur)
    return out


def format_value(v):
    if v is True:
        return "true"
    if v is False:
        return "false"
    return str(v)


def cmd_dump(t):
    for c, depth in calls_with_depth(t):
        args = " ".join("%s=%s" % (k, format_value(v)) for k, v in c.args.items())
        print("%d %d %d %d %d %s%s" % (c.pid, c.tid, depth, c.ts, c.dur, c.name,
                                       " " + args if args else ""))


def cmd_stats(t):
    kinds = collections.Counter(tr.kind for tr in t.tracks.values())
    event_names = t.interned["event_names"]
    annotation_names = t.interned["debug_annotation_names"]
    calls = len(t.calls)
    print("packets %d" % t.packets)
    print("bytes %d" % t.file_bytes)
    if t.compressed:
        print("bytes_uncompressed %d" % t.data_bytes)
    print("calls %d" % calls)
    print("bytes_per_call %s" % ("%.2f" % (t.file_bytes / calls) if calls else "-"))
    if t.compressed:
        print("uncompressed_bytes_per_call %s" % (
            "%.2f" % (t.data_bytes / calls) if calls else "-"))
    print("sequences %d" % len(t.sequences))
    print("tracks %d (process %d, thread %d, other %d)" % (
        len(t.tracks), kinds["process"], kinds["thread"], kinds["plain"]))
    # a name interned again after SEQ_INCREMENTAL_STATE_CLEARED counts again
    print("interned_names %d (event %d, annotation %d)" % (
        event_names + annotation_names, event_names, annotation_names))


def main(argv):
    if len(argv) != 2 or argv[0] not in ("dump", "stats"):
        sys.stderr.write("usage: pftrace.py dump|stats FILE\n")
        return 2
    try:
        t = read_trace(argv[1])
        (cmd_dump if argv[0] == "dump" else cmd_stats)(t)
    except PftraceError as e:
        sys.stderr.write("pftrace: %s\n" % e)
        return 1
    except BrokenPipeError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
