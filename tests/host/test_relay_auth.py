#!/usr/bin/env python3
"""Host tests of memtrackd's authenticated relay connections (the conn layer,
user/daemon/conn*.c, GnuTLS).  Everything runs in a network namespace of
its own (loopback only, fixed ports): memtrackd as a node (/proc mode),
build/tests/user/conn_peer as a TLS server (echo, or a TLS front that
forwards to tests/host/relay_agg.py, a plain aggregator), and GnuTLS's own
gnutls-serv and gnutls-cli for interoperability.  Keys and certificates
are made with certtool and psktool in a temporary directory: a CA, node and
aggregator certificates, another CA's, an expired one, one not valid yet, a
self-signed one, and PSK files.

Needs root, iproute2, gnutls-bin.  Run with tests/lib/harness.py: test
names as arguments run only those, --list prints them; PASS/FAIL lines;
exits 1 if any failed."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "guest"), os.path.join(HERE, "..", "lib")]
from mtdlib import ROOT, value  # noqa: E402
from harness import Netns, check, main, test  # noqa: E402
from tls_keys import CLIENT, EXPIRED, NOT_YET_VALID, SERVER, Keys, client_hello  # noqa: E402
from mtdnet import Output, refused_conf, relay_node, wait_for  # noqa: E402

PEER = os.path.join(ROOT, "build", "tests", "user", "conn_peer")
NS = f"mtdauth{os.getpid()}"
LO = "127.0.0.1"
TLS_PORT, AGG_PORT, GNUTLS_PORT = 9601, 9602, 9603
# what memtrackd offers, for GnuTLS's tools
PSK_PRIO = "NORMAL:-VERS-ALL:+VERS-TLS1.3:-KX-ALL:+ECDHE-PSK:+DHE-PSK"
K = None        # the credentials directory, made by relay_auth_setup()
KEYS = None     # tls_keys.Keys(K)
NETNS = Netns()


def in_ns(*args):
    return Netns.cmd(NS, *args)


def k(name):
    return os.path.join(K, name)


# ---- credentials ----------------------------------------------------------

def psk_key(path, ident):
    """psktool's line for ident in path: (identity, hex key)."""
    return KEYS.psk_line(os.path.basename(path), ident)


def make_credentials():
    KEYS.ca("ca", "memtrack test CA")
    KEYS.ca("other-ca", "another CA")
    KEYS.cert("agg", "aggregator-1", purposes=(SERVER,))
    KEYS.cert("node", "node-1", purposes=(CLIENT,))
    KEYS.cert("wrongca", "node-wrong-ca", ca="other-ca")
    KEYS.cert("expired", "node-expired", dates=EXPIRED)
    KEYS.cert("future", "node-future", dates=NOT_YET_VALID)
    KEYS.cert("selfsigned", "node-self-signed", ca=None)
    KEYS.cert("agg-expired", "aggregator-expired", purposes=(SERVER,), dates=EXPIRED)
    # a node certificate is not good for an aggregator
    KEYS.cert("agg-clientonly", "aggregator-client-only", purposes=(CLIENT,))
    # the aggregator's file knows node-a and node-b; each node has its line
    for ident in ("node-a", "node-b"):
        KEYS.psk("agg.psk", ident)
    for ident in ("node-a", "node-b"):
        KEYS.psk_extract("agg.psk", ident, ident + ".psk")
    KEYS.psk("wrongkey.psk", "node-a")       # same name, other key
    KEYS.psk("unknown.psk", "node-x")


# ---- processes ------------------------------------------------------------

class Lines(Output):
    """A process in the namespace; its stdout and stderr lines in
    self.lines."""

    def __init__(self, args, stdin=None, wait_for=None):
        super().__init__(in_ns(*args), parse=lambda line: line.rstrip("\n"),
                         stderr=subprocess.STDOUT, stdin=stdin)
        if wait_for:
            self.wait(wait_for, 10)

    def wait(self, pattern, timeout):
        """The first line from now on matching the regex pattern."""
        line = self.first(lambda line: re.search(pattern, line), timeout)
        if line is None:
            raise AssertionError(f"{self.p.args[4]}: no line matching {pattern!r} within "
                                 f"{timeout} s; got {self.lines[-8:]}")
        return line

    def matching(self, pattern):
        return [l for l in self.lines if re.search(pattern, l)]


