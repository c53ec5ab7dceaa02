#!/bin/sh
# Robustness of the REST API end to end: hostile paths, arguments, cursors,
# headers and bodies get a clear 4xx (never a 500, a hang or a wrong
# answer), and PostgreSQL going away mid-service gives 503s, then recovery.
#   api_robust.sh FBCD EXAMPLE_CATALOG_DIR
# Needs curl and python3; skips (77) without PostgreSQL.
FBCD=$1 CATALOG=$2
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$HERE/../lib

command -v curl >/dev/null || skip "curl is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"

PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-pg.XXXXXX")
SERVE_PID=
cleanup() {
	[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null
	if [ -f "$PGDIR/url" ]; then sh "$LIB/pg-stop.sh" "$PGDIR"; else rm -rf "$PGDIR"; fi
	rm -rf "$T"
}
trap cleanup EXIT
URL=$(sh "$LIB/pg-start.sh" "$PGDIR") || { [ $? -eq 77 ] && skip "no PostgreSQL"; echo "FAIL: pg-start"; exit 1; }
. "$LIB/pg-common.sh"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ADMIN=it-admin-token-0123456789abcdef
B=http://127.0.0.1:$PORT
MAX_BODY=1000000
FBCD_ADMIN_TOKEN=$ADMIN "$FBCD" serve --listen "127.0.0.1:$PORT" --database-url "$URL" \
	--data-dir "$T/data" --max-body $MAX_BODY --access-log >"$T/serve.log" 2>&1 &
SERVE_PID=$!
i=0
until curl -sf "$B/healthz" >/dev/null 2>&1; do
	i=$((i + 1))
	if [ $i -gt 100 ] || ! kill -0 "$SERVE_PID" 2>/dev/null; then
		echo "FAIL: fbcd serve did not start"; cat "$T/serve.log"; exit 1
	fi
	sleep 0.1
done

# req METHOD PATH [curl args...]: body in $T/body, status in $CODE
req() {
	m=$1 p=$2
	shift 2
	CODE=$(curl -s -m 30 -o "$T/body" -w '%{http_code}' -X "$m" "$@" "$B$p")
}
expect_code() {
	if [ "$CODE" = "$1" ]; then pass; else fail "$2: HTTP $CODE, expected $1"; head -c 600 "$T/body" | sed 's/^/    /'; echo; fi
}
AUTH="Authorization: Bearer $ADMIN"

tar -C "$CATALOG" -czf "$T/cat.tgz" .
req POST /v1/catalogs -H "$AUTH" -H 'Content-Type: application/json' -d '{"name":"ex"}'
expect_code 201 "create catalog"
req PUT /v1/catalogs/ex/content -H "$AUTH" -H 'Content-Type: application/gzip' --data-binary "@$T/cat.tgz"
expect_code 201 "push the example catalog"
req GET /v1/catalogs/ex/packages; expect_code 200 "package list"

# ---- text that is not UTF-8 never reaches PostgreSQL (it answered 500)
req GET /v1/catalogs/%ff/packages; expect_code 400 "non-UTF-8 catalog name"
req GET /v1/catalogs/ex/packages/%ff%fe; expect_code 400 "non-UTF-8 package name"
req GET "/v1/catalogs/ex/packages?provides=%ff/v1/K"; expect_code 400 "non-UTF-8 query value"
req GET '/v1/catalogs/ex/packages?cursor=__4'; expect_code 400 "cursor decoding to non-UTF-8"
req GET '/v1/catalogs/ex/packages?cursor=AA'; expect_code 400 "cursor decoding to a NUL"
# ---- %00 does not cut the path short (was served as /v1/catalogs/ex)
req GET /v1/catalogs/ex%00x/packages; expect_code 400 "%00 in the path"
req DELETE /v1/catalogs/ex%00 -H "$AUTH"; expect_code 400 "%00 in a DELETE path"
req GET /v1/catalogs/ex; expect_code 200 "catalog still there"
# ---- the response cache tells a decoded '?' in the path from a query
req GET '/v1/catalogs/ex/packages/example-operator?x=1'; expect_code 200 "package with an ignored argument"
req GET '/v1/catalogs/ex/packages/example-operator%3Fx=1'; expect_code 404 "package named 'example-operator?x=1'"

# ---- the access log shows the decoded path: a %0a cannot forge a line
req GET '/healthz%0afbcd:%20FORGED%20200'; expect_code 404 "path with a newline"
grep -q '^fbcd: FORGED' "$T/serve.log" && fail "a request forged an access log line" || pass
grep -q 'healthz\\nfbcd' "$T/serve.log" && pass || fail "escaped path not in the access log"

# ---- headers, URL and arguments are bounded
python3 - "$PORT" "$ADMIN" <<'PY' && pass || fail "oversized request heads"
import socket, sys
def first_line(data):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
    s.sendall(data)
    line = s.recv(200).split(b"\r\n")[0]
    s.close()
    return line
checks = [
    (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200000 + b"\r\n\r\n", b" 431 "),
    (b"GET /v1/catalogs/" + b"a" * 200000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", b" 414 "),
    (b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(20000)) + b"\r\n", b" 431 "),
    # a declared body over --max-body is refused before it is sent
    (b"PUT /v1/catalogs/ex/content HTTP/1.1\r\nHost: x\r\nContent-Type: application/gzip\r\n"
     b"Authorization: Bearer " + sys.argv[2].encode() + b"\r\n"
     b"Content-Length: 100000000000\r\n\r\n", b" 413 "),
    # ... and without a token it is refused for that first
    (b"PUT /v1/catalogs/ex/content HTTP/1.1\r\nHost: x\r\nContent-Type: application/gzip\r\n"
     b"Content-Length: 100000000000\r\n\r\n", b" 401 "),
]
ok = True
for data, want in checks:
    got = first_line(data)
    if want not in got:
        print("    %r... answered %r, expected %r" % (data[:40], got, want))
        ok = False
sys.exit(0 if ok else 1)
PY
Q=$(python3 -c "print('&'.join('a%d=1' % i for i in range(40)))")
req GET "/v1/catalogs/ex/packages?$Q"; expect_code 400 "too many query arguments"
req GET "/v1/catalogs/ex/packages?limit=99999999999999999999"; expect_code 400 "huge limit"
req GET "/v1/catalogs/ex/packages?revision=99999999999999999999"; expect_code 400 "huge revision"

# ---- bodies
python3 -c "print('{\"name\":' + '[' * 100000 + ']' * 100000 + '}')" >"$T/deep.json"
req POST /v1/catalogs -H "$AUTH" -H 'Content-Type: application/json' --data-binary "@$T/deep.json"
expect_code 400 "deeply nested JSON body"
python3 - "$T" <<'PY'
import io, sys, tarfile
def mk(path, entries, mode="w"):
    with tarfile.open(path, mode) as t:
        for name, data in entries:
            ti = tarfile.TarInfo(name); ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
mk(sys.argv[1] + "/filedir.tar", [("a", b"{}"), ("a/b.json", b"{}")])
mk(sys.argv[1] + "/longname.tar", [("x" * 300 + ".json", b"{}")])
# 200 MB of zeros in 4 files: about 200 KB of gzip (1000:1)
mk(sys.argv[1] + "/bomb.tgz", [("z%d.json" % i, bytes(50 << 20)) for i in range(4)], "w:gz")
PY
req POST /v1/validate -H 'Content-Type: application/x-tar' --data-binary "@$T/filedir.tar"
expect_code 400 "a file where a directory is needed"
req POST /v1/validate -H 'Content-Type: application/x-tar' --data-binary "@$T/longname.tar"
expect_code 400 "a name over NAME_MAX"
req POST /v1/validate -H 'Content-Type: application/gzip' --data-binary "@$T/bomb.tgz"
expect_code 413 "gzip bomb"
[ -z "$(ls -A "$T/data/tmp" 2>/dev/null)" ] && pass || fail "upload directories left behind: $(ls "$T/data/tmp")"

# ---- PostgreSQL goes away: 503 at once, then recovery when it is back
pg_as_user "$PG_BINDIR/pg_ctl" -D "$PGDIR/data" -m fast -w stop >/dev/null
req GET /v1/catalogs/ex/packages/example-dependency; expect_code 503 "read with the database down"
PGPORT=$(echo "$URL" | sed -E 's/.*:([0-9]+)\/.*/\1/')
grep -q "$PGPORT" "$T/body" && fail "a 503 names the database address: $(cat "$T/body")" || pass
grep -q "$PGPORT" "$T/serve.log" && pass || fail "the database error is not in the server log"
req GET /readyz; expect_code 503 "readyz with the database down"
grep -q "$PGPORT" "$T/body" && fail "readyz names the database address" || pass
req GET /v1/catalogs -H "$AUTH"; expect_code 503 "token check with the database down"
req PUT /v1/catalogs/ex/content -H "$AUTH" -H 'Content-Type: application/gzip' --data-binary "@$T/cat.tgz"
expect_code 503 "upload with the database down"
req GET /healthz; expect_code 200 "healthz does not need the database"
pg_as_user "$PG_BINDIR/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/log" -w start >/dev/null
req GET /readyz; expect_code 200 "readyz after the database is back"
req GET /v1/catalogs/ex/packages/example-dependency; expect_code 200 "read after the database is back"
kill -0 "$SERVE_PID" 2>/dev/null && pass || fail "fbcd serve died"
grep -q "ERROR: AddressSanitizer\|runtime error" "$T/serve.log" && fail "sanitizer report in the server log" || pass

finish
