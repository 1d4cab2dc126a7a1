#!/usr/bin/env python3
"""memtrack-leak -f (MEMTRACK_LEAK_F_CHILDREN) on tests/progs/leaks/forks.c:
the parent leaks 2 x 48 bytes, forks 3 children that each leak 4 x 100
bytes from one line, and a fourth that allocates and execs `sleep`.  With
-f the report shows the parent's stack and one stack per leaking child
(its pid, exactly 4 x 100), nothing of the exec'd one; without -f only the
parent's.  After the children exit their state is freed (LEAK_STATS: no
children, only the parent's blocks).

The fixture build is a parameter (LEAK_VARIANTS=fp,nofp; default both).
LEAK_ENGINE=inject: the same reports with the injected engine (leakfx.py),
whose forked children record into the shared state under their pid and
keep their blocks there after their exit; no LEAK_STATS."""
import contextlib
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

SRC = os.path.join(ROOT, "tests", "progs", "leaks", "forks.c")
VARIANTS = os.environ.get("LEAK_VARIANTS", "fp,nofp").split(",")


def lines():
    """{marker: line} of forks.c: parent, child, exec."""
    out = {}
    with open(SRC) as f:
        for n, text in enumerate(f, 1):
            m = re.search(r"/\* (?:LEAK\((\w+)\)|(EXEC)):", text)
            if m:
                out[(m.group(1) or m.group(2)).lower()] = n
    return out


def at_line(stack, line):
    for fr in stack["frames"]:
        if fr.get("file") and os.path.basename(fr["file"]) == "forks.c":
            return fr.get("line") == line
    return False


def run(variant, follow):
    """Returns (parent pid, kid pids, the report once settled, stats after
    the children exited)."""
    fx = subprocess.Popen([os.path.join(ROOT, "build", "tests", "leaks", variant, "forks")],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    tool = None
    try:
        check(readline(fx.stdout).strip() == "ready", "fixture did not start")
        tool = subprocess.Popen(lfx.tool_p(fx.pid, "--json", "-i", "1", "--top", "100") +
                                (["-f"] if follow else []),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        def report():
            line = readline(tool.stdout)
            if not line.startswith("{"):
                raise AssertionError(f"no report: {line!r} {stderr_of(tool)}")
            return json.loads(line)
        report()                        # attached
        fx.stdin.write("go\n")
        fx.stdin.flush()
        kids = [int(x) for x in readline(fx.stdout).split()[1:]]
        check(len(kids) == 4 and readline(fx.stdout).strip() == "done", "fixture round")
        # One report may have been taken mid-round; the exec'd child's
        # state goes by a work item, a report or two later.
        report()
        for _ in range(10):
            r = report()
            if not [s for s in r["stacks"] if s["pid"] == kids[3]]:
                break
        fx.stdin.write("\n")
        fx.stdin.flush()
        check(readline(fx.stdout).strip() == "exited", "children did not exit")
        st = None
        with Genl() if not lfx.INJECT else contextlib.nullcontext() as g:
            for _ in range(100 if g else 0):
                st = g.leak_stats(fx.pid)
                if not st["nr_children"]:
                    break
                time.sleep(0.1)
        tool.send_signal(signal.SIGINT)
        tool.wait(timeout=60)
        check(tool.returncode == 0, f"memtrack-leak exit {tool.returncode}")
        fx.stdin.write("\n")
        fx.stdin.flush()
        fx.wait(timeout=30)
        return fx.pid, kids, r, st
    finally:
        for p in (tool, fx):
            if p and p.poll() is None:
                p.kill()


def by_pid(stacks, line):
    """{pid: (blocks, bytes)} of the stacks at forks.c:line (a loop the
    compiler unrolled has one stack per copy)."""
    out = {}
    for s in stacks:
        if at_line(s, line):
            b, n = out.get(s["pid"], (0, 0))
            out[s["pid"]] = (b + s["blocks"], n + s["bytes"])
    return out


def follow_forks(variant):
    """-f: parent 2 x 48, each of 3 children 4 x 100 under its own pid, the
    exec'd child not at all; its state and the others' freed at exit."""
    ln = lines()
    pid, kids, r, st = run(variant, True)
    parent = by_pid(r["stacks"], ln["parent"])
    check(parent == {pid: (2, 96)}, f"parent's leak: {parent}, pid {pid}")
    child = by_pid(r["stacks"], ln["child"])
    check(child == {k: (4, 400) for k in kids[:3]},
          f"children's leaks {child}, expected 4 x 100 for each of {kids[:3]}")
    check(not [s for s in r["stacks"] if s["pid"] == kids[3] or at_line(s, ln["exec"])],
          f"the exec'd child is reported: {r}")
    check(all(s["pid"] in [pid] + kids[:3] for s in r["stacks"]), f"stray pid: {r}")
    if lfx.INJECT:
        return          # no module: no LEAK_STATS
    want = {"nr_children": 0, "children": 4, "dropped_children": 0,
            "outstanding_blocks": 2, "outstanding_bytes": 96}
    check({k: st[k] for k in want} == want, f"stats {st}, expected {want}")


def no_follow(variant):
    """Without -f: only the parent's stacks, no children followed."""
    ln = lines()
    pid, kids, r, st = run(variant, False)
    check(all(s["pid"] == pid for s in r["stacks"]), f"a child's stack: {r}")
    check(not [s for s in r["stacks"] if at_line(s, ln["child"])], f"child stack: {r}")
    parent = by_pid(r["stacks"], ln["parent"])
    check(parent == {pid: (2, 96)}, f"parent's leak: {parent}, pid {pid}")
    check(lfx.INJECT or (st["children"] == 0 and st["outstanding_blocks"] == 2),
          f"stats {st}")


variant_tests((follow_forks, no_follow), VARIANTS)


if __name__ == "__main__":
    sys.exit(run_tests(sys.argv))
