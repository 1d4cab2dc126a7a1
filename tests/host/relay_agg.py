#!/usr/bin/env python3
"""A stand-in aggregator for tests/host/test_relay.py: accepts memtrackd
relay connections (protocol: user/net/relay_proto.h), checks every frame
strictly, acknowledges each DATA at once, and prints one JSON line per
event on stdout: listening, hello, data (seq, kind, body: text, or hex for
kind 2, module records), heartbeat, acked, error.  It remembers, per
session, the next seq it wants, for WELCOME; a new instance knows nothing
(WELCOME 0).  SIGTERM ends it at once, but never between sending an ACK
and printing its "acked" line; SIGKILL ends it anywhere.

usage: relay_agg.py ADDR PORT [MODE]
MODE: ok (default); noack (never ACK); garbage (random bytes instead of
WELCOME); future (WELCOME a seq never sent); badack (ACK a seq never sent);
truncated (half a WELCOME, then close)."""
import json
import os
import signal
import socket
import struct
import sys

from mtdnet import ACK, DATA, HEARTBEAT, HELLO, MAGIC, WELCOME, frame, recv_all


def out(**kw):
    print(json.dumps(kw), flush=True)


# SIGTERM: exit at once, unless between sending an ACK and printing it
stopping = acking = False


def stop(signum, frame):
    global stopping
    stopping = True
    if not acking:
        sys.exit(0)


def read_frame(c):
    magic, t, pad1, pad2, pad3, n = struct.unpack(">IBBBBI", recv_all(c, 12))
    if magic != MAGIC or pad1 or pad2 or pad3 or n > (1 << 20):
        raise ValueError(f"bad header {magic:#x} {t} {n}")
    return t, recv_all(c, n)


def serve(c, mode, wants):
    t, body = read_frame(c)
    if t != HELLO or len(body) < 18:
        raise ValueError("no HELLO")
    session, oldest, nlen = struct.unpack(">QQH", body[:18])
    node = body[18:18 + nlen].decode()
    if len(body) != 18 + nlen:
        raise ValueError("HELLO length")
    out(ev="hello", session=session, oldest=oldest, node=node)
    want = wants.get(session, 0)
    if mode == "garbage":
        c.sendall(os.urandom(40))
        return
    if mode == "truncated":
        c.sendall(frame(WELCOME, struct.pack(">Q", want))[:7])
        return
    if mode == "future":
        c.sendall(frame(WELCOME, struct.pack(">Q", 1 << 40)))
        c.recv(1)
        return
    c.sendall(frame(WELCOME, struct.pack(">Q", want)))
    global acking
    while True:
        t, body = read_frame(c)
        if t == HEARTBEAT:
            if body:
                raise ValueError("heartbeat body")
            out(ev="heartbeat")
            continue
        if t != DATA or len(body) < 9:
            raise ValueError(f"frame type {t}")
        seq, kind = struct.unpack(">QB", body[:9])
        # kind 2: binary module records, as hex
        payload = body[9:].hex() if kind == 2 else body[9:].decode(errors="replace")
        out(ev="data", seq=seq, kind=kind, body=payload)
        if mode == "noack":
            continue
        ack = seq if mode != "badack" else seq + 1000
        acking = True
        c.sendall(frame(ACK, struct.pack(">Q", ack)))
        wants[session] = seq + 1
        out(ev="acked", seq=seq)
        acking = False
        if stopping:
            sys.exit(0)


def main():
    signal.signal(signal.SIGTERM, stop)
    addr, port = sys.argv[1], int(sys.argv[2])
    mode = sys.argv[3] if len(sys.argv) > 3 else "ok"
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen()
    out(ev="listening")
    wants = {}
    while True:
        c, _ = s.accept()
        try:
            serve(c, mode, wants)
        except (EOFError, ValueError, OSError) as e:
            out(ev="error", what=str(e))
        finally:
            c.close()


if __name__ == "__main__":
    main()
