#!/usr/bin/env python3
"""memtrack-top's data source (libmemtrack's mt_source_*) and memtrack-top
itself, against workloads of known size and /proc.  In the VM (MEMTRACK_VM
set, module loaded) both paths are checked: the module, and /proc forced;
on the host (tests/host/test_top.sh) only /proc, which it then must pick by
itself."""
import contextlib
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tmuxlib import Tmux  # noqa: E402
from uapi import COUNTER_INFO  # noqa: E402
from mtlib import (PAGE, ROOT, TESTBIN, Memload, Stopped, check, read_config,  # noqa: E402
                   read_table, readline, row, run_tests, set_config, test)

IN_VM = bool(os.environ.get("MEMTRACK_VM"))
SOURCE_DUMP = os.path.join(ROOT, "build", "tests", "user", "source_dump")
TOP = os.path.join(ROOT, "build", "bin", "memtrack-top")
# (flags, expected source name) for each path this machine has
PATHS = [([], "memtrack module"), (["--proc"], "/proc")] if IN_VM else [([], "/proc")]
CGNAME = "mt-top-test"


def source_dump(flags, tgid=None):
    """(source name, sys dict, rows by pid) from user/tests/helpers/source_dump."""
    args = [SOURCE_DUMP] + flags + (["-T", str(tgid)] if tgid else [])
    out = subprocess.run(args, capture_output=True, text=True, timeout=120)
    check(out.returncode == 0, f"{args}: {out.stderr.strip()}")
    name, si, rows = None, {}, {}
    for line in out.stdout.splitlines():
        kind, rest = line.split(" ", 1)
        if kind == "source":
            name = rest
        elif kind == "sys":
            k, v = rest.split()
            si[k] = int(v)
        else:
            fields, comm = rest.split(" comm=", 1)  # comm last: it may hold spaces
            r = {k: int(v) for k, v in (kv.split("=", 1) for kv in fields.split(" "))}
            r["comm"] = comm
            rows.setdefault(r["pid"], []).append(r)
    return name, si, rows


def status(pid):
    with open(f"/proc/{pid}/status") as f:
        return {k: v.split() for k, v in (line.split(":", 1) for line in f)}


def cgroup2_root():
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4] for line in f
                if line.split(" - ")[1].startswith("cgroup2 ") and line.split()[3] == "/"][0]


def cgroup_ino(pid):
    with open(f"/proc/{pid}/cgroup") as f:
        path = [line.split("::", 1)[1].strip() for line in f if line.startswith("0::")][0]
    return os.stat(cgroup2_root() + path).st_ino


def make_cgroup(name, pids, limit):
    """A cgroup holding pids; memory.max = limit (None: left at "max") where
    the memory controller is on cgroup v2 (the VM; not a hybrid host).
    (path, inode, the limit or None for none)."""
    root = cgroup2_root()
    try:
        with open(f"{root}/cgroup.subtree_control", "w") as f:
            f.write("+memory")
    except OSError:
        pass  # no memory controller on v2 here
    path = os.path.join(root, name)
    os.makedirs(path, exist_ok=True)
    for pid in pids:
        with open(f"{path}/cgroup.procs", "w") as f:
            f.write(str(pid))
    got = None
    if os.path.exists(f"{path}/memory.max") and limit is not None:
        with open(f"{path}/memory.max", "w") as f:
            f.write(str(limit))
        got = limit
    check(got or limit is None or not IN_VM, "no memory.max in the VM")
    return path, os.stat(path).st_ino, got


class Workload:
    """memload with 8 MiB anon + 2 MiB shmem and 3 threads, in a cgroup of
    its own."""

    def __enter__(self):
        self.m = Memload()
        self.m.cmd(f"anon {8 << 20}")
        self.m.cmd(f"shared {2 << 20}")
        self.m.cmd("threads 3")
        self.cg, self.m.cg_ino, self.m.cg_max = make_cgroup(CGNAME, [self.m.pid], 256 << 20)
        return self.m

    def __exit__(self, *exc):
        self.m.close()
        self.m.__exit__(*exc)
        os.rmdir(self.cg)


@test
def source_picks_the_module_when_loaded_else_proc():
    for flags, want in PATHS:
        name, si, _ = source_dump(flags)
        check(name == want, f"{flags}: source {name!r}, expected {want!r}")
        check(si["module"] == (want == "memtrack module"), f"{flags}: module flag {si['module']}")
        check(si["is_module"] == si["module"], f"{flags}: mt_source_is_module {si['is_module']}")
        with open("/proc/meminfo") as f:
            mi = {k: int(v.split()[0]) for k, v in (line.split(":", 1) for line in f)}
        check(si["mem_total"] == mi["MemTotal"] * 1024,
              f"{flags}: mem_total {si['mem_total']}, meminfo {mi['MemTotal']} kB")
        check(si["swap_total"] == mi["SwapTotal"] * 1024, f"{flags}: swap_total")
        if want == "/proc":
            check(si["kmallocs"] == 0, "/proc source reports kmallocs")
            with open("/proc/vmstat") as f:
                vm = dict(line.split() for line in f)
            check(si["oom_kills"] == int(vm["oom_kill"]), "oom_kills not vmstat's")
            check(si["page_allocs"] > 0, "no page allocations from /proc/vmstat")
            check(0 < si["pgfault"] <= int(vm["pgfault"]) and
                  si["pgmajfault"] <= int(vm["pgmajfault"]),
                  f"pgfault {si['pgfault']} pgmajfault {si['pgmajfault']}, vmstat's "
                  f"{vm['pgfault']} {vm['pgmajfault']}")
        else:
            check(si["kmallocs"] > 0, "module source has no kmallocs")
            check(si["pgfault"] == 0 and si["pgmajfault"] == 0, "module source has pgfault")


@test
def source_flags_module_only_and_no_cgroup():
    # MT_SOURCE_MODULE: the module or nothing (never /proc in its place)
    out = subprocess.run([SOURCE_DUMP, "--module"], capture_output=True, text=True, timeout=120)
    if IN_VM:
        check(out.returncode == 0 and out.stdout.startswith("source memtrack module\n"),
              f"--module: rc {out.returncode}, {out.stdout[:40]!r} {out.stderr!r}")
    else:
        check(out.returncode == 1 and "memtrack.ko is not loaded" in out.stderr,
              f"--module without the module: rc {out.returncode}, {out.stderr!r}")
    out = subprocess.run([SOURCE_DUMP, "--proc", "--module"], capture_output=True, text=True)
    check(out.returncode == 1 and "source_dump:" in out.stderr and not out.stdout,
          f"--proc --module: rc {out.returncode}, {out.stderr!r}")
    # MT_SOURCE_NO_CGROUP: /proc rows without cgroup_id, the rest the same
    with Workload() as m:
        _, _, rows = source_dump(["--proc", "--no-cgroup"])
        r = [r for r in rows.get(m.pid, []) if not r["exited"]]
        check(len(r) == 1 and r[0]["comm"] == "memload" and r[0]["threads"] == 4,
              f"--no-cgroup: memload rows {r}")
        check(all(r["cgroup_id"] == 0 for rs in rows.values() for r in rs),
              "--no-cgroup: a row with a cgroup_id")


@test
def known_workload_row_matches_proc_status():
    with Workload() as m:
        for flags, want in PATHS:
            with Stopped([m.pid]):
                _, _, rows = source_dump(flags)
                st = status(m.pid)
            r = [r for r in rows.get(m.pid, []) if not r["exited"]]
            check(len(r) == 1, f"{want}: {len(r)} rows for memload")
            r = r[0]
            for k, sk in (("rss_anon", "RssAnon"), ("rss_file", "RssFile"),
                          ("rss_shmem", "RssShmem")):
                check(abs(r[k] - int(st[sk][0]) * 1024) <= PAGE,
                      f"{want}: {k} {r[k]}, /proc/PID/status {st[sk]}")
            # 6.1 counts RSS per thread and folds it in every 64 faults:
            # a few pages may be missing from both, never more
            check(r["rss_anon"] >= (8 << 20) - 64 * PAGE and
                  r["rss_shmem"] >= (2 << 20) - 64 * PAGE,
                  f"{want}: anon {r['rss_anon']} shmem {r['rss_shmem']}")
            check(r["threads"] == 4, f"{want}: {r['threads']} threads, expected 4")
            check(r["ppid"] == os.getpid(), f"{want}: ppid {r['ppid']}")
            check(r["cgroup_id"] == m.cg_ino == cgroup_ino(m.pid),
                  f"{want}: cgroup_id {r['cgroup_id']}, inode {m.cg_ino}")
            check(r["comm"] == "memload", f"{want}: comm {r['comm']!r}")
            check(r["uid"] == os.getuid(), f"{want}: uid {r['uid']}")


@test
def thread_rows_of_the_workload():
    with Workload() as m:
        tids = sorted(int(t) for t in os.listdir(f"/proc/{m.pid}/task"))
        for flags, want in PATHS:
            _, _, rows = source_dump(flags, tgid=m.pid)
            live = sorted(pid for pid, rs in rows.items() for r in rs if not r["exited"])
            check(live == tids, f"{want}: thread rows {live}, /proc {tids}")
            for pid in live:
                r = rows[pid][0]
                check(r["tgid"] == m.pid and r["threads"] == 1 and r["ppid"] == os.getpid(),
                      f"{want}: thread {pid}: {r}")


@test
def threads_of_a_missing_process_fail():
    for flags, want in PATHS:
        out = subprocess.run([SOURCE_DUMP] + flags + ["-T", "2147483647"],
                             capture_output=True, text=True)
        check(out.returncode == 1 and "source_dump:" in out.stderr,
              f"{want}: rc {out.returncode}, {out.stderr!r}")


# ---- memtrack-top -b ------------------------------------------------------------

def top_json(flags, n=1, delay=None):
    """memtrack-top -b --json: a list of samples, each (summary, rows by pid)."""
    args = [TOP, "-b", "--json", "-n", str(n)] + (["-d", str(delay)] if delay else []) + flags
    # strict UTF-8: a byte sequence that is not fails here
    out = subprocess.run(args, capture_output=True, encoding="utf-8", timeout=300)
    check(out.returncode == 0 and not out.stderr, f"{args}: rc {out.returncode} {out.stderr!r}")
    samples = []
    for line in out.stdout.splitlines():
        o = json.loads(line)
        if o["type"] == "summary":
            samples.append((o, {}))
        else:
            check(o["pid"] not in samples[-1][1], f"pid {o['pid']} twice in a sample")
            samples[-1][1][o["pid"]] = o
    check(len(samples) == n, f"{len(samples)} samples, expected {n}")
    return samples


# The columns of /proc/memtrack/tasks a JSON row carries under the same name.
SAME = ("ppid", "uid", "comm", "threads", "cgroup_id", "start_ns", "rss_anon",
        "rss_file", "rss_shmem", "swap", "vm_total", "min_flt", "maj_flt")


def vm_test(fn):
    """A test of the module path: registered in the VM only."""
    return test(fn) if IN_VM else fn


@vm_test
def batch_json_equals_proc_memtrack_tasks():
    with Workload() as m:
        with Stopped([m.pid]):
            (summary, rows), = top_json(["--kernel-threads"])
            proc = read_table("tasks")
        check(summary["source"] == "memtrack module" and summary["module"],
              f"source {summary['source']!r}")
        live = {pid: [r for r in rs if r["state"] == "R"] for pid, rs in proc.items()}
        bad = []
        for pid, j in rows.items():
            if pid == os.getpid() or j["comm"] == "memtrack-top":
                continue  # the two that run meanwhile
            r = live.get(pid)
            if not r and not j["vm_total"]:
                continue  # a kernel thread (a worker) may exit between the reads
            if not r:
                bad.append((pid, "not live in /proc/memtrack/tasks"))
                continue
            r = r[0]
            d = [k for k in SAME if j[k] != r[k]]
            if j["cpu_ns"] != r["utime_ns"] + r["stime_ns"] and r["vm_total"]:
                d.append("cpu_ns")
            if j["rss"] != r["rss_anon"] + r["rss_file"] + r["rss_shmem"]:
                d.append("rss")
            if d and r["vm_total"]:  # kernel threads (no mm) may move meanwhile
                bad.append((pid, j["comm"], [(k, j.get(k), r.get(k)) for k in d][:3]))
        # kernel threads (workers) may start between the two reads
        missing = [(pid, rs[0]["comm"]) for pid, rs in live.items()
                   if rs and pid not in rows and pid != os.getpid() and rs[0]["vm_total"]]
        check(not bad, f"{len(bad)} rows differ: {bad[:5]}")
        check(not missing, f"live in /proc/memtrack/tasks, not in the output: {missing[:10]}")
        check(m.pid in rows and rows[m.pid]["threads"] == 4, "memload row")
        check(len(rows) == summary["processes"], "processes count")


def kernel_thread_pids():
    """The pids whose flags have PF_KTHREAD (include/linux/sched.h)."""
    pids = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                flags = int(f.read().rsplit(")", 1)[1].split()[6])
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
        if flags & 0x00200000:
            pids.add(int(pid))
    return pids


