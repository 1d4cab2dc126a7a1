#!/usr/bin/env python3
"""memtrack-top's cluster view (--cluster, key A) against a real
memtrackd --aggregate on loopback and two nodes, each memtrackd in /proc
mode in a pid namespace of its own (tests/host/cluster_node.py) running
memload copies of known sizes: the batch and JSON rows equal each node's
/proc/PID/status and memtrack-query's answer, per-program totals sum the
nodes, the interactive view shows them and switches with A and p, and an
aggregator that never answers does not freeze the screen.

usage: test_top_cluster.py [--list] [TEST...]   (root: unshare --pid), run
with tests/lib/harness.py: PASS/FAIL lines; exits 1 if any failed."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "tests", "guest"), os.path.join(ROOT, "tests", "lib")]
from tmuxlib import Tmux  # noqa: E402
from harness import check, main, test  # noqa: E402
from mtdlib import QUERY  # noqa: E402
from mtdnet import Aggregator, ClusterNode, wait_for, write_conf  # noqa: E402

TOP = os.path.join(ROOT, "build", "bin", "memtrack-top")
MiB = 1 << 20
BASE = 20000 + os.getpid() % 5000 * 4
AGG_PORT, NODE_PORT0, SLOW_PORT = BASE, BASE + 1, BASE + 3
SERVER = f"127.0.0.1:{AGG_PORT}"
COMM = "mttopclus"
SIZES = [[10 * MiB, 18 * MiB], [12 * MiB, 16 * MiB, 24 * MiB]]
NODES = ["top-node-a", "top-node-b"]


def node(i):
    """Node i: cluster_node.py in a pid namespace of its own, memtrackd in
    /proc mode relaying to the aggregator."""
    d = tempfile.mkdtemp(prefix="mttopnode.")
    conf = os.path.join(d, "node.conf")
    write_conf(conf, {"memtrackd": {"node": NODES[i], "port": NODE_PORT0 + i,
                                    "source": "proc", "sample_interval_ms": 300,
                                    "aggregators": SERVER}})
    return ClusterNode(None, NODES[i], conf, NODE_PORT0 + i, COMM, SIZES[i])


def named(n, comm):
    """A sleeper on node n whose comm is these bytes; its pid there."""
    return n.cmd(f"named {comm.hex()}")["pid"]


def query(*words):
    r = subprocess.run([QUERY, "-s", SERVER, "--json"] + list(words),
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, f"memtrack-query {words}: {r.returncode} {r.stderr}")
    return json.loads(r.stdout)


def top_json(*args):
    r = subprocess.run([TOP, "-b", "--json", "-n", "1"] + list(args),
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"memtrack-top {args}: {r.returncode} {r.stderr}")
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    return lines[0], [x for x in lines if x["type"] == "task"], \
        [x for x in lines if x["type"] == "program"]


def expected(nodes):
    """(node, pid) -> /proc/PID/status figures of every workload process."""
    return {(n.name, p["pid"]): p for n in nodes for p in n.cmd("status")["procs"]}


def wait_all_seen(want, timeout=30):
    def seen():
        got = {(r["node"], r["pid"]): r
               for r in query("top", "100", "where", f"comm={COMM}")}
        return set(got) == set(want) and all(got[k]["rss"] == want[k]["rss"] for k in want)
    wait_for(seen, timeout, lambda: f"aggregator lacks some of {sorted(want)}", every=0.3)


STATE = {"nodes": []}   # the aggregator, nodes and workload, made by cluster_setup()


@test
def batch_rows_equal_nodes_and_query():
    want = STATE["want"]
    head, tasks, progs = top_json("--cluster", SERVER, "--top", "100")
    check(head["type"] == "cluster" and head["nodes_up"] == 2 and head["nodes_down"] == 0,
          f"header {head}")
    mine = {(t["node"], t["pid"]): t for t in tasks if t["comm"] == COMM}
    check(set(mine) == set(want), f"rows {sorted(mine)}, want {sorted(want)}")
    for k, w in want.items():
        t = mine[k]
        check((t["rss"], t["rss_anon"], t["rss_file"], t["rss_shmem"]) ==
              (w["rss"], w["anon"], w["file"], w["shmem"]),
              f"{k}: {t}, /proc/PID/status {w}")
    # the same rows as memtrack-query's, in its order (largest RSS first),
    # from one snapshot per node: memtrack-query's answer the same before
    # and after memtrack-top's (the nodes send a new one every second)
    for _ in range(20):
        q = query("top", "100")
        _, tasks, _ = top_json("--cluster", SERVER, "--top", "100")
        if query("top", "100") == q:
            break
    else:
        check(False, "the nodes' snapshots changed under every try")
    check([(t["node"], t["pid"], t["rss"]) for t in tasks] ==
          [(r["node"], r["pid"], r["rss"]) for r in q],
          f"rows differ from memtrack-query top:\n{tasks}\n{q}")
    prog = [p for p in progs if p["comm"] == COMM]
    check(len(prog) == 1 and prog[0]["nproc"] == len(want) and
          prog[0]["rss"] == sum(w["rss"] for w in want.values()) and
          prog[0]["rss_anon"] == sum(w["anon"] for w in want.values()),
          f"program row {prog}, want {len(want)} processes, "
          f"{sum(w['rss'] for w in want.values())} bytes")
    # --top bounds the processes asked for
    _, tasks, _ = top_json("--cluster", SERVER, "--top", "3")
    check(len(tasks) == 3 and [t["rss"] for t in tasks] == [r["rss"] for r in q[:3]],
          f"--top 3: {tasks}")


# comm bytes as the kernel keeps them, and the string every JSON output must
# carry: UTF-8 as it is, JSON's own escapes for quote, backslash and tab,
# U+FFFD for a byte that is not UTF-8 (0xff) and one for a cut sequence (the
# first two bytes of a euro sign: Unicode's "maximal subpart", as Python does)
ODD_COMMS = [(b"sl\xc3\xa9\xe2\x82\xacp", "sl\u00e9\u20acp"),
             (b'q"\\\t\xffx\xe2\x82', 'q"\\\t\ufffdx\ufffd')]


@test
def odd_comms_through_relay_query_and_top():
    """A comm in UTF-8 and one that is not, from a node's /proc through the
    relay and the aggregator, exactly the same string in memtrack-query's
    and memtrack-top --cluster's JSON rows and program rows."""
    node = STATE["nodes"][0]
    pids = {named(node, raw): want for raw, want in ODD_COMMS}
    # a sleeper is python3 until it names itself: a snapshot taken in
    # between has its pid under that comm, so wait for the named rows
    end = time.monotonic() + 30
    while True:
        rows = {r["pid"]: r for r in query("top", "1000") if r["node"] == node.name}
        if all(p in rows and rows[p]["comm"] == w for p, w in pids.items()) or \
                time.monotonic() > end:
            break
        time.sleep(0.3)
    for pid, want in pids.items():
        check(pid in rows and rows[pid]["comm"] == want,
              f"memtrack-query: pid {pid} {rows.get(pid)}, want comm {want!r}")
    progs = {r["comm"]: r for r in query("sum", "nproc", "by", "comm")}
    _, tasks, top_progs = top_json("--cluster", SERVER, "--top", "1000")
    top_rows = {t["pid"]: t for t in tasks if t["node"] == node.name}
    top_progs = {p["comm"]: p for p in top_progs}
    for pid, want in pids.items():
        check(want in progs and progs[want]["nproc"] == 1,
              f"memtrack-query sum by comm: {want!r} not one process")
        check(pid in top_rows and top_rows[pid]["comm"] == want,
              f"memtrack-top: pid {pid} {top_rows.get(pid)}, want comm {want!r}")
        check(want in top_progs and top_progs[want]["nproc"] == 1,
              f"memtrack-top program rows: {want!r} not one process")


