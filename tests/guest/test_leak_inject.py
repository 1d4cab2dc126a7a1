#!/usr/bin/env python3
"""memtrack-leak -p with the injected in-process engine (`--engine inject`,
the default for -p; no module): libmemtrack-preload.so loaded into the
running target with ptrace, the GOT slots of its allocator calls pointed at
the library's hooks until the detach.

The -p tests of test_leak.py, test_leak_tool.py, test_leak_scan.py,
test_leak_fds.py and test_leak_children.py run here with LEAK_ENGINE=inject
(the same fixtures and assertions; they are imported), and these, of the
injection itself:
  - every GOT slot the library takes held what it was bound to before the
    attach, points into the library while attached and holds its old value
    again after the detach; the library stays mapped, its state does not;
  - a second attach reuses the library loaded by the first;
  - 100 attach/detach cycles on a 16-thread malloc/free storm that checks
    every byte it gets back: no error, alive, RSS back within 1 MiB;
  - the tracer SIGKILLed at each step of an attach, and during a session:
    the target runs on, un-hooked (its slots as before, its state
    released, no watchdog) within 1 s;
  - a 64-thread storm is stopped for at most 50 ms (the median of 5
    attaches; on the host only: a VM's emulation times are not the
    machine's);
  - refusals, each leaving the target as it was: seccomp's strict mode, a
    filter that would kill the target on memfd_create, a filter nobody can
    read as nobody, a target nobody may not ptrace, a static program (the
    uprobe engine instead, with a message), a target that exits during the
    attach, bad input;
  - arm64: a thread stopped with live SVE registers keeps them through the
    calls run on it (the frame's SVE record);
  - a filter that only forbids mount: traced; nobody tracing its own
    process: exact; a program dlopen'ing a bare name from its RUNPATH after
    the attach: found as it would be untraced, its leak exact; python3 and
    perl traced mid-run print exactly what they print untraced.

Runs on the host (tests/host/test_leak_inject.sh) and in the VM:
    tests/vm/run -- env LEAK_ENGINE=inject python3 tests/guest/test_leak_inject.py
"""
import contextlib
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

os.environ.setdefault("LEAK_ENGINE", "inject")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import (NOBODY, ROOT, TESTBIN, Workload, check, readline,  # noqa: E402
                   run_tests, test, variant_tests)
import elffacts  # noqa: E402
import leakfx as lfx  # noqa: E402

IN_VM = os.environ.get("MEMTRACK_VM") == "1"
# The -p tests of the memtrack-leak suites, registered here with the
# injected engine (LEAK_ENGINE=inject above).  In the VM, on each kernel,
# what a kernel could change: the fixtures' exact stacks and the tool's
# report loop (the attach: ptrace, memfd, /proc/PID/fd, pidfd); the rest
# (--scan's memcheck comparisons, --fds, -f) is the same user space on
# every kernel and runs on the host (the leak-inject suite), as do the
# tests below marked host_test.
import test_leak  # noqa: E402,F401
import test_leak_tool  # noqa: E402,F401
if not IN_VM:
    import test_leak_scan  # noqa: E402,F401
    import test_leak_fds  # noqa: E402,F401
    import test_leak_children  # noqa: E402,F401


def host_test(fn):
    """A test of the host suite only (see above)."""
    return fn if IN_VM else test(fn)


TOOL = lfx.TOOL
LIB = "/memfd:memtrack-preload"
STATE = "/memfd:memtrack-leak"
STORM = os.path.join(TESTBIN, "mstorm")
CHURN = os.path.join(TESTBIN, "churn")
SANDBOXED = os.path.join(TESTBIN, "sandboxed")
# the relocations of a GOT slot the library takes (a PLT's, a function
# address's), per machine
GOT_RELOCS = {
    "x86_64": ("R_X86_64_JUMP_SLOT", "R_X86_64_GLOB_DAT"),
    "aarch64": ("R_AARCH64_JUMP_SLOT", "R_AARCH64_GLOB_DAT"),
}[os.uname().machine]
# What the injected library hooks for memory (user/preload/hook_table.c).
HOOKED = {"malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign",
          "aligned_alloc", "memalign", "valloc", "pvalloc", "_exit", "_Exit",
          "execve", "execv", "execvp", "execvpe", "fexecve", "execveat", "execl",
          "execlp", "execle", "dlopen", "dlmopen", "dlclose"}
HOOKED_CXX = re.compile(r"^_Z(nw|na|dl|da)[mP]")


def one_cpu():
    """A workload's CPUs: the last one it may run on (all of them on a
    one-CPU machine).  A storm that should stress the tracer's stop and
    release, not starve it: its threads still run and are preempted at
    any point of an allocation, beside the tool on the other CPUs; on all
    of them the tool ran at about a tenth of a CPU (a 16-thread storm,
    an attach/detach cycle 0.7 s for 0.09 s of CPU on the host), and the
    storm took the other lanes' CPUs of make check with it."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) > 1:
        os.sched_setaffinity(0, {cpus[-1]})


class Proc(Workload):
    """A program that says "ready" first, stdin and stdout piped."""

    def __init__(self, argv, **kw):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, **kw)
        self.pid = self.p.pid
        line = readline(self.p.stdout)
        check(line.strip() == "ready", f"{argv[0]} did not start: {line!r}")

    def say(self, line="go"):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def ask(self, line="stat"):
        self.say(line)
        return readline(self.p.stdout).strip()

    def close(self, timeout=60):
        if self.p.poll() is None:
            self.p.stdin.close()
        out = self.p.stdout.read()
        self.p.wait(timeout=timeout)
        return out


def maps(pid):
    with open(f"/proc/{pid}/maps") as f:
        return [ln.split(None, 5) for ln in f]


def ranges(pid, path):
    """[(lo, hi)] of pid's mappings of path (as maps names it)."""
    out = []
    for m in maps(pid):
        if len(m) == 6 and m[5].strip().replace(" (deleted)", "") == path:
            lo, hi = (int(x, 16) for x in m[0].split("-"))
            out.append((lo, hi))
    return out


