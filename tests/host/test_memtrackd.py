#!/usr/bin/env python3
"""Host tests of memtrackd in /proc mode (no module needed): config errors,
privilege dropping, the HTTP surface (landing page, gzip), promtool and
Prometheus's naming conventions, the system's figures against
/proc/meminfo and /proc/vmstat, per-program figures against /proc,
monotonic per-program counters across exits, programs forgotten after
program_ttl, kernel threads left out, the node label only when asked,
listen by host name, systemd's readiness protocol, top-N per-PID series, a real Prometheus server
scraping it, and hostile HTTP input.

Needs root (it checks the drop to nobody), build/bin/memtrackd and
build/tests/memload.  Run with tests/lib/harness.py: test names as
arguments run only those, --list prints them; "PASS name" / "FAIL name:
why" lines; exits 1 if any failed."""
import gzip
import json
import os
import re
import random
import shutil
import socket
import struct
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
from mtdnet import refused_conf  # noqa: E402

MiB = 1 << 20


def run_daemon_expecting_error(conf_text, *args):
    """memtrackd with this config: (exit status, stderr, its path as FILE)."""
    return refused_conf(conf_text, *args, name="FILE")


@test
def config_errors():
    port = mtdlib.free_port()
    cases = [
        ("[memtrackd]\nbogus = 1\n", 'FILE:2: unknown key "bogus"'),
        ("[memtrackd]\nport = 0\n", "FILE:2: port = \"0\": must be 1..65535"),
        ("[memtrackd]\nport = 65536\n", "must be 1..65535"),
        ("[memtrackd]\nport = 12x\n", "must be 1..65535"),
        ("[memtrackd]\nsource = kernel\n", "must be auto, module or proc"),
        ("[memtrackd]\nlisten = bad_host\n", "must be HOST, HOST:PORT or [IPV6]:PORT"),
        ("[memtrackd]\nlisten = [::1]\n", "must be HOST, HOST:PORT or [IPV6]:PORT"),
        ("[memtrackd]\nlisten = localhost:0\n", "must be HOST, HOST:PORT or [IPV6]:PORT"),
        ("[memtrackd]\nlisten = 127.0.0.1:9000\nport = 9001\n",
         "FILE:3: port: the port is in listen already (line 2)"),
        ("[aggregate]\nlisten = bad_host\n", "must be HOST, HOST:PORT or [IPV6]:PORT"),
        ("[aggregate]\nlisten = localhost:0\n", "must be HOST, HOST:PORT or [IPV6]:PORT"),
        ("[memtrackd]\nport = 9000\n[aggregate]\nlisten = 127.0.0.1:9000\nport = 9001\n",
         "FILE:5: port: the port is in listen already (line 4)"),
        ("[memtrackd]\nnode_label = maybe\n", "must be yes or no"),
        ("[memtrackd]\nkernel_threads = 2\n", "must be yes or no"),
        ("[memtrackd]\nprogram_ttl = 300\n", "duration of 1s..30d with its unit"),
        ("[memtrackd]\nprogram_ttl = 500ms\n", "duration of 1s..30d with its unit"),
        ("[memtrackd]\nprogram_ttl = 31d\n", "duration of 1s..30d with its unit"),
        ("[memtrackd]\nprogram_ttl = 721h\n", "duration of 1s..30d with its unit"),
        ("[memtrackd]\ntop_pids = 1001\n", "must be 0..1000"),
        ("[memtrackd]\ntop_pids = -1\n", "must be 0..1000"),
        ("[memtrackd]\nsample_interval_ms = 50\n", "must be 0 or 100..3600000"),
        ("[memtrackd]\nsample_interval = 50ms\n",
         'sample_interval = "50ms": must be 0 (only on a scrape) or a duration of 100ms..1h'),
        ("[memtrackd]\nsample_interval = 5000\n", "a duration of 100ms..1h with its unit"),
        ("[memtrackd]\nsample_interval = 2h\n", "a duration of 100ms..1h with its unit"),
        ("[aggregate]\ndown_after = 3000\n",
         'down_after = "3000": must be a duration of 100ms..1h with its unit'),
        ("[aggregate]\nidle_timeout = 500ms\n", "a duration of 1s..1h with its unit"),
        # a comment after a value is cut at a '#' after a blank (';' too)
        ("[memtrackd]\ntop_pids = 1001  # too many\n", 'FILE:2: top_pids = "1001": must be'),
        ("[memtrackd]\ntop_pids = 1001\t; too many\n", 'FILE:2: top_pids = "1001": must be'),
        ("[memtrackd]\nnode = web#1 # a name with a # in it\nport = 0\n",
         'FILE:3: port = "0"'),
        # a section name without its ]: said, on its line (it was "unknown
        # section []" on the next key's)
        ("[memtrackd\nport = 9000\n", 'FILE:1: "[memtrackd": a section name needs its ]'),
        ("[memtrackd]\n  [aggregate   \nport = 9000\n",
         'FILE:2: "[aggregate": a section name needs its ]'),
        ("[memtrackd]\nkeep_ptrace = maybe\n", "must be yes or no"),
        ("[memtrackd]\nnode =\n", "must be 1..255"),
        ("[other]\nport = 1\n", "FILE:2: unknown section [other]"),
        ("[memtrackd]\nport = 9000\nthis line has no equals\n", "FILE:3:"),
        ("[memtrackd]\naggregators = 10.0.0.1\n", "must be HOST:PORT"),
        ("[memtrackd]\naggregators = ::1:9472\n", "must be HOST:PORT"),
        ("[memtrackd]\naggregators = agg_example:9472\n", "must be HOST:PORT"),
        ("[memtrackd]\naggregators = 10.0.0.1:0\n", "must be HOST:PORT"),
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
    check(rc == 2 and err.startswith('memtrackd: unexpected argument "extra"') and
          err.endswith("Try 'memtrackd --help'.\n"), f"extra argument: {rc} {err!r}")
    # the file packaging/ installs, every key in the form it documents,
    # loads: memtrack-query reads it with the same parser and goes on to
    # connect (to an aggregator that is not there)
    shipped = os.path.join(HERE, "..", "..", "packaging", "memtrackd.conf")
    p = subprocess.run([mtdlib.QUERY, "-c", shipped, "-s", "127.0.0.1:1", "-t", "500", "nodes"],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 1 and "connecting to 127.0.0.1" in p.stderr,
          f"packaging/memtrackd.conf: {p.returncode} {p.stderr!r}")
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
        f"[memtrackd]\nport = {port}\nsource = proc\nsample_interval = 0\n"
        "aggregators = 127.0.0.1:9, [::1]:9\n")
    check(rc == 2 and "aggregators need sample_interval > 0" in err, f"relay without samples: {rc} {err!r}")
    rc, err = run_daemon_expecting_error("[memtrackd]\nsource = proc\nuser = no-such-user-x\n")
    check(rc == 1 and 'user "no-such-user-x"' in err, f"bad user: {rc} {err!r}")
    # a name that does not resolve: the line that named it, nothing started
    rc, err = run_daemon_expecting_error(
        "[memtrackd]\nsource = proc\nlisten = no.such.host.invalid:1\n")
    # (exit 1 if the resolver cannot be reached: that may pass)
    check(rc == (1 if "Temporary failure" in err else 2) and
          "FILE:3: listen: cannot resolve no.such.host.invalid: " in err,
          f"unresolvable listen: {rc} {err!r}")
    # the key and the values memtrackd accepts but memtrack-query's reading
    # of the same file never resolves
    rc, err = run_daemon_expecting_error(
        f"[memtrackd]\nsource = proc\nuser = no-such-user-x\nprogram_ttl = 0\n"
        f"node_label = yes\nkernel_threads = no\nlisten = localhost\nport = {port}\n"
        "# a line of comment\n; and another\ntop_pids = 5   # a comment after a value\n"
        "sample_interval = 1500ms ; and one after a duration\nsample_interval_ms = 5000\n"
        "[aggregate]\ndown_after = 3s\nidle_timeout = 1m # in units\ndown_after_ms = 2000\n")
    check(rc == 1 and 'user "no-such-user-x"' in err, f"valid keys: {rc} {err!r}")


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
    cap_dac_read_search = 1 << 2
    cap_sys_ptrace = 1 << 19
    # containers = yes (the default) keeps CAP_DAC_READ_SEARCH alone: the
    # runtimes' state is root's; with no, nothing
    for extra, caps in (({}, cap_dac_read_search), ({"containers": "no"}, 0),
                        ({"keep_ptrace": "yes"}, cap_dac_read_search | cap_sys_ptrace),
                        ({"keep_ptrace": "yes", "containers": "no"}, cap_sys_ptrace)):
        with Daemon(source="proc", **extra) as d:
            st = ids(d.p.pid)
            check(st["Uid"] == ["65534"] * 4, f"{extra}: Uid {st['Uid']}")
            check(st["Gid"] == ["65534"] * 4, f"{extra}: Gid {st['Gid']}")
            check(int(st["CapEff"][0], 16) == caps and int(st["CapPrm"][0], 16) == caps,
                  f"{extra}: caps {st}, want {caps:#x}")
            check(st["NoNewPrivs"] == ["1"], f"{extra}: NoNewPrivs {st['NoNewPrivs']}")
            check(value(d.metrics(), "memtrack_node_info", source="proc") == 1,
                  f"{extra}: memtrack_node_info")
    with Daemon(source="proc", user="root") as d:
        check(ids(d.p.pid)["Uid"] == ["0"] * 4, "user = root stays root")


