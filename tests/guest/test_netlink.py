#!/usr/bin/env python3
"""memtrack.ko's generic netlink family "memtrack" against /proc/memtrack:
the same rows, numbers and configuration; strict refusal of malformed or
unprivileged requests; a fuzz run; unload with a subscribed socket.

Runs inside the VM with the module loaded, with more memory for the 10,000
process test:  tests/vm/run --mem 2048 -- python3 tests/guest/test_netlink.py
"""
import ctypes
import functools
import os
import random
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import *  # noqa: E402,F403
import nl  # noqa: E402
import uapi  # noqa: E402

ABI = uapi.define("MEMTRACK_ABI_VERSION")
from nl import Genl, NlError, attr, attr_u8, attr_u32, attr_str, attr_nest  # noqa: E402

GROUPS = ("task", "pages", "kmalloc", "mmap", "reclaim", "oom")
MANY = int(os.environ.get("MT_MANY", "10000"))
FUZZ_N = int(os.environ.get("MT_FUZZ_N", "100000"))


def task_diff(proc_row, task):
    """Columns of a /proc/memtrack row whose netlink value differs."""
    bad = []
    for col, v in proc_row.items():
        if v is None:  # '-': hidden from this reader; netlink sends 0
            v = 0
        if task.get(col) != v:
            bad.append(f"{col}: proc {v!r} netlink {task.get(col)!r}")
    return bad


def config_snapshot(g):
    return g.get_config(), read_config()


@test
def genl_ctrl_list_shows_family():
    out = subprocess.run(["genl-ctrl-list", "-d"], capture_output=True, text=True,
                         check=True).stdout
    blocks = re.split(r"\n(?=0x)", out)
    ours = [b for b in blocks if re.match(r"0x[0-9a-f]+ memtrack version 1\b", b)]
    check(len(ours) == 1, f"family memtrack not listed once:\n{out}")
    b = ours[0]
    check(re.search(rf"maxattr {nl.ATTR_MAX}\b", b), f"maxattr: {b}")
    for op in list(range(1, 7)) + list(range(nl.CMD_LEAK_ATTACH, nl.CMD_MAX + 1)):
        check(re.search(rf"op \S+ \(0x{op:02x}\)", b), f"op {op} missing: {b}")
    check(re.search(rf"\(0x{nl.CMD_LEAK_STACKS:02x}\) <has_dump", b),
          f"LEAK_STACKS not a dump: {b}")
    # GENL_ADMIN_PERM is CAP_NET_ADMIN: never ours (SET_CONFIG checks
    # CAP_SYS_ADMIN itself, one_capability_for_every_privileged_path)
    check(not re.search(r"admin_perm", b), f"an op needs CAP_NET_ADMIN: {b}")
    check(re.search(r"\(0x03\) <has_dump", b), f"GET_TASKS not a dump: {b}")
    check(re.search(r"grp events \(0x[0-9a-f]+\)", b), f"no events group: {b}")
    with Genl() as g:
        check("events" in g.groups, f"groups {g.groups}")


@test
def get_task_equals_proc_row():
    with Memload() as m, Genl() as g:
        m.cmd(f"anon {8 << 20}")
        m.cmd("mmaps 10")
        with Stopped([m.pid]):
            t = g.task(m.pid)
            r = row(m.pid)
        check(not task_diff(r, t), f"differs: {task_diff(r, t)}")
        check(t["detailed"] == 1 and t["mmap_calls"] >= 10, f"counters: {t}")
        # A thread: the leader as a thread
        with Stopped([m.pid]):
            t = g.task(m.pid, thread=True)
            r = row(m.pid, "threads")
        check(not task_diff(r, t), f"thread differs: {task_diff(r, t)}")
        m.close()
    with Genl() as g:
        for pid, e in ((m.pid, errno.ESRCH), (0x7ffffff0, errno.ESRCH)):
            try:
                g.task(pid)
                check(False, f"GET_TASK {pid} of no live process answered")
            except NlError as err:
                check(err.errno == e, f"GET_TASK {pid}: {err}")


@test
def get_threads_equal_proc_rows():
    with Memload() as m, Genl() as g:
        m.cmd("threads 5")
        with Stopped([m.pid]):
            rows = g.threads(m.pid)
            proc = [r for rs in read_table("threads").values() for r in rs
                    if r["tgid"] == m.pid]
        # memload's main thread plus the 5 it started
        check(len(rows) == 6 and len(proc) == 6,
              f"{len(rows)} netlink rows, {len(proc)} /proc rows")
        by_pid = {t["pid"]: t for t in rows}
        for r in proc:
            d = task_diff(r, by_pid.get(r["pid"], {}))
            check(not d, f"thread {r['pid']}: {d}")
        try:
            g.request(nl.CMD_GET_THREADS, b"", dump=True)
            check(False, "GET_THREADS without TGID answered")
        except NlError as e:
            check(e.errno == errno.EINVAL, f"GET_THREADS without TGID: {e}")
        m.close()


