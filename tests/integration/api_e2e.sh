#!/bin/sh
# End to end: a throwaway PostgreSQL, `fbcd serve`, the real catalog pushed
# as tar.gz, and its content read back through the REST API.
#   api_e2e.sh FBCD REAL_CATALOG
# Needs curl and python3; skips (77) without PostgreSQL or the catalog.
FBCD=$1 REAL=$2
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$HERE/../lib

command -v curl >/dev/null || skip "curl is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
[ -d "$REAL" ] || skip "real catalog not found at $REAL"

# not under $T: PostgreSQL runs as another user when the tests run as root
PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-pg.XXXXXX")
SERVE_PID=
cleanup() {
	[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null
	if [ -f "$PGDIR/url" ]; then sh "$LIB/pg-stop.sh" "$PGDIR"; else rm -rf "$PGDIR"; fi
	rm -rf "$T"
}
trap cleanup EXIT
URL=$(sh "$LIB/pg-start.sh" "$PGDIR") || { [ $? -eq 77 ] && skip "no PostgreSQL"; echo "FAIL: pg-start"; exit 1; }

# configuration errors name the file and line (and the server does not start)
printf 'listen: 127.0.0.1:1\nreadAuth: sometimes\n' >"$T/bad.yaml"
run serve --config "$T/bad.yaml" --database-url "$URL" --data-dir "$T/data"
expect_rc 2 "serve with a bad config file"
expect_grep "bad.yaml:2: readAuth" "$T/err" "config error names file:line"
FBCD_READ_AUTH=never "$FBCD" serve --database-url "$URL" >"$T/out" 2>"$T/err"; RC=$?
expect_rc 2 "serve with a bad FBCD_READ_AUTH"
expect_grep "FBCD_READ_AUTH" "$T/err" "env error names the variable"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ADMIN=it-admin-token-0123456789abcdef
B=http://127.0.0.1:$PORT
FBCD_ADMIN_TOKEN=$ADMIN "$FBCD" serve --listen "127.0.0.1:$PORT" --database-url "$URL" \
	--data-dir "$T/data" >"$T/serve.log" 2>&1 &
SERVE_PID=$!
i=0
until curl -sf "$B/healthz" >/dev/null 2>&1; do
	i=$((i + 1))
	if [ $i -gt 100 ] || ! kill -0 "$SERVE_PID" 2>/dev/null; then
		echo "FAIL: fbcd serve did not start"; cat "$T/serve.log"; exit 1
	fi
	sleep 0.1
done

# req METHOD PATH [curl args...]: body in $T/body, headers in $T/hdr, status in $CODE
req() {
	m=$1 p=$2
	shift 2
	CODE=$(curl -s -o "$T/body" -D "$T/hdr" -w '%{http_code}' -X "$m" "$@" "$B$p")
}
expect_code() {
	if [ "$CODE" = "$1" ]; then pass; else fail "$2: HTTP $CODE, expected $1"; head -c 600 "$T/body" | sed 's/^/    /'; echo; fi
}
# jcheck PYTHON-EXPR WHAT: evaluate with j = the JSON body
jcheck() {
	if python3 -c "import json,sys; j=json.load(open('$T/body')); sys.exit(0 if ($1) else 1)" 2>/dev/null; then
		pass
	else
		fail "$2: ($1) is false"; head -c 600 "$T/body" | sed 's/^/    /'; echo
	fi
}
AUTH="Authorization: Bearer $ADMIN"

# ---- service endpoints
req GET /readyz; expect_code 200 "readyz"
req GET /openapi.json; expect_code 200 "openapi.json"
jcheck "j['openapi'].startswith('3.1')" "OpenAPI version"
"$FBCD" serve --print-routes >"$T/routes"
python3 - "$T/body" "$T/routes" <<'PY' && pass || fail "routes and OpenAPI paths differ"
import json, sys
doc = json.load(open(sys.argv[1]))
documented = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops if m != "parameters"}
served = {tuple(l.split()[:2]) for l in open(sys.argv[2]) if l.strip()}
for x in sorted(documented - served): print("    documented, not served:", *x)
for x in sorted(served - documented): print("    served, not documented:", *x)
sys.exit(0 if documented == served else 1)
PY

