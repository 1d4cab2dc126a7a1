"""What the host tests of memtrackd's network side share, written once
(test_cluster.py, test_remote_write.py, test_relay.py, test_relay_auth.py,
test_memtrackd.py; relay_agg.py for the frames): waiting for a condition,
a child's stdout read line by line as it comes, config files, memtrackd
refusing a config, a relaying node, memtrackd --aggregate,
tests/host/cluster_node.py run in a node's namespaces, the namespaces of
a hub and its nodes, and the relay protocol's frames
(user/net/relay_proto.h).

Imported from tests/host (a test's own folder, or sys.path[0] of a script
run there); it puts tests/guest and tests/lib on sys.path itself."""
import json
import os
import queue
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
for _d in ("guest", "lib"):
    _p = os.path.join(HERE, "..", _d)
    if _p not in sys.path:
        sys.path.append(_p)
from mtdlib import DAEMON, Daemon, parse  # noqa: E402
from harness import Netns, check  # noqa: E402

MiB = 1 << 20
# The workload of the three-node suites (test_cluster.py,
# test_remote_write.py): node i runs copies of memload of these sizes, all
# different (a top N has one right order).
SIZES = [[12 * MiB, 20 * MiB], [14 * MiB, 22 * MiB, 30 * MiB],
         [16 * MiB, 18 * MiB, 24 * MiB, 28 * MiB]]

# ---- waiting --------------------------------------------------------------


def wait_for(pred, timeout, what, every=0.1):
    """pred()'s first true value, asked every `every` s; AssertionError
    "not within TIMEOUT s: WHAT" if there is none within timeout s (what
    may be a function: what() says it then, as things are at the end)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(every)
    raise AssertionError(f"not within {timeout} s: {what() if callable(what) else what}")


class Output:
    """A child process whose stdout is read line by line as it comes (a
    thread): every line, as parse() makes it, in self.lines, each also
    queued for first().  Stopped (stop()) on leaving a with block."""

    def __init__(self, args, parse=str, **popen):
        self.p = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, **popen)
        self.lines = []
        self.q = queue.Queue()
        self.reader = threading.Thread(target=self._read, args=(parse,), daemon=True)
        self.reader.start()

    def _read(self, parse):
        for line in self.p.stdout:
            x = parse(line)
            self.lines.append(x)
            self.q.put(x)

    def first(self, pred, timeout):
        """The first line from now on for which pred is true; None if none
        comes within timeout s."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                x = self.q.get(timeout=max(0.01, deadline - time.time()))
            except queue.Empty:
                break
            if pred(x):
                return x
        return None

    def alive(self):
        return self.p.poll() is None

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


# ---- config files ---------------------------------------------------------

def write_conf(path, sections):
    """An INI file of memtrackd's: sections {name: {key: value}}, each
    "[name]" then "key = value" lines, in order."""
    with open(path, "w") as f:
        for name, keys in sections.items():
            f.write(f"[{name}]\n")
            for k, v in keys.items():
                f.write(f"{k} = {v}\n")


def refused_conf(text, *args, ns=None, name="CONF"):
    """memtrackd -f -c CONF ARGS (in namespace ns), CONF a file of text of
    its own, removed after: (exit status, stderr with CONF's path as name)."""
    d = tempfile.mkdtemp(prefix="mtdconf.")
    conf = os.path.join(d, "memtrackd.conf")
    with open(conf, "w") as f:
        f.write(text)
    try:
        cmd = [DAEMON, "-f", "-c", conf, *args]
        r = subprocess.run(Netns.cmd(ns, *cmd) if ns else cmd, capture_output=True,
                           text=True, timeout=30)
        return r.returncode, r.stderr.replace(conf, name)
    finally:
        shutil.rmtree(d)


# ---- daemons --------------------------------------------------------------

