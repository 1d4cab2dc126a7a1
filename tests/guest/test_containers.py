#!/usr/bin/env python3
"""Containers and pods, with real containers: Debian's runc and crun run
tests/progs/memload in the cgroup layouts and with the state files of
containerd's CRI plugin (systemd cgroup driver), CRI-O (cgroupfs driver) and
a bare runc, and every tool names them: memtrack-top (-b --json and text,
--group, -F), memtrackd's /metrics, memtrack-leak -p.  In the VM (module
loaded) on the module and on /proc forced; on the host
(tests/host/test_containers.sh) on /proc, with libmemtrack's unit test of
every cgroup path form and state file first."""
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import (NOBODY, PAGE, ROOT, TESTBIN, check, proc_status,  # noqa: E402
                   readline, run_tests, status_bytes, test, variant_test)

IN_VM = bool(os.environ.get("MEMTRACK_VM"))
BIN = os.path.join(ROOT, "build", "bin")
TOP = os.path.join(BIN, "memtrack-top")
MEMLOAD = os.path.join(TESTBIN, "memload")
# the test variants (NAME_module, NAME_proc) and memtrack-top's arguments
# the module in the VM, /proc on the host (its suite, tests/host/test_containers.sh):
# each path once, the containers and their runtimes the same on both
PATHS = ["module"] if IN_VM else ["proc"]
ARGS = {"module": [], "proc": ["--proc"]}
TASKS = "/run/containerd/io.containerd.runtime.v2.task/k8s.io"
CRIO = "/run/containers/storage/overlay-containers"
MIB = 1 << 20


def cgroup2_unified():
    """cgroup v2 alone (no v1 hierarchy mounted): crun runs only there."""
    with open("/proc/self/mountinfo") as f:
        return not any(" - cgroup " in line for line in f)


# CRI-O's runtime is crun by default; on a host with cgroup v1 mounted too
# (hybrid), which crun refuses, runc runs its containers
CRUN = "crun" if cgroup2_unified() else "runc"


def cgroup2_root():
    """Where cgroup v2 is mounted (the host's is hybrid: .../unified)."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, post = line.split(" - ", 1)
            if post.startswith("cgroup2 "):
                return pre.split()[4]
    raise AssertionError("no cgroup2 mount")


def pod_uid():
    h = secrets.token_hex(16)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_rootfs = None


def rootfs():
    """A root for the containers: the host's /usr and the checkout, read-only."""
    global _rootfs
    if _rootfs:
        return _rootfs
    d = tempfile.mkdtemp(prefix="ctr-rootfs-")
    for sub in ("usr", "proc", "dev", "sys", "tmp", ROOT.lstrip("/")):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    for link in ("bin", "sbin", "lib", "lib64"):
        if os.path.islink("/" + link):
            os.symlink(os.readlink("/" + link), os.path.join(d, link))
    _rootfs = d
    return d


