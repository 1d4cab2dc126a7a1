#!/usr/bin/env python3
"""The tests' reading of include/uapi/linux/memtrack.h and the headers it
includes (tests/guest/uapi.py)
against the compiler's: every struct's size and every field's offset and
size, every enum constant and every numeric #define, printed by a C program
built from the same header.  The guest suites decode netlink messages and
/dev/memtrack records with these layouts, so a wrong one would make them
test the wrong bytes.

Runs as tests/lib/harness.py says (test names as arguments, --list)."""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "tests", "guest"), os.path.join(ROOT, "tests", "lib")]
import uapi  # noqa: E402
from harness import check, main, test  # noqa: E402


def compiled(lines):
    """Run a C program printing `name value` for each (name, C expression)."""
    src = ["#include <stddef.h>", "#include <stdio.h>",
           "#include <linux/memtrack.h>", "int main(void)", "{"]
    src += [f'\tprintf("%s %llu\\n", "{n}", (unsigned long long)({e}));'
            for n, e in lines]
    src += ["\treturn 0;", "}"]
    with tempfile.TemporaryDirectory() as d:
        c, exe = os.path.join(d, "layout.c"), os.path.join(d, "layout")
        with open(c, "w") as f:
            f.write("\n".join(src) + "\n")
        subprocess.run(["cc", "-Wall", "-Werror", "-I",
                        os.path.join(ROOT, "include", "uapi"), "-o", exe, c],
                       check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True)
    return dict(line.split() for line in out.stdout.splitlines())


def compare(ours):
    """ours: [(name, C expression, our value)]; the differences."""
    cc = compiled([(n, e) for n, e, _ in ours])
    bad = [f"{n}: ours {v}, the compiler's {cc[n]}"
           for n, _, v in ours if int(cc[n]) != v % (1 << 64)]
    check(not bad, "; ".join(bad[:10]))


@test
def struct_layouts_equal_the_compilers():
    ours = []
    for name in uapi.structs():
        lay = uapi.layout(name)
        t = f"struct {name}"
        ours.append((f"{name}.sizeof", f"sizeof({t})", lay.size))
        for fname, _, _, off, size in lay.fields:
            ours.append((f"{name}.{fname}.offset", f"offsetof({t}, {fname})", off))
            ours.append((f"{name}.{fname}.size", f"sizeof(((({t} *)0)->{fname}))", size))
        if lay.tail:
            ours.append((f"{name}.{lay.tail[0]}.offset",
                         f"offsetof({t}, {lay.tail[0]})", lay.size))
    compare(ours)
    # Every struct the headers declare was read, none left out.
    declared = set()
    for h in os.listdir(uapi.UAPI):
        with open(os.path.join(uapi.UAPI, h)) as f:
            declared |= set(re.findall(r"^struct (\w+) \{", f.read(), re.M))
    check(declared == set(uapi.structs()) and len(declared) >= 20,
          f"structs read {sorted(uapi.structs())}, declared {sorted(declared)}")


@test
def enums_and_defines_equal_the_compilers():
    ours = []
    for e in re.findall(r"\benum (\w+) \{", uapi._TEXT):
        ours += [(k, k, v) for k, v in uapi.enum(e).items()]
    for d in uapi.defines("MEMTRACK_"):
        try:
            v = uapi.define(d)
        except (ValueError, KeyError):
            continue        # strings and ioctl numbers: not plain integers
        ours.append((d, d, v))
    # The ioctl numbers the stream tests compute (tests/guest/mtrec.py).
    import mtrec
    ours += [(f"MEMTRACK_{n}", f"MEMTRACK_{n}", getattr(mtrec, n))
             for n in ("IOC_GET_VERSION", "IOC_SET_FILTER", "IOC_GET_FILTER",
                       "IOC_GET_STATS")]
    check(len(ours) >= 120, f"only {len(ours)} constants read (the header has more)")
    compare(ours)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