def cluster_rows(lines):
    """Rows under NODE PID COMMAND titles: {(node, pid): rss_kib}."""
    for i, line in enumerate(lines):
        if line.split()[:3] == ["NODE", "PID", "COMMAND"]:
            rows = {}
            for row in lines[i + 1:]:
                f = row.split()
                if len(f) == 8 and f[1].isdigit():
                    rows[(f[0], int(f[1]))] = (f[2], int(f[3]))
            return rows
    return None


def program_row(lines, comm):
    for i, line in enumerate(lines):
        if line.split()[:2] == ["COMMAND", "NPROC"]:
            for row in lines[i + 1:]:
                f = row.split()
                if f and f[0] == comm:
                    return int(f[1]), int(f[2])
    return None


@test
def interactive_cluster_view():
    want = STATE["want"]
    with Tmux() as tm:
        tm.type(f"{TOP} --cluster {SERVER}; echo EXIT=$?")
        tm.keys("Enter")
        rows = tm.wait(lambda ls: (r := cluster_rows(ls)) and
                       {k for k, v in r.items() if v[0] == COMM} == set(want) and r,
                       "cluster rows with every node's workload")
        for k, w in want.items():
            check(rows[k][1] == w["rss"] >> 10, f"{k}: RSS {rows[k][1]} KiB, want {w['rss'] >> 10}")
        tm.wait(lambda ls: any(f"cluster {SERVER}: 2 nodes up, 0 down" in x for x in ls),
                "status line with the nodes")
        tm.type("p")
        total = sum(w["rss"] for w in want.values()) >> 10
        tm.wait(lambda ls: program_row(ls, COMM) == (len(want), total),
                f"per-program row {COMM} {len(want)} {total}")
        tm.type("A")
        tm.wait(lambda ls: any(x.split()[:3] == ["PID", "USER", "COMMAND"] for x in ls),
                "the local view after A")
        tm.type("A")
        tm.wait(lambda ls: program_row(ls, COMM) == (len(want), total), "back to the cluster")
        tm.type("q")
        tm.wait(lambda ls: any("EXIT=0" in x for x in ls), "exit status 0")
        check(not tm.alternate_on(), "terminal not restored")


