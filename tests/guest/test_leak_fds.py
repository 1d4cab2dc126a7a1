#!/usr/bin/env python3
"""memtrack-leak --fds end to end on tests/progs/leaks/fds.c: for each
LEAKFD(name): N marker, a reported stack at that file:line holding exactly N
descriptors per round; nothing for the CLOSED lines (one close() seen, two
closed behind the probes' back by a raw syscall and close_range, which the
report drops after checking the process's fd table); the growth of each
stack between a report after round 1 and one after round 2 is N; the
descriptor counters of LEAK_STATS; text and folded output.

The fixture build is a parameter (LEAK_VARIANTS=fp,nofp; default both).
LEAK_ENGINE=inject: the same with the injected engine (leakfx.py), whose
reports drop the descriptors closed unseen by checking /proc/PID/fd; no
LEAK_STATS there."""
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import (ROOT, check, readline, run_tests, stderr_of,  # noqa: E402
                   variant_tests)
from nl import Genl  # noqa: E402
import leakfx as lfx  # noqa: E402

SRC = os.path.join(ROOT, "tests", "progs", "leaks", "fds.c")
VARIANTS = os.environ.get("LEAK_VARIANTS", "fp,nofp").split(",")


def markers():
    """{name: (line, fds per round)} and the CLOSED lines of fds.c."""
    leaks, closed = {}, []
    with open(SRC) as f:
        for n, line in enumerate(f, 1):
            m = re.search(r"LEAKFD\((\w+)\): (\d+)", line)
            if m:
                leaks[m.group(1)] = (n, int(m.group(2)))
            elif "/* CLOSED */" in line:
                closed.append(n)
    return leaks, closed


def at_line(stack, line):
    """Is the first frame in fds.c at this line?"""
    for fr in stack["frames"]:
        if fr.get("file") and os.path.basename(fr["file"]) == "fds.c":
            return fr.get("line") == line
    return False