@test
def get_summary_matches_proc():
    with Genl() as g:
        s = g.summary()
        p = summary()
    check(s["abi_version"] == ABI and s["abi_attr"] == ABI, "abi version")
    check(s["nr_cpus"] == os.cpu_count(), f"nr_cpus {s['nr_cpus']}")
    check(s["mem_total"] == summary_int("MemTotal", p) * 1024, "MemTotal")
    for key, field in (("MemFree", "mem_free"), ("FilePages", "file_pages"),
                       ("AnonPages", "anon_pages"), ("Shmem", "shmem"),
                       ("SUnreclaim", "slab_unreclaimable")):
        near(s[field] // 1024, summary_int(key, p), 4096, key)
    for key, field in (("PageAllocFailures", "page_alloc_failures"),
                       ("OomKills", "oom_kills"), ("SwapFree", "swap_free"),
                       ("DirectReclaimStalls", "direct_reclaim_stalls")):
        mul = 1024 if key == "SwapFree" else 1
        check(s[field] == summary_int(key, p) * mul, f"{key}: {s[field]}")
    # Moving totals: netlink was read first, so never more than /proc.
    for key, field in (("Forks", "forks"), ("Exits", "exits"),
                       ("PageAllocs", "page_allocs"), ("Kmallocs", "kmallocs"),
                       ("AddressSpaceSyscalls", "address_space_syscalls")):
        v = summary_int(key, p)
        check(s[field] <= v and v - s[field] <= max(v // 20, 5000),
              f"{key}: netlink {s[field]} /proc {v}")
    near(s["processes"], summary_int("Processes", p), 2, "Processes")
    near(s["threads"], summary_int("Threads", p), 2, "Threads")
    check(s["untracked"] == summary_int("Untracked", p), "Untracked")


@test
def config_round_trip():
    with Genl() as g:
        cfg, text = config_snapshot(g)
        check(cfg["retention_ms"] == int(text["retention_ms"]), f"{cfg} {text}")
        for name in GROUPS:
            on, att, tot = cfg["hooks"][name]
            check(on == 1 and att == tot and tot > 0, f"{name}: {cfg['hooks'][name]}")
            check(text[name] == "on", f"/proc config {name}")
        try:
            g.set_config(retention_ms=1234, hooks={"mmap": 0, "oom": 0})
            c = g.get_config()
            t = read_config()
            check(c["retention_ms"] == 1234 and t["retention_ms"] == "1234", "retention")
            check(c["hooks"]["mmap"][:2] == (0, 0) and t["mmap"] == "off", "mmap off")
            check(c["hooks"]["oom"][0] == 0 and t["oom"] == "off", "oom off")
            check(summary()["Hooks(mmap)"].startswith("off 0/"), "summary mmap")
        finally:
            g.set_config(retention_ms=cfg["retention_ms"],
                         hooks={"mmap": 1, "oom": 1})
        check(config_snapshot(g) == (cfg, text), "config not restored")


_problems = []


def refused(g, payload, want, cmd=nl.CMD_SET_CONFIG, what=""):
    """Note (in _problems) a request that is not refused with want."""
    before = config_snapshot(g)
    try:
        g.request(cmd, payload)
        _problems.append(f"{what}: accepted")
    except NlError as e:
        if e.errno != want:
            _problems.append(f"{what}: {e.strerror} (want {os.strerror(want)})")
    if config_snapshot(g) != before:
        _problems.append(f"{what}: config changed")


@test
def set_config_refusals():
    grp = lambda *a: attr_nest(nl.ATTR_HOOKS, attr_nest(nl.HOOK_ATTR_GROUP, *a))  # noqa: E731
    name = lambda n: attr_str(nl.HOOK_ATTR_NAME, n)  # noqa: E731
    on = lambda v: attr_u8(nl.HOOK_ATTR_ENABLED, v)  # noqa: E731
    cases = [
        (attr_u32(nl.ATTR_RETENTION_MS, 3600001), errno.ERANGE, "retention above max"),
        (attr_u32(nl.ATTR_RETENTION_MS, 0xffffffff), errno.ERANGE, "retention -1"),
        (attr_u8(nl.ATTR_RETENTION_MS, 5), errno.EINVAL, "u8 retention"),
        (attr(nl.ATTR_RETENTION_MS, b"\1\0"), errno.EINVAL, "2-byte retention"),
        (attr(nl.ATTR_RETENTION_MS, struct.pack("<Q", 5)), errno.EINVAL, "8-byte retention"),
        (b"", errno.EINVAL, "no attribute"),
        (grp(name("bogus"), on(1)), errno.EINVAL, "unknown group"),
        (grp(name("task"), on(0)), errno.EINVAL, "task off"),
        (grp(name("mmap")), errno.EINVAL, "no ENABLED"),
        (grp(on(0)), errno.EINVAL, "no NAME"),
        (grp(name("mmap"), on(2)), errno.ERANGE, "ENABLED 2"),
        (grp(name("mmap"), attr_u32(nl.HOOK_ATTR_ENABLED, 0)), errno.EINVAL, "u32 ENABLED"),
        (grp(attr(nl.HOOK_ATTR_NAME, b"mmap"), on(0)), errno.EINVAL, "NAME without NUL"),
        (grp(name("x" * 40), on(0)), errno.EINVAL, "long NAME"),
        (grp(name("mmap"), on(0), attr_u32(nl.HOOK_ATTR_ATTACHED, 1)), errno.EINVAL,
         "reply-only ATTACHED"),
        (attr_u32(nl.ATTR_RETENTION_MS, 10) + grp(name("mmap"), on(0)) +
         attr_nest(nl.ATTR_HOOKS, attr_nest(nl.HOOK_ATTR_GROUP, name("nope"), on(0))),
         errno.EINVAL, "valid then unknown group"),
        (attr_u32(nl.ATTR_RETENTION_MS, 10) + attr_nest(nl.ATTR_HOOKS, attr_nest(
            nl.HOOK_ATTR_GROUP, name("mmap"), on(0)), attr_nest(
            nl.HOOK_ATTR_GROUP, name("task"), on(0))), errno.EINVAL, "mmap off, task off"),
        (attr(nl.ATTR_HOOKS, attr(nl.HOOK_ATTR_GROUP, b"\0" * 3)), errno.EINVAL,
         "not nested"),
        (attr_u32(nl.ATTR_TASK, 1), errno.EINVAL, "reply-only TASK"),
        (attr_u32(40, 1), errno.EINVAL, "attribute above maxattr"),
    ]
    del _problems[:]
    with Genl() as g:
        for payload, want, what in cases:
            refused(g, payload, want, what=what)
        # Bad PIDs: missing, 0, 2 bytes, u8
        refused(g, b"", errno.EINVAL, nl.CMD_GET_TASK, "GET_TASK without PID")
        refused(g, attr_u32(nl.ATTR_PID, 0), errno.ERANGE, nl.CMD_GET_TASK, "PID 0")
        refused(g, attr(nl.ATTR_PID, b"\1\0"), errno.EINVAL, nl.CMD_GET_TASK, "2-byte PID")
        refused(g, attr_u8(nl.ATTR_PID, 1), errno.EINVAL, nl.CMD_GET_TASK, "u8 PID")
        refused(g, attr_u32(nl.ATTR_PID, 1) + attr_u32(nl.ATTR_THREAD, 1), errno.ERANGE,
                nl.CMD_GET_TASK, "THREAD with payload")
        refused(g, attr_str(nl.ATTR_COMM, "x" * 16), errno.EINVAL, nl.CMD_GET_TASK,
                "16-char COMM")
        for cmd in (0, nl.CMD_EVENT, nl.CMD_MAX + 1, 200, 255):
            refused(g, b"", errno.EOPNOTSUPP, cmd, f"command {cmd}")
        # Truncated header, oversized message
        before = config_snapshot(g)
        for raw in (g.message(nl.CMD_SET_CONFIG)[:18],
                    g.message(nl.CMD_SET_CONFIG, attr_u32(nl.ATTR_RETENTION_MS, 7) +
                              b"\0" * (1 << 17))):
            g.seq += 1
            raw = raw[:8] + struct.pack("<I", g.seq) + raw[12:]
            if len(raw) < 20:
                raw = struct.pack("<I", len(raw)) + raw[4:]
            try:
                g.send_raw(raw)
                g.receive(g.seq, False)
                check(False, f"raw message of {len(raw)} bytes accepted")
            except NlError as e:
                check(e.errno in (errno.EINVAL, errno.ERANGE), f"raw {len(raw)}: {e}")
            except OSError as e:
                check(e.errno == errno.EMSGSIZE, f"raw {len(raw)}: {e}")
        check(config_snapshot(g) == before, "config changed by raw messages")
    check(not _problems, "; ".join(_problems))

    def unprivileged():
        with Genl() as g:
            try:
                g.set_config(retention_ms=1)
                return 2
            except NlError as e:
                if e.errno != errno.EPERM:
                    return 3
            try:
                g.subscribe("events")
                return 4
            except OSError as e:
                if e.errno != errno.EPERM:
                    return 5
            # Reading is for everyone
            g.summary()
            g.task(os.getpid())
            return 0 if len(g.tasks()) > 10 else 6
    with Genl() as g:
        before = config_snapshot(g)
        code = as_nobody(unprivileged)
        check(code == 0, f"unprivileged child: exit {code}")
        check(config_snapshot(g) == before, "config changed by unprivileged")


def try_errno(fn):
    """0 if fn() went through, else its errno."""
    try:
        fn()
        return 0
    except NlError as e:
        return e.errno
    except OSError as e:
        return e.errno


def privileged_paths():
    """Every way to change the config or join the events group, tried once
    (in a child that became some identity): their errnos."""
    with Genl() as g:
        out = {"SET_CONFIG retention": try_errno(lambda: g.set_config(retention_ms=4321)),
               "SET_CONFIG pages off": try_errno(lambda: g.set_config(hooks={"pages": 0})),
               "events group": try_errno(lambda: g.subscribe("events"))}
    out["config file"] = try_errno(lambda: write_or_raise("rss_alert_kb 777\n"))
    return out


def write_or_raise(text, fd=None):
    own = fd is None
    if own:
        fd = os.open(f"{PROC}/config", os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        if own:
            os.close(fd)


@test
def one_capability_for_every_privileged_path():
    """SET_CONFIG (retention; the pages hooks off, as a NET_ADMIN-only
    container did), a write of /proc/memtrack/config and joining the events
    group: allowed exactly with CAP_SYS_ADMIN, for nobody and root alike
    (the file, mode 0644, also only to its owner), otherwise EPERM (EACCES
    opening the file) and nothing changed: tried as nobody, nobody with
    NET_ADMIN, SYS_ADMIN or SYS_PTRACE alone, root without each, root."""
    with StateGuard() as guard:
        for name, uid, caps in identities():
            try:
                got = as_identity(privileged_paths, uid, caps)
            finally:
                st = config_state()
                guard.restore()
            admin = CAP_SYS_ADMIN in caps
            want = {"SET_CONFIG retention": 0 if admin else errno.EPERM,
                    "SET_CONFIG pages off": 0 if admin else errno.EPERM,
                    "events group": 0 if admin else errno.EPERM,
                    "config file": errno.EACCES if uid else 0 if admin else errno.EPERM}
            check(got == want, f"{name}: {got}, want {want}")
            changed = {k for k in diff(guard.config, st)}
            want_changed = ({"retention_ms", "netlink retention_ms", "pages"} if admin else set()) | \
                ({"rss_alert_kb"} if want["config file"] == 0 else set())
            check(changed == want_changed, f"{name}: changed {sorted(changed)}, "
                  f"want {sorted(want_changed)}")
            check(st["retention_ms"] == ("4321" if admin else str(guard.RETENTION_MS)),
                  f"{name}: retention {st['retention_ms']}")
        guard.verify()


@test
def config_refused_through_a_descriptor_opened_without_the_capability():
    """The capability is asked of the opener too (netlink's rule, and now
    the config file's): root refused writing through a socket and a file
    that root without SYS_ADMIN opened and handed over; and nobody writing
    through root's own file."""
    every = bounding_caps()
    with StateGuard() as guard:
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                a.close()
                become(0, every - {CAP_SYS_ADMIN})
                g = Genl()
                fd = os.open(f"{PROC}/config", os.O_WRONLY)
                socket.send_fds(b, [b"x"], [g.sock.fileno(), fd])
                b.recv(1)
                code = 0
            finally:
                os._exit(code)
        b.close()
        _, fds, _, _ = socket.recv_fds(a, 16, 2)
        try:
            check(len(fds) == 2, f"handed {len(fds)} descriptors")
            sock = socket.socket(fileno=fds[0])
            g = Genl(sock=sock)
            check(try_errno(lambda: g.set_config(retention_ms=4321)) == errno.EPERM,
                  "root through a socket opened without SYS_ADMIN: not EPERM")
            check(try_errno(lambda: write_or_raise("rss_alert_kb 777\n", fds[1])) == errno.EPERM,
                  "root through a file opened without SYS_ADMIN: not EPERM")
            sock.close()
            os.close(fds[1])
        finally:
            a.send(b"x")
            a.close()
            os.waitpid(pid, 0)
        fd = os.open(f"{PROC}/config", os.O_WRONLY)
        try:
            got = as_identity(lambda: try_errno(lambda: write_or_raise("rss_alert_kb 777\n", fd)),
                              NOBODY, frozenset())
        finally:
            os.close(fd)
        check(got == errno.EPERM, f"nobody through root's file: {os.strerror(got)}")
        guard.verify()


@test
def dump_equals_proc_with_many_processes():
    cfg = read_config()["retention_ms"]
    set_config("retention_ms", 3600000)   # nothing reaped between the two reads
    prog = os.path.join(TESTBIN, "manyprocs-static")
    comm = os.path.basename(prog)[:15]     # TASK_COMM_LEN
    p = subprocess.Popen([prog, str(MANY)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        t0 = time.monotonic()
        line = p.stdout.readline()
        check(line.startswith("ready"), f"{comm}: {line!r}")
        print(f"    {line.strip()} processes in {time.monotonic() - t0:.1f}s; "
              f"MemFree {meminfo()['MemFree']} kB", flush=True)
        check(int(line.split()[1]) == MANY, f"only {line.strip()} processes forked")
        # manyprocs itself goes on from its "ready" into its read() of
        # stdin, faulting pages in as it goes (seen on 5.10): stopped, it
        # holds still like its children between the two reads
        with Genl() as g, Stopped([p.pid]):
            t0 = time.monotonic()
            dump = g.tasks()
            t1 = time.monotonic()
            proc = read_table("tasks")
            t2 = time.monotonic()
        print(f"    dump {len(dump)} in {t1 - t0:.2f}s, /proc/memtrack/tasks in "
              f"{t2 - t1:.2f}s", flush=True)
        me = os.getpid()
        nl_set = {(t["pid"], t["state"]) for t in dump}
        proc_set = {(r["pid"], r["state"]) for rs in proc.values() for r in rs}
        check(len(nl_set) == len(dump), "duplicate entries in the dump")
        # Kernel threads (no mm) may come and go between the two reads.
        kthreads = {(t["pid"], t["state"]) for t in dump if not t["vm_total"]} | \
                   {(r["pid"], r["state"]) for rs in proc.values() for r in rs
                    if not r["vm_total"]}
        only_nl, only_proc = nl_set - proc_set - kthreads, proc_set - nl_set - kthreads
        check(not only_nl and not only_proc, f"only in dump: {sorted(only_nl)[:10]}, "
                                             f"only in /proc: {sorted(only_proc)[:10]}")
        check(len(dump) > MANY, f"{len(dump)} entries")
        bad = []
        for t in dump:
            rs = [r for r in proc.get(t["pid"], []) if r["state"] == t["state"]]
            if not rs:
                continue    # a kernel thread gone since the dump
            r = rs[0]
            d = task_diff(r, t)
            # Only the test itself and kernel threads (no mm) may move meanwhile.
            if d and t["pid"] != me and t["vm_total"]:
                bad.append((t["pid"], t["comm"], d[:3]))
        check(not bad, f"{len(bad)} processes differ: {bad[:5]}")
        kids = [t for t in dump if t["comm"] == comm]
        check(len(kids) == MANY + 1, f"{len(kids)} manyprocs entries")
        with Genl() as g:
            check(len(g.tasks(comm=comm)) == MANY + 1, "COMM filter")
            only = g.tasks(tgid=p.pid)
            check(len(only) == 1 and only[0]["pid"] == p.pid, "TGID filter")
    finally:
        p.stdin.close()
        p.wait(timeout=600)
        set_config("retention_ms", cfg)


# ---- what a request may change ------------------------------------------------
#
# Each SET_CONFIG as root is checked against a model of what it carries; every
# other request, every unprivileged one and every malformed one must change
# nothing.  "Nothing" is the whole config as /proc/memtrack/config and
# GET_CONFIG show it, every value in its documented range, and the summary's
# task counts once exited tasks are reaped.

VALUE_KEYS = ("retention_ms", "ring_kb", "rss_alert_kb", "rss_growth_kbps", "leak_keep_ms")
TASK_KEYS = ("Processes", "ProcessesExited", "Threads", "ThreadsExited", "Untracked")
DUMP_CMDS = {nl.CMD_GET_TASKS, nl.CMD_GET_THREADS, nl.CMD_LEAK_STACKS,
             nl.CMD_LEAK_BLOCKS}


_nlconf = {}
_nlconf_buf = ctypes.create_string_buffer(1 << 14)


def config_state():
    """The whole config, as {key: value}: /proc/memtrack/config's keys, and
    the hook groups' on/off, attached and total as GET_CONFIG has them.
    (Read by nlfuzz.c through one socket and file per process: the fuzz
    asks after every SET_CONFIG.)"""
    lib = nlfuzz()
    c = _nlconf.get(os.getpid())
    n = lib.nlconf_read(c, _nlconf_buf, len(_nlconf_buf)) if c else -1
    if n < 0:       # none yet, or the module was reloaded
        lib.nlconf_close(c)
        with Genl() as g:
            c = _nlconf[os.getpid()] = lib.nlconf_open(g.family_id)
        check(c, "nlconf_open: no socket or no /proc/memtrack/config")
        n = lib.nlconf_read(c, _nlconf_buf, len(_nlconf_buf))
        check(n >= 0, f"reading the config: {os.strerror(-n)}")
    proc, _, answer = _nlconf_buf.raw[:n].decode().partition("=\n")
    text = dict(line.split() for line in proc.splitlines())
    rows = [line.split() for line in answer.splitlines()]
    hooks = {r[0]: (int(r[1]), int(r[2]), int(r[3])) for r in rows[1:]}
    state = {k: text.get(k) for k in VALUE_KEYS}
    for name in set(text) - set(VALUE_KEYS) | set(hooks):
        state[name] = (text.get(name), hooks.get(name))
    state["netlink retention_ms"] = int(rows[0][1])
    return state


def config_problems(st):
    """Where a config state is outside its documented range, or the two
    interfaces disagree."""
    out = []
    try:
        ms, kb = int(st["retention_ms"]), int(st["ring_kb"])
        if not 0 <= ms <= nl.RETENTION_MS_MAX:
            out.append(f"retention_ms {ms} out of 0..{nl.RETENTION_MS_MAX}")
        if st["netlink retention_ms"] != ms:
            out.append(f"retention_ms: /proc {ms}, GET_CONFIG {st['netlink retention_ms']}")
        if not (nl.RING_KB_MIN <= kb <= nl.RING_KB_MAX and not kb & (kb - 1)):
            out.append(f"ring_kb {kb} not a power of two in range")
        for k in ("rss_alert_kb", "rss_growth_kbps"):
            if not 0 <= int(st[k]) < 1 << 32:
                out.append(f"{k} {st[k]} out of range")
        if not nl.LEAK_KEEP_MS_MIN <= int(st["leak_keep_ms"]) <= nl.LEAK_KEEP_MS_MAX:
            out.append(f"leak_keep_ms {st['leak_keep_ms']} out of range")
    except (TypeError, ValueError) as e:
        out.append(f"unreadable value: {e}")
    groups = set(st) - set(VALUE_KEYS) - {"netlink retention_ms"}
    if groups != set(GROUPS):
        out.append(f"hook groups {sorted(groups)}")
    for name in groups & set(GROUPS):
        text, (on, att, tot) = st[name][0], st[name][1] or (None, None, None)
        if text not in ("on", "off") or on != (text == "on"):
            out.append(f"{name}: /proc {text}, GET_CONFIG {st[name][1]}")
        elif att != (tot if on else 0):
            out.append(f"{name}: {att}/{tot} hooks attached while {text}")
    if st.get("task", ("on",))[0] != "on":
        out.append("task hooks off")
    return out


def settled_tasks(wait_s):
    """The summary's task counts once every exited task is reaped (or as
    they are after wait_s); the number of live processes /proc lists."""
    deadline = time.monotonic() + wait_s
    while True:
        s = summary()
        c = {k: summary_int(k, s) for k in TASK_KEYS}
        live = live_process_count()
        if (c["ProcessesExited"] == 0 and c["ThreadsExited"] == 0 and
                c["Processes"] == live) or time.monotonic() > deadline:
            return c, live


class StateGuard:
    """Holds the config and task counts of before a run; retention is made
    short so exited tasks are reaped soon after it."""

    RETENTION_MS = 1000

    def __enter__(self):
        self.saved = read_config()["retention_ms"]
        set_config("retention_ms", self.RETENTION_MS)
        self.config = config_state()
        self.tasks = settled_tasks(self.RETENTION_MS / 1000 + 5)
        check(not config_problems(self.config), f"before: {config_problems(self.config)}")
        return self

    def restore(self):
        """Root's run may change the config: put back the one of before."""
        st = config_state()
        with Genl() as g:
            g.set_config(retention_ms=self.RETENTION_MS, hooks={
                n: int(self.config[n][0] == "on") for n in GROUPS
                if st[n][0] != self.config[n][0]})
        for k in ("ring_kb", "rss_alert_kb", "rss_growth_kbps", "leak_keep_ms"):
            if st[k] != self.config[k]:
                set_config(k, self.config[k])

    def verify(self):
        """Config as before; no exited task kept past the retention; the
        tracked processes those /proc lists, the untracked as before."""
        st = config_state()
        check(st == self.config, f"config changed: {diff(self.config, st)}")
        c, live = settled_tasks(self.RETENTION_MS / 1000 + 5)
        b, blive = self.tasks
        check(c["ProcessesExited"] == 0 and c["ThreadsExited"] == 0,
              f"exited tasks kept {self.RETENTION_MS} ms after the run: {c}")
        check(c["Processes"] == live and b["Processes"] == blive,
              f"Processes {b['Processes']} -> {c['Processes']}, /proc {blive} -> {live}")
        check(c["Untracked"] == b["Untracked"], f"Untracked {b} -> {c}")

    def __exit__(self, *exc):
        set_config("retention_ms", self.saved)


def diff(a, b):
    return {k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)}


def expected_config(before, effects):
    """before with what an accepted SET_CONFIG carried applied."""
    st = dict(before)
    for k, v in effects:
        if k == "retention_ms":
            st["retention_ms"], st["netlink retention_ms"] = str(v), v
        else:
            text, (_, _, tot) = st[k][0], st[k][1]
            st[k] = ("on" if v else "off", (v, tot if v else 0, tot))
    return st


def wellformed(rnd, target):
    """For every attribute of the family's policy, a function making one
    well-formed instance (type, length and range right) of it as (bytes,
    [(config key, value)] it asks to set)."""
    def hooks():
        effects = [(rnd.choice(GROUPS), rnd.randint(0, 1))
                   for _ in range(rnd.randint(1, 3))]
        return attr_nest(nl.ATTR_HOOKS, *(attr_nest(
            nl.HOOK_ATTR_GROUP, attr_str(nl.HOOK_ATTR_NAME, n),
            attr_u8(nl.HOOK_ATTR_ENABLED, on)) for n, on in effects)), effects

    def retention():
        v = rnd.choice([0, nl.RETENTION_MS_MAX, rnd.randint(0, nl.RETENTION_MS_MAX)])
        return attr_u32(nl.ATTR_RETENTION_MS, v), [("retention_ms", v)]

    def unwind():
        row = struct.pack("<IihBB", 0x1000, 16, 0, 1, 0) + \
            struct.pack("<IihBB", 0x2000, 0, 0, 0, 0)
        return attr_nest(nl.ATTR_LEAK_UNWIND, nl.attr_u64(1, 0x400000),
                         nl.attr_u64(2, 0x500000), nl.attr_u64(3, 0),
                         attr_u32(4, 2), attr_u32(5, 0), attr(6, row)), []

    plain = {
        nl.ATTR_PID: lambda: attr_u32(nl.ATTR_PID, target),
        nl.ATTR_TGID: lambda: attr_u32(nl.ATTR_TGID, target),
        nl.ATTR_COMM: lambda: attr_str(nl.ATTR_COMM, "memload"),
        nl.ATTR_THREAD: lambda: attr(nl.ATTR_THREAD, b""),
        nl.ATTR_LEAK_PROBES: lambda: attr_nest(nl.ATTR_LEAK_PROBES, nl.probe_nest(
            os.path.join(TESTBIN, "memload"), 0, 1)),
        nl.ATTR_LEAK_FLAGS: lambda: attr_u32(nl.ATTR_LEAK_FLAGS,
                                             rnd.choice([0, nl.LEAK_F_CHILDREN])),
        nl.ATTR_MIN_AGE_MS: lambda: attr_u32(nl.ATTR_MIN_AGE_MS, rnd.getrandbits(32)),
        nl.ATTR_LEAK_ALL: lambda: attr(nl.ATTR_LEAK_ALL, b""),
    }
    out = {a: (lambda f=f: (f(), [])) for a, f in plain.items()}
    out.update({nl.ATTR_RETENTION_MS: retention, nl.ATTR_HOOKS: hooks,
                nl.ATTR_LEAK_UNWIND: unwind})
    return out


POOL = 64      # instances of each attribute a request's one is picked from


def every_subset(privileged, target, seed):
    """Every command (1..CMD_MAX) with every subset of well-formed
    attributes, in a random order; returns the problems seen.  The
    requests are sent and answered in nlsubset.c, each attribute one of
    POOL instances wellformed() made; the checks are made here."""
    lib = nlfuzz()
    gen = wellformed(random.Random(seed), target)
    attrs = sorted(gen)
    insts = [(j, gen[a]()) for j, a in enumerate(attrs) for _ in range(POOL)]
    blob, offs, lens, owners = b"", [], [], []
    for j, (data, _) in insts:
        offs.append(len(blob))
        lens.append(len(data))
        owners.append(j)
        blob += data

    def ints(v):
        return (ctypes.c_int * len(v))(*v)
    with Genl() as g:
        family = g.family_id
    sub = lib.nlsub_new(family, seed, len(attrs), blob, ints(offs), ints(lens), ints(owners),
                        len(offs), nl.CMD_MAX, nl.CMD_SET_CONFIG,
                        sum(1 << c for c in DUMP_CMDS))
    check(sub, "nlsub_new: no socket, or an instance over 1 KiB")
    problems = []
    last = config_state()
    what, cmd, err = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    picks = (ctypes.c_int * len(attrs))()
    carrying = (attrs.index(nl.ATTR_RETENTION_MS), attrs.index(nl.ATTR_HOOKS))
    try:
        while len(problems) <= 5 and \
                lib.nlsub_next(sub, ctypes.byref(what), ctypes.byref(cmd), ctypes.byref(err),
                               picks) >= 0:
            if what.value == UNANSWERED:
                problems.append(f"command {cmd.value}: no answer ({os.strerror(err.value)})")
            elif what.value == AWAITED:     # a SET_CONFIG, answered err
                st = config_state()
                effects = [e for k in picks if k >= 0 for e in insts[k][1][1]]
                carried = any(picks[j] >= 0 for j in carrying)
                if not privileged:
                    want, want_err = last, errno.EPERM
                elif not carried or ("task", 0) in effects:
                    want, want_err = last, errno.EINVAL
                else:
                    want, want_err = expected_config(last, effects), 0
                if err.value != want_err or st != want:
                    problems.append(f"SET_CONFIG {effects}: "
                                    f"{os.strerror(err.value) if err.value else 'ok'}"
                                    f" (want {os.strerror(want_err) if want_err else 'ok'}),"
                                    f" changed {diff(want, st)}")
                problems += [f"after SET_CONFIG {effects}: {p}"
                             for p in config_problems(st)]
                last = st
            else:                           # PERIODIC: every 256, and the last
                st = config_state()
                if st != last:
                    problems.append(f"changed by other commands: {diff(last, st)}")
                last = st
        answered, requests = ctypes.c_long(), ctypes.c_long()
        lib.nlsub_counts(sub, ctypes.byref(answered), ctypes.byref(requests))
    finally:
        lib.nlsub_free(sub)
    print(f"    {'root' if privileged else 'nobody'}: {requests.value} well-formed "
          f"requests, {answered.value} answered without error", flush=True)
    return problems


@test
def every_command_with_every_attribute_subset():
    with StateGuard() as guard:
        with Memload() as m:
            def unprivileged():
                p = every_subset(False, m.pid, 3)
                for line in p:
                    print(f"    nobody: {line}", flush=True)
                return 1 if p else 0
            code = as_nobody(unprivileged)
            check(code == 0, f"unprivileged requests: exit {code}")
            guard.verify()
            try:
                p = every_subset(True, m.pid, 4)
            finally:
                guard.restore()
            check(not p, "root: " + "; ".join(p))
            with Genl() as g:
                try:
                    g.leak_stats(m.pid)
                    check(False, "a leak session outlived its socket")
                except NlError as e:
                    check(e.errno == errno.ENOENT, f"LEAK_STATS after the run: {e}")
            m.close()
        guard.verify()


def carried_keys(attrs):
    """The config keys a SET_CONFIG's attributes could name at all: what
    an accepted one may change."""
    keys = set()
    off = 0
    while off + 4 <= len(attrs):
        n, t = struct.unpack_from("<HH", attrs, off)
        if n < 4:
            break
        t &= nl.NLA_TYPE_MASK
        if t == nl.ATTR_RETENTION_MS:
            keys |= {"retention_ms", "netlink retention_ms"}
        elif t == nl.ATTR_HOOKS:
            keys |= {g for g in GROUPS if g.encode() + b"\0" in attrs[off:off + n]}
        off += (n + 3) & ~3
    return keys


# tests/progs/nlfuzz/: the fuzz run's messages (nlfuzz.c) and every_subset()'s
# requests (nlsubset.c) are made, sent and their answers drained there; the
# checks are made here.  What a call hands back: a SET_CONFIG's answer, the
# periodic check's turn, or (nlsubset.c) a request left unanswered.
NLFUZZ = os.path.join(TESTBIN, "libnlfuzz.so")
NONE, LOST = -1, -2     # NLFUZZ_NONE: no answer; NLFUZZ_LOST: it may be lost
AWAITED, PERIODIC, UNANSWERED = 1, 2, 3


@functools.lru_cache(maxsize=None)
def nlfuzz():
    lib = ctypes.CDLL(NLFUZZ)
    lib.nlconf_open.restype = ctypes.c_void_p
    lib.nlconf_open.argtypes = [ctypes.c_int]
    lib.nlconf_read.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    lib.nlconf_close.argtypes = [ctypes.c_void_p]
    lib.nlfuzz_new.restype = ctypes.c_void_p
    lib.nlfuzz_new.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_ulonglong, ctypes.c_long]
    lib.nlfuzz_next.restype = ctypes.c_long
    lib.nlfuzz_next.argtypes = [ctypes.c_void_p] + [ctypes.POINTER(ctypes.c_int)] * 2 + \
        [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
    lib.nlfuzz_counts.argtypes = [ctypes.c_void_p] + [ctypes.POINTER(ctypes.c_long)] * 2
    lib.nlfuzz_free.argtypes = [ctypes.c_void_p]
    lib.nlsub_new.restype = ctypes.c_void_p
    lib.nlsub_new.argtypes = [ctypes.c_int, ctypes.c_ulonglong, ctypes.c_int, ctypes.c_char_p] + \
        [ctypes.POINTER(ctypes.c_int)] * 3 + [ctypes.c_int] * 3 + [ctypes.c_uint]
    lib.nlsub_next.restype = ctypes.c_long
    lib.nlsub_next.argtypes = [ctypes.c_void_p] + [ctypes.POINTER(ctypes.c_int)] * 4
    lib.nlsub_counts.argtypes = [ctypes.c_void_p] + [ctypes.POINTER(ctypes.c_long)] * 2
    lib.nlsub_free.argtypes = [ctypes.c_void_p]
    return lib


def fuzz(n, seed, privileged):
    """n random messages (nlfuzz.c). A SET_CONFIG to the family is awaited:
    refused, it changed nothing; accepted, it changed only keys it names.
    Every 500 messages the family must answer a valid request, and nothing
    but a SET_CONFIG may have changed the config.  Returns the problems
    seen."""
    lib = nlfuzz()
    problems = []
    last = config_state()
    what, err, alen = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    buf = ctypes.create_string_buffer(1 << 14)
    sent, replies = ctypes.c_long(), ctypes.c_long()
    with Genl() as check_sock:
        f = lib.nlfuzz_new(check_sock.family_id, int(privileged), seed, n)
        check(f, "nlfuzz_new: no socket")
        try:
            while True:
                i = lib.nlfuzz_next(f, ctypes.byref(what), ctypes.byref(err), buf,
                                    ctypes.byref(alen))
                if i < 0:
                    break
                st = config_state()
                if what.value == AWAITED:
                    e, attrs = err.value, buf.raw[:alen.value]
                    changed = set(diff(last, st))
                    if e == NONE:
                        problems.append(f"message {i}: SET_CONFIG not answered")
                    elif e != LOST and (e or not privileged) and changed:
                        problems.append(f"message {i}: refused ({os.strerror(e)}) but "
                                        f"changed {diff(last, st)}")
                    elif changed - carried_keys(attrs):
                        problems.append(f"message {i}: changed {diff(last, st)}, "
                                        f"names only {sorted(carried_keys(attrs))}")
                    problems += [f"message {i}: {p}" for p in config_problems(st)]
                else:       # PERIODIC
                    s = check_sock.summary()
                    if s["abi_version"] != ABI:
                        problems.append(f"message {i}: summary abi {s['abi_version']}")
                    if st != last:
                        problems.append(f"message {i}: changed by what was not a "
                                        f"SET_CONFIG: {diff(last, st)}")
                last = st
                if len(problems) > 5:
                    break
        finally:
            lib.nlfuzz_counts(f, ctypes.byref(sent), ctypes.byref(replies))
            lib.nlfuzz_free(f)
    sent, replies = sent.value, replies.value
    print(f"    seed {seed}: {n} messages, {sent} sent, {replies} replies read",
          flush=True)
    if sent <= n * 0.9 or replies <= n // 2:
        problems.append(f"{sent} sent, {replies} replies of {n}")
    return problems


@test
def fuzz_many_messages():
    """FUZZ_N random messages, shared among the identities a privileged path
    is tried as (nobody; nobody with NET_ADMIN, SYS_ADMIN or SYS_PTRACE
    alone; root without each; root): a SET_CONFIG accepted only with
    SYS_ADMIN, and only changing what it names."""
    with StateGuard() as guard:
        ids = identities()
        times = []
        for seed, (name, uid, caps) in enumerate(ids, 1):
            t0 = time.monotonic()
            admin = CAP_SYS_ADMIN in caps
            try:
                p = as_identity(lambda: fuzz(FUZZ_N // len(ids), seed, admin), uid, caps)
            finally:
                if admin:
                    guard.restore()
            times.append(f"{name} {time.monotonic() - t0:.1f}s")
            check(not p, f"{name} fuzz: " + "; ".join(p))
            guard.verify()
        print(f"    {FUZZ_N // len(ids) * len(ids)} messages: {', '.join(times)}", flush=True)
        with Genl() as g:
            check(g.summary()["abi_version"] == ABI and len(g.tasks()) > 10, "not answering")
            with Memload() as m:
                check(g.task(m.pid)["pid"] == m.pid, "GET_TASK after fuzz")
                m.close()
        guard.verify()


@test
def set_config_changes_only_what_it_carries():
    """The review's case: HOOKS alone must leave retention_ms as it was;
    RETENTION_MS alone the hooks."""
    with StateGuard() as guard, Genl() as g:
        try:
            g.set_config(retention_ms=4321)
            g.set_config(hooks={"oom": 0})
            st = config_state()
            check(st["retention_ms"] == "4321" and st["netlink retention_ms"] == 4321,
                  f"HOOKS alone changed retention_ms to {st['retention_ms']}")
            check(st["oom"][0] == "off", f"oom {st['oom']}")
            g.set_config(retention_ms=77)
            st2 = config_state()
            check(diff(st, st2) == {"retention_ms": ("4321", "77"),
                                    "netlink retention_ms": (4321, 77)},
                  f"RETENTION_MS alone changed {diff(st, st2)}")
        finally:
            guard.restore()
        guard.verify()


@test
def unload_with_subscribed_socket():
    g = Genl()
    g.subscribe("events")
    time.sleep(0.5)   # the relay notices the listener and starts its reader
    with Memload() as m:
        m.cmd("mmaps 5")
        m.close()
    time.sleep(0.2)
    r = subprocess.run(["rmmod", "memtrack"], capture_output=True, text=True)
    check(r.returncode == 0, f"rmmod: {r.stderr}")
    check(not os.path.exists(PROC), "/proc/memtrack still there")
    try:
        g.summary()
        check(False, "request to an unloaded family answered")
    except OSError as e:
        check(e.errno in (errno.ENOENT, errno.EOPNOTSUPP), f"after unload: {e}")
    g.close()
    r = subprocess.run(["insmod", MODULE], capture_output=True, text=True)
    check(r.returncode == 0, f"insmod: {r.stderr}")
    with Genl() as g:
        check(g.summary()["processes"] > 0, "after reload")
        g.subscribe("events")
        check(len(g.tasks()) > 10, "dump after reload")


if __name__ == "__main__":
    sys.exit(run_tests(sys.argv))