def http(port, raw, timeout=5, host="127.0.0.1"):
    with socket.create_connection((host, port), timeout) as s:
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


def split_response(resp):
    """(status, {header lowercased: value}, body) of a raw HTTP/1.x reply."""
    head, _, body = resp.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status_of(resp), headers, body


@test
def http_surface():
    with Daemon(source="proc") as d:
        for path in ("/metric", "/metrics/", "/metricsx", "/x/metrics", "/index.html", "//"):
            r = http(d.port, f"GET {path} HTTP/1.0\r\n\r\n".encode())
            check(status_of(r) == 404, f"GET {path}: {r[:40]!r}")
        for path in ("/", "/metrics"):
            for m in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
                r = http(d.port, f"{m} {path} HTTP/1.0\r\nContent-Length: 0\r\n\r\n".encode())
                check(status_of(r) == 405 and b"\r\nAllow: GET, HEAD\r\n" in r,
                      f"{m} {path}: {r[:200]!r}")
        r = http(d.port, b"HEAD /metrics HTTP/1.0\r\n\r\n")
        check(status_of(r) == 200 and r.endswith(b"\r\n\r\n"), f"HEAD: {r[-40:]!r}")
        with urllib.request.urlopen(d.url()) as resp:
            ctype = resp.headers["Content-Type"]
            vary = resp.headers["Vary"]
            coding = resp.headers["Content-Encoding"]
            body = resp.read().decode()
        check(ctype == "text/plain; version=0.0.4; charset=utf-8", f"type {ctype}")
        check(vary == "Accept-Encoding" and coding is None, f"Vary {vary}, coding {coding}")
        check(body.startswith("# HELP memtrack_build_info "), body[:80])


