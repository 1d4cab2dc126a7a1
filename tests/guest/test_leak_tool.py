#!/usr/bin/env python3
"""memtrack-leak as a tool, over a traced program's whole life:
`memtrack-leak -- CMD` (traced from its first allocation, one report at its
exit, the program's exit status passed on, signals forwarded), and for
`-p PID`: the target exiting or exec'ing mid-trace, the tracer killed with
SIGKILL (breakpoints gone, target working, a new attach works) and the
module unloaded under it (clear error, target unharmed).

Runs inside the VM with the module loaded:
    tests/vm/run -- python3 tests/guest/test_leak_tool.py [test ...]
With LEAK_ENGINE=preload the `-- CMD` tests run with the in-process engine
(`--engine preload`, no module: the host suite leak-preload) and the -p
tests, which need the module, are not there.  With LEAK_ENGINE=inject the
-p tests run with the injected in-process engine (`--engine inject`, no
module: tests/guest/test_leak_inject.py imports them), those of the
module's uprobes alone (breakpoints, unload, its unwind tables) and the
`-- CMD` tests are not there.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import (MODULE, ROOT, TestFailure, Workload, check, run_tests,  # noqa: E402
                   test, variant_test)
from nl import Genl, NlError  # noqa: E402
import leakfx as lfx  # noqa: E402

TOOL = lfx.TOOL
PROBES = os.path.join(ROOT, "build", "tests", "user", "leak_probes")
# per process: suites of other checkouts may run at the same time
OUT = f"/tmp/memtrack-leak-report.{os.getpid()}"
ENGINE = lfx.ENGINE
# memtrack-leak with the engine under test, for -- CMD
TOOL_CMD = [TOOL, "--engine", ENGINE]
# ld.so's entry code as its symbols name the place it calls _dl_init from:
# x86-64's _dl_start_user; arm64's _start, sized over its _dl_start_user
# label (elfutils, as memtrack-leak, prefers a symbol whose size holds it)
LDSO_ENTRY = {"x86_64": "_dl_start_user", "aarch64": "_start"}[os.uname().machine]


def pid_test(fn):
    """A test of -p PID: the module's engine or the injected one."""
    return test(fn) if ENGINE in ("uprobe", "inject") else fn


def uprobe_test(fn):
    """A test of the module's engine alone."""
    return test(fn) if ENGINE == "uprobe" else fn


def cmd_test(fn):
    """A test of -- CMD: either engine a command can have."""
    return test(fn) if ENGINE in ("uprobe", "preload") else fn


def cmd_variant_test(fn):
    """The same, fp and nofp."""
    return variant_test(lfx.VARIANTS)(fn) if ENGINE in ("uprobe", "preload") else fn


def fixture(name, variant="fp"):
    return os.path.join(ROOT, "build", "tests", "leaks", variant, name)


def json_docs(text):
    return [json.loads(ln) for ln in text.splitlines() if ln.startswith("{")]


def converse(argv, dialog, out=OUT, keep=False):
    """Run argv (a memtrack-leak command line writing to out), writing each
    answer after the line it waits for: (exit status, stderr, reports); out
    is removed unless keep."""
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    for say, answer in dialog:
        line = p.stdout.readline().strip()
        check(line == say, f"{os.path.basename(argv[-1])} under memtrack-leak: {line!r}, "
              f"expected {say!r} ({p.stderr.read() if not line else ''})")
        p.stdin.write(answer + "\n")
        p.stdin.flush()
    _, err = p.communicate(timeout=120)
    docs = []
    if os.path.exists(out):
        with open(out) as f:
            docs = json_docs(f.read())
        if not keep:
            os.unlink(out)
    return p.returncode, err, docs


def run_command(name, variant="fp", says=("ready", "done")):
    """`memtrack-leak --json -o OUT -- fixture`, fed a line after each of
    its lines says: (exit status, stderr, the reports)."""
    # --top: the fixtures hold more stacks than the default ten (stdio buffers).
    return converse(TOOL_CMD + ["--json", "--top", "50", "-o", OUT, "--",
                                fixture(name, variant)], [(say, "go") for say in says])


def run_simple(args, timeout=60, **kw):
    r = subprocess.run(TOOL_CMD + ["--json", "-o", OUT] + args, capture_output=True,
                       text=True, timeout=timeout, **kw)
    docs = []
    if os.path.exists(OUT):
        with open(OUT) as f:
            docs = json_docs(f.read())
        os.unlink(OUT)
    return r.returncode, r.stderr, docs


@cmd_variant_test
def command_c_apis_exact(variant):
    """-- CMD: every C API's leak exact, one report, exit status 0; stacks
    complete: libc's tables were sent when ld.so had mapped it; frames'
    offsets in their objects are addr2line's."""
    rc, err, docs = run_command("c_apis", variant)
    check(rc == 0, f"exit {rc}: {err}")
    check(len(docs) == 1, f"{len(docs)} reports, expected one at exit")
    lfx.check_markers(docs[0], "c_apis")
    lfx.check_all_callers(docs[0], "c_apis")
    lfx.check_offsets(docs[0])


