#!/usr/bin/env python3
"""memtrackd in module mode, in the VM: /metrics against /proc/memtrack/tasks
and the summary at the same moment (the workloads stopped), what a daemon
without CAP_SYS_PTRACE sees, counts of exited processes, an OOM kill and RSS
growth alerts reaching their counters.  Run with --mem 256 (the OOM test).

    tests/vm/run --mem 256 -- python3 tests/guest/test_memtrackd.py [name ...]
"""
import decimal
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error

from mtlib import *  # noqa: F401,F403
from mtlib import (test, check, run_tests, read_table, summary, summary_int,
                   set_config, read_config, Stopped, TESTBIN, NOBODY, MODULE)
import mtrec
from mtrec import Ring, CLASS
import mtdlib
from mtdlib import Daemon, Named, value
from uapi import COUNTER_INFO

QUERY = os.path.join(mtdlib.ROOT, "build", "bin", "memtrack-query")

MiB = 1 << 20


def unique(prefix):
    """A comm no earlier run in this boot used (exited rows linger)."""
    return f"{prefix}{os.getpid() % 10000:04d}{int(time.time() * 10) % 100:02d}"

# memtrack_memory_NAME_bytes -> the summary's [system] line
MEMORY = {
    "total": "MemTotal", "free": "MemFree", "file": "FilePages", "anon": "AnonPages",
    "shmem": "Shmem", "mapped": "Mapped", "dirty": "Dirty", "writeback": "Writeback",
    "slab_reclaimable": "SReclaimable", "slab_unreclaimable": "SUnreclaim",
    "page_tables": "PageTables", "swap_free": "SwapFree",
}


def rows_of(comm, states=("R",)):
    return [r for rows in read_table().values() for r in rows
            if r["comm"] == comm and r["state"] in states]


def compare_program(m, comm, states):
    rows = rows_of(comm, states)
    live = [r for r in rows if r["state"] == "R"]
    check(value(m, "memtrack_program_processes", comm=comm) == len(live),
          f"processes: {value(m, 'memtrack_program_processes', comm=comm)} vs {len(live)}")
    for name, col in (("rss_anon", "rss_anon"), ("rss_file", "rss_file"),
                      ("rss_shmem", "rss_shmem"), ("swap", "swap")):
        got = value(m, f"memtrack_program_{name}_bytes", comm=comm)
        want = sum(r[col] for r in live)
        check(got == want, f"{name}: {got} vs tasks {want}")
    # every per-task counter of the ABI's list, by the family the list names
    for c in COUNTER_INFO:
        name = "memtrack_program_" + c["metric"]
        got = value(m, name, comm=comm)
        want = sum(r[c["name"]] for r in rows)
        if c["unit"] == "NS":
            got = None if got is None else round(got * 1e9)
        check(got == want, f"{name}: {got} vs tasks' {c['name']} {want}")
    got = value(m, "memtrack_program_oom_kills_total", comm=comm)
    want = sum(r["oom_victim"] for r in rows)
    check(got == want, f"oom_kills_total: {got} vs tasks {want}")
    return rows


# a family's name ends in its unit (Prometheus' naming rules)
UNIT_SUFFIX = {"COUNT": "_total", "BYTES": "_bytes_total",
               "NS": "_seconds_total", "NET_BYTES": "_bytes"}


@test
def every_counter_has_a_family():
    """Each counter of include/uapi/linux/memtrack_counters.h reaches
    /metrics as the family the list names, typed by its unit (a net size a
    gauge, the others counters), its HELP the list's, its name ending in its
    unit, and a heap's net growth going down as it shrinks."""
    comm = unique("mtdall")
    with Named(comm) as w, Daemon(source="module", keep_ptrace="yes",
                                  sample_interval_ms=0) as d:
        p = w.start(f"brk {4 * MiB}", f"brk {MiB}")
        with Stopped([p.pid]):
            text = d.text()
            m = mtdlib.parse(text)
            compare_program(m, comm, ("R",))
        w.cmd(p, "pop")
        with Stopped([p.pid]):
            m2 = d.metrics()
            compare_program(m2, comm, ("R",))
    names = set()
    for c in COUNTER_INFO:
        name = "memtrack_program_" + c["metric"]
        names.add(name)
        kind = "gauge" if c["unit"] == "NET_BYTES" else "counter"
        check(f"# TYPE {name} {kind}\n" in text, f"{name}: no TYPE {kind}")
        check(f"# HELP {name} {c['help']}\n" in text, f"{name}: not the list's HELP")
        suffix = UNIT_SUFFIX[c["unit"]]
        check(name.endswith(suffix) and (c["unit"] != "COUNT" or not
              name.endswith(("_bytes_total", "_seconds_total"))),
              f"{name}: unit {c['unit']} wants a name ending {suffix}")
    check(len(names) == len(COUNTER_INFO), "two counters share a family")
    brk = [value(x, "memtrack_program_brk_growth_bytes", comm=comm) for x in (m, m2)]
    check(brk[0] - brk[1] == MiB, f"brk growth {brk[0]} then {brk[1]}: the heap shrank by 1 MiB")


