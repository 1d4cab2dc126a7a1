"""Helpers for tests that run inside the VM (tests/vm/run) with memtrack.ko
loaded: reading /proc/memtrack, driving the workloads in tests/progs, and
counting tracepoint hits independently through tracefs.

A test is a function decorated with @test; run_tests(sys.argv) runs them
with tests/lib/harness.py (the runner the host suites share): test names as
arguments run only those, --list prints the names; "PASS name" / "FAIL name:
why" lines and a closing "guest: N passed, N failed" line, which
scripts/check adds up.
"""
import errno
import os
import re
import select
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from harness import TestFailure, check, main as _main, test  # noqa: E402,F401

PROC = "/proc/memtrack"
PAGE = os.sysconf("SC_PAGE_SIZE")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTBIN = os.path.join(ROOT, "build", "tests")
KVER = os.uname().release
MODULE = os.path.join(ROOT, "build", KVER, "memtrack.ko")
TRACEFS = "/sys/kernel/tracing"


# The system calls tests wait for a process to sleep in, by name: numbers
# are the machine's (asm-generic's on arm64), /proc/PID/syscall gives one.
SYSCALLS = {
    "x86_64": {"read": 0, "nanosleep": 35, "clock_nanosleep": 230},
    "aarch64": {"read": 63, "nanosleep": 101, "clock_nanosleep": 115},
}[os.uname().machine]


def in_syscall(pid, *names):
    """True if pid is in one of the system calls names now (False once it
    is gone)."""
    try:
        with open(f"/proc/{pid}/syscall") as f:
            nr = f.read().split()[0]
    except (OSError, IndexError):
        return False
    return nr in {str(SYSCALLS[n]) for n in names}


def near(actual, expected, tol, what):
    check(abs(actual - expected) <= tol,
          f"{what}: {actual} not within {tol} of {expected}")


# ---- /proc/memtrack ------------------------------------------------------

# comm is the task's bytes, not text: a process may name itself anything
# (prctl PR_SET_NAME), so /proc/memtrack is read as bytes and a comm that
# is not UTF-8 keeps its bytes as surrogates (os.fsdecode's convention).
_RAW = dict(encoding="utf-8", errors="surrogateescape")


def _value(v):
    # Most cells are plain decimals: int() without base 0's parsing and
    # without an exception for a name (10,000-row tables under emulation).
    if v.isdecimal() and v.isascii() and (v[0] != "0" or len(v) == 1):
        return int(v)
    if v == "-":
        return None
    try:
        return int(v, 0)
    except ValueError:
        return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), v)


def read_table(name="tasks"):
    """Rows of /proc/memtrack/{tasks,threads} as dicts, by pid: a list,
    since an exited entry and a live one may share a pid."""
    with open(f"{PROC}/{name}", **_RAW) as f:
        lines = f.read().splitlines()
    cols = lines[0].split()
    rows = {}
    for line in lines[1:]:
        vals = line.split(" ")
        check(len(vals) == len(cols), f"{name}: bad row {line!r}")
        row = {c: _value(v) for c, v in zip(cols, vals)}
        rows.setdefault(row["pid"], []).append(row)
    return rows


def columns(name="tasks"):
    with open(f"{PROC}/{name}", **_RAW) as f:
        return f.readline().split()


def row(pid, name="tasks", state="R"):
    """The one row of pid in the given state, or None."""
    found = [r for r in read_table(name).get(pid, []) if r["state"] == state]
    check(len(found) <= 1, f"{name}: {len(found)} rows for pid {pid} in state {state}")
    return found[0] if found else None


def summary():
    """Key: value lines of the summary; repeated keys collect into lists."""
    out = {}
    with open(f"{PROC}/summary", **_RAW) as f:
        for line in f:
            m = re.match(r"^([A-Za-z][\w()]*):\s+(.*)$", line.rstrip("\n"))
            if not m:
                continue
            k, v = m.group(1), m.group(2)
            if k == "Victim":
                out.setdefault(k, []).append(v)
            else:
                out[k] = v
    return out


def summary_int(key, s=None):
    s = s if s is not None else summary()
    return int(s[key].split()[0])


def live_process_count():
    """Processes (kernel threads included) that /proc lists now."""
    return len([p for p in os.listdir("/proc") if p.isdigit()])


def read_config():
    with open(f"{PROC}/config") as f:
        return dict(line.split() for line in f)


def write_config(text):
    """Write text to the config file in one write(); returns the errno or 0."""
    fd = os.open(f"{PROC}/config", os.O_WRONLY)
    try:
        os.write(fd, text.encode() if isinstance(text, str) else text)
        return 0
    except OSError as e:
        return e.errno
    finally:
        os.close(fd)


