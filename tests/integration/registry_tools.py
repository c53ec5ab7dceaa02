#!/usr/bin/env python3
"""Helpers of image_registry.sh, standard library and the openssl CLI only.

  free-port                         print a free loopback TCP port
  token-server PORT KEY CERT USER:PASS LOG
                                    a Docker token server (bearer challenge flow):
                                    Basic credentials in, RS256 JWT with x5c out,
                                    every request's scopes appended to LOG
  proxy PORT UPSTREAM_PORT LOG      forwards to the registry; GET /__fault?n=N&mode=500|drop|lost
                                    makes the Nth request from now fail (n=0: never)
  fake PORT MODE                    a broken registry: html | mismatch | huge
  complete REGISTRY REPO TAG        exit 0 when the tag is absent (404) or names an image whose
                                    every manifest and blob the registry holds; 1 otherwise
"""
import base64
import hashlib
import http.client
import http.server
import json
import os
import socket
import socketserver
import subprocess
import sys
import threading
import time
import urllib.parse


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def token_server(port, key, cert, userpass, log):
    der = subprocess.run(["openssl", "x509", "-in", cert, "-outform", "DER"],
                         check=True, capture_output=True).stdout
    user, password = userpass.split(":", 1)

    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            u = urllib.parse.urlparse(self.path)
            q = urllib.parse.parse_qs(u.query)
            auth = self.headers.get("Authorization", "")
            ok = auth == "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
            with open(log, "a") as f:
                f.write(json.dumps({"scopes": q.get("scope", []), "service": q.get("service", []),
                                    "authenticated": ok}) + "\n")
            if auth and not ok:
                self.send_response(401)
                self.end_headers()
                return
            access = []
            for s in q.get("scope", []):
                parts = s.split(":")
                if len(parts) != 3 or parts[0] != "repository":
                    continue
                actions = parts[2].split(",")
                if not ok:  # anonymous: pull only
                    actions = [a for a in actions if a == "pull"]
                access.append({"type": "repository", "name": parts[1], "actions": actions})
            now = int(time.time())
            header = {"alg": "RS256", "typ": "JWT", "x5c": [base64.b64encode(der).decode()]}
            claims = {"iss": "fbcd-test", "sub": user if ok else "", "aud": q.get("service", [""])[0],
                      "exp": now + 300, "nbf": now - 10, "iat": now, "jti": os.urandom(8).hex(),
                      "access": access}
            signing = (b64url(json.dumps(header).encode()) + "." +
                       b64url(json.dumps(claims).encode())).encode()
            sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key], input=signing,
                                 check=True, capture_output=True).stdout
            tok = signing.decode() + "." + b64url(sig)
            body = json.dumps({"token": tok, "expires_in": 300}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    Server(("127.0.0.1", port), H).serve_forever()


def proxy(port, upstream, log):
    state = {"n": 0, "mode": "500", "count": 0}
    lock = threading.Lock()

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def handle_any(self):
            if self.path.startswith("/__fault"):
                q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
                with lock:
                    state["n"] = int(q.get("n", ["0"])[0])
                    state["mode"] = q.get("mode", ["500"])[0]
                    state["count"] = 0
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with lock:
                state["count"] += 1
                fail = state["n"] and state["count"] == state["n"]
                mode = state["mode"]
            with open(log, "a") as f:
                f.write(f"{self.command} {self.path}{' FAULT ' + mode if fail else ''}\n")
            if fail and mode == "drop":
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if fail and mode == "lost":
                # the registry gets the request; its answer is lost with the
                # connection (a chunk stored, the client cannot know it)
                c = http.client.HTTPConnection("127.0.0.1", upstream, timeout=60)
                hdrs = {k: v for k, v in self.headers.items() if k.lower() not in ("connection",)}
                c.request(self.command, self.path, body=body, headers=hdrs)
                c.getresponse().read()
                c.close()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if fail:
                b = b'{"errors":[{"code":"UNKNOWN","message":"injected failure"}]}'
                self.send_response(500)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(b)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(b)
                return
            c = http.client.HTTPConnection("127.0.0.1", upstream, timeout=60)
            hdrs = {k: v for k, v in self.headers.items() if k.lower() not in ("connection",)}
            c.request(self.command, self.path, body=body, headers=hdrs)
            r = c.getresponse()
            data = r.read()
            self.send_response(r.status)
            for k, v in r.getheaders():
                if k.lower() in ("connection", "transfer-encoding", "content-length"):
                    continue
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            c.close()

        do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

    Server(("127.0.0.1", port), H).serve_forever()


def fake(port, mode):
    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def reply(self, status, ctype, body, extra=None):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            if mode != "html" and self.path == "/v2/":
                self.reply(200, "application/json", b"{}")
            elif mode == "html":
                self.reply(200, "text/html", b"<html><body>Welcome to our portal</body></html>")
            elif mode == "mismatch" and "/manifests/" in self.path:
                m = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                                "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                           "digest": "sha256:" + "0" * 64, "size": 2},
                                "layers": []}).encode()
                self.reply(200, "application/vnd.oci.image.manifest.v1+json", m,
                           {"Docker-Content-Digest": "sha256:" + "1" * 64})
            elif mode == "huge" and "/manifests/" in self.path:
                pad = b" " * (5 << 20)
                self.reply(200, "application/vnd.oci.image.manifest.v1+json",
                           b'{"schemaVersion":2' + pad + b"}")
            else:
                self.reply(404, "application/json", b'{"errors":[{"code":"NOT_FOUND","message":"no"}]}')

        do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = handle_any

    Server(("127.0.0.1", port), H).serve_forever()


def complete(registry, repo, tag):
    accept = ", ".join(["application/vnd.oci.image.index.v1+json",
                        "application/vnd.oci.image.manifest.v1+json"])

    def get(path, method="GET"):
        c = http.client.HTTPConnection(registry, timeout=30)
        c.request(method, path, headers={"Accept": accept})
        r = c.getresponse()
        return r.status, r.read()

    st, body = get(f"/v2/{repo}/manifests/{tag}")
    if st == 404:
        return 0
    if st != 200:
        print(f"GET tag: {st}")
        return 1
    top = json.loads(body)
    mans = [body]
    for d in top.get("manifests", []):
        st, b = get(f"/v2/{repo}/manifests/{d['digest']}")
        if st != 200 or "sha256:" + hashlib.sha256(b).hexdigest() != d["digest"]:
            print(f"manifest {d['digest']}: {st}")
            return 1
        mans.append(b)
    for b in mans:
        m = json.loads(b)
        for d in ([m["config"]] if "config" in m else []) + m.get("layers", []):
            st, _ = get(f"/v2/{repo}/blobs/{d['digest']}", "HEAD")
            if st != 200:
                print(f"blob {d['digest']}: {st}")
                return 1
    return 0


def main():
    cmd = sys.argv[1]
    if cmd == "free-port":
        print(free_port())
    elif cmd == "token-server":
        token_server(int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6])
    elif cmd == "proxy":
        proxy(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif cmd == "fake":
        fake(int(sys.argv[2]), sys.argv[3])
    elif cmd == "complete":
        sys.exit(complete(sys.argv[2], sys.argv[3], sys.argv[4]))
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
