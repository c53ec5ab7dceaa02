#!/usr/bin/env python3
"""kube_check.py KUSTOMIZE_DIR...: offline checks of the Kubernetes manifests.

1. `kubectl kustomize` renders each directory.
2. `kubectl apply --dry-run=client --validate=false` runs over the result
   against a stand-in API server on loopback that answers discovery for the
   kinds fbcd uses and 404 for every object (no cluster here): kubectl's own
   client code decodes and maps every object.
3. A structural check of every object: required fields and types per kind,
   selectors that select their pods, probes and Services naming declared
   ports, the restricted pod security settings, and references (ConfigMap,
   Secret, ServiceAccount) that exist in the same rendering.
Exit 1 with one line per problem."""
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading

import yaml  # python3-yaml

RESOURCES = {
    ("", "v1"): [("namespaces", "Namespace", False), ("serviceaccounts", "ServiceAccount", True),
                 ("secrets", "Secret", True), ("configmaps", "ConfigMap", True),
                 ("services", "Service", True)],
    ("apps", "v1"): [("deployments", "Deployment", True), ("statefulsets", "StatefulSet", True)],
    ("policy", "v1"): [("poddisruptionbudgets", "PodDisruptionBudget", True)],
    ("networking.k8s.io", "v1"): [("networkpolicies", "NetworkPolicy", True)],
    ("monitoring.coreos.com", "v1"): [("servicemonitors", "ServiceMonitor", True)],
}
VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]