def fds_to(pid, what):
    """pid's descriptors whose link names what."""
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if what in os.readlink(f"/proc/{pid}/fd/{fd}"):
                out.append(int(fd))
        except FileNotFoundError:
            pass
    return out


def load_bias(path, start):
    """The load bias of path mapped with its file offset 0 at start."""
    for t, off, va, _ in elffacts.program_headers(path, check=False) or ():
        if t == "LOAD" and off == 0:
            return start - va
    return start


def hooked_slots(pid):
    """{(object, name, slot address)} of every JUMP_SLOT and GLOB_DAT
    relocation of a hooked name in the ELF objects pid maps, from readelf."""
    objs = {}
    for m in maps(pid):
        if len(m) == 6 and m[5].startswith("/") and int(m[2], 16) == 0:
            objs.setdefault(m[5].strip(), int(m[0].split("-")[0], 16))
    slots = set()
    for path, start in objs.items():
        if " (deleted)" in path or path.startswith("/memfd:"):
            continue
        rels = elffacts.relocations(path)
        if rels is None:
            continue            # not ELF (a locale file)
        bias = load_bias(path, start)
        for off, rtype, sym in rels:
            if rtype in GOT_RELOCS:
                name = sym.split("@")[0]
                if name in HOOKED or HOOKED_CXX.match(name):
                    slots.add((os.path.basename(path), name, bias + off))
    return slots


def libc_defs(pid):
    """{name: address} of libc's functions in pid (nm -D)."""
    for m in maps(pid):
        if len(m) == 6 and os.path.basename(m[5].strip()).startswith("libc.so") and \
                int(m[2], 16) == 0:
            path = m[5].strip()
            bias = load_bias(path, int(m[0].split("-")[0], 16))
            return {name.split("@")[0]: bias + value
                    for name, value in elffacts.defined_dynsyms(path)}
    return {}


def slot_values(pid, slots):
    """{slot: the word it holds in pid's memory}."""
    out = {}
    with open(f"/proc/{pid}/mem", "rb") as mem:
        for s in slots:
            mem.seek(s[2])
            out[s] = int.from_bytes(mem.read(8), "little")
    return out


def in_lib(pid, value):
    return any(lo <= value < hi for lo, hi in ranges(pid, LIB))


def bound_since(pid, slot, was, now):
    """True if slot, a PLT slot not yet bound when it was read (it held
    its object's PLT code: lazy binding), now holds its name's function in
    libc: the loader bound it since, as it would have untraced."""
    for m in maps(pid):
        if len(m) == 6 and os.path.basename(m[5].strip()) == slot[0] and \
                int(m[2], 16) == 0:
            path = m[5].strip()
            bias = load_bias(path, int(m[0].split("-")[0], 16))
            plt = elffacts.section(path, ".plt")
            return bool(plt) and bias + plt[0] <= was < bias + plt[0] + plt[1] and \
                now == libc_defs(pid).get(slot[1])
    return False


def not_restored(pid, before):
    """[(slot, before, now)] of pid's slots that hold neither what they
    held before nor, lazily bound ones, what the loader bound them to."""
    now = slot_values(pid, before)
    return [(s, hex(before[s]), hex(now[s])) for s in before
            if now[s] != before[s] and not bound_since(pid, s, before[s], now[s])]


def unhooked(pid, before):
    """pid's hooked slots hold what they held before (not_restored()), its
    state is gone (no mapping, no descriptor) and so is its watchdog:
    (bool, why)."""
    moved = not_restored(pid, before)
    if moved:
        return False, f"slots not restored (slot, before, now): {moved[:5]}"
    if ranges(pid, STATE) or fds_to(pid, "memfd:memtrack-leak"):
        return False, "the state is still mapped or open"
    if lfx.watchdog(pid):
        return False, "the watchdog still runs"
    return True, ""


# A target un-hooks itself within a second of its tracer's death: a second
# of its own time on a real CPU.  Under emulation (the VM suites: about 20
# times slower, and each look at its slots takes a tenth of a second) the
# bound is 5 s; the host suite holds the second.
UNHOOK_S = 5.0 if IN_VM else 1.0
# Attach/detach cycles on the storm: 100 on the host; 5 on each kernel
# in the VM, where a cycle takes 4 s.
CYCLES = 5 if IN_VM else 100


def until_unhooked(pid, before, timeout=UNHOOK_S):
    """Seconds until unhooked(), or a failure after timeout."""
    t0 = time.monotonic()
    while True:
        ok, why = unhooked(pid, before)
        if ok:
            return time.monotonic() - t0
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"not un-hooked within {timeout}s: {why}")
        time.sleep(0.01)


