#!/usr/bin/env python3
"""Host tests of memtrackd's relay (node side) with network namespaces: a
node namespace running memtrackd (/proc mode, a snapshot every 200 ms) and
an aggregator namespace running tests/host/relay_agg.py, joined by a veth
pair.  Asserts sequence numbers arrive complete and in order, across a cut
link and a restarted aggregator; that a full buffer's drops are counted
exactly; that a misbehaving aggregator is refused without a crash.

Needs root and iproute2.  Run with tests/lib/harness.py: test names as
arguments run only those, --list prints them; PASS/FAIL lines; exits 1 if
any failed."""
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "guest"), os.path.join(HERE, "..", "lib")]
from mtdlib import Named, value, status_bytes, PAGE  # noqa: E402
from harness import Netns, check, main, test  # noqa: E402
from mtdnet import Output, relay_node, star  # noqa: E402

SUFFIX = str(os.getpid())
NODE_NS, AGG_NS = f"mtdn{SUFFIX}", f"mtda{SUFFIX}"
NODE_IF, AGG_IF = f"vn{SUFFIX}"[:15], f"va{SUFFIX}"[:15]
NODE_IP, AGG_IP = "10.213.0.1", "10.213.0.2"
PORT = 9472
NETNS = Netns()


def netns_setup():
    star(NETNS, AGG_NS, [(NODE_NS, (NODE_IF, NODE_IP), (AGG_IF, AGG_IP))])


class Agg(Output):
    """relay_agg.py in the aggregator namespace; its events (JSON lines)
    in self.lines."""

    def __init__(self, mode="ok"):
        super().__init__(Netns.cmd(AGG_NS, sys.executable, os.path.join(HERE, "relay_agg.py"),
                                   AGG_IP, str(PORT), mode), parse=json.loads)
        self.wait_for(lambda e: e["ev"] == "listening", 10)

    def wait_for(self, pred, timeout):
        e = self.first(pred, timeout)
        if e is None:
            raise AssertionError(f"aggregator: nothing matching within {timeout} s")
        return e

    def of(self, ev):
        return [e for e in self.lines if e["ev"] == ev]

    def stop(self):
        """Stopped with SIGTERM, never between sending an ACK and saying
        so: every ACK it sent is in its events, all read once this returns."""
        self.p.terminate()
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.reader.join(timeout=10)


def node(**keys):
    return relay_node(NODE_NS, f"{AGG_IP}:{PORT}", **keys)


def contiguous(seqs):
    s = sorted(set(seqs))
    return s == list(range(1, s[-1] + 1)) if s else False


@test
def snapshots_arrive_in_order():
    with Named("mtdrelay") as w, Agg() as a, node() as d:
        p = w.start("anon 3145728")
        a.wait_for(lambda e: e["ev"] == "data" and e["seq"] >= 10, 30)
        hello = a.of("hello")
        check(len(hello) == 1 and hello[0]["node"] == "node-a" and hello[0]["oldest"] == 1,
              f"hello {hello}")
        seqs = [e["seq"] for e in a.of("data")]
        check(seqs == list(range(1, len(seqs) + 1)), f"seqs {seqs}")
        last = a.of("data")[-1]["body"]
        check(last.startswith("snapshot/3 proc "), last[:40])
        head = last.splitlines()[0].split()
        lines = [l.split(" ") for l in last.splitlines()[1:]]
        progs = [l for l in lines if l[0] == "p"]
        procs = [l for l in lines if l[0] == "t"]
        check(int(head[2]) == len(progs) and int(head[3]) == len(procs) and
              len(progs) + len(procs) == len(lines), "program and process counts")
        # NS POD CONTAINER: "-" for the host's, then the comm
        mine = [l for l in progs if l[9] == "mtdrelay"]
        check(len(mine) == 1 and mine[0][1] == "1" and mine[0][6:9] == ["-"] * 3,
              f"workload line {mine}")
        check(abs(int(mine[0][2]) - status_bytes(p.pid, "RssAnon")) <= PAGE, "rss_anon")
        mine = [l for l in procs if l[9] == "mtdrelay"]
        check(len(mine) == 1 and mine[0][1] == str(p.pid) and mine[0][6:9] == ["-"] * 3,
              f"workload process {mine}")
        check(abs(int(mine[0][2]) - status_bytes(p.pid, "RssAnon")) <= PAGE,
              "process rss_anon")
        # kernel threads are left out of the snapshot as of /metrics
        check(not [l for l in progs if l[9] in ("kthreadd", "ksoftirqd/0")] and
              not [l for l in procs if l[1] == "2"], "kernel threads relayed")
        m = d.metrics()
        agg = f"{AGG_IP}:{PORT}"
        check(value(m, "memtrack_relay_connected", aggregator=agg) == 1, "connected")
        check(value(m, "memtrack_relay_dropped_total", aggregator=agg) == 0, "dropped")
        check(value(m, "memtrack_relay_acked_seq", aggregator=agg) >= 10, "acked")
        check(all("node" not in l for rows in m.values() for l, _ in rows),
              "a node label without node_label")


@test
def node_label_on_the_relay_families():
    """node_label = yes puts node="node-a" on the relay's series too; the
    HELLO names the node either way."""
    with Agg() as a, node(node_label="yes") as d:
        a.wait_for(lambda e: e["ev"] == "data" and e["seq"] >= 2, 30)
        check([h["node"] for h in a.of("hello")] == ["node-a"], f"hello {a.of('hello')}")
        m = d.metrics()
        agg = f"{AGG_IP}:{PORT}"
        for name in ("memtrack_relay_connected", "memtrack_relay_acked_seq"):
            check(value(m, name, aggregator=agg, node="node-a") is not None, name)
        for name in ("memtrack_relay_buffered_messages", "memtrack_relay_next_seq"):
            check(m[name][0][0] == {"node": "node-a"}, f"{name}: {m[name]}")