@test
def landing_page():
    """/ is an HTML page whose link leads to /metrics, as node_exporter's."""
    with Daemon(source="proc") as d:
        with urllib.request.urlopen(d.url("/")) as resp:
            ctype = resp.headers["Content-Type"]
            page = resp.read().decode()
        check(ctype == "text/html; charset=utf-8", f"type {ctype}")
        links = re.findall(r'<a href="([^"]*)">', page)
        check(links == ["/metrics"], f"links {links} in {page!r}")
        check(page.lstrip().lower().startswith("<!doctype html>") and "</html>" in page,
              f"page {page!r}")
        version = open(os.path.join(mtdlib.ROOT, "VERSION")).read().strip()
        check(f"version {version}" in page, f"no version {version} in {page!r}")
        target = urllib.parse.urljoin(d.url("/"), links[0])
        with urllib.request.urlopen(target) as resp:
            check(resp.read().decode().startswith("# HELP "), f"the link {target}")
        r = http(d.port, b"HEAD / HTTP/1.0\r\n\r\n")
        st, hdr, body = split_response(r)
        check(st == 200 and body == b"" and int(hdr["content-length"]) == len(page.encode()),
              f"HEAD /: {r!r}")


def families(text):
    """{name: type} of the # TYPE lines."""
    return {l.split()[2]: l.split()[3] for l in text.splitlines() if l.startswith("# TYPE ")}


@test
def gzip_when_asked():
    """Accept-Encoding: gzip (what Prometheus sends) gets Content-Encoding:
    gzip and a body that is valid gzip of the same text: the same families
    and series, the values that do not change between two scrapes equal;
    a client that does not accept gzip gets plain text."""
    gzipped = ("gzip", "GZIP", "deflate, gzip", "gzip;q=0.5", "br;q=1.0, gzip ; q=0.1",
               "*", "x-gzip", "identity, *;q=1")
    plain = ("", "identity", "deflate", "gzip;q=0", "gzip;q=0.000, identity", "*;q=0",
             "br", "gzipx", "*, gzip;q=0")
    with Daemon(source="proc", sample_interval_ms=0) as d:
        for ae in gzipped + plain:
            hdr = f"Accept-Encoding: {ae}\r\n" if ae else ""
            r = http(d.port, f"GET /metrics HTTP/1.0\r\n{hdr}\r\n".encode())
            st, h, body = split_response(r)
            check(st == 200 and int(h["content-length"]) == len(body), f"{ae!r}: {r[:200]!r}")
            if ae in gzipped:
                check(h.get("content-encoding") == "gzip", f"{ae!r}: not gzipped: {h}")
                text = gzip.decompress(body).decode()
            else:
                check("content-encoding" not in h, f"{ae!r}: encoded {h}")
                text = body.decode()
            rc, out = promtool(text)
            check(rc == 0 and text.startswith("# HELP memtrack_build_info "),
                  f"{ae!r}: promtool {out}")
        # the same text: compressed and plain scrapes a moment apart
        for _ in range(5):
            z = http(d.port, b"GET /metrics HTTP/1.0\r\nAccept-Encoding: gzip\r\n\r\n")
            p = http(d.port, b"GET /metrics HTTP/1.0\r\n\r\n")
            zt = gzip.decompress(split_response(z)[2]).decode()
            pt = split_response(p)[2].decode()
            check(len(split_response(z)[2]) * 4 < len(pt), "compressed less than 4x")
            zm, pm = mtdlib.parse(zt), mtdlib.parse(pt)
            series = {n: {tuple(sorted(l.items())) for l, _ in v} for n, v in zm.items()}
            if (families(zt) == families(pt) and
                    series == {n: {tuple(sorted(l.items())) for l, _ in v} for n, v in pm.items()}):
                break
        check(families(zt) == families(pt), f"families differ: {set(families(zt)) ^ set(families(pt))}")
        check(series == {n: {tuple(sorted(l.items())) for l, _ in v} for n, v in pm.items()},
              "series differ")
        for name in ("memtrack_build_info", "memtrack_memory_total_bytes",
                     "memtrack_memory_swap_total_bytes"):
            check(zm[name] == pm[name], f"{name}: {zm[name]} vs {pm[name]}")
        # a HEAD with gzip: the headers of a GET, no body
        r = http(d.port, b"HEAD /metrics HTTP/1.0\r\nAccept-Encoding: gzip\r\n\r\n")
        st, h, body = split_response(r)
        check(st == 200 and h.get("content-encoding") == "gzip" and body == b"", f"HEAD: {r!r}")


