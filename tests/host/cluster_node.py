#!/usr/bin/env python3
"""One node of tests/host/test_cluster.py, run inside the node's network
namespace and its own pid namespace (unshare --pid --fork --mount-proc), so
that its memtrackd (/proc mode) sees only this node's processes: starts
memtrackd and COUNT copies of memload named COMM, each mapping and touching
its own number of bytes, then answers commands on stdin with one JSON line
each on stdout:

  status     {"procs": [{"pid", "anon", "file", "shmem", "rss"}...]} from
             /proc/PID/status of the workload (this namespace's pids)
  metrics    {"text": the node's /metrics}
  kill       SIGKILL the node's memtrackd
  term       SIGTERM it and wait for it to exit: {"status"}
  start      start it again (a new session)
  named HEX  start a sleeper whose comm is those bytes (prctl PR_SET_NAME):
             {"pid"}; not part of the workload
  quit       stop everything

usage: cluster_node.py CONF PORT COMM BYTES[,BYTES...]"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DAEMON = os.path.join(ROOT, "build", "bin", "memtrackd")
MEMLOAD = os.path.join(ROOT, "build", "tests", "memload")


# A process named by the bytes of argv[1] (hex), which need not be UTF-8.
NAMED = ("import ctypes, sys, time\n"
         "ctypes.CDLL(None).prctl(15, bytes.fromhex(sys.argv[1]), 0, 0, 0)\n"
         "print('ok', flush=True)\n"
         "time.sleep(1e6)\n")


def out(**kw):
    print(json.dumps(kw), flush=True)


def status(pid):
    f = {}
    with open(f"/proc/{pid}/status") as s:
        for line in s:
            k, _, v = line.partition(":")
            if k in ("RssAnon", "RssFile", "RssShmem", "VmRSS"):
                f[k] = int(v.split()[0]) * 1024
    return {"pid": pid, "anon": f["RssAnon"], "file": f["RssFile"],
            "shmem": f["RssShmem"], "rss": f["VmRSS"]}


class Node:
    def __init__(self, conf, port, comm, sizes):
        self.conf, self.port = conf, port
        self.dir = tempfile.mkdtemp(prefix="mtdclus.")
        os.chmod(self.dir, 0o755)
        self.err = open(conf + ".stderr", "a")
        prog = os.path.join(self.dir, comm)
        shutil.copy(MEMLOAD, prog)
        self.work = []
        self.named = []
        for size in sizes:
            p = subprocess.Popen([prog], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True, bufsize=1)
            for cmd in (None, f"anon {size}"):
                if cmd:
                    p.stdin.write(cmd + "\n")
                    p.stdin.flush()
                if not p.stdout.readline().startswith("ok"):
                    raise RuntimeError("memload did not answer")
            self.work.append(p)
        self.daemon = None
        self.start()

    def start(self):
        self.daemon = subprocess.Popen([DAEMON, "-f", "-c", self.conf],
                                       stdout=subprocess.DEVNULL, stderr=self.err)
        deadline = time.time() + 30
        while True:
            try:
                self.metrics()
                return
            except OSError:
                if self.daemon.poll() is not None or time.time() > deadline:
                    raise RuntimeError("memtrackd did not start")
                time.sleep(0.05)

    def metrics(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics",
                                    timeout=30) as r:
            return r.read().decode()

    def kill(self):
        if self.daemon and self.daemon.poll() is None:
            self.daemon.send_signal(signal.SIGKILL)
            self.daemon.wait()

    def term(self):
        self.daemon.send_signal(signal.SIGTERM)
        return self.daemon.wait(timeout=60)

    def start_named(self, comm):
        p = subprocess.Popen([sys.executable, "-c", NAMED, comm],
                             stdout=subprocess.PIPE, text=True)
        if p.stdout.readline().strip() != "ok":
            raise RuntimeError("the named sleeper did not start")
        self.named.append(p)
        return p.pid

    def end_named(self, pid):
        """Kill the named sleeper pid (and reap it): True if it was one."""
        for p in self.named:
            if p.pid == pid:
                p.kill()
                p.wait()
                self.named.remove(p)
                return True
        return False

    def quit(self):
        self.kill()
        for p in self.work + self.named:
            p.kill()
            p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def main(argv):
    conf, port, comm, sizes = argv[1], int(argv[2]), argv[3], argv[4]
    n = Node(conf, port, comm, [int(s) for s in sizes.split(",")])
    out(ev="ready", pids=[p.pid for p in n.work])
    try:
        for line in sys.stdin:
            cmd = line.strip()
            if cmd == "status":
                out(procs=[status(p.pid) for p in n.work])
            elif cmd == "metrics":
                out(text=n.metrics())
            elif cmd == "kill":
                n.kill()
                out(ok=True)
            elif cmd == "term":
                out(status=n.term())
            elif cmd == "start":
                n.start()
                out(ok=True)
            elif cmd.startswith("named "):
                out(pid=n.start_named(cmd.split()[1]))
            elif cmd.startswith("endnamed "):
                out(ok=n.end_named(int(cmd.split()[1])))
            elif cmd == "quit":
                break
            else:
                out(error=f"unknown command {cmd}")
    finally:
        n.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