def rss_kib(pid, fields=("VmRSS",)):
    """The sum of the named /proc/PID/status fields (KiB)."""
    with open(f"/proc/{pid}/status") as f:
        text = f.read()
    return sum(int(re.search(rf"{k}:\s+(\d+)", text).group(1)) for k in fields)


def storm_ok(s, ops_before=0, timeout=10):
    """The storm's answers to "stat": no byte was wrong, and it went on
    (more blocks checked than ops_before, within timeout: a loaded host
    may not have run its threads yet).  The ops now."""
    end = time.monotonic() + timeout
    while True:
        st = s.ask()
        m = re.fullmatch(r"ops (\d+) errors (\d+)", st)
        check(m and int(m.group(2)) == 0, f"storm: {st!r}")
        if int(m.group(1)) > ops_before:
            return int(m.group(1))
        check(time.monotonic() < end, f"storm stuck: {st!r} (ops before {ops_before})")
        time.sleep(0.1)


def attach_cycle(pid, *args, timeout=120, pre=()):
    """memtrack-leak -p pid -i 0.05 -n 1 --json ARGS (run through pre):
    (exit status, stderr, the report)."""
    r = subprocess.run(list(pre) + [TOOL, "-p", str(pid), "-i", "0.05", "-n", "1", "--json"] +
                       list(args), capture_output=True, text=True, timeout=timeout)
    docs = [json.loads(ln) for ln in r.stdout.splitlines() if ln.startswith("{")]
    return r.returncode, r.stderr, docs[-1] if docs else None


def report_after(t, done):
    """The tool t's first JSON report whose tables were read after time
    done: the one after the first it printed after it."""
    while True:
        line = readline(t.stdout)
        check(line.startswith("{"), f"no report: {line!r}")
        if json.loads(line)["time"] >= done:
            break
    return readline(t.stdout)


def stopped_ms(err):
    """The stop time and thread count memtrack-leak says an attach took."""
    m = re.search(r"\((\d+) threads stopped ([\d.]+) ms\)", err)
    check(m, f"no stop time in {err!r}")
    return int(m.group(1)), float(m.group(2))


# ---- the slots -------------------------------------------------------------------

