#!/usr/bin/env python3
"""valgrind memcheck's reports of the --scan fixtures, made on the host
before make check's suites start, into the run's share (MEMTRACK_VM_SHARE)
where every kernel's leak-scan, leak-tool and leak-preload-vm find them
(tests/guest/leakfx.py, memcheck(), memcheck_runs()).  Under emulation one
run took 8 to 110 s of a guest's CPU; here about a second.  Each fixture's
report must hold memcheck's LEAK SUMMARY and at least one record of a
fixture source line, or the suites' comparisons would be against nothing.

Runs as tests/lib/harness.py says (test names as arguments, --list)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "tests", "guest"), os.path.join(ROOT, "tests", "lib")]
import leakfx as lfx  # noqa: E402
from harness import check, main, test  # noqa: E402

def report(argv, stdin):
    summary, lines, _ = lfx.memcheck(argv, stdin)
    what = " ".join(os.path.relpath(a, ROOT) if a.startswith(ROOT) else a for a in argv)
    if stdin:
        check(sum(blocks for _, blocks in summary.values()) > 0,
              f"{what}: memcheck found no block: {summary}")
        check(lines, f"{what}: no record at a line of a fixture source")
    print(f"# {what}: {summary}", flush=True)


for _argv, _stdin in lfx.memcheck_runs():
    def _t(a=_argv, i=_stdin):
        report(a, i)
    _t.__name__ = os.path.relpath(_argv[0], os.path.join(ROOT, "build", "tests", "leaks")
                                  ).replace("/", "_") if _stdin else os.path.basename(_argv[0])
    test(_t)

if __name__ == "__main__":
    if not os.environ.get("MEMTRACK_VM_SHARE"):
        print("# MEMTRACK_VM_SHARE is not set: the reports are made and not kept",
              flush=True)
    sys.exit(main(sys.argv))
