#!/bin/sh
# POST /v1/resolve end to end: a throwaway PostgreSQL, `fbcd serve`, the real
# catalog pushed as a registered catalog, and resolutions by catalog name
# compared with `fbcd resolve --catalog DIR` on the same files; inline
# catalogs, priorities, problems (path catalogs, unknown catalogs, bad
# bodies, oversized bodies), read tokens and the OpenAPI schemas.
#   api_resolve.sh FBCD REAL_CATALOG
# Needs curl and python3; skips (77) without PostgreSQL or the catalog.
FBCD=$1 REAL=$2
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$HERE/../lib

command -v curl >/dev/null || skip "curl is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
[ -d "$REAL" ] || skip "real catalog not found at $REAL"
REAL=$(cd "$REAL" && pwd)

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

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ADMIN=it-admin-token-0123456789abcdef
B=http://127.0.0.1:$PORT
MAX_BODY=4000000
# start_serve [ARGS...]: fbcd serve on $PORT, waits for /healthz
start_serve() {
	FBCD_ADMIN_TOKEN=$ADMIN "$FBCD" serve --listen "127.0.0.1:$PORT" --database-url "$URL" \
		--data-dir "$T/data" --max-body "$MAX_BODY" "$@" >>"$T/serve.log" 2>&1 &
	SERVE_PID=$!
	i=0
	until curl -sf "$B/healthz" >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$SERVE_PID" 2>/dev/null; then
			echo "FAIL: fbcd serve did not start"; cat "$T/serve.log"; exit 1
		fi
		sleep 0.1
	done
}
stop_serve() {
	kill -TERM "$SERVE_PID"; wait "$SERVE_PID"; SERVE_PID=
}
start_serve