class Fake(http.server.BaseHTTPRequestHandler):
    log = []

    def log_message(self, *a):
        pass

    def send(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        Fake.log.append(self.path)
        p = self.path.split("?")[0].rstrip("/")
        if p == "/api":
            return self.send(200, {"kind": "APIVersions", "versions": ["v1"],
                                   "serverAddressByClientCIDRs": [
                                       {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]})
        if p == "/apis":
            groups = []
            for (g, v) in RESOURCES:
                if g:
                    gv = {"groupVersion": f"{g}/{v}", "version": v}
                    groups.append({"name": g, "versions": [gv], "preferredVersion": gv})
            return self.send(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
        for (g, v), res in RESOURCES.items():
            base = f"/api/{v}" if not g else f"/apis/{g}/{v}"
            if p == base:
                return self.send(200, {
                    "kind": "APIResourceList", "apiVersion": "v1",
                    "groupVersion": f"{g}/{v}" if g else v,
                    "resources": [{"name": n, "singularName": k.lower(), "namespaced": ns,
                                   "kind": k, "verbs": VERBS} for n, k, ns in res]})
        self.send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                        "reason": "NotFound", "code": 404, "message": "not found"})


problems = []


def bad(doc, msg):
    md = doc.get("metadata", {}) if isinstance(doc, dict) else {}
    problems.append(f"{doc.get('kind', '?')}/{md.get('name', '?')}: {msg}")


def need(doc, path, typ):
    cur = doc
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            bad(doc, f"missing {path}")
            return None
        cur = cur[part]
    if not isinstance(cur, typ):
        bad(doc, f"{path} must be a {typ.__name__}")
        return None
    return cur


def selects(selector, labels):
    return all(labels.get(k) == v for k, v in (selector or {}).items())


def check_pod(doc, spec, names):
    pod = need(doc, "spec.template.spec", dict)
    if pod is None:
        return
    sc = pod.get("securityContext", {})
    if sc.get("runAsNonRoot") is not True:
        bad(doc, "pod securityContext.runAsNonRoot must be true")
    if sc.get("seccompProfile", {}).get("type") != "RuntimeDefault":
        bad(doc, "pod seccompProfile must be RuntimeDefault (restricted)")
    sa = pod.get("serviceAccountName")
    if sa and ("ServiceAccount", sa) not in names:
        bad(doc, f"serviceAccountName {sa} is not defined")
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    for v in vols.values():
        if "configMap" in v and ("ConfigMap", v["configMap"]["name"]) not in names:
            bad(doc, f"volume {v['name']} names an undefined ConfigMap")
        if "secret" in v and ("Secret", v["secret"]["secretName"]) not in names:
            bad(doc, f"volume {v['name']} names an undefined Secret")
    containers = need(doc, "spec.template.spec.containers", list) or []
    for c in containers:
        for f in ("name", "image"):
            if not isinstance(c.get(f), str) or not c.get(f):
                bad(doc, f"a container lacks {f}")
        csc = c.get("securityContext", {})
        if csc.get("allowPrivilegeEscalation") is not False:
            bad(doc, f"container {c.get('name')}: allowPrivilegeEscalation must be false")
        if "ALL" not in csc.get("capabilities", {}).get("drop", []):
            bad(doc, f"container {c.get('name')}: capabilities must drop ALL")
        if "memory" not in c.get("resources", {}).get("limits", {}):
            bad(doc, f"container {c.get('name')}: needs a memory limit")
        ports = {p.get("name") for p in c.get("ports", [])} | {p.get("containerPort") for p in c.get("ports", [])}
        for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
            hg = c.get(probe, {}).get("httpGet")
            if hg and hg.get("port") not in ports:
                bad(doc, f"container {c.get('name')}: {probe} port {hg.get('port')} is not declared")
        for m in c.get("volumeMounts", []):
            if m.get("name") not in vols and not any(
                    t.get("metadata", {}).get("name") == m.get("name")
                    for t in doc.get("spec", {}).get("volumeClaimTemplates", [])):
                bad(doc, f"container {c.get('name')}: mount {m.get('name')} has no volume")
        for e in c.get("env", []):
            ref = e.get("valueFrom", {}).get("secretKeyRef")
            if ref and ("Secret", ref["name"]) not in names:
                bad(doc, f"env {e.get('name')} names an undefined Secret")


def check(docs):
    names = {(d.get("kind"), d.get("metadata", {}).get("name")) for d in docs}
    pods = []  # (doc, labels)
    for d in docs:
        for f in ("apiVersion", "kind"):
            if not isinstance(d.get(f), str):
                bad(d, f"missing {f}")
        need(d, "metadata.name", str)
        if d.get("kind") in ("Deployment", "StatefulSet"):
            sel = need(d, "spec.selector.matchLabels", dict)
            labels = d.get("spec", {}).get("template", {}).get("metadata", {}).get("labels", {})
            if sel is not None and not selects(sel, labels):
                bad(d, "spec.selector does not select the pod template's labels")
            need(d, "spec.replicas", int)
            check_pod(d, d["spec"], names)
            pods.append((d, labels))
    for d in docs:
        k = d.get("kind")
        if k == "Service":
            sel = need(d, "spec.selector", dict)
            hits = [(p, l) for p, l in pods if sel and selects(sel, l)]
            if not hits:
                bad(d, "selects no pod template")
            for port in d.get("spec", {}).get("ports", []):
                tp = port.get("targetPort")
                for p, _ in hits:
                    cports = [cp for c in p["spec"]["template"]["spec"]["containers"]
                              for cp in c.get("ports", [])]
                    if tp not in {cp.get("name") for cp in cports} | {cp.get("containerPort") for cp in cports}:
                        bad(d, f"targetPort {tp} is not a port of {p['metadata']['name']}")
        elif k in ("PodDisruptionBudget", "NetworkPolicy"):
            key = "spec.selector.matchLabels" if k == "PodDisruptionBudget" else "spec.podSelector.matchLabels"
            sel = need(d, key, dict)
            if sel is not None and not any(selects(sel, l) for _, l in pods):
                bad(d, "selects no pod template")
        elif k == "ServiceMonitor":
            sel = need(d, "spec.selector.matchLabels", dict)
            svcs = [s for s in docs if s.get("kind") == "Service" and
                    selects(sel, s.get("metadata", {}).get("labels", {}))]
            if not svcs:
                bad(d, "selects no Service")
            for ep in d.get("spec", {}).get("endpoints", []):
                if not any(ep.get("port") in {p.get("name") for p in s["spec"]["ports"]} for s in svcs):
                    bad(d, f"endpoint port {ep.get('port')} is on no selected Service")
        elif k in ("Secret", "ConfigMap"):
            if not isinstance(d.get("data", d.get("stringData", {})), dict):
                bad(d, "data must be a map")


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    env = dict(os.environ, KUBECONFIG=os.devnull, HOME=tempfile.mkdtemp())
    for d in sys.argv[1:]:
        out = subprocess.run(["kubectl", "kustomize", d], capture_output=True, text=True, env=env)
        if out.returncode != 0:
            problems.append(f"{d}: kubectl kustomize: {out.stderr.strip()}")
            continue
        docs = [x for x in yaml.safe_load_all(out.stdout) if x]
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
            f.write(out.stdout)
            f.flush()
            ap = subprocess.run(["kubectl", "apply", "--dry-run=client", "--validate=false",
                                 "-f", f.name, "--server", f"http://127.0.0.1:{srv.server_port}"],
                                capture_output=True, text=True, env=env, timeout=120)
        created = [l for l in ap.stdout.splitlines() if l.endswith("created (dry run)")]
        if ap.returncode != 0 or len(created) != len(docs):
            problems.append(f"{d}: kubectl apply --dry-run=client: {len(created)} of {len(docs)} "
                            f"objects accepted: {ap.stderr.strip()[:2000]}")
        before = len(problems)
        check(docs)
        print(f"{d}: {len(docs)} objects, {len(created)} accepted by kubectl, "
              f"{len(problems) - before} structural problems")
    srv.shutdown()
    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(1)


main()