@test
def batch_hides_kernel_threads_as_the_view_does():
    """-b lists no kernel thread (PF_KTHREAD), as the interactive view
    hides them at start, in text and JSON, its processes count the rows it
    lists; --kernel-threads lists them (kthreadd, pid 2, among them), as
    in the view started with it.  -b listed every kernel thread."""
    kthreads = kernel_thread_pids()
    check(2 in kthreads, f"kthreadd is not a kernel thread here: {sorted(kthreads)[:5]}")
    for flags, want in PATHS:
        (summary, rows), = top_json(flags)
        shown = kthreads & set(rows)
        check(not shown, f"{want}: kernel threads listed: {sorted(shown)[:10]}")
        check(summary["processes"] == len(rows), f"{want}: {summary['processes']} processes, "
                                                 f"{len(rows)} rows")
        (summary, rows), = top_json(flags + ["--kernel-threads"])
        check(rows.get(2, {}).get("comm") == "kthreadd" and
              summary["processes"] == len(rows),
              f"{want} --kernel-threads: pid 2 {rows.get(2)}, {summary['processes']} processes, "
              f"{len(rows)} rows")
        for extra, listed in (([], False), (["--kernel-threads"], True)):
            out = subprocess.run([TOP, "-b", "-n", "1"] + flags + extra, capture_output=True,
                                 text=True, timeout=120).stdout
            pids = {line.split()[0] for line in out.splitlines()[7:] if line.split()}
            check(("2" in pids) == listed, f"{want} {extra}: text lists pid 2: {'2' in pids}")


@test
def batch_rows_of_a_known_workload():
    free = subprocess.Popen(["sleep", "600"])
    path, _, _ = make_cgroup(CGNAME + "-nolimit", [free.pid], None)
    try:
        batch_rows(free)
    finally:
        free.kill()
        free.wait()
        os.rmdir(path)


def batch_rows(free):
    with Workload() as m:
        for flags, want in PATHS:
            with Stopped([m.pid]):
                (summary, rows), = top_json(flags)
                st = status(m.pid)
                text = subprocess.run([TOP, "-b", "-n", "1"] + flags, capture_output=True,
                                      text=True, timeout=120).stdout
            check(summary["source"] == want, f"{flags}: source {summary['source']!r}")
            r = rows.get(m.pid)
            check(r is not None, f"{want}: no memload row")
            rss = sum(int(st[k][0]) * 1024 for k in ("RssAnon", "RssFile", "RssShmem"))
            check(abs(r["rss"] - rss) <= PAGE, f"{want}: RSS {r['rss']}, status {rss}")
            check(r["threads"] == 4 and r["ppid"] == os.getpid() and r["cgroup_id"] == m.cg_ino,
                  f"{want}: {r}")
            check(("pgalloc_rate" in r) == (want == "memtrack module"), f"{want}: pgalloc_rate")
            check(r["cgroup"] == "/" + CGNAME and r["cgroup_max"] == m.cg_max,
                  f"{want}: cgroup {r['cgroup']!r} max {r['cgroup_max']}, expected {m.cg_max}")
            # no limit ("max", or no memory controller): null, not 0
            nl = rows.get(free.pid)
            check(nl and nl["cgroup"] == "/" + CGNAME + "-nolimit" and
                  nl["cgroup_max"] is None, f"{want}: a cgroup without a limit: {nl}")
            # The text: header lines, the column titles, a line per process.
            lines = text.splitlines()
            check(f"source: {want}," in lines[0], f"{want}: first line {lines[0]!r}")
            hdr = [i for i, line in enumerate(lines) if line.split()[:3] == ["PID", "USER", "COMMAND"]]
            check(len(hdr) == 1, f"{want}: column titles {hdr}")
            titles = lines[hdr[0]].split()
            check(("PGALLOC/s" in titles) == (want == "memtrack module"), f"{want}: {titles}")
            mine = [line.split() for line in lines[hdr[0] + 1:] if line.split()[:1] == [str(m.pid)]]
            check(len(mine) == 1, f"{want}: {len(mine)} text rows for memload")
            row = dict(zip(titles, mine[0]))
            check(row["COMMAND"] == "memload" and abs(int(row["RSS"]) * 1024 - rss) <= PAGE and
                  int(row["ANON"]) == r["rss_anon"] >> 10 and row["CGROUP"] == "/" + CGNAME and
                  row["LIMIT"] == (str(m.cg_max >> 10) if m.cg_max else "-"),
                  f"{want}: text row {row}")


class Named:
    """A process that set its comm to these bytes (/proc/self/comm)."""

    def __init__(self, comm):
        self.comm = comm

    def __enter__(self):
        code = ("import sys, time; open('/proc/self/comm', 'wb').write(bytes.fromhex(sys.argv[1]));"
                " print('ok', flush=True); time.sleep(600)")
        self.p = subprocess.Popen([sys.executable, "-c", code, self.comm.hex()],
                                  stdout=subprocess.PIPE)
        self.pid = self.p.pid
        if self.p.stdout.readline() != b"ok\n":
            self.__exit__()
            check(False, f"comm {self.comm!r} not set")
        return self

    def __exit__(self, *exc):
        self.p.kill()
        self.p.wait()


# comm bytes -> the comm in JSON: UTF-8 as it is, the rest as U+FFFD (the
# kernel keeps 15 bytes: the last cuts an é in two)
COMMS = [(b"sl\xc3\xa9\xe2\x82\xacp", "sl\u00e9\u20acp"),
         (b"\xf0\x9f\x98\x80 \"q\\\t", "\U0001f600 \"q\\\t"),
         (b"bad\xff\xc3(\xed\xa0\x80)", "bad\ufffd\ufffd(\ufffd\ufffd\ufffd)"),
         (b"\xc3\xa9" * 8, "\u00e9" * 7 + "\ufffd")]


@test
def batch_json_comm_is_utf8():
    with contextlib.ExitStack() as stack:
        procs = [stack.enter_context(Named(raw)) for raw, _ in COMMS]
        for flags, want in PATHS:
            (_, rows), = top_json(flags)
            for p, (raw, comm) in zip(procs, COMMS):
                r = rows.get(p.pid)
                check(r is not None, f"{want}: no row for comm {raw!r}")
                check(r["comm"] == comm, f"{want}: comm {r['comm']!r}, expected {comm!r}")


def settle(pid, timeout=30):
    """Wait until pid's RSS (/proc/PID/statm) has not moved for 1.5 s."""
    end, last, same = time.monotonic() + timeout, None, 0
    while time.monotonic() < end and same < 3:
        with open(f"/proc/{pid}/statm") as f:
            rss = f.read().split()[1]
        same = same + 1 if rss == last else 0
        last = rss
        time.sleep(0.5)


def grower(*args):
    g = subprocess.Popen([os.path.join(TESTBIN, "grower")] + [str(a) for a in args],
                         stdout=subprocess.PIPE)
    check(readline(g.stdout).strip() == "ready", "grower did not start")
    return g


@contextlib.contextmanager
def a_grower(*args):
    """grower(*args), killed at the end of the with-block."""
    g = grower(*args)
    try:
        yield g
    finally:
        g.kill()
        g.wait()


@test
def growth_flag_needs_the_whole_window():
    """A leaking grower (2.5 MiB/s), a sawtooth (the same steps, all unmapped
    every 6) and a steady memload, sampled every DELAY with a growth window
    of 16 DELAYs (quarters of 4 samples): nothing is flagged before the
    window is seen whole; then the grower is, from then on; the sawtooth and
    memload never; with a minimum rate above the grower's, nothing."""
    # 64 pages a step: 6.1 folds a thread's RSS into the mm's every 64
    # faults, so each step shows.  Every check below takes the samples'
    # own times, so a guest that samples late still tests the window.
    # Quarters of 1 s: the sawtooth's 0.6 s cycle then moves back 2 of its
    # 6 steps from one quarter's end to the next (with 2 s quarters, on 2),
    # so it cannot grow over all four.
    delay = 0.25
    window = 16 * delay
    g, saw = grower(256, 100), grower(256, 100, 6)
    try:
        with Workload() as m:
            settle(m.pid)
            for flags, want in PATHS:
                args = flags + ["--growth-window", str(window)]
                samples = top_json(args, n=22, delay=delay)
                t0 = samples[0][0]["time"]
                check(samples[0][0]["growth_window"] == window and
                      samples[0][0]["growth_min_rate"] == 1024,
                      f"{want}: summary {samples[0][0]}")
                for summ, rows in samples:
                    age = summ["time"] - t0
                    gr, sw, ml = rows.get(g.pid), rows.get(saw.pid), rows.get(m.pid)
                    check(gr and sw and ml, f"{want}: rows missing at {age:.1f} s")
                    check(not sw["growing"] and not ml["growing"],
                          f"{want}: at {age:.1f} s sawtooth {sw} memload {ml} flagged")
                    if age < window:
                        check(not gr["growing"], f"{want}: grower flagged at {age:.1f} s "
                              f"of a {window} s window: {gr}")
                    elif age >= window + window / 4:
                        check(gr["growing"] and gr["rss_growth"] > 0,
                              f"{want}: grower not flagged at {age:.1f} s: {gr}")
                # Before the window slides, GROWTH and its rate are the
                # change since the first sample (a loaded 6.1 guest once
                # folded 2 MiB of a thread's cached RSS count into the mm's
                # in the middle: compare with the samples, not a constant).
                summ, rows = samples[5]
                gr, ml = rows[g.pid], rows[m.pid]
                r0 = samples[0][1][g.pid]["rss"]
                want_rate = (gr["rss"] - r0) / (summ["time"] - t0)
                check(gr["rss_growth"] == gr["rss"] - r0 and
                      abs(gr["growth_rate"] - want_rate) <= 0.01 * want_rate + 1,
                      f"{want}: rate {gr['growth_rate']}, samples say {want_rate}")
                check(ml["rss_growth"] == ml["rss"] - samples[0][1][m.pid]["rss"],
                      f"{want}: memload's growth {ml}")
                # The text screen with the same window: with quarters of
                # 0.25 s a grower's step delayed by a loaded guest left a
                # quarter without growth, and no flag.
                out = subprocess.run([TOP, "-b", "-n", "22", "-d", str(delay),
                                      "--growth-window", str(window)] + flags,
                                     capture_output=True, text=True, timeout=300).stdout
                last_text = out.split("memtrack-top - ")[-1].splitlines()
                flags_of = {line.split()[0]: line.split()[-1] for line in last_text
                            if line.split()[:1] in ([str(g.pid)], [str(m.pid)])}
                check(flags_of.get(str(g.pid), "").startswith("LEAK?+") and
                      flags_of.get(str(m.pid)) == "-", f"{want}: text flags {flags_of}")
                slow = top_json(args[:-2] + ["--growth-window", str(window / 4),
                                             "--growth-min-rate", "100M"],
                                n=12, delay=delay / 2)
                check(not any(rows[g.pid]["growing"] for _, rows in slow),
                      f"{want}: grower flagged under a 100 MiB/s minimum")
    finally:
        for p in (g, saw):
            p.kill()
            p.wait()


@test
def bad_arguments_are_refused():
    for args in (["-n", "0"], ["-n", "x"], ["-d", "0"], ["-d", "nan"], ["-d", "5000"],
                 ["-o", "bogus"], ["--json"], ["-b", "extra"], ["--bogus"],
                 ["--growth-window", "0.5"], ["--growth-window", "x"],
                 ["--growth-window", "100000"], ["--growth-min-rate", "-1"],
                 ["--growth-min-rate", "5X"], ["--growth-min-rate", "nan"],
                 ["-o", "flag"], ["-o", "user"], ["-p", "x"], ["-p", "1,"], ["-p", "0"],
                 ["-p", "1,-2"], ["--pid", ""], ["-u", "no-such-user-mt"], ["--user", "-1"]):
        out = subprocess.run([TOP] + (["-b"] if args != ["--json"] else []) + args,
                             capture_output=True, text=True, timeout=60)
        check(out.returncode == 2 and out.stderr and not out.stdout,
              f"{args}: rc {out.returncode}, stdout {out.stdout[:80]!r}")


# -o's keys: every column that sorts, by its title (any case, "/s" may go)
SORT_KEYS = {"pid": "PID", "cpu": "%CPU", "%cpu": "%CPU", "rss": "RSS", "anon": "ANON",
             "file": "FILE", "shmem": "SHMEM", "swap": "SWAP", "virt": "VIRT",
             "minflt": "MINFLT/s", "MAJFLT/s": "MAJFLT/s", "pgalloc": "PGALLOC/s",
             "kmalloc": "KMALLOC/s", "growth": "GROWTH"}


