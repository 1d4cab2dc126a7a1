#!/usr/bin/env python3
"""The README's commands, run as written, in the VM with memtrack.ko loaded.

A command is a line of a fenced block (```) of README.md that starts with
a prompt: "# " (root) or "$ " (a user: run as nobody); a line ending in
"\\" goes on on the next one.  The lines after it, up to the next prompt
or the end of the block, are its output as the README shows it.  A fenced
block without a prompt (a screen, a config file) is not run.

Every command goes, in the README's order, to one bash (as a terminal's
shell: `cd`, `&` jobs and `$!` carry over from one command to the next),
started at the top of the checkout, as root, with build/bin first on PATH
(where `make install` would have put the tools), stdin /dev/null and
stdout and stderr together in one file, as a terminal shows them (the
checkout's own path left out, as the README shows paths from its top).
Each must exit with status 0 within 150 s and print what the README
shows, line for line, where in both:

  - every number is the same "#" (0x... and words of 8 or more hex
    digits too: pids, sizes, times, dates, addresses and session ids
    differ from run to run) and runs of blanks are one blank;
  - a README line "..." (alone on its line, indented or not) stands for
    any number of lines left out.

A failure names the command and its README line and prints the unified
diff of the two (numbers as "#").  The commands that cannot run in a test
VM are in EXCLUDED with the reason, printed when their block runs; each
must still be in the README.

MEMTRACK_README=FILE reads another README (e.g. an old one, to see this
fail).  Each block is a test, named after its section; they depend on the
blocks before them (the quick start starts leakdemo), so run them all.
Runs as tests/lib/harness.py says (test names as arguments, --list)."""
import difflib
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import ROOT, check, readline, test  # noqa: E402
from harness import main  # noqa: E402  (mtlib put tests/lib on the path)

README = os.environ.get("MEMTRACK_README", os.path.join(ROOT, "README.md"))
NAME = os.path.basename(README)
TIMEOUT = 150

# Commands the README shows that a test VM cannot run as written, and why.
EXCLUDED = {
    "make && make progs && make install && modprobe memtrack":
        "builds on and installs into the host: the guest's root is the host's, "
        "read-only; tests/vm/run has loaded build/RELEASE/memtrack.ko, and "
        "build/bin stands first on PATH for the installed tools",
}


def normalize(line):
    line = re.sub(r"0x[0-9a-fA-F]+|\b[0-9a-f]{8,}\b", "#", line.rstrip())
    line = re.sub(r"\d+(\.\d+)?", "#", line)
    return re.sub(r"[ \t]+", " ", line)


def blocks(path):
    """[(name, [(lineno, prompt, command, [expected lines])])] of the
    fenced blocks holding a prompt, named after their section."""
    with open(path) as f:
        lines = f.read().splitlines()
    out, section, fence, counts = [], "top", None, {}
    i = 0
    while i < len(lines):
        ln = lines[i]
        if fence is None:
            if ln.startswith("#") and re.match(r"^#+ ", ln):
                title = ln.lstrip("# ").split(":")[0].lower()
                section = re.sub(r"[^a-z0-9]+", "_", title).strip("_")
            elif ln.startswith("```"):
                fence = []
            i += 1
            continue
        if ln.startswith("```"):
            if fence:
                counts[section] = counts.get(section, 0) + 1
                out.append((f"{section}_{counts[section]}", fence))
            fence = None
            i += 1
            continue
        if ln.startswith(("# ", "$ ")):
            lineno, prompt, cmd = i + 1, ln[0], ln[2:]
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1] + " " + lines[i].strip()
            fence.append((lineno, prompt, cmd, []))
        elif fence:
            fence[-1][3].append(ln)
        i += 1
    return out


