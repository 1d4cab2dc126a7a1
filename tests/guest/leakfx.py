"""Fixture helpers of the memtrack-leak suites (test_leak.py,
test_leak_tool.py, ...): the LEAK(name): N x SIZE markers of
tests/progs/leaks, a fixture traced with memtrack-leak -p, and exact
checks of a report's stacks against the markers and of their callers.

LEAK_ENGINE=inject runs the -p tests with the injected in-process engine
(`--engine inject`, no module needed) instead of the module's uprobes
(`--engine uprobe`, the default here)."""
import hashlib
import json
import os
import pickle
import re
import shutil
import subprocess
import time

from mtlib import ROOT, check, in_syscall
from nl import Genl, NlError

LEAKS = os.path.join(ROOT, "tests", "progs", "leaks")
TOOL = os.path.join(ROOT, "build", "bin", "memtrack-leak")
# The fixture builds every test runs on.
VARIANTS = ("fp", "nofp")
ENGINE = os.environ.get("LEAK_ENGINE", "uprobe")
# -p's engine under test
PID_ENGINE = "inject" if ENGINE == "inject" else "uprobe"
INJECT = PID_ENGINE == "inject"
# The injected library's watchdog thread: there once the slots are taken.
WATCH_COMM = "memtrack-watch"


def tool_p(pid, *args):
    """The command line of memtrack-leak -p PID with the engine under test."""
    return [TOOL, "-p", str(pid), "--engine", PID_ENGINE] + list(args)


def task_states(pid):
    """Each thread of pid as "tid comm state wchan", for a failure's message."""
    out = []
    try:
        tids = sorted(os.listdir(f"/proc/{pid}/task"), key=int)
    except FileNotFoundError:
        return "gone"
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/task/{tid}/wchan") as f:
                wchan = f.read()
        except (FileNotFoundError, ProcessLookupError):
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        out.append(f"{tid} {comm} {stat[stat.rindex(')') + 2]} {wchan or '-'}")
    return "threads: " + ", ".join(out)


def tool_alive(tool):
    """Fails with tool's exit status and stderr if it has ended."""
    if tool is None or tool.poll() is None:
        return
    err = tool.stderr.read() if tool.stderr else ""
    raise AssertionError(f"memtrack-leak exited {tool.returncode} before it attached: "
                         f"{err[-2000:]!r}")


def watchdog(pid):
    """The tid of pid's injected watchdog thread, or None."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if f.read().strip() == WATCH_COMM:
                    return int(tid)
        except (FileNotFoundError, ProcessLookupError):
            pass                # the thread ended since the listing
    return None


def source(name):
    """A fixture's source (name: a fixture, or a source path under
    tests/progs/leaks)."""
    return [os.path.join(LEAKS, name + ext) for ext in ("", ".c", ".cc")
            if os.path.isfile(os.path.join(LEAKS, name + ext))][0]


def markers(name, kind="LEAK"):
    """{leak name: (file, line, blocks, size)} from the fixture's source."""
    path = source(name)
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = re.search(kind + r"\((\w+)\): (\d+) x (\d+)", line)
            if m:
                out[m.group(1)] = (os.path.basename(path), n, int(m.group(2)), int(m.group(3)))
    return out


def mismatch_markers(name):
    """{name: (file, alloc line, blocks, alloc api, free line, free api)}:
    MISMATCH(name): N x SIZE by API and MISMATCH_FREE(name): API."""
    out = {}
    with open(source(name)) as f:
        lines = list(enumerate(f, 1))
    for n, line in lines:
        m = re.search(r"MISMATCH\((\w+)\): (\d+) x \d+ by (\S+)", line)
        if not m:
            continue
        frees = [(k, re.search(r"MISMATCH_FREE\(" + m.group(1) + r"\): (\S+)", ln))
                 for k, ln in lines]
        (k, fm), = [(k, fm) for k, fm in frees if fm]
        out[m.group(1)] = (os.path.basename(source(name)), n, int(m.group(2)),
                           m.group(3), k, fm.group(1))
    return out


