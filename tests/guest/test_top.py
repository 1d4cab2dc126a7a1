#!/usr/bin/env python3
"""memtrack-top's data source (libmemtrack's mt_source_*) and memtrack-top
itself, against workloads of known size and /proc.  In the VM (MEMTRACK_VM
set, module loaded) both paths are checked: the module, and /proc forced;
on the host (tests/host/test_top.sh) only /proc, which it then must pick by
itself."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import (PAGE, ROOT, Memload, Stopped, check, run_tests, test)  # noqa: E402

IN_VM = bool(os.environ.get("MEMTRACK_VM"))
SOURCE_DUMP = os.path.join(ROOT, "build", "tests", "user", "source_dump")
# (flags, expected source name) for each path this machine has
PATHS = [([], "memtrack module"), (["--proc"], "/proc")] if IN_VM else [([], "/proc")]
CGNAME = "mt-top-test"


def source_dump(flags, tgid=None):
    """(source name, sys dict, rows by pid) from user/tests/source_dump."""
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
            r = dict(kv.split("=", 1) for kv in rest.split(" "))
            r = {k: (v if k == "comm" else int(v)) for k, v in r.items()}
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


class Workload:
    """memload with 8 MiB anon + 2 MiB shmem and 3 threads, in a cgroup of
    its own."""

    def __enter__(self):
        self.m = Memload()
        self.m.cmd(f"anon {8 << 20}")
        self.m.cmd(f"shared {2 << 20}")
        self.m.cmd("threads 3")
        self.cg = os.path.join(cgroup2_root(), CGNAME)
        os.makedirs(self.cg, exist_ok=True)
        with open(f"{self.cg}/cgroup.procs", "w") as f:
            f.write(str(self.m.pid))
        self.m.cg_ino = os.stat(self.cg).st_ino
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
        else:
            check(si["kmallocs"] > 0, "module source has no kmallocs")


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


if __name__ == "__main__":
    sys.exit(run_tests(sys.argv))