class Container:
    """memload in a container of runtime (runc or crun): cgroup path and
    bundle place as a runtime puts them, annotations as its CRI plugin
    writes them.  self.pids: memload's and a sleep's (its child)."""

    def __init__(self, runtime, cgroup, bundle, annotations, cid=None):
        self.runtime, self.cgroup, self.bundle = runtime, cgroup, bundle
        self.id = cid or secrets.token_hex(32)
        self.annotations = annotations
        self.p = None

    def __enter__(self):
        os.makedirs(self.bundle, exist_ok=True)
        subprocess.run(["runc", "spec", "--bundle", self.bundle], check=True)
        path = os.path.join(self.bundle, "config.json")
        with open(path) as f:
            spec = json.load(f)
        spec["root"] = {"path": rootfs(), "readonly": True}
        spec["process"]["terminal"] = False
        # memload's pid is the shell's (exec); the sleep its child
        spec["process"]["args"] = ["/bin/sh", "-c", f"sleep 1000 & exec {MEMLOAD}"]
        spec["process"]["cwd"] = "/"
        spec["mounts"] += [
            {"destination": "/usr", "type": "bind", "source": "/usr",
             "options": ["rbind", "ro"]},
            {"destination": ROOT, "type": "bind", "source": ROOT,
             "options": ["rbind", "ro"]},
        ]
        spec["linux"]["cgroupsPath"] = self.cgroup
        spec["annotations"] = self.annotations
        with open(path, "w") as f:
            json.dump(spec, f)
        self.p = subprocess.Popen([self.runtime, "run", "--bundle", self.bundle, self.id],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1)
        try:
            line = readline(self.p.stdout, 120)
            check(line.startswith("ok pid"), f"{self.runtime}: memload said {line!r}")
            self.pid = self.state()["pid"]
            deadline = time.time() + 30
            while True:
                kids = children(self.pid)
                if kids or time.time() > deadline:
                    break
                time.sleep(0.05)
            check(len(kids) == 1, f"{self.runtime}: memload's children {kids}")
            self.pids = [self.pid] + kids
        except BaseException:
            self.__exit__()
            raise
        return self

    def state(self):
        out = subprocess.run([self.runtime, "state", self.id], capture_output=True,
                             text=True, check=True).stdout
        return json.loads(out)

    def cmd(self, c):
        self.p.stdin.write(c + "\n")
        self.p.stdin.flush()
        line = readline(self.p.stdout, 60)
        check(line.startswith("ok"), f"memload {c!r}: {line!r}")

    def rss(self):
        """The sum of VmRSS over the container's processes, in bytes."""
        return sum(status_bytes(proc_status(p), "VmRSS") for p in self.pids)

    def __exit__(self, *exc):
        subprocess.run([self.runtime, "kill", self.id, "KILL"], capture_output=True)
        if self.p:
            try:
                self.p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        subprocess.run([self.runtime, "delete", "-f", self.id], capture_output=True)
        shutil.rmtree(self.bundle, ignore_errors=True)
        # the parents the runtime made (the pod's, the QoS class's) go too
        d = os.path.join(cgroup2_root(), self.cgroup.strip("/"))
        while d != cgroup2_root():
            try:
                os.rmdir(d)
            except OSError:
                pass
            d = os.path.dirname(d)


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def containerd_pod(runtime="runc", qos="burstable", ns="prod", pod="shop-7d9f",
                   name="web", sandbox=False):
    """A container as containerd's CRI plugin makes it with the kubelet's
    systemd cgroup driver: (Container, expected names)."""
    uid = pod_uid()
    cid = secrets.token_hex(32)
    slice_uid = uid.replace("-", "_")
    if qos == "guaranteed":
        parent = f"/kubepods.slice/kubepods-pod{slice_uid}.slice"
    else:
        parent = (f"/kubepods.slice/kubepods-{qos}.slice/"
                  f"kubepods-{qos}-pod{slice_uid}.slice")
    ann = {"io.kubernetes.cri.container-type": "sandbox" if sandbox else "container",
           "io.kubernetes.cri.sandbox-name": pod,
           "io.kubernetes.cri.sandbox-namespace": ns,
           "io.kubernetes.cri.sandbox-uid": uid}
    if not sandbox:
        ann["io.kubernetes.cri.container-name"] = name
    c = Container(runtime, f"{parent}/cri-containerd-{cid}.scope",
                  f"{TASKS}/{cid}", ann, cid)
    return c, {"runtime": "containerd", "id": cid, "name": "POD" if sandbox else name,
               "pod_uid": uid, "pod": pod, "namespace": ns, "qos": qos}


def crio_pod(runtime=CRUN, qos="besteffort", ns="kube-system", pod="api-5c",
             name="api"):
    """A container as CRI-O makes it with the cgroupfs driver."""
    uid = pod_uid()
    cid = secrets.token_hex(32)
    parent = f"/kubepods/{qos}/pod{uid}" if qos != "guaranteed" else f"/kubepods/pod{uid}"
    ann = {"io.kubernetes.container.name": name, "io.kubernetes.pod.name": pod,
           "io.kubernetes.pod.namespace": ns, "io.kubernetes.pod.uid": uid}
    c = Container(runtime, f"{parent}/crio-{cid}", f"{CRIO}/{cid}/userdata", ann, cid)
    return c, {"runtime": "cri-o", "id": cid, "name": name, "pod_uid": uid,
               "pod": pod, "namespace": ns, "qos": qos}


def bare(runtime):
    """A container run by runc or crun alone, in /ID: named by its ID."""
    cid = secrets.token_hex(32)
    c = Container(runtime, f"/{cid}", tempfile.mkdtemp(prefix="bundle-"), {}, cid)
    return c, {"runtime": runtime, "id": cid, "name": cid[:12], "pod_uid": None,
               "pod": None, "namespace": None, "qos": None}


def top_json(path, extra=()):
    cmd = [TOP, "-b", "--json", "-n", "1"] + ARGS[path] + list(extra)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    check(out.returncode == 0 and not out.stderr, f"{cmd}: rc {out.returncode} {out.stderr!r}")
    objs = [json.loads(line) for line in out.stdout.splitlines()]
    return objs[0], objs[1:]


def check_row(row, want, where):
    ct, pod = row["container"], row["pod"]
    check(ct == {"runtime": want["runtime"], "id": want["id"], "name": want["name"]},
          f"{where}: container {ct}, wanted {want}")
    if want["pod_uid"] is None:
        check(pod is None, f"{where}: pod {pod} outside Kubernetes")
    else:
        check(pod == {"uid": want["pod_uid"], "name": want["pod"],
                      "namespace": want["namespace"], "qos": want["qos"]},
              f"{where}: pod {pod}, wanted {want}")