@test
def options_pid_user_filter_and_every_sort_key():
    """-p PID,... lists exactly those processes, -u USER only the user's,
    -F/--filter only the commands holding the text, -o takes every column
    that sorts (it took rss, cpu, time, pid, growth): in -b --json and in
    the interactive view (the rows and the header's sort on screen)."""
    with Memload() as a, Memload() as b, Tmux() as tm:
        a.cmd(f"anon {4 << 20}")
        b.cmd(f"anon {16 << 20}")
        pids = f"{a.pid},{b.pid},1"
        me = pwd.getpwuid(os.getuid()).pw_name
        for flags, want in PATHS:
            def rows(*args):
                """The pids of -b --json's task lines, in their order."""
                cmd = [TOP, "-b", "--json", "-n", "1"] + flags + list(args)
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
                check(out.returncode == 0 and not out.stderr,
                      f"{cmd}: rc {out.returncode} {out.stderr!r}")
                return [o["pid"] for o in map(json.loads, out.stdout.splitlines())
                        if o["type"] == "task"]
            check(sorted(rows("-p", f"{a.pid},{b.pid}")) == sorted([a.pid, b.pid]),
                  f"{want}: -p {rows('-p', f'{a.pid},{b.pid}')}")
            check(rows("--pid", str(b.pid), "-p", str(a.pid), "-o", "pid") ==
                  sorted([a.pid, b.pid]), f"{want}: --pid and -p add up")
            check(rows("-p", pids, "-u", "nobody") == [], f"{want}: -u nobody")
            check(sorted(rows("-p", f"{a.pid},{b.pid}", "--user", me)) ==
                  sorted([a.pid, b.pid]), f"{want}: -u {me}")
            check(sorted(rows("-p", f"{a.pid},{b.pid}", "-u", str(os.getuid()))) ==
                  sorted([a.pid, b.pid]), f"{want}: -u by uid")
            check(sorted(rows("-p", pids, "-F", "MEMLOAD")) == sorted([a.pid, b.pid]),
                  f"{want}: -F")
            check(sorted(rows("-p", pids, "--filter", "memload")) == sorted([a.pid, b.pid]),
                  f"{want}: --filter")
            for key, title in SORT_KEYS.items():
                if not shown_here(next(c for c in COLUMNS if c[0] == title), want):
                    continue  # refused: every_abi_counter_has_a_column
                got = rows("-p", f"{a.pid},{b.pid}", "-o", key)
                check(sorted(got) == sorted([a.pid, b.pid]), f"{want}: -o {key}: {got}")
            check(rows("-p", f"{a.pid},{b.pid}", "-o", "anon") == [b.pid, a.pid] and
                  rows("-p", f"{a.pid},{b.pid}", "-o", "PID") == sorted([a.pid, b.pid]),
                  f"{want}: -o anon / PID orders")
            for args, shown, sort in ((["-p", f"{a.pid},{b.pid}", "-o", "virt"], [b.pid, a.pid],
                                       "VIRT"),
                                      (["-p", pids, "-F", "memload", "-o", "pid"],
                                       sorted([a.pid, b.pid]), "PID"),
                                      (["-p", pids, "-u", "nobody", "-o", "majflt"], [],
                                       "MAJFLT/s")):
                tm.type(" ".join([TOP, "-d", str(REFRESH)] + flags + args))
                tm.keys("Enter")
                tm.wait_settled(lambda ls: tm.alternate_on() and f"sort: {sort}" in ls[0] and
                                table(ls) is not None and
                                [int(r["PID"]) for r in table(ls)] == shown,
                                f"{want}: {args}: want rows {shown}")
                tm.keys("q")
                tm.wait(lambda ls: not tm.alternate_on(), f"{want}: {args}: q")


# ---- the columns: one table, every ABI counter among them ----------------------

def counter_key(title):
    """A counter column's JSON name: its title in lower case, "/s" as
    "_rate", other characters than letters and digits as "_" (MINFLT/s:
    minflt_rate, as -b --json has always named it)."""
    rate = title.endswith("/s")
    base = title[:-2] if rate else title
    return re.sub(r"[^a-z0-9]", "_", base.lower()) + ("_rate" if rate else "")


# The counters shown by default (the others are added by F2, toprc, -o).
DEFAULT_COUNTERS = ("min_flt", "maj_flt", "pg_alloc", "kmalloc_calls")
# Every column, in the table's order: (title, JSON name, shown by default,
# what it needs, whether it sorts).  The counters' come from the ABI's list
# (tests/guest/uapi.py): a counter appended there is a column here too.
COLUMNS = (
    [("PID", "pid", True, None, True), ("USER", "user", True, None, False),
     ("COMMAND", "comm", True, None, False), ("CGROUP", "cgroup", True, None, False),
     ("CONTAINER", "container", True, "containers", False),
     ("POD", "pod", True, "containers", False), ("%CPU", "cpu_pct", True, None, True),
     ("RSS", "rss", True, None, True), ("ANON", "rss_anon", True, None, True),
     ("FILE", "rss_file", True, None, True), ("SHMEM", "rss_shmem", True, None, True),
     ("PSS", "pss", True, "smaps", False), ("USS", "uss", True, "smaps", False),
     ("SWAP", "swap", True, None, True), ("VIRT", "vm_total", True, None, True),
     ("LIMIT", "cgroup_max", True, None, False)] +
    [(c["title"], counter_key(c["title"]), c["name"] in DEFAULT_COUNTERS,
      None if c["name"] in ("min_flt", "maj_flt") else "module", True)
     for c in COUNTER_INFO] +
    [("GROWTH", "rss_growth", True, None, True), ("FLAG", "flag", True, None, False)])


def shown_here(col, want, smaps=False):
    """Whether a column can show on this path (no container here)."""
    needs = col[3]
    return (needs is None or (needs == "module" and want == "memtrack module") or
            (needs == "smaps" and smaps))


def top_run(args, env=None):
    out = subprocess.run([TOP] + args, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, **(env or {})))
    check(out.returncode == 0 and not out.stderr,
          f"{args}: rc {out.returncode} {out.stderr!r}")
    return out.stdout


def text_titles(out):
    """The column titles of -b's text (the line after the blank one)."""
    lines = out.splitlines()
    return lines[lines.index("") + 1].split()


def refused(key, flags, want, pid):
    """-o key of a counter only the module counts, on /proc: exit 2, the
    reason on stderr, nothing printed (it sorted by nothing, silently)."""
    for args in (["-b", "-n", "1"], ["-b", "--json", "-n", "1"]):
        out = subprocess.run([TOP] + args + ["-o", key, "-p", str(pid)] + flags,
                             capture_output=True, text=True, timeout=60)
        why = "--proc reads /proc" if "--proc" in flags else "it is not loaded"
        check(out.returncode == 2 and not out.stdout and
              f"-o {key}: counted by the memtrack module only, and {why}" in out.stderr,
              f"{want}: {args} -o {key}: rc {out.returncode} {out.stderr!r} "
              f"stdout {out.stdout[:80]!r}")


@test
def every_abi_counter_has_a_column():
    """Each counter of include/uapi/linux/memtrack_counters.h is a column
    titled as the list says, that -o sorts by (its title, any case, "/s"
    left off) and shows then, in the text and in -b --json by its name;
    the module's counters only with the module (on /proc -o refuses
    them).  With the module, a
    memload doing 400 mmap/munmap pairs in the interval sorts before one
    doing 40 by MMAP/s and MUNMAP/s; on both paths, one touching 1000 new
    pages before one touching 100 by MINFLT/s.  The old memtrack-top had
    4 of the 22."""
    with Memload() as a, Memload() as b:
        for flags, want in PATHS:
            for c in COUNTER_INFO:
                col = next(x for x in COLUMNS if x[0] == c["title"])
                for key in (c["title"], c["title"].lower().removesuffix("/s")):
                    if not shown_here(col, want):
                        refused(key, flags, want, a.pid)
                        continue
                    out = top_run(["-b", "-n", "1", "-o", key, "-p", str(a.pid)] + flags)
                    titles = text_titles(out)
                    check((c["title"] in titles) == shown_here(col, want),
                          f"{want}: -o {key}: titles {titles}")
                if not shown_here(col, want):
                    continue
                out = top_run(["-b", "--json", "-n", "1", "-o", key, "-p", str(a.pid)] + flags)
                task = [json.loads(x) for x in out.splitlines()][1]
                check((col[1] in task) == shown_here(col, want),
                      f"{want}: -o {key}: JSON {sorted(task)}")
            keys = ["minflt"] + (["mmap", "MUNMAP/s"] if want == "memtrack module" else [])
            for key in keys:
                p = subprocess.Popen([TOP, "-b", "--json", "-n", "2", "-d", "2", "-o", key,
                                      "-p", f"{a.pid},{b.pid}"] + flags,
                                     stdout=subprocess.PIPE, text=True)
                readline(p.stdout, 120)  # the first sample: its summary
                a.cmd("mmaps 40")
                a.cmd(f"anon {100 * PAGE}")
                b.cmd("mmaps 400")
                b.cmd(f"anon {1000 * PAGE}")
                out, _ = p.communicate(timeout=120)
                rows = [json.loads(x) for x in out.splitlines() if '"task"' in x]
                got = [r["pid"] for r in rows[-2:]]
                check(got == [b.pid, a.pid], f"{want}: -o {key}: rows {got} "
                      f"(a {a.pid} did 40 pairs, 100 pages; b {b.pid} 400, 1000): {rows[-2:]}")


def json_value(col, task):
    """A column's value as -b --json gives it, as the sort orders it: a
    pid smallest first (negated), an unknown counter (null) as 0."""
    v = task[col[1]]
    if v is None:
        return 0
    return -v if col[1] == "pid" else v


@test
def sort_help_lists_every_key():
    """-o help (as htop's --sort-key help): a header, then a line per
    column that sorts, in the table's order, and time: its key (the title
    in lower case, "%" and "/s" left off), its title, "needs the memtrack
    module" for the module's counters; exit 0, nothing on stderr, on
    either path (it reads no process)."""
    want = [(title.lstrip("%").lower().removesuffix("/s"), title,
             "needs the memtrack module" if needs == "module" else
             "the default" if title == "RSS" else "")
            for title, _, _, needs, sorts in COLUMNS if sorts]
    want.append(("time", "-", "CPU time, in no column"))
    for flags, path in PATHS:
        out = subprocess.run([TOP, "-o", "help"] + flags, capture_output=True, text=True,
                             timeout=60)
        check(out.returncode == 0 and not out.stderr, f"{path}: rc {out.returncode} "
              f"{out.stderr!r}")
        lines = out.stdout.splitlines()
        check(lines[0].split() == ["KEY", "COLUMN", "NOTE"], f"{path}: header {lines[0]!r}")
        got = [tuple(line.split(None, 2)) + ("",) * (3 - len(line.split(None, 2)))
               for line in lines[1:]]
        check(got == want, f"{path}: -o help {got}, want {want}")


@test
def every_column_sorts():
    """-o with each column that sorts (the counters' from the ABI's list),
    by its JSON name: every -b --json row in the order of that column's
    value, largest first (PID smallest first), the value printed even
    where the layout hides the column (-o shows it); between two samples
    in which memloads work, so that rates are not all 0.  The old
    memtrack-top took neither the JSON names nor the counters but 4."""
    with Memload() as a, Memload() as b:
        a.cmd(f"anon {4 << 20}")
        b.cmd(f"anon {16 << 20}")
        for flags, want in PATHS:
            for col in COLUMNS:
                if not col[4] or not shown_here(col, want):
                    continue
                # by its JSON name, as toprc and -b --json name it
                p = subprocess.Popen([TOP, "-b", "--json", "-n", "2", "-d", "1", "-o", col[1]] +
                                     flags, stdout=subprocess.PIPE, text=True)
                readline(p.stdout, 120)
                b.cmd("mmaps 200")
                a.cmd("mmaps 20")
                out, _ = p.communicate(timeout=120)
                check(p.returncode == 0, f"{want}: -o {col[0]}: rc {p.returncode}")
                objs = [json.loads(x) for x in out.splitlines()]
                last = max(i for i, o in enumerate(objs) if o["type"] == "summary")
                tasks = objs[last + 1:]
                check(len(tasks) > 2 and all(col[1] in r for r in tasks),
                      f"{want}: -o {col[0]}: {len(tasks)} rows, or {col[1]!r} missing")
                vals = [json_value(col, r) for r in tasks]
                bad = [(tasks[i]["pid"], vals[i], tasks[i + 1]["pid"], vals[i + 1])
                       for i in range(len(vals) - 1) if vals[i] < vals[i + 1]]
                check(not bad, f"{want}: -o {col[0]} ({col[1]}): out of order: {bad[:3]}")


@test
def every_column_loads_from_toprc_and_prints():
    """A toprc naming every column, in the reverse of the table's order,
    sorted by the last counter: -b's text has exactly those of them this
    path can show, in that order, and -b --json each of them by its name
    (with --pss PSS and USS too); F2 then q writes the same columns back.
    The old memtrack-top refused the file (an unknown column)."""
    with tempfile.TemporaryDirectory() as d:
        rc = os.path.join(d, "memtrack", "toprc")
        os.makedirs(os.path.dirname(rc))
        order = list(reversed(COLUMNS))
        columns = [c[0] for c in order]
        # inih reads lines of 200 bytes: the list goes on over indented lines
        with open(rc, "w") as f:
            f.write("[memtrack-top]\ncolumns = " + ",".join(columns[:10]) + ",\n  " +
                    ",".join(columns[10:25]) + "\n  " + ",".join(columns[25:]) +
                    f"\nsort = {COUNTER_INFO[-1]['title']}\n")
        env = {"XDG_CONFIG_HOME": d}
        for flags, want in PATHS:
            for smaps in (False, True):
                extra = flags + (["--pss"] if smaps else [])
                titles = text_titles(top_run(["-b", "-n", "1", "--top", "3"] + extra, env))
                expect = [c[0] for c in order if shown_here(c, want, smaps)]
                check(titles == expect, f"{want} {extra}: titles {titles}, want {expect}")
                out = top_run(["-b", "--json", "-n", "1", "--top", "3"] + extra, env)
                for task in [json.loads(x) for x in out.splitlines()][1:]:
                    missing = [c[1] for c in order
                               if shown_here(c, want, smaps) and c[1] not in task]
                    check(not missing, f"{want} {extra}: JSON lacks {missing}")
        with Tmux() as tm:
            tm.type(f"XDG_CONFIG_HOME={d} {TOP} -d {REFRESH}")
            tm.keys("Enter")
            # the columns in toprc's order: FLAG first
            tm.wait(lambda ls: tm.alternate_on() and
                    any(line.split()[:1] == ["FLAG"] for line in ls), "memtrack-top did not start")
            tm.keys("F2")
            tm.wait(lambda ls: ls[0].startswith("memtrack-top setup"), "F2: no setup screen")
            tm.keys("q")
            tm.wait(lambda ls: any(f"setup saved to {rc}" in line for line in ls), "q: not saved")
            tm.keys("q")
            tm.wait(lambda ls: not tm.alternate_on(), "q")
        with open(rc) as f:
            text = f.read()
        m = re.search(r"^columns = (.*?)\n(?=\S)", text, re.M | re.S)
        got = re.sub(r",\s+", ",", m.group(1)).split(",") if m else None
        check(got == columns and f"\nsort = {COUNTER_INFO[-1]['title']}\n" in text and
              all(len(line) < 200 for line in text.splitlines()),
              f"toprc written back:\n{text}")


