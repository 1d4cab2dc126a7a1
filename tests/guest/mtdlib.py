"""memtrackd test helpers, shared by the host test (/proc mode) and the
guest suite (module mode): run the daemon with a config, fetch and parse
/metrics, run copies of memload under a chosen comm."""
import gzip
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DAEMON = os.path.join(ROOT, "build", "bin", "memtrackd")
QUERY = os.path.join(ROOT, "build", "bin", "memtrack-query")
MEMLOAD = os.path.join(ROOT, "build", "tests", "memload")
PAGE = os.sysconf("SC_PAGE_SIZE")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


DASHBOARD = os.path.join(ROOT, "packaging", "grafana-dashboard.json")


def dashboard_queries():
    """Every PromQL expression of the Grafana dashboard, its $variables
    given a value that matches anything (the JSON must load)."""
    with open(DASHBOARD) as f:
        dash = json.load(f)
    names = sorted((v["name"] for v in dash["templating"]["list"]
                    if v["type"] == "query"), key=len, reverse=True)
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    for n in names:     # the longest first: $pod is not a part of another
        exprs = [e.replace("$" + n, ".*") for e in exprs]
    return exprs


def dashboard_variable(name):
    """The dashboard's variable name, a query_result(PROMQL) one: its
    PromQL (the other $variables matching anything) and its regex."""
    with open(DASHBOARD) as f:
        dash = json.load(f)
    var = {v["name"]: v for v in dash["templating"]["list"]}[name]
    q = var["query"]["query"]
    assert q.startswith("query_result(") and q.endswith(")"), q
    q = q[len("query_result("):-1]
    for n in sorted(var_names(dash), key=len, reverse=True):
        q = q.replace("$" + n, ".*")
    return q, var["regex"].strip("/")


def var_names(dash):
    return [v["name"] for v in dash["templating"]["list"] if v["type"] == "query"]


def grafana_values(result, regex):
    """A variable's values as Grafana takes them from query_result's answer:
    each element as the text NAME{K="V",...} VALUE MS, the regex's first
    group of each, once each."""
    got = []
    for r in result:
        m = dict(r["metric"])
        text = m.pop("__name__", "") + "{" + ",".join(f'{k}="{v}"' for k, v in m.items())
        text += "} %s %d" % (r["value"][1], r["value"][0] * 1000)
        hit = re.search(regex, text)
        if hit and hit.group(1) not in got:
            got.append(hit.group(1))
    return got


def grafana_regex(values):
    """$var in a query for these values, as Grafana's Prometheus data
    source writes a multi-value variable: regex-escaped for a PromQL
    string, several as (a|b)."""
    esc = [re.sub(r"([$^*{}\[\]'+?.()|\\])", r"\\\\\1", v) for v in values]
    return esc[0] if len(esc) == 1 else "(" + "|".join(esc) + ")"


def dashboard_metrics():
    """The metric names those expressions read."""
    return {m for e in dashboard_queries() for m in re.findall(r"\bmemtrack_[a-z0-9_]+", e)}


class Daemon:
    """memtrackd -f with the given [memtrackd] keys; stopped on exit.
    port=None writes no port key: listen then carries it (HOST:PORT)."""

    def __init__(self, netns=None, **keys):
        self.netns = netns
        self.dir = tempfile.mkdtemp(prefix="mtd.")
        if keys.get("port", 0) is None:
            del keys["port"]
            self.port = int(keys["listen"].rsplit(":", 1)[1])
        else:
            self.port = keys.setdefault("port", free_port())
        self.conf = os.path.join(self.dir, "memtrackd.conf")
        with open(self.conf, "w") as f:
            f.write("[memtrackd]\n")
            for k, v in keys.items():
                f.write(f"{k} = {v}\n")
        self.err = open(os.path.join(self.dir, "stderr"), "w+")
        pre = ["ip", "netns", "exec", netns] if netns else []
        self.p = subprocess.Popen(pre + [DAEMON, "-f", "-c", self.conf],
                                  stdout=subprocess.DEVNULL, stderr=self.err)
        # The port listens before the first sample is taken; the first
        # scrape is served after it, so a test's processes started from here
        # on are new to the daemon.
        deadline = time.time() + 30
        while True:
            try:
                self.text()
                break
            except OSError:
                if self.p.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"memtrackd did not start: {self.stderr()}")
                time.sleep(0.05)

    def stderr(self):
        self.err.flush()
        with open(self.err.name) as f:
            return f.read()

    def url(self, path="/metrics"):
        return f"http://127.0.0.1:{self.port}{path}"

    def text(self, headers=None):
        """The /metrics body, decoded (gzip too)."""
        if self.netns:
            r = subprocess.run(["ip", "netns", "exec", self.netns, "curl", "-sSf",
                                "--max-time", "60", self.url()],
                               capture_output=True, text=True)
            if r.returncode:
                raise OSError(r.stderr)
            return r.stdout
        req = urllib.request.Request(self.url(), headers=headers or {})
        with urllib.request.urlopen(req, timeout=60) as r:
            body = r.read()
            if r.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            return body.decode()

    def metrics(self):
        return parse(self.text())

    def alive(self):
        return self.p.poll() is None

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            self.p.wait(timeout=30)
        self.err.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return self.p.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def _unescape(v):
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


def parse(text):
    """{name: [(labels dict, float value)]} of every sample line."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if "{" in line:
            name, rest = line.split("{", 1)
            labels_s, value = rest.rsplit("} ", 1)
            labels = {k: _unescape(v) for k, v in _LABEL.findall(labels_s)}
        else:
            name, value = line.split(" ", 1)
            labels = {}
        out.setdefault(name, []).append((labels, float(value)))
    return out


def value(m, name, **labels):
    """The value of the one series of name with these labels, None if none."""
    hits = [v for l, v in m.get(name, []) if all(l.get(k) == x for k, x in labels.items())]
    if len(hits) > 1:
        raise AssertionError(f"{name}{labels}: {len(hits)} series")
    return hits[0] if hits else None


class Named:
    """memload copied to DIR/comm, so its processes have that comm."""

    def __init__(self, comm):
        self.dir = tempfile.mkdtemp(prefix="mtdprog.")
        os.chmod(self.dir, 0o755)
        self.path = os.path.join(self.dir, comm)
        shutil.copy(MEMLOAD, self.path)
        self.procs = []

    def start(self, *cmds, uid=None):
        def as_uid():
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        p = subprocess.Popen([self.path], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, bufsize=1,
                             preexec_fn=as_uid if uid is not None else None)
        self._expect(p, "ok pid")
        for c in cmds:
            self.cmd(p, c)
        self.procs.append(p)
        return p

    @staticmethod
    def _expect(p, prefix):
        line = p.stdout.readline()
        if not line.startswith(prefix):
            raise AssertionError(f"memload: expected {prefix!r}, got {line!r}")

    def cmd(self, p, c):
        p.stdin.write(c + "\n")
        p.stdin.flush()
        self._expect(p, "ok")

    def kill(self, p):
        p.kill()
        p.wait()
        self.procs.remove(p)

    def close(self):
        for p in self.procs:
            p.kill()
            p.wait()
        self.procs = []
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def status_bytes(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def stat_fields(pid):
    """/proc/PID/stat fields after the comm (index 0 = state)."""
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    return s[s.rindex(")") + 2:].split()


def minflt(pid):
    return int(stat_fields(pid)[7])


def comm_of(pid):
    """/proc/PID/comm, None if the process is gone."""
    try:
        with open(f"/proc/{pid}/comm", "rb") as f:
            return f.read().rstrip(b"\n").decode("utf-8", "replace")
    except OSError:
        return None