class Shell:
    """One bash for every command, as a terminal's: commands and their
    exit statuses over a pipe, each command's output into a file."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="readme-")
        env = {
            "PATH": os.path.join(ROOT, "build", "bin") + ":" + os.environ["PATH"],
            "HOME": "/tmp", "LANG": "C.UTF-8",
            "TERM": os.environ.get("TERM", "xterm-256color"),
            "XDG_CONFIG_HOME": self.dir,
        }
        self.p = subprocess.Popen(["bash", "--norc", "--noprofile"], cwd=ROOT, env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT)
        self.n = 0

    def run(self, prompt, cmd):
        """(exit status, output) of cmd."""
        self.n += 1
        out = os.path.join(self.dir, f"out.{self.n}")
        if prompt == "$":
            cmd = f"setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c {shq(cmd)}"
        self.p.stdin.write(f"{{\n{cmd}\n}} >{out} 2>&1 </dev/null; echo \"rc $?\"\n".encode())
        self.p.stdin.flush()
        line = readline(self.p.stdout, TIMEOUT)
        check(line.startswith("rc "), f"the shell said {line!r}")
        with open(out, errors="replace") as f:
            return int(line.split()[1]), f.read().replace(ROOT + "/", "")

    def close(self):
        """Ends the jobs the commands left running, then the shell."""
        if self.p.poll() is None:
            self.p.stdin.write(b"kill $(jobs -p) 2>/dev/null; wait; exit\n")
            self.p.stdin.close()
            try:
                self.p.wait(30)
            except subprocess.TimeoutExpired:
                self.p.kill()


def shq(s):
    return "'" + s.replace("'", "'\\''") + "'"


def matches(expected, actual):
    """True if actual's lines are expected's, "..." any lines."""
    pat = "".join(r"(?:.*\n)*?" if e.strip() == "..." else re.escape(normalize(e)) + r"\n"
                  for e in expected)
    return re.fullmatch(pat, "".join(normalize(a) + "\n" for a in actual)) is not None


def run_block(cmds):
    """Runs every command of a block (a later one's output is worth seeing
    even when an earlier one failed), then fails with what differed."""
    failures = []
    for lineno, prompt, cmd, expected in cmds:
        if cmd in EXCLUDED:
            print(f"# not run ({NAME}:{lineno}): {prompt} {cmd}: {EXCLUDED[cmd]}", flush=True)
            continue
        t0 = time.monotonic()
        rc, out = SHELL.run(prompt, cmd)
        print(f"# ran ({NAME}:{lineno}, {time.monotonic() - t0:.1f}s, exit {rc}): "
              f"{prompt} {cmd}", flush=True)
        actual = out.splitlines()
        same = matches(expected, actual)
        if rc != 0 or not same:
            diff = "\n".join(difflib.unified_diff(
                [normalize(e) for e in expected], [normalize(a) for a in actual],
                "README", "run", lineterm="", n=2))
            failures.append(f"{NAME}:{lineno}: `{cmd}`: exit status {rc}"
                            + ("" if same else f", output differs:\n{diff}")
                            + "\n--- its output:\n" + out[-4000:])
    check(not failures, "\n".join(failures))


def _block_test(name, cmds):
    def fn():
        run_block(cmds)
    fn.__name__ = name
    return fn


@test
def readme_has_commands():
    cmds = [c for _, b in BLOCKS for c in b]
    check(cmds, f"{README}: no command in a fenced block")
    every = {c[2] for c in cmds}
    stale = [c for c in EXCLUDED if c not in every]
    check(not stale, f"excluded commands the README no longer has: {stale}")
    print(f"# {README}: {len(cmds)} commands in {len(BLOCKS)} blocks, "
          f"{sum(c[2] in EXCLUDED for c in cmds)} excluded", flush=True)


BLOCKS = blocks(README)
for _name, _cmds in BLOCKS:
    test(_block_test(_name, _cmds))
SHELL = None


def setup():
    global SHELL
    SHELL = Shell()


def cleanup():
    if SHELL:
        SHELL.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv, setup=setup, cleanup=cleanup, root="readme-commands",
                  label="guest"))
