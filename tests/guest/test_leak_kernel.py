#!/usr/bin/env python3
"""The kernel half of the leak tracer (LEAK_ATTACH/STACKS/STATS/DETACH):
exact outstanding blocks per call stack of tests/progs/leaker, permission,
refused bad requests, and every way a session ends (detach, target exit,
tracer socket closed or killed, rmmod).

Runs inside the VM with the module loaded:
    tests/vm/run -- python3 tests/guest/test_leak_kernel.py
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import *  # noqa: E402,F403
from nl import Genl, NlError, API, attr, attr_u32, attr_str, attr_nest  # noqa: E402
import nl  # noqa: E402

LEAKER = os.path.join(ROOT, "build", "tests", "leaker")

# What one round of leaker leaves outstanding: function -> (api, blocks, bytes).
EXPECTED = {
    "leak_a": ("malloc", 10, 1000),
    "leak_b": ("calloc", 5, 1280),
    "churn": ("malloc", 4, 800),
    "realloc_chain": ("realloc", 1, 48),
    "failed_realloc": ("malloc", 1, 64),
    "zero_alloc": ("malloc", 1, 0),
}


class Leaker(Workload):
    """tests/progs/leaker: one round of known leaks per line on stdin."""

    def __init__(self, user=None):
        def demote():
            if user is not None:
                drop_privileges(user)
        self.p = subprocess.Popen([LEAKER], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, preexec_fn=demote)
        check(self.p.stdout.readline() == b"ready\n", "leaker did not start")
        self.pid = self.p.pid

    def round(self):
        self.p.stdin.write(b"\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        check(line == b"done\n", f"leaker round: {line!r}")

    def stop(self):
        if self.p.poll() is None:
            self.p.stdin.close()
            self.p.wait(timeout=30)


def mapped_path(pid, name):
    """Path and load base of the object whose file name starts with name."""
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and os.path.basename(parts[5]).startswith(name) \
                    and int(parts[2], 16) == 0:
                return parts[5], int(parts[0].split("-")[0], 16)
    raise TestFailure(f"{name} not mapped in {pid}")


def load_segments(path):
    """PT_LOAD (vaddr, memsz, file offset) of an ELF object (readelf -lW)."""
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True,
                         check=True).stdout
    segs = []
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[2], 16), int(f[5], 16), int(f[1], 16)))
    return segs


def file_offset(path, vaddr):
    for va, memsz, off in load_segments(path):
        if va <= vaddr < va + memsz:
            return vaddr - va + off
    raise TestFailure(f"{vaddr:#x} not in a PT_LOAD of {path}")


def dynsyms(path):
    """Defined dynamic symbols, without version suffixes: name -> vaddr."""
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True,
                         text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3:
            syms.setdefault(f[2].split("@")[0], int(f[0], 16))
    return syms


def libc_probes(pid, apis=("malloc", "calloc", "realloc", "free")):
    path, _ = mapped_path(pid, "libc.so")
    syms = dynsyms(path)
    return [(path, file_offset(path, syms[a]), API[a]) for a in apis]


def leaker_functions(pid):
    """Runtime [start, end) of leaker's functions (PIE: load base + nm -S)."""
    path, base = mapped_path(pid, "leaker")
    out = subprocess.run(["nm", "-S", path], capture_output=True, text=True,
                         check=True).stdout
    funcs = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in ("T", "t"):
            funcs[f[3]] = (base + int(f[0], 16), base + int(f[0], 16) + int(f[1], 16))
    return funcs


def function_of(funcs, addr):
    for name, (lo, hi) in funcs.items():
        if lo <= addr < hi:
            return name
    return None


def stacks_by_function(g, pid, **kw):
    """{function holding frames[0]: stack}; every stack must be in leaker."""
    funcs = leaker_functions(pid)
    out = {}
    for s in g.leak_stacks(pid, **kw):
        check(s["nr_frames"] >= 1, f"stack without frames: {s}")
        fn = function_of(funcs, s["frames"][0])
        check(fn is not None, f"stack {s['stack_id']} frames[0] "
              f"{s['frames'][0]:#x} is not in leaker: {s}")
        check(fn not in out, f"two stacks in {fn}: {out.get(fn)} {s}")
        out[fn] = s
    return out


