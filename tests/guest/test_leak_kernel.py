#!/usr/bin/env python3
"""The kernel half of the leak tracer (LEAK_ATTACH/ARM/STACKS/STATS/BLOCKS/
DETACH): exact outstanding blocks per call stack of tests/progs/leaker,
permission, refused bad requests, probes put in after the tables
(LEAK_ARM), and every way a session ends (detach, target exit or exec:
tables kept for a last report, tracer socket closed or killed, expiry,
rmmod).

Runs inside the VM with the module loaded:
    tests/vm/run -- python3 tests/guest/test_leak_kernel.py
"""
import array
import contextlib
import functools
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import *  # noqa: E402,F403
from nl import Genl, NlError, API, attr, attr_u32, attr_str, attr_nest  # noqa: E402
import nl  # noqa: E402
import uapi  # noqa: E402
import elffacts  # noqa: E402

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
    """PT_LOAD (vaddr, memsz, file offset) of an ELF object."""
    return [(va, memsz, off) for t, off, va, memsz in elffacts.program_headers(path)
            if t == "LOAD"]


def file_offset(path, vaddr):
    for va, memsz, off in load_segments(path):
        if va <= vaddr < va + memsz:
            return vaddr - va + off
    raise TestFailure(f"{vaddr:#x} not in a PT_LOAD of {path}")


def dynsyms(path):
    """Defined dynamic symbols, without version suffixes: name -> vaddr."""
    syms = {}
    for name, value in elffacts.defined_dynsyms(path):
        syms.setdefault(name.split("@")[0], value)
    return syms


def libc_probes(pid, apis=("malloc", "calloc", "realloc", "free")):
    path, _ = mapped_path(pid, "libc.so")
    syms = dynsyms(path)
    return [(path, file_offset(path, syms[a]), API[a]) for a in apis]


@functools.lru_cache(maxsize=None)
def text_symbols(path):
    """{function: (vaddr, size)} of an object's text (nm -S)."""
    out = subprocess.run(["nm", "-S", path], capture_output=True, text=True,
                         check=True).stdout
    funcs = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in ("T", "t"):
            funcs[f[3]] = (int(f[0], 16), int(f[1], 16))
    return funcs


def leaker_functions(pid):
    """Runtime [start, end) of leaker's functions (PIE: load base + nm -S)."""
    path, base = mapped_path(pid, "leaker")
    return {fn: (base + va, base + va + size)
            for fn, (va, size) in text_symbols(path).items()}


def function_of(funcs, addr):
    for name, (lo, hi) in funcs.items():
        if lo <= addr < hi:
            return name
    return None


FREE_APIS = (API["free"], API["delete"], API["delete_array"])


