"""include/uapi/linux/memtrack.h as the tests see it: its enums, numeric
#defines and struct layouts, read from the header itself so that a field, a
counter or a command added there needs no edit in a test.

    uapi.enum("memtrack_cmd")          {"MEMTRACK_CMD_GET_TASK": 1, ...}
    uapi.define("MEMTRACK_CLASS_ALL")  511
    L = uapi.layout("memtrack_task")   L.struct (a struct.Struct), L.size,
                                       L.offsets {"comm": 24, ...},
                                       L.unpack(data) -> {"pid": .., "mm": {..},
                                                          "counters": [..], ..}

A layout follows the C rules for x86_64 (natural alignment, padding made
explicit), and tests/host/test_uapi_layout.py holds every offset and size
against what the compiler makes of the same header.  The header's structs
are plain: fixed-width integers, char arrays, arrays of integers, nested
memtrack structs and a flexible array at the end; anything else is refused
here rather than guessed.
"""
import os
import re
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UAPI = os.path.join(ROOT, "include", "uapi", "linux")

# C type -> struct module code; its size is its alignment on x86_64.
SCALARS = {"__u8": "B", "__s8": "b", "__u16": "H", "__s16": "h",
           "__u32": "I", "__s32": "i", "__u64": "Q", "__s64": "q", "char": "s"}


def _read(name):
    with open(os.path.join(UAPI, name)) as f:
        return re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)


# memtrack.h and the headers it includes ("memtrack_unwind.h": the unwind
# rules; the counters' X-macro list adds no enum, struct or #define)
_TEXT = _read("memtrack.h")
_TEXT += "".join(_read(h) for h in re.findall(r'^#include "([\w.]+)"', _TEXT, re.M))
# The counters are an X-macro list in a header of their own.
# Each: (ID, name, UNIT, "metric", "title", "help"), the strings C literals.
COUNTER_INFO = [
    dict(zip(("id", "name", "unit", "metric", "title", "help"),
             m[:3] + tuple(bytes(x, "ascii").decode("unicode_escape")
                           for x in m[3:])))
    for m in re.findall(r'^MEMTRACK_COUNTER\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*,'
                        r'\s*"((?:[^"\\]|\\.)*)"\s*,\s*"((?:[^"\\]|\\.)*)"\s*,'
                        r'\s*"((?:[^"\\]|\\.)*)"\s*\)',
                        _read("memtrack_counters.h"), re.M)]
COUNTERS = [c["name"] for c in COUNTER_INFO]
assert len(COUNTERS) == len(re.findall(r"^MEMTRACK_COUNTER\(",
                                       _read("memtrack_counters.h"), re.M)), \
    "a MEMTRACK_COUNTER line this parser does not read"


def enum(name):
    """{constant: value} of `enum name`, in the header's order."""
    m = re.search(r"\benum %s \{(.*?)\};" % name, _TEXT, re.S)
    if not m:
        raise KeyError(f"no enum {name} in memtrack.h")
    out, v = {}, -1
    for item in m.group(1).split(","):
        item = item.strip()
        if not item or item.startswith("#"):
            continue
        k, _, val = item.partition("=")
        v = value(val) if val.strip() else v + 1
        out[k.strip()] = v
    return out


def enum_comments(name):
    """{constant: the comment after it} of `enum name` (the record types
    name their struct there)."""
    with open(os.path.join(UAPI, "memtrack.h")) as f:
        body = re.search(r"\benum %s \{(.*?)\};" % name, f.read(), re.S).group(1)
    return dict(re.findall(r"^\s*(\w+)[^/\n]*/\*\s*(.*?)\s*\*/", body, re.M))


def define(name):
    """The value of a numeric #define (expressions of other defines and
    integer literals: shifts, |, &, ~, +, -)."""
    m = re.search(r"^#define %s\s+(.*?)\s*$" % name,
                  _TEXT.replace("\\\n", " "), re.M)
    if not m:
        raise KeyError(f"no #define {name} in memtrack.h")
    return value(m.group(1))


def defines(prefix):
    """The names of the #defines starting with prefix, in the header's order."""
    return re.findall(r"^#define (%s\w*)[ \t]" % prefix, _TEXT, re.M)


def value(expr):
    """An integer constant expression of the header, evaluated."""
    expr = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)[uUlL]*\b", r"\1", expr.strip())
    if expr == "MEMTRACK_NR_COUNTERS":
        return len(COUNTERS)

    def name(m):
        return str(value_of(m.group(0)))
    expr = re.sub(r"\b[A-Z_][A-Z0-9_]*\b", name, expr)
    if not re.fullmatch(r"[0-9xa-fA-F()<>|&~+\-\s]+", expr):
        raise ValueError(f"not an integer expression: {expr}")
    return eval(expr, {"__builtins__": {}})  # digits and operators only