@variant_test(PATHS)
def top_names_every_process_of_its_container(path):
    """Four containers at once (containerd's and CRI-O's, and runc and
    crun alone), each with two processes; every one of
    their rows names its container and pod exactly, every other row none
    (this test's own process), RSS as /proc's; the text table's CONTAINER
    and POD columns say the same."""
    a, wa = containerd_pod("runc")
    b, wb = crio_pod(CRUN)
    c, wc = bare("runc")
    d, wd = bare(CRUN)
    with a, b, c, d:
        a.cmd(f"anon {8 * MIB}")
        _, rows = top_json(path)
        by_pid = {r["pid"]: r for r in rows}
        for ctr, want in ((a, wa), (b, wb), (c, wc), (d, wd)):
            for pid in ctr.pids:
                check(pid in by_pid, f"pid {pid} of {want['runtime']} not listed")
                check_row(by_pid[pid], want, f"pid {pid}")
        me = by_pid.get(os.getpid())
        check(me and me["container"] is None and me["pod"] is None,
              f"this test's row: {me}")
        rss = by_pid[a.pid]["rss"]
        want = status_bytes(proc_status(a.pid), "VmRSS")
        check(abs(rss - want) <= PAGE * 4 and rss >= 8 * MIB,
              f"memload's RSS {rss}, /proc {want}")
        text = subprocess.run([TOP, "-b", "-n", "1"] + ARGS[path], capture_output=True,
                              text=True, timeout=300).stdout.splitlines()
        head = next(i for i, line in enumerate(text) if line.lstrip().startswith("PID "))
        titles = text[head].split()
        check("CONTAINER" in titles and "POD" in titles, f"titles {titles}")
        line = next(x for x in text[head:] if x.split()[0] == str(a.pid))
        check(f" {wa['name']} " in line and f" {wa['namespace']}/{wa['pod']}" in line,
              f"memload's text row: {line!r}")


@variant_test(PATHS)
def top_walks_the_cgroup_tree_once_and_reads_names_once(path):
    """Three refreshes of memtrack-top with a pod running: the cgroup tree
    is walked once in all (the first refresh's rows have cgroups not seen
    yet; the walk that finds their paths also feeds the containers' cache:
    a node of pods has hundreds of cgroups, two walks cost twice), the
    container's config.json is opened once, and its name is shown."""
    a, wa = containerd_pod("runc")
    with a, tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "strace.log")
        out = subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat", "-o", log, TOP,
                              "-b", "-n", "3", "-d", "0.2"] + ARGS[path],
                             capture_output=True, text=True, timeout=300)
        check(out.returncode == 0, f"memtrack-top under strace: rc {out.returncode} "
              f"{out.stderr[-300:]!r}")
        with open(log) as f:
            opens = f.read().splitlines()
        scope = f'"cri-containerd-{wa["id"]}.scope"'
        walked = [o for o in opens if scope in o and "O_DIRECTORY" in o]
        named = [o for o in opens if f'{wa["id"]}/config.json"' in o]
        check(len(walked) == 1, f"the pod's cgroup directory opened by walks "
              f"{len(walked)} times in 3 refreshes: {walked}")
        check(len(named) == 1, f"its config.json opened {len(named)} times: {named}")
        check(out.stdout.count(f" {wa['name']} ") >= 3,
              f"the container named in each refresh: {out.stdout.count(wa['name'])}")


@variant_test(PATHS)
def top_groups_and_filters_by_container_and_pod(path):
    """--group container: one row per container holding exactly its two
    processes and their RSS (/proc's sum, read around the sample); --group
    pod: the sandbox and the app container of one pod in one row of 4;
    -F pod=, namespace=, container=: exactly those processes."""
    app, wapp = containerd_pod("runc", pod="cart-1", name="cart")
    sandbox = Container("runc", os.path.dirname(app.cgroup) + "/cri-containerd-"
                        + (sid := secrets.token_hex(32)) + ".scope", f"{TASKS}/{sid}",
                        dict(app.annotations, **{"io.kubernetes.cri.container-type": "sandbox"}),
                        sid)
    other, wother = crio_pod(CRUN, ns="team-b", pod="db-0", name="db")
    with app, sandbox, other:
        app.cmd(f"anon {6 * MIB}")
        other.cmd(f"anon {3 * MIB}")
        before = {c.id: c.rss() for c in (app, sandbox, other)}
        _, rows = top_json(path, ["--group", "container"])
        after = {c.id: c.rss() for c in (app, sandbox, other)}
        groups = {r["container"]["id"]: r for r in rows if r["container"]}
        for c in (app, sandbox, other):
            g = groups.get(c.id)
            check(g and g["processes"] == 2 and g["comm"] == "(container)",
                  f"group of {c.id[:12]}: {g}")
            lo, hi = sorted((before[c.id], after[c.id]))
            check(lo - 4 * PAGE <= g["rss"] <= hi + 4 * PAGE,
                  f"{c.id[:12]}: RSS {g['rss']}, /proc {lo}..{hi}")
        check(groups[sandbox.id]["container"]["name"] == "POD", "the sandbox is POD")
        _, rows = top_json(path, ["--group", "pod"])
        pods = {r["pod"]["uid"]: r for r in rows if r["pod"]}
        pa = pods.get(wapp["pod_uid"])
        check(pa and pa["processes"] == 4 and pa["container"] is None
              and pa["pod"]["name"] == "cart-1", f"pod cart-1: {pa}")
        check(pods.get(wother["pod_uid"], {}).get("processes") == 2, f"pod db-0: {pods}")
        for flt, want in ((f"pod={'CART'}", app.pids + sandbox.pids),
                          ("namespace=team-b", other.pids),
                          ("container=cart", app.pids),
                          ("container=POD", sandbox.pids),
                          ("pod=nothing-like-it", [])):
            _, rows = top_json(path, ["-F", flt])
            check(sorted(r["pid"] for r in rows) == sorted(want),
                  f"-F {flt}: {[r['pid'] for r in rows]}, wanted {sorted(want)}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(url, timeout=60):
    deadline = time.time() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return r.read().decode()
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.2)


