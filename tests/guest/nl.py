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
import socket
import struct

import uapi


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



RETENTION_MS_MAX = uapi.define("MEMTRACK_RETENTION_MS_MAX")
RING_KB_MIN = uapi.define("MEMTRACK_RING_KB_MIN")
RING_KB_MAX = uapi.define("MEMTRACK_RING_KB_MAX")
LEAK_KEEP_MS_MIN = uapi.define("MEMTRACK_LEAK_KEEP_MS_MIN")
LEAK_KEEP_MS_MAX = uapi.define("MEMTRACK_LEAK_KEEP_MS_MAX")
LEAK_F_CHILDREN = uapi.define("MEMTRACK_LEAK_F_CHILDREN")
LEAK_F_ARM_LATER = uapi.define("MEMTRACK_LEAK_F_ARM_LATER")
LEAK_ENDED_EXIT = uapi.define("MEMTRACK_LEAK_ENDED_EXIT")
LEAK_ENDED_EXEC = uapi.define("MEMTRACK_LEAK_ENDED_EXEC")


# CMD_*, ATTR_*, HOOK_ATTR_*, PROBE_ATTR_* and CMD_MAX, ATTR_MAX, ... as the
# header numbers them, so that a new command or attribute needs no edit here.
for _enum in ("memtrack_cmd", "memtrack_attr", "memtrack_hook_attr",
              "memtrack_probe_attr"):
    for _k, _v in uapi.enum(_enum).items():
        if _k.startswith("__MEMTRACK_"):
            globals()[_k[len("__MEMTRACK_"):]] = _v - 1
        else:
            globals()[_k[len("MEMTRACK_"):]] = _v

COUNTERS = uapi.COUNTERS
TASK = uapi.layout("memtrack_task")
MM_FIELDS = tuple(f[0] for f in uapi.layout("memtrack_mm").fields)
SUMMARY = uapi.layout("memtrack_summary")
SUMMARY_FIELDS = tuple(f[0] for f in SUMMARY.fields)


class NlError(OSError):
    def __init__(self, err, msg=""):
        super().__init__(err, f"{os.strerror(err)}{': ' + msg if msg else ''}")
        self.msg = msg


def parse_task(data):
    """struct memtrack_task as a dict in the columns of /proc/memtrack/tasks."""
    v = TASK.unpack(data)
    t = {"pid": v["pid"], "tgid": v["tgid"], "uid": v["uid"],
         "threads": v["threads"], "state": "X" if v["exited"] else "R",
         "detailed": v["detailed"], "oom_victim": v["oom_victim"],
         "fail_gfp": v["fail_gfp"], "comm": v["comm"].decode("latin-1")}
    t.update(v["mm"])
    for name, c in zip(COUNTERS, v["counters"]):
        # Signed quantities are two's complement, as /proc prints them.
        t[name] = c - (1 << 64) if c >= 1 << 63 else c
    for name in ("ppid", "cgroup_id", "utime_ns", "stime_ns", "start_ns"):
        t[name] = v[name]
    return t


def parse_summary(data):
    return SUMMARY.unpack(data)


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
    def __init__(self, family="memtrack", rcvbuf=4 << 20, sock=None):
        """sock: a socket this one made, handed over (SCM_RIGHTS)."""
        if sock is None:
            sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            sock.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
            sock.setsockopt(SOL_NETLINK, NETLINK_CAP_ACK, 1)
            sock.bind((0, 0))
        self.sock = sock
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

    def leak_arm(self, tgid):
        self.request(CMD_LEAK_ARM, attr_u32(ATTR_TGID, tgid))

    def leak_detach(self, tgid):
        self.request(CMD_LEAK_DETACH, attr_u32(ATTR_TGID, tgid))

    def leak_stats(self, tgid):
        (cmd, a), = self.request(CMD_LEAK_STATS, attr_u32(ATTR_TGID, tgid))
        return LEAK_STATS.unpack(parse_attrs(a)[ATTR_LEAK_STATS][0])

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
                blocks += [LEAK_BLOCK.unpack(data, off)
                           for off in range(0, len(data), LEAK_BLOCK.size)]
        return (blocks, len(msgs)) if raw else blocks



# ---- leak tracer ------------------------------------------------------------------

# enum memtrack_leak_api: {"malloc": 1, ..., "close": N}
API = {k[len("MEMTRACK_API_"):].lower(): v
       for k, v in uapi.enum("memtrack_leak_api").items()
       if not k.startswith("__")}
LEAK_APIS = tuple(API)
LEAK_STACK = uapi.layout("memtrack_leak_stack")
LEAK_STATS = uapi.layout("memtrack_leak_stats")
# LEAK_BLOCKS (--scan): struct memtrack_leak_block, back to back
LEAK_BLOCK = uapi.layout("memtrack_leak_block")


def attr_u64(atype, v):
    return attr(atype, struct.pack("<Q", v))


def probe_nest(path, offset, api):
    """One PROBE nest: (path of the mapped object, file offset, api number)."""
    return attr_nest(PROBE_ATTR_PROBE, attr_str(PROBE_ATTR_PATH, path),
                     attr_u64(PROBE_ATTR_OFFSET, offset),
                     attr_u32(PROBE_ATTR_API, api))


def parse_leak_stack(data):
    """struct memtrack_leak_stack and its frames[] as a dict."""
    s = LEAK_STACK.unpack(data)
    s["frames"] = LEAK_STACK.tail_values(data, s["nr_frames"])
    return s
