"""Reading /dev/memtrack from the tests: ioctls and record parsing, following
include/uapi/linux/memtrack.h."""
import fcntl
import os

import uapi

# REC["MMAP"] = 4, ...; REC_NAME the other way
REC = {k[len("MEMTRACK_REC_"):]: v
       for k, v in uapi.enum("memtrack_rec_type").items() if not k.startswith("__")}
REC_NAME = {v: k for k, v in REC.items()}
COUNTERS = uapi.COUNTERS

# CLASS["mmap"] = MEMTRACK_CLASS_MMAP, ...
CLASS = {n[len("MEMTRACK_CLASS_"):].lower(): uapi.define(n)
         for n in uapi.defines("MEMTRACK_CLASS_")
         if n not in ("MEMTRACK_CLASS_ALL", "MEMTRACK_CLASS_DEFAULT")}
CLASS_ALL = uapi.define("MEMTRACK_CLASS_ALL")
CLASS_DEFAULT = uapi.define("MEMTRACK_CLASS_DEFAULT")

HDR = uapi.layout("memtrack_rec_hdr").struct
HDR_VALUES = len(HDR.unpack(bytes(HDR.size)))
# Each record type's struct, named beside it in enum memtrack_rec_type; a
# record's body is that struct's fields after the header, spread out.
LAYOUT = {k[len("MEMTRACK_REC_"):]: uapi.layout(v)
          for k, v in uapi.enum_comments("memtrack_rec_type").items()}


def _ioc(direction, nr, size):
    return (direction << 30) | (size << 16) | (uapi.define("MEMTRACK_IOC_MAGIC") << 8) | nr


FILTER = uapi.layout("memtrack_filter").struct
STATS = uapi.layout("memtrack_ring_stats")
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
        lay = LAYOUT.get(self.name)
        self.body = lay.values(raw)[HDR_VALUES:] if lay else ()

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
        return STATS.unpack(fcntl.ioctl(self.fd, IOC_GET_STATS, bytes(STATS.size)))

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
