"""A small generic-netlink client for memtrack's "memtrack" family: pure
Python (socket.AF_NETLINK), no third-party modules.

    with Genl() as g:
        g.summary(); g.task(pid); g.tasks(); g.threads(tgid)
        g.get_config(); g.set_config(retention_ms=..., hooks={"mmap": 0})

Requests that fail raise NlError(errno, extack message).  Layouts follow
include/uapi/linux/memtrack.h.
"""
import errno
import os
import re
import socket
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

NETLINK_GENERIC = 16
SOL_NETLINK = 270
NETLINK_ADD_MEMBERSHIP = 1
NETLINK_CAP_ACK = 10
NETLINK_EXT_ACK = 11

NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_MULTI, NLM_F_ACK = 1, 2, 4
NLM_F_ROOT, NLM_F_MATCH = 0x100, 0x200
NLM_F_DUMP = NLM_F_ROOT | NLM_F_MATCH
NLM_F_ACK_TLVS = 0x200
NLMSGERR_ATTR_MSG = 1
NLA_F_NESTED = 1 << 15
NLA_TYPE_MASK = ~((1 << 15) | (1 << 14))

GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 1, 2
CTRL_ATTR_MCAST_GROUPS = 7
CTRL_ATTR_MCAST_GRP_NAME, CTRL_ATTR_MCAST_GRP_ID = 1, 2



def _uapi_enum(name):
    """{constant: value} of an enum of include/uapi/linux/memtrack.h."""
    with open(os.path.join(ROOT, "include", "uapi", "linux", "memtrack.h")) as f:
        body = re.search(r"enum %s \{(.*?)\};" % name, f.read(), re.S).group(1)
    out, v = {}, -1
    for line in body.splitlines():
        m = re.match(r"\s*(\w+)\s*(?:=\s*(\w+))?\s*,?\s*(?:/\*.*)?$", line)
        if m:
            v = int(m.group(2), 0) if m.group(2) else v + 1
            out[m.group(1)] = v
    return out


def _uapi_define(name):
    """The value of a numeric #define of include/uapi/linux/memtrack.h."""
    with open(os.path.join(ROOT, "include", "uapi", "linux", "memtrack.h")) as f:
        m = re.search(r"^#define %s\s+\(?(\w+)(?:U\s*<<\s*(\d+))?\)?" % name,
                      f.read(), re.M)
    v = int(m.group(1).rstrip("U"), 0)
    return v << int(m.group(2)) if m.group(2) else v


RETENTION_MS_MAX = _uapi_define("MEMTRACK_RETENTION_MS_MAX")
RING_KB_MIN = _uapi_define("MEMTRACK_RING_KB_MIN")
RING_KB_MAX = _uapi_define("MEMTRACK_RING_KB_MAX")
LEAK_F_CHILDREN = _uapi_define("MEMTRACK_LEAK_F_CHILDREN")


# CMD_*, ATTR_*, HOOK_ATTR_*, PROBE_ATTR_* and CMD_MAX, ATTR_MAX, ... as the
# header numbers them, so that a new command or attribute needs no edit here.
for _enum in ("memtrack_cmd", "memtrack_attr", "memtrack_hook_attr",
              "memtrack_probe_attr"):
    for _k, _v in _uapi_enum(_enum).items():
        if _k.startswith("__MEMTRACK_"):
            globals()[_k[len("__MEMTRACK_"):]] = _v - 1
        else:
            globals()[_k[len("MEMTRACK_"):]] = _v


def _counter_names():
    path = os.path.join(ROOT, "include", "uapi", "linux", "memtrack_counters.h")
    with open(path) as f:
        return re.findall(r"^MEMTRACK_COUNTER\(\s*\w+\s*,\s*(\w+)\s*\)", f.read(), re.M)


COUNTERS = _counter_names()
MM_FIELDS = ("rss_anon", "rss_file", "rss_shmem", "swap", "rss_peak",
             "vm_total", "vm_data", "vm_stack", "vm_exec", "pgtables")
TASK = struct.Struct(f"<iiIIBBBBI16s{len(MM_FIELDS)}Q{len(COUNTERS)}QiIQQQQ")
TASK_STAT_FIELDS = ("ppid", "pad2", "cgroup_id", "utime_ns", "stime_ns", "start_ns")