def got_slots_taken_and_restored(variant):
    """c_apis: each slot of a hooked name held its bound function before
    the attach (not the library); while attached every such slot of every
    object mapped then (libgcc_s too, which the library loads) points into
    the library, as many as the tool says it took; after the detach each
    holds its old value again (libgcc_s's the function the others held for
    its name); c_apis's leaks exact; the library still mapped, the state
    neither mapped nor open, no watchdog running."""
    with Proc([os.path.join(ROOT, "build", "tests", "leaks", variant, "c_apis")]) as fx:
        slots = hooked_slots(fx.pid)
        check(any(s[1] == "malloc" for s in slots) and any(s[1] == "free" for s in slots),
              f"no malloc/free slot found: {slots}")
        before = slot_values(fx.pid, slots)
        check(not any(in_lib(fx.pid, v) for v in before.values()), "hooked before the attach")
        # no -n: the tool stays attached while the slots are read (readelf
        # over every object takes seconds in the VM) until its Ctrl-C
        t = subprocess.Popen(lfx.tool_p(fx.pid, "-i", "1", "--json"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(lfx.armed(fx.pid, tool=t), "not attached")
        now = hooked_slots(fx.pid)
        during = slot_values(fx.pid, now)
        if not (slots <= now and all(in_lib(fx.pid, during[s]) for s in now)):
            t.kill()
            check(False, f"slots not pointing at the library: "
                  f"{[s for s in now if not in_lib(fx.pid, during[s])]}; the tool: "
                  f"{t.communicate()[1]}; maps: {open(f'/proc/{fx.pid}/maps').read()}")
        fx.say()
        check(readline(fx.p.stdout).strip() == "done", "c_apis did not finish")
        out = report_after(t, time.time())
        t.send_signal(signal.SIGINT)
        err = t.communicate(timeout=60)[1]
        check(t.returncode == 0, f"exit {t.returncode}: {err}")
        n = int(re.search(r", (\d+) calls redirected", err).group(1))
        check(n == len(now), f"the tool took {n} slots, readelf lists {len(now)}: {err}")
        back = int(re.search(r": (\d+) calls given back", err).group(1)) \
            if "given back" in err else n
        check(back == n, f"{back} slots given back of {n}: {err}")
        lfx.check_markers([json.loads(ln) for ln in out.splitlines()][-1], "c_apis")
        ok, why = unhooked(fx.pid, before)
        check(ok, why)
        defs = libc_defs(fx.pid)
        after = slot_values(fx.pid, now - slots)
        check(all(after[s] == defs.get(s[1]) for s in after),
              f"the library's own dependencies' slots: {after}, libc's {defs}")
        check(ranges(fx.pid, LIB), "the library was unloaded")
        fx.say()
        check(fx.p.wait(timeout=30) == 0, "c_apis did not exit cleanly")


variant_tests((got_slots_taken_and_restored,), lfx.VARIANTS)


@host_test
def reattach_reuses_library():
    """Three sessions on one storm: the first loads the library, the next
    reuse it ("reused"), one copy mapped; each session's report holds the
    storm's live blocks."""
    with Proc([STORM, "2"]) as s:
        for i in range(3):
            rc, err, doc = attach_cycle(s.pid)
            check(rc == 0 and doc and doc["total_blocks"] > 0, f"session {i}: {rc} {err}")
            check(("injected" if i == 0 else "reused") in err, f"session {i}: {err}")
            check(len([r for r in maps(s.pid) if len(r) == 6 and r[1] == "r-xp" and
                       LIB in r[5]]) == 1, "more than one copy of the library")
        storm_ok(s)


def paused_rss(s):
    """The storm's RSS with every block freed and trimmed (KiB)."""
    said = s.ask("pause")
    if said != "paused":
        time.sleep(1)
        gone = s.p.poll()
        why = (f"exit {gone}, stderr {s.p.stderr.read()[-2000:]!r}" if gone is not None
               else lfx.task_states(s.pid))
        raise AssertionError(f"the storm did not pause: {said!r}; {why}")
    rss = rss_kib(s.pid)
    split = rss_kib(s.pid, ("RssAnon",)), rss_kib(s.pid, ("RssFile", "RssShmem"))
    check(s.ask("go") == "going", "the storm did not go on")
    return rss, split


def settled_rss(s, timeout=90):
    """The storm's paused RSS once it has settled: its threads' malloc
    caches fill over seconds (RSS creeps up, then stops); two readings 3 s
    apart within 64 KiB."""
    end = time.monotonic() + timeout
    seen = [paused_rss(s)]
    while time.monotonic() < end:
        time.sleep(3)
        seen.append(paused_rss(s))
        if abs(seen[-1][0] - seen[-2][0]) <= 64:
            return seen[-1][0]
    raise AssertionError("the storm's RSS did not settle: KiB (anon, file) " +
                         " ".join(f"{r}({a},{f})" for r, (a, f) in seen))


def rss_floor(s, n=5):
    """The lowest of n paused RSS readings 1 s apart: where its arenas
    happened to be left when paused moves a reading by a few hundred KiB
    either way; what a tracer left behind stays in every one."""
    out = []
    for _ in range(n):
        out.append(paused_rss(s)[0])
        time.sleep(1)
    return min(out)


@test
def storm_attach_detach_cycles():
    """CYCLES (100 on the host) attach/detach cycles on a 16-thread storm
    (on one CPU, one_cpu()): every session exits 0
    with a report, the storm never errs and runs on, un-hooked at the end,
    its RSS (every block freed and trimmed, mstorm's pause; the lowest of
    five readings) within 1 MiB of what it was before the first attach,
    once settled.  One malloc arena (MALLOC_ARENA_MAX=1): with one per
    thread the paused RSS alone wanders by over a megabyte (5.4 to 7.8 MiB
    in 70 s untraced), with one by a few KiB; and 16 threads on one
    arena's lock are stopped holding it more often."""
    with Proc([STORM, "16"], env=dict(os.environ, MALLOC_ARENA_MAX="1"),
              preexec_fn=one_cpu) as s:
        settled_rss(s)
        rss0 = rss_floor(s)
        ops = storm_ok(s)
        slots = hooked_slots(s.pid)
        before = slot_values(s.pid, slots)
        for i in range(CYCLES):
            rc, err, doc = attach_cycle(s.pid)
            check(rc == 0 and doc is not None, f"cycle {i}: exit {rc}: {err}")
            if i % 10 == 0:
                ops = storm_ok(s, ops)
        ops = storm_ok(s, ops)
        ok, why = unhooked(s.pid, before)
        check(ok, why)
        rss1 = rss_floor(s)
        check(rss1 - rss0 <= 1024, f"RSS {rss0} KiB before, {rss1} KiB after")
        out = s.close()
        check(s.p.returncode == 0 and out.strip().endswith("errors 0"),
              f"storm exit {s.p.returncode}: {out!r}")
        print(f"# RSS {rss0} -> {rss1} KiB, {ops} blocks checked", flush=True)


@host_test
def held_blocks_whole_while_shards_rehash():
    """churn: 4 threads each holding 20,000 blocks, one allocated and its
    oldest freed over and over, so that the shards' tables fill with
    tombstones and rehash into new ones all the time; once attached, the
    main thread allocates 50,000 blocks of 48 bytes in hold() and keeps
    them.  From the first report that holds them all, every report (60,
    50 ms apart) holds exactly those: hold()'s stack at 50,000 blocks and
    2,400,000 bytes, though blocks move from the threads' young buffers to
    the shards and between a shard's tables while a report reads them.
    (user/tests/unit/test_preload_read.c races the read and the rehash
    head on.)"""
    held = 50000
    with Proc([CHURN, "4", "20000"], preexec_fn=one_cpu) as c:
        t = subprocess.Popen([TOOL, "-p", str(c.pid), "-i", "0.05", "-n", "60", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            check(lfx.armed(c.pid, tool=t), "not attached")
            check(c.ask(f"hold {held}") == "held", "churn did not hold its blocks")
            out, err = t.communicate(timeout=300)
        finally:
            if t.poll() is None:
                t.kill()
                t.wait()
        check(t.returncode == 0, f"exit {t.returncode}: {err}")
        got = []
        for ln in out.splitlines():
            if ln.startswith("{"):
                rows = [s for s in json.loads(ln)["stacks"]
                        if any(f.get("function") == "hold" for f in s["frames"])]
                got.append((sum(s["blocks"] for s in rows), sum(s["bytes"] for s in rows)))
        first = next((i for i, g in enumerate(got) if g[0] == held), None)
        check(first is not None and first <= 30,
              f"no report held the {held} blocks in its first 30: {got}")
        bad = [(i, g) for i, g in enumerate(got[first:], first) if g != (held, held * 48)]
        check(not bad, f"{len(bad)} of {len(got) - first} reports off (report, (blocks, "
                       f"bytes)): {bad[:10]}")
        print(f"# {len(got) - first} reports whole (the first {first} before hold())",
              flush=True)


# ---- the tracer killed ------------------------------------------------------------

# Where the tool is killed: after the n-th MEMTRACK_INJECT_DEBUG line ending
# with the step (calls: the memfd, dlopen, the pipe, closing its write end,
# the attach; a library reused: the last three).
STEPS = (("stopping", 1), ("stopped", 1), ("picked", 1), ("called", 1), ("called", 2),
         ("called", 3), ("answered", 1), ("released", 1))


def thread_states(pid):
    """The states (R, S, t, T...) of pid's threads; a thread that ends
    while it is read (the watchdog, going) is left out."""
    states = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                states.add(f.read().split(") ")[1][0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return states


def until_step(t, step, n):
    """Reads the tool's stderr up to the n-th line ending with step; False
    if it ended first."""
    while n:
        line = readline(t.stderr)
        if not line:
            return False
        n -= line.rstrip().endswith(" " + step)
    return True


@test
def tracer_killed_during_attach():
    """SIGKILL of memtrack-leak at each step of an attach (its
    MEMTRACK_INJECT_DEBUG lines), twice over (once in the VM): within 1 s the storm's
    slots hold what they held, its state is released, no watchdog runs,
    no thread is left stopped, and it runs on without an error."""
    with Proc([STORM, "4"]) as s:
        ops = storm_ok(s)
        before = slot_values(s.pid, hooked_slots(s.pid))
        env = dict(os.environ, MEMTRACK_INJECT_DEBUG="1")
        for step, n in STEPS * (1 if IN_VM else 2):
            t = subprocess.Popen([TOOL, "-p", str(s.pid), "-i", "60"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=env)
            check(until_step(t, step, n), f"the tool ended before {step} {n}")
            t.kill()
            t.wait()
            try:
                until_unhooked(s.pid, before)
            except AssertionError as e:
                raise AssertionError(f"killed at {step} {n}: {e}; "
                                     f"{lfx.task_states(s.pid)}") from None
            states = thread_states(s.pid)
            check("t" not in states and "T" not in states,
                  f"after {step} {n}: threads {states}")
            ops = storm_ok(s, ops)


def ignore_sigint():
    """What bash does to a job started with & from a script."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@host_test
def stop_signal_during_attach_detaches():
    """SIGINT (ignored, as in a job a script started with &) and SIGTERM
    sent to memtrack-leak at each step of an attach: the attach ends whole,
    then the tool detaches ("detached from") and exits 0, the storm's slots
    hold what they held at its exit, its state and watchdog are gone within
    the un-hook bound, and it runs on without an error.  Before, the SIGINT was lost (the tool traced on) and the
    SIGTERM killed it mid-attach (the target un-hooked itself, later)."""
    with Proc([STORM, "4"]) as s:
        ops = storm_ok(s)
        before = slot_values(s.pid, hooked_slots(s.pid))
        env = dict(os.environ, MEMTRACK_INJECT_DEBUG="1")
        for sig in (signal.SIGINT, signal.SIGTERM):
            for step, n in STEPS:
                t = subprocess.Popen([TOOL, "-p", str(s.pid), "-i", "60"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env, preexec_fn=ignore_sigint)
                check(until_step(t, step, n), f"the tool ended before {step} {n}")
                t.send_signal(sig)
                try:
                    rest = t.communicate(timeout=30)[1]
                except subprocess.TimeoutExpired:
                    t.kill()
                    t.wait()
                    raise AssertionError(f"{sig.name} at {step} {n}: the tool went on "
                                         "30 s after it") from None
                rc = t.returncode
                check(rc == 0 and f"detached from {s.pid}" in rest,
                      f"{sig.name} at {step} {n}: exit {rc}: {rest[-1500:]!r}")
                moved = not_restored(s.pid, before)
                check(not moved, f"{sig.name} at {step} {n}: slots not restored at the "
                                 f"tool's exit: {moved[:5]}")
                # The watchdog thread's /proc entry may outlive its exit a moment.
                until_unhooked(s.pid, before)
                ops = storm_ok(s, ops)


@test
def tracer_killed_during_session():
    """SIGKILL of memtrack-leak while it traces (3 times): the storm
    un-hooks itself within 1 s (the watchdog sees the pipe's end close)."""
    with Proc([STORM, "4"]) as s:
        ops = storm_ok(s)
        before = slot_values(s.pid, hooked_slots(s.pid))
        for i in range(3):
            t = subprocess.Popen([TOOL, "-p", str(s.pid), "-i", "60"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            check(lfx.armed(s.pid, tool=t), "not attached")
            time.sleep(0.3)
            t.kill()
            t.wait()
            took = until_unhooked(s.pid, before)
            print(f"# un-hooked {took * 1000:.0f} ms after the kill", flush=True)
            ops = storm_ok(s, ops)


AS_NOBODY = ["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups"]


AUTOGROUP = "/proc/sys/kernel/sched_autogroup_enabled"


@contextlib.contextmanager
def autogroup_off():
    """Every task in its cgroup's scheduling group, not its session's (as
    on a host where the CPU controller puts the shell in a cgroup, or a
    kernel without CONFIG_SCHED_AUTOGROUP): the tool shares one with the
    storm.  Set back afterwards; left as it is where the knob is missing
    or cannot be written."""
    try:
        with open(AUTOGROUP) as f:
            was = f.read().strip()
        with open(AUTOGROUP, "w") as f:
            f.write("0")
    except OSError as e:        # no such knob, or /proc/sys read-only
        print(f"# autogroups left as they are: {e}", flush=True)
        yield
        return
    try:
        yield
    finally:
        with open(AUTOGROUP, "w") as f:
            f.write(was)


@host_test
def stop_the_world_64_threads():
    """A storm of 64 threads (65 with its main one), as root, and as nobody
    (storm and tool) with the tool in the storm's scheduling group: 5
    attaches each, each stopping every thread; the median stop at most
    50 ms.  As nobody the tool may not raise its priority, and when the
    threads were let go one PTRACE_DETACH at a time the first ones took
    its CPU before it reached the last: 44-76 ms (CI: 51.6 ms); a thread's
    exit lets them all go at once (stop_world.c)."""
    for pre, who, cond in (([], "root", contextlib.nullcontext),
                           (AS_NOBODY, "nobody", autogroup_off)):
        with cond(), Proc(pre + [STORM, "64"]) as s:
            time.sleep(0.5)
            times = []
            for i in range(5):
                rc, err, _ = attach_cycle(s.pid, pre=pre)
                check(rc == 0, f"{who}: attach {i}: exit {rc}: {err}")
                n, ms = stopped_ms(err)
                check(n == 65, f"{who}: {n} threads stopped")
                times.append(ms)
            storm_ok(s)
            med = statistics.median(times)
            print(f"# {who}: stop times {times} ms, median {med} ms", flush=True)
            check(med <= 50, f"{who}: median stop {med} ms over 50 ms: {times}")


def proc_state(pid):
    """A process's state letter; "gone" once reaped."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"


def until_states(pids, ok, what, timeout=5):
    end = time.monotonic() + timeout
    while not all(proc_state(p) in ok for p in pids):
        check(time.monotonic() < end, f"{what}: states {[proc_state(p) for p in pids]}")
        time.sleep(0.01)


@host_test
def as_nobody_job_control():
    """nobody's tool on nobody's storm is one process, a shell's job:
    SIGTSTP (Ctrl-Z) stops it, SIGCONT goes on; SIGINT (ignored, as in a
    script's & job) detaches (exit 0, "detached from", the slots
    restored); SIGKILL: the storm un-hooked within 1 s; the storm's exit:
    the tool's exit status 3."""
    with Proc(AS_NOBODY + [STORM, "4"]) as s:
        ops = storm_ok(s)
        before = slot_values(s.pid, hooked_slots(s.pid))

        def start():
            # SIGINT ignored, as in a job a script started with &: sent, it
            # still ends the session (catch_stop()).  A process group of its
            # own, as a shell's job: in an orphaned one (make check's) the
            # kernel drops a SIGTSTP whose action is to stop
            t = subprocess.Popen(AS_NOBODY + [TOOL, "-p", str(s.pid), "-i", "0.2"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 preexec_fn=ignore_sigint, process_group=0)
            check(lfx.armed(s.pid, tool=t), "not attached")
            # setpriv execs the tool: the process started is the tool
            with open(f"/proc/{t.pid}/task/{t.pid}/children") as f:
                kids = f.read().split()
            check(not kids, f"the tool has children: {kids}")
            return t, [t.pid]

        t, procs = start()
        t.send_signal(signal.SIGTSTP)
        until_states(procs, "T", "Ctrl-Z")
        time.sleep(0.3)
        check(all(proc_state(p) == "T" for p in procs), "not stopped 0.3 s later")
        t.send_signal(signal.SIGCONT)
        until_states(procs, "RS", "fg")
        ops = storm_ok(s, ops)
        t.send_signal(signal.SIGINT)
        err = t.communicate(timeout=30)[1]
        check(t.returncode == 0 and f"detached from {s.pid}" in err,
              f"SIGINT: exit {t.returncode}: {err[-1000:]!r}")
        moved = not_restored(s.pid, before)
        check(not moved, f"slots not restored at the tool's exit: {moved[:5]}")
        until_unhooked(s.pid, before)

        t, procs = start()
        t.kill()
        t.wait()
        took = until_unhooked(s.pid, before)
        print(f"# un-hooked {took * 1000:.0f} ms after the kill", flush=True)
        ops = storm_ok(s, ops)

        t, procs = start()
        s.p.kill()
        s.p.wait()
        err = t.communicate(timeout=60)[1]
        check(t.returncode == 3 and f"process {s.pid} exited" in err,
              f"the storm's exit: exit {t.returncode}: {err[-1000:]!r}")


# ---- refusals ---------------------------------------------------------------------

def pong(proc, n):
    check(proc.ask("ping") == f"pong {n}", f"the target does not answer pong {n}")


def refused(pid, want, as_user=None, uprobes=True):
    """memtrack-leak -p pid: the injection refused, want in stderr, no
    library loaded into the target.  uprobes: the tool then tries the
    module's engine (with the module loaded: a report, exit 0; without:
    exit 1, no report); else exit 1."""
    pre = ["setpriv", "--reuid", str(as_user), "--regid", str(as_user),
           "--clear-groups"] if as_user else []
    r = subprocess.run(pre + [TOOL, "-p", str(pid), "-n", "1", "-i", "0.5", "--json"],
                       capture_output=True, text=True, timeout=120)
    module = uprobes and os.path.exists("/sys/module/memtrack")
    check(want in r.stderr and (r.returncode, bool(r.stdout)) == ((0, True) if module
                                                                  else (1, False)),
          f"exit {r.returncode}, stdout {r.stdout[:100]!r}, stderr {r.stderr!r}")
    check(not uprobes or "tracing it with uprobes instead" in r.stderr, r.stderr)
    check(not ranges(pid, LIB) and not ranges(pid, STATE), "the library was loaded")
    return r.stderr


def sandbox_refused(mode, want, as_user=None):
    """sandboxed MODE (run as as_user): refused (refused()), the target
    answering before and after."""
    pre = ["setpriv", "--reuid", str(as_user), "--regid", str(as_user),
           "--clear-groups"] if as_user else []
    with Proc(pre + [SANDBOXED, mode]) as p:
        pong(p, 1)
        refused(p.pid, want, as_user=as_user)
        pong(p, 2)


@test
def seccomp_strict_refused():
    """seccomp's strict mode: refused with why, uprobes tried instead (the
    module's error without it); the target answers on."""
    sandbox_refused("strict", "seccomp's strict mode")


@test
def seccomp_kill_filter_refused():
    """A filter that kills on memfd_create: refused naming the call; the
    target answers on."""
    sandbox_refused("kill-memfd", "does not allow memfd_create")


@test
def seccomp_filter_unreadable_as_nobody():
    """nobody cannot read the filter of its own process (CAP_SYS_ADMIN):
    refused, saying so; the target answers on."""
    sandbox_refused("deny-mount", "cannot read", as_user=NOBODY)


@test
def seccomp_filter_allowing_it_traced():
    """A filter that only forbids mount lets the injection through (root
    reads it): attached, detached, the target answers on."""
    with Proc([SANDBOXED, "deny-mount"]) as p:
        pong(p, 1)
        rc, err, doc = attach_cycle(p.pid)
        check(rc == 0 and doc is not None and "in-process" in err, f"exit {rc}: {err}")
        pong(p, 2)


@test
def ptrace_refused():
    """nobody on root's process: refused (permission), the target as it was."""
    with Proc([STORM, "1"]) as s:
        refused(s.pid, "permission denied", as_user=NOBODY, uprobes=False)
        storm_ok(s)


@test
def as_nobody_own_process():
    """nobody tracing its own c_apis: exact, no module, no root."""
    with Proc(["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups",
               os.path.join(ROOT, "build", "tests", "leaks", "nofp", "c_apis")]) as fx:
        t = subprocess.Popen(["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY),
                              "--clear-groups"] + lfx.tool_p(fx.pid, "-i", "1", "-n", "2",
                                                             "--json"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(lfx.armed(fx.pid, tool=t), "nobody did not attach")
        fx.say()
        check(readline(fx.p.stdout).strip() == "done", "c_apis did not finish")
        out = report_after(t, time.time())
        t.send_signal(signal.SIGINT)
        err = t.communicate(timeout=60)[1]
        check(t.returncode == 0, f"exit {t.returncode}: {err}")
        lfx.check_markers([json.loads(ln) for ln in out.splitlines()][-1], "c_apis")
        fx.say()


@test
def static_program_uses_uprobes():
    """A static program has no loader to load a library: the tool says so
    and traces it with uprobes (without the module: the module's error)."""
    prog = os.path.join(TESTBIN, "static-malloc-per-line")
    with Proc([prog]) as p:
        r = subprocess.run([TOOL, "-p", str(p.pid), "-n", "1", "-i", "0.5", "--json"],
                           capture_output=True, text=True, timeout=120)
        check("is statically linked" in r.stderr and
              "tracing it with uprobes instead" in r.stderr, r.stderr)
        if os.path.exists("/sys/module/memtrack"):
            check(r.returncode == 0 and r.stdout.startswith("{"), f"{r.returncode} {r.stderr}")
        else:
            check(r.returncode == 1 and "memtrack.ko is not loaded" in r.stderr, r.stderr)
        check(p.ask("x") == "ok", "the static program stopped answering")


def sve_registers_kept():
    """arm64: the calls run on a thread stopped with live SVE registers
    (svespin: a pattern in z7 over the whole vector and p7 all true,
    checked each turn, no system call) through a frame holding its SVE
    record: after an attach, a report and the detach, the pattern is
    whole ("ok VL", VL longer than the 16 bytes FP/SIMD holds)."""
    with Proc([os.path.join(TESTBIN, "svespin")]) as p:
        r = subprocess.run(lfx.tool_p(p.pid, "-n", "1", "-i", "0.5", "--json"),
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 0 and r.stdout.startswith("{"), f"{r.returncode} {r.stderr}")
        check("calls redirected to it" in r.stderr,
              f"not the injected engine: {r.stderr}")
        p.p.send_signal(signal.SIGUSR1)
        said = readline(p.p.stdout).split()
        check(said[:1] == ["ok"] and int(said[1]) > 16, f"svespin said {said}")


if os.uname().machine == "aarch64":
    test(sve_registers_kept)


@test
def target_exits_during_attach():
    """The target SIGKILLed at each step of an attach: the tool ends within
    10 s, saying the process is gone (exit 1, or 3 if the session had
    begun), never hanging."""
    env = dict(os.environ, MEMTRACK_INJECT_DEBUG="1")
    for step, n in STEPS:
        with Proc([STORM, "4"], preexec_fn=one_cpu) as s:
            t = subprocess.Popen([TOOL, "-p", str(s.pid), "-i", "60"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=env)
            until_step(t, step, n)
            s.p.kill()
            s.p.wait()
            _, err = t.communicate(timeout=10)
            check(t.returncode in (1, 3), f"{step}: exit {t.returncode}: {err}")
            check(re.search(r"exited|no such process|is gone|ended", err),
                  f"{step}: no word of the end: {err!r}")


@test
def bad_input():
    """-p of no process: exit 1, its message; --engine inject with a
    command, --engine preload with -p: usage errors (exit 2)."""
    pid = subprocess.Popen(["true"])
    pid.wait()
    r = subprocess.run([TOOL, "-p", str(pid.pid)], capture_output=True, text=True, timeout=30)
    check(r.returncode == 1 and "no such process" in r.stderr and not r.stdout,
          f"{r.returncode} {r.stderr!r}")
    for args in (["--engine", "inject", "--", "true"], ["--engine", "preload", "-p", "1"]):
        r = subprocess.run([TOOL] + args, capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and "--engine" in r.stderr and not r.stdout,
              f"{args}: exit {r.returncode}, {r.stderr!r}")


# ---- what the target sees -----------------------------------------------------------

# tests/progs/runpath/: main, and plug/libplug.so, which its RUNPATH finds
RUNPATH_MAIN = os.path.join(TESTBIN, "runpath", "main")
RUNPATH_PLUG_SRC = os.path.join(ROOT, "tests", "progs", "runpath", "plug.c")


@test
def dlopen_bare_name_from_runpath():
    """A program whose RUNPATH ($ORIGIN/plug) holds the library it dlopens
    by a bare name after the attach: the hook loads it as the program would
    (the search is the caller's, not the injected library's), and its
    leak, 3 x 77, is exact from the first call."""
    with open(RUNPATH_PLUG_SRC) as f:
        leak_line = next(n for n, text in enumerate(f, 1) if "LEAK(plug)" in text)
    with Proc([RUNPATH_MAIN]) as p:
        t = subprocess.Popen(lfx.tool_p(p.pid, "-i", "1", "-n", "2", "--json"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(lfx.armed(p.pid, tool=t), "not attached")
        p.say()
        said = readline(p.p.stdout).strip()
        check(said == "done", f"the program said {said!r}")
        out, err = t.communicate(timeout=60)
        check(t.returncode == 0, f"exit {t.returncode}: {err}")
        doc = [json.loads(ln) for ln in out.splitlines()][-1]
        hits = [s for s in doc["stacks"] if lfx.frame_at(s, "plug.c", leak_line)]
        check(sum(s["blocks"] for s in hits) == 3 and
              sum(s["bytes"] for s in hits) == 231, f"plug's leak: {hits}")
        p.say()


@test
def real_programs_unharmed():
    """python3 (sqlite3) and perl traced mid-run (attached, a line of work,
    a report, detached) print exactly what they print untraced, with the
    same exit status; each report holds the blocks of that work."""
    py = ("import sqlite3, sys\nprint('ready', flush=True)\nc = sqlite3.connect(':memory:')\n"
          "c.execute('create table t(x)')\nfor line in sys.stdin:\n"
          "    c.executemany('insert into t values (?)', [(i,) for i in range(3000)])\n"
          "    print(c.execute('select sum(x), count(*) from t').fetchone(), flush=True)\n")
    pl = ('$| = 1; print "ready\\n"; my %h; while (<STDIN>) { $h{$_} = [$_ x 3] '
          'for 1..20000; print scalar(keys %h), "\\n" }')
    for argv in (["/usr/bin/python3", "-c", py], ["/usr/bin/perl", "-e", pl]):
        native = subprocess.run(argv, input="a\nb\nc\n", capture_output=True, text=True,
                                timeout=60)
        with Proc(argv) as p:
            got = [p.ask("a")]
            t = subprocess.Popen(lfx.tool_p(p.pid, "-i", "0.5", "-n", "1", "--json",
                                            "--top", "5"),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            check(lfx.armed(p.pid, tool=t), f"{argv[0]}: not attached")
            got.append(p.ask("b"))
            out, err = t.communicate(timeout=120)
            doc = json.loads(out) if out.startswith("{") else None
            check(t.returncode == 0 and doc and doc["total_blocks"] > 0,
                  f"{argv[0]}: exit {t.returncode}, {out[:200]!r} {err}")
            got.append(p.ask("c"))
            rest = p.close()
        check(["ready"] + got == native.stdout.split("\n")[:4] and not rest and
              p.p.returncode == native.returncode == 0,
              f"{argv[0]}: {got} {rest!r}, natively {native.stdout!r}")


if __name__ == "__main__":
    sys.exit(run_tests(sys.argv))