@test
def aggregator_name_that_does_not_resolve():
    """An aggregator by a name that does not resolve: logged as such, tried
    again with back-off, /metrics served meanwhile."""
    with relay_node(NODE_NS, "no.such.host.invalid:9472") as d:
        time.sleep(1)
        m = d.metrics()
        check(value(m, "memtrack_relay_connected",
                    aggregator="no.such.host.invalid:9472") == 0, "connected")
        # no DNS server in the namespace: the resolver's failure, not the name's
        log = d.stderr()
        check(re.search(r"relay: no\.such\.host\.invalid port 9472: cannot resolve "
                        r"no\.such\.host\.invalid: [^;\n]+; again in \d+ ms", log),
              f"log {log[-300:]!r}")
        check(d.alive(), "died")


@test
def link_cut_loses_nothing():
    with Agg() as a, node() as d:
        a.wait_for(lambda e: e["ev"] == "data" and e["seq"] >= 5, 30)
        NETNS.set_link(AGG_NS, AGG_IF, False)
        time.sleep(4)
        NETNS.set_link(AGG_NS, AGG_IF, True)
        before = max(e["seq"] for e in a.of("data"))
        a.wait_for(lambda e: e["ev"] == "data" and e["seq"] >= before + 25, 60)
        seqs = [e["seq"] for e in a.of("data")]
        check(contiguous(seqs), f"gaps: {sorted(set(range(1, max(seqs) + 1)) - set(seqs))}")
        check(value(d.metrics(), "memtrack_relay_dropped_total") == 0, "dropped")


@test
def aggregator_restart_loses_nothing():
    with node() as d:
        with Agg() as a1:
            a1.wait_for(lambda e: e["ev"] == "data" and e["seq"] >= 5, 30)
        first = [e["seq"] for e in a1.of("acked")]
        time.sleep(3)          # snapshots pile up in the node's buffer
        with Agg() as a2:
            a2.wait_for(lambda e: e["ev"] == "data" and e["seq"] >= max(first) + 20, 60)
            second = [e["seq"] for e in a2.of("data")]
            h = a2.of("hello")
        check(h[0]["session"] == a1.of("hello")[0]["session"], "same session")
        check(min(second) <= max(first) + 1, f"second starts at {min(second)}, first acked {max(first)}")
        check(contiguous(first + second), "gaps across the restart")
        m = d.metrics()
        check(value(m, "memtrack_relay_dropped_total") == 0, "dropped")
        check(value(m, "memtrack_relay_connects_total") >= 2, "reconnected")


@test
def full_buffer_drops_are_counted():
    # a buffer of about 4 snapshots (a line per process: 1 to 6 KiB on a
    # test host, kernel threads left out)
    with Agg() as a0, node() as d:
        a0.wait_for(lambda e: e["ev"] == "data", 30)
        size = max(len(e["body"]) for e in a0.of("data"))
    with node(relay_buffer_kb=max(4, 4 * size // 1024)) as d:
        with Agg() as a1:
            a1.wait_for(lambda e: e["ev"] == "data" and e["seq"] >= 3, 30)
        acked1 = {e["seq"] for e in a1.of("acked")}
        time.sleep(5)          # ~25 snapshots, far more than fit
        with Agg() as a2:
            a2.wait_for(lambda e: e["ev"] == "data", 30)
            time.sleep(1)
            # stop the node first: no new message after the count is read
            m = d.metrics()
            got = {e["seq"] for e in a2.of("acked")}
        top = max(got)
        missing = set(range(1, top + 1)) - acked1 - got
        dropped = value(m, "memtrack_relay_dropped_total")
        size = len(a2.of("data")[0]["body"])
        check(missing, f"nothing dropped: buffer too large for the test "
              f"({dropped}, {sorted(acked1)}, {sorted(got)}, {size} B)")
        # what is missing is what was dropped (a few later ones may be
        # dropped after `top` too)
        later = value(m, "memtrack_relay_next_seq") - 1 - top
        check(len(missing) <= dropped <= len(missing) + max(later, 0),
              f"dropped {dropped}, missing {len(missing)} (+{later} after)")
        check(min(got) == min(s for s in range(1, top + 1) if s not in acked1 and s not in missing),
              "second starts at the oldest kept")


@test
def misbehaving_aggregators_refused():
    for mode in ("garbage", "future", "badack", "truncated", "noack"):
        with Agg(mode) as bad, node() as d:
            bad.wait_for(lambda e: e["ev"] == "hello", 30)
            if mode in ("badack", "garbage", "future", "truncated"):
                bad.wait_for(lambda e: e["ev"] == "hello", 30)   # it came back
            time.sleep(1)
            check(d.alive(), f"{mode}: node died")
            m = d.metrics()
            check(value(m, "memtrack_relay_dropped_total") is not None, f"{mode}: metrics")
            if mode != "noack":
                check("relay: " in d.stderr(), f"{mode}: nothing logged")
        # then a good one gets everything from 1
        with Agg() as good, node() as d:
            good.wait_for(lambda e: e["ev"] == "data" and e["seq"] >= 3, 30)
            check(contiguous([e["seq"] for e in good.of("data")]), f"{mode}: after")


if __name__ == "__main__":
    sys.exit(main(sys.argv, setup=netns_setup, cleanup=NETNS.delete, root="relay"))
