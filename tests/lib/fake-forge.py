#!/usr/bin/env python3
"""A stand-in for the GitHub and GitLab REST APIs, on loopback, for tests:
fake-forge.py PORTFILE RECORD [CONTROL]. Every request is appended to RECORD
as one JSON line {"method", "path", "t", "headers", "body"} before it is answered.
CONTROL (a JSON file, re-read on each request, may be absent) scripts
failures: {"fail": [{"method": "POST", "path": REGEX, "status": 429,
"retryAfter": 1, "times": 1, "body": {...}}]} — each rule answers its status
the first `times` matching requests. Otherwise it answers like the forges:
check runs, commit statuses, comments/notes (created with fresh ids, edited
when the id exists, 404 when not), merges (200 with a merge sha).
With FAKE_FORGE_TLS=CERT:KEY (PEM files) it answers over HTTPS."""
import json
import os
import re
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORTFILE, RECORD = sys.argv[1], sys.argv[2]
CONTROL = sys.argv[3] if len(sys.argv) > 3 else None
lock = threading.Lock()
state = {"next": 1000, "comments": set(), "used": {}}


def new_id():
    state["next"] += 1
    return state["next"]


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # answers go out at once (no Nagle wait against the client's delayed
    # ACKs: 40 ms a request would be the stand-in's cost, not fbcd's)
    disable_nagle_algorithm = True

    def log_message(self, *a):
        pass

    def answer(self, status, obj=None, headers=()):
        data = json.dumps(obj if obj is not None else {}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = {"_unparsed": raw.decode("latin-1")}
        path = self.path
        with lock:
            with open(RECORD, "a") as f:
                f.write(json.dumps({"method": self.command, "path": path, "t": time.time(),
                                    "headers": dict(self.headers.items()), "body": body}) + "\n")
            ctl = {}
            if CONTROL and os.path.exists(CONTROL):
                with open(CONTROL) as f:
                    ctl = json.load(f)
            for i, rule in enumerate(ctl.get("fail", [])):
                if rule.get("method", self.command) != self.command or not re.search(rule["path"], path):
                    continue
                key = json.dumps(rule, sort_keys=True)
                used = state["used"].get(key, 0)
                if used < rule.get("times", 1):
                    state["used"][key] = used + 1
                    hdrs = [("Retry-After", str(rule["retryAfter"]))] if "retryAfter" in rule else []
                    return self.answer(rule["status"], rule.get("body", {"message": "scripted failure"}), hdrs)
            m = self.command
            if m == "POST" and re.search(r"/check-runs$", path):
                return self.answer(201, {"id": new_id(), "name": (body or {}).get("name")})
            if m == "PATCH" and re.search(r"/check-runs/\d+$", path):
                return self.answer(200, {"id": int(path.rsplit("/", 1)[1])})
            if m == "POST" and re.search(r"/statuses/[0-9a-f]{40}$", path):
                return self.answer(201, {"id": new_id()})
            if m == "POST" and re.search(r"(/issues/\d+/comments|/merge_requests/\d+/notes)$", path):
                i = new_id()
                state["comments"].add(i)
                return self.answer(201, {"id": i})
            mm = re.search(r"(/issues/comments/|/notes/)(\d+)$", path)
            if m in ("PATCH", "PUT") and mm:
                if int(mm.group(2)) in state["comments"]:
                    return self.answer(200, {"id": int(mm.group(2))})
                return self.answer(404, {"message": "Not Found"})
            if m == "PUT" and re.search(r"/pulls/\d+/merge$", path):
                return self.answer(200, {"sha": "a" * 40, "merged": True, "message": "merged"})
            if m == "PUT" and re.search(r"/merge_requests/\d+/merge$", path):
                return self.answer(200, {"merge_commit_sha": "b" * 40, "state": "merged"})
            return self.answer(404, {"message": "Not Found"})

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = handle_any


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
if os.environ.get("FAKE_FORGE_TLS"):
    cert, _, key = os.environ["FAKE_FORGE_TLS"].partition(":")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