# ---- authentication
req POST /v1/catalogs -H 'Content-Type: application/json' -d '{"name":"community"}'
expect_code 401 "create without a token"
grep -qi '^content-type: application/problem+json' "$T/hdr" && pass || fail "401 is not problem+json"
jcheck "j['code']=='unauthorized' and j['status']==401" "401 problem body"
"$FBCD" token create --scope read --database-url "$URL" >"$T/readtok" 2>"$T/err" && pass || fail "token create"
READ=$(cat "$T/readtok")
req POST /v1/catalogs -H "Authorization: Bearer $READ" -d '{"name":"community"}'
expect_code 403 "create with a read token"
jcheck "j['code']=='forbidden'" "403 problem code"
req POST /v1/catalogs -H "Authorization: Bearer wrong-token-0123456789" -d '{"name":"community"}'
expect_code 401 "create with an unknown token"
"$FBCD" token create --scope write --database-url "$URL" >"$T/wtok" 2>"$T/werr" && pass || fail "token create write"
WID=$(sed -n 's/.*created token id \([0-9]*\).*/\1/p' "$T/werr")
req POST /v1/catalogs -H "Authorization: Bearer $(cat "$T/wtok")" -d '{"name":"revoked-test"}'
expect_code 201 "create with a write token"
"$FBCD" token revoke "$WID" --database-url "$URL" 2>"$T/err" && pass || fail "token revoke $WID"
req POST /v1/catalogs -H "Authorization: Bearer $(cat "$T/wtok")" -d '{"name":"revoked-test2"}'
expect_code 401 "create with a revoked token"
req POST /v1/catalogs -H "$AUTH" -d '{"name":"community","priority":5,"displayName":"Community"}'
expect_code 201 "create catalog"
jcheck "j['name']=='community' and j['priority']==5 and j['currentRevision'] is None" "created catalog"
req POST /v1/catalogs -H "$AUTH" -d '{"name":"community"}'; expect_code 409 "duplicate catalog"
req POST /v1/catalogs -H "$AUTH" -d '{"name":"x","bogus":1}'; expect_code 400 "unknown field"
req POST /v1/catalogs -H "$AUTH" -d '{"name":'; expect_code 400 "malformed JSON"
req GET /v1/catalogs/community/packages; expect_code 404 "packages before any content"

# ---- push the real catalog
tar -C "$REAL" -czf "$T/cat.tgz" .
req PUT /v1/catalogs/community/content -H "$AUTH" --data-binary "@$T/cat.tgz"
expect_code 415 "push without a content type"
req PUT /v1/catalogs/community/content -H "Authorization: Bearer $READ" \
	-H 'Content-Type: application/gzip' --data-binary "@$T/cat.tgz"
expect_code 403 "push with a read token"
req PUT /v1/catalogs/community/content -H "$AUTH" -H 'Content-Type: application/gzip' \
	--data-binary "@$T/cat.tgz"
expect_code 201 "push the real catalog"
jcheck "j['revision']==1 and j['current'] and j['counts']['packages']==37" "revision 1 with 37 packages"
DIGEST=$(python3 -c "import json; print(json.load(open('$T/body'))['digest'])")

# ---- content against the files (via fbcd render of the same tree)
"$FBCD" render "$REAL" >"$T/render.jsonl" || fail "fbcd render"
req GET /catalogs/community/api/v1/all; expect_code 200 "api/v1/all"
cmp -s "$T/body" "$T/render.jsonl" && pass || fail "api/v1/all differs from fbcd render"
grep -qi '^content-type: application/jsonl' "$T/hdr" && pass || fail "api/v1/all content type"
grep -qi "^etag: \"$DIGEST\"" "$T/hdr" && pass || fail "api/v1/all ETag is the digest"

python3 - "$B" "$T/render.jsonl" <<'PY' && pass || fail "packages, channels, entries, edges and every bundle match the files"
import json, sys, urllib.request
base, path = sys.argv[1], sys.argv[2]
def get(p):
    with urllib.request.urlopen(base + p) as r:
        return json.load(r)
def all_items(p):
    out, cur = [], None
    while True:
        sep = "&" if "?" in p else "?"
        page = get(p + sep + "limit=10" + ("&cursor=" + cur if cur else ""))
        out += page["items"]
        cur = page["next"]
        if not cur:
            return out
blobs = [json.loads(l) for l in open(path)]
pkgs = {b["name"]: b for b in blobs if b["schema"] == "olm.package"}
chans = {}
bundles = {}
for b in blobs:
    if b["schema"] == "olm.channel":
        chans.setdefault(b["package"], {})[b["name"]] = b
    if b["schema"] == "olm.bundle":
        bundles.setdefault(b["package"], set()).add(b["name"])
bad = []
listed = all_items("/v1/catalogs/community/packages")
if [p["name"] for p in listed] != sorted(pkgs):
    bad.append("package list")
