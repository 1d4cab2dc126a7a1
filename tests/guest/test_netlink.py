#!/usr/bin/env python3
"""memtrack.ko's generic netlink family "memtrack" against /proc/memtrack:
the same rows, numbers and configuration; strict refusal of malformed or
unprivileged requests; a fuzz run; unload with a subscribed socket.

Runs inside the VM with the module loaded, with more memory for the 10,000
process test:  tests/vm/run --mem 2048 -- python3 tests/guest/test_netlink.py
"""
import os
import random
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import *  # noqa: E402,F403
import nl  # noqa: E402
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
    check(re.search(r"\(0x06\) <admin_perm", b), f"SET_CONFIG not admin: {b}")
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
    check(s["abi_version"] == 1 and s["abi_attr"] == 1, "abi version")
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
        (grp(name("task"), on(0)), errno.EPERM, "task off"),
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
            nl.HOOK_ATTR_GROUP, name("task"), on(0))), errno.EPERM, "mmap off, task off"),
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


@test
def dump_equals_proc_with_many_processes():
    cfg = read_config()["retention_ms"]
    set_config("retention_ms", 3600000)   # nothing reaped between the two reads
    p = subprocess.Popen([os.path.join(TESTBIN, "manyprocs"), str(MANY)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        t0 = time.monotonic()
        line = p.stdout.readline()
        check(line.startswith("ready"), f"manyprocs: {line!r}")
        print(f"    {line.strip()} processes in {time.monotonic() - t0:.1f}s; "
              f"MemFree {meminfo()['MemFree']} kB", flush=True)
        check(int(line.split()[1]) == MANY, f"only {line.strip()} processes forked")
        with Genl() as g:
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
        kids = [t for t in dump if t["comm"] == "manyprocs"]
        check(len(kids) == MANY + 1, f"{len(kids)} manyprocs entries")
        with Genl() as g:
            check(len(g.tasks(comm="manyprocs")) == MANY + 1, "COMM filter")
            only = g.tasks(tgid=p.pid)
            check(len(only) == 1 and only[0]["pid"] == p.pid, "TGID filter")
    finally:
        p.stdin.close()
        p.wait(timeout=600)
        set_config("retention_ms", cfg)


def fuzz_attrs(rnd, depth=0):
    out = b""
    for _ in range(rnd.randint(0, 4)):
        t = rnd.randint(0, 14) if rnd.random() < 0.9 else rnd.randint(0, 0xffff)
        k = rnd.random()
        if k < 0.2 and depth < 3:
            payload = fuzz_attrs(rnd, depth + 1)
            if rnd.random() < 0.7:
                t |= nl.NLA_F_NESTED
        elif k < 0.6:
            payload = struct.pack(rnd.choice(["<B", "<H", "<I", "<Q"]),
                                  rnd.getrandbits(8) if rnd.random() < 0.5 else 1)
        elif k < 0.8:
            payload = rnd.choice([b"task", b"mmap", b"oom", b"x" * 17, b""]) + \
                (b"\0" if rnd.random() < 0.8 else b"")
        else:
            payload = rnd.randbytes(rnd.randint(0, 48))
        a = attr(t & 0xffff, payload)
        if rnd.random() < 0.05:
            a = struct.pack("<H", rnd.randint(0, 0xffff)) + a[2:]
        out += a
    return out


def fuzz(n, seed, allow_set):
    """n random messages; a valid request after every 500 must be answered."""
    rnd = random.Random(seed)
    sent = replies = 0
    with Genl() as g, Genl() as check_sock:
        g.sock.setblocking(False)
        for i in range(n):
            cmd = rnd.choice([rnd.randint(0, 8), rnd.randint(0, 255),
                              nl.CMD_GET_TASK, nl.CMD_SET_CONFIG, nl.CMD_GET_TASKS])
            if cmd == nl.CMD_SET_CONFIG and not allow_set:
                cmd = nl.CMD_GET_CONFIG
            flags = rnd.choice([nl.NLM_F_REQUEST, nl.NLM_F_REQUEST | nl.NLM_F_ACK,
                                nl.NLM_F_REQUEST | nl.NLM_F_DUMP,
                                rnd.getrandbits(16) | nl.NLM_F_REQUEST])
            family = g.family_id if rnd.random() < 0.97 else rnd.getrandbits(16)
            if not allow_set and family == nl.GENL_ID_CTRL:
                family = g.family_id
            msg = g.message(cmd, fuzz_attrs(rnd), flags, family,
                            version=rnd.choice([1, 1, 0, 2, 255]), seq=i)
            r = rnd.random()
            if r < 0.03:
                msg = msg[:rnd.randint(0, len(msg))]
            elif r < 0.05:
                msg = struct.pack("<I", rnd.getrandbits(32)) + msg[4:]
            try:
                g.send_raw(msg)
                sent += 1
            except OSError:
                pass
            while True:
                try:
                    g.sock.recv(1 << 20)
                    replies += 1
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:   # ENOBUFS: replies overran; keep going
                    pass
            if i % 500 == 0:
                s = check_sock.summary()
                if s["abi_version"] != 1:
                    return 10
                check_sock.get_config()
    print(f"    seed {seed}: {n} messages, {sent} sent, {replies} replies read",
          flush=True)
    return 0 if sent > n * 0.9 and replies > n // 2 else 11


@test
def fuzz_many_messages():
    with Genl() as g:
        before = config_snapshot(g)
    t0 = time.monotonic()
    code = as_nobody(lambda: fuzz(FUZZ_N // 2, 1, True))
    t1 = time.monotonic()
    check(code == 0, f"unprivileged fuzz: exit {code}")
    check(fuzz(FUZZ_N - FUZZ_N // 2, 2, False) == 0, "root fuzz")
    t2 = time.monotonic()
    print(f"    {FUZZ_N} messages: unprivileged {t1 - t0:.1f}s, root {t2 - t1:.1f}s",
          flush=True)
    with Genl() as g:
        check(config_snapshot(g) == before, "config changed by the fuzz")
        check(g.summary()["abi_version"] == 1 and len(g.tasks()) > 10, "not answering")
        with Memload() as m:
            check(g.task(m.pid)["pid"] == m.pid, "GET_TASK after fuzz")
            m.close()


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