class Traced:
    """The fds fixture under memtrack-leak --fds (extra args), reports read
    one at a time."""

    def __init__(self, variant, *args, json_out=True):
        self.fx = subprocess.Popen([os.path.join(ROOT, "build", "tests", "leaks", variant,
                                                 "fds")],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        check(readline(self.fx.stdout).strip() == "ready", "fixture did not start")
        self.tool = subprocess.Popen(lfx.tool_p(self.fx.pid, "--fds", "-i", "1.5",
                                                "--top", "100", *args),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.json = json_out

    def report(self):
        """The next report: a JSON document, or the text/folded lines up
        to the next blank line (folded: up to the first line read)."""
        if self.json:
            line = readline(self.tool.stdout)
            if not line.startswith("{"):
                raise AssertionError(f"no report: {line!r} {stderr_of(self.tool)}")
            return json.loads(line)
        lines = []
        while True:
            line = readline(self.tool.stdout)
            if not line:
                raise AssertionError(f"tool ended: {stderr_of(self.tool)}")
            if not line.strip():
                return lines
            lines.append(line.rstrip("\n"))

    def round(self, cmd):
        self.fx.stdin.write(cmd + "\n")
        self.fx.stdin.flush()
        check(readline(self.fx.stdout).strip() == "done", "fixture round did not finish")
        self.done = time.time()

    def printed(self, r):
        """When a report was printed (after its tables were read), or a
        little before: its time is cut to ms (JSON) or seconds (text)."""
        if self.json:
            return r["time"]
        stamp = " ".join(r[0].split()[:2])
        return time.mktime(time.strptime(stamp, "%Y-%m-%d %H:%M:%S"))

    def after_round(self):
        """The reports up to the first whose tables were read after the
        last round: one printed after the round may have read them during
        it (a round can outlast the interval in a slow guest); the tool
        reads the next one's after printing it."""
        seen = [self.report()]
        while self.printed(seen[-1]) < self.done:
            seen.append(self.report())
        return seen + [self.report()]

    def wait_total(self, total, tries=10):
        """Reports until one shows `total` descriptors (attach takes a moment)."""
        for _ in range(tries):
            r = self.report()
            if r["total_fds"] == total:
                return r
        raise AssertionError(f"no report with {total} fds: last {r}")

    def close(self):
        if self.tool.poll() is None:
            self.tool.send_signal(signal.SIGINT)
        self.tool.wait(timeout=60)
        if self.fx.poll() is None:
            self.fx.stdin.write("x\n")
            self.fx.stdin.flush()
        self.fx.wait(timeout=30)
        check(self.tool.returncode == 0, f"memtrack-leak exit {self.tool.returncode}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self.close()
        finally:
            for p in (self.tool, self.fx):
                if p.poll() is None:
                    p.kill()


def wait_session(pid, timeout=20):
    check(lfx.armed(pid, timeout), f"no session with its probes in for {pid}")


def check_report(reports, rounds, growth):
    """The last of reports holds what `rounds` rounds opened; with growth,
    the growths the reports show add up to `growth` rounds' worth (each is
    since the report before it, and a round may fall across two)."""
    r = reports[-1]
    leaks, closed = markers()
    for name, (line, n) in leaks.items():
        hits = [s for s in r["fds"] if at_line(s, line)]
        check(hits, f"no stack at fds.c:{line} ({name}): {r}")
        got = sum(s["count"] for s in hits)
        check(got == n * rounds, f"{name}: {got} fds, expected {n * rounds}")
        if growth is not None:
            g = sum(s["growth"] for x in reports for s in x["fds"] if at_line(s, line))
            check(g == growth * n, f"{name}: growth {g} over {len(reports)} reports, "
                  f"expected {growth * n}")
    for line in closed:
        check(not [s for s in r["fds"] if at_line(s, line)],
              f"stack for the closed fds.c:{line}: {r}")
    total = sum(n for _, n in leaks.values())
    check(r["total_fds"] == total * rounds and
          sum(s["count"] for s in r["fds"]) == total * rounds,
          f"total {r['total_fds']}, expected {total * rounds}")


def exact_counts_and_growth(variant):
    """Exact descriptors per opening line after one and two rounds, growth N."""
    with Traced(variant, "--json") as t:
        t.wait_total(0)
        t.round("")
        check_report(t.after_round(), 1, None)
        t.round("again")
        check_report(t.after_round(), 2, 1)
        if lfx.INJECT:
            return      # no module: no LEAK_STATS
        # LEAK_STATS, read beside the tool: each round opens 16 (13 kept,
        # 1 closed by close(), 2 closed unseen).  The second unseen open
        # gets the number the first one freed: that open replaces the stale
        # entry, so one per round is left for the report to drop.
        with Genl() as g:
            st = g.leak_stats(t.fx.pid)
        want = {"fd_opens": 32, "fd_closes": 2, "outstanding_fds": 26,
                "fds_closed_unseen": 2, "unknown_closes": 0, "allocs": 0,
                "outstanding_blocks": 0, "outstanding_bytes": 0}
        check({k: st[k] for k in want} == want, f"stats {st}, expected {want}")


def text_and_folded(variant):
    """The text report lists the stacks at the files line, 3 fds (open)
    in all (the loop is unrolled: one stack per copy); folded lines end in
    their count and sum to the total."""
    leaks, _ = markers()
    total = sum(n for _, n in leaks.values())
    with Traced(variant, json_out=False) as t:
        t.report()
        t.round("")
        text = "\n".join(t.after_round()[-1])
        check(f"{total} descriptors open" in text, f"text: {text}")
        line = leaks["files"][0]
        got = re.findall(rf"#\d+ (\d+) fds \(open\), .*\n +leak_files \(.*fds\.c:{line}\)\n",
                         text)
        check(sum(int(n) for n in got) == 3, f"not 3 open fds at fds.c:{line}: {text}")
    # Folded reports have no separator and an empty one prints nothing: the
    # round runs once the session exists, before the first or second report,
    # and both reports after it are the same lines.
    with Traced(variant, "--folded", "-n", "2", "-i", "2", json_out=False) as t:
        wait_session(t.fx.pid)
        t.round("")
        t.tool.wait(timeout=60)
        out = t.tool.stdout.read()
        lines = [ln for ln in out.splitlines() if ln.strip()]
        half = len(lines) // 2
        if lines and lines[:half] == lines[half:]:
            lines = lines[:half]
        rows = [ln.rsplit(" ", 1) for ln in lines]
        check(sum(int(n) for _, n in rows) == total, f"folded: {out}")
        check(sum(int(n) for f, n in rows if f.endswith(";main;leak_files")) == 3,
              f"folded: not 3 under leak_files: {out}")


variant_tests((exact_counts_and_growth, text_and_folded), VARIANTS)


if __name__ == "__main__":
    sys.exit(run_tests(sys.argv))