def value_of(name):
    if name == "MEMTRACK_NR_COUNTERS":
        return len(COUNTERS)
    for enum_name in re.findall(r"\benum (\w+) \{", _TEXT):
        e = enum(enum_name)
        if name in e:
            return e[name]
    return define(name)


class Layout:
    """One struct: fields in order as (name, kind, count, offset, size) where
    kind is a struct code or a nested Layout; `tail` the flexible array's
    (name, code) or None."""

    def __init__(self, name):
        m = re.search(r"^struct %s \{(.*?)^\};" % name, _TEXT, re.S | re.M)
        if not m:
            raise KeyError(f"no struct {name} in memtrack.h")
        self.name, self.fields, self.tail = name, [], None
        off, align, fmt = 0, 1, "<"
        for decl in m.group(1).split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            d = re.fullmatch(r"(struct \w+|\w+) (\w+)(?:\[(.*)\])?", decl)
            if not d:
                raise ValueError(f"struct {name}: cannot read '{decl}'")
            ctype, fname, dim = d.groups()
            if self.tail:
                raise ValueError(f"struct {name}: field after flexible array")
            if ctype.startswith("struct "):
                kind = layout(ctype[len("struct "):])
                size, falign = kind.size, kind.align
            elif ctype in SCALARS:
                kind = SCALARS[ctype]
                size = falign = 1 if kind == "s" else struct.calcsize(kind)
            else:
                raise ValueError(f"struct {name}: unknown type {ctype}")
            if dim == "":
                if isinstance(kind, Layout):
                    raise ValueError(f"struct {name}: flexible array of structs")
                self.tail = (fname, kind)
                continue
            count = value(dim) if dim is not None else 1
            pad = -off % falign
            fmt += "x" * pad
            off += pad
            self.fields.append((fname, kind, count, off, size * count))
            fmt += self._fmt(kind, count)
            off += size * count
            align = max(align, falign)
        if self.tail:
            align = max(align, struct.calcsize(self.tail[1]))
        fmt += "x" * (-off % align)
        self.align, self.struct = align, struct.Struct(fmt)
        self.size = self.struct.size
        self.offsets = {f[0]: f[3] for f in self.fields}
        self._unpacker = None

    @staticmethod
    def _fmt(kind, count):
        if isinstance(kind, Layout):
            return kind.struct.format[1:] * count
        if kind == "s":
            return f"{count}s"
        return f"{count}{kind}" if count > 1 else kind

    def values(self, data, offset=0):
        """The flat tuple struct.unpack gives (nested structs and arrays
        spread out, padding skipped)."""
        return self.struct.unpack_from(data, offset)

    def unpack(self, data, offset=0):
        """A dict by field name: nested structs as dicts, arrays as lists,
        char arrays as bytes up to the first NUL."""
        if self._unpacker is None:
            self._unpacker = self._compile()
        return self._unpacker(self.struct.unpack_from(data, offset))

    def _compile(self):
        """unpack's builder for this layout, made once: one expression over
        the flat tuple (a dump of 10,000 tasks decodes each of them, and a
        walk of the fields per value took most of a test's time in the VM)."""
        src, _ = self._expr(0)
        return eval(f"lambda v: {src}", {})

    def _expr(self, i):
        """(Python source of this layout's dict over v[i:], values it takes)."""
        items = []
        start = i
        for fname, kind, count, _, _ in self.fields:
            if isinstance(kind, Layout):
                subs = []
                for _ in range(count):
                    e, n = kind._expr(i)
                    subs.append(e)
                    i += n
                e = subs[0] if count == 1 else "[" + ", ".join(subs) + "]"
            elif kind == "s":
                e = f"v[{i}].split(b'\\0', 1)[0]"
                i += 1
            elif count == 1:
                e = f"v[{i}]"
                i += 1
            else:
                e = f"list(v[{i}:{i + count}])"
                i += count
            items.append(f"{fname!r}: {e}")
        return "{" + ", ".join(items) + "}", i - start

    def tail_values(self, data, n, offset=0):
        """n elements of the flexible array after the struct at offset."""
        return list(struct.unpack_from(f"<{n}{self.tail[1]}", data,
                                       offset + self.size))


_LAYOUTS = {}


def layout(name):
    if name not in _LAYOUTS:
        _LAYOUTS[name] = Layout(name)
    return _LAYOUTS[name]


def structs():
    """Every struct the header defines, in its order."""
    return re.findall(r"^struct (\w+) \{", _TEXT, re.M)
