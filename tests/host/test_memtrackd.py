#!/usr/bin/env python3
"""Host tests of memtrackd in /proc mode (no module needed): config errors,
privilege dropping, the HTTP surface, promtool, per-program figures against
/proc, monotonic per-program counters across exits, top-N per-PID series,
a real Prometheus server scraping it, and hostile HTTP input.

Needs root (it checks the drop to nobody), build/bin/memtrackd and
build/tests/memload.  Run with tests/lib/harness.py: test names as
arguments run only those, --list prints them; "PASS name" / "FAIL name:
why" lines; exits 1 if any failed."""
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "guest"), os.path.join(HERE, "..", "lib")]
import mtdlib  # noqa: E402
from mtdlib import Daemon, Named, value, status_bytes, minflt, PAGE  # noqa: E402
from harness import check, main, test  # noqa: E402

MiB = 1 << 20


def run_daemon_expecting_error(conf_text, *args):
    d = tempfile.mkdtemp()
    try:
        path = os.path.join(d, "c.ini")
        with open(path, "w") as f:
            f.write(conf_text)
        p = subprocess.run([mtdlib.DAEMON, "-f", "-c", path, *args],
                           capture_output=True, text=True, timeout=30)
        return p.returncode, p.stderr.replace(path, "FILE")
    finally:
        shutil.rmtree(d)


@test
def config_errors():
    port = mtdlib.free_port()
    cases = [
        ("[memtrackd]\nbogus = 1\n", 'FILE:2: unknown key "bogus"'),
        ("[memtrackd]\nport = 0\n", "FILE:2: port = \"0\": must be 1..65535"),
        ("[memtrackd]\nport = 65536\n", "must be 1..65535"),
        ("[memtrackd]\nport = 12x\n", "must be 1..65535"),
        ("[memtrackd]\nsource = kernel\n", "must be auto, module or proc"),
        ("[memtrackd]\nlisten = localhost\n", "numeric IPv4 or IPv6"),
        ("[memtrackd]\ntop_pids = 1001\n", "must be 0..1000"),
        ("[memtrackd]\ntop_pids = -1\n", "must be 0..1000"),
        ("[memtrackd]\nsample_interval_ms = 50\n", "must be 0 or 100..3600000"),
        ("[memtrackd]\nkeep_ptrace = maybe\n", "must be yes or no"),
        ("[memtrackd]\nnode =\n", "must be 1..255"),
        ("[other]\nport = 1\n", "FILE:2: unknown section [other]"),
        ("[memtrackd]\nport = 9000\nthis line has no equals\n", "FILE:3:"),
        ("[memtrackd]\naggregators = 10.0.0.1\n", "must be ADDRESS:PORT"),
        ("[memtrackd]\naggregators = ::1:9472\n", "must be ADDRESS:PORT"),
        ("[memtrackd]\naggregators = agg.example:9472\n", "must be ADDRESS:PORT"),
        ("[memtrackd]\naggregators = 10.0.0.1:0\n", "must be ADDRESS:PORT"),
        ("[memtrackd]\naggregators = " + ",".join(f"10.0.0.{i}:1" for i in range(9)) + "\n",
         "at most 8"),
        ("[memtrackd]\nrelay_buffer_kb = 3\n", "must be 4..1048576"),
        # the first error is the one reported
        ("[memtrackd]\nport = 0\nbogus = 2\n", "FILE:2: port"),
    ]
    for text, want in cases:
        rc, err = run_daemon_expecting_error(text)
        check(rc == 2, f"{text!r}: exit {rc}, want 2 ({err})")
        check(want in err, f"{text!r}: stderr {err!r} lacks {want!r}")
    rc, err = run_daemon_expecting_error("[memtrackd]\n", "extra")
    check(rc == 2 and "usage" in err, f"extra argument: {rc} {err!r}")
    p = subprocess.run([mtdlib.DAEMON, "-f", "-c", "/nonexistent/x.ini"],
                       capture_output=True, text=True)
    check(p.returncode == 2 and "/nonexistent/x.ini: No such file" in p.stderr,
          f"missing file: {p.returncode} {p.stderr!r}")
    # a port in use: clear error, exit 1
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
        s.listen()
        rc, err = run_daemon_expecting_error(f"[memtrackd]\nport = {port}\nsource = proc\n")
        check(rc == 1 and "Address already in use" in err, f"busy port: {rc} {err!r}")
    rc, err = run_daemon_expecting_error(
        f"[memtrackd]\nport = {port}\nsource = proc\nsample_interval_ms = 0\n"
        "aggregators = 127.0.0.1:9, [::1]:9\n")
    check(rc == 2 and "aggregators need sample_interval_ms > 0" in err, f"relay without samples: {rc} {err!r}")
    rc, err = run_daemon_expecting_error("[memtrackd]\nsource = proc\nuser = no-such-user-x\n")
    check(rc == 1 and 'user "no-such-user-x"' in err, f"bad user: {rc} {err!r}")


