#!/usr/bin/env python3
"""probe.py -- raw HTTP requests to calltrace's trace server, for the view tests.

Paths are sent byte for byte (no normalisation, unlike browsers and urllib), so
traversal attempts reach the server as written.

  probe.py status PORT PATH [METHOD [HOST]]   print the status code
  probe.py get PORT PATH OUTFILE              save the body, print the status code
  probe.py header PORT PATH NAME              print the value of response header NAME
                                              ("-" when absent)
  probe.py raw PORT TEXT                      send TEXT (Python escapes allowed, e.g.
                                              \\r\\n) and print the status line, or
                                              "closed" if the server hung up
  probe.py abort PORT PATH NBYTES             request PATH, read NBYTES, reset the
                                              connection; print "aborted"
  probe.py silent PORT                        connect, send half a request line, close
  probe.py flood PORT N PATH OUTFILE          hold N connections that send nothing, then
                                              GET PATH on another one into OUTFILE: print
                                              "STATUS SECONDS CONNECTED" (the fetch's status
                                              and time, -1 when it failed; how many of the N
                                              connected), then wait up to 30 s for the
                                              server to drop the idle ones: print "dropped
                                              K SECONDS" (how many, and when the last went)
  probe.py kept PORT PATH                     GET PATH on a kept-alive connection, print the
                                              status, then "closed" or "open": whether the
                                              server closed the connection within 2 s
  probe.py expect PORT < LINES                each line "WANT PATH [METHOD [HOST]]": print
                                              every request whose status is not WANT, exit 1
                                              if there was one
"""
import select
import socket
import struct
import sys
import time

TIMEOUT = 10


def connect(port):
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=TIMEOUT)
    return s


def request(port, path, method="GET", host=None):
    host = host or "127.0.0.1:%s" % port
    s = connect(port)
    s.sendall(("%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
               % (method, path, host)).encode("latin-1"))
    data = b""
    while True:
        chunk = s.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, body


def idle_connections(port, n):
    """n sockets connecting without blocking; those connected within 5 s."""
    pending = []
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", int(port)))
        pending.append(s)
    connected, deadline = [], time.monotonic() + 5
    while pending and time.monotonic() < deadline:
        _, ready, _ = select.select([], pending, [], 0.1)
        for s in ready:
            pending.remove(s)
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                connected.append(s)
            else:
                s.close()
    for s in pending:
        s.close()
    return connected


def wait_dropped(conns, limit):
    """Waits until the server closed every connection (or limit seconds): how many it
    closed, and when the last one went."""
    start, last, live = time.monotonic(), 0.0, list(conns)
    while live and time.monotonic() - start < limit:
        readable, _, _ = select.select(live, [], [], 0.2)
        for s in readable:
            try:
                data = s.recv(4096)
            except (ConnectionResetError, BrokenPipeError):
                data = b""
            if not data:
                live.remove(s)
                last = time.monotonic() - start
    for s in conns:
        s.close()
    return len(conns) - len(live), last


def flood(port, n, path, outfile):
    idle = idle_connections(port, n)
    start = time.monotonic()
    try:
        status, _, body = request(port, path)
        with open(outfile, "wb") as f:
            f.write(body)
    except OSError:
        status = -1
    took = time.monotonic() - start
    print("%d %.2f %d" % (status, took, len(idle)))
    dropped, last = wait_dropped(idle, 30)
    print("dropped %d %.1f" % (dropped, last))


def kept(port, path):
    s = connect(port)
    s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n" % (path, port)).encode())
    f = s.makefile("rb")
    status = f.readline().split()[1].decode()
    length = 0
    for line in iter(f.readline, b"\r\n"):
        k, _, v = line.decode("latin-1").partition(":")
        if k.strip().lower() == "content-length":
            length = int(v)
    f.read(length)
    print(status)
    s.settimeout(2)
    try:
        print("closed" if not s.recv(1) else "open")
    except socket.timeout:
        print("open")
    except ConnectionResetError:
        print("closed")
    s.close()


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    cmd, port = argv[1], argv[2]
    if cmd == "status":
        method = argv[4] if len(argv) > 4 else "GET"
        host = argv[5] if len(argv) > 5 else None
        print(request(port, argv[3], method, host)[0])
    elif cmd == "get":
        status, _, body = request(port, argv[3])
        with open(argv[4], "wb") as f:
            f.write(body)
        print(status)
    elif cmd == "header":
        print(request(port, argv[3])[1].get(argv[4].lower(), "-"))
    elif cmd == "expect":
        bad = 0
        for line in sys.stdin:
            f = line.split()
            if not f:
                continue
            got = request(port, f[1], *f[2:4])[0]
            if str(got) != f[0]:
                print("%s answered %s, expected %s" % (" ".join(f[1:]), got, f[0]))
                bad = 1
        sys.exit(bad)
    elif cmd == "raw":
        s = connect(port)
        s.settimeout(2)  # the server may wait for the rest of a request that never comes
        s.sendall(argv[3].encode("latin-1").decode("unicode_escape").encode("latin-1"))
        try:
            line = s.makefile("rb").readline().decode("latin-1").strip()
        except (ConnectionResetError, socket.timeout):
            line = ""
        s.close()
        print(line or "closed")
    elif cmd == "abort":
        s = connect(port)
        s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n" % (argv[3], port)).encode())
        got = 0
        while got < int(argv[4]):
            chunk = s.recv(int(argv[4]) - got)
            if not chunk:
                break
            got += len(chunk)
        # SO_LINGER 0: close with a reset, as a browser tab closed mid-download does
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
        print("aborted")
    elif cmd == "flood":
        flood(port, int(argv[3]), argv[4], argv[5])
    elif cmd == "kept":
        kept(port, argv[3])
    elif cmd == "silent":
        s = connect(port)
        s.sendall(b"GET /tra")
        s.close()
        print("closed")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