@test
def program_figures_match_module():
    comm = unique("mtdmod")
    with Named(comm) as w, Daemon(source="module", keep_ptrace="yes",
                                      sample_interval_ms=0) as d:
        for i in range(3):
            w.start(f"anon {(i + 1) * 2 * MiB}", f"shared {MiB}",
                    f"file {TESTBIN}/filedata {MiB}", "mmaps 10")
        with Stopped([p.pid for p in w.procs]):
            s0 = summary()
            m = d.metrics()
            s1 = summary()
            rows = compare_program(m, comm, ("R", "X"))
        check(len(rows) == 3, f"{len(rows)} rows")
        check(sum(r["mmap_calls"] for r in rows) >= 30, "workload ran")
        check(value(m, "memtrack_node_info", source="module") == 1, "source label")
        # system counters: between the summaries read around the scrape
        for metric, key in (("memtrack_page_alloc_calls_total", "PageAllocs"),
                            ("memtrack_page_free_calls_total", "PageFrees"),
                            ("memtrack_kmalloc_calls_total", "Kmallocs"),
                            ("memtrack_kfree_calls_total", "Kfrees")):
            got = value(m, metric)
            check(summary_int(key, s0) <= got <= summary_int(key, s1),
                  f"{metric} {got} not within {summary_int(key, s0)}..{summary_int(key, s1)}")
        check(value(m, "memtrack_oom_kills_total") == summary_int("OomKills", s1), "oom kills")
        check(value(m, "memtrack_memory_total_bytes") ==
              summary_int("MemTotal", s1) * 1024, "MemTotal")
        # the summary counts page allocation calls; pages are /proc's
        for name in ("memtrack_pages_allocated_total", "memtrack_pages_freed_total",
                     "memtrack_minor_page_faults_total",
                     "memtrack_info", "memtrack_memory_bytes"):
            check(name not in m, f"{name} in module mode")
        # MemAvailable, which the module has not: /proc/meminfo's (the
        # dashboard's used memory is total less it), read just before or
        # after a scrape
        for _ in range(20):
            a0 = meminfo()["MemAvailable"] * 1024
            got = value(d.metrics(), "memtrack_memory_available_bytes")
            a1 = meminfo()["MemAvailable"] * 1024
            if got in (a0, a1):
                break
        check(got in (a0, a1), f"memtrack_memory_available_bytes {got}: MemAvailable {a0}, {a1}")
        rc, out = promtool(d.text())
        check(rc == 0, f"promtool: {out}")


def system_bytes():
    """The summary's [system] section, bytes ([reclaim] has a Dirty and a
    Writeback of its own, counts)."""
    out, inside = {}, False
    with open("/proc/memtrack/summary", errors="surrogateescape") as f:
        for line in f:
            if line.startswith("["):
                inside = line.startswith("[system]")
            elif inside and ":" in line:
                k, _, v = line.partition(":")
                if v.split() and v.split()[0].isdigit():
                    out[k.strip()] = int(v.split()[0]) * 1024
    return out


@test
def memory_fields_match_summary():
    """Each memtrack_memory_*_bytes equals its [system] line of the summary
    read just before or after the scrape (between the two, for each field
    in one of 20 tries); and one more, MemAvailable's, which the summary
    has not (program_figures_match_module holds it to /proc/meminfo)."""
    pending = set(MEMORY)
    with Daemon(source="module", sample_interval_ms=0) as d:
        for _ in range(20):
            s0 = system_bytes()
            m = d.metrics()
            s1 = system_bytes()
            for f in list(pending):
                a, b = s0[MEMORY[f]], s1[MEMORY[f]]
                if min(a, b) <= value(m, f"memtrack_memory_{f}_bytes") <= max(a, b):
                    pending.discard(f)
            if not pending:
                break
    check(not pending, f"never within the summary's: {sorted(pending)}")
    families = sorted(n for n in m if n.startswith("memtrack_memory_"))
    check(families == sorted([f"memtrack_memory_{f}_bytes" for f in MEMORY] +
                             ["memtrack_memory_available_bytes"]),
          f"memory families {families}")


