#!/bin/sh
# The dashboard (GET /ui/) in a real browser: headless Chromium driven by
# Selenium against a live `fbcd serve` (throwaway PostgreSQL) with the real
# community-operators catalog pushed. Checks served files, their headers and
# ETags with curl, then each page in the browser (ui_browser.py).
#   ui_browser.sh FBCD CATALOG_DIR UI_BROWSER_PY
# Screenshots go to FBCD_UI_SHOT_DIR (meson sets build/meson-logs/ui)
# or stay in the kept temporary directory when FBCD_UI_SHOTS is set.
# Skips (77) without chromium, chromedriver or python3-selenium.
FBCD=$1 CATALOG=$2 PY=$3
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$HERE/../lib
command -v curl >/dev/null || skip "curl is not installed"
CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || skip "chromium is not installed"
DRIVER=/usr/bin/chromedriver
[ -x "$DRIVER" ] || DRIVER=$(command -v chromedriver || true)
[ -n "$DRIVER" ] && [ -x "$DRIVER" ] || skip "chromedriver is not installed"
# Debian's python3-selenium lives in /usr/bin/python3's path, which may not be
# the first python3 on PATH.
SELPY=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import selenium' 2>/dev/null; then SELPY=$p; break; fi
done
[ -n "$SELPY" ] || skip "python3-selenium is not installed"
[ -d "$CATALOG" ] || skip "no catalog at $CATALOG"

PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-pg.XXXXXX")
SERVE_PID=
cleanup() {
	[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
	if [ -f "$PGDIR/url" ]; then sh "$LIB/pg-stop.sh" "$PGDIR"; else rm -rf "$PGDIR"; fi
	if [ -n "${FBCD_UI_SHOTS:-}" ]; then echo "kept: $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
URL=$(sh "$LIB/pg-start.sh" "$PGDIR") || { [ $? -eq 77 ] && skip "no PostgreSQL"; echo "FAIL: pg-start"; exit 1; }
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
B=http://127.0.0.1:$PORT
ADMIN=ui-admin-token-5ecret-0123456789

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
req() { # req METHOD PATH [curl args...]: body $T/body, headers $T/hdr, status $CODE
	m=$1 p=$2
	shift 2
	CODE=$(curl -s -m 30 -D "$T/hdr" -o "$T/body" -w '%{http_code}' -X "$m" "$@" "$B$p")
}
expect_code() {
	if [ "$CODE" = "$1" ]; then pass; else fail "$2: HTTP $CODE, expected $1"; head -c 400 "$T/body"; echo; fi
}
AUTH="Authorization: Bearer $ADMIN"

# ---- the static files: types, CSP, ETag revalidation, unknown files
req GET /ui/; expect_code 200 "GET /ui/"
grep -qi '^content-type: text/html' "$T/hdr" && pass || fail "/ui/ is not text/html"
grep -qi "^content-security-policy: default-src 'self'" "$T/hdr" && pass || fail "/ui/ has no CSP"
grep -q '<script src="app.js"' "$T/body" && pass || fail "index.html does not load app.js"
grep -q '<script>' "$T/body" && fail "index.html has an inline script" || pass
ETAG=$(sed -n 's/^[Ee][Tt][Aa][Gg]: *//p' "$T/hdr" | tr -d '\r')
[ -n "$ETAG" ] && pass || fail "/ui/ has no ETag"
req GET /ui/ -H "If-None-Match: $ETAG"; expect_code 304 "revalidation of /ui/"
req GET /ui/app.js; expect_code 200 "GET /ui/app.js"
grep -qi '^content-type: text/javascript' "$T/hdr" && pass || fail "app.js content type"
cmp -s "$T/body" "$HERE/../../ui/app.js" && pass || fail "app.js differs from ui/app.js"
req GET /ui/app.css; expect_code 200 "GET /ui/app.css"
grep -qi '^content-type: text/css' "$T/hdr" && pass || fail "app.css content type"
req GET /ui/nope.js; expect_code 404 "unknown file"
req GET /ui/..%2fapi; expect_code 404 "a path outside ui/"
req POST /ui/; expect_code 405 "POST /ui/"

# ---- the real catalog
# revision 1 lacks one package (not kepler-operator), revision 2 is the whole
# catalog: the history shows both and the change between them.
DROP=$(ls "$CATALOG" | grep -v '^kepler-operator$' | head -n 1)
mkdir "$T/partial"
for d in "$CATALOG"/*; do
	[ "$(basename "$d")" = "$DROP" ] || ln -s "$d" "$T/partial/"
done
tar -C "$T/partial" -czhf "$T/partial.tgz" .
tar -C "$CATALOG" -czf "$T/cat.tgz" .
req POST /v1/catalogs -H "$AUTH" -H 'Content-Type: application/json' -d '{"name":"community"}'
expect_code 201 "create catalog"
req PUT /v1/catalogs/community/content -H "$AUTH" -H 'Content-Type: application/gzip' --data-binary "@$T/partial.tgz"
expect_code 201 "push the catalog without $DROP"
req PUT /v1/catalogs/community/content -H "$AUTH" -H 'Content-Type: application/gzip' --data-binary "@$T/cat.tgz"
expect_code 201 "push the whole catalog"
NPKG=$(ls "$CATALOG" | wc -l)
req GET /v1/catalogs/community/packages/kepler-operator
expect_code 200 "kepler-operator"
HEAD=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print([c["head"] for c in p["channels"] if c["name"]==p["defaultChannel"]][0])' "$T/body")

# ---- pipeline data for the repository, pull-request and image views: a real
# pull request of history.bundle checked by `fbcd pr check` (#9631, which
# breaks the upgrade graph), stored as the service stores a pr.check result,
# and a published image of revision 2
. "$LIB/pg-common.sh"
BUNDLE=$(dirname "$CATALOG")/history.bundle
PR=9631
if [ -f "$BUNDLE" ] && git clone -q --mirror "$BUNDLE" "$T/h.git" 2>/dev/null; then
	"$FBCD" pr check --repo "$T/h.git" --base "refs/pull/$PR/head^" --head "refs/pull/$PR/head" \
		--author someone --output json >"$T/pr.json"
	req POST /v1/repositories -H "$AUTH" -H 'Content-Type: application/json' \
		-d "{\"name\": \"community-operators\", \"url\": \"file://$T/h.git\", \"pollSeconds\": 0}"
	expect_code 201 "create a repository"
	H=$(git -C "$T/h.git" rev-parse "refs/pull/$PR/head")
	"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -v doc="$(cat "$T/pr.json")" "$URL" >/dev/null <<SQL && pass || fail "seed pull request and image"
INSERT INTO pulls (repository, number, state, head_sha, author, title) VALUES ('community-operators', $PR, 'open', '$H', 'someone', 'Real pull request $PR');
INSERT INTO pull_checks (repository, number, head_sha, conclusion, result, job_id) VALUES ('community-operators', $PR, '$H', 'failure', :'doc'::jsonb, -1);
INSERT INTO images (catalog_id, revision, digest, media_type, platforms, repository, tags) SELECT id, 2, 'sha256:' || repeat('ab', 32), 'application/vnd.oci.image.index.v1+json', '{linux/amd64,linux/arm64}', 'registry.example.com/org/community-catalog', '{latest,rev-2}' FROM catalogs WHERE name = 'community';
SQL
else
	PR=
fi

SHOTS=$T/shots
if [ -z "${FBCD_UI_SHOTS:-}" ] && [ -n "${FBCD_UI_SHOT_DIR:-}" ]; then
	SHOTS=$FBCD_UI_SHOT_DIR
fi
mkdir -p "$SHOTS"
if timeout 120 "$SELPY" "$PY" --base "$B" --catalog community --packages "$NPKG" \
	--package kepler-operator --head "$HEAD" --chrome "$CHROME" --driver "$DRIVER" --pull "${PR:-0}" \
	--profile "$T/profile" --shots "$SHOTS"; then
	pass
else
	fail "browser checks (screenshots in $SHOTS)"
fi
echo "screenshots: $SHOTS"
grep -q '"level":"error"\|internal error' "$T/serve.log" && { fail "server errors"; grep 'error' "$T/serve.log" | head -5; } || pass
finish
