#!/usr/bin/env python3
"""memtrack-leak --scan and --by-lib end to end, both fixture builds (fp,
nofp):
  - -p PID --scan on tests/progs/leaks/scan (a tree and a cycle of lost
    blocks, a possibly lost and a still reachable one) and scan_threads
    (joined threads' cached stacks, blocks next to arenas' top and free
    chunks), three runs each: the classes of valgrind memcheck run on the
    same fixture in this VM, in total and per allocating line (but for the
    stdio buffers allocated before the attach); the fixture runs on
    correctly after the scans stopped it;
  - --by-lib on tests/progs/leaks/bylib (a program and its shared library
    libbylib.so each allocating known amounts, some freed) gives exact live
    bytes, blocks and calls per calling object and API.
With LEAK_ENGINE=inject, the same with the injected engine (leakfx.py):
the threads' DTVs, which the dynamic loader allocates without a GOT slot,
are then left out of memcheck's figures.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import ROOT, TestFailure, check, run_tests, test  # noqa: E402
from leakfx import run_attached  # noqa: E402
import leakfx as lfx  # noqa: E402

BUILD = os.path.join(ROOT, "build", "tests", "leaks")


def until_session(fx, tool, timeout=60):
    """Until memtrack-leak's session on the fixture has its probes in."""
    if not lfx.armed(fx.pid, timeout):
        raise TestFailure(f"memtrack-leak did not attach to {fx.pid} in {timeout}s")


def run_fixture(path, args, env=None, attached=until_session):
    """Start the fixture, attach memtrack-leak with args, let it work, take
    two reports; then let the fixture finish.  (JSON docs, fixture output
    after "done", fixture exit status)."""
    # the scans stop and resume it: it must still read its stdin and exit
    out, err, rest, rc = run_attached(path, ["-i", "2", "-n", "2", "--json"] + args,
                                      attached, env=env, timeout=300)
    docs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    check(len(docs) == 2, f"{len(docs)} JSON reports: {out[:300]} {err[:300]}")
    return docs, rest, rc


def scan(name, variant):
    """memtrack-leak -p PID --scan on the fixture waiting after its work,
    three runs: every run's classes equal memcheck's at the fixture's exit,
    in total and per allocating line, but for what the fixture allocated
    before the tool attached (its stdio buffers, in common.h), which the
    tool cannot know; the fixture runs on after the scans."""
    path = os.path.join(BUILD, variant, name)
    vg = lfx.fixture_memcheck(path)
    for run in range(3):
        # the work once the unwind tables are in: complete stacks, lines
        docs, rest, rc = run_fixture(path, ["--scan", "--top", "50"],
                                     attached=lfx.until_first_report)
        check(rc == 0 and rest == "", f"fixture after the scans: exit {rc}, output {rest!r}")
        rep = docs[-1]
        # injected: the library's watchdog thread is stopped too
        check(rep["scan"]["threads"] == 1 + lfx.INJECT, f"threads stopped: {rep['scan']}")
        lfx.check_scan_vs_memcheck(rep, vg, f"{name} {variant} run {run}",
                                   before_attach=("common.h",), no_dtvs=lfx.INJECT)


@test
def scan_classes_fp():
    """scan.c: a lost tree and cycle, an interior pointer, a global's block;
    its README's classes (definitely 128 / 2, indirectly 512 / 8, possibly
    64 / 1, its own still reachable 64 / 1)."""
    scan("scan", "fp")


@test
def scan_classes_nofp():
    scan("scan", "nofp")


@test
def scan_threads_fp():
    """scan_threads.c: joined threads' cached stacks (DTVs possibly lost, a
    block only a dead frame held definitely), blocks whose chunk ends in an
    arena's top chunk or a free chunk (definitely lost)."""
    scan("scan_threads", "fp")


@test
def scan_threads_nofp():
    scan("scan_threads", "nofp")


def bylib(variant):
    path = os.path.join(BUILD, variant, "bylib")
    docs, rest, rc = run_fixture(path, ["--by-lib"])
    check(rc == 0, f"fixture exit {rc}")
    lfx.check_bylib(docs[-1], variant, others=False)


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