def kthread_comms():
    """Comms of kernel threads (PF_KTHREAD) that no other process has."""
    kt, user = set(), set()
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            flags = int(mtdlib.stat_fields(int(e))[6])
        except (OSError, IndexError):
            continue
        (kt if flags & 0x00200000 else user).add(mtdlib.comm_of(int(e)))
    return kt - user - {None}


@test
def kernel_threads_left_out():
    """Module mode: no kernel thread's program (its rows have no mm; the
    daemon checks PF_KTHREAD), alive or exited (a kworker's exit row), unless
    kernel_threads = yes."""
    kt = kthread_comms()
    check("kthreadd" in kt, f"kernel threads {sorted(kt)[:5]}")
    with Daemon(source="module", keep_ptrace="yes", sample_interval_ms=200,
                top_pids=1000) as d:
        time.sleep(1)
        m = d.metrics()
        seen = {l["comm"] for rows in m.values() for l, _ in rows if "comm" in l}
        check(not seen & kt, f"kernel threads: {sorted(seen & kt)[:8]}")
        check(not [c for c in seen if c.startswith("kworker/")], "kworker series")
        check("2" not in {l["pid"] for l, _ in m["memtrack_process_rss_anon_bytes"]}, "pid 2")
    with Daemon(source="module", kernel_threads="yes", sample_interval_ms=0) as d:
        m = d.metrics()
        check(value(m, "memtrack_program_processes", comm="kthreadd") == 1, "kthreadd")


