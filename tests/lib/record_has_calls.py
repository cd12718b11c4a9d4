#!/usr/bin/env python3
"""record_has_calls.py RECORD -- exit 0 when the binary record (RUN/events.ctr, possibly still
being written) already holds a call: a REC_ENTER, REC_EXIT or REC_CALLS record
(src/record/format.h). Reads only whole records; exit 1 otherwise. For the attach tests, which
stop calltrace once it records calls: the size of the file says little, since calls are packed
a few bytes each behind the function table."""
import struct
import sys

HEADER = 64
CALL_TYPES = {4, 5, 12}  # REC_ENTER, REC_EXIT, REC_CALLS


def main(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return 1
    pos = HEADER
    while pos + 8 <= len(data):
        rtype, _flags, size = struct.unpack_from("<BBH", data, pos)
        if size < 8 or size % 8 or pos + size > len(data):
            return 1
        if rtype in CALL_TYPES:
            return 0
        pos += size
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