def stacks_by_function(g, pid, frees=False, **kw):
    """{function holding frames[0]: stack}; every stack must be in leaker.
    frees: the freeing stacks of mismatched frees instead of the others."""
    funcs = leaker_functions(pid)
    out = {}
    for s in g.leak_stacks(pid, **kw):
        if (s["api"] in FREE_APIS) != frees:
            continue
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
    funcs = leaker_functions(pid)
    check(set(by_fn) == set(EXPECTED),
          f"leaking functions {sorted(by_fn)}, expected {sorted(EXPECTED)}")
    for fn, (api, blocks, nbytes) in EXPECTED.items():
        s = by_fn[fn]
        got = (s["api"], s["blocks"], s["bytes"])
        want = (API[api], blocks * rounds, nbytes * rounds)
        check(got == want, f"{fn}: (api, blocks, bytes) {got}, expected {want}")
        # frames[1]: leaker's main called each of them (frame-pointer walk).
        check(s["nr_frames"] >= 2 and
              function_of(funcs, s["frames"][1]) == "main",
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
def leak_blocks_dump():
    """LEAK_BLOCKS: after one and two rounds exactly the outstanding blocks,
    many per message, grouping into the LEAK_STACKS figures (count, bytes,
    api per stack id); refused without TGID, for an untraced process and
    for another user."""
    with Leaker() as lk, Genl() as g:
        g.leak_attach(lk.pid, libc_probes(lk.pid))
        for rounds in (1, 2):
            lk.round()
            by_fn = check_exact(g, lk.pid, rounds)
            blocks, nmsgs = g.leak_blocks(lk.pid, raw=True)
            want = sum(e[1] for e in EXPECTED.values()) * rounds
            check(len(blocks) == want, f"{len(blocks)} blocks, expected {want}")
            check(nmsgs == 1, f"{want} blocks in {nmsgs} messages")
            check(len({b["addr"] for b in blocks}) == len(blocks), "duplicate addresses")
            now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            check(all(0 < b["time_ns"] <= now for b in blocks), "block times")
            per = {}
            for b in blocks:
                n, nbytes, apis = per.get(b["stack_id"], (0, 0, set()))
                per[b["stack_id"]] = (n + 1, nbytes + b["size"], apis | {b["api"]})
            stacks = {s["stack_id"]: (s["blocks"], s["bytes"], {s["api"]})
                      for s in by_fn.values()}
            check(per == stacks, f"blocks per stack {per}, LEAK_STACKS {stacks}")
            # leak_a: 10 blocks of 100 bytes per round, each one
            a = [b["size"] for b in blocks if b["stack_id"] == by_fn["leak_a"]["stack_id"]]
            check(a == [100] * 10 * rounds, f"leak_a blocks {a}")
        expect_error(errno.EINVAL, lambda: g.request(nl.CMD_LEAK_BLOCKS, b"", dump=True),
                     "LEAK_BLOCKS without TGID")
        expect_error(errno.ENOENT, lambda: g.leak_blocks(os.getpid()),
                     "LEAK_BLOCKS of an untraced process")
        check(as_nobody(lambda: 0 if _errno(lambda: Genl().leak_blocks(lk.pid))
                        == errno.EPERM else 7) == 0, "nobody read root's blocks")
        g.leak_detach(lk.pid)
        expect_error(errno.ENOENT, lambda: g.leak_blocks(lk.pid), "LEAK_BLOCKS after detach")
        lk.stop()


@test
def mismatched_frees():
    """free() probed as operator delete: churn's 4 frees of malloc'd blocks
    are mismatched, on the stack that allocated them, which names the
    freeing stack (api delete, frames[0] in churn, no blocks, dumped only
    for this); the free of a block never seen allocated is unknown, not
    mismatched."""
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
        check(all(s["mismatched"] == 0 and s["free_api"] == 0 and s["free_stack_id"] == 0
                  for f, s in by_fn.items() if f != "churn"), f"stacks: {by_fn}")
        frees = stacks_by_function(g, lk.pid, frees=True)
        check(list(frees) == ["churn"], f"freeing stacks: {frees}")
        fs, churn = frees["churn"], by_fn["churn"]
        check(churn["free_api"] == API["delete"] and churn["free_stack_id"] == fs["stack_id"],
              f"churn: {churn}")
        check(fs["api"] == API["delete"] and fs["blocks"] == 0 and fs["bytes"] == 0 and
              fs["mismatched"] == 0 and fs["free_stack_id"] == 0 and fs["nr_frames"] >= 2 and
              function_of(leaker_functions(lk.pid), fs["frames"][1]) == "main",
              f"freeing stack: {fs}")
        g.leak_detach(lk.pid)


@test
def cxx_delete_releases_once():
    """Attached with memtrack-leak's own probe set (libc and libstdc++, each
    at its entry + skip), cpp_cases' four deletes count as four frees: the
    free() each delete ends in (the sized aligned one through the aligned
    delete) is neither a second free nor one of a block never seen; one of
    them is the new[] freed by delete; 13 allocations, 9 of them leaked."""
    fx = subprocess.Popen([os.path.join(ROOT, "build", "tests", "leaks", "fp", "cpp_cases")],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        check(fx.stdout.readline().strip() == "ready", "cpp_cases did not start")
        out = subprocess.run([os.path.join(ROOT, "build", "tests", "user", "leak_probes"),
                              str(fx.pid)], capture_output=True, text=True, check=True).stdout
        probes = [(f[0], int(f[1], 16) + int(f[4]), API[f[2].replace("[]", "_array")])
                  for f in map(str.split, out.splitlines())]
        check(any("libstdc++" in p[0] for p in probes), f"no libstdc++ probe: {out}")
        with Genl() as g:
            g.leak_attach(fx.pid, probes)
            fx.stdin.write("go\n")
            fx.stdin.flush()
            check(fx.stdout.readline().strip() == "done", "cpp_cases did not finish")
            st = g.leak_stats(fx.pid)
            g.leak_detach(fx.pid)
        got = {k: st[k] for k in ("allocs", "frees", "unknown_frees", "mismatched_frees",
                                  "outstanding_blocks")}
        check(got == {"allocs": 13, "frees": 4, "unknown_frees": 0, "mismatched_frees": 1,
                      "outstanding_blocks": 9}, f"stats: {got}")
    finally:
        fx.stdin.write("go\n")
        fx.stdin.flush()
        fx.wait(timeout=30)


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


@test
def attach_permission_by_capability():
    """Attaching to another user's process, and reading or ending a session
    another user made: allowed exactly with CAP_SYS_PTRACE (ptrace's rule),
    EPERM otherwise with no session left behind: tried as nobody, nobody
    with NET_ADMIN, SYS_ADMIN or SYS_PTRACE alone, root without each, root
    (a nobody target for root, a root one for nobody)."""
    with Leaker() as root_lk, Leaker(user=NOBODY) as nobody_lk:
        probes = {lk.pid: libc_probes(lk.pid) for lk in (root_lk, nobody_lk)}
        for name, uid, caps in identities():
            other = nobody_lk if uid == 0 else root_lk
            ptrace = CAP_SYS_PTRACE in caps

            def attach_other():
                with Genl() as g:
                    err = _errno(lambda: g.leak_attach(other.pid, probes[other.pid]))
                    if not err:
                        other.round()
                        blocks = g.leak_stats(other.pid)["outstanding_blocks"]
                        g.leak_detach(other.pid)
                        return err, blocks
                    return err, None
            got = as_identity(attach_other, uid, caps)
            want = (0, 22) if ptrace else (errno.EPERM, None)
            check(got == want, f"{name} attaching to uid {NOBODY if uid == 0 else 0}'s "
                  f"process: {got}, want {want}")
            with Genl() as g:
                expect_error(errno.ENOENT, lambda: g.leak_stats(other.pid),
                             f"a session left after {name}'s attach")
                # a session of the target's own user, then this identity
                g.leak_attach(root_lk.pid, probes[root_lk.pid])
                try:
                    got = as_identity(lambda: (_errno(lambda: Genl().leak_stats(root_lk.pid)),
                                               _errno(lambda: Genl().leak_detach(root_lk.pid))),
                                      uid, caps)
                finally:
                    gone = _errno(lambda: g.leak_detach(root_lk.pid))
                own = uid == 0 or ptrace
                want = (0, 0) if own else (errno.EPERM, errno.EPERM)
                check(got == want, f"{name} on root's session: {got}, want {want}")
                check(gone == (errno.ENOENT if own else 0),
                      f"{name}: root's own detach after it: {os.strerror(gone)}")


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
            ("unknown flag", errno.EINVAL, tg + probes(good) + attr_u32(nl.ATTR_LEAK_FLAGS, 4)),
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
        for cmd in (nl.CMD_LEAK_DETACH, nl.CMD_LEAK_STATS, nl.CMD_LEAK_ARM):
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



# ---- LEAK_UNWIND ---------------------------------------------------------------------

CMD_LEAK_UNWIND, ATTR_LEAK_UNWIND = nl.CMD_LEAK_UNWIND, nl.ATTR_LEAK_UNWIND
_UW_ATTR = uapi.enum("memtrack_unwind_attr")
(UW_START, UW_END, UW_BIAS, UW_NR_ROWS, UW_FIRST_ROW, UW_ROWS) = (
    _UW_ATTR["MEMTRACK_UNWIND_ATTR_" + n]
    for n in ("START", "END", "BIAS", "NR_ROWS", "FIRST_ROW", "ROWS"))
_UW_CFA = uapi.enum("memtrack_unwind_cfa")
UW_NONE, UW_SP, UW_BP, UW_OUTERMOST, UW_UNKNOWN = (
    _UW_CFA["MEMTRACK_UNWIND_" + n]
    for n in ("NONE", "CFA_SP", "CFA_BP", "OUTERMOST", "UNKNOWN"))
UW_ROW = uapi.layout("memtrack_unwind_row").struct
UW_MAX_CHUNK = uapi.define("MEMTRACK_UNWIND_MAX_CHUNK")
UW_MAX_ROWS = uapi.define("MEMTRACK_UNWIND_MAX_ROWS")
UW_MAX_BYTES = uapi.define("MEMTRACK_UNWIND_MAX_BYTES")


def uw_rows(*rows):
    """rows: (addr, cfa kind[, cfa_off, bp_off, pad])."""
    out = b""
    for r in rows:
        addr, kind, cfa_off, bp_off, pad = tuple(r) + (0, 0, 0)[len(r) - 2:]
        out += UW_ROW.pack(addr, cfa_off, bp_off, kind, pad)
    return out


def uw_msg(tgid, start, end, bias, rows, nr_rows=None, first=0, drop=()):
    """A LEAK_UNWIND payload; drop: nested attributes to leave out."""
    nr = len(rows) // UW_ROW.size if nr_rows is None else nr_rows
    parts = {UW_START: nl.attr_u64(UW_START, start), UW_END: nl.attr_u64(UW_END, end),
             UW_BIAS: nl.attr_u64(UW_BIAS, bias), UW_NR_ROWS: attr_u32(UW_NR_ROWS, nr),
             UW_FIRST_ROW: attr_u32(UW_FIRST_ROW, first), UW_ROWS: attr(UW_ROWS, rows)}
    p = attr_u32(nl.ATTR_TGID, tgid) if tgid else b""
    return p + attr_nest(ATTR_LEAK_UNWIND, *(v for k, v in parts.items() if k not in drop))


def leaker_text(pid):
    """(start, end, bias, vaddr start, vaddr end) of leaker's code mapping."""
    path, _ = mapped_path(pid, "leaker")
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            p = line.split()
            if p[-1] == path and p[1][2] == "x":
                start, end = (int(x, 16) for x in p[0].split("-"))
                off = int(p[2], 16)
    va, memsz, foff = [s for s in load_segments(path) if s[2] <= off < s[2] + s[1]][0]
    bias = start - off - (va - foff)
    return start, end, bias, va, va + memsz


def blocks_by_depth(g, pid):
    """{"1" or "more" frames: {function of frames[0]: blocks}}."""
    funcs = leaker_functions(pid)
    out = {}
    for s in g.leak_stacks(pid):
        d = out.setdefault("1" if s["nr_frames"] == 1 else "more", {})
        fn = function_of(funcs, s["frames"][0])
        d[fn] = d.get(fn, 0) + s["blocks"]
    return out


@test
def unwind_tables():
    """LEAK_UNWIND: bad tables refused (policy, rows, ranges, chunk order, pid,
    owner, memory bound) with nothing installed; a table installed takes
    effect (an outermost rule stops every stack at frames[0]); a new table
    over the same mapping replaces it (no rule: frame pointers again)."""
    with Leaker() as lk, Genl() as g:
        g.leak_attach(lk.pid, libc_probes(lk.pid))
        start, end, bias, va, vend = leaker_text(lk.pid)
        # Valid except for the defect named: installed, it would cut stacks.
        stop_rows = uw_rows((va, UW_OUTERMOST), (vend, UW_NONE))

        def req(payload):
            return lambda: g.request(CMD_LEAK_UNWIND, payload)

        def m(rows=stop_rows, **kw):
            return uw_msg(kw.pop("tgid", lk.pid), kw.pop("start", start),
                          kw.pop("end", end), kw.pop("bias", bias), rows, **kw)
        cases = [
            ("no TGID", errno.EINVAL, m(tgid=0)),
            ("no LEAK_UNWIND", errno.EINVAL, attr_u32(nl.ATTR_TGID, lk.pid)),
            ("TGID 0", errno.ERANGE, attr_u32(nl.ATTR_TGID, 0) + m(tgid=0)),
        ] + [(f"no attribute {a}", errno.EINVAL, m(drop=(a,))) for a in range(1, 7)] + [
            ("START as u32", errno.ERANGE, attr_u32(nl.ATTR_TGID, lk.pid) + attr_nest(
                ATTR_LEAK_UNWIND, attr_u32(UW_START, 0), nl.attr_u64(UW_END, end),
                nl.attr_u64(UW_BIAS, bias), attr_u32(UW_NR_ROWS, 2),
                attr_u32(UW_FIRST_ROW, 0), attr(UW_ROWS, stop_rows))),
            ("unknown nested attribute", errno.EINVAL,
             attr_u32(nl.ATTR_TGID, lk.pid) + attr_nest(
                 ATTR_LEAK_UNWIND, nl.attr_u64(UW_START, start), nl.attr_u64(UW_END, end),
                 nl.attr_u64(UW_BIAS, bias), attr_u32(UW_NR_ROWS, 2),
                 attr_u32(UW_FIRST_ROW, 0), attr(UW_ROWS, stop_rows), attr_u32(9, 0))),
            ("ROWS not whole rows", errno.EINVAL, m(stop_rows + b"\0")),
            ("ROWS empty", errno.EINVAL, m(b"", nr_rows=2)),
            ("chunk over the maximum", errno.ERANGE,
             m(uw_rows(*[(i, UW_NONE) for i in range(UW_MAX_CHUNK + 1)]))),
            ("NR_ROWS 0", errno.ERANGE, m(nr_rows=0)),
            ("NR_ROWS over the maximum", errno.ERANGE, m(nr_rows=UW_MAX_ROWS + 1)),
            ("rows unsorted", errno.EINVAL,
             m(uw_rows((va + 16, UW_OUTERMOST), (va, UW_OUTERMOST), (vend, UW_NONE)))),
            ("rows at the same address", errno.EINVAL,
             m(uw_rows((va, UW_OUTERMOST), (va, UW_OUTERMOST), (vend, UW_NONE)))),
            ("unknown rule", errno.EINVAL, m(uw_rows((va, 9), (vend, UW_NONE)))),
            ("nonzero pad", errno.EINVAL, m(uw_rows((va, UW_OUTERMOST, 0, 0, 1), (vend, UW_NONE)))),
            ("CFA below the return address", errno.EINVAL,
             m(uw_rows((va, UW_SP, 4), (vend, UW_NONE)))),
            ("RBP saved over the return address", errno.EINVAL,
             m(uw_rows((va, UW_SP, 16, -8), (vend, UW_NONE)))),
            ("offsets on a rule without", errno.EINVAL,
             m(uw_rows((va, UW_OUTERMOST, 8), (vend, UW_NONE)))),
            ("empty range", errno.EINVAL, m(end=start)),
            ("unaligned start", errno.EINVAL, m(start=start + 1)),
            ("bias above start", errno.EINVAL, m(bias=start + 4096)),
            ("end above user space", errno.EINVAL, m(end=1 << 63)),
            ("chunk without a first chunk", errno.EINVAL, m(first=2, nr_rows=4)),
            ("more rows than NR_ROWS", errno.EINVAL, m(nr_rows=1)),
            ("untraced process", errno.ENOENT, m(tgid=os.getpid())),
            ("no such process", errno.ENOENT, m(tgid=4 << 20)),
        ]
        for what, err, payload in cases:
            e = _errno(req(payload))
            ok = e == err or (err in (errno.EINVAL, errno.ERANGE) and
                              e in (errno.EINVAL, errno.ERANGE))
            check(ok, f"{what}: errno {e}, expected {err}")
        # A table whose second chunk breaks the order is dropped whole.
        check(_errno(req(m(stop_rows[:UW_ROW.size], nr_rows=2))) == 0, "first chunk")
        e = _errno(req(m(stop_rows[UW_ROW.size:], nr_rows=2, first=0 + 3)))
        check(e == errno.EINVAL, f"chunk out of order: errno {e}")
        e = _errno(req(m(stop_rows[UW_ROW.size:], nr_rows=2, first=1)))
        check(e == errno.EINVAL, f"chunk after a dropped table: errno {e}")
        # Only the session's owner sends tables.
        check(as_nobody(lambda: 0 if _errno(lambda: Genl().request(CMD_LEAK_UNWIND, m()))
                        == errno.EPERM else 6) == 0, "nobody sent a table to root's session")
        # The memory bound: as many tables of the maximum as fit, one more
        # does not.
        fit = UW_MAX_BYTES // (UW_ROW.size * UW_MAX_ROWS + 64)
        check(fit >= 1, f"{UW_MAX_BYTES} bytes hold no table of {UW_MAX_ROWS} rows")
        chunk = array.array("I", bytes(UW_ROW.size * UW_MAX_CHUNK))
        for t in range(fit + 1):
            base = (t + 1) << 32
            for first in range(0, UW_MAX_ROWS, UW_MAX_CHUNK):
                chunk[0::3] = array.array("I", range(first, first + UW_MAX_CHUNK))
                e = _errno(req(uw_msg(lk.pid, base, base + (1 << 30), base, chunk.tobytes(),
                                      nr_rows=UW_MAX_ROWS, first=first)))
                if e:
                    break
            check(e == (0 if t < fit else errno.ENOSPC),
                  f"table {t} of {UW_MAX_ROWS} rows: errno {e}")
        lk.round()
        check_exact(g, lk.pid, 1)
        # Installed: leaker's code is "outermost", so stacks end at frames[0].
        g.request(CMD_LEAK_UNWIND, m())
        lk.round()
        one = {f: e[1] for f, e in EXPECTED.items()}
        got = blocks_by_depth(g, lk.pid)
        check(got == {"1": one, "more": one}, f"after the outermost table: {got}")
        # Replaced by a table without rules: frame pointers again, old stacks.
        g.request(CMD_LEAK_UNWIND, m(uw_rows((va, UW_NONE), (vend, UW_NONE))))
        lk.round()
        got = blocks_by_depth(g, lk.pid)
        check(got == {"1": one, "more": {f: 2 * n for f, n in one.items()}},
              f"after the table without rules: {got}")
        g.leak_detach(lk.pid)


UW_EH_FRAME_HDR = _UW_ATTR["MEMTRACK_UNWIND_ATTR_EH_FRAME_HDR"]


def eh_frame_hdr_vaddr(path):
    """PT_GNU_EH_FRAME's vaddr of an ELF object, or None."""
    for t, _, va, _ in elffacts.program_headers(path):
        if t == "GNU_EH_FRAME":
            return va
    return None


def exec_maps_with_hdr(pid):
    """[(path, start, end, bias, .eh_frame_hdr address)] of pid's executable
    file mappings, from /proc/PID/maps and each object's program headers."""
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            p = line.split()
            if len(p) < 6 or p[1][2] != "x" or not p[5].startswith("/"):
                continue
            start, end = (int(x, 16) for x in p[0].split("-"))
            off, path = int(p[2], 16), p[5]
            va, _, foff = [s for s in load_segments(path) if s[2] <= off < s[2] + s[1]][0]
            bias = start - off - (va - foff)
            hdr = eh_frame_hdr_vaddr(path)
            if hdr is not None:
                out.append((path, start, end, bias, bias + hdr))
    return out


def hdr_msg(tgid, start, end, bias, hdr, *extra, hdr_attr=None):
    return attr_u32(nl.ATTR_TGID, tgid) + attr_nest(
        ATTR_LEAK_UNWIND, nl.attr_u64(UW_START, start), nl.attr_u64(UW_END, end),
        nl.attr_u64(UW_BIAS, bias),
        hdr_attr if hdr_attr is not None else nl.attr_u64(UW_EH_FRAME_HDR, hdr), *extra)


@test
def unwind_eh_frame_hdr():
    """LEAK_UNWIND with EH_FRAME_HDR: bad ones refused (with rows, 0, above
    user space, mistyped) with nothing installed; every object's header
    installed and its CFI pages dropped from leaker's page tables, the next
    round's stacks go from each leaking function through main and libc
    (built without frame pointers) to leaker's _start, with the exact
    counts, after faulting the CFI in (unwind_faults > 0); a second round
    adds to the same stacks, with no page to fault in again."""
    with Leaker() as lk, Genl() as g:
        g.leak_attach(lk.pid, libc_probes(lk.pid))
        maps = exec_maps_with_hdr(lk.pid)
        mine = [m for m in maps if os.path.basename(m[0]).startswith("leaker")]
        libc = [m for m in maps if os.path.basename(m[0]).startswith("libc.so")]
        check(mine and libc, f"executable mappings with an .eh_frame_hdr: {maps}")
        _, start, end, bias, hdr = mine[0]
        rows = uw_rows((0, UW_OUTERMOST), (16, UW_NONE))
        cases = [
            ("EH_FRAME_HDR with ROWS", errno.EINVAL,
             hdr_msg(lk.pid, start, end, bias, hdr, attr_u32(UW_NR_ROWS, 2),
                     attr_u32(UW_FIRST_ROW, 0), attr(UW_ROWS, rows))),
            ("EH_FRAME_HDR with NR_ROWS", errno.EINVAL,
             hdr_msg(lk.pid, start, end, bias, hdr, attr_u32(UW_NR_ROWS, 2))),
            ("EH_FRAME_HDR 0", errno.EINVAL, hdr_msg(lk.pid, start, end, bias, 0)),
            ("EH_FRAME_HDR above user space", errno.EINVAL,
             hdr_msg(lk.pid, start, end, bias, 1 << 63)),
            ("EH_FRAME_HDR as u32", errno.ERANGE,
             hdr_msg(lk.pid, start, end, bias, 0, hdr_attr=attr_u32(UW_EH_FRAME_HDR, 1))),
            ("EH_FRAME_HDR on an empty range", errno.EINVAL,
             hdr_msg(lk.pid, start, start, bias, hdr)),
            ("EH_FRAME_HDR of an untraced process", errno.ENOENT,
             hdr_msg(os.getpid(), start, end, bias, hdr)),
        ]
        for what, err, payload in cases:
            e = _errno(lambda: g.request(CMD_LEAK_UNWIND, payload))
            ok = e == err or (err in (errno.EINVAL, errno.ERANGE) and
                              e in (errno.EINVAL, errno.ERANGE))
            check(ok, f"{what}: errno {e}, expected {err}")
        check(as_nobody(lambda: 0 if _errno(lambda: Genl().request(
            CMD_LEAK_UNWIND, hdr_msg(lk.pid, start, end, bias, hdr))) == errno.EPERM
            else 6) == 0, "nobody gave a header to root's session")
        # Nothing installed: frame pointers, as without tables.
        lk.round()
        check_exact(g, lk.pid, 1)
        before = {s["stack_id"] for s in g.leak_stacks(lk.pid)}
        for _, mstart, mend, mbias, mhdr in maps:
            g.request(CMD_LEAK_UNWIND, hdr_msg(lk.pid, mstart, mend, mbias, mhdr))
        lk.p.stdin.write(b"drop\n")
        lk.p.stdin.flush()
        line = lk.p.stdout.readline()
        check(line == b"dropped\n", f"leaker drop: {line!r}")
        check(g.leak_stats(lk.pid)["unwind_faults"] == 0, "faults before any walk")
        lk.round()
        faults = g.leak_stats(lk.pid)["unwind_faults"]
        check(faults > 0, "no CFI page faulted in after the drop")
        funcs = leaker_functions(lk.pid)
        _, lstart, lend, _, _ = libc[0]

        def whole():
            out = {}
            for s in g.leak_stacks(lk.pid):
                if s["stack_id"] in before:
                    continue
                fr = s["frames"]
                fn = function_of(funcs, fr[0])
                check(fn in EXPECTED and s["nr_frames"] >= 4 and
                      function_of(funcs, fr[1]) == "main" and
                      lstart <= fr[2] < lend and
                      function_of(funcs, fr[-1]) == "_start",
                      f"stack {s['stack_id']} not from a leaking function through "
                      f"main and libc to _start: {[hex(x) for x in fr]}")
                check(fn not in out, f"{fn}: two stacks")
                out[fn] = (s["stack_id"], s["api"], s["blocks"], s["bytes"])
            return out
        got = whole()
        want = {fn: (API[api], b, n) for fn, (api, b, n) in EXPECTED.items()}
        check({fn: v[1:] for fn, v in got.items()} == want,
              f"stacks after the drop: {got}, expected {want}")
        lk.round()
        again = whole()
        want2 = {fn: (got[fn][0], API[api], 2 * b, 2 * n)
                 for fn, (api, b, n) in EXPECTED.items()}
        check(again == want2, f"second round: {again}, expected {want2}")
        check(g.leak_stats(lk.pid)["unwind_faults"] == faults,
              "pages faulted in again in the second round")
        g.leak_detach(lk.pid)


@test
def unwind_eh_frame_garbage():
    """The module reads .eh_frame_hdr and .eh_frame in the target, which may
    hold anything: 40 times leaker overwrites its own in its memory (random
    bytes; random bits flipped; a valid header with random FDE counts over a
    random table; random FDEs and CIEs behind the real table: leaker.c's
    garble()) and the header is sent again (no rule memoized from before),
    then a round: no fault, loop or warning (dmesg), leaker runs on, every
    block of every round is counted, per API and leaking function
    (frames[0], read at sp), exactly."""
    with Leaker() as lk, Genl() as g:
        g.leak_attach(lk.pid, libc_probes(lk.pid))
        maps = exec_maps_with_hdr(lk.pid)
        for _, mstart, mend, mbias, mhdr in maps:
            g.request(CMD_LEAK_UNWIND, hdr_msg(lk.pid, mstart, mend, mbias, mhdr))
        _, start, end, bias, hdr = [m for m in maps
                                    if os.path.basename(m[0]).startswith("leaker")][0]
        rounds = 41
        lk.round()
        for i in range(rounds - 1):
            lk.p.stdin.write(f"garbage {i}\n".encode())
            lk.p.stdin.flush()
            line = lk.p.stdout.readline()
            check(line == b"garbled\n", f"leaker garbage {i}: {line!r}")
            g.request(CMD_LEAK_UNWIND, hdr_msg(lk.pid, start, end, bias, hdr))
            lk.round()
        funcs = leaker_functions(lk.pid)
        got = {}
        for st in g.leak_stacks(lk.pid):
            fn = function_of(funcs, st["frames"][0])
            api, b, n = got.get(fn, (st["api"], 0, 0))
            check(api == st["api"], f"{fn}: two APIs")
            got[fn] = (api, b + st["blocks"], n + st["bytes"])
        want = {fn: (API[api], rounds * b, rounds * n) for fn, (api, b, n) in EXPECTED.items()}
        check(got == want, f"after {rounds} rounds: {got}, expected {want}")
        check(lk.p.poll() is None, "leaker died")
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


def stacks_of(g, pid):
    """{stack_id: (api, blocks, bytes, frames)} of pid's session."""
    return {s["stack_id"]: (s["api"], s["blocks"], s["bytes"], tuple(s["frames"]))
            for s in g.leak_stacks(pid)}


def until_ended(g, pid, why, timeout=10):
    """Until pid's session says it ended (why: MEMTRACK_LEAK_ENDED_*)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        st = g.leak_stats(pid)
        if st["ended"]:
            check(st["ended"] == why, f"ended {st['ended']}, expected {why}")
            return st
        time.sleep(0.05)
    raise TestFailure(f"session of {pid} not ended after {timeout}s")


@test
def target_exits():
    """The target exiting ends its session but keeps its tables as they
    were (stacks, blocks, stats) until the tracer detaches; the same after
    SIGKILL; a new process is attached as usual after."""
    with Genl() as g:
        with Leaker() as lk:
            g.leak_attach(lk.pid, libc_probes(lk.pid))
            lk.round()
            before, st0 = stacks_of(g, lk.pid), g.leak_stats(lk.pid)
            check(st0["ended"] == 0, f"stats: {st0}")
            lk.stop()
            st = until_ended(g, lk.pid, nl.LEAK_ENDED_EXIT)
            check(stacks_of(g, lk.pid) == before, "the tables changed at the exit")
            check({k: st[k] for k in ("outstanding_blocks", "outstanding_bytes")} ==
                  {k: st0[k] for k in ("outstanding_blocks", "outstanding_bytes")},
                  f"stats {st0} at the exit {st}")
            check(len(g.leak_blocks(lk.pid)) == st0["outstanding_blocks"], "blocks dump")
            g.leak_detach(lk.pid)
            expect_error(errno.ENOENT, lambda: g.leak_stats(lk.pid), "stats after detach")
        with Leaker() as lk:
            g.leak_attach(lk.pid, libc_probes(lk.pid))
            lk.round()
            before = stacks_of(g, lk.pid)
            lk.p.kill()   # SIGKILL while attached
            lk.p.wait()
            until_ended(g, lk.pid, nl.LEAK_ENDED_EXIT)
            check(stacks_of(g, lk.pid) == before, "the tables changed at the SIGKILL")
            g.leak_detach(lk.pid)
        with Leaker() as lk:
            g.leak_attach(lk.pid, libc_probes(lk.pid))
            lk.round()
            check_exact(g, lk.pid, 1)
            g.leak_detach(lk.pid)


@test
def target_execs():
    """exec ends the session (the allocator it probed is gone): the old
    program's tables kept, no breakpoint in the new one, no table taken
    any more (LEAK_UNWIND, LEAK_ARM refused with ESRCH), a new attach
    refused until the tracer detaches (EBUSY); then the new program is
    attached as usual."""
    with Genl() as g:
        p = subprocess.Popen(["sh", "-c", "read x; exec " + LEAKER],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            time.sleep(0.2)
            g.leak_attach(p.pid, libc_probes(p.pid))
            check(probes_in(p.pid), "no breakpoint in sh")
            before = stacks_of(g, p.pid)
            p.stdin.write(b"go\n")
            p.stdin.flush()
            check(p.stdout.readline() == b"ready\n", "exec'd leaker did not start")
            until_ended(g, p.pid, nl.LEAK_ENDED_EXEC)
            after = stacks_of(g, p.pid)
            check(set(before) <= set(after), "stacks of sh lost at the exec")
            check(not probes_in(p.pid), "breakpoint in the exec'd program")
            expect_error(errno.ESRCH, lambda: g.request(nl.CMD_LEAK_UNWIND, uw_msg(
                p.pid, 0x1000, 0x2000, 0, uw_rows((0x1000, UW_NONE)))), "tables after exec")
            expect_error(errno.ESRCH, lambda: g.leak_arm(p.pid), "arm after exec")
            expect_error(errno.EBUSY, lambda: g.leak_attach(p.pid, libc_probes(p.pid)),
                         "attach before the last report is read")
            g.leak_detach(p.pid)
            g.leak_attach(p.pid, libc_probes(p.pid))
            p.stdin.write(b"\n")
            p.stdin.flush()
            check(p.stdout.readline() == b"done\n", "leaker round")
            check_exact(g, p.pid, 1)
            g.leak_detach(p.pid)
        finally:
            p.kill()
            p.wait()


# The keep the expiry test sets (leak_keep_ms, a setting as retention_ms
# is): the same reaper and arithmetic as the default of 60 s, in a sixth of
# the wait.  The default itself is checked by test_core.
KEEP_S = 10


@contextlib.contextmanager
def ended_session(g):
    """A session of g's on a Leaker that did a round and exited: ended, its
    tables kept (the Leaker's pid yielded)."""
    with Leaker() as lk:
        g.leak_attach(lk.pid, libc_probes(lk.pid))
        lk.round()
        lk.stop()
        until_ended(g, lk.pid, nl.LEAK_ENDED_EXIT)
        yield lk.pid


@test
def ended_session_bounds():
    """An ended session is freed when its socket closes, and on its own
    leak_keep_ms after the end if nobody detaches; a keep shortened while a
    session waits applies to it at once."""
    g = Genl()
    with ended_session(g) as pid:
        g.close()
        with Genl() as g2:
            wait_detached(g2, pid)
    saved = read_config()["leak_keep_ms"]
    try:
        set_config("leak_keep_ms", KEEP_S * 1000)
        with Genl() as g, ended_session(g) as pid:
            t0 = time.monotonic()
            time.sleep(KEEP_S - 2)
            check(g.leak_stats(pid)["outstanding_blocks"] > 0,
                  f"ended session gone before {KEEP_S - 2} s")
            wait_detached(g, pid, timeout=30)
            check(time.monotonic() - t0 >= KEEP_S - 2, "expired early")
        # Ended under the default keep, then the keep shortened: the reaper
        # had the end + 60 s in view, and must expire it at end + KEEP_S.
        set_config("leak_keep_ms", saved)
        with Genl() as g, ended_session(g) as pid:
            set_config("leak_keep_ms", KEEP_S * 1000)
            check(g.leak_stats(pid)["outstanding_blocks"] > 0,
                  "ended session gone as the keep changed")
            wait_detached(g, pid, timeout=KEEP_S + 20)
    finally:
        set_config("leak_keep_ms", saved)


@test
def arm_later():
    """LEAK_F_ARM_LATER: no breakpoint and nothing recorded until LEAK_ARM
    (the tracer sends the unwind tables in between); then exact stacks;
    a second LEAK_ARM is refused (EALREADY), LEAK_ARM of an untraced
    process too (ENOENT), and of one that exited before it (ESRCH)."""
    with Leaker() as lk, Genl() as g:
        g.leak_attach(lk.pid, libc_probes(lk.pid), flags=nl.LEAK_F_ARM_LATER)
        check(not probes_in(lk.pid), "breakpoint before LEAK_ARM")
        lk.round()
        st = g.leak_stats(lk.pid)
        check(st["allocs"] == 0 and st["frees"] == 0 and st["nr_probes"] == 0,
              f"recorded before LEAK_ARM: {st}")
        g.leak_arm(lk.pid)
        check(probes_in(lk.pid), "no breakpoint after LEAK_ARM")
        lk.round()
        check_exact(g, lk.pid, 1, unknown=0)
        expect_error(errno.EALREADY, lambda: g.leak_arm(lk.pid), "second arm")
        expect_error(errno.ENOENT, lambda: g.leak_arm(os.getpid()), "arm untraced")
        g.leak_detach(lk.pid)
    with Leaker() as lk, Genl() as g:
        g.leak_attach(lk.pid, libc_probes(lk.pid), flags=nl.LEAK_F_ARM_LATER)
        lk.stop()
        until_ended(g, lk.pid, nl.LEAK_ENDED_EXIT)
        expect_error(errno.ESRCH, lambda: g.leak_arm(lk.pid), "arm after the exit")
        g.leak_detach(lk.pid)


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