# req METHOD PATH [curl args...]: body in $T/body, headers in $T/hdr, status in $CODE
req() {
	m=$1 p=$2
	shift 2
	CODE=$(curl -s -o "$T/body" -D "$T/hdr" -w '%{http_code}' -X "$m" "$@" "$B$p")
}
# resolve FILE [query]: POST FILE to /v1/resolve
resolve() {
	req POST "/v1/resolve${2:-}" -H 'Content-Type: application/json' --data-binary "@$1"
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
problem() { # problem STATUS CODE WHAT
	expect_code "$1" "$3"
	grep -qi '^content-type: application/problem+json' "$T/hdr" && pass || fail "$3: not problem+json"
	jcheck "j['code']=='$2' and j['status']==$1" "$3: problem code $2"
}
AUTH="Authorization: Bearer $ADMIN"

# ---- the real catalog, registered as "community" (priority 5) and "mirror" (10)
req POST /v1/catalogs -H "$AUTH" -d '{"name":"community","priority":5}'; expect_code 201 "create community"
tar -C "$REAL" -czf "$T/cat.tgz" .
req PUT /v1/catalogs/community/content -H "$AUTH" -H 'Content-Type: application/gzip' \
	--data-binary "@$T/cat.tgz"
expect_code 201 "push the real catalog"
"$FBCD" render "$REAL" >"$T/render.jsonl" || fail "fbcd render"

# ---- every package by registered name == fbcd resolve on the files
# (a symlink named like the registered catalog gives the CLI the same catalog name)
ln -s "$REAL" "$T/community"
python3 - "$T/render.jsonl" >"$T/packages" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o["schema"] == "olm.package":
        print(o["name"], o["defaultChannel"])
PY
[ "$(wc -l <"$T/packages")" -eq 37 ] && pass || fail "37 packages in the render"
SAT=0 UNSAT=0 MISMATCH=0
while read -r pkg chan; do
	printf '{"catalogs":[{"name":"community"}],"requests":[{"package":"%s","channel":"%s"}]}' \
		"$pkg" "$chan" >"$T/req.json"
	resolve "$T/req.json"
	if [ "$CODE" != 200 ]; then fail "resolve $pkg: HTTP $CODE"; continue; fi
	CLI_RC=0
	"$FBCD" resolve --catalog "$T/community" --request "$pkg:$chan" >"$T/cli.json" 2>"$T/cli.err" || CLI_RC=$?
	if python3 - "$T/body" "$T/cli.json" "$CLI_RC" <<'PY'
import json, sys
http, cli, rc = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
ok = http == cli and rc == (0 if http["satisfiable"] else 1)
if not ok:
    print("    http:", json.dumps(http)[:400])
    print("    cli: ", json.dumps(cli)[:400], "exit", rc)
sys.exit(0 if ok else 1)
PY
	then
		pass
		if grep -q '"satisfiable":true' "$T/body"; then SAT=$((SAT + 1)); else UNSAT=$((UNSAT + 1)); fi
	else
		fail "resolve $pkg:$chan over HTTP differs from fbcd resolve"
		MISMATCH=$((MISMATCH + 1))
	fi
done <"$T/packages"
echo "real catalog: $SAT satisfiable, $UNSAT unsatisfiable, $MISMATCH differing from the CLI"
[ "$SAT" -gt 0 ] && pass || fail "no satisfiable package"

# ---- one satisfiable resolution in detail, then its timing from the cache
echo '{"catalogs":[{"name":"community"}],"requests":[{"package":"hive-operator"}]}' >"$T/hive.json"
resolve "$T/hive.json"; expect_code 200 "resolve hive-operator"
jcheck "j['satisfiable'] is True and j['selected'][0]['package']=='hive-operator' and j['selected'][0]['catalog']=='community' and j['steps'][0]['reason'].startswith('requested')" "hive-operator selected from community"
HIVE=$(python3 -c "import json; print(json.load(open('$T/body'))['selected'][0]['bundle'])")
python3 - "$B" "$T/hive.json" <<'PY' && pass || fail "repeated resolutions are not fast"
import json, sys, time, urllib.request
base, body = sys.argv[1], open(sys.argv[2], "rb").read()
times = []
for _ in range(50):
    t = time.perf_counter()
    r = urllib.request.urlopen(urllib.request.Request(base + "/v1/resolve", data=body,
        headers={"Content-Type": "application/json"}))
    r.read()
    times.append((time.perf_counter() - t) * 1000)
times.sort()
print(f"    50 cached resolutions of hive-operator: p50 {times[25]:.1f} ms, max {times[-1]:.1f} ms")
sys.exit(0 if times[25] < 100 else 1)
PY

# ---- unsatisfiable: alloydb-omni-operator needs cert-manager, which the catalog lacks
echo '{"catalogs":[{"name":"community"}],"requests":[{"package":"alloydb-omni-operator"}]}' >"$T/alloy.json"
resolve "$T/alloy.json" "?stats=true"; expect_code 200 "unsatisfiable is still 200"
jcheck "j['satisfiable'] is False and j['kind']=='conflict' and 'alloydb-omni-operator' in j['explanation'] and 'cert-manager.io' in j['explanation'] and len(j['constraints'])>0" "unsat explanation names the package and the missing API"
jcheck "j['stats']['satCalls']>=1" "?stats=true adds solver statistics"

# ---- an explicit revision, and a second push that becomes current
echo '{"catalogs":[{"name":"community","revision":1}],"requests":[{"package":"hive-operator"}]}' >"$T/rev1.json"
resolve "$T/rev1.json"; expect_code 200 "explicit revision 1"
jcheck "j['selected'][0]['bundle']=='$HIVE'" "revision 1 gives the same answer"
echo '{"catalogs":[{"name":"community","revision":2}],"requests":[{"package":"hive-operator"}]}' >"$T/rev2.json"
resolve "$T/rev2.json"; problem 404 catalog_not_found "unknown revision"
# revision 2 drops hive-operator's head bundle from its channel: the answer follows it
python3 - "$T/render.jsonl" "$T/v2.jsonl" "$HIVE" <<'PY'
import json, sys
src, dst, head = sys.argv[1:]
out = open(dst, "w")
for l in open(src):
    o = json.loads(l)
    if o["schema"] == "olm.channel" and o["package"] == "hive-operator":
        o["entries"] = [e for e in o["entries"] if e["name"] != head]
    if o["schema"] == "olm.bundle" and o["name"] == head:
        continue
    out.write(json.dumps(o) + "\n")
PY
mkdir "$T/v2"
mv "$T/v2.jsonl" "$T/v2/catalog.json"
tar -C "$T/v2" -czf "$T/v2.tgz" . # (the JSON lines are over this server's --max-body)
req PUT /v1/catalogs/community/content -H "$AUTH" -H 'Content-Type: application/gzip' \
	--data-binary "@$T/v2.tgz"
expect_code 201 "push revision 2"
resolve "$T/hive.json"; expect_code 200 "resolve after revision 2"
jcheck "j['satisfiable'] and j['selected'][0]['bundle']!='$HIVE'" "the current revision (2) is used"
resolve "$T/rev1.json"
jcheck "j['selected'][0]['bundle']=='$HIVE'" "revision 1 still resolves as before"

# ---- priorities: the registered one by default, the body's when given
req POST /v1/catalogs -H "$AUTH" -d '{"name":"mirror","priority":10}'; expect_code 201 "create mirror"
req PUT /v1/catalogs/mirror/content -H "$AUTH" -H 'Content-Type: application/gzip' \
	--data-binary "@$T/cat.tgz"
expect_code 201 "push mirror"
echo '{"semantics":"v1","catalogs":[{"name":"community","revision":1},{"name":"mirror"}],"requests":[{"package":"hive-operator","channel":"alpha"}]}' >"$T/prio.json"
resolve "$T/prio.json"; expect_code 200 "two registered catalogs"
jcheck "j['satisfiable'] and j['selected'][0]['catalog']=='mirror'" "registered priority 10 beats 5"
echo '{"semantics":"v1","catalogs":[{"name":"community","revision":1,"priority":20},{"name":"mirror"}],"requests":[{"package":"hive-operator","channel":"alpha"}]}' >"$T/prio2.json"
resolve "$T/prio2.json"
jcheck "j['satisfiable'] and j['selected'][0]['catalog']=='community'" "a priority in the body overrides the registered one"
echo '{"semantics":"v1","catalogs":[{"name":"community","revision":1,"priority":10},{"name":"mirror"}],"requests":[{"package":"hive-operator","channel":"alpha"}]}' >"$T/prio3.json"
resolve "$T/prio3.json"
jcheck "not j['satisfiable'] and j['kind']=='error' and 'same priority' in j['explanation']" "v1 ties on priority are an error"

# ---- inline catalogs: a small package inline, alone and next to a registered one
python3 - "$T/render.jsonl" "$T/inline.json" "$T/mixed.json" <<'PY'
import json, sys
blobs = [json.loads(l) for l in open(sys.argv[1])]
mine = [b for b in blobs if b.get("package") == "cat-facts-operator" or
        (b["schema"] == "olm.package" and b["name"] == "cat-facts-operator")]
json.dump({"catalogs": [{"name": "inline", "fbc": mine}],
           "requests": [{"package": "cat-facts-operator"}]}, open(sys.argv[2], "w"))
json.dump({"catalogs": [{"name": "inline", "fbc": mine, "priority": -1},
                        {"name": "community", "revision": 1}],
           "requests": [{"package": "cat-facts-operator", "catalog": "inline"},
                        {"package": "hive-operator"}]}, open(sys.argv[3], "w"))
PY
resolve "$T/inline.json"; expect_code 200 "inline catalog"
jcheck "j['satisfiable'] and [s['catalog'] for s in j['selected']]==['inline'] and j['selected'][0]['package']=='cat-facts-operator'" "inline catalog resolved"
printf '{"catalogs":[{"name":"community","revision":1}],"requests":[{"package":"cat-facts-operator"}]}' >"$T/cf.json"
resolve "$T/cf.json"
CF=$(python3 -c "import json; print(json.load(open('$T/body'))['selected'][0]['bundle'])")
resolve "$T/inline.json"
jcheck "j['selected'][0]['bundle']=='$CF'" "inline and registered give the same bundle"
resolve "$T/mixed.json"; expect_code 200 "inline next to registered"
jcheck "j['satisfiable'] and sorted((s['package'], s['catalog']) for s in j['selected'])==[('cat-facts-operator','inline'),('hive-operator','community')]" "each package from its catalog"

# ---- bad input that is a result, not a problem
echo '{"catalogs":[{"name":"community"}],"requests":[{"package":"hive-operator","versionRange":">=1.2 <<"}]}' >"$T/range.json"
resolve "$T/range.json"; expect_code 200 "bad range"
jcheck "not j['satisfiable'] and j['kind']=='error' and '>=1.2 <<' in j['explanation']" "bad range is kind error naming the range"
echo '{"catalogs":[{"name":"community"}],"requests":[{"package":"no-such-package"}]}' >"$T/nopkg.json"
resolve "$T/nopkg.json"; expect_code 200 "unknown package"
jcheck "not j['satisfiable'] and j['kind']=='error' and 'no-such-package' in j['explanation']" "unknown package is kind error"

# ---- problems
echo '{"catalogs":[{"name":"etc","path":"/etc"}],"requests":[{"package":"x"}]}' >"$T/path.json"
resolve "$T/path.json"; problem 400 path_not_allowed "path catalog"
jcheck "'catalogs[0]' in j['detail']" "path problem names the catalog"
echo '{"catalogs":[{"name":"nope"}],"requests":[{"package":"x"}]}' >"$T/unknown.json"
resolve "$T/unknown.json"; problem 404 catalog_not_found "unknown catalog"
jcheck "'nope' in j['detail']" "404 names the catalog"
echo '{"catalogs":[{"name":"community"}],"requests":[{"package":"x","chanel":"a"}]}' >"$T/typo.json"
resolve "$T/typo.json"; problem 400 bad_resolve_request "unknown field"
jcheck "j['detail']=='requests[0]: unknown field \"chanel\"'" "400 has the resolver's message and field"
echo '{"catalogs":[{"name":"community","revision":"latest"}],"requests":[]}' >"$T/badrev.json"
resolve "$T/badrev.json"; problem 400 bad_revision "revision that is not a number"
printf '{"catalogs":[' >"$T/trunc.json"
resolve "$T/trunc.json"; problem 400 bad_json "malformed JSON"
python3 -c "
import json
blob = {'schema': 'olm.package', 'name': 'big', 'description': 'x' * 100000}
json.dump({'catalogs': [{'name': 'big', 'fbc': [blob] * 50}], 'requests': []}, open('$T/big.json', 'w'))"
resolve "$T/big.json"; problem 413 too_large "body over --max-body"
req GET /v1/resolve; expect_code 405 "GET /v1/resolve"

# ---- real responses against the OpenAPI schemas (and accepted bodies against the request schema).
# (Not the oversized body: the server answers 413 and closes before the upload ends, which
# urllib reports as a broken pipe; curl above checks that answer.)
curl -s "$B/openapi.json" >"$T/doc.json"
python3 "$HERE/openapi_validate.py" "$B" "$T/doc.json" \
	"POST /v1/resolve $T/hive.json" "POST /v1/resolve?stats=true $T/alloy.json" \
	"POST /v1/resolve $T/mixed.json" "POST /v1/resolve $T/range.json" \
	"POST /v1/resolve $T/prio3.json" "POST /v1/resolve $T/path.json" \
	"POST /v1/resolve $T/unknown.json" "POST /v1/resolve $T/typo.json" \
	"POST /v1/resolve $T/trunc.json" \
	>"$T/schema.out" 2>&1 && pass || { fail "responses do not match the OpenAPI schemas"; sed -n 1,30p "$T/schema.out" | sed 's/^/    /'; }
tail -n 1 "$T/schema.out" | sed 's/^/    /'

# ---- resolution is a read: it needs a read token when reads do
"$FBCD" token create --scope read --database-url "$URL" >"$T/readtok" 2>"$T/err" && pass || fail "token create"
stop_serve
start_serve --read-auth token
resolve "$T/hive.json"; problem 401 unauthorized "resolve without a token when reads need one"
req POST /v1/resolve -H "Authorization: Bearer $(cat "$T/readtok")" -H 'Content-Type: application/json' \
	--data-binary "@$T/hive.json"
expect_code 200 "resolve with a read token"
stop_serve
finish