def relay_node(ns, aggregator, **keys):
    """memtrackd (mtdlib.Daemon) in namespace ns: node-a, /proc mode, a
    sample every 200 ms, relaying to aggregator (HOST:PORT); keys: other
    [memtrackd] keys, or other values of those."""
    keys = {"source": "proc", "sample_interval_ms": 200, "node": "node-a", **keys}
    return Daemon(netns=ns, aggregators=aggregator, **keys)


class Aggregator:
    """memtrackd -f --aggregate in namespace ns (None: this one) with these
    [aggregate] keys, and [memtrackd] ones (auth) if any; its stderr kept
    (stderr()); stopped on leaving a with block."""

    def __init__(self, ns, keys, memtrackd=None):
        self.dir = tempfile.mkdtemp(prefix="mtdagg.")
        self.conf = os.path.join(self.dir, "agg.conf")
        write_conf(self.conf, {**({"memtrackd": memtrackd} if memtrackd else {}),
                               "aggregate": keys})
        self.log = os.path.join(self.dir, "stderr")
        cmd = [DAEMON, "-f", "--aggregate", "-c", self.conf]
        with open(self.log, "w") as err:
            self.p = subprocess.Popen(Netns.cmd(ns, *cmd) if ns else cmd,
                                      stdout=subprocess.DEVNULL, stderr=err)

    def stderr(self):
        with open(self.log) as f:
            return f.read()

    def alive(self):
        return self.p.poll() is None

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            self.p.wait(timeout=30)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class ClusterNode:
    """tests/host/cluster_node.py in node namespace ns (None: this one) and
    a pid namespace of its own: memtrackd with the config conf (already
    written) serving on port, and copies of memload named comm, one of
    each size; cmd() sends its commands and reads their JSON answers."""

    def __init__(self, ns, name, conf, port, comm, sizes):
        self.name, self.conf = name, conf
        cmd = ["unshare", "--pid", "--fork", "--mount-proc", sys.executable,
               os.path.join(HERE, "cluster_node.py"), conf, str(port), comm,
               ",".join(map(str, sizes))]
        self.p = subprocess.Popen(Netns.cmd(ns, *cmd) if ns else cmd,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  bufsize=1)
        self.ready = self.cmd(None)
        check(self.ready.get("ev") == "ready", f"{self.name}: {self.ready}")

    def cmd(self, c):
        """Command c (None: none, only the next answer), its answer."""
        if c:
            self.p.stdin.write(c + "\n")
            self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name}: runner died: {self.stderr()}")
        return json.loads(line)

    def stderr(self):
        try:
            with open(self.conf + ".stderr") as f:
                return f.read()
        except OSError:
            return ""

    def metrics(self):
        return parse(self.cmd("metrics")["text"])

    def close(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.write("quit\n")
                self.p.stdin.flush()
                self.p.wait(timeout=20)
            except (OSError, subprocess.TimeoutExpired):
                self.p.kill()
                self.p.wait()


# ---- namespaces -----------------------------------------------------------

def star(netns, hub, nodes):
    """Namespaces of netns (a harness.Netns): hub, and each of nodes, a
    (namespace, (interface, address), (hub's interface, hub's address)),
    joined to the hub by a veth pair."""
    netns.add(hub)
    for ns, (nif, nip), (hif, hip) in nodes:
        netns.add(ns)
        netns.veth((ns, nif, nip), (hub, hif, hip))


# ---- the relay protocol's frames (user/net/relay_proto.h) -----------------

MAGIC = 0x4D545231
# QUERY_T: the QUERY frame, apart from mtdlib.QUERY (memtrack-query's path)
HELLO, WELCOME, DATA, ACK, HEARTBEAT, QUERY_T, RESULT = range(1, 8)


def frame(t, body, length=None):
    """A frame of type t: its header (length: what it says of the body's
    length, if not the truth), then body."""
    return struct.pack(">IB3xI", MAGIC, t, len(body) if length is None else length) + body


def recv_all(c, n):
    """n bytes from socket c; EOFError if it closes first."""
    b = b""
    while len(b) < n:
        x = c.recv(n - len(b))
        if not x:
            raise EOFError("closed")
        b += x
    return b
