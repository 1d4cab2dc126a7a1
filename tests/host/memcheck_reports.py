#!/usr/bin/env python3
"""valgrind memcheck's reports of the --scan fixtures, made on the host
before make check's suites start, into the run's share (MEMTRACK_VM_SHARE)
where every kernel's leak-scan, leak-tool and leak-preload-vm find them
(tests/guest/leakfx.py, memcheck()).  Under emulation one run took 8 to 110
s of a guest's CPU; here about a second.  Each report must hold memcheck's
LEAK SUMMARY and at least one record of a fixture source line, or the
suites' comparisons would be against nothing.

Runs as tests/lib/harness.py says (test names as arguments, --list)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "tests", "guest"), os.path.join(ROOT, "tests", "lib")]
import leakfx as lfx  # noqa: E402
from harness import check, main, test  # noqa: E402

LEAKS = os.path.join(ROOT, "build", "tests", "leaks")


def report(name, variant):
    summary, lines, _ = lfx.fixture_memcheck(os.path.join(LEAKS, variant, name))
    check(sum(blocks for _, blocks in summary.values()) > 0,
          f"{name} {variant}: memcheck found no block: {summary}")
    check(lines, f"{name} {variant}: no record at a line of a fixture source")
    print(f"# {name} {variant}: {summary}", flush=True)


for _name in lfx.MEMCHECK_FIXTURES:
    for _variant in ("fp", "nofp"):
        def _t(n=_name, v=_variant):
            report(n, v)
        _t.__name__ = f"{_name}_{_variant}"
        test(_t)

if __name__ == "__main__":
    if not os.environ.get("MEMTRACK_VM_SHARE"):
        print("# MEMTRACK_VM_SHARE is not set: the reports are made and not kept",
              flush=True)
    sys.exit(main(sys.argv))
