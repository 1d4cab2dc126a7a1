#!/usr/bin/env python3
"""Host tests of memtrackd --aggregate and memtrack-query with network
namespaces: three nodes and an aggregator, each node joined to the
aggregator's namespace by its own veth pair.  Each node's memtrackd runs in
/proc mode inside the node's own pid namespace (tests/host/cluster_node.py)
with a workload of known RSS: copies of memload named mtdclus, a different
number per node, each with its own size.

Asserts: the cluster sum for the program equals the sum of the three nodes'
own /metrics figures and the sum of VmRSS; top returns the right rows; a
killed node is marked down within down_after_ms; a cut link and a restarted
aggregator lose no sequence number; hostile input to the aggregator's port
(random bytes, truncated and oversized frames, QUERY before HELLO, garbage
queries) is refused, logged with the peer, and the aggregator goes on.

Needs root, iproute2 and util-linux (unshare).  Run with
tests/lib/harness.py: test names as arguments run only those, --list prints
them; PASS/FAIL lines; exits 1 if any failed."""
import json
import os
import random
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "guest"), os.path.join(HERE, "..", "lib")]
from mtdlib import QUERY, value  # noqa: E402
from tls_keys import CLIENT, EXPIRED, SERVER, Keys, client_hello  # noqa: E402
from harness import Netns, check, main, test  # noqa: E402
from mtdnet import (DATA, HEARTBEAT, HELLO, QUERY_T, SIZES, WELCOME,  # noqa: E402
                    Aggregator as Agg, ClusterNode, frame as _frame, recv_all, refused_conf,
                    star, wait_for, write_conf)

SUFFIX = str(os.getpid())
AGG_NS = f"mtca{SUFFIX}"
PORT = 9472
NODE_PORT = 9471
DOWN_AFTER_MS = 1500
COMM = "mtdclus"
NODES = [f"node-{i}" for i in range(len(SIZES))]
NETNS = Netns()


def node_ns(i):
    return f"mtcn{i}{SUFFIX}"


def node_if(i):
    return f"vcn{i}{SUFFIX}"[:15], f"vca{i}{SUFFIX}"[:15]


def node_ip(i):
    return f"10.214.{i}.1", f"10.214.{i}.2"


def netns_setup():
    star(NETNS, AGG_NS, [(node_ns(i), (node_if(i)[0], node_ip(i)[0]),
                          (node_if(i)[1], node_ip(i)[1])) for i in range(len(NODES))])


class Aggregator(Agg):
    """memtrackd --aggregate in the aggregator namespace, answering."""

    def __init__(self, auth=None, client=None, **keys):
        """auth: the [memtrackd] auth keys; client: memtrack-query's
        config (its auth) for every query of the test from now on."""
        global CLIENT_CONF
        CLIENT_CONF = client
        keys.setdefault("listen", "0.0.0.0")
        keys.setdefault("port", PORT)
        keys.setdefault("down_after", f"{DOWN_AFTER_MS}ms")
        super().__init__(AGG_NS, keys, auth)
        deadline = time.time() + 10
        while True:
            r = query_raw("nodes")
            if r.returncode == 0:
                break
            if self.p.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"aggregator did not start: {self.stderr()}")
            time.sleep(0.05)


class Node(ClusterNode):
    """cluster_node.py in node i's netns and its own pid namespace."""

    def __init__(self, i, sizes, auth=None):
        self.i, self.name = i, NODES[i]
        self.dir = tempfile.mkdtemp(prefix="mtdnode.")
        self.conf = os.path.join(self.dir, "node.conf")
        self.write_conf(auth)
        super().__init__(node_ns(i), self.name, self.conf, NODE_PORT, COMM, sizes)

    def write_conf(self, auth, name=None):
        """auth: the keys of auth (none if None); name: the node's name."""
        with open(self.conf, "w") as f:
            f.write("[memtrackd]\n"
                    f"node = {name or self.name}\nport = {NODE_PORT}\nsource = proc\n"
                    "sample_interval_ms = 300\n"
                    f"aggregators = {node_ip(self.i)[1]}:{PORT}\n")
            for k, v in (auth or {}).items():
                f.write(f"{k} = {v}\n")

    def restart(self, auth, name=None):
        """memtrackd again with other credentials (or name)."""
        self.write_conf(auth, name)
        self.cmd("kill")
        check(self.cmd("start") == {"ok": True}, f"{self.name}: not restarted")