class Silent:
    """Accepts connections and never says a word."""

    def __init__(self):
        self.s = socket.socket()
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.s.bind(("127.0.0.1", SLOW_PORT))
        self.s.listen(16)
        self.conns = []
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while True:
            try:
                self.conns.append(self.s.accept()[0])
            except OSError:
                return

    def close(self):
        self.s.close()
        for c in self.conns:
            c.close()


@test
def silent_aggregator_does_not_freeze_the_view():
    slow = Silent()
    try:
        with Tmux() as tm:
            tm.type(f"{TOP} -d 1 --cluster 127.0.0.1:{SLOW_PORT}; echo EXIT=$?")
            tm.keys("Enter")
            tm.wait(lambda ls: any(f"cluster 127.0.0.1:{SLOW_PORT}: asking..." in x
                                   for x in ls), "asking... while it does not answer")
            # keys are served at once while the aggregator is silent
            t0 = time.monotonic()
            tm.type("h")
            tm.wait(lambda ls: any("memtrack-top keys" in x for x in ls), "help", timeout=2)
            check(time.monotonic() - t0 < 2, "help took over 2 s")
            tm.type("q")        # closes the help
            tm.wait(lambda ls: any("timed out" in x.lower() for x in ls),
                    "the timeout on the status line", timeout=15)
            t0 = time.monotonic()
            tm.type("q")
            tm.wait(lambda ls: any("EXIT=0" in x for x in ls), "quit", timeout=10)
        t0 = time.monotonic()
        r = subprocess.run([TOP, "-b", "-n", "1", "--cluster", f"127.0.0.1:{SLOW_PORT}"],
                           capture_output=True, text=True, timeout=60)
        took = time.monotonic() - t0
        check(r.returncode == 1 and "timed out" in r.stderr.lower() and took < 12,
              f"batch against a silent aggregator: rc {r.returncode} in {took:.1f}s, {r.stderr}")
    finally:
        slow.close()


@test
def bad_aggregators_are_reported():
    for server, rc, words in ((f"127.0.0.1:{SLOW_PORT + 1}", 1, "refused"),
                              (f"localhost:{SLOW_PORT + 1}", 1, "refused"),
                              ("no.such.host.invalid:9472", 1, "no.such.host.invalid port 9472: "),
                              ("nohost", 2, "HOST:PORT (IPv6 in []) or prometheus:"),
                              ("127.0.0.1:0", 2, "HOST:PORT (IPv6 in []) or prometheus:"),
                              ("prometheus:ftp://x", 2, "or prometheus:http(s)://... expected"),
                              (f"prometheus:http://127.0.0.1:{SLOW_PORT + 1}", 1,
                               "couldn't connect")):
        r = subprocess.run([TOP, "-b", "-n", "1", "--cluster", server],
                           capture_output=True, text=True, timeout=30)
        check(r.returncode == rc and words.lower() in r.stderr.lower() and not r.stdout,
              f"--cluster {server}: rc {r.returncode}, {r.stderr!r}")


def cluster_setup():
    """The aggregator and the nodes, every workload process seen by it."""
    STATE["agg"] = Aggregator(None, {"listen": "127.0.0.1", "port": AGG_PORT,
                                     "down_after": "3s"})
    for i in range(len(NODES)):
        STATE["nodes"].append(node(i))
    STATE["want"] = expected(STATE["nodes"])
    wait_all_seen(STATE["want"])


def cleanup():
    for n in STATE["nodes"]:
        n.close()
    if STATE.get("agg"):
        STATE["agg"].stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv, setup=cluster_setup, cleanup=cleanup))
