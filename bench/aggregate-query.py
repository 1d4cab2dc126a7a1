#!/usr/bin/env python3
"""Query latency against a loaded aggregator, for bench/aggregate: one
connection (HELLO with session 0, as memtrack-query does), each query sent
ROUNDS times in turn with a pause between, the time from sending QUERY to
the whole RESULT read.  Prints p50/p99 per query and the row counts.

usage: aggregate-query.py PORT ROUNDS PAUSE_S"""
import socket
import struct
import sys
import time

MAGIC = 0x4D545231
HELLO, WELCOME, QUERY, RESULT = 1, 2, 6, 7
QUERIES = ["sum rss by comm", "top 10", "nodes"]


def frame(t, body):
    return struct.pack(">IB3xI", MAGIC, t, len(body)) + body


def recv_all(s, n):
    b = bytearray()
    while len(b) < n:
        x = s.recv(min(n - len(b), 1 << 20))
        if not x:
            raise EOFError("closed")
        b += x
    return bytes(b)


def read_frame(s):
    _, t, n = struct.unpack(">IB3xI", recv_all(s, 12))
    return t, recv_all(s, n)


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def main(argv):
    port, rounds, pause = int(argv[1]), int(argv[2]), float(argv[3])
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    name = b"bench"
    s.sendall(frame(HELLO, struct.pack(">QQH", 0, 0, len(name)) + name))
    t, _ = read_frame(s)
    assert t == WELCOME
    lat = {q: [] for q in QUERIES}
    rows = {}
    for _ in range(rounds):
        for q in QUERIES:
            t0 = time.perf_counter()
            s.sendall(frame(QUERY, q.encode()))
            t, body = read_frame(s)
            lat[q].append((time.perf_counter() - t0) * 1000)
            if t != RESULT or body[0]:
                raise SystemExit(f"{q}: {body[2:200]!r}")
            rows[q] = body[2:].count(b"\n") - 1
            time.sleep(pause)
    for q in QUERIES:
        print(f"query {q!r:20} p50 {pct(lat[q], 50):7.1f} ms  p99 {pct(lat[q], 99):7.1f} ms"
              f"  max {max(lat[q]):7.1f} ms  ({rounds} runs, {rows[q]} rows)")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