class Cluster:
    def __init__(self, auth=(None,) * len(SIZES)):
        """auth: each node's auth keys."""
        self.nodes = []
        try:
            for i, sizes in enumerate(SIZES):
                self.nodes.append(Node(i, sizes, auth[i]))
        except Exception:
            self.close()
            raise

    def close(self):
        for n in self.nodes:
            n.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


CLIENT_CONF = None      # memtrack-query's -c, set by Aggregator()


def query_raw(*words, json_out=True, conf=None):
    args = ["ip", "netns", "exec", AGG_NS, QUERY, "-s", f"127.0.0.1:{PORT}", "-t", "10000"]
    if conf or CLIENT_CONF:
        args += ["-c", conf or CLIENT_CONF]
    if json_out:
        args.append("--json")
    return subprocess.run(args + list(words), capture_output=True, text=True, timeout=30)


def query(*words):
    r = query_raw(*words)
    check(r.returncode == 0, f"memtrack-query {' '.join(words)}: {r.returncode} {r.stderr}")
    return json.loads(r.stdout)


def nodes_by_name():
    return {n["node"]: n for n in query("nodes")}


def workload_seen(names=NODES):
    """Every node named up, its latest snapshot with all of its workload."""
    up = nodes_by_name()
    if any(up.get(n, {}).get("state") != "up" for n in names):
        return False
    rows = {r["node"]: r for r in query("sum", "nproc", "by", "node", "where", f"comm={COMM}")}
    return all(rows.get(n, {}).get("nproc") == len(s) for n, s in zip(NODES, SIZES)
               if n in names)


FIGS = ("rss", "anon", "file", "shmem", "swap", "nproc")


def node_own(n):
    """The node's own figures for COMM from its /metrics."""
    m = n.metrics()
    g = {f: value(m, f"memtrack_program_{k}", comm=COMM) for f, k in
         (("anon", "rss_anon_bytes"), ("file", "rss_file_bytes"),
          ("shmem", "rss_shmem_bytes"), ("swap", "swap_bytes"), ("nproc", "processes"))}
    check(None not in g.values(), f"{n.name}: metrics lack {COMM}: {g}")
    g = {k: int(v) for k, v in g.items()}
    g["rss"] = g["anon"] + g["file"] + g["shmem"]
    return g


def assert_exact_sums(nodes):
    """The aggregator's figures for COMM, per node and summed, are exactly
    the nodes' own and the sum of their VmRSS (nodes: those up)."""
    wait_for(lambda: workload_seen([n.name for n in nodes]), 30,
             "the nodes up with their workload")
    # the workload is still: every later sample has the same figures
    time.sleep(1)
    own = [node_own(n) for n in nodes]
    vm = [n.cmd("status")["procs"] for n in nodes]
    sizes = [SIZES[n.i] for n in nodes]
    by_node = {r["node"]: r for r in
               query("sum", ",".join(FIGS), "by", "node", "where", f"comm={COMM}")}
    check(set(by_node) == {n.name for n in nodes}, f"nodes summed: {sorted(by_node)}")
    total = query("sum", ",".join(FIGS), "where", f"comm={COMM}")
    for n, o, procs in zip(nodes, own, vm):
        row = by_node[n.name]
        check(all(row[f] == o[f] for f in FIGS), f"{n.name}: aggregator {row}, node {o}")
        check(o["rss"] == sum(p["rss"] for p in procs), f"{n.name}: VmRSS {procs}, node {o}")
    check(len(total) == 1, f"one row: {total}")
    for f in FIGS:
        check(total[0][f] == sum(o[f] for o in own), f"{f}: {total[0]} vs {own}")
    check(total[0]["rss"] == sum(p["rss"] for procs in vm for p in procs), "sum of VmRSS")
    check(total[0]["nproc"] == sum(len(s) for s in sizes), "nproc")
    return own, vm, total