# ---- the interactive view, through tmux ----------------------------------------------

def table(lines):
    """The rows under the column titles, as dicts; None if no titles."""
    for i, line in enumerate(lines):
        if line.split()[:3] == ["PID", "USER", "COMMAND"]:
            titles = line.split()
            rows = []
            for row in lines[i + 1:]:
                if row.startswith("EVENTS"):
                    break  # the events pane below the table
                if row.strip():
                    rows.append(dict(zip(titles, row.split())))
            return rows
    return None


# Refreshes twice a second: what a test waits for (rows of a workload, a
# flag, a pane's samples) comes in a few; keys redraw at once anyway.
REFRESH = 0.5
# The growth window of the tests that only need a flag on screen (its
# meaning is growth_flag_needs_the_whole_window's): 4 refreshes
FLAG_WINDOW = 2


def start_top(tm, flags):
    tm.type(" ".join([TOP, "-d", str(REFRESH)] + flags))
    tm.keys("Enter")
    tm.wait(lambda ls: table(ls) and tm.alternate_on(), "memtrack-top did not start")


def set_filter(tm, text):
    """The filter (\\, as htop's) set to text: cleared (Ctrl-U), typed,
    Enter."""
    tm.type("\\")
    tm.wait(lambda ls: any(line.startswith("Filter:") for line in ls), "no filter prompt")
    tm.keys("C-u")
    tm.type(text)
    tm.keys("Enter")
    tm.wait(lambda ls: not any(line.startswith("Filter:") for line in ls),
            "the filter prompt stayed open")


def top_child(tm):
    """The pid of memtrack-top running in the pane's shell."""
    sh = tm.shell_pid()
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    st = f.read()
            except FileNotFoundError:
                continue
            if "(memtrack-top)" in st and int(st.rsplit(")", 1)[1].split()[1]) == sh:
                return int(pid)
    return None


def check_restored(tm, status, what):
    """After memtrack-top ended: main screen back, the shell saw its exit
    status, and the line discipline is cooked again (icanon, echo)."""
    tm.wait(lambda ls: not tm.alternate_on(), f"{what}: alternate screen still on")
    tm.type("echo top-exit=$?; stty -a | tr ' ' '\\n' | grep -x -e icanon -e echo | tr '\\n' ' '; echo")
    tm.keys("Enter")
    tm.wait(lambda ls: f"top-exit={status}" in ls and
            any(line.strip() == "icanon echo" for line in ls),
            f"{what}: exit status or terminal")


class TwoMemloads:
    """memload A (16 MiB anon, 3 threads) and B (4 MiB anon)."""

    def __enter__(self):
        self.a, self.b = Memload(), Memload()
        self.a.cmd(f"anon {16 << 20}")
        self.a.cmd("threads 3")
        self.b.cmd(f"anon {4 << 20}")
        self.cg, _, self.cg_max = make_cgroup(CGNAME + "-2", [self.a.pid, self.b.pid], 512 << 20)
        return self

    def __exit__(self, *exc):
        for m in (self.a, self.b):
            m.close()
            m.__exit__(*exc)
        os.rmdir(self.cg)


def rss_bytes(pid):
    st = status(pid)
    return sum(int(st[k][0]) * 1024 for k in ("RssAnon", "RssFile", "RssShmem"))


def memload_rows(lines):
    rows = table(lines)
    if rows is None:
        return None
    return rows if rows and all(r["COMMAND"].lstrip("`") == "memload" for r in rows) else None


@test
def ui_rows_sort_and_filter():
    with TwoMemloads() as w, Tmux() as tm:
        for flags, want in PATHS:
            start_top(tm, flags)
            check(any(f"source: {want}" in line for line in tm.screen()), f"{want}: header")
            set_filter(tm, "MEMLOAD")  # any case
            rows = tm.wait_settled(lambda ls: (r := memload_rows(ls)) and len(r) == 2 and r,
                           f"{want}: filter did not leave the two memloads")
            check([r["PID"] for r in rows] == [str(w.a.pid), str(w.b.pid)],
                  f"{want}: RSS order {[r['PID'] for r in rows]}")
            for m, r in ((w.a, rows[0]), (w.b, rows[1])):
                check(abs(int(r["RSS"]) * 1024 - rss_bytes(m.pid)) <= PAGE,
                      f"{want}: RSS {r['RSS']} KiB, status {rss_bytes(m.pid)}")
            tm.keys("I")
            tm.wait(lambda ls: (r := memload_rows(ls)) and r[0]["PID"] == str(w.b.pid),
                    f"{want}: I did not reverse")
            tm.keys("I", ">")
            tm.wait(lambda ls: "sort: ANON" in ls[0], f"{want}: > did not move to ANON")
            tm.keys("<")
            tm.wait(lambda ls: "sort: RSS" in ls[0], f"{want}: < did not move back to RSS")
            # T: no TIME column shows CPU time, so no sort by it
            tm.keys("T")
            tm.wait(lambda ls: any("no TIME column to sort by" in line for line in ls) and
                    "sort: RSS" in ls[0], f"{want}: T sorted by what no column shows")
            tm.keys("P")
            tm.wait(lambda ls: "sort: %CPU" in ls[0], f"{want}: P")
            tm.keys("M")
            tm.wait(lambda ls: "sort: RSS" in ls[0] and memload_rows(ls) and
                    memload_rows(ls)[0]["PID"] == str(w.a.pid), f"{want}: M")
            # u: a user with no memload leaves no rows; empty brings them back
            tm.keys("u")
            tm.type("nobody")
            tm.keys("Enter")
            tm.wait(lambda ls: table(ls) == [], f"{want}: u nobody left rows")
            tm.keys("u", "Enter")
            tm.wait(lambda ls: (r := memload_rows(ls)) and len(r) == 2, f"{want}: u empty")
            tm.keys("q")
            tm.wait(lambda ls: not tm.alternate_on(), f"{want}: q did not quit")


def pids_of(lines):
    """The memload rows' pids, in their order on screen."""
    return [int(r["PID"]) for r in memload_rows(lines) or []]


@test
def ui_N_sorts_by_pid():
    """N sorts by PID, smallest first, as htop's N (it switched to the
    cluster view): of two memloads the one started first has the smaller
    RSS, so by RSS it is second and after N first; the header says PID."""
    with Memload() as a, Memload() as b, Tmux() as tm:
        a.cmd(f"anon {4 << 20}")
        b.cmd(f"anon {16 << 20}")
        for flags, want in PATHS:
            start_top(tm, flags + ["-F", "memload"])
            tm.wait_settled(lambda ls: pids_of(ls) == [b.pid, a.pid], f"{want}: RSS order")
            tm.keys("N")
            lines = tm.wait_settled(lambda ls: "sort: PID" in ls[0] and
                                    pids_of(ls) == sorted([a.pid, b.pid]) and ls,
                                    f"{want}: N did not sort by PID")
            check(not any("cluster" in line for line in lines), f"{want}: N: the cluster view")
            tm.keys("q")
            tm.wait(lambda ls: not tm.alternate_on(), f"{want}: q")


def pids_in(lines):
    """The pids of the table's rows, as a set."""
    return {int(r["PID"]) for r in table(lines) or [] if r["PID"].isdigit()}


def prompt_line(lines, what):
    """The status line's prompt starting with what (None: not open)."""
    return next((line.rstrip() for line in lines if line.startswith(what)), None)


@test
def ui_filter_narrows_as_typed():
    """\\ and F4 filter as htop's: the list narrows with each character
    typed, before Enter (Backspace widens it again), Enter keeps it, \\
    again starts from it, Esc clears it."""
    with Named(b"mtfa.one") as one, Named(b"mtfa.two") as two, \
            Named(b"mtfb.three") as three, Tmux() as tm:
        for flags, want in PATHS:
            start_top(tm, flags)

            def rows_are(pids, text, what):
                tm.wait_settled(lambda ls: pids_in(ls) == pids and
                                prompt_line(ls, "Filter:") == f"Filter: {text}".rstrip(),
                                f"{want}: {what}")

            tm.type("\\")
            for typed, text, pids in (("mtf", "mtf", {one.pid, two.pid, three.pid}),
                                      ("a", "mtfa", {one.pid, two.pid}),
                                      (".t", "mtfa.t", {two.pid})):
                tm.type(typed)
                rows_are(pids, text, f"typed {text!r}")
            tm.keys("BSpace", "BSpace")
            rows_are({one.pid, two.pid}, "mtfa", "Backspace twice")
            tm.keys("Enter")
            tm.wait_settled(lambda ls: pids_in(ls) == {one.pid, two.pid} and
                            prompt_line(ls, "Filter:") is None, f"{want}: Enter kept it")
            tm.type("\\")
            rows_are({one.pid, two.pid}, "mtfa", "\\ again starts from the filter")
            tm.type(".o")
            rows_are({one.pid}, "mtfa.o", "typed .o")
            tm.keys("Escape")
            tm.wait_settled(lambda ls: {one.pid, two.pid, three.pid} < pids_in(ls) and
                            prompt_line(ls, "Filter:") is None,
                            f"{want}: Esc did not clear the filter")
            tm.keys("F4")
            # the prompt open and empty, the list whole (not a snapshot of
            # the screen's pids: on a busy host other processes come and go)
            tm.wait_settled(lambda ls: {one.pid, two.pid, three.pid} < pids_in(ls) and
                            prompt_line(ls, "Filter:") == "Filter:",
                            f"{want}: F4: the filter prompt, empty")
            tm.type("mtfb")
            rows_are({three.pid}, "mtfb", "F4 typed mtfb")
            tm.keys("Enter")
            tm.wait_settled(lambda ls: pids_in(ls) == {three.pid} and
                            prompt_line(ls, "Filter:") is None, f"{want}: F4 Enter")
            tm.keys("q")
            tm.wait(lambda ls: not tm.alternate_on(), f"{want}: q")


@test
def ui_search_moves_the_selection_as_typed():
    """/ and F3 search as htop's: with each character typed the selection
    bar goes to the first row (from the top) whose command holds the text,
    nothing filtered; F3 the next match, round the list, Shift-F3 the one
    before; a text nothing holds says "not found" and leaves the bar;
    Enter and Esc leave it where it is."""
    with Named(b"mts-b1") as p1, Named(b"mts-a1") as p2, Named(b"mts-b2") as p3, \
            Tmux() as tm:
        for flags, want in PATHS:
            start_top(tm, flags + ["-o", "pid"])  # p1, p2, p3 in that order
            everyone = {p1.pid, p2.pid, p3.pid}

            def at(pid, text, what):
                wait_selected(tm, pid, f"{want}: {what}")
                tm.wait(lambda ls: prompt_line(ls, "Search:") == f"Search: {text}".rstrip() and
                        everyone < pids_in(ls), f"{want}: {what}: the prompt or the rows")

            tm.type("/")
            tm.wait(lambda ls: prompt_line(ls, "Search:") == "Search:", f"{want}: no search prompt")
            tm.type("mts-")
            at(p1.pid, "mts-", "typed mts-")
            tm.type("a")
            at(p2.pid, "mts-a", "typed a")
            tm.keys("BSpace")
            at(p1.pid, "mts-", "Backspace")
            tm.type("b")
            at(p1.pid, "mts-b", "typed b")
            tm.keys("F3")
            at(p3.pid, "mts-b", "F3: the next")
            tm.keys("F3")
            at(p1.pid, "mts-b", "F3 again: round to the first")
            tm.keys("S-F3")
            at(p3.pid, "mts-b", "Shift-F3: the one before")
            tm.type("z")
            at(p3.pid, "mts-bz  (not found)", "typed z: not found")
            tm.keys("Enter")
            tm.wait(lambda ls: prompt_line(ls, "Search:") is None, f"{want}: Enter left the prompt")
            wait_selected(tm, p3.pid, f"{want}: Enter moved the bar")
            # F3 opens it too, empty
            tm.keys("F3")
            tm.wait(lambda ls: prompt_line(ls, "Search:") == "Search:", f"{want}: F3: no prompt")
            tm.type("A1")  # any case
            at(p2.pid, "A1", "typed A1")
            tm.keys("Escape")
            tm.wait(lambda ls: prompt_line(ls, "Search:") is None, f"{want}: Esc left the prompt")
            time.sleep(2 * REFRESH)
            wait_selected(tm, p2.pid, f"{want}: Esc moved the bar")
            check(everyone < pids_in(tm.screen()), f"{want}: the search filtered rows")
            tm.keys("q")
            tm.wait(lambda ls: not tm.alternate_on(), f"{want}: q")


def sort_menu(lines):
    """The F6 menu's entries (top to bottom), None if it is not open."""
    for i, line in enumerate(lines):
        if "Sort by" in line[:26]:
            out = []
            for row in lines[i + 1:]:
                text = row[2:26].strip("│| ").strip()
                if not text or text.startswith("Enter:"):
                    return out
                out.append(text)
    return None