def check_exact(g, pid, rounds, unknown=1):
    """unknown: frees of unseen blocks expected (1 if attached before round 1)."""
    by_fn = stacks_by_function(g, pid)
    check(set(by_fn) == set(EXPECTED),
          f"leaking functions {sorted(by_fn)}, expected {sorted(EXPECTED)}")
    for fn, (api, blocks, nbytes) in EXPECTED.items():
        s = by_fn[fn]
        got = (s["api"], s["blocks"], s["bytes"])
        want = (API[api], blocks * rounds, nbytes * rounds)
        check(got == want, f"{fn}: (api, blocks, bytes) {got}, expected {want}")
        # frames[1]: leaker's main called each of them (frame-pointer walk).
        check(s["nr_frames"] >= 2 and
              function_of(leaker_functions(pid), s["frames"][1]) == "main",
              f"{fn}: frames[1] not in main: {s['frames'][:3]}")
    st = g.leak_stats(pid)
    check(st["outstanding_blocks"] == sum(e[1] for e in EXPECTED.values()) * rounds,
          f"stats: {st}")
    check(st["outstanding_bytes"] == sum(e[2] for e in EXPECTED.values()) * rounds,
          f"stats: {st}")
    # leaker's first round frees a block from before the attach.
    check(st["unknown_frees"] == unknown and st["mismatched_frees"] == 0 and
          st["dropped_allocs"] == 0 and st["dropped_stacks"] == 0, f"stats: {st}")
    check(st["nr_probes"] == 4, f"stats: {st}")
    return by_fn


def expect_error(err, fn, what):
    try:
        fn()
    except NlError as e:
        check(e.errno == err, f"{what}: errno {e.errno} ({e}), expected {err}")
        return e
    raise TestFailure(f"{what}: accepted")


