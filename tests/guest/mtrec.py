"""Reading /dev/memtrack from the tests: ioctls and record parsing, following
include/uapi/linux/memtrack.h."""
import fcntl
import os
import re
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UAPI = os.path.join(ROOT, "include", "uapi", "linux")


def _uapi_enum(prefix, first):
    """Values of a C enum in the uapi header whose names start with prefix."""
    with open(os.path.join(UAPI, "memtrack.h")) as f:
        text = f.read()
    names = re.findall(rf"^\s*({prefix}\w+)(?:\s*=\s*(\d+))?,", text, re.M)
    out, v = {}, first
    for name, val in names:
        v = int(val) if val else v
        out[name[len(prefix):]] = v
        v += 1
    return out


REC = _uapi_enum("MEMTRACK_REC_", 1)
REC.pop("_MAX", None)
REC_NAME = {v: k for k, v in REC.items()}
with open(os.path.join(UAPI, "memtrack_counters.h")) as f:
    COUNTERS = re.findall(r"^MEMTRACK_COUNTER\(\w+, (\w+)\)", f.read(), re.M)

CLASS = {n: 1 << i for i, n in enumerate(
    ["task", "mmap", "shm", "oom", "reclaim", "alloc_fail", "rss", "page", "kmalloc"])}
CLASS_ALL = (1 << 9) - 1
CLASS_DEFAULT = CLASS_ALL & ~(CLASS["page"] | CLASS["kmalloc"])

HDR = struct.Struct("<HHIQii")
MM = "10Q"
BODY = {
    "LOST": "Q",
    "TASK_NEW": "iIQ16s",
    "TASK_EXIT": f"II16s{MM}{len(COUNTERS)}Q",
    "MMAP": "QQII", "MUNMAP": "QQII",
    "MREMAP": "QQQQ",
    "BRK": "QQ",
    "SHM": "IiQQ",
    "OOM_VICTIM": "iiIIQ16s",
    "RECLAIM_STALL": "QQ",
    "PAGE_ALLOC_FAIL": "QII", "PAGE_ALLOC": "QII", "PAGE_FREE": "QII",
    "RSS_GROWTH": "QQQ",
    "KMALLOC": "QQQQII", "KFREE": "QQQQII",
}


def _ioc(direction, nr, size):
    return (direction << 30) | (size << 16) | (0xB7 << 8) | nr


FILTER = struct.Struct("<IIii")
STATS = struct.Struct("<QQQIIQ")
IOC_GET_VERSION = _ioc(2, 0, 4)
IOC_SET_FILTER = _ioc(1, 1, FILTER.size)
IOC_GET_FILTER = _ioc(2, 2, FILTER.size)
IOC_GET_STATS = _ioc(2, 3, STATS.size)


class Record:
    def __init__(self, raw):
        (self.type, self.size, self.cpu, self.time_ns, self.pid,
         self.tgid) = HDR.unpack_from(raw)
        self.name = REC_NAME.get(self.type, str(self.type))
        self.raw = raw
        fmt = BODY.get(self.name)
        self.body = struct.unpack_from("<" + fmt, raw, HDR.size) if fmt else ()

    def __repr__(self):
        return f"<{self.name} pid={self.pid} tgid={self.tgid} {self.body[:4]}>"


def parse(buf):
    """Records in a read() result; each must be whole and well formed."""
    out, off = [], 0
    while off < len(buf):
        size = HDR.unpack_from(buf, off)[1]
        if size < HDR.size or size % 8 or off + size > len(buf):
            raise ValueError(f"bad record size {size} at {off} of {len(buf)}")
        out.append(Record(buf[off:off + size]))
        off += size
    return out


class Ring:
    """An opener of /dev/memtrack."""

    def __init__(self, classes=CLASS_DEFAULT, pid=0, tgid=0, nonblock=True):
        self.fd = os.open("/dev/memtrack", os.O_RDONLY | (os.O_NONBLOCK if nonblock else 0))
        self.set_filter(classes, pid, tgid)

    def set_filter(self, classes, pid=0, tgid=0, flags=0):
        fcntl.ioctl(self.fd, IOC_SET_FILTER, FILTER.pack(classes, flags, pid, tgid))

    def get_filter(self):
        return FILTER.unpack(fcntl.ioctl(self.fd, IOC_GET_FILTER, bytes(FILTER.size)))

    def stats(self):
        d, lost, pending, ring_bytes, ncpu, gen = STATS.unpack(
            fcntl.ioctl(self.fd, IOC_GET_STATS, bytes(STATS.size)))
        return dict(delivered=d, lost=lost, pending=pending, ring_bytes=ring_bytes,
                    nr_cpus=ncpu, generated=gen)

    def read(self, size=1 << 20):
        try:
            return parse(os.read(self.fd, size))
        except BlockingIOError:
            return []

    def drain(self):
        out = []
        while True:
            recs = self.read()
            if not recs:
                return out
            out += recs

    def close(self):
        os.close(self.fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