@test
def cluster_sum_equals_nodes_and_vmrss():
    with Aggregator(), Cluster() as c:
        own, vm, total = assert_exact_sums(c.nodes)
        by_comm = query("sum", "rss", "by", "comm", "where", f"comm={COMM}")
        check(by_comm == [{"comm": COMM, "rss": total[0]["rss"]}], f"by comm: {by_comm}")
        # each workload process holds at least what it touched
        for procs, sizes in zip(vm, SIZES):
            check(all(p["anon"] >= s for p, s in zip(procs, sizes)), f"{procs}")
        # the human table says the same
        r = query_raw("sum", "rss", "by", "comm", "where", f"comm={COMM}", json_out=False)
        check(r.returncode == 0 and r.stdout.split() == ["comm", "rss", COMM,
                                                          str(total[0]["rss"])], r.stdout)


@test
def top_returns_the_largest_processes():
    with Aggregator(), Cluster() as c:
        wait_for(workload_seen, 30, "all nodes up with their workload")
        time.sleep(1)
        procs = []
        for n in c.nodes:
            for p in n.cmd("status")["procs"]:
                procs.append({"node": n.name, "pid": p["pid"], "comm": COMM,
                              "rss": p["rss"], "anon": p["anon"], "file": p["file"],
                              "shmem": p["shmem"], "swap": 0})
        procs.sort(key=lambda p: -p["rss"])
        got = query("top", "5", "where", f"comm={COMM}")
        check(got == procs[:5], f"top 5: {got}\nexpected {procs[:5]}")
        # nothing else in these pid namespaces is as large: no filter needed
        got = query("top", "4")
        check(got == procs[:4], f"top 4 unfiltered: {got}")
        got = query("top", "3", "by", "anon", "where", "node=node-2")
        want = sorted([p for p in procs if p["node"] == "node-2"], key=lambda p: -p["anon"])
        check(got == want[:3], f"top by anon on node-2: {got}")
        check(query("top", "3", "where", "comm=nosuchprog") == [], "no match: no rows")


@test
def killed_node_is_marked_down():
    with Aggregator() as a, Cluster() as c:
        wait_for(workload_seen, 30, "all nodes up with their workload")
        victim = c.nodes[1]
        victim.cmd("kill")
        t0 = time.time()
        wait_for(lambda: nodes_by_name()[victim.name]["state"] == "down",
                 (DOWN_AFTER_MS + 1500) / 1000, f"{victim.name} down")
        took = time.time() - t0
        st = nodes_by_name()
        check(took >= DOWN_AFTER_MS / 1000 - 1.0, f"down after {took:.2f} s only")
        check(all(st[n]["state"] == "up" for n in NODES if n != victim.name), f"others: {st}")
        check(st[victim.name]["last_seen_ms_ago"] > DOWN_AFTER_MS, f"{st[victim.name]}")
        # a down node drops out of the sums
        rows = query("sum", "nproc", "by", "node", "where", f"comm={COMM}")
        check(victim.name not in {r["node"] for r in rows}, f"down node summed: {rows}")
        # and back: a new session
        victim.cmd("start")
        wait_for(lambda: nodes_by_name()[victim.name]["state"] == "up", 10, "back up")
        check(nodes_by_name()[victim.name]["sessions"] == 2, "a second session")
        check("node-1 down" in a.stderr(), "down not logged")


def contiguous(n):
    """A node's figures: everything from first_seq to last_seq received."""
    return (n["gaps"] == 0 and n["first_seq"] >= 1 and
            n["received"] == n["last_seq"] - n["first_seq"] + 1)


@test
def link_cut_and_aggregator_restart_lose_nothing():
    with Cluster() as c:
        with Aggregator():
            wait_for(workload_seen, 30, "all nodes up with their workload")
            nif, aif = node_if(0)
            NETNS.set_link(AGG_NS, aif, False)
            time.sleep(4)
            before = nodes_by_name()[NODES[0]]
            check(before["state"] == "down", f"cut link: {before}")
            NETNS.set_link(AGG_NS, aif, True)
            wait_for(lambda: nodes_by_name()[NODES[0]]["last_seq"] >= before["last_seq"] + 20,
                     60, "node-0 catches up")
            st = nodes_by_name()
            check(all(contiguous(st[n]) and st[n]["first_seq"] == 1 for n in NODES),
                  f"after the cut: {st}")
        acked = [value(n.metrics(), "memtrack_relay_acked_seq") for n in c.nodes]
        time.sleep(3)       # the nodes buffer what nobody takes
        with Aggregator():
            wait_for(lambda: all(nodes_by_name().get(n, {}).get("last_seq", 0) >= a + 15
                                 for n, a in zip(NODES, acked)), 60, "all caught up")
            st = nodes_by_name()
            for n, a in zip(NODES, acked):
                check(contiguous(st[n]), f"{n} after the restart: {st[n]}")
                check(st[n]["first_seq"] <= a + 1,
                      f"{n}: restarted aggregator starts at {st[n]['first_seq']}, "
                      f"the first one acknowledged {a}")
        for n in c.nodes:
            check(value(n.metrics(), "memtrack_relay_dropped_total") == 0, f"{n.name} dropped")


