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
same.  With LEAK_ENGINE=inject the same tests run with the injected
in-process engine (leakfx.py), no module needed."""
import json
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import ROOT, check, run_tests, variant_tests  # noqa: E402
from leakfx import (VARIANTS, check_all_callers, check_markers,  # noqa: E402
                    frame_at, markers, check_mismatches, tool_p, trace)


def check_stacks(name, variant, thread=False, start=True):
    report = trace(name, variant)
    check_markers(report, name)
    check_all_callers(report, name, thread=thread, start=start)
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
    tool = subprocess.Popen(tool_p(fx.pid, "-i", "1", "--json"),
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
    check(len(markers("lib/dlleak.c")) == 1, "lib/dlleak.c: not one LEAK marker")
    check_all_callers(report, "lib/dlleak.c", "dlopen.c")


def cpp_cases(variant):
    """Every C++ leak marker exact (operator new calls malloc: the outer
    call counts, and its caller is the user's line, with callers up to main);
    the new[] freed by delete reported as a mismatch with both stacks, and
    not as a leak."""
    report = check_stacks("cpp_cases", variant)
    check_mismatches(report, "cpp_cases")


variant_tests((c_apis_each_leak_exact, c_edges_realloc_chain_failed_realloc_zero_large,
               threads_concurrent_leak_rate, dlopen_library_loaded_after_attach,
               freeall_reports_nothing, cpp_cases), VARIANTS)


if __name__ == "__main__":
    sys.exit(run_tests(sys.argv))
