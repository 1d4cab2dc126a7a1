#!/usr/bin/env python3
"""memtrack-top's optional PSS/USS columns (--pss) against
/proc/PID/smaps_rollup, the rule that only the rows printed get their file
read, and memtrack-top run by an unprivileged user (nobody).  In the VM
(MEMTRACK_VM set, module loaded) the module path and /proc forced; on the
host (tests/host/test_top_smaps.sh) /proc only; the unprivileged test needs
the module."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import (NOBODY, PAGE, ROOT, TESTBIN, Stopped, check, drop_privileges,  # noqa: E402
                   readline, run_tests, test)
from tmuxlib import Tmux  # noqa: E402

IN_VM = bool(os.environ.get("MEMTRACK_VM"))
TOP = os.path.join(ROOT, "build", "bin", "memtrack-top")
PATHS = [([], "memtrack module"), (["--proc"], "/proc")] if IN_VM else [([], "/proc")]
# the files a program opens (--seccomp-bpf: it stops at openat alone, not
# at every system call)
STRACE = ["strace", "-f", "-qq", "--seccomp-bpf", "-e", "trace=openat"]

SHARED = 32 << 20       # one MAP_SHARED anonymous region, both processes touch it
PRIVATE = 8 << 20       # each process's own MAP_PRIVATE region, touched

# Two processes: the parent maps SHARED bytes MAP_SHARED|MAP_ANONYMOUS and
# forks; each then maps PRIVATE bytes of its own, and each touches every page
# of both.  Each prints its pid once done.
PAIR = f"""
import mmap, os, sys, time
shared = mmap.mmap(-1, {SHARED}, flags=mmap.MAP_SHARED)
child = os.fork()
own = mmap.mmap(-1, {PRIVATE}, flags=mmap.MAP_PRIVATE)
for m in (shared, own):
    for off in range(0, len(m), {PAGE}):
        m[off] = 1