# ---- hostile peers: run inside the aggregator's namespace (--hostile) ----

def _closed_by_peer(s, timeout=15):
    """True if the aggregator closes the connection within timeout."""
    s.settimeout(timeout)
    try:
        while True:
            b = s.recv(65536)
            if not b:
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def _hello(session, name=b"fuzz"):
    return _frame(HELLO, struct.pack(">QQH", session, 1, len(name)) + name)


def hostile(port):
    rnd = random.Random(1234)
    res = {}

    def conn():
        return socket.create_connection(("127.0.0.1", port), timeout=15)

    def case(name, data, then_close=False):
        s = conn()
        try:
            s.sendall(data)
            if then_close:
                s.shutdown(socket.SHUT_WR)
            res[name] = _closed_by_peer(s)
        finally:
            s.close()

    for k in range(5):
        case(f"random{k}", bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 4000))))
    case("truncated-header", _hello(7)[:7], then_close=True)
    case("truncated-hello", _hello(7)[:20], then_close=True)
    case("oversized-data", _hello(7) +
         _frame(DATA, b"\0" * 9, length=1 << 30))
    case("query-before-hello", _frame(QUERY_T, b"nodes"))
    case("data-before-hello", _frame(DATA, struct.pack(">QB", 1, 1) + b"x"))
    case("bad-magic", b"XXXX" + _hello(7)[4:])
    case("hello-bad-name", _frame(HELLO, struct.pack(">QQH", 7, 1, 3) + b"a b"))
    case("query-on-node-conn", _hello(99, b"fuzznode") + _frame(QUERY_T, b"nodes"))
    case("data-on-query-conn", _hello(0) + _frame(DATA, struct.pack(">QB", 1, 1) + b"x"))
    case("bad-snapshot", _hello(98, b"fuzzsnap") +
         _frame(DATA, struct.pack(">QB", 1, 1) + b"snapshot/2 proc 5 5\np 1 2 3\n"))
    case("bad-snapshot-line", _hello(95, b"fuzzline") +
         _frame(DATA, struct.pack(">QB", 1, 1) + b"snapshot/2 proc 1 0\np 1 2 3 4 x 5\n"))
    case("bad-records", _hello(97, b"fuzzrec") +
         _frame(DATA, struct.pack(">QB", 1, 2) + b"\x07" * 13))
    case("seq-zero", _hello(96, b"fuzzseq") + _frame(DATA, struct.pack(">QB", 0, 1) + b"x"))
    # garbage queries: an error RESULT each, on the same connection
    s = conn()
    try:
        s.sendall(_hello(0))
        s.recv(20)
        errs = []
        for q in (b"", b"sum", b"sum bogus", b"top 0", b"top x", b"top 99999999999",
                  b"events", b"nodes extra", b"sum rss by x", b"sum rss where comm",
                  b"\xff\xfe\x00", b"top 3 where a=b", b"events nosuchnode", b"x" * 4096):
            if not q:
                s.sendall(_frame(QUERY_T, b"", length=0))
                errs.append(("empty", _closed_by_peer(s, 15)))
                s.close()
                s = conn()
                s.sendall(_hello(0))
                s.recv(20)
                continue
            s.sendall(_frame(QUERY_T, q))
            n = struct.unpack(">I", recv_all(s, 12)[8:])[0]
            body = recv_all(s, n)
            errs.append((q[:20].decode("latin1"), body[0] == 1 and len(body) > 2))
        res["garbage-queries"] = all(ok for _, ok in errs)
        res["garbage-detail"] = errs
    finally:
        s.close()
    print(json.dumps(res), flush=True)