SERIES = re.compile(r'^([a-z_]+)\{(.*)\} (\S+)$')


def series(text, name):
    """{frozenset of (label, value)}: value, for the family name."""
    out = {}
    for line in text.splitlines():
        m = SERIES.match(line)
        if m and m.group(1) == name:
            labels = frozenset(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(2)))
            out[labels] = float(m.group(3))
    return out


@variant_test(PATHS)
def memtrackd_labels_programs_and_containers(path):
    """memtrackd (dropped to nobody, as installed): memload in a pod is the
    program {comm="memload",container,pod,namespace} with its exact
    process count and RSS; memtrack_container_* per container with
    container_id as kube-state-metrics writes it; the host's programs
    carry no such label."""
    a, wa = containerd_pod("runc", ns="shop", pod="front-1", name="nginx")
    b, wb = crio_pod(CRUN, ns="shop", pod="back-2", name="worker")
    port = free_port()
    with tempfile.NamedTemporaryFile("w", suffix=".conf") as conf, a, b:
        a.cmd(f"anon {5 * MIB}")
        conf.write(f"[memtrackd]\nlisten = 127.0.0.1\nport = {port}\n"
                   f"source = {path}\nsample_interval = 0\n")
        conf.flush()
        d = subprocess.Popen([os.path.join(BIN, "memtrackd"), "-f", "-c", conf.name],
                             stderr=subprocess.PIPE, text=True)
        try:
            lo = {c.id: c.rss() for c in (a, b)}
            text = scrape(f"http://127.0.0.1:{port}/metrics")
            hi = {c.id: c.rss() for c in (a, b)}
        finally:
            d.terminate()
            err = d.communicate(timeout=60)[1]
        check(d.returncode == 0, f"memtrackd: {d.returncode} {err}")
        procs = series(text, "memtrack_program_processes")
        for c, w in ((a, wa), (b, wb)):
            key = frozenset({("comm", "memload"), ("container", w["name"]),
                             ("pod", w["pod"]), ("namespace", w["namespace"])})
            check(procs.get(key) == 1, f"memload of {w['pod']}: {procs.get(key)} in {procs}")
            key = frozenset({("container", w["name"]), ("pod", w["pod"]),
                             ("namespace", w["namespace"]),
                             ("container_id", f"{w['runtime']}://{c.id}")})
            n = series(text, "memtrack_container_processes").get(key)
            check(n == 2, f"container {w['name']}: {n} processes")
            rss = sum(series(text, f"memtrack_container_rss_{k}_bytes")[key]
                      for k in ("anon", "file", "shmem"))
            check(lo[c.id] - 4 * PAGE <= rss <= hi[c.id] + 4 * PAGE,
                  f"container {w['name']}: RSS {rss}, /proc {lo[c.id]}..{hi[c.id]}")
        host = [k for k in procs if ("comm", "python3") in k]
        check(host and all(not any(n in ("container", "pod", "namespace") for n, _ in k)
                           for k in host), f"host programs: {host}")


# A test of the host suite only: in the VM it is not run.
host_test = (lambda fn: fn) if IN_VM else test


def prom_query(port, q):
    """An instant query of the Prometheus on 127.0.0.1:port: its result."""
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
    with urllib.request.urlopen(url, timeout=30) as r:
        body = json.loads(r.read().decode())
    check(body["status"] == "success", f"query {q}: {body}")
    return body["data"]["result"]