def frames_of(report, file, line):
    """The (function, file base, module base) frames of the one stack whose
    allocating frame is at file:line."""
    hits = [s for s in report["stacks"] if lfx.frame_at(s, file, line)]
    check(len(hits) == 1, f"{len(hits)} stacks at {file}:{line}")
    return [(f.get("function"), lfx.base(f.get("file")), lfx.base(f.get("module")))
            for f in hits[0]["frames"]]


@cmd_variant_test
def command_leaks_before_main(variant):
    """-- CMD sees a constructor's and a static initializer's leaks: traced
    from the first allocation.  Their stacks are complete: the program's
    initializers run from libc's call_init in __libc_start_main, called by
    _start; the leak in main goes through main."""
    rc, err, docs = run_command("before_main", variant)
    check(rc == 0, f"exit {rc}: {err}")
    check(len(docs) == 1, f"{len(docs)} reports")
    lfx.check_markers(docs[0], "before_main")
    m = lfx.markers("before_main")
    for leak, fn in (("constructor", "early"), ("static_init", None)):
        file, line, _, _ = m[leak]
        fr = frames_of(docs[0], file, line)
        where = f"before_main/{leak}: stack {[f[0] for f in fr]}"
        check(not any(f[0] == "main" for f in fr), f"{where}: main before main")
        if fn:
            check(any(f[0] == fn and f[1] == "before_main.cc" for f in fr),
                  f"{where}: no {fn} in before_main.cc")
        outer = [(f[0], (f[2] or "").split(".so")[0]) for f in fr[-3:]]
        check(outer == [("call_init", "libc"), ("__libc_start_main_impl", "libc"),
                        ("_start", "before_main")],
              f"{where}: outermost frames {outer}, expected libc's call_init, "
              "__libc_start_main_impl, then _start")
    file, line, _, _ = m["in_main"]
    for s in docs[0]["stacks"]:
        if lfx.frame_at(s, file, line):
            lfx.check_callers(s, "before_main/in_main", file)


@cmd_variant_test
def command_cpp_cases(variant):
    """-- CMD on the C++ fixture: libstdc++'s operators probed before it is
    even mapped, its tables sent before its constructors run (its emergency
    pool, allocated there, has a complete stack through ld.so's _dl_init)."""
    rc, err, docs = run_command("cpp_cases", variant)
    check(rc == 0, f"exit {rc}: {err}")
    lfx.check_markers(docs[0], "cpp_cases")
    check(len(docs[0]["mismatches"]) == 1, f"mismatches: {docs[0]['mismatches']}")
    lfx.check_all_callers(docs[0], "cpp_cases")
    pool = [s for s in docs[0]["stacks"]
            if (lfx.base(s["frames"][0].get("module")) or "").startswith("libstdc++")]
    check(len(pool) == 1, f"{len(pool)} stacks allocated by libstdc++ itself")
    fr = [(f.get("function"), lfx.base(f.get("module"))) for f in pool[0]["frames"]]
    check([f[0] for f in fr[-2:]] == ["_dl_init", LDSO_ENTRY] and
          all((m or "").startswith("ld-linux") for _, m in fr[1:]),
          f"libstdc++'s constructor stack {fr}: not ld.so's _dl_init, {LDSO_ENTRY}")


@cmd_variant_test
def command_dlopen(variant):
    """-- CMD on a program that dlopens a library mid-run: the loader's
    rendezvous sends the library's tables before it runs, so its leak is
    exact and its callers reach main; frames' offsets (in the library too)
    are addr2line's."""
    rc, err, docs = run_command("dlopen", variant, ("ready", "loaded", "done"))
    check(rc == 0, f"exit {rc}: {err}")
    check(len(docs) == 1, f"{len(docs)} reports")
    lfx.check_markers(docs[0], "lib/dlleak.c")
    lfx.check_all_callers(docs[0], "lib/dlleak.c", "dlopen.c")
    lfx.check_offsets(docs[0])


@cmd_variant_test
def command_threads(variant):
    """-- CMD on 8 threads leaking concurrently: the first thread takes the
    loader breakpoint out (only the main thread is ptraced) and lets the new
    thread go untraced; every thread's leak exact, its stack through libc's
    start_thread."""
    rc, err, docs = run_command("threads", variant)
    check(rc == 0, f"exit {rc}: {err}")
    check(len(docs) == 1, f"{len(docs)} reports")
    lfx.check_markers(docs[0], "threads")
    lfx.check_all_callers(docs[0], "threads", thread=True)


def preload_variant_test(fn):
    """A -- CMD test, fp and nofp, of the in-process engine (the uprobe
    engine's -p suites hold the same fixtures)."""
    return variant_test(lfx.VARIANTS)(fn) if ENGINE == "preload" else fn