@test
def ui_F6_sort_menu():
    """F6 opens htop's sort-by menu (it moved the sort column one right):
    every column that sorts, in the table's order, the current one chosen;
    Home and Enter sort by PID, Down and Esc change nothing, Down twice
    from PID and Enter sort by RSS again."""
    with Memload() as a, Memload() as b, Tmux() as tm:
        a.cmd(f"anon {4 << 20}")
        b.cmd(f"anon {16 << 20}")
        for flags, want in PATHS:
            start_top(tm, flags + ["-F", "memload"])
            tm.wait_settled(lambda ls: pids_of(ls) == [b.pid, a.pid], f"{want}: RSS order")
            titles = ["PID", "%CPU", "RSS", "ANON", "FILE", "SHMEM", "SWAP", "VIRT",
                      "MINFLT/s", "MAJFLT/s"] + \
                (["PGALLOC/s", "KMALLOC/s"] if want == "memtrack module" else []) + ["GROWTH"]
            tm.keys("F6")
            menu = tm.wait_settled(sort_menu, f"{want}: F6 opened no menu")
            check(menu == titles, f"{want}: the menu {menu}, want {titles}")
            check("sort: RSS" in tm.screen()[0], f"{want}: F6 changed the sort")
            tm.keys("Home", "Enter")
            tm.wait_settled(lambda ls: "sort: PID" in ls[0] and sort_menu(ls) is None and
                            pids_of(ls) == sorted([a.pid, b.pid]), f"{want}: Home Enter")
            tm.keys("F6")
            tm.wait(sort_menu, f"{want}: F6 again")
            tm.keys("Down", "Escape")
            tm.wait(lambda ls: sort_menu(ls) is None, f"{want}: Esc left the menu open")
            tm.wait_settled(lambda ls: "sort: PID" in ls[0] and
                            pids_of(ls) == sorted([a.pid, b.pid]), f"{want}: Esc sorted")
            tm.keys("F6")
            tm.wait(sort_menu, f"{want}: F6 a third time")
            tm.keys("Down", "Down", "Enter")
            tm.wait_settled(lambda ls: "sort: RSS" in ls[0] and sort_menu(ls) is None and
                            pids_of(ls) == [b.pid, a.pid], f"{want}: Down Down Enter from PID")
            tm.keys("q")
            tm.wait(lambda ls: not tm.alternate_on(), f"{want}: q")


@test
def ui_prompts_cancel_on_esc_and_the_screen_goes_on():
    """Esc in a prompt cancels it at once (ncurses took Esc as a character,
    and waited a second for the rest of a key's sequence): the search (/),
    the user (u) and the nice value (r) leave things as they were; the
    filter (F4 and \\, as htop's) starts from the filter there is, and Esc
    clears it; F4, Esc, Enter filtered on "^[" and left no row.  While a
    prompt is open the screen goes on refreshing: a grower's RSS moves on
    behind it."""
    with a_grower(256, 100) as g, Tmux() as tm:
        def grower_rss(ls):
            rows = [r for r in table(ls) or [] if r["PID"] == str(g.pid)]
            return rows[0]["RSS"] if rows else None

        def nice():
            with open(f"/proc/{g.pid}/stat") as f:
                return int(f.read().rsplit(")", 1)[1].split()[16])

        def only_grower(ls):
            return (t := table(ls)) and [r["PID"] for r in t] == [str(g.pid)]

        nice0 = nice()
        for flags, want in PATHS:
            start_top(tm, flags)
            set_filter(tm, "grower")
            tm.wait(only_grower, f"{want}: the filter did not leave the grower alone")
            for key, what, text in (("/", "Search:", "xyz"), ("F4", "Filter: grower", ""),
                                    ("\\", "Filter: grower", ""),
                                    ("u", "user (empty: all)", "nobody"),
                                    ("r", f"renice {g.pid}", "xyz")):
                if key == "\\":
                    tm.type(key)
                else:
                    tm.keys(key)
                tm.wait(lambda ls: any(what in line for line in ls), f"{want}: {key}: no prompt")
                tm.type(text)
                first = tm.wait_settled(grower_rss, f"{want}: {key}: no grower row behind the prompt")
                tm.wait(lambda ls: grower_rss(ls) not in (None, first) and
                        any(what in line for line in ls),
                        f"{want}: {key}: the screen stood still behind the prompt", timeout=20)
                t0 = time.monotonic()
                tm.keys("Escape")
                tm.wait(lambda ls: not any(what in line for line in ls),
                        f"{want}: {key}: Esc left the prompt open", timeout=10)
                took = time.monotonic() - t0
                # (ncurses' own wait for the rest of a sequence is 1 s;
                # under emulation a refresh alone can take longer)
                check(took < (5 if IN_VM else 0.7), f"{want}: {key}: Esc took {took:.2f} s")
                if what.startswith("Filter: "):
                    # htop's Esc in the filter: cleared, every process back
                    tm.wait(lambda ls: (t := table(ls)) and len(t) > 1 and
                            str(g.pid) in [r["PID"] for r in t],
                            f"{want}: {key}: Esc did not clear the filter")
                    set_filter(tm, "grower")
                tm.wait(only_grower, f"{want}: {key}: Esc changed the rows")
            check(nice() == nice0, f"{want}: r then Esc reniced the grower {nice0} -> {nice()}")
            tm.keys("q")
            tm.wait(lambda ls: not tm.alternate_on(), f"{want}: q did not quit")


@test
def ui_threads_and_per_program_sums():
    with TwoMemloads() as w, Tmux() as tm:
        tids = sorted(int(t) for t in os.listdir(f"/proc/{w.a.pid}/task"))
        check(len(tids) == 4, f"memload A has {len(tids)} threads")
        for flags, want in PATHS:
            start_top(tm, flags)
            set_filter(tm, "memload")
            tm.wait(lambda ls: (r := memload_rows(ls)) and len(r) == 2, f"{want}: filter")
            tm.keys("H")
            rows = tm.wait_settled(lambda ls: (r := memload_rows(ls)) and len(r) == 6 and r,
                           f"{want}: H did not show A's 4 threads under it")
            check([int(r["PID"]) for r in rows[:5]] == [w.a.pid] + tids and
                  int(rows[5]["PID"]) == w.b.pid, f"{want}: rows {[r['PID'] for r in rows]}")
            tm.keys("H", "p")
            rows = tm.wait_settled(lambda ls: (r := memload_rows(ls)) and len(r) == 1 and r,
                           f"{want}: p did not sum the memloads")
            total = rss_bytes(w.a.pid) + rss_bytes(w.b.pid)
            check(rows[0]["PID"] == "2x" and abs(int(rows[0]["RSS"]) * 1024 - total) <= PAGE,
                  f"{want}: per-program row {rows[0]}, status says {total}")
            # g: the cgroup holding both, summed, with its memory.max
            tm.keys("g")
            rows = tm.wait_settled(lambda ls: (r := table(ls)) and len(r) == 1 and
                           r[0].get("COMMAND") == "(cgroup)" and r, f"{want}: g")
            limit = str(w.cg_max >> 10) if w.cg_max else "-"
            check(rows[0]["PID"] == "2x" and rows[0]["CGROUP"] == f"/{CGNAME}-2" and
                  rows[0]["LIMIT"] == limit and
                  abs(int(rows[0]["RSS"]) * 1024 - total) <= PAGE,
                  f"{want}: per-cgroup row {rows[0]}, expected RSS {total} limit {limit}")
            tm.keys("q")
            tm.wait(lambda ls: not tm.alternate_on(), f"{want}: q")


@test
def ui_help_resize_and_quit_restore_the_terminal():
    """The help (h, ?, F1) scrolls where the terminal is too short for it
    (Up Down PgUp PgDn Home End; it was cut at 80x24) and closes on q, Esc
    and h, q then quitting no more than the help; another key leaves it
    open (any key closed it)."""
    flag = "by 2048 bytes/s or more"

    def help_open(ls):
        return ls[-1].startswith("help: lines ")
    with Tmux() as tm:
        start_top(tm, ["--growth-window", "90", "--growth-min-rate", "2K"])
        tm.keys("h")
        tm.wait(lambda ls: ls[0].startswith("memtrack-top keys"), "h: no help")
        # the growth flag's settings, as given
        tm.wait(lambda ls: any("each quarter of the last 90 s" in line for line in ls) and
                any(flag in line for line in ls),
                "h: the growth window is not in the help")
        tm.keys("x")
        time.sleep(2.5 * REFRESH)       # two refreshes
        check(help_open(tm.screen()), "x closed the help")
        tm.tmux("resize-window", "-t", "t", "-x", "80", "-y", "24")
        tm.wait(lambda ls: len(ls) == 24 and ls[0].startswith("memtrack-top keys") and
                help_open(ls) and not any(flag in line for line in ls),
                "80x24: the help's first lines, its end below")
        tm.keys("End")
        tm.wait(lambda ls: flag in ls[-2] and help_open(ls), "End: not the help's last line")
        tm.keys("PPage")
        tm.wait(lambda ls: help_open(ls) and not any(flag in line for line in ls),
                "PgUp: the end still shown")
        tm.keys("Home")
        tm.wait(lambda ls: ls[0].startswith("memtrack-top keys"), "Home: not the first line")
        for _ in range(40):
            tm.keys("Down")
        tm.wait(lambda ls: flag in ls[-2], "Down: not scrolled to the end")
        tm.keys("Up")
        tm.wait(lambda ls: "each quarter" in ls[-2] and not any(flag in line for line in ls),
                "Up: not one line back")
        for opener, closer in (("h", "q"), ("?", "Escape"), ("F1", "h")):
            if not help_open(tm.screen()):
                tm.keys(opener)
                tm.wait(help_open, f"{opener}: no help")
            tm.keys(closer)
            tm.wait(lambda ls: table(ls) and not help_open(ls),
                    f"{closer} did not close the help")
            check(tm.alternate_on() and top_child(tm), f"{closer} in the help quit")
        tm.tmux("resize-window", "-t", "t", "-x", "100", "-y", "30")
        tm.wait(lambda ls: len(ls) == 30 and table(ls) and ls[0].startswith("memtrack-top -")
                and "]" in ls[1] and len(ls[1].rstrip()) <= 100, "not redrawn at 100x30")
        tm.keys("q")
        check_restored(tm, 0, "q")


