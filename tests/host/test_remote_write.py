#!/usr/bin/env python3
"""Host tests of memtrackd's Prometheus remote write (remote_write = URL):
three nodes, each memtrackd in /proc mode in its own network and pid
namespace (tests/host/cluster_node.py, as test_cluster.py runs them) with
copies of memload of known sizes, writing to Debian's real Prometheus
(--web.enable-remote-write-receiver) in a fourth namespace; and a fake
receiver on loopback that answers what a test tells it to.

Asserts: PromQL over Prometheus's HTTP API gives, per node and summed,
exactly each node's own /metrics for the workload's series, and every
family of /metrics under the node's label; Prometheus stopped for 10 s and
started again: no sample missing (the raw samples of a series have no gap
of two intervals), nothing dropped or failed, retries
counted, and at the end samples in = sent + failed + dropped + not sent
with sent equal to the samples Prometheus holds; against the fake: the
headers of the spec, a batch answered 500, 429 or garbage sent again
byte for byte, a 400 counted failed and not sent again, a 503 or 429
with Retry-After (seconds, HTTP date) holding the batch back that long;
a full queue counted dropped exactly; basic auth and a bearer token on the wire, TLS
with a client certificate, a server of another CA never sent to; bad
configuration refused with its line.

Needs root, iproute2, util-linux, curl, prometheus.  Run with
tests/lib/harness.py: test names as arguments run only those, --list
prints them; PASS/FAIL lines; exits 1 if any failed."""
import base64
import email.utils
import functools
import http.server
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "guest"), os.path.join(HERE, "..", "lib")]
from mtdlib import (DAEMON, DASHBOARD, QUERY, dashboard_queries, dashboard_variable,  # noqa: E402
                    free_port, grafana_regex, grafana_values, parse, value)
from tls_keys import Keys  # noqa: E402
from harness import Netns, check, main, test  # noqa: E402
from mtdnet import SIZES, Aggregator, ClusterNode, refused_conf, star  # noqa: E402
from mtdnet import wait_for as _wait_for  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
SUFFIX = str(os.getpid())
PROM_NS = f"mtrp{SUFFIX}"
PROM_PORT = 9090
NODE_PORT = 9471
INTERVAL_MS = 500
COMM = "mtdrw"
NODES = [f"rw-node-{i}" for i in range(len(SIZES))]
NETNS = Netns()
# Prometheus is asked with curl: every 0.25 s
wait_for = functools.partial(_wait_for, every=0.25)
ACCOUNT = re.compile(r"remote write (\S+): samples in (\d+), sent (\d+), failed (\d+), "
                     r"dropped (\d+), not sent (\d+)")


def node_ns(i):
    return f"mtrn{i}{SUFFIX}"


def node_ip(i):
    return f"10.215.{i}.1", f"10.215.{i}.2"


def netns_setup():
    star(NETNS, PROM_NS, [(node_ns(i), (f"vrn{i}{SUFFIX}"[:15], node_ip(i)[0]),
                           (f"vrp{i}{SUFFIX}"[:15], node_ip(i)[1])) for i in range(len(NODES))])


def accounts(log):
    """The last words of memtrackd's log on its remote write URLs, each
    (URL, {in, sent, failed, dropped, pending} as ints)."""
    return [(u, dict(zip(("in", "sent", "failed", "dropped", "pending"), map(int, r))))
            for u, *r in ACCOUNT.findall(log)]


