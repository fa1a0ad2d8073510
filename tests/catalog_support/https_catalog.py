#!/usr/bin/env python3
"""A local HTTPS catalog server for the end-to-end tests (issue 22 §4).

Serves DIR under /repo/ over HTTPS with a leaf certificate for 127.0.0.1/localhost signed by a
throwaway CA made with the openssl CLI at start (CERTS/ca.pem, never installed system-wide).
The client trusts it only through APPHOST_CATALOG_CA_FILE=CERTS/ca.pem (docs/catalog.md
"Transport"). Prints one JSON line, {"url": ..., "ca": ...}, once it listens.

Misbehaves on request: the file CERTS/mode (read on every request; absent means `ok`) holds
`ok` (serve files), `500` (every request answers HTTP 500), `garbage` (every file is random
bytes of the same length) or `slow` (packages under targets/ trickle in over ~3 s).

    python3 https_catalog.py --dir REPO_OUT --certs CERT_DIR [--port 0]
"""

import argparse
import http.server
import json
import os
import ssl
import subprocess
import sys
import time



def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certs(certs):
    """A CA (CA:TRUE, keyCertSign) and a leaf (serverAuth, SAN 127.0.0.1 and localhost)."""
    os.makedirs(certs, exist_ok=True)
    if os.path.exists(os.path.join(certs, "leaf.pem")):
        return
    with open(os.path.join(certs, "ca.ext"), "w") as f:
        f.write(
            "basicConstraints=critical,CA:TRUE\n"
            "keyUsage=critical,keyCertSign,cRLSign\n"
            "subjectKeyIdentifier=hash\n"
        )
    with open(os.path.join(certs, "leaf.ext"), "w") as f:
        f.write(
            "basicConstraints=critical,CA:FALSE\n"
            "keyUsage=critical,digitalSignature\n"
            "extendedKeyUsage=serverAuth\n"
            "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
            "authorityKeyIdentifier=keyid\n"
        )
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    openssl("req", "-new", *ec, "-keyout", "ca.key", "-out", "ca.csr",
            "-subj", "/CN=AppHost test catalog CA", cwd=certs)
    openssl("x509", "-req", "-in", "ca.csr", "-signkey", "ca.key", "-days", "2",
            "-extfile", "ca.ext", "-out", "ca.pem", cwd=certs)
    openssl("req", "-new", *ec, "-keyout", "leaf.key", "-out", "leaf.csr",
            "-subj", "/CN=127.0.0.1", cwd=certs)
    openssl("x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-extfile", "leaf.ext", "-out", "leaf.pem",
            cwd=certs)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    root = "."
    mode_file = "mode"

    def log_message(self, *args):
        pass

    def reply(self, code, body, kind="application/octet-stream"):
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        try:
            with open(self.mode_file) as f:
                mode = f.read().strip()
        except OSError:
            mode = "ok"
        if mode == "500":
            return self.reply(500, b"internal error")
        if not self.path.startswith("/repo/"):
            return self.reply(404, b"")
        rel = self.path[len("/repo/"):].split("?")[0]
        parts = [p for p in rel.split("/") if p]
        if any(p in (".", "..") for p in parts):
            return self.reply(404, b"")
        path = os.path.join(self.root, *parts)
        if not os.path.isfile(path):
            return self.reply(404, b"")
        with open(path, "rb") as f:
            body = f.read()
        if mode == "garbage":
            body = os.urandom(len(body))
        if mode == "slow" and parts[:1] == ["targets"] and self.command == "GET":
            # A package trickles in over ~3 s (20 pieces): the UI shows download progress.
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            step = max(1, -(-len(body) // 20))
            try:
                for i in range(0, len(body), step):
                    self.wfile.write(body[i:i + step])
                    self.wfile.flush()
                    time.sleep(0.15)
            except (ConnectionError, ssl.SSLError):
                pass  # the client cancelled the download
            self.close_connection = True
            return
        self.reply(200, body)

    do_HEAD = do_GET


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--certs", required=True)
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    make_certs(a.certs)
    Handler.root = os.path.abspath(a.dir)
    Handler.mode_file = os.path.join(os.path.abspath(a.certs), "mode")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(a.certs, "leaf.pem"), os.path.join(a.certs, "leaf.key"))
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    port = server.server_address[1]
    print(json.dumps({
        "url": f"https://127.0.0.1:{port}/repo/",
        "ca": os.path.abspath(os.path.join(a.certs, "ca.pem")),
    }), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