@test
def hostile_input_is_refused():
    with Aggregator() as a, Cluster():
        wait_for(workload_seen, 30, "all nodes up with their workload")
        r = subprocess.run(["ip", "netns", "exec", AGG_NS, sys.executable, __file__,
                            "--hostile", str(PORT)], capture_output=True, text=True,
                           timeout=600)
        check(r.returncode == 0, f"hostile client: {r.stderr}")
        res = json.loads(r.stdout)
        bad = [k for k, v in res.items() if v is False]
        check(not bad, f"not refused: {bad} ({res})")
        check(a.alive(), "the aggregator died")
        check(workload_seen(), "the aggregator stopped serving the nodes")
        log = a.stderr()
        for what in ("the first frame is not HELLO", "malformed frame header",
                     "unexpected frame type", "malformed HELLO", "snapshot:",
                     "malformed module records", "sequence number 0",
                     "snapshot: malformed line"):
            check(what in log, f"not logged: {what}")
        check("aggregate: peer 127.0.0.1:" in log, "the log does not name the peer")
        # no valid DATA, no node entry
        nodes = nodes_by_name()
        check(sorted(nodes) == NODES, f"nodes without a valid DATA listed: {sorted(nodes)}")


@test
def bounds_are_kept():
    with Aggregator(max_nodes=2) as a, Cluster():
        time.sleep(3)
        st = nodes_by_name()
        check(len(st) == 2, f"max_nodes = 2: {st}")
        check("too many nodes" in a.stderr(), "refusal not logged")
    with Aggregator(max_conns=1) as a:
        # one connection held open, the next one refused
        r = subprocess.run(["ip", "netns", "exec", AGG_NS, sys.executable, "-c",
                            "import socket, subprocess, sys, time\n"
                            f"s = socket.create_connection(('127.0.0.1', {PORT}))\n"
                            "time.sleep(0.5)\n"
                            f"r = subprocess.run([{QUERY!r}, '-s', '127.0.0.1:{PORT}', 'nodes'])\n"
                            "sys.exit(r.returncode)\n"], capture_output=True, text=True)
        check(r.returncode == 1, f"second connection not refused: {r.returncode} {r.stderr}")
        check("too many connections" in a.stderr(), "refusal not logged")
        # once it has seen the held connection close (a loaded host may
        # take a moment), its slot is free again
        wait_for(lambda: query_raw("nodes").returncode == 0, 10, "answering afterwards")


@test
def bad_queries_exit_2():
    with Aggregator():
        for q in (["sum", "bogus"], ["top", "0"], ["frobnicate"], ["events", "nosuchnode"]):
            r = query_raw(*q)
            check(r.returncode == 2 and r.stderr.startswith("memtrack-query: "),
                  f"{q}: {r.returncode} {r.stderr}")
        r = subprocess.run(["ip", "netns", "exec", AGG_NS, QUERY, "-s", "127.0.0.1:1", "nodes"],
                           capture_output=True, text=True)
        check(r.returncode == 1 and "connecting" in r.stderr, f"no aggregator: {r.stderr}")
        # a malformed query is refused before any connection (it was
        # "Connection refused", exit 1): exit 2 and the words it gets with
        # an aggregator up (one parser, query_parse.c), at -s and -P alike
        for q in (["sum", "bogus"], ["top", "0"], ["frobnicate"]):
            said = query_raw(*q).stderr
            for how in (["-s", "127.0.0.1:1"], ["-P", "http://127.0.0.1:1"]):
                r = subprocess.run(["ip", "netns", "exec", AGG_NS, QUERY] + how + q,
                                   capture_output=True, text=True)
                check(r.returncode == 2 and r.stderr == said and not r.stdout,
                      f"{how} {q} with no server: {r.returncode} {r.stderr!r}, "
                      f"the aggregator's {said!r}")
        r = subprocess.run([QUERY, "-s", "nonsense", "nodes"], capture_output=True, text=True)
        check(r.returncode == 2, f"bad -s: {r.returncode}")
    # an aggregator that never answers: the client gives up on time
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        t0 = time.time()
        r = subprocess.run([QUERY, "-s", f"127.0.0.1:{silent.getsockname()[1]}", "-t", "700",
                            "nodes"], capture_output=True, text=True)
        took = time.time() - t0
        check(r.returncode == 1 and "timed out" in r.stderr, f"silent: {r.returncode} {r.stderr}")
        check(0.6 <= took < 2.0, f"-t 700 took {took:.2f} s")


