#!/usr/bin/env python3
"""memtrack-leak end to end on the fixtures of tests/progs/leaks: attach to a
running fixture, let it leak, and compare the report with the fixture's
LEAK(name): N x SIZE markers — bytes, blocks, and the file:line of the
allocating frame.  Frame-pointer builds (the in-kernel .eh_frame unwinder for
the others is still to come)."""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import ROOT, check, run_tests, test  # noqa: E402

LEAKS = os.path.join(ROOT, "tests", "progs", "leaks")
TOOL = os.path.join(ROOT, "build", "bin", "memtrack-leak")
# The fixture builds the variant tests run on (nofp: once the kernel unwinds
# without frame pointers).
VARIANTS = ("fp",)


def source(name):
    return [os.path.join(LEAKS, name + ext) for ext in (".c", ".cc")
            if os.path.exists(os.path.join(LEAKS, name + ext))][0]


def markers(name, kind="LEAK"):
    """{leak name: (file, line, blocks, size)} from the fixture's source."""
    path = source(name)
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = re.search(kind + r"\((\w+)\): (\d+) x (\d+)", line)
            if m:
                out[m.group(1)] = (os.path.basename(path), n, int(m.group(2)), int(m.group(3)))
    return out


def mismatch_markers(name):
    """{name: (file, alloc line, blocks, alloc api, free line, free api)}:
    MISMATCH(name): N x SIZE by API and MISMATCH_FREE(name): API."""
    out = {}
    with open(source(name)) as f:
        lines = list(enumerate(f, 1))
    for n, line in lines:
        m = re.search(r"MISMATCH\((\w+)\): (\d+) x \d+ by (\S+)", line)
        if not m:
            continue
        frees = [(k, re.search(r"MISMATCH_FREE\(" + m.group(1) + r"\): (\S+)", ln))
                 for k, ln in lines]
        (k, fm), = [(k, fm) for k, fm in frees if fm]
        out[m.group(1)] = (os.path.basename(source(name)), n, int(m.group(2)),
                           m.group(3), k, fm.group(1))
    return out


def trace(name, variant="fp"):
    """Run the fixture under memtrack-leak -p; the last JSON report."""
    fx = subprocess.Popen([os.path.join(ROOT, "build", "tests", "leaks", variant, name)],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    check(fx.stdout.readline().strip() == "ready", "fixture did not start")
    tool = subprocess.Popen([TOOL, "-p", str(fx.pid), "-i", "2", "-n", "2", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    fx.stdin.write("go\n")
    fx.stdin.flush()
    check(fx.stdout.readline().strip() == "done", "fixture did not finish")
    out, err = tool.communicate(timeout=120)
    fx.stdin.write("go\n")
    fx.stdin.flush()
    fx.wait(timeout=30)
    check(tool.returncode == 0, f"memtrack-leak exit {tool.returncode}: {err.strip()}")
    docs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    check(docs, f"no JSON report: {out[:200]} {err[:200]}")
    return docs[-1]


def frame_at(stack, file, line):
    """Does the stack's first non-allocator frame sit at file:line?"""
    for fr in stack["frames"]:
        if fr.get("file") and os.path.basename(fr["file"]) == file:
            return fr.get("line") == line
    return False


def check_markers(report, name, only=None):
    for leak, (file, line, blocks, size) in markers(name).items():
        if only and leak not in only:
            continue
        hits = [s for s in report["stacks"] if frame_at(s, file, line)]
        check(hits, f"{name}: no stack at {file}:{line} ({leak})")
        got_b = sum(s["blocks"] for s in hits)
        got = sum(s["bytes"] for s in hits)
        check(got_b == blocks and got == blocks * size,
              f"{name}/{leak}: {got_b} blocks {got} bytes, expected {blocks} x {size}")


@test
def c_apis_each_leak_exact():
    check_markers(trace("c_apis"), "c_apis")


@test
def c_edges_realloc_chain_failed_realloc_zero_large():
    check_markers(trace("c_edges"), "c_edges")


@test
def threads_concurrent_leak_rate():
    check_markers(trace("threads"), "threads")


@test
def freeall_reports_nothing():
    report = trace("freeall")
    check(not report["stacks"], f"{len(report['stacks'])} stacks for a program that frees all")


def variant_test(body):
    """body(variant) as one test per build variant: NAME_fp, NAME_nofp."""
    for v in VARIANTS:
        def fn(v=v):
            body(v)
        fn.__name__ = f"{body.__name__}_{v}"
        test(fn)
    return body


@variant_test
def cpp_cases(variant):
    """Every C++ leak marker exact; the new[] freed by delete reported as a
    mismatch with both stacks, and not as a leak."""
    report = trace("cpp_cases", variant)
    check_markers(report, "cpp_cases")
    mms = mismatch_markers("cpp_cases")
    check(mms, "cpp_cases has no MISMATCH marker")
    for name, (file, line, count, api, free_line, free_api) in mms.items():
        check(not [s for s in report["stacks"] if frame_at(s, file, line)],
              f"{name}: the mismatched block is reported as outstanding")
        hits = [m for m in report.get("mismatches", [])
                if frame_at({"frames": m["alloc_frames"]}, file, line)]
        check(len(hits) == 1, f"{name}: {len(hits)} mismatches at {file}:{line}: "
              f"{report.get('mismatches')}")
        m = hits[0]
        check((m["alloc_api"], m["free_api"], m["count"]) == (api, free_api, count),
              f"{name}: {m['alloc_api']} freed by {m['free_api']} x{m['count']}, "
              f"expected {api} freed by {free_api} x{count}")
        check(frame_at({"frames": m["free_frames"]}, file, free_line),
              f"{name}: freeing stack not at {file}:{free_line}: {m['free_frames']}")
    check(len(report["mismatches"]) == len(mms), f"mismatches: {report['mismatches']}")


if __name__ == "__main__":
    sys.exit(run_tests(sys.argv))