def promtool(text):
    p = subprocess.run(["promtool", "check", "metrics"], input=text,
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


@test
def promtool_check_metrics():
    # comms that need escaping: quote, backslash, newline, invalid UTF-8
    odd = ['q"uote', "back\\slash", "new\nline", "utf8-\u00e9t\u00e9"]
    progs = [Named(c) for c in odd]
    pybad = None
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
            check(set(m) <= set(fams), f"samples without TYPE: {set(m) - set(fams)}")
            # a family without samples only where a node may have none:
            # per container, here where no process is in one
            empty = set(fams) - set(m)
            check(all(f.startswith("memtrack_container_") for f in empty),
                  f"families without samples: {empty}")
            for f in ("rss_anon", "rss_file", "rss_shmem", "swap"):
                check(len(m[f"memtrack_process_{f}_bytes"]) == 5, f"top 5 {f} series")
    finally:
        if pybad:
            pybad.kill()
            pybad.wait()
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
        got = value(m, "memtrack_program_minor_page_faults_total", comm="mtdwork")
        check(got == flt, f"minor faults {got} vs /proc {flt}")
        maj = sum(int(mtdlib.stat_fields(p)[9]) for p in pids)
        got = value(m, "memtrack_program_major_page_faults_total", comm="mtdwork")
        check(got == maj, f"major faults {got} vs /proc {maj}")
        check(value(m, "memtrack_program_swap_bytes", comm="mtdwork") ==
              sum(status_bytes(p, "VmSwap") for p in pids), "swap")


@test
def counters_survive_exits():
    with Named("mtdexit") as w, Daemon(source="proc", sample_interval_ms=0) as d:
        for i in range(3):
            w.start(f"anon {(i + 1) * MiB}")
        m = d.metrics()
        before = value(m, "memtrack_program_minor_page_faults_total", comm="mtdexit")
        flts = {p.pid: minflt(p.pid) for p in w.procs}
        check(before == sum(flts.values()), f"{before} vs {flts}")
        victim = w.procs[0]
        gone = flts[victim.pid]
        w.kill(victim)
        m = d.metrics()
        check(value(m, "memtrack_program_processes", comm="mtdexit") == 2, "2 left")
        after = value(m, "memtrack_program_minor_page_faults_total", comm="mtdexit")
        live = sum(minflt(p.pid) for p in w.procs)
        check(after == live + gone, f"after exit {after}, want {live} + {gone}")
        for p in list(w.procs):
            w.kill(p)
        m = d.metrics()
        check(value(m, "memtrack_program_processes", comm="mtdexit") is None,
              "no gauge for a program with no process")
        final = value(m, "memtrack_program_minor_page_faults_total", comm="mtdexit")
        check(final == sum(flts.values()) + (live - sum(flts[p] for p in flts if p != victim.pid)),
              f"all gone: {final}")
        # a new process of the same name adds to it
        p = w.start(f"anon {MiB}")
        m = d.metrics()
        check(value(m, "memtrack_program_minor_page_faults_total", comm="mtdexit") ==
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
            f0 = value(m, "memtrack_program_minor_page_faults_total", comm="mtdbefore")
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
            check(value(m, "memtrack_program_minor_page_faults_total", comm="mtdbefore") == f0,
                  "old comm keeps its count")
            f1 = value(m, "memtrack_program_minor_page_faults_total", comm="mtdafter")
            check(f1 == minflt(p.pid) - f0, f"new comm {f1}, want {minflt(p.pid)} - {f0}")
            check(value(m, "memtrack_program_processes", comm="mtdbefore") is None and
                  value(m, "memtrack_program_processes", comm="mtdafter") == 1, "gauges moved")
            p.kill()
            p.wait()
            m = d.metrics()
            check(value(m, "memtrack_program_minor_page_faults_total", comm="mtdafter") == f1,
                  "kept after exit")
    finally:
        shutil.rmtree(tmp)


PF_KTHREAD = 0x00200000


def kthread_pids():
    """Pids whose /proc/PID/stat flags say kernel thread."""
    out = set()
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                if int(mtdlib.stat_fields(int(e))[6]) & PF_KTHREAD:
                    out.add(int(e))
            except (OSError, IndexError):
                pass
    return out


def user_processes():
    """How many processes /proc lists that are not kernel threads."""
    return sum(1 for e in os.listdir("/proc") if e.isdigit()) - len(kthread_pids())


def pid_rss(m):
    """{pid: RSS} of the per-process series: their anon + file + shmem."""
    out = {}
    for f in ("rss_anon", "rss_file", "rss_shmem"):
        for l, v in m[f"memtrack_process_{f}_bytes"]:
            out[l["pid"]] = out.get(l["pid"], 0) + v
    return out


@test
def top_pids_bounded():
    with Named("mtdbig") as w, Daemon(source="proc", top_pids=2) as d:
        big = w.start(f"anon {512 * MiB}")
        for _ in range(3):
            m = d.metrics()
            for f in ("rss_anon", "rss_file", "rss_shmem", "swap"):
                check(len(m[f"memtrack_process_{f}_bytes"]) == 2, f"2 {f} series")
            rows = pid_rss(m)
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
            got = set(rows)
            if got == want:
                break
        check(got == want, f"top pids {got}, /proc says {want}")
    # other processes on the host may be larger: with room for all, the
    # workload's own series, and no kernel thread's
    with Named("mtdbig") as w, Daemon(source="proc", top_pids=1000) as d:
        big = w.start(f"anon {64 * MiB}")
        m = d.metrics()
        nproc = user_processes()
        rows = pid_rss(m)
        check(abs(len(rows) - min(1000, nproc)) <= 5, f"{len(rows)} series, {nproc} processes")
        check(not {str(p) for p in kthread_pids()} & set(rows), "kernel threads' series")
        mine = [l for l, _ in m["memtrack_process_rss_anon_bytes"] if l["pid"] == str(big.pid)]
        check(len(mine) == 1 and mine[0]["comm"] == "mtdbig", f"workload series {mine}")
        check(abs(rows[str(big.pid)] - sum(proc_rss([big.pid]))) <= PAGE, "its rss")
        for f, key in (("rss_anon", "RssAnon"), ("rss_file", "RssFile"),
                       ("rss_shmem", "RssShmem"), ("swap", "VmSwap")):
            got = value(m, f"memtrack_process_{f}_bytes", pid=str(big.pid))
            check(abs(got - status_bytes(big.pid, key)) <= PAGE, f"its {f}: {got}")


@test
def max_programs_bounds_series():
    with Daemon(source="proc", max_programs=5) as d:
        m = d.metrics()
        comms = {l["comm"] for l, _ in m["memtrack_program_minor_page_faults_total"]}
        check(len(comms) == 6 and "[other]" in comms, f"comms {comms}")
        total = sum(v for _, v in m["memtrack_program_processes"])
        nproc = user_processes()
        check(abs(total - nproc) <= 5, f"processes {total} vs /proc {nproc}")


def comms_in(m):
    """Every comm label value of every family."""
    return {l["comm"] for rows in m.values() for l, _ in rows if "comm" in l}


@test
def kernel_threads_left_out():
    """By default no kernel thread (kthreadd, kworker/*, ...) has a
    per-program or per-process series; kernel_threads = yes puts them in."""
    kt = kthread_pids()
    check(2 in kt, f"kthreadd (pid 2) not a kernel thread here: {sorted(kt)[:5]}")
    kcomms = {mtdlib.comm_of(p) for p in kt if os.path.exists(f"/proc/{p}")} - {None}
    ucomms = {mtdlib.comm_of(int(e)) for e in os.listdir("/proc")
              if e.isdigit() and int(e) not in kt} - {None}
    only_k = kcomms - ucomms
    check("kthreadd" in only_k and any(c.startswith("kworker/") for c in only_k),
          f"kernel threads' comms {sorted(only_k)[:8]}")
    with Daemon(source="proc", top_pids=1000) as d:
        for _ in range(2):      # the first sample, and one that follows it
            m = d.metrics()
            seen = comms_in(m)
            check(not seen & only_k, f"kernel threads: {sorted(seen & only_k)[:8]}")
            check(not any(c.startswith("kworker/") for c in seen), "kworker series")
            check("memtrackd" in seen, "memtrackd itself missing")
            pids = {l["pid"] for l, _ in m["memtrack_process_rss_anon_bytes"]}
            check("2" not in pids and not pids & {str(p) for p in kt}, "per-pid kthreads")
    with Daemon(source="proc", kernel_threads="yes") as d:
        m = d.metrics()
        check(value(m, "memtrack_program_processes", comm="kthreadd") == 1, "kthreadd")
        kw = sum(v for l, v in m["memtrack_program_processes"] if l["comm"].startswith("kworker/"))
        nkw = sum(1 for p in kthread_pids() if (mtdlib.comm_of(p) or "").startswith("kworker/"))
        check(kw and abs(kw - nkw) <= 3, f"kworker processes {kw} vs /proc {nkw}")
        total = sum(v for _, v in m["memtrack_program_processes"])
        nproc = sum(1 for e in os.listdir("/proc") if e.isdigit())
        check(abs(total - nproc) <= 5, f"processes {total} vs /proc {nproc}")
        check(value(m, "memtrack_program_rss_anon_bytes", comm="kthreadd") == 0, "no memory")


@test
def gone_programs_dropped_after_ttl():
    """program_ttl = 2s: a program whose processes all exited keeps its
    counters for 2 s, then every series of it goes; a new process of the
    comm starts its counters again from its own counts."""
    comm = f"mtdttl{os.getpid() % 100000}"
    with Named(comm) as w, Daemon(source="proc", sample_interval_ms=0,
                                  program_ttl="2s") as d:
        p = w.start(f"anon {MiB}")
        m = d.metrics()
        flt = minflt(p.pid)
        check(value(m, "memtrack_program_processes", comm=comm) == 1 and
              value(m, "memtrack_program_minor_page_faults_total", comm=comm) == flt,
              "live program")
        w.kill(p)
        t0 = time.monotonic()     # its last row was the scrape before
        m = d.metrics()
        check(value(m, "memtrack_program_processes", comm=comm) is None, "gauge of no process")
        check(value(m, "memtrack_program_minor_page_faults_total", comm=comm) == flt,
              "counter kept within the TTL")
        time.sleep(max(0, 1.0 - (time.monotonic() - t0)))
        m = d.metrics()
        check(time.monotonic() - t0 < 2 and
              value(m, "memtrack_program_minor_page_faults_total", comm=comm) == flt,
              "counter kept at 1 s")
        time.sleep(max(0, 2.6 - (time.monotonic() - t0)))
        m = d.metrics()
        check(comm not in comms_in(m), f"{comm} still there after the TTL")
        check("memtrackd" in comms_in(m), "a live program dropped")
        rc, out = promtool(d.text())
        check(rc == 0, f"promtool: {out}")
        p = w.start(f"anon {2 * MiB}")
        m = d.metrics()
        check(value(m, "memtrack_program_minor_page_faults_total", comm=comm) == minflt(p.pid),
              "a new process starts from its own count")
    # program_ttl = 0: never forgotten
    with Named(comm) as w, Daemon(source="proc", sample_interval_ms=0,
                                  program_ttl="0") as d:
        p = w.start()
        d.metrics()
        w.kill(p)
        time.sleep(1.2)
        check(comm in comms_in(d.metrics()), "forgotten with program_ttl = 0")


def series_lines(text):
    return [l for l in text.splitlines() if l and not l.startswith("#")]


@test
def node_label_only_when_asked():
    """No node label by default (Prometheus adds instance and job); with
    node_label = yes every series has node="<node>", first."""
    with Named("mtdnode") as w, Daemon(source="proc", top_pids=3, node="n-1") as d:
        w.start()
        text = d.text()
        check(not any("node=" in l for l in series_lines(text)), "a node label by default")
        check("memtrack_memory_total_bytes " in text, "unlabelled series without braces")
    with Named("mtdnode") as w, Daemon(source="proc", top_pids=3, node="n-1",
                                       node_label="yes") as d:
        w.start()
        text = d.text()
        lines = series_lines(text)
        bad = [l for l in lines if not re.match(r'^[a-z_]+\{node="n-1"[,}]', l)]
        check(lines and not bad, f"series without node first: {bad[:3]}")
        m = mtdlib.parse(text)
        check(value(m, "memtrack_program_processes", comm="mtdnode", node="n-1") == 1,
              "program series")
        rc, out = promtool(text)
        check(rc == 0, f"promtool: {out}")


@test
def build_and_node_info():
    """memtrack_build_info has the build's facts only (the version);
    memtrack_node_info the node's: its name (the hostname by default, else
    node =), uname's machine and release, and the source it runs on."""
    version = open(os.path.join(mtdlib.ROOT, "VERSION")).read().strip()
    uts = os.uname()
    for keys, name in (({}, uts.nodename), ({"node": "named-node"}, "named-node")):
        with Daemon(source="proc", **keys) as d:
            text = d.text()
            m = mtdlib.parse(text)
            check(m["memtrack_build_info"] == [({"version": version}, 1.0)],
                  f"build_info {m['memtrack_build_info']}")
            want = {"nodename": name, "machine": uts.machine, "release": uts.release,
                    "source": "proc"}
            check(m["memtrack_node_info"] == [(want, 1.0)],
                  f"{keys}: node_info {m['memtrack_node_info']}, want {want}")
            fams = families(text)
            check(fams["memtrack_build_info"] == fams["memtrack_node_info"] == "gauge",
                  "their type")
            check("memtrack_info" not in m, "the old memtrack_info")


@test
def tells_systemd_when_ready():
    """Type=notify: with $NOTIFY_SOCKET set (as systemd sets it), READY=1
    and a STATUS= line naming the version and the address come once
    /metrics answers, nothing before, from the process started (it never
    forks, -f or not), and STOPPING=1 on SIGTERM; the aggregator's once
    its port accepts."""
    version = open(os.path.join(mtdlib.ROOT, "VERSION")).read().strip()
    d = tempfile.mkdtemp()
    os.chmod(d, 0o711)      # the daemon tells it after dropping to nobody
    sock_path = os.path.join(d, "notify")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        s.bind(sock_path)
        os.chmod(sock_path, 0o777)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        s.settimeout(30)
        for aggregate in (False, True):
            port = mtdlib.free_port()
            conf = os.path.join(d, "c.ini")
            with open(conf, "w") as f:
                f.write(f"[memtrackd]\nsource = proc\nnode = n1\nport = {port}\n"
                        f"[aggregate]\nlisten = 127.0.0.1\nport = {port}\n")
            # without -f: it must not fork (systemd takes READY=1 from the
            # process it started only, NotifyAccess=main)
            p = subprocess.Popen([mtdlib.DAEMON, "-c", conf] +
                                 (["--aggregate"] if aggregate else []),
                                 env={**os.environ, "NOTIFY_SOCKET": sock_path},
                                 stderr=subprocess.PIPE, text=True)
            try:
                data, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(12))
                msg = data.decode().split("\n")
                creds = [struct.unpack("iII", d[:12]) for lvl, typ, d in anc
                         if lvl == socket.SOL_SOCKET and typ == socket.SCM_CREDENTIALS]
                check(creds and creds[0][0] == p.pid,
                      f"READY=1 from {creds}, not memtrackd's pid {p.pid}")
                if aggregate:
                    want = f"aggregating on 127.0.0.1 port {port} (max 4096 nodes)"
                    socket.create_connection(("127.0.0.1", port), timeout=5).close()
                else:
                    want = (f"memtrackd {version}, node n1, source proc, serving "
                            f"http://127.0.0.1:{port}/metrics (1 address)")
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                                timeout=30) as r:
                        check(r.status == 200, f"/metrics {r.status}")
                check(msg == ["READY=1", f"STATUS={want}"], f"first message {msg}")
                p.terminate()
                msg = s.recv(4096).decode()
                check(msg == "STOPPING=1", f"on SIGTERM: {msg!r}")
                check(p.wait(timeout=30) == 0, f"exit {p.returncode}: {p.stderr.read()}")
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
    finally:
        s.close()
        shutil.rmtree(d)