if len(pkgs) != 37:
    bad.append("expected 37 packages in the files")
for name, p in pkgs.items():
    d = get("/v1/catalogs/community/packages/" + name)
    if d["defaultChannel"] != p.get("defaultChannel"):
        bad.append(name + ": defaultChannel")
    got = {c["name"] for c in get(f"/v1/catalogs/community/packages/{name}/channels")["items"]}
    if got != set(chans.get(name, {})):
        bad.append(name + ": channels")
    for cn, c in chans.get(name, {}).items():
        cd = get(f"/v1/catalogs/community/packages/{name}/channels/{cn}")
        want = [(e["name"], e.get("replaces"), sorted(e.get("skips", []))) for e in c["entries"]]
        have = [(e["name"], e["replaces"], sorted(e["skips"])) for e in cd["entries"]]
        if sorted(want, key=str) != sorted(have, key=str):
            bad.append(f"{name}/{cn}: entries")
        g = get(f"/v1/catalogs/community/packages/{name}/channels/{cn}/graph")
        names = {e["name"] for e in c["entries"]}
        want_edges = {(e["replaces"], e["name"], "replaces") for e in c["entries"]
                      if e.get("replaces") in names}
        want_edges |= {(s, e["name"], "skips") for e in c["entries"] for s in e.get("skips", [])
                       if s in names}
        have_edges = {(e["from"], e["to"], e["kind"]) for e in g["edges"] if e["kind"] != "skipRange"}
        if not want_edges <= have_edges:
            bad.append(f"{name}/{cn}: edges {sorted(want_edges - have_edges)[:3]}")
    got = {b["name"] for b in all_items(f"/v1/catalogs/community/packages/{name}/bundles")}
    if got != bundles.get(name, set()):
        bad.append(name + ": bundles")
for b in blobs:
    if b["schema"] != "olm.bundle":
        continue
    d = get(f"/v1/catalogs/community/packages/{b['package']}/bundles/{b['name']}")
    if d["image"] != b.get("image") or len(d["properties"]) != len(b.get("properties", [])):
        bad.append("bundle " + b["name"])
    if [r["image"] for r in d["relatedImages"]] != [r["image"] for r in b.get("relatedImages", [])]:
        bad.append("related images of " + b["name"])
    want_ch = sorted(cn for cn, c in chans.get(b["package"], {}).items()
                     if any(e["name"] == b["name"] for e in c["entries"]))
    if sorted(d["channels"]) != want_ch:
        bad.append("channels of " + b["name"])
for x in bad[:20]:
    print("    mismatch:", x)
sys.exit(1 if bad else 0)
PY

# ---- conditional requests, gzip, revisions
req GET /v1/catalogs/community/packages/hive-operator -H "If-None-Match: \"$DIGEST\""
expect_code 304 "If-None-Match on a package"
req GET /v1/catalogs/community/packages/hive-operator -H 'If-None-Match: "sha256:other"'
expect_code 200 "If-None-Match with another digest"
req GET /catalogs/community/api/v1/all -H 'Accept-Encoding: gzip'
grep -qi '^content-encoding: gzip' "$T/hdr" && pass || fail "gzip when accepted"
gzip -dc "$T/body" | cmp -s - "$T/render.jsonl" && pass || fail "gzip body decodes to the render"
req GET /catalogs/community/api/v1/all -H 'Range: bytes=100-199'; expect_code 206 "byte range of api/v1/all"
head -c 200 "$T/render.jsonl" | tail -c 100 | cmp -s - "$T/body" && pass || fail "range body"
req GET "/v1/catalogs/community/packages?revision=1"; expect_code 200 "?revision=1"
req GET "/v1/catalogs/community/packages?revision=9"; expect_code 404 "?revision=9"
req GET "/v1/catalogs/community/packages?revision=x"; expect_code 400 "?revision=x"
req GET "/v1/catalogs/community/packages?limit=0"; expect_code 400 "?limit=0"
req GET "/catalogs/community/api/v1/metas?schema=olm.package"; expect_code 200 "metas"
[ "$(wc -l <"$T/body")" -eq 37 ] && pass || fail "metas?schema=olm.package has 37 lines"
req GET "/catalogs/community/api/v1/metas?foo=1"; expect_code 400 "metas with an unknown parameter"
req GET /v1/catalogs/community/registry/packages; expect_code 200 "registry ListPackages"
jcheck "len(j['items'])==37" "ListPackages has 37 names"

