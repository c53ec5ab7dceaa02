#!/bin/sh
# Operating fbcd: GET /metrics on a live server (promtool check metrics, the
# series a request must produce, route templates as labels, no raw paths),
# a real Prometheus scraping it and answering a PromQL query about a request
# this test made, --metrics-auth token, JSON logs with request ids echoed in
# X-Request-Id and problem bodies, and no token in any log line.
#   ops_metrics.sh FBCD EXAMPLE_CATALOG_DIR
FBCD=$1 CATALOG=$2
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$HERE/../lib
command -v curl >/dev/null || skip "curl is not installed"

PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-pg.XXXXXX")
SERVE_PID= PROM_PID=
cleanup() {
	[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
	[ -n "$PROM_PID" ] && kill "$PROM_PID" 2>/dev/null && wait "$PROM_PID" 2>/dev/null
	if [ -f "$PGDIR/url" ]; then sh "$LIB/pg-stop.sh" "$PGDIR"; else rm -rf "$PGDIR"; fi
	rm -rf "$T"
}
trap cleanup EXIT
URL=$(sh "$LIB/pg-start.sh" "$PGDIR") || { [ $? -eq 77 ] && skip "no PostgreSQL"; echo "FAIL: pg-start"; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
B=http://127.0.0.1:$PORT
ADMIN=ops-admin-token-5ecret-0123456789
READ_TOKEN=

start() { # start ARGS...: fbcd serve with JSON logs in $T/serve.log
	FBCD_ADMIN_TOKEN=$ADMIN "$FBCD" serve --listen "127.0.0.1:$PORT" --database-url "$URL" \
		--data-dir "$T/data" --access-log --log-format json "$@" >>"$T/serve.log" 2>&1 &
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
stop() { kill "$SERVE_PID" && wait "$SERVE_PID"; SERVE_PID=; }
req() { # req METHOD PATH [curl args...]: body $T/body, headers $T/hdr, status $CODE
	m=$1 p=$2
	shift 2
	CODE=$(curl -s -m 30 -D "$T/hdr" -o "$T/body" -w '%{http_code}' -X "$m" "$@" "$B$p")
}
expect_code() {
	if [ "$CODE" = "$1" ]; then pass; else fail "$2: HTTP $CODE, expected $1"; head -c 600 "$T/body"; echo; fi
}
AUTH="Authorization: Bearer $ADMIN"

start
tar -C "$CATALOG" -czf "$T/cat.tgz" .
req POST /v1/catalogs -H "$AUTH" -H 'Content-Type: application/json' -d '{"name":"ex"}'
expect_code 201 "create catalog"
req PUT /v1/catalogs/ex/content -H "$AUTH" -H 'Content-Type: application/gzip' --data-binary "@$T/cat.tgz"
expect_code 201 "push the example catalog"
for _ in 1 2 3; do req GET /v1/catalogs/ex/packages; done
expect_code 200 "package list"
req GET /catalogs/ex/api/v1/all; expect_code 200 "catalogd all"
req POST /v1/resolve -H 'Content-Type: application/json' \
	-d '{"catalogs":[{"name":"ex"}],"requests":[{"package":"example-operator"}]}'
expect_code 200 "resolve"
req GET /v1/catalogs/nope-12345/packages; expect_code 404 "unknown catalog"

# ---- the upgrade graph drawn as SVG by Graphviz (and cached per revision)
G=/v1/catalogs/ex/packages/example-operator/channels/stable/graph
req GET "$G?format=svg"; expect_code 200 "graph as SVG"
grep -qi '^content-type: image/svg+xml' "$T/hdr" && pass || fail "SVG content type"
python3 - "$T/body" <<'PY' && pass || fail "the SVG is not a picture of the channel"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag.endswith("svg"), root.tag
text = " ".join(t.text or "" for t in root.iter() if t.tag.endswith("text"))
for want in ("example-operator / stable", "example-operator.v1.0.0", "example-operator.v1.2.0",
             "deprecated", "head", "replaces", "skipRange"):
    assert want in text, (want, text)
# the head is drawn apart (its node outline is dark green)
assert any("darkgreen" in (e.get("stroke") or "") for e in root.iter()), "head not styled"
PY
req GET "$G?format=svg"; expect_code 200 "graph as SVG again (cached)"
req GET "$G?format=png"; expect_code 400 "unknown graph format"

# ---- request ids: generated, echoed, in problem bodies; a client's is kept
req GET /v1/catalogs/nope-12345 -H 'X-Request-Id: client-id.42'
expect_code 404 "unknown catalog with a request id"
grep -qi '^x-request-id: client-id.42' "$T/hdr" && pass || fail "client's X-Request-Id not echoed"
grep -q '"requestId":"client-id.42"' "$T/body" && pass || fail "requestId not in the problem body"
req GET /healthz -H 'X-Request-Id: bad id with spaces'
GEN=$(sed -n 's/^[Xx]-[Rr]equest-[Ii]d: \([0-9a-f]*\).*/\1/p' "$T/hdr" | tr -d '\r')
[ ${#GEN} -eq 16 ] && pass || fail "a malformed X-Request-Id is not replaced by a generated one ($GEN)"

# ---- pipeline series: a webhook nobody signed, a job run by serve's workers
req POST /v1/webhooks/github -H 'X-GitHub-Event: push' -H 'X-GitHub-Delivery: d-1' -d '{}'
expect_code 401 "unsigned webhook"
req POST /v1/webhooks/github -H 'X-GitHub-Event: made-up-event' -H 'X-GitHub-Delivery: d-2' -d '{}'
expect_code 401 "unsigned webhook of an unknown event"
. "$LIB/pg-common.sh"
"$PG_BINDIR/psql" -X -q -t -A "$URL" -c "INSERT INTO jobs (kind, key, payload) VALUES ('noop', 'ops-1', '{}'); NOTIFY fbcd_jobs" >/dev/null
i=0
until [ "$("$PG_BINDIR/psql" -X -q -t -A "$URL" -c "SELECT state FROM jobs WHERE key = 'ops-1'")" = succeeded ]; do
	i=$((i + 1)); [ $i -gt 100 ] && { fail "noop job did not run"; break; }; sleep 0.1
done

# ---- the scrape
req GET /metrics; expect_code 200 "GET /metrics"
cp "$T/body" "$T/metrics.txt"
grep -qi '^content-type: text/plain; version=0.0.4' "$T/hdr" && pass || fail "metrics content type"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <"$T/metrics.txt" >"$T/promtool.out" 2>&1 && pass ||
		{ fail "promtool check metrics"; cat "$T/promtool.out"; }
else
	echo "promtool not installed: format not checked by it"
fi
has() { grep -qF -- "$1" "$T/metrics.txt" && pass || fail "metrics lack: $1"; }
has 'fbcd_http_request_duration_seconds_count{route="/v1/catalogs/{catalog}/packages",method="GET",code="200"} 3'
has 'fbcd_http_request_duration_seconds_bucket{route="/v1/catalogs/{catalog}/content",method="PUT",code="201",le="+Inf"} 1'
has 'catalogd_http_request_duration_seconds_bucket{code="200",le="0.1"}'
has 'fbcd_http_requests_in_flight 1'
has 'olm_resolution_duration_seconds_count{outcome="succeeded"} 1'
has 'fbcd_resolutions_total{semantics="classic",outcome="satisfiable"} 1'
has 'fbcd_webhook_deliveries_total{forge="github",event="push",result="unauthorized"} 1'
has 'fbcd_webhook_deliveries_total{forge="github",event="other",result="unauthorized"} 1'
has 'fbcd_jobs{kind="noop",state="succeeded"} 1'
has 'fbcd_job_duration_seconds_count{kind="noop",outcome="succeeded"} 1'
has 'fbcd_catalog_ingest_duration_seconds_count{outcome="created"} 1'
has 'fbcd_catalog_revision{catalog="ex"} 1'
has 'fbcd_catalog_packages{catalog="ex"} 2'
has 'fbcd_db_connections{state="idle"}'
has 'process_resident_memory_bytes '
has 'process_open_fds '
grep -q 'nope-12345' "$T/metrics.txt" && fail "a raw path reached a metric label" || pass

# ---- a real Prometheus scrapes fbcd and answers a PromQL query
if command -v prometheus >/dev/null 2>&1; then
	PPORT=$(free_port)
	cat >"$T/prom.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: fbcd
    static_configs: [{targets: ["127.0.0.1:$PORT"]}]
YML
	prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/prom" \
		--web.listen-address="127.0.0.1:$PPORT" >"$T/prom.log" 2>&1 &
	PROM_PID=$!
	Q='fbcd_http_request_duration_seconds_count{route="/v1/catalogs/{catalog}/packages",code="200"}'
	got=
	for _ in $(seq 60); do
		got=$(curl -s -G "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$Q" |
			python3 -c 'import json,sys
r=json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")' 2>/dev/null)
		[ -n "$got" ] && break
		sleep 0.5
	done
	[ "$got" = 3 ] && pass || { fail "Prometheus query answered '$got', expected 3"; tail -5 "$T/prom.log"; }
	up=$(curl -s -G "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode 'query=up{job="fbcd"}' |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")')
	[ "$up" = 1 ] && pass || fail "Prometheus sees fbcd as down ($up)"
	kill "$PROM_PID"; wait "$PROM_PID" 2>/dev/null; PROM_PID=
else
	echo "prometheus not installed: no live scrape"
fi

# ---- logs: one JSON object per line, request ids, no secret
stop
python3 - "$T/serve.log" <<'PY' && pass || fail "log lines are not one JSON object each with time, level, msg"
import json, sys, re
n = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["time"]), o
    assert o["level"] in ("debug", "info", "warn", "error"), o
    assert isinstance(o["msg"], str)
    n += 1
assert n > 5
PY
grep -q '"request_id":"client-id.42"' "$T/serve.log" && pass || fail "the client's request id is not in the access log"
grep -q '"route":"/v1/catalogs/{catalog}/packages","path":"/v1/catalogs/ex/packages","status":200' "$T/serve.log" &&
	pass || fail "access log line lacks route, path or status"
grep -qF "$ADMIN" "$T/serve.log" && fail "the admin token appears in the log" || pass

# ---- --metrics-auth token: a read token is needed
start --metrics-auth token
req GET /metrics; expect_code 401 "metrics without a token"
req GET /metrics -H "$AUTH"; expect_code 200 "metrics with a token"
req GET /v1/catalogs/ex/packages; expect_code 200 "reads stay open"
stop
finish