# ---- HELLOs alone do not take node slots ---------------------------------

def ghosts(port, count):
    """count connections, each a HELLO with a made-up name and heartbeats,
    held until stdin closes; prints how many got their WELCOME."""
    socks = []
    for k in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=15)
        s.sendall(_hello(1000 + k, f"ghost{k}".encode()))
        got = b""
        while len(got) < 20:
            b = s.recv(20 - len(got))
            if not b:
                break
            got += b
        socks.append((s, len(got) == 20 and got[4] == WELCOME))
    print(json.dumps({"welcomed": sum(ok for _, ok in socks)}), flush=True)
    stop = threading.Event()

    def beat():
        while not stop.wait(0.3):
            for s, _ in socks:
                try:
                    s.sendall(_frame(HEARTBEAT, b""))
                except OSError:
                    pass
    threading.Thread(target=beat, daemon=True).start()
    sys.stdin.read()
    stop.set()


def threads(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("Threads:")).split()[1])


@test
def hellos_alone_take_no_node_slot():
    with Aggregator(max_nodes=len(NODES)) as a:
        g = subprocess.Popen(["ip", "netns", "exec", AGG_NS, sys.executable, __file__,
                              "--ghosts", str(PORT), "20"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        try:
            r = json.loads(g.stdout.readline())
            check(r["welcomed"] == 20, f"ghost connections: {r}")
            check(nodes_by_name() == {}, "HELLO made a node entry")
            with Cluster():
                # every real node gets a slot although 20 names came first
                wait_for(workload_seen, 30, "all nodes up with their workload")
                check(sorted(nodes_by_name()) == NODES, f"nodes: {sorted(nodes_by_name())}")
                check("too many nodes" not in a.stderr(), "a node was refused")
                check(g.poll() is None, "the ghosts were dropped")
                # 23 node connections, no query under way: the main thread
                # and the 4 event loops, not a thread a connection
                wait_for(lambda: threads(a.p.pid) == 5, 10,
                         f"5 threads for 23 connections (has {threads(a.p.pid)})")
        finally:
            g.stdin.close()
            g.wait(timeout=30)


# ---- authentication through the real aggregator --------------------------

KEYS = None     # tls_keys.Keys, made by keys() once a run


def keys():
    global KEYS
    if KEYS:
        return KEYS
    KEYS = Keys(tempfile.mkdtemp(prefix="mtdclkeys."))
    KEYS.ca("ca", "memtrack test CA")
    KEYS.ca("other-ca", "another CA")
    KEYS.cert("agg", "aggregator", purposes=(SERVER,))
    for name in NODES + ["memtrack-query"]:
        KEYS.cert(name, name, purposes=(CLIENT,))
        KEYS.psk("agg.psk", name)
        KEYS.psk_extract("agg.psk", name, name + ".psk")
    KEYS.cert("node-2-other-ca", "node-2", ca="other-ca", purposes=(CLIENT,))
    KEYS.cert("node-2-expired", "node-2", dates=EXPIRED, purposes=(CLIENT,))
    KEYS.cert("query-other-ca", "memtrack-query", ca="other-ca", purposes=(CLIENT,))
    KEYS.psk("node-2-wrong.psk", "node-2")          # its name, another key
    KEYS.psk("node-x.psk", "node-x")                # a name not in agg.psk
    KEYS.psk("query-wrong.psk", "memtrack-query")
    return KEYS


def psk_auth(file):
    return {"auth": "psk", "psk_file": keys().path(file)}


def cert_auth(name, ca="ca"):
    k = keys()
    return {"auth": "cert", "ca_file": k.path(ca + ".pem"),
            "cert_file": k.path(name + ".pem"), "key_file": k.path(name + ".key")}


def client_conf(auth):
    """memtrack-query's config: these auth keys."""
    path = keys().path(f"query-{len(os.listdir(keys().dir))}.conf")
    write_conf(path, {"memtrackd": auth or {}})
    return path


def node_peer(i):
    return re.escape(node_ip(i)[0]) + r":\d+"


def assert_node_refused(a, node, says):
    """node (restarted with bad credentials) is refused: the aggregator
    logs why with its address, the node counts authentication failures,
    and it is not listed."""
    log = rf"aggregate: peer {node_peer(node.i)}: refused: TLS handshake: {says}"
    wait_for(lambda: re.search(log, a.stderr()), 20, f"aggregator log {log!r}")
    wait_for(lambda: value(node.metrics(), "memtrack_relay_auth_failures_total") >= 2,
             20, f"{node.name}: 2 authentication failures")
    m = node.metrics()
    check(value(m, "memtrack_relay_connects_total") == 0, f"{node.name}: connected")
    check(node.name not in nodes_by_name(), f"{node.name} listed")
    check(a.alive(), "the aggregator died")


def assert_query_refused(auth, says):
    r = query_raw("nodes", conf=client_conf(auth))
    check(r.returncode == 1 and re.search(says, r.stderr) and
          r.stderr.startswith("memtrack-query: "), f"query {auth}: {r.returncode} {r.stderr}")


def hostile_tls(port):
    """Random bytes, truncated ClientHellos, and a stalled handshake (half a
    ClientHello, then silence) to the TLS port: which the aggregator closed,
    and after how long the stalled one."""
    hello = client_hello()
    res = {}

    def case(name, data, then_close):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        try:
            t0 = time.time()
            s.sendall(data)
            if then_close:
                s.shutdown(socket.SHUT_WR)
            res[name] = _closed_by_peer(s, 30)
            res[name + "-s"] = round(time.time() - t0, 2)
        finally:
            s.close()

    rnd = random.Random(99)
    case("random1", bytes([rnd.getrandbits(8)]), True)
    case("random4k", bytes(rnd.getrandbits(8) for _ in range(4096)), False)
    case("plain-hello", _hello(5, b"node-2"), False)
    case("half-hello", hello[:len(hello) // 2], True)
    case("hello-5-bytes", hello[:5], True)
    case("stalled", hello[:len(hello) // 2], False)
    print(json.dumps(res), flush=True)


def assert_hostile_tls_refused(a, c):
    before = len(re.findall(r"aggregate: peer 127\.0\.0\.1:\d+: refused: TLS handshake: ",
                            a.stderr()))
    h = subprocess.Popen(["ip", "netns", "exec", AGG_NS, sys.executable, __file__,
                          "--hostile-tls", str(PORT)], stdout=subprocess.PIPE, text=True)
    try:
        # while one handshake stalls, the others are served
        time.sleep(2)
        check(workload_seen([n.name for n in c]), "not serving during the hostile input")
        out, _ = h.communicate(timeout=120)
    finally:
        if h.poll() is None:
            h.kill()
    res = json.loads(out)
    bad = [k for k, v in res.items() if v is False]
    check(not bad, f"not refused: {bad} ({res})")
    # the socket's 10 s receive timeout bounds the whole handshake
    check(9 <= res["stalled-s"] <= 14, f"stalled handshake closed after {res['stalled-s']} s")
    log = a.stderr()
    refused = re.findall(r"aggregate: peer 127\.0\.0\.1:\d+: refused: TLS handshake: (.*)", log)
    check(len(refused) - before >= 6, f"refusals logged: {refused}")
    for says in ("not TLS from the peer", "the peer closed the connection",
                 "timed out after 10000 ms"):
        check(any(says in r for r in refused), f"not logged: {says}: {refused}")
    check(a.alive(), "the aggregator died")
    check(workload_seen([n.name for n in c]), "the aggregator stopped serving the nodes")


def authenticated_cluster(kind):
    """Nodes 0 and 1 good from the start; node 2 first with each kind of
    bad credentials (never listed), then good: the sums are exact."""
    psk = kind == "psk"
    good = [psk_auth(f"{n}.psk") if psk else cert_auth(n) for n in NODES]
    bad = ([(psk_auth("node-2-wrong.psk"), r'bad pre-shared key for identity "node-2"'),
            (psk_auth("node-x.psk"), r'unknown PSK identity "node-x" \(not in psk_file\)')]
           if psk else
           [(cert_auth("node-2-other-ca"),
             r'peer certificate "CN=node-2,O=memtrack test" refused: .*issuer is unknown'),
            (cert_auth("node-2-expired"),
             r'peer certificate "CN=node-2,O=memtrack test" refused: .*expired certificate')])
    bad.append((None, r"not TLS from the peer"))
    agg_auth = psk_auth("agg.psk") if psk else cert_auth("agg")
    query_auth = psk_auth("memtrack-query.psk") if psk else cert_auth("memtrack-query")
    extra = {"require_identity_match": "yes"} if psk else {}
    with Aggregator(auth=agg_auth, client=client_conf(query_auth), **extra) as a, \
            Cluster(auth=good[:2] + [bad[0][0]]) as c:
        wait_for(lambda: workload_seen(NODES[:2]), 30, "nodes 0 and 1 up")
        for k, (auth, says) in enumerate(bad):
            if k:
                c.nodes[2].restart(auth)
            assert_node_refused(a, c.nodes[2], says)
        assert_exact_sums(c.nodes[:2])
        # memtrack-query without the right credentials
        if psk:
            assert_query_refused(psk_auth("query-wrong.psk"),
                                 r"TLS handshake: the peer refused: .*wrong pre-shared key")
        else:
            assert_query_refused(cert_auth("query-other-ca"),
                                 r"TLS: the peer refused: .*it refused our certificate")
        assert_query_refused(None, r"does the aggregator use another auth\?")
        assert_hostile_tls_refused(a, c.nodes[:2])
        # node 2 with its own credentials
        c.nodes[2].restart(good[2])
        own, _, total = assert_exact_sums(c.nodes)
        check(total[0]["nproc"] == sum(map(len, SIZES)), f"{total}")
        log = a.stderr()
        for n in c.nodes:
            ident = n.name if psk else f"CN={n.name},O=memtrack test"
            said = rf'aggregate: peer {node_peer(n.i)} \({re.escape(ident)}\): node {n.name} ' \
                   rf'authenticated as "{re.escape(ident)}" \(TLS1\.3 '
            check(re.search(said, log), f"identity of {n.name} not logged: {said}")
        # a node naming itself after another node
        st = nodes_by_name()
        c.nodes[2].restart(good[2], name="node-1")
        mismatch = rf'aggregate: peer {node_peer(2)} \([^)]*\): node-1: '
        if psk:
            mismatch += r'refused: the node name is not its authenticated name "node-2" ' \
                        r'\(require_identity_match\)'
            wait_for(lambda: len(re.findall(mismatch, a.stderr())) >= 2, 20, "refused twice")
            now = nodes_by_name()
            check(now["node-1"]["sessions"] == st["node-1"]["sessions"] == 1 and
                  now["node-1"]["state"] == "up", f"node-1 disturbed: {now['node-1']}")
            check(now["node-2"]["session"] == st["node-2"]["session"], "node-2 changed")
        else:
            # allowed without require_identity_match, and logged
            mismatch += r'the node name is not its authenticated name "node-2"$'
            wait_for(lambda: re.search(mismatch, a.stderr(), re.M), 20, "mismatch logged")
        check(a.alive(), "the aggregator died")


@test
def psk_cluster_exact_and_refusals():
    authenticated_cluster("psk")


@test
def cert_cluster_exact_and_refusals():
    authenticated_cluster("cert")


@test
def require_identity_match_needs_auth():
    for text, says in (("[aggregate]\nrequire_identity_match = yes\n",
                        "require_identity_match needs auth = psk or cert"),
                       ("[aggregate]\nrequire_identity_match = maybe\n",
                        'require_identity_match = "maybe": must be yes or no')):
        rc, err = refused_conf(text, "--aggregate", ns=AGG_NS)
        check(rc != 0 and says in err, f"{text!r}: {rc} {err}")


def cleanup():
    NETNS.delete()
    if KEYS:
        shutil.rmtree(KEYS.dir, ignore_errors=True)


def entry(argv):
    """The suite, or one of the helper modes the tests run in a namespace."""
    if len(argv) == 3 and argv[1] == "--hostile":
        hostile(int(argv[2]))
        return 0
    if len(argv) == 3 and argv[1] == "--hostile-tls":
        hostile_tls(int(argv[2]))
        return 0
    if len(argv) == 4 and argv[1] == "--ghosts":
        ghosts(int(argv[2]), int(argv[3]))
        return 0
    return main(argv, setup=netns_setup, cleanup=cleanup, root="cluster")


if __name__ == "__main__":
    sys.exit(entry(sys.argv))
