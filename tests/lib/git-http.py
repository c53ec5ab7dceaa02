#!/usr/bin/env python3
"""Serve git repositories over smart HTTP with `git http-backend` (CGI), on
loopback, for tests: git-http.py ROOT PORTFILE [LOG]. Every request line is
appended to LOG (method, path, status, user) so a test can assert that a
client really fetched over HTTP. With GIT_HTTP_TOKEN set, repositories under
ROOT/private/ need HTTP basic authentication with that token as password
(401 with a Basic challenge otherwise), as forges take an access token.
With GIT_HTTP_TLS=CERT:KEY (PEM files) it serves HTTPS instead."""
import base64
import http.server
import os
import ssl
import subprocess
import sys

ROOT, PORTFILE = sys.argv[1], sys.argv[2]
LOG = sys.argv[3] if len(sys.argv) > 3 else None
BACKEND = "/usr/lib/git-core/git-http-backend"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, fmt, *args):
        pass

    def run(self):
        path, _, query = self.path.partition("?")
        user = "-"
        token = os.environ.get("GIT_HTTP_TOKEN")
        if token and path.startswith("/private/"):
            auth = self.headers.get("Authorization", "")
            ok = False
            if auth.startswith("Basic "):
                try:
                    u, _, pw = base64.b64decode(auth[6:]).decode().partition(":")
                    ok, user = pw == token, u
                except ValueError:
                    pass
            if not ok:
                if LOG:
                    with open(LOG, "a") as f:
                        f.write("%s %s 401 %s\n" % (self.command, self.path, user))
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="git"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        env = {
            "GIT_PROJECT_ROOT": ROOT,
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
        }
        p = subprocess.run([BACKEND], input=body, env=env, capture_output=True)
        head, _, rest = p.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, rest = p.stdout.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.strip().split()[0])
            elif k:
                headers.append((k, v.strip()))
        if LOG:
            with open(LOG, "a") as f:
                f.write("%s %s %d %s\n" % (self.command, self.path, status, user))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)

    do_GET = run
    do_POST = run


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
if os.environ.get("GIT_HTTP_TLS"):
    cert, _, key = os.environ["GIT_HTTP_TLS"].partition(":")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