def auth_args(auth, psk=None, cert=None, ca="ca"):
    if auth == "psk":
        return ["-a", "psk", "-p", k(psk)]
    if auth == "cert":
        return ["-a", "cert", "-C", k(ca + ".pem"), "-c", k(cert + ".pem"), "-k", k(cert + ".key")]
    return ["-a", "none"]


def tls_server(*auth, forward=True, extra=(), port=TLS_PORT):
    """conn_peer as a TLS server: a front for relay_agg.py, or an echo."""
    fwd = [LO, str(AGG_PORT)] if forward else []
    return Lines([PEER, "-t", "3", *extra, *auth_args(*auth), "server", LO, str(port), *fwd],
                 wait_for="^listening")


def plain_agg():
    return Lines([sys.executable, os.path.join(HERE, "relay_agg.py"), LO, str(AGG_PORT)],
                 wait_for='"listening"')


def node(auth, port=TLS_PORT, **keys):
    return relay_node(NS, f"{LO}:{port}", auth=auth, **keys)


def psk_node(psk_file, **keys):
    return node("psk", psk_file=k(psk_file), **keys)


def cert_node(cert, ca="ca", **keys):
    return node("cert", ca_file=k(ca + ".pem"), cert_file=k(cert + ".pem"),
                key_file=k(cert + ".key"), **keys)


def data_seqs(agg):
    return [int(m.group(1)) for m in
            (re.search(r'"ev": "data", "seq": (\d+)', l) for l in agg.lines) if m]


def backoffs(log):
    return [int(x) for x in re.findall(r"again in (\d+) ms", log)]


def wait_log(d, pattern, timeout):
    wait_for(lambda: re.search(pattern, d.stderr()), timeout,
             lambda: f"node log: nothing matching {pattern!r}: {d.stderr()[-600:]}")


def assert_refused_and_retrying(d, server_lines, node_says, min_tries=3):
    """The node was refused (and said node_says) at least min_tries times,
    backing off 100, 200, 400... ms, is alive, counts it, and got nowhere."""
    wait_log(d, r"again in 400 ms", 30)
    # the node logs its third failure as its own side of the handshake
    # ends; the server's line for that try may come a moment later
    deadline = time.time() + 5
    while len(server_lines()) < min_tries and time.time() < deadline:
        time.sleep(0.05)
    server_lines = server_lines()
    log = d.stderr()
    check(d.alive(), "node died")
    check(re.search(node_says, log), f"node log lacks {node_says!r}: {log[-800:]}")
    b = backoffs(log)
    check(b[:3] == [100, 200, 400], f"backoff {b}")
    check(len(server_lines) >= min_tries, f"server saw {len(server_lines)} tries")
    m = d.metrics()
    agg = f"{LO}:{TLS_PORT}"
    check(value(m, "memtrack_relay_connected", aggregator=agg) == 0, "connected")
    check(value(m, "memtrack_relay_connects_total", aggregator=agg) == 0, "connects")
    fails = value(m, "memtrack_relay_auth_failures_total", aggregator=agg)
    check(fails is not None and fails >= min_tries, f"auth failures {fails}")


# ---- data flows -----------------------------------------------------------

def data_flows(agg, front, d, identity, kx):
    acc = front.wait(r"^accepted", 30).split("\t")
    check(acc[1] == identity, f"peer identity {acc[1]!r}, want {identity!r}")
    check(acc[2].startswith("TLS1.3 ") and kx in acc[2].split(), f"TLS {acc[2]!r}")
    agg.wait(r'"ev": "data", "seq": 10,', 30)
    seqs = data_seqs(agg)
    check(seqs == list(range(1, len(seqs) + 1)), f"seqs {seqs}")
    hello = agg.matching('"ev": "hello"')
    check(len(hello) == 1 and '"node": "node-a"' in hello[0], f"hello {hello}")
    m = d.metrics()
    a = f"{LO}:{TLS_PORT}"
    check(value(m, "memtrack_relay_connected", aggregator=a) == 1, "connected")
    check(value(m, "memtrack_relay_acked_seq", aggregator=a) >= 10, "acked")
    check(value(m, "memtrack_relay_auth_failures_total", aggregator=a) == 0, "auth failures")
    check(re.search(r"relay: connected to 127\.0\.0\.1 port 9601", d.stderr()), "log")