def wait_detached(g, pid, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            g.leak_stats(pid)
        except NlError as e:
            check(e.errno == errno.ENOENT, f"stats: {e}")
            return
        time.sleep(0.05)
    raise TestFailure(f"session of {pid} still there after {timeout}s")


def probes_in(pid):
    """uprobes breakpoints in pid's libc text: the page differs from the file's."""
    path, _ = mapped_path(pid, "libc.so")
    syms = dynsyms(path)
    with open(f"/proc/{pid}/maps") as f:
        maps = [ln.split() for ln in f if ln.split()[-1] == path]
    with open(path, "rb") as f, open(f"/proc/{pid}/mem", "rb") as mem:
        for a in ("malloc", "free"):
            off = file_offset(path, syms[a])
            for m in maps:
                lo, hi = (int(x, 16) for x in m[0].split("-"))
                moff = int(m[2], 16)
                if moff <= off < moff + hi - lo:
                    f.seek(off)
                    mem.seek(lo + off - moff)
                    if f.read(1) != mem.read(1):
                        return True
    return False


# ---- tests -------------------------------------------------------------------------

@test
def exact_stacks():
    """Exact blocks and bytes per stack after one and two rounds; the same
    stacks (ids) are reused; min age filters; detach ends it."""
    with Leaker() as lk, Genl() as g:
        g.leak_attach(lk.pid, libc_probes(lk.pid))
        check(probes_in(lk.pid), "no breakpoint in the target's libc")
        check(not probes_in(os.getpid()), "breakpoint in an untraced process")
        lk.round()
        first = check_exact(g, lk.pid, 1)
        lk.round()
        second = check_exact(g, lk.pid, 2)
        check({f: s["stack_id"] for f, s in first.items()} ==
              {f: s["stack_id"] for f, s in second.items()}, "stack ids changed")
        check(g.leak_stacks(lk.pid, min_age_ms=3600 * 1000) == [],
              "min age of an hour still shows stacks")
        time.sleep(0.3)
        check(len(g.leak_stacks(lk.pid, min_age_ms=200)) == len(EXPECTED),
              "min age 200 ms after 300 ms hides stacks")
        g.leak_detach(lk.pid)
        check(not probes_in(lk.pid), "breakpoint left after detach")
        expect_error(errno.ENOENT, lambda: g.leak_stats(lk.pid), "stats after detach")
        expect_error(errno.ENOENT, lambda: g.leak_detach(lk.pid), "second detach")
        lk.round()
        lk.stop()


@test
def mismatched_frees():
    """free() probed as operator delete: churn's 4 frees of malloc'd blocks
    are mismatched, on the stack that allocated them; the free of a block
    never seen allocated is unknown, not mismatched."""
    with Leaker() as lk, Genl() as g:
        probes = libc_probes(lk.pid, ("malloc", "calloc", "realloc"))
        path, off, _ = libc_probes(lk.pid, ("free",))[0]
        g.leak_attach(lk.pid, probes + [(path, off, API["delete"])])
        lk.round()
        st = g.leak_stats(lk.pid)
        check(st["mismatched_frees"] == 4 and st["unknown_frees"] == 1,
              f"stats: {st}")
        by_fn = stacks_by_function(g, lk.pid)
        check(by_fn["churn"]["mismatched"] == 4 and by_fn["churn"]["blocks"] == 4,
              f"churn: {by_fn['churn']}")
        check(all(s["mismatched"] == 0 for f, s in by_fn.items() if f != "churn"),
              f"stacks: {by_fn}")
        g.leak_detach(lk.pid)


@test
def attach_permission():
    """Nobody may not trace root's process; nobody may trace its own."""
    with Leaker() as lk:
        probes = libc_probes(lk.pid)

        def as_nobody_root_target():
            with Genl() as g:
                try:
                    g.leak_attach(lk.pid, probes)
                except NlError as e:
                    return 0 if e.errno == errno.EPERM else 3
            return 4
        check(as_nobody(as_nobody_root_target) == 0,
              "nobody attaching to root's process: not EPERM")
        with Genl() as g:
            expect_error(errno.ENOENT, lambda: g.leak_stats(lk.pid),
                         "a session after a refused attach")
    with Leaker(user=NOBODY) as lk:
        probes = libc_probes(lk.pid)

        def as_nobody_own_target():
            with Genl() as g:
                g.leak_attach(lk.pid, probes)
                lk.round()
                s = g.leak_stats(lk.pid)
                g.leak_detach(lk.pid)
                return 0 if s["outstanding_blocks"] == 22 else 5
        check(as_nobody(as_nobody_own_target) == 0, "nobody tracing its own process")
        with Genl() as g:
            g.leak_attach(lk.pid, probes)
            # Root's session is not nobody's to read or end.
            check(as_nobody(lambda: 0 if _errno(lambda: Genl().leak_detach(lk.pid))
                            == errno.EPERM else 6) == 0, "nobody detached root's session")
            g.leak_detach(lk.pid)


def _errno(fn):
    try:
        fn()
    except NlError as e:
        return e.errno
    return 0


@test
def bad_requests_refused():
    """Missing, mistyped, out-of-range and unknown attributes; no session."""
    with Leaker() as lk, Genl() as g:
        path, off, api = libc_probes(lk.pid, ("malloc",))[0]
        tg = attr_u32(nl.ATTR_TGID, lk.pid)

        def req(payload):
            return lambda: g.request(nl.CMD_LEAK_ATTACH, payload)

        def probes(*nests):
            return attr_nest(nl.ATTR_LEAK_PROBES, *nests)

        good = nl.probe_nest(path, off, api)
        P = nl.PROBE_ATTR_PROBE
        cases = [
            ("no TGID", errno.EINVAL, probes(good)),
            ("no probes", errno.EINVAL, tg),
            ("empty probes", errno.EINVAL, tg + probes()),
            ("TGID 0", errno.ERANGE, attr_u32(nl.ATTR_TGID, 0) + probes(good)),
            ("API 0", errno.ERANGE, tg + probes(nl.probe_nest(path, off, 0))),
            ("API too big", errno.ERANGE,
             tg + probes(nl.probe_nest(path, off, len(nl.LEAK_APIS) + 1))),
            ("OFFSET as u32", errno.ERANGE, tg + probes(attr_nest(
                P, attr_str(nl.PROBE_ATTR_PATH, path),
                attr_u32(nl.PROBE_ATTR_OFFSET, off), attr_u32(nl.PROBE_ATTR_API, api)))),
            ("PATH not terminated", errno.EINVAL, tg + probes(attr_nest(
                P, attr(nl.PROBE_ATTR_PATH, path.encode()),
                nl.attr_u64(nl.PROBE_ATTR_OFFSET, off), attr_u32(nl.PROBE_ATTR_API, api)))),
            ("PATH too long", errno.ERANGE, tg + probes(nl.probe_nest("/" * 4096, off, api))),
            ("no API", errno.EINVAL, tg + probes(attr_nest(
                P, attr_str(nl.PROBE_ATTR_PATH, path),
                nl.attr_u64(nl.PROBE_ATTR_OFFSET, off)))),
            ("PATH at the list level", errno.EINVAL,
             tg + attr_nest(nl.ATTR_LEAK_PROBES, attr_str(nl.PROBE_ATTR_PATH, path))),
            ("unknown attr in probe", errno.EINVAL, tg + probes(attr_nest(
                P, attr_str(nl.PROBE_ATTR_PATH, path), nl.attr_u64(nl.PROBE_ATTR_OFFSET, off),
                attr_u32(nl.PROBE_ATTR_API, api), attr_u32(9, 1)))),
            ("unknown flag", errno.EINVAL, tg + probes(good) + attr_u32(nl.ATTR_LEAK_FLAGS, 2)),
            ("children and an unknown flag", errno.EINVAL, tg + probes(good) +
             attr_u32(nl.ATTR_LEAK_FLAGS, nl.LEAK_F_CHILDREN | 1 << 31)),
            ("flags as u8", errno.EINVAL, tg + probes(good) + nl.attr_u8(nl.ATTR_LEAK_FLAGS, 1)),
            ("65 probes", errno.E2BIG, tg + probes(*[good] * 65)),
            ("no such process", errno.ESRCH,
             attr_u32(nl.ATTR_TGID, 4 << 20) + probes(good)),
            ("kernel thread", errno.ESRCH, attr_u32(nl.ATTR_TGID, 2) + probes(good)),
            ("no such file", errno.ENOENT, tg + probes(nl.probe_nest("/nonexistent", 0, api))),
            ("directory", errno.EINVAL, tg + probes(nl.probe_nest("/usr", 0, api))),
            ("offset past the end", errno.EINVAL, tg + probes(nl.probe_nest(path, 1 << 40, api))),
        ]
        for what, err, payload in cases:
            # Policy errors: ERANGE or EINVAL depending on the check's kind.
            e = _errno(req(payload))
            ok = e == err or (err in (errno.EINVAL, errno.ERANGE) and
                              e in (errno.EINVAL, errno.ERANGE))
            check(ok, f"{what}: errno {e}, expected {err}")
            expect_error(errno.ENOENT, lambda: g.leak_stats(lk.pid), f"session after {what}")
        for cmd in (nl.CMD_LEAK_DETACH, nl.CMD_LEAK_STATS):
            expect_error(errno.EINVAL, lambda: g.request(cmd, b""), f"cmd {cmd} no TGID")
        expect_error(errno.EINVAL, lambda: g.request(nl.CMD_LEAK_STACKS, b"", dump=True),
                     "stacks without TGID")
        expect_error(errno.ENOENT, lambda: g.leak_stacks(lk.pid), "stacks of untraced")
        g.leak_attach(lk.pid, libc_probes(lk.pid))
        expect_error(errno.EBUSY, lambda: g.leak_attach(lk.pid, libc_probes(lk.pid)),
                     "second attach")
        lk.round()
        check_exact(g, lk.pid, 1)
        g.leak_detach(lk.pid)


@test
def children_flag():
    """LEAK_F_CHILDREN is accepted; leaker forks nothing, so the session is
    the same as without it: exact stacks, no children."""
    with Leaker() as lk, Genl() as g:
        g.leak_attach(lk.pid, libc_probes(lk.pid), flags=nl.LEAK_F_CHILDREN)
        lk.round()
        by_fn = check_exact(g, lk.pid, 1)
        check(all(s["tgid"] == lk.pid for s in by_fn.values()), f"stacks: {by_fn}")
        st = g.leak_stats(lk.pid)
        check(st["children"] == 0 and st["nr_children"] == 0 and
              st["dropped_children"] == 0, f"stats: {st}")
        g.leak_detach(lk.pid)


@test
def target_exits():
    """The target exiting ends its session; another attach works after."""
    with Genl() as g:
        with Leaker() as lk:
            g.leak_attach(lk.pid, libc_probes(lk.pid))
            lk.round()
            lk.stop()
            wait_detached(g, lk.pid)
        with Leaker() as lk:
            lk.p.kill()
            lk.p.wait()
        with Leaker() as lk:
            g.leak_attach(lk.pid, libc_probes(lk.pid))
            lk.round()
            lk.p.kill()   # SIGKILL while attached
            lk.p.wait()
            wait_detached(g, lk.pid)


@test
def target_execs():
    """exec drops the session (the allocator it probed is gone)."""
    with Genl() as g:
        p = subprocess.Popen(["sh", "-c", "read x; exec " + LEAKER],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        time.sleep(0.2)
        g.leak_attach(p.pid, libc_probes(p.pid))
        p.stdin.write(b"go\n")
        p.stdin.flush()
        check(p.stdout.readline() == b"ready\n", "exec'd leaker did not start")
        wait_detached(g, p.pid)
        p.kill()
        p.wait()


@test
def tracer_socket_closed():
    """Closing the attaching socket, or SIGKILL of the tracer, removes the
    probes; the target runs on and can be attached again."""
    with Leaker() as lk:
        g = Genl()
        g.leak_attach(lk.pid, libc_probes(lk.pid))
        lk.round()
        g.close()
        with Genl() as g2:
            wait_detached(g2, lk.pid)
            check(not probes_in(lk.pid), "breakpoint left after close")
            lk.round()
            g2.leak_attach(lk.pid, libc_probes(lk.pid))
            lk.round()
            check_exact(g2, lk.pid, 1, unknown=0)
        # g2 closed: a new attach right away (the old session may still be
        # queued for removal) must work.
        with Genl() as g3:
            g3.leak_attach(lk.pid, libc_probes(lk.pid))
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            with Genl() as g4:
                g4.leak_attach(lk.pid, libc_probes(lk.pid))
                os.write(w, b"x")
                time.sleep(3600)
            os._exit(0)
        check(os.read(r, 1) == b"x", "tracer child did not attach")
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        with Genl() as g5:
            wait_detached(g5, lk.pid)
        check(not probes_in(lk.pid), "breakpoint left after tracer SIGKILL")
        lk.round()
        lk.stop()
        check(lk.p.returncode == 0, f"leaker exit {lk.p.returncode}")


@test
def rmmod_while_attached():
    """Unload with a live session: probes removed, target unharmed."""
    with Leaker() as lk:
        g = Genl()
        g.leak_attach(lk.pid, libc_probes(lk.pid))
        lk.round()
        r = subprocess.run(["rmmod", "memtrack"], capture_output=True, text=True)
        check(r.returncode == 0, f"rmmod: {r.stderr}")
        try:
            check(not probes_in(lk.pid), "breakpoint left after rmmod")
            lk.round()
            g.close()
        finally:
            r = subprocess.run(["insmod", MODULE], capture_output=True, text=True)
            check(r.returncode == 0, f"insmod: {r.stderr}")
        with Genl() as g2:
            g2.leak_attach(lk.pid, libc_probes(lk.pid))
            lk.round()
            check_exact(g2, lk.pid, 1, unknown=0)
        lk.stop()


if __name__ == "__main__":
    sys.exit(run_tests(sys.argv))