def promtool(text):
    p = subprocess.run(["promtool", "check", "metrics"], input=text,
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


@test
def grafana_dashboard_names_exported_metrics():
    """Every metric packaging/grafana-dashboard.json queries is a family
    of the module-mode /metrics (remote write configured: its account's
    families too; the per-container ones by their TYPE line, without
    samples on a node without containers)."""
    names = mtdlib.dashboard_metrics()
    check(len(names) >= 15, f"dashboard names {sorted(names)}")
    with Daemon(source="module", sample_interval_ms=1000,
                remote_write="http://127.0.0.1:9/w") as d:
        text = d.text()
        families = {line.split()[2] for line in text.splitlines()
                    if line.startswith("# TYPE ")}
        check(set(mtdlib.parse(text)) <= families, "samples without a TYPE line")
    check(names <= families, f"not in /metrics: {sorted(names - families)}")


@test
def unprivileged_daemon_sees_what_proc_shows():
    """Without keep_ptrace the daemon (nobody) gets event counters of its
    own user's processes only; sizes and faults of everyone's."""
    with Named("mtdroot") as r, Named("mtdnobody") as n, \
            Daemon(source="module", sample_interval_ms=0) as d:
        r.start(f"anon {2 * MiB}", "mmaps 5")
        n.start(f"anon {2 * MiB}", "mmaps 5", uid=NOBODY)
        with Stopped([p.pid for p in r.procs + n.procs]):
            m = d.metrics()
            rr, nr = rows_of("mtdroot"), rows_of("mtdnobody")
        check(rr[0]["pg_alloc"] > 0 and nr[0]["pg_alloc"] > 0, "root sees both")
        check(value(m, "memtrack_program_pages_allocated_total", comm="mtdroot") == 0,
              "root's process's page allocs visible to nobody")
        check(value(m, "memtrack_program_pages_allocated_total", comm="mtdnobody") ==
              nr[0]["pg_alloc"], "nobody's own process")
        check(value(m, "memtrack_program_minor_page_faults_total", comm="mtdroot") ==
              rr[0]["min_flt"], "faults are public")
        check(value(m, "memtrack_program_rss_anon_bytes", comm="mtdroot") ==
              rr[0]["rss_anon"], "sizes are public")


@test
def exited_processes_keep_their_counts():
    comm = unique("mtdexit")
    with Named(comm) as w, Daemon(source="module", keep_ptrace="yes",
                                       sample_interval_ms=0) as d:
        for i in range(3):
            w.start(f"anon {(i + 1) * MiB}", "mmaps 3")
        d.metrics()
        before = {c["name"]: sum(r[c["name"]] for r in rows_of(comm))
                  for c in COUNTER_INFO}
        w.kill(w.procs[0])
        with Stopped([p.pid for p in w.procs]):
            m = d.metrics()
            rows = compare_program(m, comm, ("R", "X"))
        check(len([r for r in rows if r["state"] == "X"]) == 1, "one exited row")
        for c in COUNTER_INFO:
            if c["unit"] == "NET_BYTES":    # a net size, not a count
                continue
            name = "memtrack_program_" + c["metric"]
            got = value(m, name, comm=comm)
            if c["unit"] == "NS":
                got = round(got * 1e9)
            check(got >= before[c["name"]], f"{name} went down")


@test
def oom_kill_counted():
    with open("/proc/self/oom_score_adj", "w") as f:
        f.write("-1000")
    with Daemon(source="module", keep_ptrace="yes", sample_interval_ms=500) as d:
        m0 = d.metrics()
        k0 = summary_int("OomKills")
        hog = subprocess.Popen(["sh", "-c", "echo 1000 > /proc/self/oom_score_adj; "
                                f"exec {TESTBIN}/hog"])
        hog.wait(timeout=600)
        check(hog.returncode == -9, f"hog ended with {hog.returncode}")
        m1 = d.metrics()
        kills = summary_int("OomKills") - k0
        check(kills >= 1, "no OOM kill")
        check(value(m1, "memtrack_oom_kills_total") - value(m0, "memtrack_oom_kills_total")
              == kills, "system OOM counter")
        hog_rows = [r for r in rows_of("hog", ("X",)) if r["pid"] == hog.pid]
        check(hog_rows and hog_rows[0]["oom_victim"] == 1, "hog row")
        got = value(m1, "memtrack_program_oom_kills_total", comm="hog")
        was = value(m0, "memtrack_program_oom_kills_total", comm="hog") or 0
        check(got - was == 1, f"hog's OOM kills {was} -> {got}")
        check(d.alive(), "daemon killed")


def growth_alerts_settled(ring, quiet=2.5, limit=20):
    """RSS_GROWTH records of the ring until none came for `quiet` seconds:
    the sampler ticks once a second, so a jump spread over two ticks makes
    two alerts, and the last may come a tick after the growth ended."""
    alerts, last, start = [], time.monotonic(), time.monotonic()
    while time.monotonic() - last < quiet and time.monotonic() - start < limit:
        new = [r for r in ring.drain() if r.name == "RSS_GROWTH"]
        if new:
            alerts += new
            last = time.monotonic()
        time.sleep(0.1)
    return alerts


@test
def rss_growth_alert_counted():
    old = read_config()
    set_config("rss_growth_kbps", 2048)
    set_config("rss_alert_kb", 0)
    try:
        with Named("mtdgrow") as w, Daemon(source="module", keep_ptrace="yes",
                                           sample_interval_ms=0) as d:
            p = w.start()
            with Ring(CLASS["rss"], tgid=p.pid) as ring:
                time.sleep(1.5)
                m0 = d.metrics()
                w.cmd(p, f"anon {64 * MiB}")
                alerts = growth_alerts_settled(ring)
            # the daemon's copy comes by netlink in 20 ms batches: wait for
            # it to reach what the ring saw, then compare exactly
            deadline = time.monotonic() + 10
            while True:
                m1 = d.metrics()
                got = value(m1, "memtrack_program_rss_growth_alerts_total",
                            comm="mtdgrow")
                if got == len(alerts) or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
        check(alerts, "no RSS_GROWTH record for a 64 MiB jump")
        check(value(m1, "memtrack_event_overruns_total") == 0, "overruns")
        progs = {l["comm"]: v for l, v in
                 m1.get("memtrack_program_rss_growth_alerts_total", []) if v}
        check(got == len(alerts),
              f"program alerts {got}, ring saw {len(alerts)}: "
              f"{[(r.time_ns, r.body) for r in alerts]}; by program {progs}")
        check(value(m1, "memtrack_rss_growth_alerts_total") -
              value(m0, "memtrack_rss_growth_alerts_total") >= len(alerts), "node total")
    finally:
        set_config("rss_growth_kbps", old["rss_growth_kbps"])
        set_config("rss_alert_kb", old["rss_alert_kb"])


@test
def relay_carries_module_records():
    """Module records reach the aggregator (memtrackd --aggregate) through
    the relay: a memload's 100 mmap/munmap pairs, asked back with
    memtrack-query events, arrive complete and in order, in
    sequence-numbered messages with no gap."""
    node = unique("mtdnode")
    agg_dir = tempfile.mkdtemp(prefix="mtdagg.")
    conf = os.path.join(agg_dir, "agg.conf")
    with open(conf, "w") as f:
        f.write("[aggregate]\nlisten = 127.0.0.1\nport = 9472\nrecords_keep = 200000\n")
    with open(os.path.join(agg_dir, "stderr"), "w") as err:
        agg = subprocess.Popen([mtdlib.DAEMON, "-f", "--aggregate", "-c", conf],
                               stdout=subprocess.DEVNULL, stderr=err)

    def query(*words):
        r = subprocess.run([QUERY, "-s", "127.0.0.1:9472", "--json"] + list(words),
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, f"memtrack-query {words}: {r.returncode} {r.stderr}")
        return json.loads(r.stdout, parse_float=decimal.Decimal)

    try:
        with Named(unique("mtdrec")) as w, Daemon(source="module", sample_interval_ms=500,
                                                 node=node,
                                                 aggregators="127.0.0.1:9472") as d:
            p = w.start()
            w.cmd(p, "mmaps 100")
            time.sleep(1.5)     # 20 ms netlink batches, then the relay
            m = d.metrics()
            seq_sent = value(m, "memtrack_relay_next_seq") - 1
            acked = value(m, "memtrack_relay_acked_seq", aggregator="127.0.0.1:9472")
            check(acked == seq_sent, f"acked {acked} of {seq_sent}")
            st = {n["node"]: n for n in query("nodes")}[node]
            recs = query("events", node)
        check(agg.poll() is None, "the aggregator died")
    finally:
        agg.kill()
        agg.wait()
        shutil.rmtree(agg_dir, ignore_errors=True)
    check(st["first_seq"] == 1 and st["gaps"] == 0 and st["received"] == st["last_seq"] and
          st["last_seq"] >= seq_sent and st["records_dropped"] == 0, f"sequence figures {st}")
    mine = [r for r in recs if r["tgid"] == p.pid and r["type"] in ("mmap", "munmap")]
    # the program's start-up maps come first; "mmaps 100" is all it did last
    pairs = mine[-200:]
    check([r["type"] for r in pairs] == ["mmap", "munmap"] * 100,
          f"{len(mine)} records, last: {[r['type'] for r in pairs[:6]]}")
    for a, b in zip(pairs[::2], pairs[1::2]):
        check(a["addr"] == b["addr"] and a["len"] == b["len"] == mtdlib.PAGE,
              f"pair {a} {b}")
    check(len(mine) == 200 or mine[-201]["type"] != "munmap" or
          mine[-201]["len"] != mtdlib.PAGE, "more than 100 pairs")
    check(all(a["time"] <= b["time"] for a, b in zip(mine, mine[1:])), "time order")


def cpu_ns(pid):
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            total += int(f.read().split()[0])
    return total


@test
def module_reload_under_daemon():
    """rmmod under a running daemon: scrapes fail with 500, it does not spin
    or die; after insmod it reconnects (dumps need no privilege) and serves
    exact figures again; growth alerts stop (joining needs CAP_SYS_ADMIN)."""
    comm = unique("mtdrel")
    with Named(comm) as w, Daemon(source="module", keep_ptrace="yes",
                                  sample_interval_ms=0) as d:
        w.start(f"anon {MiB}")
        subprocess.run(["rmmod", "memtrack"], check=True)
        try:
            try:
                d.text()
                check(False, "scrape without the module succeeded")
            except urllib.error.HTTPError as e:
                check(e.code == 500, f"status {e.code}")
            c0 = cpu_ns(d.p.pid)
            time.sleep(1)
            spent = cpu_ns(d.p.pid) - c0
            check(spent < 50e6, f"daemon used {spent / 1e6:.0f} ms of CPU in 1 s idle")
        finally:
            subprocess.run(["insmod", MODULE], check=True)
        with Stopped([p.pid for p in w.procs]):
            m = d.metrics()
            compare_program(m, comm, ("R", "X"))
        check(d.alive(), "daemon died")
        check("reconnected" in d.stderr(), "no reconnect message")


if __name__ == "__main__":
    sys.exit(run_tests(sys.argv))