@test
def psk_node_data_flows():
    # the aggregator's file has node-a and node-b: it takes either
    # and a node given the whole file uses its first line
    for ident, f in (("node-a", "node-a.psk"), ("node-b", "node-b.psk"), ("node-a", "agg.psk")):
        with plain_agg() as agg, tls_server("psk", "agg.psk") as front, \
                psk_node(f) as d:
            data_flows(agg, front, d, ident, "ECDHE-PSK")


@test
def cert_node_data_flows():
    with plain_agg() as agg, tls_server("cert", None, "agg") as front, cert_node("node") as d:
        data_flows(agg, front, d, "CN=node-1,O=memtrack test", "ECDHE-RSA")


# ---- refusals -------------------------------------------------------------

REFUSALS = [
    # (name, server auth, node, server log, node log)
    ("wrong_psk", ("psk", "agg.psk"), ("psk", "wrongkey.psk"),
     r'bad pre-shared key for identity "node-a"', r"the peer refused: Illegal parameter: wrong pre-shared key"),
    ("unknown_identity", ("psk", "agg.psk"), ("psk", "unknown.psk"),
     r'unknown PSK identity "node-x" \(not in psk_file\)', r"the peer refused: .*: our identity is not in its PSK file"),
    ("wrong_ca", ("cert", None, "agg"), ("cert", "wrongca"),
     r'peer certificate "CN=node-wrong-ca,O=memtrack test" refused: .*issuer is unknown',
     r"TLS: the peer refused: Certificate is bad: it refused our certificate"),
    ("expired", ("cert", None, "agg"), ("cert", "expired"),
     r'peer certificate "CN=node-expired,O=memtrack test" refused: .*expired certificate',
     r"it refused our certificate"),
    ("not_yet_valid", ("cert", None, "agg"), ("cert", "future"),
     r'peer certificate "CN=node-future,O=memtrack test" refused: .*not yet valid',
     r"it refused our certificate"),
    ("self_signed", ("cert", None, "agg"), ("cert", "selfsigned"),
     r'peer certificate "CN=node-self-signed,O=memtrack test" refused: .*issuer is unknown',
     r"it refused our certificate"),
    # the node refuses the aggregator
    ("aggregator_wrong_ca", ("cert", None, "wrongca"), ("cert", "node"),
     r"the peer refused: Certificate is bad: it refused our certificate",
     r'relay: 127\.0\.0\.1 port 9601: TLS handshake: peer certificate "CN=node-wrong-ca,O=memtrack test" refused: .*issuer is unknown'),
    ("aggregator_expired", ("cert", None, "agg-expired"), ("cert", "node"),
     r"it refused our certificate",
     r'peer certificate "CN=aggregator-expired,O=memtrack test" refused: .*expired certificate'),
    ("aggregator_not_a_server", ("cert", None, "agg-clientonly"), ("cert", "node"),
     r"it refused our certificate",
     r'peer certificate "CN=aggregator-client-only,O=memtrack test" refused: .*does not match the intended purpose'),
    # one side psk, the other cert
    ("psk_node_cert_server", ("cert", None, "agg"), ("psk", "node-a.psk"),
     r"the peer refused: Handshake failed", r"the peer does not authenticate with a pre-shared key"),
    ("cert_node_psk_server", ("psk", "agg.psk"), ("cert", "node"),
     r"the peer does not authenticate with a pre-shared key", r"the peer refused: Handshake failed"),
]


def refusal_case(name, server, nodecfg, server_says, node_says):
    with tls_server(*server) as front, plain_agg() as agg:
        d = psk_node(nodecfg[1]) if nodecfg[0] == "psk" else cert_node(nodecfg[1])
        with d:
            front.wait(r"^refused", 30)
            assert_refused_and_retrying(d, lambda: front.matching(r"^refused|^accepted"), node_says)
            tries = front.matching(r"^refused|^accepted")
            # the TLS 1.3 server only learns after its handshake that a client
            # refused its certificate: it may count an "accepted" first
            refused = front.matching(r"^refused")
            check(all(re.search(server_says, l) for l in refused),
                  f"{name}: server said {refused[:2]}")
            check(len(refused) >= 3, f"{name}: {tries}")
            check(not data_seqs(agg), f"{name}: data went through")


