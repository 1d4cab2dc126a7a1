#!/usr/bin/env python3
"""memtrack-leak --scan and --by-lib end to end, both fixture builds (fp,
nofp):
  - --scan on tests/progs/leaks/scan (a tree and a cycle of lost blocks, a
    possibly lost and a still reachable one) gives exactly the classes of
    the fixture's README, per class and per allocating line, and the same
    LEAK SUMMARY as valgrind memcheck run on the same fixture in this VM;
    the fixture runs on correctly after the scan stopped it;
  - --by-lib on tests/progs/leaks/bylib (a program and its shared library
    libbylib.so each allocating known amounts, some freed) gives exact live
    bytes, blocks and calls per calling object and API.
"""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import ROOT, TestFailure, check, run_tests, test  # noqa: E402
from leakfx import run_attached  # noqa: E402
import leakfx as lfx  # noqa: E402

LEAKS = os.path.join(ROOT, "tests", "progs", "leaks")
BUILD = os.path.join(ROOT, "build", "tests", "leaks")
CLASSES = ("definitely_lost", "indirectly_lost", "possibly_lost", "still_reachable")
# tests/progs/leaks/README.md, what memcheck reports for scan
SCAN_EXPECTED = {"definitely_lost": (128, 2), "indirectly_lost": (512, 8),
                 "possibly_lost": (64, 1), "still_reachable": (64, 1)}


def markers(src):
    """{leak name: (line, blocks, size)} from a fixture source's markers."""
    out = {}
    with open(os.path.join(LEAKS, src)) as f:
        for n, line in enumerate(f, 1):
            m = re.search(r"LEAK\((\w+)\): (\d+) x (\d+)", line)
            if m:
                out[m.group(1)] = (n, int(m.group(2)), int(m.group(3)))
    return out


def until_session(fx, tool, timeout=60):
    """Until memtrack-leak's session on the fixture has its probes in."""
    if not lfx.armed(fx.pid, timeout):
        raise TestFailure(f"memtrack-leak did not attach to {fx.pid} in {timeout}s")


def run_fixture(path, args, env=None):
    """Start the fixture, attach memtrack-leak with args, let it work, take
    two reports; then let the fixture finish.  (JSON docs, fixture output
    after "done", fixture exit status)."""
    # the scans stop and resume it: it must still read its stdin and exit
    out, err, rest, rc = run_attached(path, ["-i", "2", "-n", "2", "--json"] + args,
                                      until_session, env=env, timeout=300)
    docs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    check(len(docs) == 2, f"{len(docs)} JSON reports: {out[:300]} {err[:300]}")
    return docs, rest, rc


def memcheck(path):
    """valgrind memcheck's LEAK SUMMARY for the fixture: class -> (bytes, blocks)."""
    p = subprocess.run(["valgrind", "--leak-check=full", "--show-leak-kinds=all",
                        path], input="go\ngo\n", capture_output=True, text=True,
                       timeout=600)
    got = {}
    for cls in CLASSES:
        m = re.search(cls.replace("_", " ") + r": ([\d,]+) bytes in ([\d,]+) blocks",
                      p.stderr)
        check(m, f"memcheck printed no '{cls}': {p.stderr[-800:]}")
        got[cls] = tuple(int(x.replace(",", "")) for x in m.groups())
    return got


def classes(d):
    return {c: (d[c]["bytes"], d[c]["blocks"]) for c in CLASSES}


def line_of(stack, src):
    for fr in stack["frames"]:
        if fr.get("file") and os.path.basename(fr["file"]) == src:
            return fr.get("line")
    return None


def scan(variant):
    path = os.path.join(BUILD, variant, "scan")
    docs, rest, rc = run_fixture(path, ["--scan"])
    check(rc == 0 and rest == "", f"fixture after the scans: exit {rc}, output {rest!r}")
    rep = docs[-1]
    got = classes(rep["scan"])
    check(got == SCAN_EXPECTED, f"{variant}: scan classes {got}, expected {SCAN_EXPECTED}")
    check(rep["scan"]["threads"] == 1, f"threads stopped: {rep['scan']}")
    # per allocating line: the tree and the cycle (mk), possibly, reachable
    m = markers("scan.c")
    want = {
        m["tree_and_cycle"][0]: {"definitely_lost": (128, 2), "indirectly_lost": (512, 8),
                                 "possibly_lost": (0, 0), "still_reachable": (0, 0)},
        m["possibly"][0]: {"definitely_lost": (0, 0), "indirectly_lost": (0, 0),
                           "possibly_lost": (64, 1), "still_reachable": (0, 0)},
        m["reachable"][0]: {"definitely_lost": (0, 0), "indirectly_lost": (0, 0),
                            "possibly_lost": (0, 0), "still_reachable": (64, 1)},
    }
    by_line = {}
    # with frame pointers, mk() has a stack per call site in build()
    for s in rep["stacks"]:
        acc = by_line.setdefault(line_of(s, "scan.c"), {c: (0, 0) for c in CLASSES})
        for c, (b, n) in classes(s).items():
            acc[c] = (acc[c][0] + b, acc[c][1] + n)
    check(by_line == want, f"{variant}: per line {by_line}, expected {want}")
    vg = memcheck(path)
    check(vg == got, f"{variant}: memcheck {vg}, memtrack-leak --scan {got}")


@test
def scan_classes_fp():
    scan("fp")


@test
def scan_classes_nofp():
    scan("nofp")


def bylib(variant):
    path = os.path.join(BUILD, variant, "bylib")
    docs, rest, rc = run_fixture(path, ["--by-lib"])
    check(rc == 0, f"fixture exit {rc}")
    got = {(os.path.basename(r["object"]), r["api"]):
           (r["bytes"], r["blocks"], r["calls"], r["call_bytes"])
           for r in docs[-1]["by_lib"]}
    want = lfx.bylib_expected()
    check(got == want, f"{variant}: by-lib {got}, expected {want}")


@test
def by_lib_fp():
    bylib("fp")


@test
def by_lib_nofp():
    bylib("nofp")


@test
def by_lib_text():
    """The text table: one row per object and API with the same figures."""
    out, _, _, _ = run_attached(os.path.join(BUILD, "fp", "bylib"),
                                ["-i", "2", "-n", "1", "--by-lib"], until_session)
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 6 and f[0].isdigit():
            rows[(os.path.basename(f[5]), f[4])] = tuple(int(x) for x in f[:4])
    check(rows == lfx.bylib_expected(), f"text rows {rows}: {out}")


if __name__ == "__main__":
    sys.exit(run_tests(sys.argv))