def check_mismatches(report, name):
    """The report's mismatches are exactly the fixture's MISMATCH markers:
    at each, the allocating and the freeing line, the APIs and the count;
    the mismatched blocks are not also reported as outstanding."""
    mms = mismatch_markers(name)
    check(mms, f"{name} has no MISMATCH marker")
    for leak, (file, line, count, api, free_line, free_api) in mms.items():
        check(not [s for s in report["stacks"] if frame_at(s, file, line)],
              f"{leak}: the mismatched block is reported as outstanding")
        hits = [m for m in report.get("mismatches", [])
                if frame_at({"frames": m["alloc_frames"]}, file, line)]
        check(len(hits) == 1, f"{leak}: {len(hits)} mismatches at {file}:{line}: "
              f"{report.get('mismatches')}")
        m = hits[0]
        check((m["alloc_api"], m["free_api"], m["count"]) == (api, free_api, count),
              f"{leak}: {m['alloc_api']} freed by {m['free_api']} x{m['count']}, "
              f"expected {api} freed by {free_api} x{count}")
        check(frame_at({"frames": m["free_frames"]}, file, free_line),
              f"{leak}: freeing stack not at {file}:{free_line}: {m['free_frames']}")
    check(len(report["mismatches"]) == len(mms), f"mismatches: {report['mismatches']}")