# ---- real responses against the OpenAPI schemas
C=/v1/catalogs/community
P=$C/packages/hive-operator
CH=$P/channels/alpha
HEAD=$(curl -s "$B$CH" | python3 -c 'import json,sys; print(json.load(sys.stdin)["head"])')
FIRST=$(curl -s "$B$CH" | python3 -c 'import json,sys; print(json.load(sys.stdin)["entries"][0]["name"])')
GVK="group=hive.openshift.io&version=v1&kind=ClusterDeployment"
curl -s "$B/openapi.json" >"$T/doc.json"
python3 "$HERE/openapi_validate.py" "$B" "$T/doc.json" /healthz /readyz /v1/catalogs \
	$C $C/revisions $C/revisions/1 $C/revisions/7 "$C/packages?limit=5" \
	"$C/packages?provides=hive.openshift.io/v1/ClusterDeployment" "$C/packages?deprecated=false" \
	"$C/packages?limit=abc" $P $P/icon $C/packages/nope $P/channels $CH \
	"$CH/graph" "$CH/graph?format=dot" "$CH/graph?format=mermaid" "$CH/graph?format=svg" \
	"$CH/successors?from=$FIRST" "$CH/successors?from=$FIRST&semantics=classic" \
	"$CH/upgrade-path?from=$FIRST" "$CH/upgrade-path?from=$FIRST&to=$HEAD&semantics=classic" \
	"$P/bundles?limit=3" "$P/bundles/$HEAD" $C/registry/packages $C/registry/packages/hive-operator \
	"$C/registry/bundle?pkgName=hive-operator&channelName=alpha&csvName=$HEAD" \
	"$C/registry/bundle-for-channel?pkgName=hive-operator&channelName=alpha" \
	"$C/registry/entries-that-replace?csvName=$FIRST" \
	"$C/registry/bundle-that-replaces?csvName=$FIRST&pkgName=hive-operator&channelName=alpha" \
	"$C/registry/entries-that-provide?$GVK" "$C/registry/latest-entries-that-provide?$GVK" \
	"$C/registry/default-bundle-that-provides?$GVK" "$C/registry/bundle?pkgName=x" \
	"/catalogs/community/api/v1/metas?schema=olm.channel&package=hive-operator" \
	>"$T/schema.out" 2>&1 && pass || { fail "responses do not match the OpenAPI schemas"; sed -n 1,30p "$T/schema.out" | sed 's/^/    /'; }

# ---- the same content again (and as JSON lines): no new revision
req PUT /v1/catalogs/community/content -H "$AUTH" -H 'Content-Type: application/jsonl' \
	--data-binary "@$T/render.jsonl"
expect_code 200 "re-push of identical content as JSON lines"
jcheck "j['revision']==1 and j['digest']=='$DIGEST'" "same revision and digest"

# ---- an invalid push stores nothing and leaves the current revision
mkdir "$T/bad"
cp -R "$REAL"/. "$T/bad/"
chmod -R u+w "$T/bad"
python3 - "$T/bad/hive-operator/catalog.yaml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("defaultChannel: alpha", "defaultChannel: no-such-channel", 1)
open(p, "w").write(s)
PY
tar -C "$T/bad" -czf "$T/bad.tgz" .
"$FBCD" validate --output json "$T/bad" >"$T/validate.json" 2>/dev/null
req PUT /v1/catalogs/community/content -H "$AUTH" -H 'Content-Type: application/gzip' \
	--data-binary "@$T/bad.tgz"
expect_code 422 "invalid push"
jcheck "j['code']=='invalid_catalog' and j['valid'] is False and len(j['errors'])>0" "422 problem with findings"
python3 - "$T/body" "$T/validate.json" <<'PY' && pass || fail "422 errors differ from fbcd validate --output json"
import json, sys
a = json.load(open(sys.argv[1]))["errors"]
b = json.load(open(sys.argv[2]))["errors"]
sys.exit(0 if a == b else 1)
PY
req GET /v1/catalogs/community; jcheck "j['currentRevision']==1 and j['digest']=='$DIGEST'" "current revision untouched"
req GET /v1/catalogs/community/revisions; jcheck "len(j['items'])==1" "no revision stored"
req POST /v1/validate -H 'Content-Type: application/gzip' --data-binary "@$T/bad.tgz"
expect_code 200 "POST /v1/validate"
jcheck "j['valid'] is False" "validate reports invalid"

