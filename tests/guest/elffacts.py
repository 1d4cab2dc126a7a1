"""What readelf and nm say about an ELF object, for the tests that check the
tools' own ELF reading against them: read once per object and test run.
Under emulation one readelf or nm of libc takes about a second, and the
leak tests ask about the same few objects (libc, the loader, the fixtures)
again and again.  The key holds the file's identity, so an object rebuilt
during a run is read afresh."""

import functools
import os
import subprocess


def _key(path):
    st = os.stat(path)
    return (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=None)
def _run(cmd, key):
    """(exit status, stdout) of cmd on the object key names."""
    r = subprocess.run(list(cmd) + [key[0]], capture_output=True, text=True)
    return r.returncode, r.stdout


def _fields(cmd, path, check):
    """Each line of cmd's output on path, split into fields; None if the
    command failed (not ELF) and check is false."""
    rc, out = _run(cmd, _key(path))
    if rc and check:
        raise subprocess.CalledProcessError(rc, list(cmd) + [path])
    return None if rc else [line.split() for line in out.splitlines()]


def program_headers(path, check=True):
    """[(type, offset, vaddr, memsz)] of path's program headers (readelf
    -lW); None if it is not ELF and check is false."""
    rows = _fields(("readelf", "-lW"), path, check)
    return None if rows is None else [
        (f[0], int(f[1], 16), int(f[2], 16), int(f[5], 16)) for f in rows
        if len(f) >= 6 and f[1].startswith("0x") and f[2].startswith("0x")]


def section(path, name):
    """(address, size) of path's section name (readelf -SW), or None."""
    for f in _fields(("readelf", "-SW"), path, True):
        if name in f[:3]:
            i = f.index(name)
            return int(f[i + 2], 16), int(f[i + 4], 16)
    return None


def relocations(path):
    """[(offset, type, symbol with its version)] of path's relocations that
    name a symbol (readelf -rW); None if it is not ELF (a locale file)."""
    rows = _fields(("readelf", "-rW"), path, False)
    return None if rows is None else [
        (int(f[0], 16), f[2], f[4]) for f in rows if len(f) >= 5 and f[2].startswith("R_")]


def defined_dynsyms(path):
    """[(symbol with its version, value)] of path's defined dynamic
    symbols, in nm -D's order."""
    rows = _fields(("nm", "-D", "--defined-only"), path, True)
    return [(f[2], int(f[0], 16)) for f in rows if len(f) == 3]