def cells(text):
    """Screen cells of text: East Asian wide and full-width characters
    (日, 🐘) two, combining marks none, the rest one."""
    import unicodedata
    return sum(0 if unicodedata.combining(c) else
               2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


# comms whose bytes, characters and screen cells all differ (15 bytes at most)
WIDE_COMMS = ["gröw🐘", "ab日本語日"]


def wide_tests(fn):
    """A test of text in screen cells: memtrack-top's own, so the host's
    suite only (in the VM it would be the same test four times)."""
    return fn if IN_VM else test(fn)


@contextlib.contextmanager
def named_grower(path):
    """grower 256 100 run as path (a link to it): its comm path's name."""
    g = subprocess.Popen([path, "256", "100"], stdout=subprocess.PIPE)
    try:
        check(readline(g.stdout).strip() == "ready", f"{path} did not start")
        yield g
    finally:
        g.kill()
        g.wait()


@wide_tests
def wide_characters_fill_their_cells():
    """Two growers named gröw🐘 and ab日本語日 (/proc/PID/comm): in -b text
    every column of their rows starts at the header's cell, in UTF-8;
    interactively, in the tree view (t), their growth flag is whole
    (LEAK?+rate, no LEA or LEAK left of it from a byte-counted redraw) and
    starts at FLAG's cell, as the header says."""
    d = tempfile.mkdtemp(prefix="wide.")
    for comm in WIDE_COMMS:     # exec'd by that name: its comm
        os.symlink(os.path.join(TESTBIN, "grower"), os.path.join(d, comm))
    with named_grower(os.path.join(d, WIDE_COMMS[0])) as g1, \
            named_grower(os.path.join(d, WIDE_COMMS[1])) as g2:
        env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8")
        out = subprocess.run([TOP, "-b", "-n", "1", "--proc"], capture_output=True,
                             text=True, env=env, timeout=120).stdout.splitlines()
        head = next(line for line in out if line.split()[:3] == ["PID", "USER", "COMMAND"])
        starts = [m.start() for m in re.finditer(r"\S+", head)]
        for g, comm in zip((g1, g2), WIDE_COMMS):
            row = next((line for line in out if line.split()[:1] == [str(g.pid)]), None)
            check(row and comm in row, f"-b: no row of {comm}: {row!r}")
            # every field after COMMAND starts where its title does, in cells
            tail = row[row.index(comm) + len(comm):]
            fields = [m for m in re.finditer(r"\S+", tail)]
            base = cells(row[:row.index(comm) + len(comm)])
            got = [base + cells(tail[:m.start()]) for m in fields]
            want = [x for x in starts if x > cells(head[:head.index("COMMAND")])][:len(got)]
            # right-aligned numbers end where their titles end: compare the
            # left-aligned CGROUP (the field after COMMAND) and the count
            check(got[0] == starts[3] and len(got) == len(starts) - 3,
                  f"-b {comm}: fields at cells {got}, titles at {starts}, {want}")
        with Tmux() as tm:
            tm.type(f"LANG=C.UTF-8 LC_ALL=C.UTF-8 {TOP} -d {REFRESH} --proc "
                    f"--growth-window {FLAG_WINDOW}")
            tm.keys("Enter")
            tm.wait(lambda ls: table(ls) and tm.alternate_on(), "memtrack-top did not start")
            tm.keys("t")

            def flagged(ls):
                titles = [line for line in ls if line.split()[:3] == ["PID", "USER", "COMMAND"]]
                rows = [line for line in ls for g in (g1, g2)
                        if line.split()[:1] == [str(g.pid)]]
                return titles and len(rows) == 2 and all("LEAK?+" in r for r in rows) and \
                    (titles[0], rows)
            head, rows = tm.wait_settled(flagged, "the growers' flags in the tree view", timeout=120)
            flag_at = cells(head[:head.index("FLAG")])
            for r in rows:
                check(r.count("LEAK") == 1 and cells(r[:r.index("LEAK?+")]) == flag_at,
                      f"flag at cell {cells(r[:r.index('LEAK')])}, FLAG at {flag_at}: {r!r}")
            tm.keys("q")
            tm.wait(lambda ls: not tm.alternate_on(), "q")
    shutil.rmtree(d, ignore_errors=True)


# The columns' widths (top_columns.c), for what a layout may hold.
WIDTHS = {"PID": 7, "USER": 8, "COMMAND": 15, "CGROUP": 20, "CONTAINER": 14, "POD": 24,
          "%CPU": 5, "RSS": 9, "ANON": 9, "FILE": 8, "SHMEM": 8, "PSS": 9, "USS": 9,
          "SWAP": 8, "VIRT": 10, "LIMIT": 8, "MINFLT/s": 8, "MAJFLT/s": 8,
          "PGALLOC/s": 9, "KMALLOC/s": 9, "GROWTH": 8, "FLAG": 16}


@wide_tests
def ui_whole_columns_command_lines_and_the_pause_mark():
    """At 40x10 the columns shown fit whole (a column dropped, never its
    digits cut: GROWTH was cut to +5 where it read +448); with W, each
    command line starts under COMMAND LINE though the flag before it is
    longer than its title; at 80 columns, paused (Z, as htop's), the first line
    says [paused] (it wrapped under the meter before)."""
    with a_grower(256, 100) as g, Tmux() as tm:
        tm.tmux("resize-window", "-t", "t", "-x", "40", "-y", "10")
        # USER does not fit: start_top's table() would not know the titles
        tm.type(" ".join([TOP, "-d", str(REFRESH), "--proc", "-o", "growth"]))
        tm.keys("Enter")
        head = tm.wait_settled(lambda ls: [line for line in ls if line.split()[:1] == ["PID"]],
                       "titles at 40 columns")[0]
        titles = head.split()
        width = sum(WIDTHS[t] for t in titles) + len(titles) - 1
        check(width <= 40 and "GROWTH" in titles,
              f"40 columns: {titles} take {width} cells")
        tm.keys("q")
        tm.wait(lambda ls: not tm.alternate_on(), "q at 40 columns")
        tm.tmux("resize-window", "-t", "t", "-x", "200", "-y", "50")
        start_top(tm, ["--proc", "--growth-window", str(FLAG_WINDOW)])
        tm.keys("W")

        def aligned(ls):
            head = [line for line in ls if "COMMAND LINE" in line]
            row = [line for line in ls if line.split()[:1] == [str(g.pid)]
                   and "LEAK?+" in line]
            return head and row and (head[0], row[0])
        head, row = tm.wait_settled(aligned, "W: the grower's flag and command line", timeout=120)
        at = cells(head[:head.index("COMMAND LINE")])
        # the row is ASCII: a cell is a character. The command line is cut
        # at the window's edge (200 cells): as much of it as fits, from
        # COMMAND LINE's cell, after a blank (CI's checkout path is long).
        cmd = os.path.join(TESTBIN, "grower") + " 256 100"
        shown = row[at:].rstrip()
        check(row.isascii() and row[at - 1] == " " and
              len(shown) >= min(len(cmd), 200 - at) and cmd.startswith(shown),
              f"command line {shown!r} at cell {at} (COMMAND LINE's), want a "
              f"blank before it and {cmd!r} as far as 200 cells: {row!r}")
        tm.keys("W", "q")
        tm.wait(lambda ls: not tm.alternate_on(), "q at 200 columns")
        tm.tmux("resize-window", "-t", "t", "-x", "80", "-y", "24")
        start_top(tm, ["--proc"])
        tm.keys("Z")
        tm.wait(lambda ls: "[paused]" in ls[0] and len(ls[0].rstrip()) <= 80,
                "Z at 80 columns: no [paused] on the first line")
        tm.keys("q")
        tm.wait(lambda ls: not tm.alternate_on(), "q at 80 columns")


@wide_tests
def ui_setup_hides_in_place_scrolls_and_cancels():
    """F2 at 80x24: its title and keys fit (not cut); Space hides USER where
    it is (its line stays the second, unchecked), Home/End/PgDn/PgUp move
    the bar to the first, the last and a page on; Esc leaves as it was: the
    table still has USER and no toprc is written."""
    with tempfile.TemporaryDirectory() as d, Tmux() as tm:
        tm.tmux("resize-window", "-t", "t", "-x", "80", "-y", "24")
        tm.type(f"XDG_CONFIG_HOME={d} ")
        start_top(tm, ["--proc"])
        tm.keys("F2")
        ls = tm.wait_settled(lambda ls: ls[0].startswith("memtrack-top setup") and ls, "F2")
        check(all(len(x.rstrip()) <= 80 for x in ls[:3]) and "Esc: cancel" in ls[2]
              and ls[1].rstrip().endswith("d delay"), f"F2's head cut: {ls[:3]}")
        tm.keys("Down", "Space")
        tm.wait(lambda ls: ls[5].strip() == "[ ] USER", "Space: USER not hidden in place")
        tm.keys("End")
        last = [c for c in COLUMNS if not c[2]][-1][0]
        tm.wait(lambda ls: ls[23].strip().startswith(f"[ ] {last}"),
                f"End: not the last ({last}, the last of the hidden columns)")
        tm.keys("Home")
        tm.wait(lambda ls: ls[4].strip() == "[x] PID", "Home: not the first")
        tm.keys("NPage")
        tm.wait(lambda ls: ls[4].strip() == "[ ] USER",
                "PgDn: the list did not move a page on (20 lines: USER first)")
        tm.keys("PPage")
        tm.wait(lambda ls: ls[4].strip() == "[x] PID", "PgUp: not back")
        tm.keys("Escape")
        tm.wait(lambda ls: any("setup cancelled" in x for x in ls) and
                table(ls) is not None and any(x.split()[:3] == ["PID", "USER", "COMMAND"]
                                              for x in ls), "Esc: USER gone or no message")
        check(not os.path.exists(os.path.join(d, "memtrack", "toprc")), "Esc wrote toprc")
        tm.keys("q")
        tm.wait(lambda ls: not tm.alternate_on(), "q")


@wide_tests
def ui_terminal_gone_ends_every_screen():
    """The terminal closed (its tmux server killed) while F2's setup, a
    prompt (/) or the main view is open: memtrack-top ends within 5 s
    (setup looped on getch()'s errors for ever, a core busy, and ignored
    SIGTERM)."""
    for keys in (["F2"], ["/"], []):
        tm = Tmux()
        try:
            start_top(tm, ["--proc"])
            pid = top_child(tm)
            check(pid, "no memtrack-top under the pane's shell")
            tm.keys(*keys)
            time.sleep(0.5)
        finally:
            tm.close()
        end = time.monotonic() + 5
        while time.monotonic() < end and os.path.exists(f"/proc/{pid}"):
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
            time.sleep(0.1)
        alive = os.path.exists(f"/proc/{pid}") and "(memtrack-top)" in open(f"/proc/{pid}/stat").read() \
            and open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
        if alive:
            os.kill(pid, 9)
        check(not alive, f"{keys or 'the view'}: memtrack-top {pid} still running 5 s "
              "after its terminal went")


@test
def ui_narrow_terminal_keeps_growth_and_flag():
    """At 80x24 the columns that do not fit go, least useful first: PID USER
    COMMAND RSS ANON GROWTH FLAG, no line wider than 80, and a leaking
    grower's flag on screen; P keeps %CPU (the sort column) at ANON's
    expense, g the cgroup's CGROUP and LIMIT; at 200 columns every column
    of the batch header is back, CGROUP after COMMAND."""
    narrow = ["PID", "USER", "COMMAND", "RSS", "ANON", "GROWTH", "FLAG"]
    with a_grower(256, 100) as g:
        with Tmux() as tm:
            for flags, want in PATHS:
                tm.tmux("resize-window", "-t", "t", "-x", "80", "-y", "24")
                start_top(tm, flags + ["--growth-window", str(FLAG_WINDOW)])
                mine = tm.wait_settled(lambda ls: [r for r in table(ls) or []
                                           if r["PID"] == str(g.pid)
                                           and r["FLAG"].startswith("LEAK?+")],
                               f"{want}: grower's flag at 80 columns", timeout=120)
                lines = tm.screen()
                titles = [line.split() for line in lines if line.split()[:1] == ["PID"]]
                check(titles == [narrow], f"{want}: titles at 80 columns {titles}")
                check(max(len(line.rstrip()) for line in lines) <= 80, f"{want}: wider than 80")
                check(int(mine[0]["GROWTH"]) > 0, f"{want}: grower {mine[0]}")
                tm.keys("P")
                tm.wait(lambda ls: any(line.split() == ["PID", "USER", "COMMAND", "%CPU", "RSS",
                                                        "GROWTH", "FLAG"] for line in ls),
                        f"{want}: P at 80 columns")
                tm.keys("g")
                tm.wait(lambda ls: any(line.split()[:1] == ["PID"] and "CGROUP" in line.split()
                                       and "LIMIT" in line.split() for line in ls),
                        f"{want}: g at 80 columns")
                tm.keys("g", "M")
                batch = subprocess.run([TOP, "-b", "-n", "1"] + flags, capture_output=True,
                                       text=True, timeout=300).stdout.splitlines()
                header = [line for line in batch if line.split()[:1] == ["PID"]][0]
                # Right: every column, 8 characters further each time
                for k in (1, 2):
                    tm.keys("Right")
                    tm.wait(lambda ls: header[8 * k:8 * k + 80].rstrip() in
                            [line.rstrip() for line in ls],
                            f"{want}: Right x{k}: want {header[8 * k:8 * k + 80]!r}")
                tm.keys("Left", "Left")
                tm.wait(lambda ls: any(line.split() == narrow for line in ls),
                        f"{want}: Left back to the columns that fit")
                tm.tmux("resize-window", "-t", "t", "-x", "200", "-y", "50")
                # 200 columns hold every column of either path
                check(len(header.rstrip()) <= 200, f"{want}: batch header {len(header)} wide")
                full = header.split()
                tm.wait(lambda ls: any(line.split() == full for line in ls),
                        f"{want}: titles at 200 columns, want {full}")
                tm.keys("q")
                tm.wait(lambda ls: not tm.alternate_on(), f"{want}: q")


def selected(lines_e):
    """The pid of the row shown in reverse video (the selection), from
    capture-pane -e, which sends an attribute only where it changes: the
    state carries over from line to line."""
    rev = False
    for line in lines_e:
        text, first = "", None
        for m in re.finditer(r"\x1b\[([0-9;]*)m|([^\x1b]+)", line):
            if m.group(2) is None:
                for code in m.group(1).split(";"):
                    if code == "7":
                        rev = True
                    elif code in ("", "0", "27"):
                        rev = False
            else:
                text += m.group(2)
                if first is None and m.group(2).strip():
                    first = rev
        words = text.split()
        if first and words and words[0].isdigit():
            return int(words[0])
    return None


def screen_e(tm):
    return tm.tmux("capture-pane", "-e", "-p", "-t", "t").splitlines()


def wait_selected(tm, pid, what):
    end = time.monotonic() + 60
    while selected(screen_e(tm)) != pid:
        check(time.monotonic() < end, f"{what}: selected {selected(screen_e(tm))}, "
              f"want {pid}:\n" + "\n".join(tm.screen()))
        time.sleep(0.1)


def row_attrs(lines_e):
    """{pid: (reverse, bold)} of each table row on a capture-pane -e
    screen, the attributes its first character is drawn in (an attribute
    is sent only where it changes: the state carries over lines)."""
    rev = bold = False
    out = {}
    for line in lines_e:
        text, first = "", None
        for m in re.finditer(r"\x1b\[([0-9;]*)m|([^\x1b]+)", line):
            if m.group(2) is None:
                for code in (m.group(1) or "0").split(";"):
                    if code in ("", "0"):
                        rev = bold = False
                    elif code == "1":
                        bold = True
                    elif code == "22":
                        bold = False
                    elif code == "7":
                        rev = True
                    elif code == "27":
                        rev = False
            else:
                text += m.group(2)
                if first is None and m.group(2).strip():
                    first = (rev, bold)
        words = text.split()
        if first and words and words[0].isdigit() and len(words) > 2:
            out[int(words[0])] = first
    return out


class Family:
    """A process mttag-par with two children mttag-kid1 and mttag-kid2
    (reaped by the kernel: SIGCHLD ignored)."""

    def __enter__(self):
        code = ("import os, signal, time\n"
                "signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"
                "open('/proc/self/comm', 'w').write('mttag-par')\n"
                "for k in ('mttag-kid1', 'mttag-kid2'):\n"
                "    if os.fork() == 0:\n"
                "        open('/proc/self/comm', 'w').write(k)\n"
                "        print(os.getpid(), flush=True)\n"
                "        time.sleep(600)\n"
                "        os._exit(0)\n"
                "    time.sleep(0.05)\n"
                "print('ok', flush=True)\n"
                "time.sleep(600)\n")
        self.p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        self.pid = self.p.pid
        self.kids = [int(self.p.stdout.readline()), int(self.p.stdout.readline())]
        check(self.p.stdout.readline() == "ok\n", "mttag-par did not start")
        return self

    def __exit__(self, *exc):
        for k in self.kids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(k, 9)
        self.p.kill()
        self.p.wait()


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@test
def ui_tags_space_c_U_and_k_signals_the_tagged():
    """Space tags the selected process (bold, yellow with colours) and
    moves the bar down one, again untags it; c tags a process and every one
    under it; U untags all; with processes tagged k sends the signal to
    exactly them (a menu "signal 2 tagged", then y), as htop's keys."""
    with Family() as fam, Named(b"mttag-solo") as solo, Named(b"mttag-other") as other, \
            Tmux() as tm:
        par, kid1, kid2 = fam.pid, fam.kids[0], fam.kids[1]
        everyone = sorted([par, kid1, kid2, solo.pid, other.pid])
        start_top(tm, ["-F", "mttag", "-o", "pid"])
        tm.wait_settled(lambda ls: [int(r["PID"]) for r in table(ls) or []] == everyone,
                        "the five mttag processes by pid")

        def tagged():
            return {pid for pid, (rev, bold) in row_attrs(screen_e(tm)).items() if bold}

        def wait_tagged(want, what):
            end = time.monotonic() + 30
            while tagged() != want:
                check(time.monotonic() < end, f"{what}: tagged {sorted(tagged())}, want "
                      f"{sorted(want)}:\n" + "\n".join(tm.screen()))
                time.sleep(0.1)

        def select(text, pid):
            tm.type("/")
            tm.type(text)
            tm.keys("Enter")
            wait_selected(tm, pid, f"search {text}")

        wait_tagged(set(), "at start")
        select("solo", solo.pid)
        tm.keys("Space")
        wait_tagged({solo.pid}, "Space")
        after = everyone[everyone.index(solo.pid) + 1] if solo.pid != everyone[-1] else solo.pid
        wait_selected(tm, after, "Space: the bar down one")
        select("solo", solo.pid)
        tm.keys("Space")
        wait_tagged(set(), "Space again untags")
        select("solo", solo.pid)
        tm.keys("Space")
        wait_tagged({solo.pid}, "Space a third time")
        select("par", par)
        tm.keys("c")
        wait_tagged({par, kid1, kid2, solo.pid}, "c: mttag-par and its children")
        wait_selected(tm, par, "c moved the bar")
        tm.keys("U")
        wait_tagged(set(), "U")
        select("kid2", kid2)
        tm.keys("Space")
        select("solo", solo.pid)
        tm.keys("Space")
        wait_tagged({kid2, solo.pid}, "kid2 and solo")
        select("other", other.pid)
        tm.keys("k")
        tm.wait(lambda ls: any("signal 2 tagged" in line for line in ls) and
                any("15 SIGTERM" in line for line in ls), "k: no menu for the 2 tagged")
        tm.keys("Down", "Enter")
        tm.wait(lambda ls: any("send SIGKILL to 2 tagged processes? [y/N]" in line for line in ls),
                "no confirmation for the 2 tagged")
        tm.keys("y")
        check(solo.p.wait(timeout=30) == -9, f"solo's status {solo.p.returncode}")
        end = time.monotonic() + 30
        while alive(kid2):
            check(time.monotonic() < end, "kid2 is alive")
            time.sleep(0.1)
        tm.wait(lambda ls: "sent SIGKILL to 2 processes" in "\n".join(ls), "y: message")
        check(alive(par) and alive(kid1) and other.p.poll() is None,
              f"another died: par {alive(par)} kid1 {alive(kid1)} other {other.p.poll()}")
        tm.wait_settled(lambda ls: [int(r["PID"]) for r in table(ls) or []] ==
                        sorted([par, kid1, other.pid]), "the rows after the kill")
        wait_tagged(set(), "the killed processes' tags")
        tm.keys("q")
        tm.wait(lambda ls: not tm.alternate_on(), "q")


@test
def ui_selection_signals_and_renice():
    """The selection bar (reverse video) starts on the first row and moves
    with Down and Up, staying on its process when the order changes; on the
    selected process F8 and F7 step its nice value, r sets it, k shows the
    signal menu (TERM first) and sends nothing on n, and Down to KILL,
    Enter, y kill exactly it; a per-program row refuses a signal."""
    with Memload() as a, Memload() as b, Tmux() as tm:
        a.cmd(f"anon {24 << 20}")
        b.cmd(f"anon {8 << 20}")
        start_top(tm, [])
        set_filter(tm, "memload")

        wait_selected(tm, a.pid, "the first row (largest RSS)")
        tm.keys("Down")
        wait_selected(tm, b.pid, "Down")
        # b grows past a: the bar stays on b, now the first row
        b.cmd(f"anon {48 << 20}")
        tm.wait(lambda ls: [r["PID"] for r in memload_rows(ls) or []] == [str(b.pid), str(a.pid)],
                "b first by RSS")
        wait_selected(tm, b.pid, "after the reorder")
        tm.keys("Up")
        wait_selected(tm, b.pid, "Up on the first row")
        tm.keys("Down")
        wait_selected(tm, a.pid, "Down to a")
        tm.keys("Up")
        wait_selected(tm, b.pid, "Up to b")

        def nice(pid):
            return os.getpriority(os.PRIO_PROCESS, pid)

        base = nice(b.pid)
        tm.keys("F8")
        tm.wait(lambda ls: f"{b.pid} (memload): nice {base} -> {base + 1}" in "\n".join(ls),
                "F8 message")
        check(nice(b.pid) == base + 1 and nice(a.pid) == base, f"F8: nice {nice(b.pid)}")
        tm.keys("r")
        tm.wait(lambda ls: any(f"renice {b.pid} (now {base + 1}) to:" in line for line in ls),
                "r prompt")
        tm.type("7")
        tm.keys("Enter")
        tm.wait(lambda ls: f"nice {base + 1} -> 7" in "\n".join(ls), "r message")
        check(nice(b.pid) == 7, f"r 7: nice {nice(b.pid)}")
        tm.keys("F7")
        tm.wait(lambda ls: "nice 7 -> 6" in "\n".join(ls), "F7 message")
        check(nice(b.pid) == 6, f"F7: nice {nice(b.pid)}")
        # k: the menu, n sends nothing
        tm.keys("k")
        tm.wait(lambda ls: any(f"signal {b.pid} (memload)" in line for line in ls) and
                any("15 SIGTERM" in line for line in ls), "k: no signal menu")
        tm.keys("Enter")
        tm.wait(lambda ls: any(f"send SIGTERM to {b.pid} (memload)? [y/N]" in line
                               for line in ls), "no confirmation")
        tm.keys("n")
        tm.wait(lambda ls: any("no signal sent" in line for line in ls), "n: message")
        check(b.p.poll() is None and a.p.poll() is None, "n: a process died")
        tm.keys("F9")
        tm.wait(lambda ls: any("15 SIGTERM" in line for line in ls), "F9: no signal menu")
        tm.keys("Down", "Enter")
        tm.wait(lambda ls: any(f"send SIGKILL to {b.pid}" in line for line in ls),
                "no confirmation of KILL")
        tm.keys("y")
        check(b.p.wait(timeout=30) == -9, f"b's status {b.p.returncode}")
        tm.wait(lambda ls: f"sent SIGKILL to {b.pid} (memload)" in "\n".join(ls), "y: message")
        check(a.p.poll() is None, "a died too")
        # a per-program row is no process
        tm.keys("p")
        tm.wait(lambda ls: any(r["COMMAND"].lstrip("`") == "memload" for r in table(ls) or []),
                "p: per program")
        tm.keys("k")
        tm.wait(lambda ls: any("select one process" in line for line in ls)
                or any("signal " in line for line in ls), "p k")
        check(not any("15 SIGTERM" in line for line in tm.screen()), "a menu for a program row")
        tm.keys("q")
        tm.wait(lambda ls: not tm.alternate_on(), "q")


def sgr_codes(lines_e):
    """Per line of capture-pane -e, the SGR codes set in it (ints)."""
    return [{int(c) for m in re.finditer(r"\x1b\[([0-9;]*)m", line)
             for c in m.group(1).split(";") if c} for line in lines_e]


@test
def ui_colours_and_monochrome():
    """Colours as htop's: the Mem meter in its parts' colours, an empty Swp
    meter unpainted, the column titles black on green, a growing process's
    LEAK? flag red (bold); with -C, and with NO_COLOR set, no colour at
    all: titles bold and underlined, the selection bar in reverse video,
    apart even when the bar is on the first row (both were reversed: one
    block)."""
    with a_grower(256, 100) as g:
        with Tmux() as tm:
            for env, flags, colour in (("", [], True), ("", ["-C"], False),
                                       ("NO_COLOR=1 ", [], False)):
                what = f"{env}{' '.join(flags) or 'default'}"
                tm.type(env)
                start_top(tm, flags + ["--growth-window", str(FLAG_WINDOW)])
                tm.wait(lambda ls: any(r["PID"] == str(g.pid) and r["FLAG"].startswith("LEAK?")
                                       for r in table(ls) or []), f"{what}: no flag")
                # the bar starts on the first row: on the grower when it is
                # the largest, its row then in the bar's reverse video, so
                # move the bar on (Down) until the grower's row is not in it
                end = time.monotonic() + 30
                while True:
                    lines = tm.tmux("capture-pane", "-e", "-p", "-t", "t").splitlines()
                    codes = sgr_codes(lines)
                    plain = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in lines]
                    flag = [i for i, p in enumerate(plain)
                            if p.split()[:1] == [str(g.pid)] and "LEAK?" in p]
                    if (flag and 7 not in codes[flag[0]]) or time.monotonic() > end:
                        break
                    if flag:
                        tm.keys("Down")
                    time.sleep(0.5)
                check(flag, f"{what}: the grower's flagged row went:\n" + "\n".join(plain))
                flag = flag[0]
                title = [i for i, p in enumerate(plain) if p.split()[:1] == ["PID"]][0]
                mem = [i for i, p in enumerate(plain) if p.startswith("Mem [")][0]
                colours = {c for cs in codes for c in cs if 30 <= c <= 49}
                if colour:
                    check({30, 42} <= codes[title], f"{what}: titles {codes[title]}")
                    # the meters' parts in their colours only (the used part
                    # may be under a cell in a VM), never the empty rest
                    check(codes[mem] - {0, 32, 33, 34, 39, 49} == set(),
                          f"{what}: Mem meter {codes[mem]}")
                    swp = mem + 1
                    with open("/proc/meminfo") as f:
                        swap = [int(line.split()[1]) for line in f
                                if line.startswith("SwapTotal:")][0]
                    check(swap or re.match(r"Swp \[ +\] ", plain[swp]),
                          f"{what}: an empty Swp meter drawn full: {plain[swp]!r}")
                    check({1, 31} <= codes[flag], f"{what}: flag row {codes[flag]}")
                else:
                    check(not colours - {39, 49}, f"{what}: colours {colours}")
                    check({1, 4} <= codes[title] and 7 not in codes[title],
                          f"{what}: titles {codes[title]}, not bold and underlined")
                    # the bar on the first row, under the titles: apart
                    tm.keys("Home")
                    tm.wait(lambda ls: 7 in sgr_codes(tm.tmux("capture-pane", "-e", "-p", "-t",
                                                              "t").splitlines())[title + 1],
                            f"{what}: the bar not on the first row")
                    codes = sgr_codes(tm.tmux("capture-pane", "-e", "-p", "-t", "t").splitlines())
                    check(7 not in codes[title] and {1, 4} <= codes[title],
                          f"{what}: titles {codes[title]} over the bar {codes[title + 1]}")
                tm.keys("q")
                tm.wait(lambda ls: not tm.alternate_on(), f"{what}: q")