@host_test
def remote_write_carries_the_container_labels():
    """memtrackd remote-writing to Debian's Prometheus (its remote write
    receiver, no scrape): memload in a containerd pod arrives as
    memtrack_program_processes{comm="memload",container,pod,namespace} 1
    and its container as memtrack_container_processes{container_id} 2,
    the labels exactly as /metrics has them.  (Host only: the labels are
    the program table's, the same in module mode, and Prometheus under
    emulation would cost a minute per kernel.)"""
    a, w = containerd_pod("runc", ns="shop", pod="front-1", name="nginx")
    pport, mport = free_port(), free_port()
    d = tempfile.mkdtemp(prefix="mtdprom.")
    with open(os.path.join(d, "prom.yml"), "w") as f:
        f.write("global:\n  scrape_interval: 1h\n")
    prom = subprocess.Popen(["prometheus", f"--config.file={d}/prom.yml",
                             f"--storage.tsdb.path={d}/data",
                             f"--web.listen-address=127.0.0.1:{pport}",
                             "--web.enable-remote-write-receiver"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mtd = None
    try:
        scrape(f"http://127.0.0.1:{pport}/-/ready")
        with tempfile.NamedTemporaryFile("w", suffix=".conf") as conf, a:
            conf.write(f"[memtrackd]\nlisten = 127.0.0.1\nport = {mport}\n"
                       "source = proc\nsample_interval_ms = 500\n"
                       f"remote_write = http://127.0.0.1:{pport}/api/v1/write\n")
            conf.flush()
            mtd = subprocess.Popen([os.path.join(BIN, "memtrackd"), "-f", "-c", conf.name],
                                   stderr=subprocess.DEVNULL)
            sel = (f'comm="memload",container="{w["name"]}",pod="{w["pod"]}",'
                   f'namespace="{w["namespace"]}"')
            cid = f'container_id="{w["runtime"]}://{a.id}"'
            deadline = time.time() + 60
            while True:
                prog = prom_query(pport, f"memtrack_program_processes{{{sel}}}")
                cont = prom_query(pport, f"memtrack_container_processes{{{cid}}}")
                if prog and cont or time.time() > deadline:
                    break
                time.sleep(0.5)
            check(len(prog) == 1 and float(prog[0]["value"][1]) == 1,
                  f"memload of {w['pod']} in Prometheus: {prog}")
            check(len(cont) == 1 and float(cont[0]["value"][1]) == 2 and
                  all(cont[0]["metric"].get(k) == w[v] for k, v in
                      (("container", "name"), ("pod", "pod"), ("namespace", "namespace"))),
                  f"container {w['name']} in Prometheus: {cont}")
    finally:
        for p in (mtd, prom):
            if p:
                p.terminate()
                p.wait(timeout=60)
        shutil.rmtree(d, ignore_errors=True)


@variant_test(PATHS)
def query_sums_by_namespace_and_pod(path):
    """A node relaying to memtrackd --aggregate: memtrack-query's sum by
    namespace,pod holds each pod's exact process count (memload and its
    sleep) and its RSS (/proc's sum, read around the sample); where
    namespace= and container= keep exactly theirs, top N where pod= their
    processes only; the host's programs in the row of namespace "" ."""
    a, wa = containerd_pod("runc", ns="shop", pod="front-1", name="nginx")
    b, wb = crio_pod(CRUN, ns="shop", pod="back-2", name="worker")
    c, wc = containerd_pod("runc", ns="ops", pod="mon-3", name="agent")
    aport, mport = free_port(), free_port()
    agg_dir = tempfile.mkdtemp(prefix="ctragg.")
    with open(os.path.join(agg_dir, "agg.conf"), "w") as f:
        f.write(f"[aggregate]\nlisten = 127.0.0.1\nport = {aport}\n")
    with open(os.path.join(agg_dir, "node.conf"), "w") as f:
        f.write(f"[memtrackd]\nlisten = 127.0.0.1\nport = {mport}\nnode = n1\n"
                f"source = {path}\nsample_interval = 500ms\n"
                f"aggregators = 127.0.0.1:{aport}\n")
    daemons = []

    def query(*words):
        r = subprocess.run([os.path.join(BIN, "memtrack-query"), "-s",
                            f"127.0.0.1:{aport}", "--json"] + list(words),
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, f"memtrack-query {words}: {r.returncode} {r.stderr}")
        return json.loads(r.stdout)

    try:
        with a, b, c:
            a.cmd(f"anon {4 * MIB}")
            for args in (["--aggregate", "-c", os.path.join(agg_dir, "agg.conf")],
                         ["-c", os.path.join(agg_dir, "node.conf")]):
                daemons.append(subprocess.Popen([os.path.join(BIN, "memtrackd"), "-f"] + args,
                                                stderr=subprocess.DEVNULL))
            deadline = time.time() + 60
            while True:
                r = subprocess.run([os.path.join(BIN, "memtrack-query"), "-s",
                                    f"127.0.0.1:{aport}", "--json", "nodes"],
                                   capture_output=True, text=True, timeout=60)
                if r.returncode == 0 and '"up"' in r.stdout or time.time() > deadline:
                    break
                time.sleep(0.3)
            lo = {x.id: x.rss() for x in (a, b, c)}
            time.sleep(1.2)     # a sample after lo, relayed
            rows = query("sum", "rss,nproc", "by", "namespace,pod")
            hi = {x.id: x.rss() for x in (a, b, c)}
            got = {(r["namespace"], r["pod"]): r for r in rows}
            for x, w in ((a, wa), (b, wb), (c, wc)):
                g = got.get((w["namespace"], w["pod"]))
                check(g and g["nproc"] == 2, f"{w['pod']}: {g}")
                check(min(lo[x.id], hi[x.id]) - 4 * PAGE <= g["rss"]
                      <= max(lo[x.id], hi[x.id]) + 4 * PAGE,
                      f"{w['pod']}: rss {g['rss']}, /proc {lo[x.id]}..{hi[x.id]}")
            host = got.get(("", ""))
            check(host and host["nproc"] >= 3, f"the host's row: {host}")
            rows = query("sum", "nproc", "by", "pod,comm", "where", "namespace=shop")
            check(sorted((r["pod"], r["comm"], r["nproc"]) for r in rows) ==
                  [("back-2", "memload", 1), ("back-2", "sleep", 1),
                   ("front-1", "memload", 1), ("front-1", "sleep", 1)],
                  f"namespace=shop: {rows}")
            rows = query("sum", "nproc", "where", "container=agent")
            check([r["nproc"] for r in rows] == [2], f"container=agent: {rows}")
            rows = query("top", "10", "where", "pod=front-1")
            check(sorted(r["pid"] for r in rows) == sorted(a.pids),
                  f"top where pod=front-1: {[r['pid'] for r in rows]}, wanted {a.pids}")
    finally:
        for d in daemons:
            d.terminate()
            d.wait(timeout=60)
        shutil.rmtree(agg_dir, ignore_errors=True)


@variant_test(PATHS)
def ui_names_the_container_in_the_pane_and_groups_by_it(path):
    """Interactively (tmux): -F container=web leaves memload's two
    processes; Enter on the first names its container, runtime, short ID,
    pod and QoS in the detail pane; G one row per container (the pod's
    processes summed), G again per pod, F4 with namespace= filtering."""
    from tmuxlib import Tmux
    a, wa = containerd_pod("runc", ns="prod", pod="shop-1", name="web")
    with a, Tmux() as tm:
        tm.type(" ".join([TOP, "-d", "0.5", "-F", "container=web"] + ARGS[path]))
        tm.keys("Enter")

        def pids(ls):
            return [int(line.split()[0]) for line in ls
                    if line.split() and line.split()[0].isdigit()]
        tm.wait(lambda ls: sorted(pids(ls)) == sorted(a.pids), "-F container=web")
        tm.keys("Enter")
        want = (f"in container web (containerd {a.id[:12]}) in pod prod/shop-1, "
                "QoS burstable")
        tm.wait(lambda ls: any(line.strip() == want for line in ls),
                f"the detail pane: no {want!r}")
        tm.keys("Enter", "G")
        tm.wait(lambda ls: any("(container)" in line and " web " in line and
                               "prod/shop-1" in line and line.split()[0] == "2x"
                               for line in ls) and any("view: per container" in line for line in ls),
                "G: one row of the container's 2 processes")
        tm.keys("G")
        tm.wait(lambda ls: any("(pod)" in line and "prod/shop-1" in line and
                               line.split()[0] == "2x" for line in ls)
                and any("view: per pod" in line for line in ls), "G G: per pod")
        tm.keys("G", "F4")
        tm.wait(lambda ls: any(line.startswith("Filter: container=web") for line in ls),
                "F4: no prompt starting from the filter")
        tm.keys("C-u")
        tm.type("namespace=nope")
        tm.keys("Enter")
        tm.wait(lambda ls: not pids(ls) and any("filter: namespace=nope" in line
                                                for line in ls),
                "namespace=nope: no row")
        tm.keys("q")
        tm.wait(lambda ls: not tm.alternate_on(), "q")


DAEMONSET = os.path.join(ROOT, "packaging", "kubernetes", "memtrackd-daemonset.yaml")


def daemonset_mounts():
    """The DaemonSet's memtrackd container: {mount path: host path} of its
    hostPath volumes, and its ConfigMap's memtrackd.conf."""
    import yaml
    with open(DAEMONSET) as f:
        docs = list(yaml.safe_load_all(f))
    ds = next(d for d in docs if d["kind"] == "DaemonSet")
    cm = next(d for d in docs if d["kind"] == "ConfigMap")
    check(ds["apiVersion"] == "apps/v1" and cm["apiVersion"] == "v1", "apiVersions")
    spec = ds["spec"]["template"]["spec"]
    check(ds["spec"]["selector"]["matchLabels"].items() <=
          ds["spec"]["template"]["metadata"]["labels"].items(), "selector")
    check(spec["hostPID"] is True and spec["hostNetwork"] is True, "host PID and network")
    ann = ds["spec"]["template"]["metadata"]["annotations"]
    (ctr,) = spec["containers"]
    conf = cm["data"]["memtrackd.conf"]
    port = int(re.search(r"^port = (\d+)$", conf, re.M).group(1))
    check(ann["prometheus.io/scrape"] == "true" and int(ann["prometheus.io/port"]) == port
          and ctr["ports"][0]["containerPort"] == port, f"scrape annotations {ann}")
    check(re.search(r"^rootfs = /host$", conf, re.M), "rootfs = /host")
    vols = {v["name"]: v for v in spec["volumes"]}
    mounts = {}
    for m in ctr["volumeMounts"]:
        v = vols[m["name"]]
        if "hostPath" not in v:
            continue
        check(m.get("readOnly") is True, f"{m['name']} not read-only")
        check(m["mountPath"] == "/host" + v["hostPath"]["path"],
              f"{m['name']}: {m['mountPath']} for {v['hostPath']['path']}")
        mounts[m["mountPath"]] = v["hostPath"]["path"]
    caps = ctr["securityContext"]["capabilities"]
    check(caps["drop"] == ["ALL"] and "DAC_READ_SEARCH" in caps["add"], f"caps {caps}")
    return mounts


def docker_layout(runtime="runc"):
    """A container in Docker's layout (systemd driver), its config.v2.json
    under state (a folder standing for /var/lib/docker/containers)."""
    cid = secrets.token_hex(32)
    c = Container(runtime, f"/system.slice/docker-{cid}.scope",
                  tempfile.mkdtemp(prefix="bundle-"), {}, cid)
    return c, {"runtime": "docker", "id": cid, "name": "redis-1", "pod_uid": None,
               "pod": None, "namespace": None, "qos": None}


# a test of the host's suite only: a pod without the module reads /proc
@host_test
def daemonset_agent_in_a_cgroup_namespace_names_the_hosts():
    """The DaemonSet (packaging/kubernetes): its mounts as the kubelet makes
    them under a root (the host's paths bound there, a runtime the host
    lacks an empty folder), memtrack-top run as in the pod: in a mount and
    cgroup namespace of its own (the process in a cgroup of its own
    first, its cgroup2 mounted afresh), MEMTRACK_ROOTFS the root.  It names
    containers of containerd, CRI-O, Docker, runc and crun exactly; every
    path it opens under the root is under a mount of the DaemonSet, and
    each mount is opened."""
    mounts = daemonset_mounts()
    root = tempfile.mkdtemp(prefix="dsroot-")
    bound = []
    docker_state = None
    a, wa = containerd_pod("runc", ns="prod", pod="shop-1", name="web")
    b, wb = crio_pod(CRUN, ns="kube-system", pod="dns-2", name="coredns")
    c, wc = bare("runc")
    d, wd = docker_layout()
    agent_cg = os.path.join(cgroup2_root(), f"agent-{secrets.token_hex(4)}")
    # ctr's /NAMESPACE/ID with no runtime's state left: every runtime's
    # folder looked in, then the ID
    orphan_id = secrets.token_hex(32)
    orphan_cg = os.path.join(cgroup2_root(), f"default-{orphan_id[:8]}", orphan_id)
    orphan = None
    try:
        for mnt, host in sorted(mounts.items()):
            target = root + mnt[len("/host"):]
            os.makedirs(target, exist_ok=True)
            src = cgroup2_root() if host == "/sys/fs/cgroup" else host
            if host == "/var/lib/docker/containers":
                docker_state = target      # the test's: this host has no Docker
                continue
            if os.path.isdir(src):
                subprocess.run(["mount", "--bind", "-o", "ro", src, target], check=True)
                subprocess.run(["mount", "-o", "remount,bind,ro", target], check=True)
                bound.append(target)
        with a, b, c, d:
            os.makedirs(os.path.join(docker_state, d.id))
            with open(os.path.join(docker_state, d.id, "config.v2.json"), "w") as f:
                json.dump({"ID": d.id, "Name": "/redis-1", "Config": {"Labels": {}}}, f)
            os.mkdir(agent_cg)
            os.makedirs(orphan_cg)
            orphan = subprocess.Popen(["sleep", "1000"])
            with open(os.path.join(orphan_cg, "cgroup.procs"), "w") as f:
                f.write(str(orphan.pid))
            log = os.path.join(root, "strace.log")
            inner = (f"echo $$ > {agent_cg}/cgroup.procs && "
                     f"exec unshare -m -C sh -c 'mkdir -p /tmp/cg{os.getpid()} && "
                     f"mount -t cgroup2 none /tmp/cg{os.getpid()} && "
                     f"exec strace -f -qq -e trace=%file -o {log} "
                     f"{TOP} -b --json -n 1 --proc'")
            out = subprocess.run(["sh", "-c", inner], capture_output=True, text=True,
                                 timeout=300, env=dict(os.environ, MEMTRACK_ROOTFS=root))
            check(out.returncode == 0 and not out.stderr,
                  f"in the namespaces: {out.returncode} {out.stderr!r}")
            rows = {r["pid"]: r for r in map(json.loads, out.stdout.splitlines()[1:])}
            for x, w in ((a, wa), (b, wb), (c, wc), (d, wd)):
                check(x.pid in rows, f"{w['runtime']}'s pid {x.pid} not listed")
                check_row(rows[x.pid], w, f"{w['runtime']} seen from the pod")
            check(rows[orphan.pid]["container"] == {"runtime": "unknown", "id": orphan_id,
                                                    "name": orphan_id[:12]},
                  f"no runtime's: {rows[orphan.pid]['container']}")
            with open(log) as f:
                opened = set(re.findall(r'"(' + re.escape(root) + r'/[^"]*)"', f.read()))
            used = {m for m in mounts if any(p == root + m[5:] or
                                             p.startswith(root + m[5:] + "/")
                                             for p in opened)}
            # runc's state names a bundle anywhere (this one's under /tmp):
            # followed when mounted, else the container keeps its ID
            stray = sorted(p for p in opened
                           if not any(p == root + m[5:] or p.startswith(root + m[5:] + "/")
                                      for m in mounts) and not p.endswith("strace.log")
                           and not p.startswith(root + c.bundle + "/"))
            check(not stray, f"opened outside the DaemonSet's mounts: {stray[:5]}")
            check(used == set(mounts), f"mounted, never opened: {sorted(set(mounts) - used)}")
    finally:
        if orphan:
            orphan.kill()
            orphan.wait()
        for t in reversed(bound):
            subprocess.run(["umount", t])
        for cg in (agent_cg, orphan_cg, os.path.dirname(orphan_cg)):
            subprocess.run(["rmdir", cg], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@test
def leak_p_says_the_container_and_pod():
    """memtrack-leak -p on a process in a pod names its container and pod
    (text on stderr, whatever the engine)."""
    a, wa = containerd_pod("runc", ns="prod", pod="pay-9", name="payments")
    with a:
        out = subprocess.run([os.path.join(BIN, "memtrack-leak"), "-p", str(a.pid),
                              "-n", "1", "-i", "1"], capture_output=True, text=True,
                             timeout=300)
        want = (f"memtrack-leak: {a.pid} is in container payments "
                f"(containerd {a.id[:12]}) in pod prod/pay-9")
        check(want in out.stderr.splitlines(), f"stderr: {out.stderr!r}, wanted {want!r}")


@variant_test(PATHS)
def unreadable_or_broken_state_keeps_the_id(path):
    """A bundle whose config.json is cut short, and state nobody may read:
    the container is named by its ID's first 12 digits, its pod by what the
    cgroup path says (UID, QoS), nothing on stderr, exit 0."""
    a, wa = containerd_pod("runc")
    b, wb = containerd_pod("runc", pod="ok-1", name="fine")
    with a, b:
        with open(os.path.join(a.bundle, "config.json"), "r+") as f:
            f.truncate(100)
        _, rows = top_json(path)
        by_pid = {r["pid"]: r for r in rows}
        check(by_pid[a.pid]["container"] == {"runtime": "containerd", "id": a.id,
                                             "name": a.id[:12]}
              and by_pid[a.pid]["pod"] == {"uid": wa["pod_uid"], "name": None,
                                           "namespace": None, "qos": "burstable"},
              f"cut config.json: {by_pid[a.pid]}")
        check_row(by_pid[b.pid], wb, "beside it")
        # as nobody: containerd's state is root's (its task folders 0700)
        mode = os.stat(TASKS).st_mode & 0o777
        os.chmod(TASKS, 0o700)
        try:
            out = subprocess.run([TOP, "-b", "--json", "-n", "1"] + ARGS[path],
                                 capture_output=True, text=True, timeout=300,
                                 preexec_fn=lambda: (os.setgid(NOBODY), os.setuid(NOBODY)))
        finally:
            os.chmod(TASKS, mode)
        check(out.returncode == 0 and not out.stderr,
              f"as nobody: {out.returncode} {out.stderr!r}")
        rows = {r["pid"]: r for r in map(json.loads, out.stdout.splitlines()[1:])}
        check(rows[b.pid]["container"] == {"runtime": "containerd", "id": b.id,
                                           "name": b.id[:12]}
              and rows[b.pid]["pod"]["uid"] == wb["pod_uid"]
              and rows[b.pid]["pod"]["name"] is None,
              f"as nobody: {rows[b.pid]}")


if __name__ == "__main__":
    sys.exit(run_tests(sys.argv))
