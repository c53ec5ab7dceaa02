#!/bin/sh
# fbcd graph: JSON, dot and mermaid views of a channel's upgrade graph.
#   cli_graph.sh FBCD REAL_CATALOG GEN_CATALOG
FBCD=$1 REAL=$2 GEN=$3
. "$(dirname "$0")/lib.sh"

run graph --help; expect_rc 0 "graph --help"
expect_grep "^usage: fbcd graph" "$T/out" "graph --help text"
run graph "$T/does-not-exist" --package x; expect_rc 2 "graph: missing directory"
run graph "$T"; expect_rc 2 "graph: no --package"
expect_grep "package" "$T/err" "graph: --package is required"
run graph "$T" --package x --format svg; expect_rc 2 "graph: bad --format"

# A hand-written package: stranded, skipped, skipRange and deprecated entries.
G="$T/g"; mkdir -p "$G/demo"
cat >"$G/demo/catalog.yaml" <<'YAML'
---
schema: olm.package
name: demo
defaultChannel: stable
---
schema: olm.channel
package: demo
name: stable
entries:
- name: demo.v1.0.0
- name: demo.v1.1.0
  replaces: demo.v1.0.0
- name: demo.v1.2.0
  replaces: demo.v1.1.0
  skips: [demo.v1.1.0]
- name: demo.v1.3.0
  replaces: demo.v1.2.0
  skipRange: '>=1.0.0 <1.3.0'
---
schema: olm.channel
package: demo
name: beta
entries:
- name: demo.v1.3.0
---
schema: olm.deprecations
package: demo
entries:
- reference: {schema: olm.bundle, name: demo.v1.1.0}
  message: CVE-2024-0001
- reference: {schema: olm.channel, name: beta}
  message: beta is closed
YAML
for v in 1.0.0 1.1.0 1.2.0 1.3.0; do
	cat >>"$G/demo/catalog.yaml" <<YAML
---
schema: olm.bundle
package: demo
name: demo.v$v
image: quay.io/demo/demo-bundle:v$v
properties:
- {type: olm.package, value: {packageName: demo, version: $v}}
YAML
done

run graph "$G" --package nope; expect_rc 2 "graph: unknown package"
expect_grep "nope" "$T/err" "graph: unknown package named"
run graph "$G" --package demo --channel nope; expect_rc 2 "graph: unknown channel"

run graph "$G" --package demo --format json; expect_rc 0 "graph json (default channel)"
python3 - "$T/out" <<'PY' && pass || fail "graph json content"
import json, sys
g = json.load(open(sys.argv[1]))
assert g["package"] == "demo" and g["channel"] == "stable", g
nodes = {n["name"]: n for n in g["nodes"]}
assert set(nodes) == {"demo.v1.0.0", "demo.v1.1.0", "demo.v1.2.0", "demo.v1.3.0"}, nodes
assert nodes["demo.v1.3.0"]["version"] == "1.3.0"
assert [n for n in nodes if nodes[n].get("head")] == ["demo.v1.3.0"], nodes
assert g["head"] == "demo.v1.3.0"
# v1.2.0 replaces v1.1.0 which it also skips: the chain stops there, v1.0.0 is stranded
assert nodes["demo.v1.0.0"].get("stranded") is True, nodes["demo.v1.0.0"]
assert not nodes["demo.v1.3.0"].get("stranded")
assert nodes["demo.v1.1.0"].get("deprecated") is True
assert "CVE-2024-0001" in nodes["demo.v1.1.0"].get("deprecation", "")
assert not nodes["demo.v1.2.0"].get("deprecated")
edges = {(e["from"], e["to"], e["type"]) for e in g["edges"]}
want = {("demo.v1.0.0", "demo.v1.1.0", "replaces"), ("demo.v1.1.0", "demo.v1.2.0", "replaces"),
        ("demo.v1.1.0", "demo.v1.2.0", "skips"), ("demo.v1.2.0", "demo.v1.3.0", "replaces"),
        ("demo.v1.0.0", "demo.v1.3.0", "skipRange"), ("demo.v1.1.0", "demo.v1.3.0", "skipRange"),
        ("demo.v1.2.0", "demo.v1.3.0", "skipRange")}
assert want <= edges, sorted(want - edges)
assert all(t in ("replaces", "skips", "skipRange") for _, _, t in edges)
PY

run graph "$G" --package demo --channel beta; expect_rc 0 "graph beta"
python3 - "$T/out" <<'PY' && pass || fail "graph json: deprecated channel"
import json, sys
g = json.load(open(sys.argv[1]))
assert g["channel"] == "beta" and g.get("deprecated") is True and "closed" in g.get("deprecation", ""), g
assert [n["name"] for n in g["nodes"]] == ["demo.v1.3.0"] and g["edges"] == [], g
PY

run graph "$G" --package demo --format dot; expect_rc 0 "graph dot"
expect_grep '^digraph ' "$T/out" "dot header"
expect_grep '"demo.v1.0.0" -> "demo.v1.1.0" \[.*replaces' "$T/out" "dot replaces edge"
expect_grep '"demo.v1.0.0" -> "demo.v1.3.0" \[.*skipRange' "$T/out" "dot skipRange edge"
expect_grep '"demo.v1.3.0" \[.*head' "$T/out" "dot head node"
expect_grep '"demo.v1.0.0" \[.*stranded' "$T/out" "dot stranded node"
expect_grep '"demo.v1.1.0" \[.*deprecated' "$T/out" "dot deprecated node"
tail -n 1 "$T/out" | grep -q '^}$' && pass || fail "dot: closing brace"

run graph "$G" --package demo --format mermaid; expect_rc 0 "graph mermaid"
expect_grep '^graph ' "$T/out" "mermaid header"
expect_grep 'n0 -->|replaces| n1\|-->|replaces|' "$T/out" "mermaid replaces edge"
expect_grep '|skipRange|' "$T/out" "mermaid skipRange edge"
expect_grep 'head' "$T/out" "mermaid head marked"

# Generated catalog: a deprecated channel and bundle.
"$GEN" --packages 4 --bundles 12 --object-bytes 100 "$T/gen" >/dev/null || fail "gen_catalog"
run graph "$T/gen" --package gen-operator-00003 --channel candidate; expect_rc 0 "graph generated"
python3 - "$T/out" <<'PY' && pass || fail "graph generated: one head, deprecations"
import json, sys
g = json.load(open(sys.argv[1]))
assert g.get("deprecated") is True
assert sum(1 for n in g["nodes"] if n.get("head")) == 1
assert not any(n.get("stranded") for n in g["nodes"])
assert any(n.get("deprecated") for n in g["nodes"] if n["name"] == "gen-operator-00003.v1.0.0")
PY

if [ -d "$REAL" ]; then
	run graph "$REAL" --package cat-facts-operator; expect_rc 0 "graph real, default channel"
	python3 - "$T/out" <<'PY' && pass || fail "graph real cat-facts-operator"
import json, sys
g = json.load(open(sys.argv[1]))
assert g["channel"] == "stable" and g["head"] == "cat-facts-operator.v1.1.2", g
edges = {(e["from"], e["to"], e["type"]) for e in g["edges"]}
assert ("cat-facts-operator.v1.0.0", "cat-facts-operator.v1.1.1", "skips") in edges, edges
assert ("cat-facts-operator.v1.1.1", "cat-facts-operator.v1.1.2", "replaces") in edges, edges
PY
	run graph "$REAL" --package infinispan --channel 2.2.x --format dot; expect_rc 0 "graph real dot"
	expect_grep 'skipRange' "$T/out" "real dot has skipRange edges"
fi

finish