SUMMARY_FIELDS = (
    "abi_version", "nr_cpus", "uptime_ns",
    "mem_total", "mem_free", "file_pages", "active_anon", "inactive_anon",
    "active_file", "inactive_file", "unevictable", "dirty", "writeback",
    "anon_pages", "mapped", "shmem", "slab_reclaimable", "slab_unreclaimable",
    "page_tables", "anon_huge", "swap_free",
    "page_alloc_failures", "reclaim_scanned", "reclaim_reclaimed",
    "reclaim_dirty", "reclaim_writeback", "direct_reclaim_stalls",
    "direct_reclaim_ns", "page_allocs", "page_frees", "kmallocs", "kfrees",
    "address_space_syscalls", "forks", "exits", "oom_kills",
    "records_generated", "records_lost",
    "processes", "processes_exited", "threads", "threads_exited", "untracked")
SUMMARY = struct.Struct("<IIQ" + "Q" * 18 + "Q" * 17 + "IIIIQ")
assert len(SUMMARY_FIELDS) == 43


class NlError(OSError):
    def __init__(self, err, msg=""):
        super().__init__(err, f"{os.strerror(err)}{': ' + msg if msg else ''}")
        self.msg = msg


def parse_task(data):
    """struct memtrack_task as a dict in the columns of /proc/memtrack/tasks."""
    v = TASK.unpack_from(data)
    t = {"pid": v[0], "tgid": v[1], "uid": v[2], "threads": v[3],
         "state": "X" if v[4] else "R", "detailed": v[5], "oom_victim": v[6],
         "fail_gfp": v[8], "comm": v[9].split(b"\0", 1)[0].decode("latin-1")}
    mm = v[10:10 + len(MM_FIELDS)]
    t.update(zip(MM_FIELDS, mm))
    ctr = v[10 + len(MM_FIELDS):10 + len(MM_FIELDS) + len(COUNTERS)]
    for name, c in zip(COUNTERS, ctr):
        # Signed quantities are two's complement, as /proc prints them.
        t[name] = c - (1 << 64) if c >= 1 << 63 else c
    t.update(zip(TASK_STAT_FIELDS, v[10 + len(MM_FIELDS) + len(COUNTERS):]))
    del t["pad2"]
    return t


def parse_summary(data):
    return dict(zip(SUMMARY_FIELDS, SUMMARY.unpack_from(data)))


# ---- attributes ---------------------------------------------------------------

def attr(atype, payload):
    n = 4 + len(payload)
    return struct.pack("<HH", n, atype) + payload + b"\0" * (-n % 4)


def attr_u8(atype, v):
    return attr(atype, struct.pack("<B", v))


def attr_u32(atype, v):
    return attr(atype, struct.pack("<I", v))


def attr_str(atype, s):
    return attr(atype, s.encode() + b"\0")


def attr_nest(atype, *children):
    return attr(atype | NLA_F_NESTED, b"".join(children))


def parse_attrs(data):
    """{type: [payload, ...]} of a run of attributes."""
    out = {}
    off = 0
    while off + 4 <= len(data):
        n, t = struct.unpack_from("<HH", data, off)
        if n < 4:
            break
        out.setdefault(t & NLA_TYPE_MASK, []).append(bytes(data[off + 4:off + n]))
        off += (n + 3) & ~3
    return out


def u32(b):
    return struct.unpack("<I", b[:4])[0]


# ---- the socket ----------------------------------------------------------------

