#!/usr/bin/env python3
"""Guest half of bench/metrics-scrape: the cost of one /metrics scrape of
memtrackd in module mode and in /proc mode, with the processes already
running (manyprocs).  Both daemons run at once, sampling only when scraped;
rounds alternate between them.  Per scrape: latency seen by the client
(request to last byte) and the daemon's CPU time (the sum of its threads'
/proc/PID/task/TID/schedstat run time, ns).  Prints medians and ratios.

usage: metrics-scrape-guest.py ROUNDS SCRAPES_PER_ROUND"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "guest"))
from mtdlib import Daemon  # noqa: E402


def cpu_ns(pid):
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            total += int(f.read().split()[0])
    return total


def scrape(d):
    c0 = cpu_ns(d.p.pid)
    t0 = time.monotonic()
    body = d.text()
    t1 = time.monotonic()
    return (t1 - t0) * 1e3, (cpu_ns(d.p.pid) - c0) / 1e6, body


def main():
    rounds, per = int(sys.argv[1]), int(sys.argv[2])
    nproc = sum(1 for e in os.listdir("/proc") if e.isdigit())
    res = {"module": ([], []), "proc": ([], [])}
    sizes = {}
    with Daemon(source="module", keep_ptrace="yes", sample_interval_ms=0) as dm, \
            Daemon(source="proc", sample_interval_ms=0) as dp:
        daemons = {"module": dm, "proc": dp}
        for name, d in daemons.items():     # warm up
            body = scrape(d)[2]
            sizes[name] = (len(body), sum(1 for l in body.splitlines() if l and l[0] != "#"))
        for _ in range(rounds):
            for name, d in daemons.items():
                for _ in range(per):
                    lat, cpu, _ = scrape(d)
                    res[name][0].append(lat)
                    res[name][1].append(cpu)
    print(f"{nproc} processes; {rounds} rounds x {per} scrapes each; medians")
    print("| source | latency | daemon CPU | body | series |")
    print("| --- | --- | --- | --- | --- |")
    for name in ("module", "proc"):
        lat, cpu = res[name]
        print(f"| {name} | {statistics.median(lat):.1f} ms | {statistics.median(cpu):.1f} ms | "
              f"{sizes[name][0]} B | {sizes[name][1]} |")
    lm, lp = statistics.median(res["module"][0]), statistics.median(res["proc"][0])
    cm, cp = statistics.median(res["module"][1]), statistics.median(res["proc"][1])
    print(f"| proc / module | {lp / lm:.1f}x | {cp / cm:.1f}x | | |")


if __name__ == "__main__":
    main()