os.write(1, b"%d\\n" % os.getpid())  # one write: the two lines must not mix
time.sleep(1e9)
"""


def rollup(pid):
    """smaps_rollup in bytes by field name."""
    with open(f"/proc/{pid}/smaps_rollup") as f:
        return {k: int(v.split()[0]) << 10 for k, v in
                (line.split(":", 1) for line in f.read().splitlines()[1:])}


def uss_of(r):
    return r["Private_Clean"] + r["Private_Dirty"] + r.get("Private_Hugetlb", 0)


def top_json(args, preexec=None):
    """memtrack-top -b --json -n 1 ARGS: (summary, rows in order)."""
    cmd = [TOP, "-b", "--json", "-n", "1"] + args
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                         preexec_fn=preexec)
    check(out.returncode == 0 and not out.stderr, f"{cmd}: rc {out.returncode} {out.stderr!r}")
    objs = [json.loads(line) for line in out.stdout.splitlines()]
    check(objs and objs[0]["type"] == "summary", f"{cmd}: no summary first")
    return objs[0], objs[1:]


class Pair:
    """The PAIR workload, in a session of its own: self.pids (both)."""

    def __enter__(self):
        self.p = subprocess.Popen([sys.executable, "-c", PAIR], stdout=subprocess.PIPE,
                                  start_new_session=True)
        try:
            self.pids = [int(readline(self.p.stdout, 120)) for _ in range(2)]
            check(self.p.pid in self.pids and len(set(self.pids)) == 2,
                  f"pair: pids {self.pids}, started {self.p.pid}")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        os.killpg(self.p.pid, 9)
        self.p.wait()


def sample_between_rollups(args, pids, text):
    """The second sample of a memtrack-top -b run with smaps_rollup of pids
    read just before and just after it, while memtrack-top sleeps between
    samples: the pages it maps itself (libc...) are shared with the
    workload and count in its PSS, so the reads must see memtrack-top
    alive, with its code paths run once already.  (sample, before, after):
    the sample as JSON objects, or as text lines."""
    cmd = [TOP, "-b", "-n", "3", "-d", "3"] + ([] if text else ["--json"]) + args
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE)
    try:
        def one():
            if text:  # header lines, a blank line, titles and rows, a blank line
                lines, blanks = [], 0
                while blanks < 2:
                    line = readline(p.stdout, 120).rstrip("\n")
                    blanks += not line
                    lines.append(line)
                return lines
            first = json.loads(readline(p.stdout, 120))
            return [first] + [json.loads(readline(p.stdout, 120))
                              for _ in range(first["processes"])]
        one()
        before = {pid: rollup(pid) for pid in pids}
        sample = one()
        after = {pid: rollup(pid) for pid in pids}
        one()
        check(p.wait(timeout=120) == 0, f"{cmd}: rc {p.returncode}")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return sample, before, after


def sample_held_still(args, pids, text, tries=5):
    """sample_between_rollups() until the pids' PSS and USS read the same
    before and after the sample (up to tries; else the last): what they
    share with other processes (libc, the interpreter) moves their PSS
    whenever one of those starts or ends, up and down again between two
    readings on a busy host, which a bracket cannot catch."""
    for _ in range(tries):
        sample, before, after = sample_between_rollups(args, pids, text)
        if all(before[p]["Pss"] == after[p]["Pss"] and uss_of(before[p]) == uss_of(after[p])
               for p in pids):
            break
    return sample, before, after


def within(got, lo, hi):
    return min(lo, hi) - PAGE <= got <= max(lo, hi) + PAGE


@test
def pss_uss_of_a_shared_mapping_match_smaps_rollup():
    with Pair() as pair:
        for flags, want in PATHS:
            with Stopped(pair.pids):
                objs, before, after = sample_held_still(["--pss", "-o", "pid"] + flags,
                                                        pair.pids, False)
                lines, tbefore, tafter = sample_held_still(["--pss", "-o", "pid"] + flags,
                                                           pair.pids, True)
            check(objs[0]["source"] == want, f"source {objs[0]['source']!r}")
            by_pid = {r["pid"]: r for r in objs[1:]}
            hdr = [i for i, line in enumerate(lines) if line.split()[:3] == ["PID", "USER", "COMMAND"]]
            check(len(hdr) == 1, f"{want}: column titles {hdr}")
            titles = lines[hdr[0]].split()
            check("PSS" in titles and "USS" in titles, f"{want}: titles {titles}")
            for pid in pair.pids:
                r = by_pid.get(pid)
                check(r is not None, f"{want}: no row for {pid}")
                b, a = before[pid], after[pid]
                check(within(r["pss"], b["Pss"], a["Pss"]),
                      f"{want}: {pid} pss {r['pss']}, smaps_rollup {b['Pss']}..{a['Pss']}")
                check(within(r["uss"], uss_of(b), uss_of(a)),
                      f"{want}: {pid} uss {r['uss']}, smaps_rollup {uss_of(b)}..{uss_of(a)}")
                # Half the shared region is each one's share; whatever else
                # they share (the interpreter's pages, libraries) at most adds
                # its whole size on top.
                other = a["Shared_Clean"] + a["Shared_Dirty"] - SHARED
                diff = r["pss"] - r["uss"]
                check(SHARED // 2 - PAGE <= diff <= SHARED // 2 + other + PAGE,
                      f"{want}: {pid} PSS - USS = {diff}, share {SHARED // 2}, other shared {other}")
                check(r["uss"] >= PRIVATE, f"{want}: {pid} USS {r['uss']} < private {PRIVATE}")
                check(a["Pss_Shmem"] // PAGE == SHARED // 2 // PAGE,
                      f"{want}: {pid} Pss_Shmem {a['Pss_Shmem']}: the workload is not as meant")
                mine = [line.split() for line in lines[hdr[0] + 1:] if line.split()[:1] == [str(pid)]]
                check(len(mine) == 1, f"{want}: {len(mine)} text rows for {pid}")
                cells = dict(zip(titles, mine[0]))
                b, a = tbefore[pid], tafter[pid]
                check(within(int(cells["PSS"]) << 10, b["Pss"], a["Pss"]) and
                      within(int(cells["USS"]) << 10, uss_of(b), uss_of(a)),
                      f"{want}: text {cells['PSS']}/{cells['USS']} KiB, smaps_rollup "
                      f"{b['Pss']}..{a['Pss']}/{uss_of(b)}..{uss_of(a)}")
            # Off by default: neither the columns nor the fields.
            _, rows = top_json(flags)
            check(all("pss" not in r and "uss" not in r for r in rows), f"{want}: pss without --pss")
            text = subprocess.run([TOP, "-b", "-n", "1"] + flags, capture_output=True,
                                  text=True, timeout=300).stdout
            check(not re.search(r"\bPSS\b", text), f"{want}: PSS column without --pss")


def readable(pid):
    try:
        rollup(pid)
        return True
    except OSError:
        return False


def smaps_opens(args):
    """(rows printed, pids whose smaps_rollup memtrack-top opened) under strace."""
    with tempfile.NamedTemporaryFile("r", suffix=".strace") as log:
        cmd = STRACE + ["-o", log.name, TOP, "-b", "--json", "-n", "1"] + args
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        check(out.returncode == 0, f"{cmd}: rc {out.returncode} {out.stderr[-300:]!r}")
        opened = [int(m) for m in re.findall(r'"/proc/(\d+)/smaps_rollup"', log.read())]
    rows = [json.loads(line) for line in out.stdout.splitlines()][1:]
    return rows, opened


@test
def smaps_rollup_read_for_printed_rows_only():
    for flags, want in PATHS:
        n = len([d for d in os.listdir("/proc") if d.isdigit()])
        check(n > 20, f"only {n} processes: the test means nothing")
        rows, opened = smaps_opens(["--pss", "--top", "5"] + flags)
        check(len(rows) == 5, f"{want}: {len(rows)} rows printed, --top 5")
        check(sorted(opened) == sorted(r["pid"] for r in rows),
              f"{want}: opened smaps_rollup of {opened}, printed {[r['pid'] for r in rows]}")
        # null only where /proc refuses us the file (memtrack-top and strace
        # themselves, among the largest in the VM, are gone now: unknown)
        known = [r for r in rows if os.path.exists(f"/proc/{r['pid']}")]
        bad = [r["pid"] for r in known if (r["pss"] is None) == readable(r["pid"])]
        check(len(known) >= 3 and not bad,
              f"{want}: pss null for a readable smaps_rollup or the reverse: {bad} "
              f"({len(known)} rows still there)")
        rows, opened = smaps_opens(["--top", "5"] + flags)
        check(len(rows) == 5 and not opened, f"{want}: without --pss opened {opened}")


def screen_table(lines):
    """(titles, rows as dicts) under the column titles; None if none, or if
    a row has not as many fields as there are titles: tmux shows a redraw
    as far as it has been written, and a capture can fall in the middle of
    one (a row cleared to its end, its new text not yet there)."""
    for i, line in enumerate(lines):
        if line.split()[:3] == ["PID", "USER", "COMMAND"]:
            titles = line.split()
            rows = []
            for row in lines[i + 1:]:
                if row.startswith("EVENTS"):
                    break
                if row.strip():
                    if len(row.split()) != len(titles):
                        return None
                    rows.append(dict(zip(titles, row.split())))
            return titles, rows
    return None


@test
def interactive_reads_smaps_of_the_rows_on_screen_only():
    # Enough processes that reading them all could not pass for the screen's.
    many = subprocess.Popen([os.path.join(TESTBIN, "manyprocs"), "200"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        check(readline(many.stdout, 120).startswith("ready"), "manyprocs did not start")
        for flags, want in PATHS:
            screen_reads_smaps(flags, want)
    finally:
        many.stdin.close()
        many.wait()


def screen_reads_smaps(flags, want):
    with tempfile.TemporaryDirectory() as d, Tmux(height=24) as tm:
        log = os.path.join(d, "strace")
        # 24 lines: 6 of header, the titles, 11 rows, the events pane;
        # DONE42 on screen once strace has ended (its log whole)
        tm.type(" ".join(STRACE + ["-o", log, TOP, "-d", "1"] + flags) +
                "; echo DONE$((6*7))")
        tm.keys("Enter")

        def table(pred, what):
            """The first whole table on screen for which pred holds."""
            seen = []
            tm.wait(lambda ls: seen.append(screen_table(ls)) or (seen[-1] and pred(*seen[-1])),
                    f"{want}: {what}", timeout=120)
            return seen[-1]
        titles, _ = table(lambda titles, rows: rows, "no table")
        check("PSS" not in titles, f"{want}: PSS before X")
        tm.keys("X")
        table(lambda titles, rows: "PSS" in titles, "no PSS after X")
        time.sleep(3)  # a few refreshes and redraws
        titles, rows = table(lambda titles, rows: True, "no whole table")
        tm.keys("q")
        tm.wait(lambda ls: any(line.strip() == "DONE42" for line in ls),
                f"{want}: memtrack-top did not quit")
        with open(log) as f:
            opened = {int(m) for m in re.findall(r'"/proc/(\d+)/smaps_rollup"', f.read())}
    shown = {int(r["PID"]) for r in rows if r["PSS"] != "-"}
    nproc = len([p for p in os.listdir("/proc") if p.isdigit()])
    check(len(rows) == 11 and shown, f"{want}: {len(rows)} rows on screen, {len(shown)} with PSS")
    check(shown <= opened, f"{want}: PSS shown for {shown - opened} without reading them")
    # Each redraw reads the 11 rows then on screen; the order by RSS
    # moves a little between refreshes, never to most of the processes.
    check(len(opened) <= 3 * len(rows) < nproc,
          f"{want}: smaps_rollup of {len(opened)} processes opened, {len(rows)} on screen, "
          f"{nproc} processes")


def vm_test(fn):
    """Needs the module: registered in the VM only."""
    return test(fn) if IN_VM else fn


@vm_test
def unprivileged_sees_memory_of_all_and_events_of_its_own():
    # A process of nobody's that allocates all the time, and one of root's.
    grower = subprocess.Popen([os.path.join(TESTBIN, "grower"), "64", "50"],
                              stdout=subprocess.PIPE, preexec_fn=drop_privileges)
    sleeper = subprocess.Popen(["sleep", "1000"])
    try:
        check(readline(grower.stdout).strip() == "ready", "grower did not start")
        mine = sleeper.pid
        # every process: kernel threads too (-b hides them by default)
        cmd = [TOP, "-b", "--json", "-n", "2", "-d", "1", "--pss", "--kernel-threads"]
        with Stopped([mine]):
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                                 preexec_fn=drop_privileges)
            with open(f"/proc/{mine}/status") as f:
                st = {k: v.split() for k, v in (line.split(":", 1) for line in f)}
        check(out.returncode == 0 and not out.stderr, f"as nobody: rc {out.returncode} {out.stderr!r}")
        objs = [json.loads(line) for line in out.stdout.splitlines()]
        sums = [i for i, o in enumerate(objs) if o["type"] == "summary"]
        check(len(sums) == 2, f"{len(sums)} samples")
        check(objs[sums[1]]["source"] == "memtrack module", "not the module")
        rows = {o["pid"]: o for o in objs[sums[1] + 1:]}
        # Memory of every process, as /proc/PID/status shows it to anyone.
        rss = sum(int(st[k][0]) << 10 for k in ("RssAnon", "RssFile", "RssShmem"))
        check(mine in rows and abs(rows[mine]["rss"] - rss) <= PAGE,
              f"root's sleep: {rows.get(mine, {}).get('rss')}, status {rss}")
        all_pids = {int(d) for d in os.listdir("/proc") if d.isdigit()}
        check(len(rows) > 20 and len(set(rows) & all_pids) > len(all_pids) // 2,
              f"{len(rows)} rows of {len(all_pids)} processes")
        # Event counters exactly where the module's rule allows: own processes.
        bad = [(pid, r["uid"], r["pgalloc_rate"]) for pid, r in rows.items()
               if (r["pgalloc_rate"] is not None) != (r["uid"] == NOBODY) or
               (r["kmalloc_rate"] is not None) != (r["uid"] == NOBODY)]
        check(not bad, f"event counters against the rule: {bad[:5]}")
        g = rows.get(grower.pid)
        check(g and g["uid"] == NOBODY and g["pgalloc_rate"] > 0,
              f"nobody's grower: {g}")
        # smaps_rollup as /proc allows it: nobody's processes only.
        bad = [(pid, r["uid"]) for pid, r in rows.items()
               if r["uid"] != NOBODY and r["pss"] is not None]
        check(not bad, f"PSS of other users' processes: {bad[:5]}")
        check(g["pss"] is not None and g["uss"] > 0, f"grower's PSS: {g}")
        # The text marks the hidden counters "-".
        out = subprocess.run([TOP, "-b", "-n", "1"], capture_output=True, text=True,
                             timeout=300, preexec_fn=drop_privileges).stdout
        lines = out.splitlines()
        hdr = [i for i, line in enumerate(lines) if line.split()[:3] == ["PID", "USER", "COMMAND"]][0]
        titles = lines[hdr].split()
        cells = {int(c[0]): dict(zip(titles, c)) for c in
                 (line.split() for line in lines[hdr + 1:]) if c}
        check(cells[mine]["PGALLOC/s"] == "-" and cells[mine]["KMALLOC/s"] == "-",
              f"root's row as nobody: {cells[mine]}")
        check(cells[grower.pid]["PGALLOC/s"] != "-", f"nobody's row: {cells[grower.pid]}")
    finally:
        for p in (grower, sleeper):
            p.kill()
            p.wait()


if __name__ == "__main__":
    sys.exit(run_tests(sys.argv))