@test
def names_follow_conventions():
    """Prometheus's naming rules on every family: memtrack_ and snake case,
    _total on counters and only there, a base unit (bytes, seconds) where
    one applies, HELP and TYPE, no family whose sum is meaningless (no
    "type" label mixing total, free and used), program and process
    families of the same quantity under the same name."""
    with Named("mtdnames") as w, Daemon(source="proc", top_pids=3) as d:
        w.start()
        text = d.text()
    m = mtdlib.parse(text)
    fams = families(text)
    for name, typ in fams.items():
        check(re.fullmatch(r"memtrack_[a-z]+(_[a-z]+)*", name), f"{name}: not snake case")
        check(typ in ("counter", "gauge"), f"{name}: type {typ}")
        check(name.endswith("_total") == (typ == "counter"), f"{name} is a {typ}")
        check(not re.search(r"_(kb|kib|mb|ms|ns|pages?_bytes)(_|$)", name), f"{name}: unit")
        for labels, _ in m.get(name, []):
            check("type" not in labels, f"{name} has a type label: {labels}")
    check("memtrack_memory_bytes" not in fams, "memtrack_memory_bytes is back")
    mem = [n for n in fams if n.startswith("memtrack_memory_")]
    check(len(mem) == 14 and all(n.endswith("_bytes") and len(m[n]) == 1 for n in mem),
          f"memory families {mem}")
    # the same quantity, the same suffix at each level
    prog = {n[len("memtrack_program_"):] for n in fams if n.startswith("memtrack_program_")}
    proc = {n[len("memtrack_process_"):] for n in fams if n.startswith("memtrack_process_")}
    system = {n[len("memtrack_"):] for n in fams} - {"build_info", "node_info"}
    check(proc == {"rss_anon_bytes", "rss_file_bytes", "rss_shmem_bytes", "swap_bytes"}
          and proc < prog, f"process {proc}, program {prog}")
    for suffix in ("minor_page_faults_total", "major_page_faults_total"):
        check(suffix in prog and suffix in system, f"{suffix}: program and system")
    for old in ("page_faults_total", "minor_faults_total", "major_faults_total",
                "page_allocs_total", "kmallocs_total", "process_rss_bytes", "info"):
        check(f"memtrack_{old}" not in fams and f"memtrack_program_{old}" not in fams,
              f"old name {old}")