@preload_variant_test
def command_c_edges(variant):
    """-- CMD on a realloc chain, a failed realloc (its block kept), malloc(0)
    and an 8 MiB block: each exact, callers through main."""
    rc, err, docs = run_command("c_edges", variant)
    check(rc == 0 and len(docs) == 1, f"exit {rc}, {len(docs)} reports: {err}")
    lfx.check_markers(docs[0], "c_edges")
    lfx.check_all_callers(docs[0], "c_edges")


@preload_variant_test
def command_freeall(variant):
    """-- CMD on a program that frees all it allocates: no stack allocated
    by its code (what libc holds to the exit, its stdio buffers, is there,
    allocated by libc for fixture_wait's stdio)."""
    rc, err, docs = run_command("freeall", variant)
    check(rc == 0 and len(docs) == 1, f"exit {rc}, {len(docs)} reports: {err}")
    own = []
    for s in docs[0]["stacks"]:
        mine = [f for f in s["frames"] if lfx.base(f.get("module")) == "freeall"]
        if mine and lfx.base(mine[0].get("file")) == "freeall.c":
            own.append(s)
    check(not own, f"{len(own)} stacks in freeall.c: {own}")


@preload_variant_test
def command_fds(variant):
    """-- CMD --fds on fds.c, two rounds: each LEAKFD(name): N marker's line
    holds exactly 2N descriptors at the exit; the CLOSED lines none (close(),
    and the raw close syscall and close_range no hook sees, dropped at the
    exit by asking the kernel)."""
    want, closed_lines = {}, []
    with open(lfx.source("fds")) as f:
        for n, text in enumerate(f, 1):
            m = re.search(r"LEAKFD\((\w+)\): (\d+)", text)
            if m:
                want[n] = 2 * int(m.group(2))
            elif "/* CLOSED */" in text:
                closed_lines.append(n)
    rc, err, docs = converse(TOOL_CMD + ["--fds", "--json", "--top", "50", "-o", OUT, "--",
                                         fixture("fds", variant)],
                             [("ready", "go"), ("done", "again"), ("done", "end")])
    check(rc == 0 and len(docs) == 1, f"exit {rc}, {len(docs)} reports: {err}")
    got = {}
    for s in docs[0]["fds"]:
        for f in s["frames"]:
            if lfx.base(f.get("file")) == "fds.c":
                got[f["line"]] = got.get(f["line"], 0) + s["count"]
                break
    check({ln: got.get(ln, 0) for ln in want} == want, f"fds per line {got}, expected {want}")
    closed = [ln for ln in closed_lines if got.get(ln)]
    check(not closed, f"closed descriptors reported at lines {closed}: {got}")


def scan_at_exit(name, variant):
    """--scan -- CMD on a fixture, three runs: the program stops at its exit
    (the in-process engine: in its exit, after its handlers and destructors;
    the uprobe engine: at its exit stop, PTRACE_EVENT_EXIT) for the scan,
    the exiting thread's stack a root from the frame that called exit()
    up; every run's classes equal memcheck's at the same exit, in total and
    per allocating line; the program's exit status 0."""
    vg = lfx.fixture_memcheck(fixture(name, variant))
    for run in range(3):
        rc, err, docs = run_simple(["--top", "50", "--scan", "--", fixture(name, variant)],
                                   input=lfx.MEMCHECK_INPUT)
        check(rc == 0 and len(docs) == 1, f"run {run}: exit {rc}, {len(docs)} reports: {err}")
        lfx.check_scan_vs_memcheck(docs[0], vg, f"{name} {variant} run {run}",
                                   preload=ENGINE == "preload")


@cmd_variant_test
def command_scan_at_exit(variant):
    """scan.c: a lost tree and cycle (2 definitely + 8 indirectly lost), a
    block reached only through an interior pointer, one a global holds."""
    scan_at_exit("scan", variant)


@cmd_variant_test
def command_scan_threads_at_exit(variant):
    """scan_threads.c: joined threads whose stacks glibc keeps (their DTVs
    possibly lost, a block only a dead frame held definitely), blocks whose
    chunk ends in the arena's top chunk or a free one (definitely lost)."""
    scan_at_exit("scan_threads", variant)


@cmd_variant_test
def command_scan_mismatches(variant):
    """--scan -- CMD on cpp_cases: the scan report carries the mismatched
    releases too, as the stack report does: new[] freed by delete, with the
    allocating and the freeing line."""
    rc, err, docs = run_simple(["--top", "50", "--scan", "--", fixture("cpp_cases", variant)],
                               input="go\ngo\n")
    check(rc == 0 and len(docs) == 1, f"exit {rc}: {err}")
    lfx.check_mismatches(docs[0], "cpp_cases")


@preload_variant_test
def command_by_lib(variant):
    """--by-lib -- CMD on bylib + libbylib.so: per calling object and API the
    live bytes and blocks and the calls and bytes allocated (freed or not),
    exactly those of the markers, in JSON; libc's and the loader's own rows
    are there too, and nothing else of the fixture."""
    rc, err, docs = run_simple(["--by-lib", "--", fixture("bylib", variant)],
                               input="go\ngo\n")
    check(rc == 0 and len(docs) == 1, f"exit {rc}: {err}")
    lfx.check_bylib(docs[0], variant)


