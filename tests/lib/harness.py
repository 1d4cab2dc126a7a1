"""The one test runner of every Python suite: the host suites
(tests/host/test_*.py) import it directly, the guest suites (tests/guest/)
through mtlib.  It holds the @test registry, check(), sh(), the network
namespaces of the host suites (Netns) and main(), which runs the tests.

Calling convention, the same for every suite, host or guest:

    python3 SUITE.py              run every test, in the order of the file
    python3 SUITE.py NAME...      run only those (an unknown name: the
                                  suite's names on stderr, exit 2)
    python3 SUITE.py --list       print the suite's test names, one a line

Each test prints "PASS name (1.2s)" or "FAIL name (1.2s): why" (its traceback,
indented, on stderr); the last line is "LABEL: N passed, N failed" (LABEL
is "guest" for the guest suites, "host" for the host ones).  Exit status 1
if any failed (or the suite's setup did), else 0.

A suite:

    from harness import check, main, test

    @test
    def some_behaviour():
        check(got == want, f"got {got}, want {want}")

    if __name__ == "__main__":
        sys.exit(main(sys.argv, setup=..., cleanup=..., root="suite-name"))
"""
import os
import subprocess
import sys
import time
import traceback


class TestFailure(AssertionError):
    """A check that did not hold: reported with its message alone."""


def check(cond, msg):
    if not cond:
        raise TestFailure(msg)


def sh(*args, **kw):
    """Run a command that must succeed; its output captured (text)."""
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw)


_TESTS = []


def test(fn):
    """Register fn as a test named after it (names are unique)."""
    if any(t.__name__ == fn.__name__ for t in _TESTS):
        raise ValueError(f"two tests named {fn.__name__}")
    _TESTS.append(fn)
    return fn


def names():
    return [fn.__name__ for fn in _TESTS]


class Netns:
    """Network namespaces made for one run (give them names with the pid
    in them), joined by veth pairs; delete() removes every one added."""

    def __init__(self):
        self.names = []

    def add(self, name):
        """A namespace (one of the same name left over is removed first)
        with its loopback up."""
        subprocess.run(["ip", "netns", "del", name], stderr=subprocess.DEVNULL)
        self.names.append(name)
        sh("ip", "netns", "add", name)
        sh("ip", "-n", name, "link", "set", "lo", "up")
        return name

    def veth(self, a, b):
        """A veth pair between a and b, each (namespace, interface, IPv4
        address), the addresses in a /24, both ends up."""
        sh("ip", "link", "add", a[1], "netns", a[0], "type", "veth",
           "peer", "name", b[1], "netns", b[0])
        for ns, ifc, ip in (a, b):
            sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", ifc)
            sh("ip", "-n", ns, "link", "set", ifc, "up")

    @staticmethod
    def set_link(ns, ifc, up):
        sh("ip", "-n", ns, "link", "set", ifc, "up" if up else "down")

    @staticmethod
    def cmd(ns, *args):
        """args as a command run in namespace ns."""
        return ["ip", "netns", "exec", ns] + list(args)

    def delete(self):
        for ns in self.names:
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
        self.names = []


def _why(e):
    """A failure's one-line reason."""
    if isinstance(e, AssertionError):
        return str(e)
    if isinstance(e, subprocess.CalledProcessError) and e.stderr:
        return f"{e} {e.stderr.strip()}"
    return traceback.format_exception_only(type(e), e)[-1].strip()


def _report_failure(name, e, secs=None):
    took = "" if secs is None else f" ({secs:.1f}s)"
    print(f"FAIL {name}{took}: {_why(e)}", flush=True)
    tb = traceback.format_exc().strip().splitlines()
    print("\n".join("    " + t for t in tb), file=sys.stderr, flush=True)


def _guest_busy():
    """In a VM (tests/vm/run sets MEMTRACK_VM): the seconds the guest's
    CPUs have been busy, which is what a test costs the host under
    emulation (an idle guest costs it nothing); None elsewhere."""
    if not os.environ.get("MEMTRACK_VM"):
        return None
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    # all but idle and iowait; guest and guest_nice are in user already
    return (sum(ticks[:8]) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def main(argv, setup=None, cleanup=None, root=None, label="host"):
    """Run the tests argv[1:] names (all if none; --list: print the names).
    root: the suite's name, if it must run as root.  setup() runs before
    the first test: if it raises, "FAIL <its name, - for _>: why" and exit
    1.  cleanup() runs at the end whatever happened.  Returns the exit
    status."""
    args = argv[1:]
    if "--list" in args:
        print("\n".join(names()))
        return 0
    unknown = [a for a in args if a not in names()]
    if unknown:
        print(f"{argv[0]}: no test {', '.join(unknown)}; its tests: {' '.join(names())}",
              file=sys.stderr)
        return 2
    if root and os.geteuid() != 0:
        print(f"FAIL {root}: must run as root", flush=True)
        return 1
    passed = failed = 0
    try:
        if setup:
            try:
                setup()
            except Exception as e:  # noqa: BLE001 - reported as the setup's failure
                _report_failure(setup.__name__.replace("_", "-"), e)
                return 1
        for fn in _TESTS:
            if args and fn.__name__ not in args:
                continue
            t0, busy0 = time.monotonic(), _guest_busy()
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - report and go on
                failed += 1
                _report_failure(fn.__name__, e, time.monotonic() - t0)
            else:
                passed += 1
                print(f"PASS {fn.__name__} ({time.monotonic() - t0:.1f}s)", flush=True)
            if busy0 is not None:
                print(f"# cpu {fn.__name__} {_guest_busy() - busy0:.1f}s", flush=True)
    finally:
        if cleanup:
            cleanup()
    print(f"{label}: {passed} passed, {failed} failed", flush=True)
    return 1 if failed else 0