for _case in REFUSALS:
    def _mk(case):
        def fn():
            refusal_case(*case)
        fn.__name__ = "refused_" + case[0]
        return fn
    test(_mk(_case))


@test
def refused_no_client_certificate():
    # memtrackd always sends one: gnutls-cli with only the CA does not
    with tls_server("cert", None, "agg", forward=False) as srv:
        r = subprocess.run(in_ns("gnutls-cli", "--x509cafile", k("ca.pem"), "-p", str(TLS_PORT),
                                 "--verify-hostname", "aggregator-1", LO),
                           input="ping\n", capture_output=True, text=True, timeout=30)
        srv.wait(r"^refused\tTLS handshake: the peer sent no certificate$", 10)
        check("Certificate is required" in r.stdout + r.stderr, f"gnutls-cli: {r.stdout[-300:]}")
        check(srv.alive(), "server died")


@test
def refused_plain_node_to_tls_server():
    with tls_server("psk", "agg.psk") as front, plain_agg() as agg, node("none") as d:
        front.wait(r"^refused\tTLS handshake: not TLS from the peer", 30)
        wait_log(d, r"again in 400 ms", 30)
        check(d.alive(), "node died")
        check(len(front.matching(r"^refused\tTLS handshake: not TLS")) >= 3, "retries")
        check(re.search(r"relay: 127\.0\.0\.1 port 9601: ", d.stderr()), "node log")
        check(not data_seqs(agg), "data went through")


@test
def refused_tls_node_to_plain_server():
    with Lines([sys.executable, os.path.join(HERE, "relay_agg.py"), LO, str(TLS_PORT)],
               wait_for='"listening"') as agg, psk_node("node-a.psk") as d:
        agg.wait(r'"ev": "error"', 30)
        assert_refused_and_retrying(d, lambda: agg.matching(r'"ev": "error"'),
                                    r"TLS handshake: the peer closed the connection .*not a TLS server\?")
        check(agg.matching(r'"ev": "error", "what": "bad header'), f"agg: {agg.lines[-3:]}")


def send_raw(data, hold=0.0):
    """Connect to the TLS server from inside the namespace, send data, then
    close after hold seconds (a helper process: the socket is in NS)."""
    code = ("import socket,sys,time\n"
            f"s=socket.create_connection(('{LO}',{TLS_PORT}))\n"
            "s.sendall(sys.stdin.buffer.read())\n"
            f"time.sleep({hold})\n"
            "s.close()\n")
    subprocess.run(in_ns(sys.executable, "-c", code), input=data, check=True, timeout=30)


