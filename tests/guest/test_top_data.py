#!/usr/bin/env python3
"""What memtrack-top needs for every row without reading /proc/PID: parent,
cgroup v2 id, CPU time and start time, in /proc/memtrack/tasks and threads
and in the netlink struct memtrack_task, against /proc/PID/stat,
/proc/PID/cgroup and the cgroup directory's inode.  Runs in the VM with the
module loaded (scripts/check runs it on each kernel)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import (Memload, Stopped, check, read_table, readline, row,  # noqa: E402
                   run_tests, set_config, read_config, test)
from nl import Genl  # noqa: E402

CGROOT = "/sys/fs/cgroup"
HZ = os.sysconf("SC_CLK_TCK")
TICK_NS = 1_000_000_000 // HZ

# A busy process: a thread that spins 0.3 s of CPU and exits (its time stays
# in the process), a second thread and the main thread spinning for ever.
BUSY = """
import threading, time, sys
def spin(sec):
    end = time.thread_time() + sec
    while time.thread_time() < end:
        pass
t = threading.Thread(target=spin, args=(0.3,))
t.start()
t.join()
threading.Thread(target=spin, args=(1e9,), daemon=True).start()
spin(0.3)
print("spun", flush=True)
spin(1e9)
"""


def stat_fields(path):
    """/proc/.../stat split after the comm, numbered as in proc(5):
    f[3] is ppid, f[14] utime, f[15] stime, f[22] starttime."""
    with open(path) as f:
        pid, rest = f.read().split(" (", 1)
    return [None, int(pid), None] + rest.rsplit(") ", 1)[1].split()


def cgroup_ino(pid):
    """Inode of the process's cgroup v2 directory, from /proc/PID/cgroup."""
    with open(f"/proc/{pid}/cgroup") as f:
        path = [line.split("::", 1)[1].strip() for line in f if line.startswith("0::")][0]
    return os.stat(CGROOT + path).st_ino


class Cgroup:
    """A child cgroup of the root for the duration of a with-block."""

    def __init__(self, name):
        self.path = os.path.join(CGROOT, name)

    def __enter__(self):
        os.mkdir(self.path)
        return self

    def add(self, pid):
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(pid))

    def __exit__(self, *exc):
        for pid in open(os.path.join(self.path, "cgroup.procs")).read().split():
            with open(os.path.join(CGROOT, "cgroup.procs"), "w") as f:
                f.write(pid)
        os.rmdir(self.path)


def check_identity(r, pid, stat_path, what):
    f = stat_fields(stat_path)
    check(r["ppid"] == int(f[4]), f"{what}: ppid {r['ppid']}, stat says {f[4]}")
    check(r["start_ns"] // TICK_NS == int(f[22]),
          f"{what}: start {r['start_ns']} ns, stat says {f[22]} ticks")
    check(r["cgroup_id"] == cgroup_ino(pid),
          f"{what}: cgroup_id {r['cgroup_id']}, directory inode {cgroup_ino(pid)}")


@test
def child_in_a_new_cgroup_has_its_ppid_cgroup_and_start():
    with Cgroup("mt-top-data") as cg, Memload() as m:
        m.cmd("threads 3")
        cg.add(m.pid)
        ino = os.stat(cg.path).st_ino
        check(ino != os.stat(CGROOT).st_ino, "new cgroup has the root's inode")
        r = row(m.pid)
        check(r["ppid"] == os.getpid(), f"ppid {r['ppid']}, expected {os.getpid()}")
        check(r["cgroup_id"] == ino, f"cgroup_id {r['cgroup_id']}, inode {ino}")
        check(r["threads"] == 4, f"{r['threads']} threads")
        check_identity(r, m.pid, f"/proc/{m.pid}/stat", "process")
        threads = [t for ts in read_table("threads").values() for t in ts
                   if t["tgid"] == m.pid and t["state"] == "R"]
        check(len(threads) == 4, f"{len(threads)} thread rows")
        for t in threads:
            check_identity(t, m.pid, f"/proc/{m.pid}/task/{t['pid']}/stat",
                           f"thread {t['pid']}")
        with Genl() as g:
            t = g.task(m.pid)
        for k in ("ppid", "cgroup_id", "start_ns"):
            check(t[k] == r[k], f"netlink {k} {t[k]}, /proc {r[k]}")
        m.close()


@test
def every_live_process_matches_proc_stat_and_cgroup():
    rows = [r for rs in read_table("tasks").values() for r in rs if r["state"] == "R"]
    checked = 0
    for r in rows:
        try:
            check_identity(r, r["pid"], f"/proc/{r['pid']}/stat", f"pid {r['pid']} {r['comm']}")
        except FileNotFoundError:
            continue  # exited since
        checked += 1
    check(checked >= 10, f"only {checked} processes checked")


@test
def busy_process_cpu_time_equals_proc_stat():
    p = subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.PIPE)
    try:
        check(readline(p.stdout).strip() == "spun", "busy child did not start")
        with Stopped([p.pid]):
            r = row(p.pid)
            f = stat_fields(f"/proc/{p.pid}/stat")
            threads = [t for ts in read_table("threads").values() for t in ts
                       if t["tgid"] == p.pid and t["state"] == "R"]
            tstat = {t["pid"]: stat_fields(f"/proc/{p.pid}/task/{t['pid']}/stat")
                     for t in threads}
        check(r["threads"] == 2 and len(threads) == 2, f"{r['threads']} threads")
        # A thread's row is task_cputime_adjusted(), as /proc/PID/task/TID/stat.
        for t in threads:
            tf = tstat[t["pid"]]
            check(t["utime_ns"] // TICK_NS == int(tf[14]) and
                  t["stime_ns"] // TICK_NS == int(tf[15]),
                  f"thread {t['pid']}: {t['utime_ns']}+{t['stime_ns']} ns, "
                  f"stat {tf[14]}+{tf[15]} ticks")
        # The process: at least the 0.6 s spun by the main and the dead
        # thread.  /proc adjusts the group's raw total at once; we add the
        # live threads' adjusted times to the dead one's raw ticks, which may
        # differ from its exact run time by the tick sampling (HZ=250: 4 ms
        # a tick, a few per 0.3 s at most) and the rounding of each addend.
        ours = (r["utime_ns"] + r["stime_ns"]) // TICK_NS
        proc = int(f[14]) + int(f[15])
        check(ours >= 60, f"process CPU {ours} ticks, spun at least 60")
        check(abs(ours - proc) <= 3 + proc // 50,
              f"process CPU {ours} ticks, /proc/PID/stat {proc}")
        check(abs(r["utime_ns"] // TICK_NS - int(f[14])) <= 3 + proc // 50,
              f"process utime {r['utime_ns']} ns, /proc/PID/stat {f[14]} ticks")
        thr_sum = sum(t["utime_ns"] + t["stime_ns"] for t in threads)
        check(r["utime_ns"] + r["stime_ns"] >= thr_sum + 250_000_000,
              "the dead thread's 0.3 s is not in the process's time")
    finally:
        p.kill()
        p.wait()


@test
def exited_process_has_zero_stat_fields():
    cfg = read_config()["retention_ms"]
    set_config("retention_ms", 60000)
    try:
        with Memload() as m:
            pid = m.pid
            m.close()
        r = row(pid, state="X")
        check(r is not None, "no exited row")
        for k in ("ppid", "cgroup_id", "utime_ns", "stime_ns", "start_ns"):
            check(r[k] == 0, f"exited row {k} = {r[k]}")
    finally:
        set_config("retention_ms", cfg)


if __name__ == "__main__":
    sys.exit(run_tests(sys.argv))