def ids(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("Uid", "Gid", "CapEff", "CapPrm", "Groups", "NoNewPrivs"):
                out[k] = v.split()
    return out


@test
def drops_privileges():
    with Daemon(source="proc") as d:
        st = ids(d.p.pid)
        check(st["Uid"] == ["65534"] * 4, f"Uid {st['Uid']}")
        check(st["Gid"] == ["65534"] * 4, f"Gid {st['Gid']}")
        check(int(st["CapEff"][0], 16) == 0 and int(st["CapPrm"][0], 16) == 0,
              f"caps {st}")
        check(st["NoNewPrivs"] == ["1"], f"NoNewPrivs {st['NoNewPrivs']}")
        check(value(d.metrics(), "memtrack_info", source="proc") == 1, "memtrack_info")
    with Daemon(source="proc", keep_ptrace="yes") as d:
        st = ids(d.p.pid)
        check(st["Uid"] == ["65534"] * 4, f"Uid {st['Uid']}")
        cap_sys_ptrace = 1 << 19
        check(int(st["CapEff"][0], 16) == cap_sys_ptrace and
              int(st["CapPrm"][0], 16) == cap_sys_ptrace, f"caps {st}")
    with Daemon(source="proc", user="root") as d:
        check(ids(d.p.pid)["Uid"] == ["0"] * 4, "user = root stays root")


def http(port, raw, timeout=5):
    with socket.create_connection(("127.0.0.1", port), timeout) as s:
        s.sendall(raw)
        data = b""
        try:
            while True:
                b = s.recv(65536)
                if not b:
                    break
                data += b
        except socket.timeout:
            pass
    return data


def status_of(resp):
    line = resp.split(b"\r\n", 1)[0].split()
    return int(line[1]) if len(line) > 1 else None


@test
def http_surface():
    with Daemon(source="proc") as d:
        for path in ("/", "/metric", "/metrics/", "/metricsx", "/x/metrics"):
            r = http(d.port, f"GET {path} HTTP/1.0\r\n\r\n".encode())
            check(status_of(r) == 404, f"GET {path}: {r[:40]!r}")
        for m in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
            r = http(d.port, f"{m} /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n".encode())
            check(status_of(r) == 405 and b"\r\nAllow: GET, HEAD\r\n" in r,
                  f"{m} /metrics: {r[:200]!r}")
        r = http(d.port, b"HEAD /metrics HTTP/1.0\r\n\r\n")
        check(status_of(r) == 200 and r.endswith(b"\r\n\r\n"), f"HEAD: {r[-40:]!r}")
        with urllib.request.urlopen(d.url()) as resp:
            ctype = resp.headers["Content-Type"]
            body = resp.read().decode()
        check(ctype == "text/plain; version=0.0.4; charset=utf-8", f"type {ctype}")
        check(body.startswith("# HELP memtrack_info "), body[:80])


def promtool(text):
    p = subprocess.run(["promtool", "check", "metrics"], input=text,
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


@test
def promtool_check_metrics():
    # comms that need escaping: quote, backslash, newline, invalid UTF-8
    odd = ['q"uote', "back\\slash", "new\nline", "utf8-\u00e9t\u00e9"]
    progs = [Named(c) for c in odd]
    try:
        for n in progs:
            n.start("anon 65536")
        # a comm that is not UTF-8 (prctl PR_SET_NAME)
        pybad = subprocess.Popen([sys.executable, "-c",
                                  "import ctypes,sys;ctypes.CDLL(None).prctl(15,b'bad\\xff\\xfeutf8',0,0,0);"
                                  "print('ok',flush=True);sys.stdin.read()"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        check(pybad.stdout.readline().strip() == b"ok", "prctl helper")
        with Daemon(source="proc", top_pids=5) as d:
            text = d.text()
            rc, out = promtool(text)
            check(rc == 0, f"promtool: {out}")
            m = mtdlib.parse(text)
            for c in odd:
                check(value(m, "memtrack_program_processes", comm=c) == 1,
                      f"comm {c!r} not escaped right")
            check(value(m, "memtrack_program_processes", comm="bad\ufffd\ufffdutf8") == 1,
                  "invalid UTF-8 not replaced by U+FFFD")
            check('comm="q\\"uote"' in text and 'comm="back\\\\slash"' in text
                  and 'comm="new\\nline"' in text, "raw escapes")
            # every family has HELP and TYPE, and samples only under them
            fams = [l.split()[2] for l in text.splitlines() if l.startswith("# TYPE ")]
            helps = [l.split()[2] for l in text.splitlines() if l.startswith("# HELP ")]
            check(fams == helps and len(set(fams)) == len(fams), "HELP/TYPE pairs")
            check(set(m) == set(fams), f"samples without TYPE: {set(m) ^ set(fams)}")
            check(len(m["memtrack_process_rss_bytes"]) == 5, "top 5 series")
        pybad.kill()
        pybad.wait()
    finally:
        for n in progs:
            n.close()


def proc_rss(pids):
    anon = sum(status_bytes(p, "RssAnon") for p in pids)
    file_ = sum(status_bytes(p, "RssFile") for p in pids)
    shmem = sum(status_bytes(p, "RssShmem") for p in pids)
    return anon, file_, shmem


@test
def program_figures_match_proc():
    N = 3
    with Named("mtdwork") as w, Daemon(source="proc") as d:
        for i in range(N):
            w.start(f"anon {(i + 1) * 4 * MiB}", f"shared {MiB}")
        pids = [p.pid for p in w.procs]
        m = d.metrics()
        anon, file_, shmem = proc_rss(pids)
        check(value(m, "memtrack_program_processes", comm="mtdwork") == N, "processes")
        for name, want in (("rss_anon", anon), ("rss_file", file_), ("rss_shmem", shmem)):
            got = value(m, f"memtrack_program_{name}_bytes", comm="mtdwork")
            check(abs(got - want) <= N * PAGE, f"{name}: {got} vs /proc {want}")
        # what the workload did: each touched (i+1)*4 MiB + 1 MiB of its own
        touched = sum((i + 1) * 4 * MiB + MiB for i in range(N))
        check(anon + shmem >= touched, f"workload RSS {anon + shmem} < {touched}")
        flt = sum(minflt(p) for p in pids)
        got = value(m, "memtrack_program_minor_faults_total", comm="mtdwork")
        check(got == flt, f"minor faults {got} vs /proc {flt}")
        check(value(m, "memtrack_program_swap_bytes", comm="mtdwork") ==
              sum(status_bytes(p, "VmSwap") for p in pids), "swap")


@test
def counters_survive_exits():
    with Named("mtdexit") as w, Daemon(source="proc", sample_interval_ms=0) as d:
        for i in range(3):
            w.start(f"anon {(i + 1) * MiB}")
        m = d.metrics()
        before = value(m, "memtrack_program_minor_faults_total", comm="mtdexit")
        flts = {p.pid: minflt(p.pid) for p in w.procs}
        check(before == sum(flts.values()), f"{before} vs {flts}")
        victim = w.procs[0]
        gone = flts[victim.pid]
        w.kill(victim)
        m = d.metrics()
        check(value(m, "memtrack_program_processes", comm="mtdexit") == 2, "2 left")
        after = value(m, "memtrack_program_minor_faults_total", comm="mtdexit")
        live = sum(minflt(p.pid) for p in w.procs)
        check(after == live + gone, f"after exit {after}, want {live} + {gone}")
        for p in list(w.procs):
            w.kill(p)
        m = d.metrics()
        check(value(m, "memtrack_program_processes", comm="mtdexit") is None,
              "no gauge for a program with no process")
        final = value(m, "memtrack_program_minor_faults_total", comm="mtdexit")
        check(final == sum(flts.values()) + (live - sum(flts[p] for p in flts if p != victim.pid)),
              f"all gone: {final}")
        # a new process of the same name adds to it
        p = w.start(f"anon {MiB}")
        m = d.metrics()
        check(value(m, "memtrack_program_minor_faults_total", comm="mtdexit") ==
              final + minflt(p.pid), "new process adds")


@test
def exec_moves_counts_to_new_comm():
    tmp = tempfile.mkdtemp()
    try:
        before = os.path.join(tmp, "mtdbefore")
        after = os.path.join(tmp, "mtdafter")
        shutil.copy("/bin/dash", before)
        shutil.copy(mtdlib.MEMLOAD, after)
        with Daemon(source="proc", sample_interval_ms=0) as d:
            p = subprocess.Popen([before, "-c", f"read x; exec {after}"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True, bufsize=1)
            time.sleep(0.3)
            m = d.metrics()
            f0 = value(m, "memtrack_program_minor_faults_total", comm="mtdbefore")
            check(f0 == minflt(p.pid), f"before exec: {f0} vs {minflt(p.pid)}")
            p.stdin.write("go\n")
            p.stdin.flush()
            check(p.stdout.readline().startswith("ok pid"), "exec'ed")
            p.stdin.write(f"anon {2 * MiB}\n")
            p.stdin.flush()
            check(p.stdout.readline().startswith("ok"), "anon")
            m = d.metrics()
            # the faults before the exec stay with the old name, the rest
            # go to the new one
            check(value(m, "memtrack_program_minor_faults_total", comm="mtdbefore") == f0,
                  "old comm keeps its count")
            f1 = value(m, "memtrack_program_minor_faults_total", comm="mtdafter")
            check(f1 == minflt(p.pid) - f0, f"new comm {f1}, want {minflt(p.pid)} - {f0}")
            check(value(m, "memtrack_program_processes", comm="mtdbefore") is None and
                  value(m, "memtrack_program_processes", comm="mtdafter") == 1, "gauges moved")
            p.kill()
            p.wait()
            m = d.metrics()
            check(value(m, "memtrack_program_minor_faults_total", comm="mtdafter") == f1,
                  "kept after exit")
    finally:
        shutil.rmtree(tmp)


@test
def top_pids_bounded():
    with Named("mtdbig") as w, Daemon(source="proc", top_pids=2) as d:
        big = w.start(f"anon {512 * MiB}")
        for _ in range(3):
            m = d.metrics()
            rows = m["memtrack_process_rss_bytes"]
            check(len(rows) == 2 and len(m["memtrack_process_swap_bytes"]) == 2, "2 series")
            # the two largest now, per /proc
            sizes = []
            for e in os.listdir("/proc"):
                if e.isdigit():
                    try:
                        sizes.append((sum(proc_rss([int(e)])), int(e)))
                    except OSError:
                        pass
            sizes.sort(reverse=True)
            want = {str(pid) for _, pid in sizes[:2]}
            got = {l["pid"] for l, _ in rows}
            if got == want:
                break
        check(got == want, f"top pids {got}, /proc says {want}")
    # other processes on the host may be larger: with room for all, the
    # workload's own series
    with Named("mtdbig") as w, Daemon(source="proc", top_pids=1000) as d:
        big = w.start(f"anon {64 * MiB}")
        m = d.metrics()
        nproc = sum(1 for e in os.listdir("/proc") if e.isdigit())
        rows = m["memtrack_process_rss_bytes"]
        check(abs(len(rows) - min(1000, nproc)) <= 5, f"{len(rows)} series, {nproc} processes")
        mine = [r for r in rows if r[0]["pid"] == str(big.pid)]
        check(len(mine) == 1 and mine[0][0]["comm"] == "mtdbig", f"workload series {mine}")
        check(abs(mine[0][1] - sum(proc_rss([big.pid]))) <= PAGE, "its rss")


@test
def max_programs_bounds_series():
    with Daemon(source="proc", max_programs=5) as d:
        m = d.metrics()
        comms = {l["comm"] for l, _ in m["memtrack_program_minor_faults_total"]}
        check(len(comms) == 6 and "[other]" in comms, f"comms {comms}")
        total = sum(v for _, v in m["memtrack_program_processes"])
        nproc = sum(1 for e in os.listdir("/proc") if e.isdigit())
        check(abs(total - nproc) <= 5, f"processes {total} vs /proc {nproc}")


def prom_query(port, q):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
    with urllib.request.urlopen(url, timeout=10) as r:
        doc = json.load(r)
    return doc["data"]["result"]


@test
def prometheus_scrapes_it():
    N = 4
    tmp = tempfile.mkdtemp(prefix="prom.")
    prom = None
    try:
        with Named("mtdprom") as w, Daemon(source="proc") as d:
            for i in range(N):
                w.start(f"anon {(i + 2) * MiB}")
            pids = [p.pid for p in w.procs]
            want = sum(status_bytes(p, "VmRSS") for p in pids)
            pport = mtdlib.free_port()
            with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
                f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                        "scrape_configs:\n  - job_name: memtrackd\n    static_configs:\n"
                        f"      - targets: ['127.0.0.1:{d.port}']\n")
            prom = subprocess.Popen(
                ["prometheus", f"--config.file={tmp}/prometheus.yml",
                 f"--storage.tsdb.path={tmp}/data", f"--web.listen-address=127.0.0.1:{pport}"],
                stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "log"), "w"))
            q = ('sum by (comm) (memtrack_program_rss_anon_bytes{comm="mtdprom"} + '
                 'memtrack_program_rss_file_bytes{comm="mtdprom"} + '
                 'memtrack_program_rss_shmem_bytes{comm="mtdprom"})')
            res = []
            deadline = time.time() + 90
            while time.time() < deadline:
                try:
                    res = prom_query(pport, q)
                    if res:
                        break
                except (urllib.error.URLError, ConnectionError, KeyError):
                    pass
                time.sleep(0.5)
            check(res, "no result from Prometheus: " + open(os.path.join(tmp, "log")).read()[-500:])
            check(len(res) == 1 and res[0]["metric"] == {"comm": "mtdprom"}, f"result {res}")
            got = float(res[0]["value"][1])
            check(abs(got - want) <= N * PAGE, f"PromQL sum {got} vs VmRSS sum {want}")
            n = prom_query(pport, 'sum by (comm) (memtrack_program_processes{comm="mtdprom"})')
            check(float(n[0]["value"][1]) == N, f"processes {n}")
            up = prom_query(pport, 'up{job="memtrackd"}')
            check(float(up[0]["value"][1]) == 1, f"up {up}")
    finally:
        if prom:
            prom.terminate()
            prom.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)


@test
def hostile_http_input():
    rnd = random.Random(6)
    with Daemon(source="proc", sample_interval_ms=0) as d:
        good = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
        inputs = [good[:i] for i in range(len(good))]          # truncated
        inputs += [bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 2048)))
                   for _ in range(300)]                          # random
        inputs += [b"GET /metrics HTTP/1.1\r\n" + b"X: " + b"a" * 100000 + b"\r\n\r\n",
                   b"GET /" + b"m" * 70000 + b" HTTP/1.1\r\n\r\n",
                   b"POST /metrics HTTP/1.1\r\nContent-Length: 99999999\r\n\r\nabc",
                   b"GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                   b"GET /metrics HTTP/9.9\r\n\r\n", b"\r\n\r\n\r\n",
                   b"GET /metrics\x00 HTTP/1.1\r\n\r\n"]
        for raw in inputs:
            try:
                http(d.port, raw, timeout=0.3)
            except OSError:
                pass
            check(d.alive(), f"died on {raw[:60]!r}")
        # many idle connections at once do not lock it up for others
        # more idle connections than the limit (32): once they go, it serves
        idle = [socket.create_connection(("127.0.0.1", d.port)) for _ in range(40)]
        for s in idle:
            s.close()
        time.sleep(0.5)
        check(d.alive(), "died after idle connections")
        rc, out = promtool(d.text())
        check(rc == 0, f"after the abuse: {out}")


if __name__ == "__main__":
    sys.exit(main(sys.argv, root="memtrackd-host"))