class Genl:
    def __init__(self, family="memtrack", rcvbuf=4 << 20):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        self.sock.setsockopt(SOL_NETLINK, NETLINK_CAP_ACK, 1)
        self.sock.bind((0, 0))
        self.seq = 1
        self.family_id, self.groups = self.resolve(family)

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def resolve(self, name):
        msgs = self._request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                             attr_str(CTRL_ATTR_FAMILY_NAME, name), version=1)
        a = parse_attrs(msgs[0][1])
        groups = {}
        for nest in a.get(CTRL_ATTR_MCAST_GROUPS, []):
            for g in parse_attrs(nest).values():
                ga = parse_attrs(g[0])
                groups[ga[CTRL_ATTR_MCAST_GRP_NAME][0].rstrip(b"\0").decode()] = \
                    u32(ga[CTRL_ATTR_MCAST_GRP_ID][0])
        return struct.unpack("<H", a[CTRL_ATTR_FAMILY_ID][0][:2])[0], groups

    def subscribe(self, group):
        self.sock.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, self.groups[group])

    def message(self, cmd, payload=b"", flags=NLM_F_REQUEST | NLM_F_ACK,
                family=None, version=1, seq=None):
        family = self.family_id if family is None else family
        seq = self.seq if seq is None else seq
        body = struct.pack("<BBH", cmd, version, 0) + payload
        return struct.pack("<IHHII", 16 + len(body), family, flags, seq, 0) + body

    def send_raw(self, data):
        self.sock.send(data)

    def _request(self, family, cmd, payload=b"", dump=False, version=1):
        flags = NLM_F_REQUEST | (NLM_F_DUMP if dump else NLM_F_ACK)
        self.seq += 1
        self.sock.send(self.message(cmd, payload, flags, family, version))
        return self.receive(self.seq, dump)

    def receive(self, seq, dump):
        """Replies to seq as [(cmd, attribute bytes)] until the ack or DONE."""
        out = []
        while True:
            data = self.sock.recv(1 << 20)
            off = 0
            while off + 16 <= len(data):
                n, typ, flags, mseq, _ = struct.unpack_from("<IHHII", data, off)
                if n < 16:
                    raise NlError(errno.EPROTO, "short nlmsghdr")
                body = data[off + 16:off + n]
                off += (n + 3) & ~3
                if mseq != seq:
                    continue
                if typ == NLMSG_ERROR:
                    err = struct.unpack_from("<i", body)[0]
                    if err:
                        raise NlError(-err, self._extack(body, flags))
                    return out
                if typ == NLMSG_DONE:
                    err = struct.unpack_from("<i", body)[0] if len(body) >= 4 else 0
                    if err:
                        raise NlError(-err, self._extack(body, flags))
                    return out
                out.append((body[0], body[4:]))

    @staticmethod
    def _extack(body, flags):
        if not flags & NLM_F_ACK_TLVS:
            return ""
        # error + the request's nlmsghdr (NETLINK_CAP_ACK: header only)
        a = parse_attrs(body[4 + 16:])
        m = a.get(NLMSGERR_ATTR_MSG)
        return m[0].rstrip(b"\0").decode() if m else ""

    def request(self, cmd, payload=b"", dump=False):
        return self._request(self.family_id, cmd, payload, dump)

    # ---- the family's commands --------------------------------------------------

    def summary(self):
        (cmd, a), = self.request(CMD_GET_SUMMARY)
        a = parse_attrs(a)
        s = parse_summary(a[ATTR_SUMMARY][0])
        s["abi_attr"] = u32(a[ATTR_ABI_VERSION][0])
        return s

    def task(self, pid, thread=False):
        p = attr_u32(ATTR_PID, pid) + (attr(ATTR_THREAD, b"") if thread else b"")
        (cmd, a), = self.request(CMD_GET_TASK, p)
        return parse_task(parse_attrs(a)[ATTR_TASK][0])

    def _dump_tasks(self, cmd, payload):
        return [parse_task(parse_attrs(a)[ATTR_TASK][0])
                for _, a in self.request(cmd, payload, dump=True)]

    def tasks(self, tgid=None, comm=None):
        p = (attr_u32(ATTR_TGID, tgid) if tgid else b"") + \
            (attr_str(ATTR_COMM, comm) if comm else b"")
        return self._dump_tasks(CMD_GET_TASKS, p)

    def tasks_raw(self):
        """The dump's TASK payloads, undecoded (for timing the transport)."""
        return [a for _, a in self.request(CMD_GET_TASKS, b"", dump=True)]

    def threads(self, tgid):
        return self._dump_tasks(CMD_GET_THREADS, attr_u32(ATTR_TGID, tgid))

    def get_config(self):
        (cmd, a), = self.request(CMD_GET_CONFIG)
        a = parse_attrs(a)
        cfg = {"retention_ms": u32(a[ATTR_RETENTION_MS][0]), "hooks": {}}
        for g in parse_attrs(a[ATTR_HOOKS][0]).get(HOOK_ATTR_GROUP, []):
            ga = parse_attrs(g)
            name = ga[HOOK_ATTR_NAME][0].rstrip(b"\0").decode()
            cfg["hooks"][name] = (ga[HOOK_ATTR_ENABLED][0][0],
                                  u32(ga[HOOK_ATTR_ATTACHED][0]),
                                  u32(ga[HOOK_ATTR_TOTAL][0]))
        return cfg

    def set_config(self, retention_ms=None, hooks=None):
        p = b""
        if retention_ms is not None:
            p += attr_u32(ATTR_RETENTION_MS, retention_ms)
        if hooks:
            p += attr_nest(ATTR_HOOKS, *(
                attr_nest(HOOK_ATTR_GROUP, attr_str(HOOK_ATTR_NAME, n),
                          attr_u8(HOOK_ATTR_ENABLED, on))
                for n, on in hooks.items()))
        self.request(CMD_SET_CONFIG, p)

    # ---- leak tracer (constants below) ----------------------------------------

    def leak_attach(self, tgid, probes, flags=None):
        """probes: [(path, offset, api)]."""
        p = attr_u32(ATTR_TGID, tgid) + \
            attr_nest(ATTR_LEAK_PROBES, *(probe_nest(*pr) for pr in probes))
        if flags is not None:
            p += attr_u32(ATTR_LEAK_FLAGS, flags)
        self.request(CMD_LEAK_ATTACH, p)

    def leak_detach(self, tgid):
        self.request(CMD_LEAK_DETACH, attr_u32(ATTR_TGID, tgid))

    def leak_stats(self, tgid):
        (cmd, a), = self.request(CMD_LEAK_STATS, attr_u32(ATTR_TGID, tgid))
        return dict(zip(LEAK_STATS_FIELDS,
                        LEAK_STATS.unpack_from(parse_attrs(a)[ATTR_LEAK_STATS][0])))

    def leak_stacks(self, tgid, min_age_ms=None):
        p = attr_u32(ATTR_TGID, tgid)
        if min_age_ms is not None:
            p += attr_u32(ATTR_MIN_AGE_MS, min_age_ms)
        return [parse_leak_stack(parse_attrs(a)[ATTR_LEAK_STACK][0])
                for _, a in self.request(CMD_LEAK_STACKS, p, dump=True)]

    def leak_blocks(self, tgid, raw=False):
        """Every outstanding block; raw: also the number of messages."""
        msgs = self.request(CMD_LEAK_BLOCKS, attr_u32(ATTR_TGID, tgid), dump=True)
        blocks = []
        for _, a in msgs:
            for data in parse_attrs(a)[ATTR_LEAK_BLOCKS]:
                blocks += [dict(zip(("addr", "size", "time_ns", "stack_id", "api"), v))
                           for v in LEAK_BLOCK.iter_unpack(data)]
        return (blocks, len(msgs)) if raw else blocks