def set_config(key, value):
    err = write_config(f"{key} {value}\n")
    check(err == 0, f"config {key} {value}: {os.strerror(err)}")


# ---- /proc ------------------------------------------------------------------

def proc_status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return out


def status_bytes(st, key):
    v = st.get(key)
    return int(v.split()[0]) * 1024 if v else 0


def vmstat():
    with open("/proc/vmstat") as f:
        return {k: int(v) for k, v in (line.split() for line in f)}


def meminfo():
    with open("/proc/meminfo") as f:
        return {line.split(":")[0]: int(line.split()[1]) for line in f}


# ---- privileges ---------------------------------------------------------------

NOBODY = 65534


def drop_privileges(uid=NOBODY):
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


# Capability numbers (linux/capability.h) of the privileged paths
CAP_NET_ADMIN, CAP_SYS_PTRACE, CAP_SYS_ADMIN = 12, 19, 21
CAP_NAME = {CAP_NET_ADMIN: "NET_ADMIN", CAP_SYS_PTRACE: "SYS_PTRACE",
            CAP_SYS_ADMIN: "SYS_ADMIN"}


def bounding_caps():
    with open("/proc/self/status") as f:
        mask = next(int(line.split()[1], 16) for line in f if line.startswith("CapBnd:"))
    return frozenset(c for c in range(64) if mask >> c & 1)


def identities():
    """Who a privileged path is tried as: (name, uid, capabilities held):
    nobody with nothing, with each of the three capabilities alone, root
    without each, and root."""
    every = bounding_caps()
    out = [("nobody", NOBODY, frozenset())]
    out += [(f"nobody+{CAP_NAME[c]}", NOBODY, frozenset([c])) for c in CAP_NAME]
    out += [(f"root-{CAP_NAME[c]}", 0, every - {c}) for c in CAP_NAME]
    return out + [("root", 0, every)]


def become(uid, caps):
    """This process: uid and gid `uid`, no groups, holding exactly `caps`
    (effective and permitted; nothing inheritable), checked in /proc."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if uid:
        libc.prctl(8, 1, 0, 0, 0)           # PR_SET_KEEPCAPS: through setuid
        drop_privileges(uid)
    mask = sum(1 << c for c in caps)
    lo, hi = mask & 0xffffffff, mask >> 32
    hdr = ctypes.create_string_buffer(struct.pack("<Ii", 0x20080522, 0))  # _V3
    data = ctypes.create_string_buffer(struct.pack("<6I", lo, lo, 0, hi, hi, 0))
    if libc.capset(hdr, data):
        raise OSError(ctypes.get_errno(), "capset")
    st = proc_status(os.getpid())
    if int(st["CapEff"], 16) != mask or int(st["Uid"].split()[0]) != uid:
        raise RuntimeError(f"became uid {st['Uid']} CapEff {st['CapEff']}")


def as_identity(fn, uid, caps):
    """fn() in a child that became (uid, caps); its return value (pickled
    through a pipe), or RuntimeError with the child's exception."""
    import pickle
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rd)
        try:
            become(uid, caps)
            out = ("ok", fn())
        except BaseException as e:  # noqa: B902
            out = ("exception", repr(e))
        os.write(wr, pickle.dumps(out))
        os._exit(0)
    os.close(wr)
    data = b""
    while True:
        chunk = os.read(rd, 1 << 16)
        if not chunk:
            break
        data += chunk
    os.close(rd)
    os.waitpid(pid, 0)
    kind, value = pickle.loads(data) if data else ("exception", "child died")
    if kind != "ok":
        raise RuntimeError(f"as uid {uid}: {value}")
    return value


def as_nobody(fn):
    """Run fn() in a child with uid/gid nobody; its return value is the exit code."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            drop_privileges()
            code = fn()
        except BaseException as e:  # noqa: B902
            print(f"child: {e!r}", file=sys.stderr, flush=True)
        os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def variant_tests(fns, variants):
    """Each fn(variant) as one test per fixture build: NAME_fp, NAME_nofp."""
    for fn in fns:
        for v in variants:
            def case(fn=fn, v=v):
                fn(v)
            case.__name__ = f"{fn.__name__}_{v}"
            test(case)


def variant_test(variants):
    """Decorator form of variant_tests()."""
    def register(fn):
        variant_tests((fn,), variants)
        return fn
    return register


# ---- child processes --------------------------------------------------------

def readline(f, timeout=60):
    """A line from a child's pipe: a failure, not a hang, if none comes.
    Byte by byte from the fd, so that nothing waits in a Python buffer."""
    fd, out = f.fileno(), b""
    end = time.monotonic() + timeout
    while not out.endswith(b"\n"):
        left = end - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise AssertionError(f"no line within {timeout}s: {out!r}")
        c = os.read(fd, 1)
        if not c:
            break
        out += c
    return out.decode()


def stderr_of(p):
    """What a failed child said (killed first: reading must not wait)."""
    if p.poll() is None:
        p.kill()
    return p.stderr.read()[:300]


# ---- workloads --------------------------------------------------------------

class Workload:
    """A child process in self.p, killed if a with-block leaves it running."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


