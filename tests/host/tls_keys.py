"""Keys and certificates for the host tests of memtrackd's authenticated
connections (test_relay_auth.py, test_cluster.py), made with GnuTLS's
certtool and psktool in a directory of the test's: CAs, certificates
signed by one of them (or self-signed), with chosen dates and key
purposes, and psktool's IDENTITY:HEXKEY files, secrets mode 0600 as
memtrackd requires."""
import os
import ssl
import subprocess

# certtool template lines
EXPIRED = ('activation_date = "2020-01-01 00:00:00 UTC"',
           'expiration_date = "2021-01-01 00:00:00 UTC"')
NOT_YET_VALID = ('activation_date = "2090-01-01 00:00:00 UTC"',
                 'expiration_date = "2091-01-01 00:00:00 UTC"')
VALID = ("expiration_days = 365",)
CLIENT, SERVER = "tls_www_client", "tls_www_server"


def _run(*args):
    subprocess.run(args, check=True, capture_output=True, text=True)


class Keys:
    def __init__(self, directory):
        self.dir = directory

    def path(self, name):
        return os.path.join(self.dir, name)

    def _template(self, name, lines):
        path = self.path(name + ".tmpl")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def _privkey(self, name):
        _run("certtool", "--generate-privkey", "--key-type", "ecdsa",
             "--outfile", self.path(name + ".key"))
        os.chmod(self.path(name + ".key"), 0o600)

    def ca(self, name, cn):
        """NAME.pem, NAME.key: a CA."""
        self._privkey(name)
        _run("certtool", "--generate-self-signed", "--load-privkey", self.path(name + ".key"),
             "--template", self._template(name, [f'cn = "{cn}"', "ca", "cert_signing_key",
                                                 "expiration_days = 3650"]),
             "--outfile", self.path(name + ".pem"))

    def cert(self, name, cn, ca="ca", dates=VALID, purposes=(CLIENT, SERVER)):
        """NAME.pem, NAME.key: a certificate for cn signed by ca (None:
        self-signed), organization "memtrack test"."""
        self._privkey(name)
        tmpl = self._template(name, [f'cn = "{cn}"', 'organization = "memtrack test"',
                                     "signing_key", *purposes, *dates])
        if ca is None:
            _run("certtool", "--generate-self-signed", "--load-privkey",
                 self.path(name + ".key"), "--template", tmpl,
                 "--outfile", self.path(name + ".pem"))
        else:
            _run("certtool", "--generate-certificate", "--load-privkey",
                 self.path(name + ".key"), "--load-ca-certificate", self.path(ca + ".pem"),
                 "--load-ca-privkey", self.path(ca + ".key"), "--template", tmpl,
                 "--outfile", self.path(name + ".pem"))

    def psk(self, file, ident):
        """A new random key for ident, added to the PSK file (mode 0600)."""
        _run("psktool", "-u", ident, "-p", self.path(file))
        os.chmod(self.path(file), 0o600)

    def psk_line(self, file, ident):
        """psktool's line for ident in file: (identity, hex key)."""
        with open(self.path(file)) as f:
            for line in f:
                i, h = line.strip().split(":")
                if i == ident:
                    return i, h
        raise KeyError(ident)

    def psk_extract(self, file, ident, out):
        """A PSK file of its own (out) with ident's line of file."""
        with open(self.path(out), "w") as f:
            f.write(":".join(self.psk_line(file, ident)) + "\n")
        os.chmod(self.path(out), 0o600)


def client_hello():
    """A real TLS ClientHello (Python's ssl), as bytes."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    hello = out.read()
    if hello[0] != 0x16 or len(hello) <= 100:
        raise RuntimeError("no ClientHello")
    return hello
