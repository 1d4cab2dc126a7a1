"""A terminal for tests of interactive tools: a shell in a detached tmux
session of a tmux server of its own, keys in, screen out."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from harness import check  # noqa: E402


class Tmux:
    """A shell in a detached tmux session of its own server, 200x50."""

    count = 0

    def __init__(self):
        # A server of its own each time: a closing one may linger a moment.
        Tmux.count += 1
        self.sock = f"mttop{os.getpid()}-{Tmux.count}"
        # memtrack-top reads $XDG_CONFIG_HOME/memtrack/toprc: an empty
        # directory, so that no saved setup changes what a test sees
        self.config = tempfile.mkdtemp(prefix="mttop-config.")
        self.tmux("new-session", "-d", "-s", "t", "-x", "200", "-y", "50",
                  f"env XDG_CONFIG_HOME={self.config} bash --norc --noprofile")
        self.tmux("set-option", "-g", "remain-on-exit", "off")

    def tmux(self, *args):
        out = subprocess.run(["tmux", "-L", self.sock] + list(args),
                             capture_output=True, text=True, timeout=30)
        check(out.returncode == 0, f"tmux {args}: {out.stderr.strip()}")
        return out.stdout

    def keys(self, *keys):
        self.tmux("send-keys", "-t", "t", *keys)

    def type(self, text):
        self.tmux("send-keys", "-t", "t", "-l", text)

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "t").splitlines()

    def wait(self, pred, what, timeout=60):
        end = time.monotonic() + timeout
        while True:
            lines = self.screen()
            got = pred(lines)
            if got:
                return got
            if time.monotonic() > end:
                raise AssertionError(f"{what}: screen was\n" + "\n".join(lines))
            time.sleep(0.1)

    def alternate_on(self):
        return self.tmux("display", "-p", "-t", "t", "#{alternate_on}").strip() == "1"

    def shell_pid(self):
        return int(self.tmux("display", "-p", "-t", "t", "#{pane_pid}"))

    def close(self):
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True)
        shutil.rmtree(self.config, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