# ---- concurrent pushes of two contents to one catalog: a consistent history
req POST /v1/catalogs -H "$AUTH" -d '{"name":"conc"}'; expect_code 201 "create catalog conc"
python3 - "$T/render.jsonl" "$T/variant.jsonl" <<'PY'
import json, sys
out = open(sys.argv[2], "w")
done = False
for l in open(sys.argv[1]):
    o = json.loads(l)
    if not done and o["schema"] == "olm.package":
        o["description"] = "changed for the concurrency test"
        done = True
    out.write(json.dumps(o, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n")
PY
PIDS=
for f in render variant; do
	curl -s -o "$T/conc.$f" -w '%{http_code}' -X PUT -H "$AUTH" -H 'Content-Type: application/jsonl' \
		--data-binary "@$T/$f.jsonl" "$B/v1/catalogs/conc/content" >"$T/conc.$f.code" &
	PIDS="$PIDS $!"
done
for p in $PIDS; do wait "$p"; done
[ "$(cat "$T/conc.render.code")" = 201 ] && [ "$(cat "$T/conc.variant.code")" = 201 ] && pass ||
	fail "concurrent pushes: HTTP $(cat "$T/conc.render.code") and $(cat "$T/conc.variant.code")"
req GET /v1/catalogs/conc/revisions
python3 - "$T/body" "$T/conc.render" "$T/conc.variant" <<'PY' && pass || fail "revision history after concurrent pushes"
import json, sys
revs = json.load(open(sys.argv[1]))["items"]
pushed = {json.load(open(p))["digest"] for p in sys.argv[2:]}
nums = sorted(r["revision"] for r in revs)
current = [r for r in revs if r["current"]]
ok = nums == [1, 2] and {r["digest"] for r in revs} == pushed and len(current) == 1 \
     and current[0]["revision"] == 2
if not ok: print("    ", json.dumps(revs)[:800])
sys.exit(0 if ok else 1)
PY
CUR=$(python3 -c "import json; print([r['digest'] for r in json.load(open('$T/body'))['items'] if r['current']][0])")
req GET /catalogs/conc/api/v1/all
grep -qi "^etag: \"$CUR\"" "$T/hdr" && pass || fail "api/v1/all of conc serves the current revision"
if [ "$CUR" = "$DIGEST" ]; then cmp -s "$T/body" "$T/render.jsonl"; else cmp -s "$T/body" "$T/variant.jsonl"; fi &&
	pass || fail "api/v1/all of conc is the current revision's content"

# ---- PostgreSQL restarts under the running service
sh "$LIB/pg-restart.sh" "$PGDIR" && pass || fail "pg restart"
# catalog and revision reads are never served from the response cache
req GET /v1/catalogs/community; expect_code 200 "catalog read after a PostgreSQL restart"
req GET /v1/catalogs/community/revisions; expect_code 200 "revisions after a PostgreSQL restart"
sleep 1.2 # past the revision-resolution TTL, so the next read resolves in the database
req GET "/v1/catalogs/community/packages?prefix=co"; expect_code 200 "package query after a PostgreSQL restart"

# ---- delete needs admin; graceful stop
req DELETE /v1/catalogs/community -H "Authorization: Bearer $READ"; expect_code 403 "delete with a read token"
req DELETE /v1/catalogs/community -H "$AUTH"; expect_code 204 "delete"
req GET /v1/catalogs/community; expect_code 404 "deleted catalog"
kill -TERM "$SERVE_PID"
RC=0
wait "$SERVE_PID" || RC=$?
SERVE_PID=
[ "$RC" -eq 0 ] && pass || fail "fbcd serve exit status $RC after SIGTERM"
grep -q "stopped" "$T/serve.log" && pass || fail "no clean stop in the log"

# ---- reads behind a token (readAuth: token from a config file)
printf 'readAuth: token\nlisten: 127.0.0.1:%s\n' "$PORT" >"$T/serve.yaml"
"$FBCD" serve --config "$T/serve.yaml" --database-url "$URL" --data-dir "$T/data" \
	>"$T/serve2.log" 2>&1 &
SERVE_PID=$!
i=0
until curl -sf "$B/healthz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 100 ] && break; sleep 0.1
done
req GET /v1/catalogs; expect_code 401 "read without a token when reads need one"
req GET /v1/catalogs -H "Authorization: Bearer $READ"; expect_code 200 "read with a read token"
req GET /healthz; expect_code 200 "healthz stays open"
req GET /openapi.json; expect_code 200 "openapi.json stays open"
kill -TERM "$SERVE_PID"; wait "$SERVE_PID"; SERVE_PID=
finish