# ---- leak tracer ------------------------------------------------------------------

LEAK_APIS = ("malloc", "calloc", "realloc", "reallocarray", "free",
             "posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc",
             "new", "new_array", "delete", "delete_array",
             "open", "socket", "socketpair", "pipe", "dup", "accept", "eventfd",
             "memfd", "epoll", "timerfd", "signalfd", "inotify", "fcntl", "close")
API = {name: i + 1 for i, name in enumerate(LEAK_APIS)}
LEAK_F_CHILDREN = 1
LEAK_STACK = struct.Struct("<IIQQQIIIIQQII")
LEAK_STATS_FIELDS = ("allocs", "frees", "outstanding_bytes", "outstanding_blocks",
                     "unknown_frees", "mismatched_frees", "dropped_allocs",
                     "dropped_stacks", "nr_stacks", "nr_probes",
                     "fd_opens", "fd_closes", "outstanding_fds", "unknown_closes",
                     "fds_closed_unseen", "nr_children", "children",
                     "dropped_children", "reserved")
LEAK_STATS = struct.Struct("<8QII5Q4I")
# LEAK_BLOCKS (--scan): struct memtrack_leak_block, back to back
LEAK_BLOCK = struct.Struct("<QQQII")


def attr_u64(atype, v):
    return attr(atype, struct.pack("<Q", v))


def probe_nest(path, offset, api):
    """One PROBE nest: (path of the mapped object, file offset, api number)."""
    return attr_nest(PROBE_ATTR_PROBE, attr_str(PROBE_ATTR_PATH, path),
                     attr_u64(PROBE_ATTR_OFFSET, offset),
                     attr_u32(PROBE_ATTR_API, api))


def parse_leak_stack(data):
    v = LEAK_STACK.unpack_from(data)
    s = dict(zip(("stack_id", "nr_frames", "bytes", "blocks", "oldest_ns", "api",
                  "mismatched", "free_api", "free_stack_id", "total_allocs",
                  "total_bytes", "tgid", "reserved"), v))
    s["frames"] = list(struct.unpack_from(f"<{s['nr_frames']}Q", data, LEAK_STACK.size))
    return s
