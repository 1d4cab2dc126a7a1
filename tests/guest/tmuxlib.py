"""A terminal for tests of interactive tools: a shell in a detached tmux
session of a tmux server of its own, keys in, screen out."""
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from harness import check  # noqa: E402


class Tmux:
    """A shell in a detached tmux session of its own server, 200x50 unless
    asked for another size.

    Commands go to the server through one control-mode client (tmux -C),
    not a tmux process each: under emulation a tmux process costs about
    200 ms of CPU to start, a command through the client about 1 ms, and a
    wait polls the screen many times.  The client is attached to a session
    of its own ("ctl"), so that it never sizes the test's window."""

    count = 0

    def __init__(self, width=200, height=50):
        # A server of its own each time: a closing one may linger a moment.
        Tmux.count += 1
        self.sock = f"mttop{os.getpid()}-{Tmux.count}"
        # memtrack-top reads $XDG_CONFIG_HOME/memtrack/toprc: an empty
        # directory, so that no saved setup changes what a test sees
        self.config = tempfile.mkdtemp(prefix="mttop-config.")
        self.ctl = None
        self.tmux("new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height),
                  f"env XDG_CONFIG_HOME={self.config} bash --norc --noprofile")
        # Its window named, so never renamed: "-t t" looks for a window of
        # that name first, by prefix too, and a window the rename had
        # called "tmux" for a moment took the test's commands.
        self.tmux("new-session", "-d", "-s", "ctl", "-n", "ctl", "-x", "80", "-y", "24", "cat")
        self.ctl = subprocess.Popen(["tmux", "-L", self.sock, "-C", "attach", "-t", "ctl"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.ctl_buf = b""
        self.tmux("set-option", "-g", "remain-on-exit", "off")
        # Keys typed before the shell's prompt can be lost (a tmux process
        # a command took long enough not to see it): wait for the prompt.
        self.wait(lambda ls: any(line.strip() for line in ls), "the shell's prompt")

    def tmux(self, *args):
        """A tmux command's output; a failure if tmux refused it."""
        if self.ctl is None or any(c in a for a in args for c in "\n\r"):
            out = subprocess.run(["tmux", "-L", self.sock] + list(args),
                                 capture_output=True, text=True, timeout=30)
            check(out.returncode == 0, f"tmux {args}: {out.stderr.strip()}")
            return out.stdout
        return self._control(args)

    @staticmethod
    def _quote(arg):
        """arg as one word of a tmux command: single quotes take every
        character as it is ($, ~, ;, #, \\ and all); a single quote is put
        between double quotes."""
        return "'" + arg.replace("'", "'\"'\"'") + "'"

    def _control(self, args):
        """args sent through the control client: the lines between the
        %begin and the %end (or %error) of the same command number of the
        next block whose flags say a command of this client made it (the
        attach makes one of its own, flags 0, before or after the first
        command's); notifications outside blocks are skipped."""
        self.ctl.stdin.write((" ".join(self._quote(a) for a in args) + "\n").encode())
        self.ctl.stdin.flush()
        end = time.monotonic() + 30
        number, out = None, []
        while True:
            line = self._ctl_line(args, end)
            f = line.split()
            if number is None:
                if len(f) == 4 and f[0] == "%begin" and f[3] == "1":
                    number = f[2]
                continue
            if len(f) == 4 and f[0] in ("%end", "%error") and f[2] == number:
                check(f[0] == "%end", f"tmux {args}: {''.join(out).strip()}")
                return "".join(out)
            out.append(line)

    def _ctl_line(self, args, end):
        """The control client's next line (text, its newline kept)."""
        fd = self.ctl.stdout.fileno()
        while b"\n" not in self.ctl_buf:
            r, _, _ = select.select([fd], [], [], max(0, end - time.monotonic()))
            check(r, f"tmux {args}: no answer within 30 s")
            data = os.read(fd, 65536)
            check(data, f"tmux {args}: the control client ended")
            self.ctl_buf += data
        line, self.ctl_buf = self.ctl_buf.split(b"\n", 1)
        return (line + b"\n").decode("utf-8", "surrogateescape")

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

    def wait_settled(self, pred, what, timeout=60):
        """As wait, on a screen that two captures 0.1 s apart agree on: a
        capture can land in the middle of a program's redraw (tmux shows
        what it has been sent so far), half the old frame and half the
        new, and a test that takes the first such screen as the answer
        reads rows no frame ever had."""
        end = time.monotonic() + timeout
        last = None
        while True:
            lines = self.screen()
            got = pred(lines) if lines == last else None
            if got:
                return got
            if time.monotonic() > end:
                raise AssertionError(f"{what}: screen was\n" + "\n".join(lines))
            last = lines
            time.sleep(0.1)

    def alternate_on(self):
        return self.tmux("display", "-p", "-t", "t", "#{alternate_on}").strip() == "1"

    def shell_pid(self):
        return int(self.tmux("display", "-p", "-t", "t", "#{pane_pid}"))

    def close(self):
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True)
        if self.ctl:
            self.ctl.stdin.close()
            self.ctl.wait(timeout=30)
            self.ctl.stdout.close()
        shutil.rmtree(self.config, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