def meminfo():
    with open("/proc/meminfo") as f:
        return {l.split(":")[0]: int(l.split()[1]) * 1024 for l in f}


def vmstat():
    with open("/proc/vmstat") as f:
        return {l.split()[0]: int(l.split()[1]) for l in f}


MEM_FIELDS = {
    "total": ("MemTotal",), "free": ("MemFree",), "available": ("MemAvailable",),
    "file": ("Cached", "Buffers", "SwapCached"), "anon": ("AnonPages",),
    "shmem": ("Shmem",), "mapped": ("Mapped",), "dirty": ("Dirty",),
    "writeback": ("Writeback",), "slab_reclaimable": ("SReclaimable",),
    "slab_unreclaimable": ("SUnreclaim",), "page_tables": ("PageTables",),
    "swap_total": ("SwapTotal",), "swap_free": ("SwapFree",),
}


@test
def system_figures_match_proc():
    """Each memtrack_memory_*_bytes equals its /proc/meminfo field(s) read
    just before or after the scrape (between the two, for each of them in
    one of 20 tries); the counters lie between /proc/vmstat read before
    and after."""
    pending = set(MEM_FIELDS)
    with Daemon(source="proc", sample_interval_ms=0) as d:
        for _ in range(20):
            a, v0 = meminfo(), vmstat()
            m = d.metrics()
            b, v1 = meminfo(), vmstat()
            for f in list(pending):
                lo = sum(a[k] for k in MEM_FIELDS[f])
                hi = sum(b[k] for k in MEM_FIELDS[f])
                got = value(m, f"memtrack_memory_{f}_bytes")
                if min(lo, hi) <= got <= max(lo, hi):
                    pending.discard(f)
            if not pending:
                break
        check(not pending, f"never within /proc/meminfo's: {sorted(pending)}")
        check(value(m, "memtrack_memory_total_bytes") == b["MemTotal"], "MemTotal exact")
        check(value(m, "memtrack_memory_swap_total_bytes") == b["SwapTotal"], "SwapTotal exact")
        ctrs = {
            "memtrack_pages_allocated_total": lambda v: sum(x for k, x in v.items()
                                                           if k.startswith("pgalloc_")),
            "memtrack_pages_freed_total": lambda v: v["pgfree"],
            "memtrack_minor_page_faults_total": lambda v: v["pgfault"] - v["pgmajfault"],
            "memtrack_major_page_faults_total": lambda v: v["pgmajfault"],
            "memtrack_oom_kills_total": lambda v: v["oom_kill"],
            "memtrack_reclaim_stalls_total": lambda v: sum(x for k, x in v.items()
                                                          if k.startswith("allocstall_")),
        }
        for name, of in ctrs.items():
            got = value(m, name)
            check(of(v0) <= got <= of(v1), f"{name} {got} not within {of(v0)}..{of(v1)}")
        for name in ("memtrack_page_alloc_calls_total", "memtrack_kmalloc_calls_total",
                     "memtrack_reclaim_stall_seconds_total"):
            check(name not in m, f"{name}: the module's, not /proc's")