@test
def ui_kernel_threads_hidden_until_K():
    """Kernel threads (PF_KTHREAD in /proc/PID/stat) are hidden at start:
    filtered to kthreadd, no row; K shows exactly pid 2, kthreadd; K again
    hides it; started with --kernel-threads, shown at once."""
    with open("/proc/2/comm") as f:
        check(f.read().strip() == "kthreadd", "pid 2 is not kthreadd here")
    with Tmux() as tm:
        for flags, want in PATHS:
            start_top(tm, flags)
            set_filter(tm, "kthreadd")
            tm.wait(lambda ls: any("filter: kthreadd" in line for line in ls), f"{want}: filter")
            time.sleep(2.5 * REFRESH)   # two refreshes
            check(table(tm.screen()) == [], f"{want}: kthreadd shown at start")
            tm.keys("K")
            rows = tm.wait_settled(lambda ls: table(ls), f"{want}: K shows nothing")
            check([(r["PID"], r["COMMAND"]) for r in rows] == [("2", "kthreadd")],
                  f"{want}: K: {rows}")
            tm.keys("K")
            tm.wait(lambda ls: table(ls) == [], f"{want}: K again leaves it")
            tm.keys("q")
            tm.wait(lambda ls: not tm.alternate_on(), f"{want}: q")
            # --kernel-threads: shown from the start, as in -b with it
            start_top(tm, flags + ["--kernel-threads"])
            set_filter(tm, "kthreadd")
            tm.wait(lambda ls: any("filter: kthreadd" in line for line in ls), f"{want}: filter")
            rows = tm.wait_settled(lambda ls: table(ls), f"{want}: --kernel-threads shows nothing")
            check([(r["PID"], r["COMMAND"]) for r in rows] == [("2", "kthreadd")],
                  f"{want}: --kernel-threads: {rows}")
            tm.keys("q")
            tm.wait(lambda ls: not tm.alternate_on(), f"{want}: q")


@test
def ui_command_line_after_W():
    """W (c before c tagged, as htop's): the full command line of each row
    after the columns (a grower's path and arguments exactly), COMMAND LINE
    in the titles; W again: gone."""
    with a_grower(256, 100) as g:
        want_cmd = f"{os.path.join(TESTBIN, 'grower')} 256 100"
        with Tmux() as tm:
            tm.tmux("resize-window", "-t", "t", "-x", "300", "-y", "50")
            for flags, want in PATHS:
                start_top(tm, flags)
                set_filter(tm, "grower")
                tm.wait(lambda ls: [r["PID"] for r in table(ls) or []] == [str(g.pid)],
                        f"{want}: the grower's row")
                check(not any("COMMAND LINE" in line for line in tm.screen()),
                      f"{want}: command line before W")
                tm.keys("W")
                tm.wait(lambda ls: any(line.rstrip().endswith(" COMMAND LINE") for line in ls) and
                        any(line.split()[:1] == [str(g.pid)] and
                            line.rstrip().endswith(" " + want_cmd) for line in ls),
                        f"{want}: W: no {want_cmd!r}")
                tm.keys("W")
                tm.wait(lambda ls: not any("COMMAND LINE" in line or want_cmd in line
                                           for line in ls), f"{want}: W again")
                tm.keys("q")
                tm.wait(lambda ls: not tm.alternate_on(), f"{want}: q")