def run_attached(path, args, attached, env=None, timeout=120):
    """The fixture at path with `memtrack-leak -p PID args` on it: once
    attached(fixture, tool) returns, the fixture's "go" ... "done", the
    tool's end (exit 0), the fixture's second "go".  (The tool's stdout and
    stderr, the fixture's output after "done", its exit status.)"""
    fx = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True, env=env)
    check(fx.stdout.readline().strip() == "ready", "fixture did not start")
    tool = subprocess.Popen(tool_p(fx.pid, *args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    attached(fx, tool)
    fx.stdin.write("go\n")
    fx.stdin.flush()
    check(fx.stdout.readline().strip() == "done", "fixture did not finish")
    out, err = tool.communicate(timeout=timeout)
    check(tool.returncode == 0, f"memtrack-leak exit {tool.returncode}: {err.strip()}")
    fx.stdin.write("go\n")
    fx.stdin.close()
    rest = fx.stdout.read()
    fx.wait(timeout=30)
    return out, err, rest, fx.returncode


def armed(pid, timeout=60, tool=None):
    """Until pid's leak session has its probes in (LEAK_ARM: memtrack-leak
    sends the unwind tables first), or with the injected engine its slots
    are taken (its watchdog runs); False if not within timeout.  With
    tool, the memtrack-leak process attaching: its exit status and
    stderr if it ends before that."""
    end = time.monotonic() + timeout
    if INJECT:
        while time.monotonic() < end:
            if watchdog(pid):
                return True
            tool_alive(tool)
            time.sleep(0.02)
        if tool is not None:
            raise AssertionError(f"not attached in {timeout} s: the target's "
                                 f"{task_states(pid)}; the tool's {task_states(tool.pid)}")
        return False
    with Genl() as g:
        while time.monotonic() < end:
            tool_alive(tool)
            try:
                if g.leak_stats(pid)["nr_probes"]:
                    return True
            except NlError:
                pass
            time.sleep(0.05)
    return False


def until_first_report(fx, tool):
    """Until the tool waits for its first report: attached, tables sent
    (allocations before the tables arrive stop at the first libc frame);
    injected, once the slots are taken."""
    if INJECT:
        check(armed(fx.pid, tool=tool), "memtrack-leak did not attach")
        return
    end = time.monotonic() + 60
    while time.monotonic() < end and tool.poll() is None:
        if in_syscall(tool.pid, "nanosleep", "clock_nanosleep"):
            break
        time.sleep(0.1)


def trace(name, variant="fp"):
    """Run the fixture under memtrack-leak -p; the last JSON report."""
    out, err, _, _ = run_attached(os.path.join(ROOT, "build", "tests", "leaks", variant, name),
                                  ["-i", "2", "-n", "2", "--json"], until_first_report)
    docs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    check(docs, f"no JSON report: {out[:200]} {err[:200]}")
    return docs[-1]


def frame_at(stack, file, line):
    """Does the stack's first non-allocator frame sit at file:line?"""
    for fr in stack["frames"]:
        if fr.get("file") and os.path.basename(fr["file"]) == file:
            return fr.get("line") == line
    return False


def check_markers(report, name, only=None):
    for leak, (file, line, blocks, size) in markers(name).items():
        if only and leak not in only:
            continue
        hits = [s for s in report["stacks"] if frame_at(s, file, line)]
        check(hits, f"{name}: no stack at {file}:{line} ({leak})")
        got_b = sum(s["blocks"] for s in hits)
        got = sum(s["bytes"] for s in hits)
        check(got_b == blocks and got == blocks * size,
              f"{name}/{leak}: {got_b} blocks {got} bytes, expected {blocks} x {size}")


def base(path):
    return os.path.basename(path) if path else None


def check_offsets(report):
    """Every frame in an object has the address in it ("offset", not the
    runtime address): addr2line on the object at that offset gives the
    line of each address's innermost frame that has one (only the line:
    binutils names a line of some included files by the includer)."""
    want = {}
    for s in report["stacks"]:
        prev = None
        for f in s["frames"]:
            check(not f.get("module") or isinstance(f.get("offset"), int),
                  f"frame in {f.get('module')} without an offset: {f}")
            if f["address"] != prev and f.get("file"):
                want.setdefault(f["module"], {})[f["offset"]] = f["line"]
            prev = f["address"]
    check(want, "no frame with a file:line")
    for mod, offs in want.items():
        keys = sorted(offs)
        out = subprocess.run(["addr2line", "-e", mod] + [hex(o) for o in keys],
                             capture_output=True, text=True, check=True).stdout
        for off, line in zip(keys, out.splitlines()):
            n = line.split(" (discriminator")[0].rpartition(":")[2]
            check(n == str(offs[off]),
                  f"{base(mod)}+{off:#x}: addr2line says {line}, the frame line {offs[off]}")


def check_callers(stack, name, src, thread=False, start=True):
    """After the allocating frame: main (in src) then libc then _start
    (start); or, for a thread, libc's start_thread."""
    fr = [(f.get("function"), base(f.get("file")), base(f.get("module")))
          for f in stack["frames"]]
    where = f"{name}: stack {[f[0] for f in fr]}"
    if thread:
        check(any(fn == "start_thread" and (mod or "").startswith("libc.so")
                  for fn, _, mod in fr), f"{where}: no libc start_thread")
        return
    mains = [i for i, (fn, file, _) in enumerate(fr) if fn == "main" and file == src]
    check(mains, f"{where}: no main in {src}")
    rest = fr[mains[0] + 1:]
    libc = [i for i, (_, _, mod) in enumerate(rest) if (mod or "").startswith("libc.so")]
    check(libc, f"{where}: nothing in libc after main")
    check(not start or any(fn == "_start" for fn, _, _ in rest[libc[0]:]),
          f"{where}: no _start after libc")


def check_all_callers(report, name, src=None, thread=False, start=True):
    """check_callers() on every stack at one of name's markers; src: the
    file holding main (default: the marker's own file)."""
    for leak, (file, line, _, _) in markers(name).items():
        for s in report["stacks"]:
            if frame_at(s, file, line):
                check_callers(s, f"{name}/{leak}", src or file, thread, start)


def check_bylib(doc, what, others=True):
    """A --by-lib JSON report: bylib's and libbylib.so's rows are exactly
    bylib_expected()'s (bytes, blocks, calls, call_bytes per object and API);
    others: rows of other objects (libc's, the loader's) may be there too."""
    got = {(os.path.basename(row["object"]), row["api"]):
           (row["bytes"], row["blocks"], row["calls"], row["call_bytes"])
           for row in doc["by_lib"]
           if not others or
           os.path.basename(row["object"]) in ("bylib", "libbylib.so")}
    want = bylib_expected()
    check(got == want, f"{what}: by-lib {got}, expected {want}")


def bylib_expected():
    """{(object, api): (bytes, blocks, calls, call_bytes)} from the markers
    "LEAK(name): LEFT x SIZE of CALLS calls" of bylib.c and lib/bylib_lib.c."""
    want = {}
    for src, obj in (("bylib.c", "bylib"), ("lib/bylib_lib.c", "libbylib.so")):
        with open(os.path.join(LEAKS, src)) as f:
            for line in f:
                m = re.search(r"= (\w+)\(.*LEAK\(\w+\): (\d+) x (\d+) of (\d+) calls",
                              line)
                if m:
                    api, left, size, calls = m.group(1), *map(int, m.groups()[1:])
                    old = want.get((obj, api), (0, 0, 0, 0))
                    want[(obj, api)] = tuple(a + b for a, b in zip(
                        old, (left * size, left, calls, calls * size)))
    check(len(want) == 4, f"markers: {want}")
    return want


# ---- --scan against valgrind memcheck ---------------------------------------

SCAN_CLASSES = ("definitely_lost", "indirectly_lost", "possibly_lost", "still_reachable")
# Sources whose lines the per-line comparisons are keyed by.
FIXTURE_SOURCES = ("scan.c", "scan_threads.c", "common.h")
# The in-process engine's library has TLS of its own: one module more, so
# every thread's DTV (glibc's dtv_t array) is one 16-byte slot longer.
DTV_SLOT = 16


def _blank():
    return {c: (0, 0) for c in SCAN_CLASSES}


def _add(acc, cls, nbytes, blocks):
    acc[cls] = (acc[cls][0] + nbytes, acc[cls][1] + blocks)


# The fixtures whose --scan reports are held against memcheck's, and what
# they read (a "go" before their work, one before they exit).
MEMCHECK_FIXTURES = ("scan", "scan_threads")
MEMCHECK_INPUT = "go\ngo\n"


def fixture_memcheck(path):
    """memcheck() of a fixture of MEMCHECK_FIXTURES given its input."""
    return memcheck([path], MEMCHECK_INPUT)


def memcheck_runs():
    """Every (argv, stdin) the suites ask memcheck() about: the fixtures,
    fp and nofp, and a program that allocates nothing (true)."""
    built = os.path.join(ROOT, "build", "tests", "leaks")
    return ([([os.path.join(built, v, name)], MEMCHECK_INPUT)
             for name in MEMCHECK_FIXTURES for v in VARIANTS] +
            [([shutil.which("true")], "")])


def memcheck(argv, stdin):
    """valgrind memcheck at the program's exit, on its memory as it is
    there (--run-libc-freeres=no: glibc frees nothing for memcheck's sake,
    so its stdio buffers and cached thread stacks are what the program has
    at exit): (LEAK SUMMARY {class: (bytes, blocks)}, per allocating line
    {(file, line): {class: (bytes, blocks)}}, the DTV records [(line,
    class, blocks)]), a line being the first frame in a fixture source; a
    definitely lost record counts its direct bytes (the indirect ones have
    records of their own).

    Under make check, run once per program: three suites of each kernel
    compare with the same fixtures, and under emulation one run takes
    8-110 s (on the host about 1 s).  The result is kept in the run's share
    (MEMTRACK_VM_SHARE, tests/README.md) under the arguments, the input
    and the program's own bytes, for every kernel: made on the host before
    the suites start (tests/host/memcheck_reports.py), else by the first
    guest that asks (one asking meanwhile waits for it).  memcheck runs the
    program on its own synthetic CPU, and its summary and records for these
    fixtures were the same on 5.10, 7.2 and the host's 6.18 (2026-11-27)."""
    cmd = ["valgrind", "--run-libc-freeres=no", "--leak-check=full",
           "--show-leak-kinds=all", "--num-callers=30"] + argv
    share = os.environ.get("MEMTRACK_VM_SHARE")
    if not share:
        return _memcheck(cmd, stdin)
    key = hashlib.sha256(repr((cmd, stdin)).encode())
    with open(argv[0], "rb") as f:
        key.update(f.read())
    path = os.path.join(share, f"memcheck-{key.hexdigest()}.pickle")
    lock, fd = f"{path}.lock", -1
    end = time.monotonic() + 600
    while time.monotonic() < end:
        try:
            with open(path, "rb") as f:
                return pickle.load(f)
        except FileNotFoundError:
            pass
        # one guest runs it, the others wait for its result (two lanes
        # asking at once ran it twice: 110 s each for scan_threads); one
        # that ended without a result let go of the lock, and one killed
        # holding it is not waited for past 10 minutes
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            break
        except FileExistsError:
            time.sleep(1)
    try:
        result = _memcheck(cmd, stdin)
        tmp = f"{path}.{os.urandom(8).hex()}"     # guests have the same pids
        with open(tmp, "wb") as f:
            pickle.dump(result, f)
        os.rename(tmp, path)
    finally:
        if fd >= 0:
            os.close(fd)
            os.unlink(lock)
    return result


def _memcheck(cmd, stdin):
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=900)
    summary = {}
    if re.search(r"==\d+==\s+in use at exit: 0 bytes in 0 blocks", p.stderr):
        # memcheck prints no LEAK SUMMARY when nothing is left
        return {cls: (0, 0) for cls in SCAN_CLASSES}, {}, []
    for cls in SCAN_CLASSES:
        m = re.search(r"==\d+==\s+" + cls.replace("_", " ") +
                      r": ([\d,]+) bytes in ([\d,]+) blocks", p.stderr)
        check(m, f"memcheck printed no '{cls}': {p.stderr[-800:]}")
        summary[cls] = tuple(int(x.replace(",", "")) for x in m.groups())
    lines, dtv, cur = {}, [], None
    rec = re.compile(r"==\d+== ([\d,]+)(?: \(([\d,]+) direct, [\d,]+ indirect\))? bytes "
                     r"in ([\d,]+) blocks are (definitely lost|indirectly lost|"
                     r"possibly lost|still reachable) in loss record")
    frame = re.compile(r"==\d+==    (?:at|by) 0x[0-9A-F]+: (\S+) \(([^:()]+):(\d+)\)")
    for ln in p.stderr.splitlines():
        m = rec.search(ln)
        if m:
            total, direct, blocks, cls = m.groups()
            cur = {"cls": cls.replace(" ", "_"), "bytes": int((direct or total).replace(",", "")),
                   "blocks": int(blocks.replace(",", "")), "dtv": False}
            continue
        m = frame.search(ln)
        if not m or not cur:
            continue
        cur["dtv"] |= m.group(1) == "allocate_dtv"
        if m.group(2) in FIXTURE_SOURCES:
            key = (m.group(2), int(m.group(3)))
            _add(lines.setdefault(key, _blank()), cur["cls"], cur["bytes"], cur["blocks"])
            if cur["dtv"]:
                dtv.append((key, cur["cls"], cur["blocks"], cur["bytes"]))
            cur = None
    return summary, lines, dtv


def scan_classes(report):
    """A --scan JSON report's LEAK SUMMARY: {class: (bytes, blocks)}."""
    return {c: (report["scan"][c]["bytes"], report["scan"][c]["blocks"])
            for c in SCAN_CLASSES}


def scan_lines(report):
    """A --scan JSON report per allocating line (the first frame in a
    fixture source), as memcheck()'s."""
    lines = {}
    for s in report["stacks"]:
        key = next(((base(f.get("file")), f.get("line")) for f in s["frames"]
                    if base(f.get("file")) in FIXTURE_SOURCES), None)
        if key is None:
            continue
        acc = lines.setdefault(key, _blank())
        for c in SCAN_CLASSES:
            _add(acc, c, s[c]["bytes"], s[c]["blocks"])
    return lines


def check_scan_vs_memcheck(report, vg, what, preload=False, before_attach=(),
                           no_dtvs=False):
    """The report's classes equal memcheck's (vg: memcheck()'s result), in
    total and per allocating line.  preload: the program ran with the
    in-process engine, whose library's TLS makes each DTV one slot longer
    (DTV_SLOT more bytes per DTV block, in memcheck's class).
    before_attach: sources whose allocations were made before the tool
    attached (-p), which it cannot know: their lines are left out, and
    their bytes and blocks out of memcheck's totals.  no_dtvs: the engine
    does not see the DTVs (the injected one: the dynamic loader allocates
    them through a pointer to libc's malloc, not through a GOT slot), so
    memcheck's DTV records are left out too."""
    vsum, vlines, vdtv = vg
    want_sum = dict(vsum)
    want_lines = {k: dict(v) for k, v in vlines.items() if k[0] not in before_attach}
    for key, cls in vlines.items():
        if key[0] in before_attach:
            for c in SCAN_CLASSES:
                want_sum[c] = (want_sum[c][0] - cls[c][0], want_sum[c][1] - cls[c][1])
    for key, cls, blocks, _ in vdtv if preload else ():
        for acc in (want_sum, want_lines[key]):
            acc[cls] = (acc[cls][0] + DTV_SLOT * blocks, acc[cls][1])
    for key, cls, blocks, nbytes in vdtv if no_dtvs else ():
        for acc in [want_sum] + ([want_lines[key]] if key in want_lines else []):
            acc[cls] = (acc[cls][0] - nbytes, acc[cls][1] - blocks)
        if key in want_lines and all(v == (0, 0) for v in want_lines[key].values()):
            del want_lines[key]
    got = scan_classes(report)
    check(got == want_sum, f"{what}: classes {got}, memcheck's {want_sum} (its own {vsum})")
    got_lines = {k: v for k, v in scan_lines(report).items() if k[0] not in before_attach}
    check(got_lines == want_lines, f"{what}: per line {got_lines}, memcheck's {want_lines}")
