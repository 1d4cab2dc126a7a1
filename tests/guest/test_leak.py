#!/usr/bin/env python3
"""memtrack-leak end to end on the fixtures of tests/progs/leaks: attach to a
running fixture, let it leak, and compare the report with the fixture's
LEAK(name): N x SIZE markers — bytes, blocks, and the file:line of the
allocating frame — and its callers: the stack goes on to the fixture's
main and through libc to _start (or, for a thread, into libc's
start_thread).  Every fixture runs in both builds, with frame pointers (fp)
and without (nofp, Debian's default, as libc and libstdc++ are built): the
module unwinds with the tables memtrack-leak derives from .eh_frame (also
for a library dlopen'ed after the attach), so the figures must be the
same."""
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import ROOT, check, run_tests, variant_tests  # noqa: E402

LEAKS = os.path.join(ROOT, "tests", "progs", "leaks")
TOOL = os.path.join(ROOT, "build", "bin", "memtrack-leak")
# The fixture builds every test runs on.
VARIANTS = ("fp", "nofp")


def source(name):
    """A fixture's source (name: a fixture, or a source path under
    tests/progs/leaks)."""
    return [os.path.join(LEAKS, name + ext) for ext in ("", ".c", ".cc")
            if os.path.isfile(os.path.join(LEAKS, name + ext))][0]


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
    # Ready when it waits for its first report: attached, tables sent
    # (allocations before the tables arrive stop at the first libc frame).
    end = time.monotonic() + 60
    while time.monotonic() < end and tool.poll() is None:
        with open(f"/proc/{tool.pid}/syscall") as f:
            if f.read().split()[0] in ("35", "230"):  # nanosleep, clock_nanosleep
                break
        time.sleep(0.1)
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


def base(path):
    return os.path.basename(path) if path else None


def check_callers(stack, name, src, thread=False, start=True):
    """After the allocating frame: main (in src) then libc then _start
    (start); or, for a thread, libc's start_thread."""
    fr = [(f.get("function"), base(f.get("file")), base(f.get("module")))
          for f in stack["frames"]]
    where = f"{name}: stack {[f[0] for f in fr]}"
    if thread:
        check(any(fn == "start_thread" and (mod or "").startswith("libc.so")
                  for fn, _, mod in fr), f"{where}: no libc start_thread")
        return
    mains = [i for i, (fn, file, _) in enumerate(fr) if fn == "main" and file == src]
    check(mains, f"{where}: no main in {src}")
    rest = fr[mains[0] + 1:]
    libc = [i for i, (_, _, mod) in enumerate(rest) if (mod or "").startswith("libc.so")]
    check(libc, f"{where}: nothing in libc after main")
    check(not start or any(fn == "_start" for fn, _, _ in rest[libc[0]:]),
          f"{where}: no _start after libc")


def check_stacks(name, variant, thread=False, start=True):
    report = trace(name, variant)
    check_markers(report, name)
    for leak, (file, line, _, _) in markers(name).items():
        for s in report["stacks"]:
            if frame_at(s, file, line):
                check_callers(s, f"{name}/{leak}", file, thread, start)
    return report


def c_apis_each_leak_exact(variant):
    check_stacks("c_apis", variant)


def c_edges_realloc_chain_failed_realloc_zero_large(variant):
    check_stacks("c_edges", variant)


def threads_concurrent_leak_rate(variant):
    check_stacks("threads", variant, thread=True)


def freeall_reports_nothing(variant):
    report = trace("freeall", variant)
    check(not report["stacks"], f"{len(report['stacks'])} stacks for a program that frees all")


def reports_after(tool, n):
    """Read n more JSON reports of a running tool; the last one."""
    doc = None
    for _ in range(n):
        line = tool.stdout.readline()
        check(line.startswith("{"), f"memtrack-leak stopped: {line!r}")
        doc = json.loads(line)
    return doc


def dlopen_library_loaded_after_attach(variant):
    """A library dlopen'ed after the attach: its leak is exact and its
    callers reach main, so its table was sent on a later report."""
    fx = subprocess.Popen([os.path.join(ROOT, "build", "tests", "leaks", variant, "dlopen")],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    check(fx.stdout.readline().strip() == "ready", "fixture did not start")
    tool = subprocess.Popen([TOOL, "-p", str(fx.pid), "-i", "1", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        reports_after(tool, 1)
        fx.stdin.write("load\n")
        fx.stdin.flush()
        check(fx.stdout.readline().strip() == "loaded", "fixture did not load")
        # The second report from now re-read the maps after the dlopen.
        reports_after(tool, 2)
        fx.stdin.write("go\n")
        fx.stdin.flush()
        check(fx.stdout.readline().strip() == "done", "fixture did not finish")
        report = reports_after(tool, 2)
    finally:
        tool.send_signal(signal.SIGINT)
        _, err = tool.communicate(timeout=60)
        fx.stdin.write("exit\n")
        fx.stdin.flush()
        fx.wait(timeout=30)
    check(tool.returncode == 0, f"memtrack-leak exit {tool.returncode}: {err.strip()}")
    check_markers(report, "lib/dlleak.c")
    (leak, (file, line, _, _)), = markers("lib/dlleak.c").items()
    for s in report["stacks"]:
        if frame_at(s, file, line):
            check_callers(s, f"dlopen/{leak}", "dlopen.c")


def cpp_cases(variant):
    """Every C++ leak marker exact (operator new calls malloc: the outer
    call counts, and its caller is the user's line, with callers up to main);
    the new[] freed by delete reported as a mismatch with both stacks, and
    not as a leak."""
    report = check_stacks("cpp_cases", variant)
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


variant_tests((c_apis_each_leak_exact, c_edges_realloc_chain_failed_realloc_zero_large,
               threads_concurrent_leak_rate, dlopen_library_loaded_after_attach,
               freeall_reports_nothing, cpp_cases), VARIANTS)


if __name__ == "__main__":
    sys.exit(run_tests(sys.argv))