@test
def garbage_to_tls_servers():
    hello = client_hello()
    cases = [
        (os.urandom(1), r"TLS handshake: "),
        (os.urandom(4096), r"TLS handshake: "),
        (b"\x16\x03\x01\xff\xff" + os.urandom(100), r"TLS handshake: "),      # claims 64 KiB
        (b"\x16\x03\x01\x00\x05\x01\x00\x00\x01\x00", r"TLS handshake: "),   # a tiny hello
        (b"", r"TLS handshake: the peer closed the connection"),
        (hello[:len(hello) // 2], r"TLS handshake: the peer closed the connection"),
        (hello + os.urandom(300), r"TLS handshake: "),
        (b"MTR1" + bytes(8), r"TLS handshake: not TLS from the peer"),
    ]
    for auth in (("psk", "agg.psk"), ("cert", None, "agg")):
        # under valgrind: no invalid access and no leak, for any of it
        vg = ["valgrind", "-q", "--error-exitcode=99", "--leak-check=full",
              "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite"]
        n = len(cases) + 1
        # valgrind is slow: a timeout long enough for its handshakes
        srv = Lines([*vg, PEER, "-t", "20", "-n", str(n), *auth_args(*auth), "server", LO,
                     str(TLS_PORT)], wait_for="^listening")
        try:
            for data, says in cases:
                send_raw(data)
                line = srv.wait(r"^refused", 30)
                check(re.search(says, line), f"{auth[0]} {len(data)} bytes {data[:8]!r}: {line}")
            # and a good client still gets through
            good = auth_args("psk", "node-a.psk") if auth[0] == "psk" else auth_args("cert", cert="node")
            cl = subprocess.run(in_ns(PEER, "-t", "20", *good, "client", LO, str(TLS_PORT), "still-here"),
                                capture_output=True, text=True, timeout=60)
            check(cl.returncode == 0 and "echo\tstill-here" in cl.stdout,
                  f"client: {cl.stdout}; server: {srv.lines[-3:]}")
            srv.p.wait(timeout=60)
            check(srv.p.returncode == 0, f"valgrind/conn_peer exit {srv.p.returncode}: "
                  f"{srv.lines[-10:]}")
        finally:
            srv.stop()


@test
def garbage_from_aggregators():
    """A node whose aggregator answers with garbage or half a TLS record."""
    answers = [os.urandom(64), b"\x16\x03\x03\x40\x00" + os.urandom(20), b"\x15\x03\x03\x00\x02\x02\x28", b""]
    code = ("import socket,sys,os\n"
            f"s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            f"s.bind(('{LO}',{TLS_PORT})); s.listen(); print('listening', flush=True)\n"
            f"answers=[bytes.fromhex(h) for h in sys.argv[1:]]\n"
            "i=0\n"
            "while True:\n"
            "    c,_=s.accept(); c.recv(4096); c.sendall(answers[i % len(answers)]); c.close()\n"
            "    print('answered', i, flush=True); i+=1\n")
    with Lines([sys.executable, "-c", code, *[a.hex() for a in answers]], wait_for="^listening") as bad:
        for auth in ("psk", "cert"):
            d = psk_node("node-a.psk") if auth == "psk" else cert_node("node")
            with d:
                start = len(bad.matching("^answered"))
                deadline = time.time() + 60
                while len(bad.matching("^answered")) < start + len(answers) + 1 and time.time() < deadline:
                    time.sleep(0.2)
                check(len(bad.matching("^answered")) >= start + len(answers) + 1, f"{auth}: tries")
                check(d.alive(), f"{auth}: node died")
                log = d.stderr()
                check(len(re.findall(r"relay: 127\.0\.0\.1 port 9601: TLS handshake: ", log)) >= len(answers),
                      f"{auth}: log {log[-600:]}")
                # the alert, the record cut short, nothing at all
                for says in (r"TLS handshake: the peer refused: Handshake failed",
                             r"TLS handshake: the peer closed the connection \(end of stream\): "
                             r"not a TLS server\?"):
                    check(re.search(says, log), f"{auth}: no {says!r} in {log[-800:]}")
                fails = value(d.metrics(), "memtrack_relay_auth_failures_total")
                check(fails >= len(answers), f"{auth}: auth failures {fails}")


@test
def handshake_timeout():
    """Half a ClientHello, then silence: refused after the socket timeout."""
    hello = client_hello()
    with tls_server("psk", "agg.psk", forward=False) as srv:      # -t 3
        t0 = time.time()
        threading.Thread(target=send_raw, args=(hello[:60], 8), daemon=True).start()
        srv.wait(r"^refused\tTLS handshake: timed out after 3000 ms$", 30)
        took = time.time() - t0
        check(2.5 < took < 6, f"timeout took {took:.1f} s")
        rc, out = peer_client(auth_args("psk", "node-a.psk"), TLS_PORT, "next")
        check(rc == 0 and "echo\tnext" in out, out)


# ---- interoperability with GnuTLS's tools ---------------------------------

def peer_client(auth_list, port, msg):
    r = subprocess.run(in_ns(PEER, "-t", "5", *auth_list, "client", LO, str(port), msg),
                       capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout


@test
def interop_gnutls_serv():
    """conn_peer's client (memtrackd's conn layer) against gnutls-serv."""
    cases = [
        (["--pskpasswd", k("agg.psk"), "--priority", PSK_PRIO],
         auth_args("psk", "node-b.psk"), "node-b", "PSK authentication. Connected as 'node-b'"),
        (["--x509cafile", k("ca.pem"), "--x509certfile", k("agg.pem"), "--x509keyfile", k("agg.key"),
          "--require-client-cert", "--verify-client-cert"],
         auth_args("cert", cert="node"), "CN=aggregator-1,O=memtrack test", "Subject: CN=node-1,O=memtrack test"),
    ]
    for serv_args, cl_auth, server_id, serv_says in cases:
        with Lines(["gnutls-serv", "--echo", "-p", str(GNUTLS_PORT), *serv_args],
                   wait_for="listening on IPv4") as gs:
            rc, out = peer_client(cl_auth, GNUTLS_PORT, "ping memtrack\n")
            check(rc == 0, f"client: {out}")
            lines = out.splitlines()
            con = lines[0].split("\t")
            check(con[0] == "connected" and con[1] == server_id and con[2].startswith("TLS1.3 "), out)
            check(lines[1] == "echo\tping memtrack", out)
            gs.wait(re.escape(serv_says), 10)
    # and a wrong key is refused by gnutls-serv too
    with Lines(["gnutls-serv", "--echo", "-p", str(GNUTLS_PORT), "--pskpasswd", k("agg.psk"),
                "--priority", PSK_PRIO], wait_for="listening on IPv4"):
        rc, out = peer_client(auth_args("psk", "wrongkey.psk"), GNUTLS_PORT, "x\n")
        check(rc == 1 and out.startswith("refused\tTLS handshake: the peer refused: "), out)


@test
def interop_gnutls_cli():
    """gnutls-cli against conn_peer's server (memtrackd's conn layer)."""
    ident, key = psk_key(k("agg.psk"), "node-a")
    cases = [
        (("psk", "agg.psk"), ["--pskusername", ident, "--pskkey", key, "--priority", PSK_PRIO],
         "node-a", "ECDHE-PSK"),
        (("cert", None, "agg"), ["--x509cafile", k("ca.pem"), "--x509certfile", k("node.pem"),
                                 "--x509keyfile", k("node.key"), "--verify-hostname", "aggregator-1"],
         "CN=node-1,O=memtrack test", "ECDHE-RSA"),
    ]
    for srv_auth, cli_args, identity, kx in cases:
        with tls_server(*srv_auth, forward=False) as srv:
            cli = Lines(["gnutls-cli", "-p", str(TLS_PORT), *cli_args, LO], stdin=subprocess.PIPE)
            try:
                acc = srv.wait(r"^accepted", 20).split("\t")
                check(acc[1] == identity and acc[2].startswith("TLS1.3 ") and kx in acc[2], f"{acc}")
                cli.p.stdin.write("ping from gnutls-cli\n")
                cli.p.stdin.flush()
                cli.wait(r"^ping from gnutls-cli$", 10)
                if srv_auth[0] == "cert":
                    check(cli.matching(r"Subject: .*CN=aggregator-1|subject `CN=aggregator-1"),
                          f"gnutls-cli did not see the aggregator's certificate: {cli.lines[:20]}")
            finally:
                cli.p.stdin.close()
                cli.stop()
            srv.wait(r"^closed\t", 10)
    # gnutls-cli with a wrong key: conn_peer says which
    _, bad = psk_key(k("wrongkey.psk"), "node-a")
    with tls_server("psk", "agg.psk", forward=False) as srv:
        r = subprocess.run(in_ns("gnutls-cli", "-p", str(TLS_PORT), "--pskusername", "node-a",
                                 "--pskkey", bad, "--priority", PSK_PRIO, LO),
                           input="", capture_output=True, text=True, timeout=30)
        srv.wait(r'^refused\tTLS handshake: bad pre-shared key for identity "node-a"', 10)
        check(r.returncode != 0, "gnutls-cli got in with a wrong key")


# ---- key files and configuration ------------------------------------------

def start_fails(lines):
    """memtrackd with this config must exit at once: its stderr."""
    rc, err = refused_conf("\n".join(lines) + "\n", ns=NS)
    check(rc != 0, f"memtrackd started with {lines}")
    return err


BASE = ["[memtrackd]", "source = proc", "sample_interval_ms = 200", "port = 9609",
        f"aggregators = {LO}:{TLS_PORT}"]


@test
def key_file_permissions():
    for mode in (0o644, 0o640, 0o604):
        shutil.copy(k("node-a.psk"), k("open.psk"))
        os.chmod(k("open.psk"), mode)
        err = start_fails(BASE + ["auth = psk", f"psk_file = {k('open.psk')}"])
        want = (f"relay credentials: psk_file {k('open.psk')}: permissions {mode:04o} are too open: "
                "it must be readable by its owner only (chmod 600)")
        check(want in err, f"{mode:o}: {err}")
        shutil.copy(k("node.key"), k("open.key"))
        os.chmod(k("open.key"), mode)
        err = start_fails(BASE + ["auth = cert", f"ca_file = {k('ca.pem')}", f"cert_file = {k('node.pem')}",
                                  f"key_file = {k('open.key')}"])
        check(f"key_file {k('open.key')}: permissions {mode:04o} are too open" in err, err)
        # the conn layer refuses it for any user of it
        rc, out = peer_client(auth_args("psk", "open.psk"), TLS_PORT, "x")
        check(rc == 1 and "permissions" in out and "too open" in out, out)
    # 0600 and 0400 are fine
    for mode in (0o600, 0o400):
        os.chmod(k("open.psk"), mode)
        with psk_node("open.psk") as d:
            check(d.alive(), f"{mode:o}")


@test
def config_errors():
    cases = [
        (["auth = tls"], r'CONF:6: auth = "tls": must be none, psk or cert'),
        (["auth = psk"], r"CONF:6: auth = psk needs psk_file"),
        # the line of auth, after comments and blank lines
        (["; a comment", "", "# another", "auth = cert", f"ca_file = {k('ca.pem')}",
          f"cert_file = {k('node.pem')}"],
         r"CONF:9: auth = cert needs ca_file, cert_file and key_file"),
        (["auth = psk", "psk_file = relay.psk"],
         r'CONF:7: psk_file = "relay.psk": must be an absolute path'),
        (["auth = psk", f"psk_file = {k('absent.psk')}"],
         re.escape(f"relay credentials: psk_file {k('absent.psk')}: No such file or directory")),
        (["auth = cert", f"ca_file = {k('absent.pem')}", f"cert_file = {k('node.pem')}",
          f"key_file = {k('node.key')}"],
         re.escape(f"relay credentials: ca_file {k('absent.pem')}: ")),
        # a certificate with another's key
        (["auth = cert", f"ca_file = {k('ca.pem')}", f"cert_file = {k('node.pem')}",
          f"key_file = {k('agg.key')}"],
         re.escape(f"relay credentials: cert_file {k('node.pem')}, key_file {k('agg.key')}: ")),
    ]
    for extra, want in cases:
        err = start_fails(BASE + extra)
        check(re.search(want, err), f"{extra}: {err}")
    bad_psk = [
        ("node-a\n", "line 1: expected IDENTITY:HEXKEY, as psktool writes"),
        ("node-a:00112233445566778899aabbccddeeff\nnode-a:00112233445566778899aabbccddeeff\n",
         "line 2: identity listed twice"),
        ("node-a:0011223344556677\n", "line 1: key shorter than 128 bits"),
        ("node-a:00112233445566778899aabbccddeefg\n", "line 1: the key must be 16 to 64 bytes in hexadecimal"),
        ("\n\n", "no key in it"),
    ]
    for text, want in bad_psk:
        with open(k("bad.psk"), "w") as f:
            f.write(text)
        os.chmod(k("bad.psk"), 0o600)
        err = start_fails(BASE + ["auth = psk", f"psk_file = {k('bad.psk')}"])
        check(f"psk_file {k('bad.psk')} {want}" in err or f"psk_file {k('bad.psk')}: {want}" in err,
              f"{text!r}: {err}")


def relay_auth_setup():
    global K, KEYS
    for tool in ("certtool", "psktool", "gnutls-serv", "gnutls-cli", "valgrind"):
        check(shutil.which(tool), f"{tool} is missing (scripts/install-deps)")
    K = tempfile.mkdtemp(prefix="mtdkeys.")
    KEYS = Keys(K)
    NETNS.add(NS)
    make_credentials()


def cleanup():
    NETNS.delete()
    if K:
        shutil.rmtree(K, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv, setup=relay_auth_setup, cleanup=cleanup, root="relay-auth"))