@test
def listen_by_host_name():
    """listen = localhost:PORT listens on every address of localhost and
    serves there; listen = localhost with port = PORT the same."""
    port = mtdlib.free_port()
    addrs = {a[4][0] for a in socket.getaddrinfo("localhost", port, type=socket.SOCK_STREAM)}
    for keys in ({"listen": f"localhost:{port}", "port": None},
                 {"listen": "localhost", "port": port}):
        with Daemon(source="proc", **keys) as d:
            for a in addrs:
                r = http(port, b"GET /metrics HTTP/1.0\r\n\r\n", host=a)
                check(status_of(r) == 200 and b"memtrack_build_info" in r, f"{keys} on {a}: {r[:80]!r}")
            check(f"serving http://localhost:{port}/metrics ({len(addrs)} address" in d.stderr(),
                  f"{keys}: {d.stderr()!r}")
            r = subprocess.run(["curl", "-sSf", f"http://localhost:{port}/"],
                               capture_output=True, text=True)
            check(r.returncode == 0 and 'href="/metrics"' in r.stdout, f"curl: {r.stderr}")


def bindable(addr):
    """Whether this machine has addr (::1 without IPv6: no)."""
    with socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET) as s:
        try:
            s.bind((addr, 0))
            return True
        except OSError:
            return False


