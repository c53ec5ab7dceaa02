#!/bin/sh
# fbcd image build --revision CATALOG@N: a revision stored by fbcd serve
# (throwaway PostgreSQL) builds to the same digests as the directory it was
# pushed from, with io.fbcd.revision = CATALOG@N.
# usage: image_revision.sh FBCD CATALOG
FBCD=$1 REAL=$2
. "$(dirname "$0")/lib.sh"
LIB=$(cd "$(dirname "$0")/../lib" && pwd)
[ -d "$REAL" ] || skip "real catalog not found at $REAL"
PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-pg.XXXXXX")
SERVE_PID=
cleanup() {
	[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
	if [ -f "$PGDIR/url" ]; then sh "$LIB/pg-stop.sh" "$PGDIR"; else rm -rf "$PGDIR"; fi
	rm -rf "$T"
}
trap cleanup EXIT
URL=$(sh "$LIB/pg-start.sh" "$PGDIR") || { [ $? -eq 77 ] && skip "no PostgreSQL"; echo "FAIL: pg-start"; exit 1; }
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ADMIN=it-admin-token-0123456789abcdef
B=http://127.0.0.1:$PORT
FBCD_ADMIN_TOKEN=$ADMIN "$FBCD" serve --listen "127.0.0.1:$PORT" --database-url "$URL" >"$T/serve.log" 2>&1 &
SERVE_PID=$!
i=0
until curl -sf "$B/healthz" >/dev/null 2>&1; do
	i=$((i + 1))
	if [ $i -gt 100 ] || ! kill -0 "$SERVE_PID" 2>/dev/null; then echo "FAIL: fbcd serve did not start"; cat "$T/serve.log"; exit 1; fi
	sleep 0.1
done
curl -sf -X POST "$B/v1/catalogs" -H "Authorization: Bearer $ADMIN" -d '{"name":"community"}' >/dev/null || fail "create catalog"
(cd "$REAL" && tar -czf "$T/cat.tgz" .)
curl -sf -X PUT "$B/v1/catalogs/community/content" -H "Authorization: Bearer $ADMIN" \
	-H 'Content-Type: application/gzip' --data-binary "@$T/cat.tgz" >/dev/null || fail "push content"

run image build --revision community@1 --database-url "$URL" --platform linux/amd64 --platform linux/arm64 --output "oci:$T/rev"
expect_rc 0 "build --revision community@1"
D1=$(cat "$T/out")
run image build --catalog "$REAL" --revision-label community@1 --platform linux/amd64 --platform linux/arm64 --output "oci:$T/dir"
expect_rc 0 "build --catalog"
if [ "$(cat "$T/out")" = "$D1" ]; then pass; else fail "revision and directory builds differ: $D1 vs $(cat "$T/out")"; fi
FBCD_DATABASE_URL=$URL "$FBCD" image build --revision community --output "oci:$T/cur" --platform linux/amd64 --platform linux/arm64 >"$T/out" 2>"$T/err"
if [ "$(cat "$T/out")" = "$D1" ]; then pass; else fail "current revision via FBCD_DATABASE_URL: $(cat "$T/err")"; fi
run image inspect "oci:$T/rev"
expect_grep '"io.fbcd.revision": "community@1"' "$T/out" "io.fbcd.revision label"
run image build --revision community@9 --database-url "$URL" --output "oci:$T/none"
expect_rc 2 "unknown revision"
run image build --revision "@x" --database-url "$URL" --output "oci:$T/none"
expect_rc 2 "malformed --revision"
run image build --revision community@1 --catalog "$REAL" --output "oci:$T/none"
expect_rc 2 "--revision and --catalog together"
finish