@test
def ui_detail_pane_memory_and_open_files():
    """Enter on a memload (24 MiB anon, idle): its RSS split exactly as
    /proc/PID/status, as many mappings as /proc/PID/maps has lines, with
    the module its mmap_calls as /proc/memtrack/tasks says (else its
    faults), an RSS history of the samples seen; l: its open files, each
    fd and target as /proc/PID/fd; Enter twice back to the events pane."""
    with Memload() as m, Tmux() as tm:
        m.cmd(f"anon {24 << 20}")
        for flags, want in PATHS:
            start_top(tm, flags)
            set_filter(tm, "memload")
            tm.wait(lambda ls: [r["PID"] for r in table(ls) or []] == [str(m.pid)],
                    f"{want}: the memload row")
            tm.keys("Enter")
            # The history runs from the row's first sample: how many there
            # are when the pane shows depends on the guest's speed, so wait
            # for three or more rather than for exactly three.
            hist = re.compile(r"RSS, last (\d+) samples \[([^]]*)\] (\d+)\.\.(\d+) KiB")
            text = "\n".join(tm.wait(
                lambda ls: ls if any((h := hist.search(line)) and int(h[1]) >= 3
                                     for line in ls) else None,
                f"{want}: Enter: no memory pane with 3 samples or more"))
            check(f"memory of {m.pid} (memload)" in text, f"{want}: title")
            st = status(m.pid)
            h, rss = hist.search(text), int(st["VmRSS"][0])
            check(len(h[2]) == int(h[1]) and int(h[3]) <= rss <= int(h[4]),
                  f"{want}: {h[1]} samples, one mark each, around VmRSS {rss}:\n{text}")
            a, f, sh = (int(st[k][0]) for k in ("RssAnon", "RssFile", "RssShmem"))
            check(f"RSS {a + f + sh} KiB = anon {a} + file {f} + shmem {sh}" in text,
                  f"{want}: split, /proc says anon {a} file {f} shmem {sh}:\n{text}")
            with open(f"/proc/{m.pid}/maps") as mf:
                nmaps = len(mf.read().splitlines())
            check(f"maps: {nmaps} mappings:" in text, f"{want}: {nmaps} mappings:\n{text}")
            if want == "memtrack module":
                r = row(m.pid)
                check(f"mmap_calls {r['mmap_calls']}" in text,
                      f"{want}: mmap_calls {r['mmap_calls']}:\n{text}")
            else:
                check("faults: minor" in text, f"{want}: faults:\n{text}")
            tm.keys("l")
            fds = sorted(int(x) for x in os.listdir(f"/proc/{m.pid}/fd"))
            rows = [f"{fd:5d} {os.readlink(f'/proc/{m.pid}/fd/{fd}')}" for fd in fds]
            # The whole pane: a capture can fall between its title and its
            # rows being drawn.
            tm.wait(lambda ls: any(f"open files of {m.pid} (memload): {len(fds)}" in line
                                   for line in ls) and
                    set(rows) <= {line.rstrip() for line in ls},
                    f"{want}: l: no files pane of {len(fds)} with {rows}")
            tm.keys("Enter")
            tm.wait(lambda ls: any(f"memory of {m.pid}" in line for line in ls),
                    f"{want}: Enter from l")
            tm.keys("Enter")
            tm.wait(lambda ls: any(line.startswith("EVENTS") for line in ls) and
                    not any(f"memory of {m.pid}" in line for line in ls),
                    f"{want}: Enter closes")
            tm.keys("q")
            tm.wait(lambda ls: not tm.alternate_on(), f"{want}: q")


@test
def ui_setup_saves_toprc():
    """F2: hide USER, move FLAG (the last shown) up two places, sort by
    GROWTH, delay 3; q
    writes exactly that to $XDG_CONFIG_HOME/memtrack/toprc and the table
    follows it; a new memtrack-top starts with it, -d and -o beat it; a bad
    toprc stops it with FILE:LINE: why and exit 2."""
    with tempfile.TemporaryDirectory() as d, Tmux() as tm:
        rc = os.path.join(d, "memtrack", "toprc")
        env = f"XDG_CONFIG_HOME={d} "
        tm.type(env)
        start_top(tm, [])
        tm.keys("F2")
        tm.wait(lambda ls: ls[0].startswith("memtrack-top setup"), "F2: no setup screen")
        # FLAG: the last of the columns shown, the 22nd (hidden ones follow)
        tm.keys("Down", "Space", *["Down"] * 20, "[", "[", "Down", "Down", "s", "d")
        tm.wait(lambda ls: any("delay (seconds):" in line for line in ls), "d: no prompt")
        tm.type("3")
        tm.keys("Enter", "q")
        tm.wait(lambda ls: any(f"setup saved to {rc}" in line for line in ls), "q: not saved")
        with open(rc) as f:
            text = f.read()
        want = ("# memtrack-top's settings, written by its F2 screen\n[memtrack-top]\n"
                "columns = PID,COMMAND,CGROUP,CONTAINER,POD,%CPU,RSS,ANON,FILE,SHMEM,PSS,USS,SWAP,VIRT,"
                "LIMIT,MINFLT/s,MAJFLT/s,PGALLOC/s,FLAG,KMALLOC/s,GROWTH\n"
                "sort = GROWTH\ndelay = 3\n")
        check(text == want, f"toprc:\n{text}")

        def follows(ls):
            titles = [line.split() for line in ls if line.split()[:1] == ["PID"]]
            return (titles and "USER" not in titles[0] and "FLAG" in titles[0] and
                    titles[0].index("FLAG") < titles[0].index("GROWTH") and
                    any("sort: GROWTH  delay: 3.0s" in line for line in ls))
        tm.wait(follows, "the table after F2")
        tm.keys("q")
        tm.wait(lambda ls: not tm.alternate_on(), "q")
        tm.keys("clear", "Enter")
        tm.type(env + " ".join([TOP]))
        tm.keys("Enter")
        tm.wait(follows, "a new memtrack-top without toprc's settings")
        tm.keys("q")
        tm.wait(lambda ls: not tm.alternate_on(), "q again")
        tm.keys("clear", "Enter")
        tm.type(env + " ".join([TOP, "-d", "1", "-o", "rss"]))
        tm.keys("Enter")
        tm.wait(lambda ls: any("sort: RSS  delay: 1.0s" in line for line in ls),
                "-d and -o do not beat toprc")
        tm.keys("q")
        tm.wait(lambda ls: not tm.alternate_on(), "q at last")
        with open(rc, "w") as f:
            f.write("[memtrack-top]\ncolumns = PID,NOPE\n")
        tm.keys("clear", "Enter")
        tm.type(env + TOP + "; echo rc=$?")
        tm.keys("Enter")
        tm.wait(lambda ls: f"memtrack-top: {rc}:2: an unknown column (F2 lists them)" in ls
                and "rc=2" in ls, "a bad toprc: no FILE:LINE: why, exit 2")


TREE = """
import ctypes, os, sys, time
libc = ctypes.CDLL(None)
def name(n):
    libc.prctl(15, n.encode(), 0, 0, 0)
def child(fn):
    pid = os.fork()
    if pid == 0:
        fn()
        os._exit(0)
    return pid
def chain(k):
    name(f"deep{k:02d}")
    if k < 12:
        os.waitpid(child(lambda: chain(k + 1)), 0)
    else:
        time.sleep(120)
def a():
    name("deep01a")
    os.waitpid(child(lambda: (name("deep02a"), time.sleep(120))), 0)
def b():
    name("deep01b")
    os.waitpid(child(lambda: chain(2)), 0)
name("deep00")
pa = child(a)
time.sleep(0.2)
pb = child(b)
print(os.getpid(), flush=True)
os.waitpid(pa, 0)
os.waitpid(pb, 0)
"""


@test
def ui_tree_branches_keep_names_at_depth_12():
    """t (sorted by pid): a process tree of 15 drawn as ps --forest and htop
    draw it, tees, corners and lines down in UTF-8 box drawing (ASCII in
    the C locale), and the name whole at depth 12, past an ellipsis."""
    deep = [f"\u2026    \u2514\u2500deep{k:02d}" for k in range(5, 13)]
    utf8 = (["deep00", "\u251c\u2500deep01a", "\u2502 \u2514\u2500deep02a",
             "\u2514\u2500deep01b", "  \u2514\u2500deep02", "    \u2514\u2500deep03",
             "      \u2514\u2500deep04"] + deep)
    ascii = [c.replace("\u2502", "|").replace("\u251c\u2500", "|-").replace(
        "\u2514\u2500", "`-").replace("\u2026", "~") for c in utf8]
    p = subprocess.Popen([sys.executable, "-c", TREE], stdout=subprocess.PIPE,
                         start_new_session=True)
    try:
        check(int(readline(p.stdout)) == p.pid, "the tree did not start")
        with Tmux() as tm:
            for env, want in (("LANG=C.UTF-8 ", utf8), ("LC_ALL=C ", ascii)):
                tm.type(env)
                start_top(tm, ["-o", "pid"])
                set_filter(tm, "deep")
                tm.keys("t")

                def cells(ls):
                    # COMMAND: after PID and USER, 15 characters wide
                    rows = [line for line in ls if "deep" in line and
                            line.split()[:1] != ["filter:"]]
                    return [line[17:32].rstrip() for line in rows]
                tm.wait(lambda ls: cells(ls) == want,
                        f"{env}: the tree's COMMAND cells, want {want}")
                tm.keys("q")
                tm.wait(lambda ls: not tm.alternate_on(), f"{env}: q")
                tm.keys("clear", "Enter")
    finally:
        os.killpg(p.pid, 9)
        p.wait()


def pids_named(comm):
    out = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == comm:
                    out.append(int(pid))
        except (FileNotFoundError, NotADirectoryError, ProcessLookupError):
            pass
    return out


@test
def ui_s_attaches_memtrack_leak():
    """s on a leakdemo: memtrack-leak -p on it, its report in the pane (the
    stacks through grab() at leakdemo.c:25, as memtrack-leak prints them),
    with the module and without (the injected engine needs none); s again
    stops it (no memtrack-leak process left) and gives the events pane
    back."""
    demo = subprocess.Popen([os.path.join(TESTBIN, "leakdemo"), "600"],
                            stdout=subprocess.DEVNULL)
    try:
        with Tmux() as tm:
            for flags, want in PATHS:
                start_top(tm, flags)
                set_filter(tm, "leakdemo")
                tm.wait(lambda ls: [r["PID"] for r in table(ls) or []] == [str(demo.pid)],
                        f"{want}: the leakdemo row")
                tm.keys("s")
                tm.wait(lambda ls: any(f"memtrack-leak -p {demo.pid}, a report every" in line
                                       for line in ls), f"{want}: s: no pane")
                # the injected engine: the same report with or without the module
                tm.wait(lambda ls: any(f"pid {demo.pid} report" in line for line in ls) and
                        any("grab (" in line and "leakdemo.c:25)" in line for line in ls),
                        f"{want}: no report in the pane", timeout=120)
                check(len(pids_named("memtrack-leak")) == 1, "memtrack-leak not running")
                tm.keys("s")
                tm.wait(lambda ls: any(line.startswith("EVENTS") for line in ls) and
                        not any("memtrack-leak -p" in line for line in ls), f"{want}: s again")
                check(pids_named("memtrack-leak") == [], f"{want}: memtrack-leak left running")
                tm.keys("q")
                tm.wait(lambda ls: not tm.alternate_on(), f"{want}: q")
    finally:
        demo.kill()
        demo.wait()


@test
def ui_ctrl_c_and_crash_restore_the_terminal():
    with Tmux() as tm:
        for sig, status in (("C-c", 130), ("SEGV", 139)):
            tm.keys("clear", "Enter")
            start_top(tm, [])
            if sig == "C-c":
                tm.keys("C-c")
            else:
                os.kill(top_child(tm), 11)
            check_restored(tm, status, sig)


@test
def ui_events_pane_shows_growth_and_rss_alerts():
    with Tmux() as tm:
        for flags, want in PATHS:
            start_top(tm, flags + ["--growth-window", str(FLAG_WINDOW)])
            module = want == "memtrack module"
            if not module:
                tm.wait(lambda ls: any("EVENTS" in line and "need the memtrack module" in line
                                       for line in ls), f"{want}: pane status")
            g = subprocess.Popen([os.path.join(TESTBIN, "grower"), "256", "100"],
                                 stdout=subprocess.PIPE)
            try:
                check(readline(g.stdout).strip() == "ready", "grower did not start")
                tm.wait(lambda ls: any(f"growth: {g.pid} (grower)" in line and
                                       f"over {FLAG_WINDOW} s" in line for line in ls),
                        f"{want}: no growth alert for grower", timeout=120)
            finally:
                g.kill()
                g.wait()
            if module:
                cfg = read_config()["rss_alert_kb"]
                set_config("rss_alert_kb", str(32 << 10))
                try:
                    with Memload() as m:
                        # The module samples RSS once a second: let it see
                        # memload small before it crosses the threshold.
                        time.sleep(2.5)
                        m.cmd(f"anon {48 << 20}")
                        tm.wait(lambda ls: any(f"RSS alert: {m.pid}," in line for line in ls),
                                f"{want}: no RSS alert for memload", timeout=120)
                        m.close()
                finally:
                    set_config("rss_alert_kb", cfg)
            tm.keys("e")
            tm.wait(lambda ls: not any(line.startswith("EVENTS") for line in ls), "e: pane stays")
            tm.keys("q")
            tm.wait(lambda ls: not tm.alternate_on(), f"{want}: q")


if __name__ == "__main__":
    sys.exit(run_tests(sys.argv))