@test
def aggregator_listens_by_host_name():
    """[aggregate] listen = NAME:PORT, NAME having 127.0.0.1 and ::1 (an
    /etc/hosts of its own, bind-mounted in a mount namespace): the
    aggregator listens on each address this machine has and answers a
    query on each; listen = NAME with port = PORT the same."""
    d = tempfile.mkdtemp(prefix="mtdagg.")
    try:
        hosts = os.path.join(d, "hosts")
        with open(hosts, "w") as f:
            f.write("127.0.0.1 mtagg.test\n::1 mtagg.test\n")
        addrs = [a for a in ("127.0.0.1", "::1") if bindable(a)]
        port = mtdlib.free_port()
        for keys in (f"listen = mtagg.test:{port}\n", f"listen = mtagg.test\nport = {port}\n"):
            conf = os.path.join(d, "c.ini")
            with open(conf, "w") as f:
                f.write("[aggregate]\n" + keys)
            with open(os.path.join(d, "log"), "w+") as log:
                p = subprocess.Popen(["unshare", "-m", "sh", "-c",
                                      f"mount --bind {hosts} /etc/hosts && "
                                      f"exec {mtdlib.DAEMON} -f --aggregate -c {conf}"],
                                     stderr=log)
                try:
                    more = f"{len(addrs)} addresses, " if len(addrs) > 1 else ""
                    want = f"aggregating on mtagg.test port {port} ({more}max 4096 nodes)"
                    for _ in range(100):
                        log.seek(0)
                        if want in log.read() or p.poll() is not None:
                            break
                        time.sleep(0.1)
                    log.seek(0)
                    text = log.read()
                    check(want in text, f"{keys!r}: {text!r}")
                    for a in addrs:
                        server = f"[{a}]:{port}" if ":" in a else f"{a}:{port}"
                        r = subprocess.run([mtdlib.QUERY, "-c", "/dev/null", "--server",
                                            server, "nodes"],
                                           capture_output=True, text=True, timeout=30)
                        check(r.returncode == 0 and r.stdout.startswith("node  state"),
                              f"{keys!r} on {server}: {r.returncode} {r.stdout!r} {r.stderr!r}")
                finally:
                    p.terminate()
                    check(p.wait(timeout=30) == 0, f"exit {p.returncode}")
    finally:
        shutil.rmtree(d)


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
        with Named("mtdprom") as w, Daemon(source="proc", top_pids=1000) as d:
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
            # Prometheus asks for gzip: up means it decoded the answer
            up = prom_query(pport, 'up{job="memtrackd"}')
            check(float(up[0]["value"][1]) == 1, f"up {up}")
            # the renamed families: faults (the workload is idle now) ...
            flt = prom_query(pport, 'sum by (comm) '
                             '(memtrack_program_minor_page_faults_total{comm="mtdprom"})')
            want_flt = sum(minflt(p) for p in pids)
            check(len(flt) == 1 and float(flt[0]["value"][1]) == want_flt,
                  f"PromQL minor faults {flt} vs /proc {want_flt}")
            # ... per process, summed per program, equal to the program's
            per_pid = prom_query(pport, 'sum by (comm) '
                                 '(memtrack_process_rss_anon_bytes{comm="mtdprom"})')
            per_prog = prom_query(pport, 'sum by (comm) '
                                  '(memtrack_program_rss_anon_bytes{comm="mtdprom"})')
            check(per_pid and per_prog and per_pid[0]["value"][1] == per_prog[0]["value"][1],
                  f"per pid {per_pid} vs per program {per_prog}")
            # ... a series per memory field, only Prometheus's target labels
            total = prom_query(pport, "memtrack_memory_total_bytes")
            check(len(total) == 1 and set(total[0]["metric"]) == {"__name__", "instance", "job"},
                  f"labels {total}")
            check(float(total[0]["value"][1]) == meminfo()["MemTotal"], f"MemTotal {total}")
            fams = prom_query(pport, 'count by (__name__) ({__name__=~"memtrack_memory_.*"})')
            check(len(fams) == 14 and all(float(f["value"][1]) == 1 for f in fams),
                  f"memory families {fams}")
            bi = prom_query(pport, "memtrack_build_info")
            version = open(os.path.join(mtdlib.ROOT, "VERSION")).read().strip()
            check(len(bi) == 1 and bi[0]["metric"]["version"] == version, f"build_info {bi}")
            ni = prom_query(pport, 'memtrack_node_info{source="proc"}')
            check(len(ni) == 1 and ni[0]["metric"]["nodename"] == os.uname().nodename,
                  f"node_info {ni}")
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