class Memload(Workload):
    """tests/progs/memload, one command at a time."""

    def __init__(self):
        self.p = subprocess.Popen([os.path.join(TESTBIN, "memload")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1)
        self.pid = self.p.pid
        self._expect("ok pid")

    def _expect(self, prefix):
        line = self.p.stdout.readline()
        check(line.startswith(prefix), f"memload: expected {prefix!r}, got {line!r}")

    def cmd(self, c):
        self.p.stdin.write(c + "\n")
        self.p.stdin.flush()
        self._expect("ok")

    def close(self):
        if self.p.poll() is None:
            self.p.stdin.write("exit\n")
            self.p.stdin.flush()
            self.p.wait(timeout=60)


class Stopped:
    """SIGSTOP the given pids for the duration of a with-block."""

    def __init__(self, pids):
        self.pids = list(pids)

    def __enter__(self):
        for pid in self.pids:
            os.kill(pid, signal.SIGSTOP)
        # Wait until each is really stopped, not just signalled: every
        # thread, since each stops on its own (and its CPU time moves until).
        for pid in self.pids:
            for _ in range(1000):
                if all(self._state(pid, tid) == "T" for tid in self._tids(pid)):
                    break
                time.sleep(0.01)
        # A thread shows T just before it schedules out: let it go.
        time.sleep(0.02)
        return self

    @staticmethod
    def _tids(pid):
        try:
            return os.listdir(f"/proc/{pid}/task")
        except FileNotFoundError:
            return []

    @staticmethod
    def _state(pid, tid):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return "T"  # gone: nothing left to wait for

    def __exit__(self, *exc):
        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass


# ---- tracefs: an independent count of tracepoint hits -------------------------

class TraceCount:
    """Count hits of trace events (each with an optional filter) during a
    with-block, from the trace buffer.  counts[event] after the block.  Fails
    if the buffer overwrote anything, so the counts are exact."""

    BUFFER_KB = 4096

    def __init__(self, events):
        self.events = events  # [(system, event, filter or None)]
        self.counts = None

    @staticmethod
    def _w(path, text):
        with open(path, "w") as f:
            f.write(text)

    def _overrun(self):
        total = 0
        for cpu in os.listdir(f"{TRACEFS}/per_cpu"):
            with open(f"{TRACEFS}/per_cpu/{cpu}/stats") as f:
                st = dict(line.split(":", 1) for line in f if ":" in line)
            total += int(st["overrun"])
        return total

    def __enter__(self):
        self._w(f"{TRACEFS}/tracing_on", "0")
        self._w(f"{TRACEFS}/buffer_size_kb", str(self.BUFFER_KB))
        self._w(f"{TRACEFS}/trace", "")
        for system, event, filt in self.events:
            d = f"{TRACEFS}/events/{system}/{event}"
            self._w(f"{d}/filter", filt or "0")
            self._w(f"{d}/enable", "1")
        self._w(f"{TRACEFS}/tracing_on", "1")
        return self

    def __exit__(self, *exc):
        self._w(f"{TRACEFS}/tracing_on", "0")
        for system, event, _ in self.events:
            self._w(f"{TRACEFS}/events/{system}/{event}/enable", "0")
            self._w(f"{TRACEFS}/events/{system}/{event}/filter", "0")
        overrun = self._overrun()
        with open(f"{TRACEFS}/trace") as f:
            text = f.read()
        self._w(f"{TRACEFS}/trace", "")
        if exc[0] is None:
            check(overrun == 0, f"trace buffer overran by {overrun} events")
        self.counts = {e: len(re.findall(rf" {e}: ", text)) for _, e, _ in self.events}
        self.text = text

    def task_pages(self, event):
        """Pages in the hits of a page event (order=N: 2^N pages each) in
        task context: the third of the latency flags (hardirq/softirq/NMI)
        is '.', as in both the four flags of 5.10 and the five since."""
        hits = re.findall(rf"^.*?\[\d+\]\s+\S(\S)(\S)\S+\s+[\d.]+: {event}: .*?order=(\d+)",
                          self.text, re.M)
        return sum(1 << int(order) for _, ctx, order in hits if ctx == ".")


# ---- runner -----------------------------------------------------------------

def run_tests(argv):
    return _main(argv, label="guest")


__all__ = [n for n in dir() if not n.startswith("_")] + ["errno", "os", "time",
                                                        "signal", "subprocess"]