@preload_variant_test
def command_follow_forks(variant):
    """-- CMD -f on forks.c: the parent's 2 x 48 under its pid and each of
    3 children's 4 x 100 under its own, left at their exit; nothing of the
    child that exec'd (its blocks went with its program), no other pid.
    Without -f: the parent's alone."""
    lines = {k: v[1] for k, v in lfx.markers("forks").items()}
    for follow in (True, False):
        p = subprocess.Popen(TOOL_CMD + ["--json", "--top", "50", "-o", OUT]
                             + (["-f"] if follow else []) + ["--", fixture("forks", variant)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        check(p.stdout.readline().strip() == "ready", "forks did not start")
        p.stdin.write("go\n")
        p.stdin.flush()
        kids = [int(x) for x in p.stdout.readline().split()[1:]]
        check(len(kids) == 4 and p.stdout.readline().strip() == "done", "forks round")
        for _ in range(2):
            p.stdin.write("go\n")
            p.stdin.flush()
        _, err = p.communicate(timeout=120)
        check(p.returncode == 0, f"exit {p.returncode}: {err}")
        with open(OUT) as f:
            docs = json_docs(f.read())
        check(len(docs) == 1, f"{len(docs)} reports: {err}")
        by = {}
        for s in docs[0]["stacks"]:
            for name, line in lines.items():
                if lfx.frame_at(s, "forks.c", line):
                    b = by.setdefault((name, s["pid"]), [0, 0])
                    b[0] += s["blocks"]
                    b[1] += s["bytes"]
        pid = docs[0]["pid"]
        want = {("parent", pid): [2, 96]}
        if follow:
            want.update({("child", k): [4, 400] for k in kids[:3]})
        check(by == want, f"-f {follow}: {by}, expected {want}")
        pids = {s["pid"] for s in docs[0]["stacks"]}
        check(pids <= ({pid} | set(kids[:3]) if follow else {pid}),
              f"-f {follow}: stacks of pids {pids}")


def preload_test(fn):
    """A -- CMD test of the in-process engine alone."""
    return test(fn) if ENGINE == "preload" else fn


@uprobe_test
def unwind_sources_agree():
    """The module's two ways to unwind code without frame pointers give the
    same stacks: rules read in place from each object's .eh_frame_hdr (the
    default) and tables of rows built by the tool (MEMTRACK_UNWIND=rows).
    cpp_cases (nofp), perl (fixed hash seed) and sqlite3 under `-- CMD`:
    every stack's frames (function, file, line, offset in its object),
    blocks and bytes equal."""
    perl = ('my %h; $h{$_} = [$_ x 3] for 1..3000; my @l = map { {k => $_} } 1..500; '
            'print scalar(keys %h), "\\n"')
    cases = [([fixture("cpp_cases", "nofp")], "go\ngo\n"),
             (["/usr/bin/perl", "-e", perl], None),
             (["/usr/bin/sqlite3"], "create table t(x); insert into t values (1),(2),(40);"
              " select sum(x), group_concat(x) from t;\n")]
    env = dict(os.environ, PERL_HASH_SEED="0", PERL_PERTURB_KEYS="0")
    for argv, stdin in cases:
        got = {}
        # values of one length: perl copies the environment
        for mode in ("auto", "rows"):
            e = dict(env, MEMTRACK_UNWIND=mode)
            r = subprocess.run(TOOL_CMD + ["--json", "--top", "100000", "-o", OUT, "--"] +
                               argv, input=stdin, capture_output=True, text=True,
                               timeout=300, env=e)
            with open(OUT) as f:
                docs = json_docs(f.read())
            os.unlink(OUT)
            check(r.returncode == 0 and len(docs) == 1,
                  f"{argv[0]} ({mode}): exit {r.returncode}, {len(docs)} reports: {r.stderr}")
            got[mode] = sorted(
                (tuple((f.get("function") or "", f.get("file") or "", f.get("line") or 0,
                        f.get("offset") or 0) for f in st["frames"]),
                 st["blocks"], st["bytes"]) for st in docs[0]["stacks"])
        name = os.path.basename(argv[0])
        a, b = got["auto"], got["rows"]
        check(len(a) > 3 and max(len(x[0]) for x in a) > 5,
              f"{name}: {len(a)} stacks, the deepest {max(len(x[0]) for x in a)} frames")
        diff = [x for x in a if x not in b][:2] + [x for x in b if x not in a][:2]
        check(a == b, f"{name}: {len(a)} stacks in place, {len(b)} from rows; "
              f"differing: {diff}")


@preload_test
def command_as_nobody():
    """The in-process engine needs neither the module nor root: as nobody,
    c_apis's leaks exact (nobody's own report file)."""
    out = "/tmp/memtrack-leak-nobody.json"
    if os.path.exists(out):
        os.unlink(out)
    rc, err, docs = converse(["setpriv", "--reuid", "nobody", "--regid", "nogroup",
                              "--clear-groups"] + TOOL_CMD +
                             ["--json", "--top", "50", "-o", out, "--", fixture("c_apis")],
                             [("ready", "go"), ("done", "go")], out=out, keep=True)
    check(rc == 0, f"exit {rc}: {err}")
    check(os.stat(out).st_uid != 0, "the report is not nobody's")
    os.unlink(out)
    check(len(docs) == 1, f"{len(docs)} reports")
    lfx.check_markers(docs[0], "c_apis")


@preload_test
def command_real_programs_unharmed():
    """python3 (sqlite3 module), perl and sqlite3 run under the in-process
    engine print exactly what they print natively, with the same exit
    status, and get one report; python3 ending by os._exit(3) (no exit
    handlers) is still reported, from the shared state, with status 3."""
    py = ("import sqlite3; c = sqlite3.connect(':memory:'); c.execute('create table t(x)'); "
          "c.executemany('insert into t values (?)', [(i,) for i in range(2000)]); "
          "print(c.execute('select sum(x), count(*) from t').fetchone())")
    cases = [(["/usr/bin/python3", "-c", py], None, 0),
             (["/usr/bin/perl", "-e", 'my %h; $h{$_} = [$_ x 3] for 1..20000; '
               'print scalar(keys %h), " ", join(",", (sort { $a <=> $b } keys %h)[0..4]), "\\n"'],
              None, 0),
             (["/usr/bin/sqlite3"], "create table t(x); insert into t values (1),(2),(40);"
              " select sum(x), group_concat(x) from t;\n", 0),
             (["/usr/bin/python3", "-c", "import os; print('bye', flush=True); os._exit(3)"],
              None, 3)]
    for argv, stdin, status in cases:
        native = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60)
        traced = subprocess.run(TOOL_CMD + ["--json", "-o", OUT, "--"] + argv, input=stdin,
                                capture_output=True, text=True, timeout=120)
        with open(OUT) as f:
            docs = json_docs(f.read())
        os.unlink(OUT)
        name = os.path.basename(argv[0])
        check(native.returncode == status and traced.returncode == status,
              f"{name}: exit {traced.returncode}, natively {native.returncode}: {traced.stderr}")
        check(traced.stdout == native.stdout and native.stdout,
              f"{name}: printed {traced.stdout!r}, natively {native.stdout!r}")
        check(len(docs) == 1 and docs[0]["total_blocks"] > 0,
              f"{name}: {len(docs)} reports: {traced.stderr}")


@preload_test
def command_static_program_uses_uprobes():
    """A static program, which no LD_PRELOAD reaches: the tool says so and
    traces it with uprobes (without the module: the module's error, exit 1).
    --engine with -p, or an unknown engine: usage errors, exit 2."""
    prog = os.path.join(ROOT, "build", "tests", "static-malloc64")   # tests/progs/static/
    rc, err, docs = run_simple(["--", prog])
    check("is statically linked: a preloaded library cannot reach it; tracing it "
          "with uprobes" in err, f"no word of the switch: {err!r}")
    if os.path.exists("/sys/module/memtrack"):
        check(rc == 0 and len(docs) == 1, f"static under uprobes: exit {rc}, {err}")
    else:
        check(rc == 1 and "memtrack.ko is not loaded" in err and not docs,
              f"static without the module: exit {rc}, {err!r}")
    for args in (["--engine", "preload", "-p", "1"], ["--engine", "ebpf", "--", "true"]):
        r = subprocess.run([TOOL] + args, capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and "--engine" in r.stderr and not r.stdout,
              f"{args}: exit {r.returncode}, {r.stderr!r}")


@cmd_test
def command_exit_status():
    """The program's exit status is the tool's; 128+N when killed by signal
    N; 127 when it cannot be run; a report in every case it exits itself."""
    rc, err, docs = run_simple(["--", "sh", "-c", "exit 7"])
    check(rc == 7 and len(docs) == 1, f"exit 7: {rc}, {len(docs)} reports, {err}")
    rc, err, docs = run_simple(["--", "sh", "-c", "kill -TERM $$"])
    check(rc == 128 + signal.SIGTERM and len(docs) == 1,
          f"SIGTERM: {rc}, {len(docs)} reports, {err}")
    rc, err, docs = run_simple(["--", "/nonexistent/program"])
    check(rc == 127 and "/nonexistent/program" in err and not docs, f"missing: {rc} {err}")
    # found but not executable: the shell's 126, as --help says
    rc, err, docs = run_simple(["--", "/etc/passwd"])
    check(rc == 126 and "/etc/passwd: Permission denied" in err and not docs,
          f"not executable: {rc} {err}")


@cmd_test
def command_scan_of_a_program_that_allocates_nothing():
    """--scan -- true (coreutils' true allocates nothing: memcheck's
    summary, compared with, is all zero): one scan report of nothing, exit
    0.  It said "ended without reaching its exit: no scan", which was false:
    the in-process engine starts at the first allocation, and there was
    none."""
    (true,), stdin = lfx.memcheck_runs()[-1]
    summary = lfx.memcheck([true], stdin)[0]
    rc, err, docs = run_simple(["--scan", "--", true])
    check(rc == 0 and len(docs) == 1 and "no scan" not in err,
          f"exit {rc}, {len(docs)} reports: {err}")
    check(lfx.scan_classes(docs[0]) == summary and docs[0]["stacks"] == [],
          f"scan {docs[0]['scan']}, memcheck {summary}")


@cmd_test
def command_that_execs():
    """A program that execs another runs on untraced to its own exit status:
    the session ends with the exec, said once, no report, no SIGTRAP."""
    want = "memtrack-leak: env exec'd another program: the session ended with it; no report\n"
    for args, status in ((["env", "true"], 0),
                         (["env", "sh", "-c", "echo out; exit 5"], 5)):
        r = subprocess.run(TOOL_CMD + ["--json", "-o", OUT, "--"] + args,
                           capture_output=True, text=True, timeout=60)
        docs = []
        if os.path.exists(OUT):
            with open(OUT) as f:
                docs = json_docs(f.read())
            os.unlink(OUT)
        check(r.returncode == status and r.stderr == want and not docs,
              f"{args}: exit {r.returncode}, stderr {r.stderr!r}, {len(docs)} reports")
        check(r.stdout == ("out\n" if status else ""), f"{args}: stdout {r.stdout!r}")


def traced(pid, tool, timeout=60):
    """Until the tool traces pid, run as its command: the module's probes
    in (uprobe), or the in-process engine's library mapped after the exec
    (preload).  A fixed second was not enough on a busy emulated guest: a
    SIGKILL before the attach left no exit to report."""
    if ENGINE != "preload":
        check(lfx.armed(pid, timeout, tool=tool), f"{pid} not traced in {timeout} s")
        return
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        lfx.tool_alive(tool)
        try:
            with open(f"/proc/{pid}/maps") as f:
                if "libmemtrack-preload.so" in f.read():
                    return
        except OSError:
            pass
        time.sleep(0.05)
    check(False, f"{pid} not traced in {timeout} s")


@cmd_test
def command_signals_forwarded():
    """SIGTERM to the tool reaches the program, which exits by it and is
    reported on; SIGKILL of the program: no exit stop, a clear message,
    137."""
    for sig, target in ((signal.SIGTERM, "tool"), (signal.SIGKILL, "program")):
        p = subprocess.Popen(TOOL_CMD + ["--json", "-o", OUT, "--", "sleep", "60"],
                             stderr=subprocess.PIPE, text=True)
        end = time.monotonic() + 30
        kids = []
        while time.monotonic() < end and not kids:
            time.sleep(0.2)
            with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
                kids = [int(x) for x in f.read().split()]
        check(kids, "sleep did not start")
        traced(kids[0], p)
        os.kill(p.pid if target == "tool" else kids[0], sig)
        _, err = p.communicate(timeout=60)
        check(p.returncode == 128 + sig, f"{sig.name} to the {target}: exit "
              f"{p.returncode}, {err}")
        with open(OUT) as f:
            docs = json_docs(f.read())
        os.unlink(OUT)
        if sig == signal.SIGTERM:
            check(len(docs) == 1, f"no report after SIGTERM: {err}")
        else:
            # Whether a SIGKILLed thread still stops at PTRACE_EVENT_EXIT
            # depends on the kernel: a report then, else a message.
            check(len(docs) == 1 if "without stopping at its exit" not in err
                  else not docs, f"SIGKILL: {len(docs)} reports, {err}")


# ---- -p PID -------------------------------------------------------------------------

class Fixture(Workload):
    def __init__(self, name, argv=None):
        """The fixture name, or the program argv, which says "ready" first."""
        self.p = subprocess.Popen(argv or [fixture(name)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        check(self.p.stdout.readline().strip() == "ready", f"{name} did not start")
        self.pid = self.p.pid

    def step(self, expect="done"):
        self.p.stdin.write("go\n")
        self.p.stdin.flush()
        if expect:
            line = self.p.stdout.readline().strip()
            check(line == expect, f"fixture said {line!r}, expected {expect!r}")


def tool_p(pid, *args):
    """memtrack-leak -p PID; returns once it traces (text: once it says so)."""
    t = subprocess.Popen(lfx.tool_p(pid, *args), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    if "--json" in args:    # says nothing on stderr
        check(lfx.armed(pid), "memtrack-leak did not attach")
        return t
    line = t.stderr.readline()
    check("tracing" in line, f"memtrack-leak did not attach: {line!r}")
    return t


def probed_bytes(pid):
    """[(path, offset, byte in the target's memory, byte in the file)] at
    every offset memtrack-leak probes in pid."""
    out = subprocess.run([PROBES, str(pid)], capture_output=True, text=True,
                         check=True).stdout
    with open(f"/proc/{pid}/maps") as f:
        maps = [ln.split() for ln in f if len(ln.split()) >= 6]
    res = []
    with open(f"/proc/{pid}/mem", "rb") as mem:
        for line in out.splitlines():
            path, entry, skip = line.split()[0], line.split()[1], line.split()[4]
            off = int(entry, 16) + int(skip)
            for m in maps:
                lo, hi = (int(x, 16) for x in m[0].split("-"))
                moff = int(m[2], 16)
                if m[5] == path and moff <= off < moff + hi - lo:
                    mem.seek(lo + off - moff)
                    with open(path, "rb") as f:
                        f.seek(off)
                        res.append((path, off, mem.read(1), f.read(1)))
                    break
    check(len(res) == len(out.splitlines()) and res, f"probes not all mapped: {out}")
    return res


def session_gone(pid, timeout=10):
    """The module's session of pid gone (injected: nothing to ask, the
    tool's state went with the tool)."""
    if lfx.INJECT:
        return True
    end = time.monotonic() + timeout
    with Genl() as g:
        while time.monotonic() < end:
            try:
                g.leak_stats(pid)
            except NlError:
                return True
            time.sleep(0.05)
    return False


def session_there(pid, timeout=30):
    return lfx.armed(pid, timeout)


def until_ended(fx, t, timeout=30):
    """The fixture exits; memtrack-leak -p's stdout and stderr once it ends
    too, which must be within 15 s of the exit though its interval is 60 s
    (it asks for the session's state a few times a second; 15 s leaves room
    for a loaded emulated guest)."""
    fx.p.wait(timeout=timeout)
    t0 = time.monotonic()
    out, err = t.communicate(timeout=timeout)
    check(time.monotonic() - t0 < 15, "memtrack-leak lingered after the target ended")
    return out, err


@pid_test
def last_report_at_exit():
    """The target exiting between reports: memtrack-leak -p says so and makes
    at once a last report of what it held at its exit (the module kept the
    session's tables): c_apis's markers exactly, after one report before;
    exit 3, the session freed."""
    with Fixture("c_apis") as fx:
        t = tool_p(fx.pid, "-i", "60", "--json")
        fx.step()
        fx.step(expect=None)
        out, err = until_ended(fx, t)
        check(t.returncode == 3 and
              err.endswith(f"memtrack-leak: process {fx.pid} exited; what it held at its exit:\n"),
              f"exit {t.returncode}: {err}")
        docs = json_docs(out)
        check(len(docs) == 1 and docs[0].get("ended") == "exit" and
              docs[0]["report"] == 1, f"reports: {out[:300]}")
        lfx.check_markers(docs[0], "c_apis")
        check(session_gone(fx.pid), "the session outlived its last report")


@pid_test
def last_report_text_after_reports():
    """In text, after periodic reports: the last one's header says "at its
    exit" and its totals are the previous report's (nothing changed since)."""
    with Fixture("c_apis") as fx:
        t = tool_p(fx.pid, "-i", "1")
        fx.step()
        time.sleep(3)       # a report or two
        fx.step(expect=None)
        out, err = until_ended(fx, t)
        heads = re.findall(r"pid \d+ report (\d+)( at its exit)?: (\d+) bytes in (\d+) blocks", out)
        check(len(heads) >= 2 and heads[-1][1] and not any(h[1] for h in heads[:-1]),
              f"headers: {heads}")
        check(heads[-1][2:] == heads[-2][2:], f"totals changed at the exit: {heads[-2:]}")
        check(t.returncode == 3, f"exit {t.returncode}: {err}")


@pid_test
def last_report_at_exec():
    """The target exec'ing another program: a last report "at its exec" of
    the old program's blocks (every stack the process's, the totals their
    sum), nothing of the new program's maps (no warning about its unwind
    tables), exit 3, the session freed; the new program runs."""
    with Fixture("sh", ["sh", "-c", "echo ready; read x; exec sleep 60"]) as fx:
        t = tool_p(fx.pid, "-i", "60", "--json")
        fx.step(expect=None)
        out, err = t.communicate(timeout=30)
        want = f"memtrack-leak: process {fx.pid} exec'd another program; what it held at its exec:\n"
        check(t.returncode == 3 and err.endswith(want) and "warning" not in err,
              f"exit {t.returncode}: {err!r}")
        docs = json_docs(out)
        check(len(docs) == 1 and docs[0].get("ended") == "exec", f"reports: {out[:300]}")
        d = docs[0]
        check(d["total_blocks"] > 0 and
              d["total_bytes"] == sum(s["bytes"] for s in d["stacks"]) and
              all(s["pid"] == fx.pid for s in d["stacks"]), f"report: {out[:400]}")
        check(session_gone(fx.pid), "the session outlived its last report")
        with open(f"/proc/{fx.pid}/comm") as f:
            check(f.read().strip() == "sleep", "the target did not exec")


@pid_test
def last_report_by_lib_at_exit():
    """--by-lib -p: the last report at the exit names the objects the process
    had (its maps are gone): bylib's rows exactly."""
    with Fixture("bylib") as fx:
        t = tool_p(fx.pid, "-i", "60", "--json", "--by-lib")
        fx.step()
        fx.step(expect=None)
        out, err = until_ended(fx, t)
        docs = json_docs(out)
        check(t.returncode == 3 and len(docs) == 1 and docs[0].get("ended") == "exit",
              f"exit {t.returncode}: {err} {out[:300]}")
        lfx.check_bylib(docs[0], "at the exit")


@pid_test
def scan_p_target_exits():
    """--scan -p: the target exiting takes the memory a scan needs; the tool
    says so (and where a scan at the exit is made), exit 3."""
    with Fixture("c_apis") as fx:
        t = tool_p(fx.pid, "-i", "60", "--scan")
        fx.step()
        fx.step(expect=None)
        out, err = until_ended(fx, t)
        check(t.returncode == 3 and "no scan at the end" in err and not out,
              f"exit {t.returncode}: {err} {out[:300]}")


@pid_test
def first_report_whole_stacks():
    """-p on busy (nofp: no frame pointers) while it allocates every
    millisecond: in the first report its allocating line is one stack, whole
    from busy_alloc through busy_round and main to _start (the unwind tables
    go in before the probes), three runs."""
    line = next(n for n, text in enumerate(open(lfx.source("busy.c")), 1) if "BUSY" in text)
    for run in range(3):
        with Fixture("busy", [fixture("busy", "nofp")]) as fx:
            t = subprocess.run(lfx.tool_p(fx.pid, "-i", "2", "-n", "1", "--json"),
                               capture_output=True, text=True, timeout=120)
            docs = json_docs(t.stdout)
            check(t.returncode == 0 and len(docs) == 1, f"exit {t.returncode}: {t.stderr}")
            hits = [s for s in docs[0]["stacks"] if lfx.frame_at(s, "busy.c", line)]
            check(len(hits) == 1, f"run {run}: {len(hits)} stacks at busy.c:{line}: "
                  f"{[[f.get('function') for f in s['frames']] for s in hits]}")
            fns = [f.get("function") for f in hits[0]["frames"]]
            check(fns[:3] == ["busy_alloc", "busy_round", "main"] and "_start" in fns,
                  f"run {run}: stack {fns}")
            check(all(s["pid"] == fx.pid for s in docs[0]["stacks"]), "other pid")


@uprobe_test
def tracer_sigkill():
    """SIGKILL of memtrack-leak: every breakpoint it had put in (int3 at each
    probed offset while attached) is gone, the target works, and a new
    memtrack-leak reports its leaks exactly."""
    with Fixture("c_apis") as fx:
        t = tool_p(fx.pid, "-i", "100")
        live = probed_bytes(fx.pid)
        check(all(m == b"\xcc" and f != b"\xcc" for _, _, m, f in live),
              f"not every probed offset holds a breakpoint: {live}")
        t.kill()
        t.wait()
        check(session_gone(fx.pid), "session still there after the tracer's SIGKILL")
        after = probed_bytes(fx.pid)
        check(all(m == f for _, _, m, f in after), f"breakpoints left: {after}")
        t2 = subprocess.Popen(lfx.tool_p(fx.pid, "-i", "2", "-n", "2", "--json"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(session_there(fx.pid), "the second memtrack-leak did not attach")
        fx.step()
        out, err = t2.communicate(timeout=120)
        check(t2.returncode == 0, f"second memtrack-leak: exit {t2.returncode}: {err}")
        lfx.check_markers(json_docs(out)[-1], "c_apis")
        fx.step(expect=None)
        check(fx.p.wait(timeout=30) == 0, "c_apis did not exit cleanly")


@uprobe_test
def module_unload_while_attached():
    """rmmod under memtrack-leak -p: the unload is clean, the tool says the
    session ended and exits 3, the target runs on without breakpoints."""
    with Fixture("c_apis") as fx:
        t = tool_p(fx.pid, "-i", "1")
        check(all(m == b"\xcc" for _, _, m, _ in probed_bytes(fx.pid)), "no breakpoints")
        try:
            r = subprocess.run(["rmmod", "memtrack"], capture_output=True, text=True)
            check(r.returncode == 0, f"rmmod: {r.stderr}")
            out, err = t.communicate(timeout=30)
            check(t.returncode == 3 and "session ended" in err and "unloaded" in err,
                  f"exit {t.returncode}: {err}")
            after = probed_bytes(fx.pid)
            check(all(m == f for _, _, m, f in after), f"breakpoints left: {after}")
            fx.step()
            fx.step(expect=None)
            check(fx.p.wait(timeout=30) == 0, "c_apis did not exit cleanly")
        finally:
            if t.poll() is None:
                t.kill()
                t.wait()
            if not os.path.exists("/sys/module/memtrack"):
                r = subprocess.run(["insmod", MODULE], capture_output=True, text=True)
                if r.returncode:
                    raise TestFailure(f"insmod: {r.stderr}")


if __name__ == "__main__":
    sys.exit(run_tests(sys.argv))