class Prometheus:
    """Debian's prometheus in PROM_NS, a remote write receiver, scraping
    the targets scrape names (HOST:PORT) every second, if any; stop() and
    start() keep its data."""

    def __init__(self, scrape=()):
        self.dir = tempfile.mkdtemp(prefix="mtdprom.")
        with open(os.path.join(self.dir, "prom.yml"), "w") as f:
            f.write("global:\n  scrape_interval: 1h\n")
            if scrape:
                f.write("scrape_configs:\n  - job_name: memtrackd\n"
                        "    scrape_interval: 1s\n    static_configs:\n"
                        f"      - targets: {json.dumps(list(scrape))}\n")
        self.p = None
        self.start()

    def start(self):
        self.err = open(os.path.join(self.dir, "log"), "a")
        self.p = subprocess.Popen(NETNS.cmd(PROM_NS, "prometheus",
                                            f"--config.file={self.dir}/prom.yml",
                                            f"--storage.tsdb.path={self.dir}/data",
                                            f"--web.listen-address=0.0.0.0:{PROM_PORT}",
                                            "--web.enable-remote-write-receiver"),
                                  stdout=subprocess.DEVNULL, stderr=self.err)
        deadline = time.time() + 60
        while not self.ready():
            if self.p.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"prometheus did not start: {self.log()[-2000:]}")
            time.sleep(0.2)

    def ready(self):
        r = subprocess.run(NETNS.cmd(PROM_NS, "curl", "-sf",
                                     f"http://127.0.0.1:{PROM_PORT}/-/ready"),
                           capture_output=True)
        return r.returncode == 0

    def log(self):
        with open(os.path.join(self.dir, "log")) as f:
            return f.read()

    def stop(self):
        if self.p and self.p.poll() is None:
            self.p.terminate()
            self.p.wait(timeout=60)
        self.err.close()

    def query(self, q, at=None):
        """The result of an instant query (a list of {metric, value})."""
        args = ["curl", "-sf", "-G", f"http://127.0.0.1:{PROM_PORT}/api/v1/query",
                "--data-urlencode", f"query={q}"]
        if at is not None:
            args += ["--data-urlencode", f"time={at}"]
        r = subprocess.run(NETNS.cmd(PROM_NS, *args), capture_output=True, text=True,
                           timeout=30)
        check(r.returncode == 0, f"query {q}: curl {r.returncode}")
        body = json.loads(r.stdout)
        check(body["status"] == "success", f"query {q}: {body}")
        return body["data"]["result"]

    def scalar(self, q):
        res = self.query(q)
        check(len(res) == 1, f"{q}: {len(res)} results {res}")
        return float(res[0]["value"][1])

    def close(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class Node(ClusterNode):
    """cluster_node.py in node i's namespaces, writing to Prometheus, or
    (scraped) serving /metrics on its veth's address for Prometheus to
    scrape, as self.instance."""

    def __init__(self, i, extra="", scraped=False):
        self.i, self.name = i, NODES[i]
        self.instance = f"{node_ip(i)[0]}:{NODE_PORT}"
        self.dir = tempfile.mkdtemp(prefix="mtdrwn.")
        self.conf = os.path.join(self.dir, "node.conf")
        with open(self.conf, "w") as f:
            f.write("[memtrackd]\n"
                    f"node = {self.name}\nport = {NODE_PORT}\nsource = proc\n"
                    f"sample_interval_ms = {INTERVAL_MS}\nuser = root\n"
                    + ("listen = 0.0.0.0\n" if scraped else
                       f"remote_write = http://{node_ip(i)[1]}:{PROM_PORT}/api/v1/write\n")
                    + extra)
        super().__init__(node_ns(i), self.name, self.conf, NODE_PORT, COMM, SIZES[i])

    def account(self):
        """SIGTERM memtrackd: its last word on each URL, as ints."""
        check(self.cmd("term") == {"status": 0}, f"{self.name}: exit {self.stderr()}")
        got = accounts(self.stderr())
        check(len(got) == 1, f"{self.name}: account lines {got}")
        return got[0][1]

    def close(self):
        super().close()
        shutil.rmtree(self.dir, ignore_errors=True)


class Setup:
    def __init__(self, extra=lambda i: "", scraped=()):
        """extra(i): node i's further configuration lines; the nodes
        scraped (their indexes) are scraped by Prometheus, the others
        remote-write to it."""
        self.prom = Prometheus([f"{node_ip(i)[0]}:{NODE_PORT}" for i in scraped])
        self.nodes = []
        try:
            for i in range(len(NODES)):
                self.nodes.append(Node(i, extra(i), i in scraped))
        except Exception:
            self.close()
            raise

    def close(self):
        for n in self.nodes:
            n.close()
        self.prom.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


WORK = ["memtrack_program_processes", "memtrack_program_rss_anon_bytes",
        "memtrack_program_rss_file_bytes", "memtrack_program_rss_shmem_bytes",
        "memtrack_program_swap_bytes"]


def all_seen(prom):
    res = prom.query(f'memtrack_program_processes{{comm="{COMM}"}}')
    got = {r["metric"].get("node"): int(r["value"][1]) for r in res}
    return got == {n: len(s) for n, s in zip(NODES, SIZES)}


@test
def prometheus_holds_each_nodes_metrics():
    with Setup() as s:
        wait_for(lambda: all_seen(s.prom), 60, "every node's workload in Prometheus")
        for fam in WORK:
            total = 0
            for n in s.nodes:
                m = n.metrics()
                want = value(m, fam, comm=COMM)
                check(want is not None, f"{n.name}: no {fam} in /metrics")
                got = s.prom.scalar(f'{fam}{{comm="{COMM}",node="{n.name}"}}')
                check(got == want, f"{n.name} {fam}: Prometheus {got}, /metrics {want}")
                total += want
            got = s.prom.scalar(f'sum({fam}{{comm="{COMM}"}})')
            check(got == total, f"sum {fam}: Prometheus {got}, the nodes' {total}")
        # every family of /metrics, under the node's label and no other
        for n in s.nodes:
            names = set(n.metrics())
            res = s.prom.query(f'count by (__name__) ({{node="{n.name}"}})')
            held = {r["metric"]["__name__"] for r in res}
            check(names == held, f"{n.name}: only in /metrics {sorted(names - held)}, "
                  f"only in Prometheus {sorted(held - names)}")
            res = s.prom.query(f'memtrack_build_info{{node="{n.name}"}}')
            check(len(res) == 1 and res[0]["metric"] == {
                "__name__": "memtrack_build_info", "node": n.name,
                "version": open(os.path.join(ROOT, "VERSION")).read().strip()},
                f"{n.name}: build_info {res}")
            # the node's name as the node label has it; the nodes share
            # the host's kernel (only their network and pids are apart)
            res = s.prom.query(f'memtrack_node_info{{node="{n.name}"}}')
            check(len(res) == 1 and res[0]["metric"] == {
                "__name__": "memtrack_node_info", "node": n.name, "nodename": n.name,
                "machine": os.uname().machine, "release": os.uname().release,
                "source": "proc"}, f"{n.name}: node_info {res}")


@test
def a_process_gone_is_stale_at_once():
    """A series a sample no longer has gets Prometheus's staleness marker,
    as a scrape gives it: a process killed leaves PromQL's answers (its
    per-process series, its program's process count) within 5 s, where
    without the marker they answered for Prometheus's 5-minute lookback;
    the other nodes' workload stays."""
    with Setup(lambda i: "top_pids = 20\n") as s:
        wait_for(lambda: all_seen(s.prom), 60, "every node's workload in Prometheus")
        node = s.nodes[0]
        pid = node.cmd("named " + b"flash1".hex())["pid"]   # the comm in hex
        mine = (f'memtrack_process_rss_anon_bytes{{node="{node.name}",pid="{pid}"}}',
                f'memtrack_program_processes{{node="{node.name}",comm="flash1"}}')
        wait_for(lambda: all(s.prom.query(q) for q in mine), 30, "flash1 in Prometheus")
        check(node.cmd(f"endnamed {pid}") == {"ok": True}, "flash1 not killed")
        gone = time.time()
        wait_for(lambda: not any(s.prom.query(q) for q in mine), 5,
                 "flash1's series stale after its exit")
        check(time.time() - gone < 5 and all_seen(s.prom),
              "the workload of every node still answered")


@test
def grafana_dashboard_queries_run():
    """Every query of packaging/grafana-dashboard.json is PromQL that
    Prometheus evaluates (over the range the panels use), and the memory
    panels' have an answer per program and per node."""
    with Setup() as s:
        wait_for(lambda: all_seen(s.prom), 60, "every node's workload in Prometheus")
        time.sleep(2)
        for q in dashboard_queries():
            s.prom.query(q)     # a parse or evaluation error fails here
        qs = dashboard_queries()
        comms = {r["metric"].get("comm") for r in s.prom.query(qs[0])}
        check(COMM in comms, f"memory by program: {comms}")
        by_node = {r["metric"].get("node") for r in s.prom.query(qs[2])}
        check(set(NODES) <= by_node, f"memory by node: {by_node}")
        # "used" as htop and node_exporter's dashboards have it: total
        # less MemAvailable, not less MemFree (page cache is not in use)
        at = time.time() - 1
        used = panel_target("Memory by node", "A").replace("$node", ".*")

        def per_node(q):
            return {r["metric"]["node"]: float(r["value"][1]) for r in s.prom.query(q, at)}
        got = per_node(used)
        want = per_node("memtrack_memory_total_bytes - memtrack_memory_available_bytes")
        free = per_node("memtrack_memory_total_bytes - memtrack_memory_free_bytes")
        for n in NODES:
            check(got.get(n) == want.get(n) and got.get(n) != free.get(n),
                  f"{n}: used {got.get(n)}, total - available {want.get(n)}, "
                  f"total - free {free.get(n)}")


def panel_target(title, ref):
    """The expression of the dashboard panel whose title starts with title,
    target ref."""
    with open(DASHBOARD) as f:
        dash = json.load(f)
    for p in dash["panels"]:
        if p.get("title", "").startswith(title):
            for t in p["targets"]:
                if t["refId"] == ref:
                    return t["expr"]
    raise AssertionError(f"no panel {title!r} with a target {ref}")


def raw_times(prom, node, seconds):
    """The timestamps (s) of memtrack_build_info's samples of the node."""
    res = prom.query(f'memtrack_build_info{{node="{node}"}}[{seconds}s]')
    check(len(res) == 1, f"{node}: {len(res)} series")
    return [float(t) for t, _ in res[0]["values"]]


@test
def prometheus_down_10s_loses_nothing():
    with Setup() as s:
        wait_for(lambda: all_seen(s.prom), 60, "every node's workload in Prometheus")
        time.sleep(2)
        s.prom.stop()
        down = time.time()
        time.sleep(10)
        s.prom.start()
        up = time.time()

        def drained():
            return all(value(n.metrics(), "memtrack_remote_write_samples_pending") == 0
                       for n in s.nodes)
        wait_for(drained, 60, "every queue empty")
        time.sleep(1)
        for n in s.nodes:
            m = n.metrics()
            check(value(m, "memtrack_remote_write_retries_total") > 0,
                  f"{n.name}: no retry counted")
            check(value(m, "memtrack_remote_write_samples_dropped_total") == 0 and
                  value(m, "memtrack_remote_write_samples_failed_total") == 0,
                  f"{n.name}: dropped or failed")
            # samples are at least an interval apart (the next is due an
            # interval after the last): one missing leaves two intervals
            times = raw_times(s.prom, n.name, int(time.time() - down) + 30)
            gaps = [b - a for a, b in zip(times, times[1:])]
            check(times[0] < down - 1 and times[-1] > up and
                  max(gaps) < 2 * INTERVAL_MS / 1000,
                  f"{n.name}: samples {times[0]:.1f}..{times[-1]:.1f} around the outage "
                  f"{down:.1f}..{up:.1f}, largest gap {max(gaps):.3f} s")
            assert "connect" in n.stderr().lower() or "retrying" in n.stderr(), n.stderr()
        # the account at the end, and every sent sample in Prometheus
        for n in s.nodes:
            a = n.account()
            check(a["in"] == a["sent"] + a["failed"] + a["dropped"] + a["pending"] and
                  a["pending"] == 0 and a["dropped"] == 0 and a["failed"] == 0,
                  f"{n.name}: {a}")
            held = sum(len(r["values"]) for r in s.prom.query(f'{{node="{n.name}"}}[1h]'))
            check(held == a["sent"], f"{n.name}: Prometheus holds {held}, sent {a['sent']}")


AGG_PORT = 9472
TOP = os.path.join(ROOT, "build", "bin", "memtrack-top")


def ask(*args):
    """memtrack-query in PROM_NS: (exit status, JSON or None, stderr)."""
    r = subprocess.run(NETNS.cmd(PROM_NS, QUERY, "-t", "10000", "--json", *args),
                       capture_output=True, text=True, timeout=60)
    return r.returncode, json.loads(r.stdout) if r.returncode == 0 else None, r.stderr


@test
def prometheus_backend_answers_as_the_aggregator():
    """The nodes relay to an aggregator and remote-write to Prometheus;
    with the workload constant, each query gets the same answer, rows in
    the same order, from both (memtrack-query -s and -P; memtrack-top -b
    --cluster HOST:PORT and prometheus:URL)."""
    agg = Aggregator(PROM_NS, {"listen": "0.0.0.0", "port": AGG_PORT})
    server = ["-s", f"127.0.0.1:{AGG_PORT}"]
    prom = ["-P", f"http://127.0.0.1:{PROM_PORT}"]
    try:
        with Setup(lambda i: f"aggregators = {node_ip(i)[1]}:{AGG_PORT}\ntop_pids = 20\n") as s:
            wait_for(lambda: all_seen(s.prom), 60, "every node's workload in Prometheus")

            def agg_seen():
                rc, rows, _ = ask(*server, "sum", "nproc", "by", "node", "where", f"comm={COMM}")
                return rc == 0 and {r["node"]: r["nproc"] for r in rows} == {
                    n: len(sz) for n, sz in zip(NODES, SIZES)}
            wait_for(agg_seen, 60, "every node's workload in the aggregator")
            queries = [
                ["sum", "rss,anon,file,shmem,swap,nproc", "by", "node", "where", f"comm={COMM}"],
                ["sum", "rss,nproc", "by", "comm", "where", f"comm={COMM}"],
                ["sum", "anon,rss", "where", f"comm={COMM}"],
                ["sum", "rss", "by", "node,comm", "where", f"comm={COMM}"],
                ["sum", "nproc", "by", "node"],
                ["top", "5", "where", f"comm={COMM}"],
                ["top", "3", "by", "anon", "where", f"comm={COMM}", "and", f"node={NODES[2]}"],
                ["sum", "rss", "where", "comm=nosuchprogram"],
            ]
            for q in queries:
                a, p = ask(*server, *q), ask(*prom, *q)
                check(a[0] == 0 and a[1], f"{q}: aggregator {a}")
                check(p == a, f"{q}: Prometheus {p}, aggregator {a}")
            a, p = ask(*server, "nodes"), ask(*prom, "nodes")
            pick = [{k: r[k] for k in ("node", "state")} for r in a[1]]
            check(sorted(pick, key=lambda r: r["node"]) ==
                  sorted(({k: r[k] for k in ("node", "state")} for r in p[1]),
                         key=lambda r: r["node"]) and len(pick) == 3, f"nodes: {p} {a}")
            check(all(r["processes"] > len(sz) for r, sz in
                      zip(sorted(p[1], key=lambda r: r["node"]), SIZES)), f"nodes: {p}")
            # refused the same way, events not at all
            for q in (["sum", "bogus"], ["top", "0"], ["frobnicate"]):
                a, p = ask(*server, *q), ask(*prom, *q)
                check(a[0] == p[0] == 2 and a[2] == p[2], f"{q}: {p} {a}")
            rc, _, err = ask(*prom, "events", NODES[0])
            check(rc == 2 and "aggregator" in err, f"events: {rc} {err}")
            # memtrack-top's cluster batch: the workload's rows alike
            tops = []
            for target in (f"127.0.0.1:{AGG_PORT}", f"prometheus:http://127.0.0.1:{PROM_PORT}"):
                r = subprocess.run(NETNS.cmd(PROM_NS, TOP, "-b", "-n", "1", "--json",
                                             "--cluster", target),
                                   capture_output=True, text=True, timeout=60)
                check(r.returncode == 0, f"memtrack-top --cluster {target}: {r.stderr}")
                lines = [json.loads(x) for x in r.stdout.splitlines()]
                check(lines[0]["nodes_up"] == 3, f"{target}: {lines[0]}")
                tops.append([x for x in lines[1:] if x.get("comm") == COMM])
            check(tops[0] == tops[1] and len(tops[0]) == 1 + sum(map(len, SIZES)),
                  f"memtrack-top: {tops}")
    finally:
        agg.stop()
        shutil.rmtree(agg.dir, ignore_errors=True)


@test
def scraped_and_remote_written_nodes_apart():
    """Prometheus scrapes nodes 0 and 1 (no node label: their series carry
    instance and job) and node 2 remote-writes (node="rw-node-2"); a
    scraped node is named by its instance.  memtrack-query -P: nodes lists
    exactly the three, up, each name non-empty; sum by node gives each node
    its own workload figures, equal to its /metrics; where node=INSTANCE
    picks one scraped node alone (sum and top).  The dashboard: the node
    variable (query_result, its regex, as Grafana reads it) has the three;
    a by (node) panel has a series per node, and with the variable set to
    a scraped node's instance only that one; memtrack_node_info joins a
    scraped instance to its nodename."""
    scraped = (0, 1)
    prom = ["-P", f"http://127.0.0.1:{PROM_PORT}"]
    with Setup(lambda i: "top_pids = 20\n", scraped=scraped) as s:
        names = [n.instance if n.i in scraped else n.name for n in s.nodes]

        def seen():
            rc, rows, _ = ask(*prom, "sum", "nproc", "by", "node", "where", f"comm={COMM}")
            return rc == 0 and {r["node"]: r["nproc"] for r in rows} == {
                name: len(sz) for name, sz in zip(names, SIZES)}
        wait_for(seen, 60, "every node's workload in Prometheus, apart")
        rc, rows, err = ask(*prom, "nodes")
        check(rc == 0 and sorted(r["node"] for r in rows) == sorted(names) and
              all(r["state"] == "up" and r["processes"] > len(sz)
                  for r, sz in zip(sorted(rows, key=lambda r: names.index(r["node"])), SIZES)),
              f"nodes: {rows} {err}, want {names}")
        # each node's own figures: the workload is still, so the last
        # scrape or write holds what /metrics says now
        rc, rows, err = ask(*prom, "sum", "nproc,anon", "by", "node", "where", f"comm={COMM}")
        want = {name: (len(sz), value(n.metrics(), "memtrack_program_rss_anon_bytes", comm=COMM))
                for name, sz, n in zip(names, SIZES, s.nodes)}
        got = {r["node"]: (r["nproc"], r["anon"]) for r in rows or []}
        check(rc == 0 and got == want, f"sum by node: {got}, the nodes' {want} {err}")
        for i in scraped:
            rc, rows, err = ask(*prom, "sum", "nproc,anon", "where", f"comm={COMM}", "and",
                                f"node={names[i]}")
            check(rc == 0 and [(r["nproc"], r["anon"]) for r in rows] == [want[names[i]]],
                  f"where node={names[i]}: {rows} {err}, want {want[names[i]]}")
            pids = sorted(p["pid"] for p in s.nodes[i].cmd("status")["procs"])
            rc, rows, err = ask(*prom, "top", "10", "where", f"comm={COMM}", "and",
                                f"node={names[i]}")
            check(rc == 0 and {r["node"] for r in rows} == {names[i]} and
                  sorted(r["pid"] for r in rows) == pids,
                  f"top where node={names[i]}: {rows} {err}, want pids {pids}")
        # the dashboard
        q, regex = dashboard_variable("node")
        got = grafana_values(s.prom.query(q), regex)
        check(sorted(got) == sorted(names), f"the node variable: {got}, want {names}")
        oom = panel_target("OOM kills", "A")

        def per_node():
            return sorted(r["metric"].get("node")
                          for r in s.prom.query(oom.replace("$node", ".*")))
        # increase() needs two samples of a node: two scrapes
        wait_for(lambda: per_node() == sorted(names), 30,
                 f"the OOM kills panel with a series for each of {names}")
        one = s.prom.query(oom.replace("$node", grafana_regex([names[1]])))
        check([r["metric"].get("node") for r in one] == [names[1]],
              f"OOM kills of {names[1]} alone: {one}")
        both = s.prom.query(oom.replace("$node", grafana_regex([names[0], names[2]])))
        check(sorted(r["metric"].get("node") for r in both) == sorted([names[0], names[2]]),
              f"OOM kills of {names[0]} and {names[2]}: {both}")
        join = s.prom.query("memtrack_node_info")
        check(sorted((r["metric"].get("instance", r["metric"].get("node")),
                      r["metric"]["nodename"]) for r in join) ==
              sorted(zip(names, NODES)), f"memtrack_node_info: {join}")


class Fake:
    """A receiver on 127.0.0.1 answering from a script: each request takes
    the next answer (an HTTP status, (status, headers), or "garbage"), the
    last one repeated; it keeps each request's headers, body, peer
    certificate and monotonic arrival time."""

    def __init__(self, answers, tls=None, auth=None):
        self.answers, self.requests = list(answers), []
        fake = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                peer = (self.connection.getpeercert()
                        if isinstance(self.connection, ssl.SSLSocket) else None)
                fake.requests.append((dict(self.headers), body, peer, time.monotonic()))
                a = fake.answers.pop(0) if len(fake.answers) > 1 else fake.answers[0]
                a, extra = a if isinstance(a, tuple) else (a, {})
                if auth and self.headers.get("Authorization") != auth:
                    a = 401
                if a == "garbage":
                    self.wfile.write(b"\x00\x01 not http at all\r\n\r\n")
                    self.close_connection = True
                    return
                # a 204 has no body (one would be read as the next answer)
                body = b"" if a == 204 else b"why\n"
                self.send_response(a)
                for k, v in extra.items():
                    self.send_header(k, v() if callable(v) else v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class S(http.server.ThreadingHTTPServer):
            def handle_error(self, *a):
                pass    # the garbage answer's connection, reset by curl

        self.srv = S(("127.0.0.1", 0), H)
        if tls:
            self.srv.socket = tls.wrap_socket(self.srv.socket, server_side=True)
        self.port = self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


class Local:
    """memtrackd on the host's loopback, /proc mode, its log kept."""

    def __init__(self, url, extra=""):
        port = free_port()
        self.dir = tempfile.mkdtemp(prefix="mtdrwl.")
        self.conf = os.path.join(self.dir, "c.conf")
        self.port = port
        with open(self.conf, "w") as f:
            f.write(f"[memtrackd]\nnode = local\nlisten = 127.0.0.1:{port}\nsource = proc\n"
                    f"sample_interval_ms = {INTERVAL_MS}\nuser = root\n"
                    f"remote_write = {url}\n" + extra)
        self.log = os.path.join(self.dir, "log")
        with open(self.log, "w") as err:
            self.p = subprocess.Popen([DAEMON, "-f", "-c", self.conf],
                                      stdout=subprocess.DEVNULL, stderr=err)

    def stderr(self):
        with open(self.log) as f:
            return f.read()

    def value(self, name):
        """A series of its /metrics, None before it answers."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics",
                                        timeout=30) as r:
                return value(parse(r.read().decode()), name)
        except OSError:
            return None

    def account(self):
        self.p.send_signal(signal.SIGTERM)
        check(self.p.wait(timeout=60) == 0, f"exit {self.p.returncode}: {self.stderr()}")
        got = accounts(self.stderr())
        check(len(got) == 1, f"account lines {got}: {self.stderr()}")
        return got[0][1]

    def close(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


@test
def receiver_errors_retried_or_counted():
    fake = Fake([500, 429, "garbage", 204, 400, 204])
    d = Local(f"http://127.0.0.1:{fake.port}/api/v1/write")
    try:
        wait_for(lambda: len(fake.requests) >= 7, 60, "7 requests")
        a = d.account()
        reqs = fake.requests
        h = reqs[0][0]
        check(h.get("Content-Encoding") == "snappy" and
              h.get("Content-Type") == "application/x-protobuf" and
              h.get("X-Prometheus-Remote-Write-Version") == "0.1.0" and
              h.get("User-Agent", "").startswith("memtrackd/"), f"headers {h}")
        # 500, 429 and garbage: the same batch again, byte for byte
        check(reqs[0][1] == reqs[1][1] == reqs[2][1] == reqs[3][1],
              "a retried batch was not the same")
        check(reqs[4][1] != reqs[3][1] and reqs[5][1] != reqs[4][1],
              "the batch after a 204 or a 400 was sent again")
        log = d.stderr()
        # a failure logged once, then its end; the 400 with what it cost
        check(re.search(r"HTTP 500: why; retrying \(\d+ samples queued\)\n"
                        r".*: sending again\n.*HTTP 400: why; \d+ samples lost\n", log),
              log)
        lost = int(re.search(r"HTTP 400: why; (\d+) samples lost", log).group(1))
        check(a["failed"] == lost and lost > 0, f"{a}, lost {lost}")
        check(a["in"] == a["sent"] + a["failed"] + a["dropped"] + a["pending"] and
              a["dropped"] == 0, f"{a}")
    finally:
        d.close()
        fake.close()


@test
def retry_after_is_honoured():
    """A 503 or 429 with Retry-After (seconds, or an HTTP date) holds the
    same batch back that long instead of the 100 ms backoff; without it
    the batch comes again within a second."""
    def when():
        return email.utils.formatdate(time.time() + 4, usegmt=True)
    fake = Fake([(503, {"Retry-After": "3"}), 503, (429, {"Retry-After": when}), 204])
    d = Local(f"http://127.0.0.1:{fake.port}/w")
    try:
        wait_for(lambda: len(fake.requests) >= 5, 60, "5 requests")
        a = d.account()
        t = [r[3] for r in fake.requests]
        gaps = [round(t[i + 1] - t[i], 2) for i in range(4)]
        # seconds: 3 s; no header: the backoff (200 ms, the second retry);
        # a date 4 s on, whole seconds, taken a moment after it was made
        check(gaps[0] >= 3.0 and gaps[1] < 1.0 and gaps[2] >= 2.0,
              f"gaps {gaps}")
        check(fake.requests[0][1] == fake.requests[1][1] == fake.requests[2][1] ==
              fake.requests[3][1], "a held batch was not the same")
        log = d.stderr()
        asked = re.findall(r"retrying after (\d+) s, as the receiver asked\n", log)
        check(len(asked) == 2 and asked[0] == "3" and asked[1] in ("3", "4"), log)
        check(a["in"] == a["sent"] + a["failed"] + a["dropped"] + a["pending"] and
              a["failed"] == 0 and a["dropped"] == 0, f"{a}")
    finally:
        d.close()
        fake.close()


FIRST_DROP = re.compile(r"remote write (\S+): queue full \(remote_write_queue_samples = "
                        r"(\d+)\): a sample of (\d+) series dropped; drops are logged every "
                        r"10 s while they go on")
DROP_TOTAL = re.compile(r"remote write (\S+): queue full: (\d+) samples dropped in the last "
                        r"(\d+) s, (\d+) in all")


@test
def full_queue_counted_dropped():
    """A receiver always answering 503 and a queue of 1000 samples: once
    /metrics shows a drop, the first is logged at once (a whole sample's
    series), then a total no more often than every 10 s (never a line a
    sample); at SIGTERM in = dropped + pending, nothing sent or failed, and
    the logged totals add up to no more than the dropped count."""
    fake = Fake([503])
    url = f"http://127.0.0.1:{fake.port}/w"
    d = Local(url, "remote_write_queue_samples = 1000\nremote_write_timeout = 1s\n")
    try:
        wait_for(lambda: (d.value("memtrack_remote_write_samples_dropped_total") or 0) > 0,
                 60, "a sample dropped")
        t0 = time.monotonic()
        first = FIRST_DROP.findall(d.stderr())
        check(len(first) == 1 and first[0][:2] == (url, "1000") and int(first[0][2]) > 0,
              f"first drop logged {first}: {d.stderr()}")
        wait_for(lambda: DROP_TOTAL.search(d.stderr()), 20, "a total of drops logged")
        waited = time.monotonic() - t0
        a = d.account()
        log = d.stderr()
        totals = DROP_TOTAL.findall(log)
        check(len(FIRST_DROP.findall(log)) == 1 and 1 <= len(totals) <= waited / 10 + 1,
              f"{len(totals)} totals in {waited:.1f} s: {totals}")
        for u, k, secs, all_ in totals:
            check(u == url and int(secs) >= 10 and 0 < int(k) <= int(all_) <= a["dropped"],
                  f"total {u} {k} in {secs} s, {all_} in all; account {a}")
        check(int(totals[-1][3]) == int(first[0][2]) + sum(int(t[1]) for t in totals),
              f"totals {totals} after a first of {first[0][2]}")
        check(a["sent"] == 0 and a["failed"] == 0 and a["dropped"] > 0 and
              0 < a["pending"] <= 1000 and
              a["in"] == a["dropped"] + a["pending"], f"{a}")
    finally:
        d.close()
        fake.close()


@test
def two_urls_two_queues():
    """Two remote_write lines: one receiver accepts, the other answers 503;
    each URL has its own queue and account, the good one loses nothing."""
    good, bad = Fake([204]), Fake([503])
    d = Local(f"http://127.0.0.1:{good.port}/w",
              f"remote_write = http://127.0.0.1:{bad.port}/w\n")
    try:
        wait_for(lambda: len(good.requests) >= 4 and len(bad.requests) >= 4, 60,
                 "requests to both")
        d.p.send_signal(signal.SIGTERM)
        check(d.p.wait(timeout=60) == 0, f"exit: {d.stderr()}")
        acc = dict(accounts(d.stderr()))
        g, b = acc[f"http://127.0.0.1:{good.port}/w"], acc[f"http://127.0.0.1:{bad.port}/w"]
        check(g["in"] == b["in"] > 0, f"both offered the same: {acc}")
        check(g["sent"] + g["pending"] == g["in"] and g["failed"] == g["dropped"] == 0,
              f"good: {g}")
        check(b["sent"] == 0 and b["pending"] == b["in"], f"503: {b}")
    finally:
        d.close()
        good.close()
        bad.close()


def tls_keys():
    k = Keys(tempfile.mkdtemp(prefix="mtdrwk."))
    k.ca("ca", "memtrack test CA")
    k.ca("ca2", "another CA")
    k.cert("server", "127.0.0.1")
    k.cert("client", "rw-client")
    return k


def server_ctx(k):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(k.path("server.pem"), k.path("server.key"))
    ctx.load_verify_locations(k.path("ca.pem"))
    ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


@test
def basic_auth_bearer_and_tls_client_certificate():
    k = tls_keys()
    pw = k.path("pw")
    with open(pw, "w") as f:
        f.write("s3cret\n")
    os.chmod(pw, 0o600)
    tok = k.path("token")
    with open(tok, "w") as f:
        f.write("tok-123\n")
    os.chmod(tok, 0o600)
    basic = "Basic " + base64.b64encode(b"rwuser:s3cret").decode()
    cases = [
        (f"remote_write_user = rwuser\nremote_write_password_file = {pw}\n", basic),
        (f"remote_write_bearer_token_file = {tok}\n", "Bearer tok-123"),
    ]
    tls = (f"remote_write_ca_file = {k.path('ca.pem')}\n"
           f"remote_write_cert_file = {k.path('client.pem')}\n"
           f"remote_write_key_file = {k.path('client.key')}\n")
    try:
        for extra, want in cases:
            fake = Fake([204], tls=server_ctx(k), auth=want)
            d = Local(f"https://127.0.0.1:{fake.port}/w", extra + tls)
            try:
                wait_for(lambda: len(fake.requests) >= 2, 60, "2 requests")
                a = d.account()
                h, _, peer, _ = fake.requests[0]
                check(h.get("Authorization") == want, f"Authorization {h.get('Authorization')}")
                subject = dict(x[0] for x in peer["subject"])
                check(subject.get("commonName") == "rw-client", f"client certificate {peer}")
                check(a["sent"] > 0 and a["failed"] == 0, f"{a}")
            finally:
                d.close()
                fake.close()
        # a server whose certificate another CA signed: never sent to
        fake = Fake([204], tls=server_ctx(k))
        d = Local(f"https://127.0.0.1:{fake.port}/w",
                  f"remote_write_ca_file = {k.path('ca2.pem')}\n")
        try:
            wait_for(lambda: "retrying" in d.stderr(), 30, "a refused handshake")
            a = d.account()
            check(not fake.requests and a["sent"] == 0, f"{a}, {len(fake.requests)} requests")
        finally:
            d.close()
            fake.close()
    finally:
        shutil.rmtree(k.dir, ignore_errors=True)


@test
def bad_configuration_refused_with_its_line():
    d = tempfile.mkdtemp(prefix="mtdrwc.")
    key = os.path.join(d, "k")
    with open(key, "w") as f:
        f.write("x")
    os.chmod(key, 0o644)
    base = f"[memtrackd]\nsource = proc\nlisten = 127.0.0.1:{free_port()}\nuser = root\n"
    cases = [
        ("remote_write = ftp://x/\n", 2, r":5: remote_write = \"ftp://x/\": must be an http"),
        ("remote_write = http://u:p@h/w\n", 2, r":5: .*must not hold credentials"),
        ("remote_write = http:///w\n", 2, r":5: .*has no host"),
        ("remote_write_queue_samples = 5\n", 2, r":5: .*must be 100\.\.10000000"),
        ("remote_write_node_label = __x\n", 2, r":5: .*must be a label name"),
        ("remote_write_timeout = 10\n", 2, r":5: .*duration"),
        ("remote_write_password_file = relative\n", 2, r":5: .*absolute path"),
        ("remote_write = http://h/w\nremote_write_user = u\n", 2,
         r":5: remote_write_user and remote_write_password_file go together"),
        ("remote_write_user = u\n", 2, r":5: remote_write options without a remote_write URL"),
        ("sample_interval = 0\nremote_write = http://h/w\n", 2,
         r":6: remote_write needs sample_interval > 0"),
        (f"remote_write = http://h/w\nremote_write_cert_file = {key}\n"
         f"remote_write_key_file = {key}\n", 1,
         r"remote_write_key_file .*permissions 0644 are too open"),
    ]
    try:
        for body, code, want in cases:
            rc, err = refused_conf(base + body)
            check(rc == code and re.search(want, err),
                  f"{body!r}: exit {rc}, {err.strip()!r}, want {want}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv, setup=netns_setup, cleanup=NETNS.delete, root="memtrackd-remote-write"))
