#!/usr/bin/env python3
"""`make run`, the README's first command, as a newcomer runs it: it ends
with status 0 and shows what it says it shows, of its workloads' known
behaviour (scripts/demo): /proc/memtrack/summary; memtrack-top's batch
screen with leakdemo flagged (LEAK?+) and memload, whose size does not
change, not; memtrack-leak -p's report of leakdemo with its two leaking
call sites at their file:line in tests/progs/leakdemo.c (read from the
source), each stack's bytes its blocks times that site's size (4096 bytes
from leak_direct, 1000 from leak_site), and its own time.

Runs as tests/lib/harness.py says (test names as arguments, --list)."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "tests", "lib")]
from harness import check, main, test  # noqa: E402

LEAKDEMO = os.path.join(ROOT, "tests", "progs", "leakdemo.c")


def line_of(text):
    """The line of leakdemo.c that holds text (once)."""
    with open(LEAKDEMO) as f:
        lines = [n for n, ln in enumerate(f, 1) if text in ln]
    check(len(lines) == 1, f"{text!r} in leakdemo.c: lines {lines}")
    return lines[0]


def stacks(report):
    """[(bytes, blocks, [frame lines])] of memtrack-leak's text report."""
    out = []
    for ln in report.splitlines():
        m = re.match(r"\s+#\d+ (\d+) bytes in (\d+) blocks", ln)
        if m:
            out.append((int(m.group(1)), int(m.group(2)), []))
        elif out and ln.startswith("        "):
            out[-1][2].append(ln.strip())
    return out


@test
def make_run_shows_the_leak():
    r = subprocess.run(["make", "run"], cwd=ROOT, capture_output=True, text=True,
                       timeout=900)
    out = r.stdout
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr[-2000:]}{out[-2000:]}")
    summary = out.split("== /proc/memtrack/summary\n", 1)
    check(len(summary) == 2 and re.search(r"^MemTotal: *\d+", summary[1], re.M),
          f"no summary: {out[:2000]}")
    screen = out.split("== memtrack-top -b", 1)[-1].split("== memtrack-leak", 1)[0]
    flags = {f[2]: f[-1] for f in (ln.split() for ln in screen.splitlines())
             if len(f) > 3 and f[0].isdigit()}
    check(flags.get("leakdemo", "").startswith("LEAK?+") and flags.get("memload") == "-",
          f"memtrack-top's flags {flags}: {screen}")
    report = out.split("== memtrack-leak", 1)[-1]
    grab = f"grab (tests/progs/leakdemo.c:{line_of('void *p = malloc(n);')})"
    sites = {f"leak_direct (tests/progs/leakdemo.c:{line_of('grab(n, &ra_direct)')})": 4096,
             f"leak_site (tests/progs/leakdemo.c:{line_of('leak_inlined(n);')})": 1000}
    got = stacks(report)
    for site, size in sites.items():
        hits = [s for s in got if site in s[2]]
        check(len(hits) == 1 and hits[0][2][0] == grab and hits[0][1] > 0 and
              hits[0][0] == hits[0][1] * size,
              f"{site}: {hits} in {report}")
    check(re.search(r"^\(make run took \d+ s\)$", out, re.M), f"no time: {out[-500:]}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
