#!/bin/sh
# repo.poll end to end, with no webhook at all: a repository registered
# through the API whose URL is served over smart HTTP by `git http-backend`
# (behind the test's own server), polled every second by two replicas —
# `fbcd serve --workers` and `fbcd worker` on one PostgreSQL. Each commit
# pushed to the remote becomes one revision with its commit (one ingest per
# commit, never two), at most one poll of a repository is live at a time,
# the stored catalog equals `fbcd render` of a checkout, and pollSeconds 0
# stops polling.
#   poll_git.sh FBCD EXAMPLE_CATALOG_DIR
FBCD=$1 CATALOG=$2
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$HERE/../lib
command -v git >/dev/null || skip "git is not installed"
command -v curl >/dev/null || skip "curl is not installed"
[ -x /usr/lib/git-core/git-http-backend ] || skip "git http-backend is not installed"

PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-pg.XXXXXX")
SERVE_PID= WORKER_PID= GIT_PID=
cleanup() {
	for p in $SERVE_PID $WORKER_PID $GIT_PID; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	if [ -f "$PGDIR/url" ]; then sh "$LIB/pg-stop.sh" "$PGDIR"; else rm -rf "$PGDIR"; fi
	rm -rf "$T"
}
trap cleanup EXIT; [ -n "${KEEP:-}" ] && trap - EXIT
URL=$(sh "$LIB/pg-start.sh" "$PGDIR") || { [ $? -eq 77 ] && skip "no PostgreSQL"; echo "FAIL: pg-start"; exit 1; }
. "$LIB/pg-common.sh"
sql() { "$PG_BINDIR/psql" -X -q -t -A -v ON_ERROR_STOP=1 "$URL" -c "$1"; }

# the remote: a bare repository served by git http-backend; W is a clone we push from
export GIT_AUTHOR_NAME="Ada Author" GIT_AUTHOR_EMAIL=ada@example.com
export GIT_COMMITTER_NAME=Committer GIT_COMMITTER_EMAIL=c@example.com
W=$T/work
mkdir -p "$W" "$T/srv" && cp -R "$CATALOG"/. "$W"/ && chmod -R u+w "$W"
git -C "$W" init -q -b main && git -C "$W" add -A && git -C "$W" commit -q -m one
git clone -q --bare "$W" "$T/srv/plain.git"
git -C "$W" remote add origin "$T/srv/plain.git"
C1=$(git -C "$W" rev-parse HEAD)
mkdir -p "$T/srv/private" && git clone -q --bare "$W" "$T/srv/private/plain.git"
GIT_HTTP_TOKEN=poll-git-token-71b0c3e9 python3 "$LIB/git-http.py" "$T/srv" "$T/gitport" "$T/git-http.log" &
GIT_PID=$!
i=0
until [ -s "$T/gitport" ]; do i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: git server did not start"; exit 1; }; sleep 0.1; done
GURL=http://127.0.0.1:$(cat "$T/gitport")/plain.git
git ls-remote "$GURL" | grep -q "$C1" && pass || fail "git http-backend does not serve the remote"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
B=http://127.0.0.1:$PORT
ADMIN=poll-admin-token-0123456789abcdef
# HTTPS: a test CA, the git server's certificate signed by it, and a rogue
# self-signed one; serve and worker trust the test CA (--ca-file)
command -v openssl >/dev/null || skip "openssl is not installed"
mkdir -p "$T/tls" && (
	cd "$T/tls" || exit 1
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >ext
	openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=fbcd-test-ca &&
		openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=localhost &&
		openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile ext &&
		openssl req -x509 -newkey rsa:2048 -nodes -keyout rogue.key -out rogue.pem -days 2 -subj /CN=localhost \
			-addext subjectAltName=DNS:localhost,IP:127.0.0.1
) >"$T/tls.log" 2>&1 || { echo "FAIL: openssl"; cat "$T/tls.log"; exit 1; }
# a missing CA file is refused at start, with its name
"$FBCD" worker --database-url "$URL" --data-dir "$T/data3" --ca-file "$T/tls/none.pem" >"$T/noca.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "none.pem.*cannot read the CA file" "$T/noca.log" && pass || fail "missing --ca-file: exit $rc, $(cat "$T/noca.log")"
FBCD_ADMIN_TOKEN=$ADMIN "$FBCD" serve --listen "127.0.0.1:$PORT" --database-url "$URL" \
	--data-dir "$T/data" --workers 1 --job-poll-ms 200 --ca-file "$T/tls/ca.pem" >"$T/serve.log" 2>&1 &
SERVE_PID=$!
i=0
until curl -sf "$B/healthz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: serve did not start"; cat "$T/serve.log"; exit 1; }
	sleep 0.1
done
# the second replica shares the database (its own data directory: mirrors are per process)
"$FBCD" worker --database-url "$URL" --data-dir "$T/data2" --workers 1 --job-poll-ms 200 \
	--ca-file "$T/tls/ca.pem" >"$T/worker.log" 2>&1 &
WORKER_PID=$!

c=$(curl -s -o "$T/body" -w '%{http_code}' -X POST -H "Authorization: Bearer $ADMIN" \
	-H 'Content-Type: application/json' \
	--data-binary "{\"name\": \"plain\", \"url\": \"$GURL\", \"branch\": \"main\", \"pollSeconds\": 1}" \
	"$B/v1/repositories")
[ "$c" = 201 ] && pass || fail "create repository: $c $(cat "$T/body")"

revs() { sql "SELECT count(*) FROM revisions r JOIN catalogs c ON c.id = r.catalog_id WHERE c.name = 'plain'"; }
wait_revs() { # N: wait up to 30 s for N revisions
	i=0
	while [ "$(revs)" != "$1" ]; do
		i=$((i + 1)); [ $i -gt 300 ] && return 1
		sleep 0.1
	done
}
checkout() { rm -rf "$T/co" && mkdir "$T/co" && git -C "$W" archive HEAD | tar -x -C "$T/co"; }

# --- first poll: the branch is new, so it is ingested
wait_revs 1 && pass || fail "no revision after polling: jobs $(sql "SELECT kind, state, error FROM jobs ORDER BY id")"
[ "$(sql "SELECT commit FROM revisions WHERE number = 1")" = "$C1" ] && pass || fail "revision 1 commit"
grep -q "POST /plain.git/git-upload-pack 200 -" "$T/git-http.log" && pass || fail "no fetch over HTTP: $(cat "$T/git-http.log")"

# --- a pushed commit is found by the next poll: one more revision, its commit
sed -i 's/^description: .*/description: changed and found by polling/' "$W/example-operator/catalog.yaml"
grep -q "found by polling" "$W/example-operator/catalog.yaml" || fail "the test could not edit the example catalog"
git -C "$W" commit -q -am two && git -C "$W" push -q origin main
C2=$(git -C "$W" rev-parse HEAD)
wait_revs 2 && pass || fail "the pushed commit was not ingested: $(sql "SELECT kind, state, error, result FROM jobs ORDER BY id")"
[ "$(sql "SELECT commit FROM revisions WHERE number = 2")" = "$C2" ] && pass || fail "revision 2 commit"
# let the ingest finish writing (the revision is stored before the job completes)
i=0
while [ "$(sql "SELECT count(*) FROM jobs WHERE kind = 'repo.ingest' AND state IN ('queued', 'running')")" != 0 ]; do
	i=$((i + 1)); [ $i -gt 100 ] && break; sleep 0.1
done
curl -s "$B/catalogs/plain/api/v1/all" >"$T/all.jsonl"
checkout
"$FBCD" render "$T/co" >"$T/render.jsonl"
cmp -s "$T/all.jsonl" "$T/render.jsonl" && pass || fail "stored catalog differs from fbcd render of the pushed commit"

# --- several polls later: nothing doubled across the two replicas
sleep 3
[ "$(sql "SELECT count(*) FROM jobs WHERE kind = 'repo.ingest'")" = 2 ] && pass ||
	fail "ingests: $(sql "SELECT id, payload, state FROM jobs WHERE kind = 'repo.ingest'")"
[ "$(revs)" = 2 ] && pass || fail "revisions after idle polls: $(revs)"
n=$(sql "SELECT count(*) FROM jobs WHERE kind = 'repo.poll' AND state = 'succeeded'")
[ "$n" -ge 3 ] && pass || fail "only $n polls succeeded"
[ "$(sql "SELECT count(*) FROM jobs WHERE kind = 'repo.poll' AND state IN ('queued', 'running')")" -le 1 ] && pass || fail "more than one live poll"
# polls are spaced by pollSeconds: never two finished within 0.5 s of each other
[ "$(sql "SELECT count(*) FROM (SELECT finished_at - lag(finished_at) OVER (ORDER BY finished_at) AS d FROM jobs WHERE kind = 'repo.poll' AND state = 'succeeded') x WHERE d < interval '0.5 s'")" = 0 ] &&
	pass || fail "polls closer than pollSeconds: $(sql "SELECT id, worker, created_at, finished_at FROM jobs WHERE kind = 'repo.poll' ORDER BY id")"
[ "$(sql "SELECT result->>'moved' FROM jobs WHERE kind = 'repo.poll' AND state = 'succeeded' ORDER BY id DESC LIMIT 1")" = false ] &&
	pass || fail "the last poll should see nothing new"
[ "$(sql "SELECT count(DISTINCT worker) FROM jobs WHERE kind = 'repo.poll'")" -ge 1 ] && pass || fail "no worker"
curl -s "$B/v1/repositories/plain" | python3 -c "import json,sys; d=json.load(sys.stdin); assert d['fetchedAt'] and d['headCommit'] == '$C2', d" &&
	pass || fail "fetchedAt/headCommit"

curl -s "$B/metrics" | grep -q '^fbcd_git_fetch_duration_seconds_count{repository="plain"} [1-9]' &&
	pass || fail "fbcd_git_fetch_duration_seconds{repository} not observed"

# --- a remote that needs a token (HTTP basic, as forges take access tokens):
# refused without the repository's token, fetched with it; the token is in
# no log, job record or API answer
printf 'poll-git-token-71b0c3e9\n' >"$T/token"
for spec in "private-none:" "private-tok:\"credentials\": {\"tokenFile\": \"$T/token\"},"; do
	name=${spec%%:*} cred=${spec#*:}
	c=$(curl -s -o "$T/body" -w '%{http_code}' -X POST -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
		--data-binary "{\"name\": \"$name\", \"url\": \"http://127.0.0.1:$(cat "$T/gitport")/private/plain.git\", $cred \"pollSeconds\": 1}" "$B/v1/repositories")
	[ "$c" = 201 ] && pass || fail "create $name: $c $(cat "$T/body")"
done
i=0
until [ "$(sql "SELECT count(*) FROM revisions r JOIN catalogs c ON c.id = r.catalog_id WHERE c.name = 'private-tok'")" = 1 ] &&
	[ "$(sql "SELECT count(*) FROM jobs WHERE repository = 'private-none' AND kind = 'repo.poll' AND state = 'failed'")" -ge 1 ]; do
	i=$((i + 1)); [ $i -gt 300 ] && break; sleep 0.1
done
[ "$(sql "SELECT count(*) FROM revisions r JOIN catalogs c ON c.id = r.catalog_id WHERE c.name = 'private-tok'")" = 1 ] && pass ||
	fail "the token did not open the private remote: $(sql "SELECT kind, state, error FROM jobs WHERE repository = 'private-tok'")"
[ "$(sql "SELECT count(*) FROM catalogs WHERE name = 'private-none'")" = 0 ] &&
	sql "SELECT error FROM jobs WHERE repository = 'private-none' AND state = 'failed' LIMIT 1" | grep -qi "auth\|401\|fetch" && pass ||
	fail "without a token: $(sql "SELECT kind, state, error FROM jobs WHERE repository = 'private-none'")"
grep -q "git-upload-pack 200 x-access-token" "$T/git-http.log" && pass || fail "the token was not sent as x-access-token"
curl -s -X PATCH -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' --data-binary '{"pollSeconds": 0}' "$B/v1/repositories/private-none" >/dev/null
curl -s -X PATCH -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' --data-binary '{"pollSeconds": 0}' "$B/v1/repositories/private-tok" >/dev/null
"$PG_BINDIR/pg_dump" "$URL" >"$T/dump.sql" 2>/dev/null
curl -s "$B/v1/jobs?repository=private-tok" >"$T/jobs.json"
! grep -q poll-git-token-71b0c3e9 "$T/serve.log" "$T/worker.log" "$T/dump.sql" "$T/jobs.json" && pass || fail "the token leaked"

# --- HTTPS with a token: the server's certificate is checked against --ca-file;
# a certificate from no trusted CA fails the poll and stores nothing
GIT_HTTP_TOKEN=poll-git-token-71b0c3e9 GIT_HTTP_TLS="$T/tls/srv.pem:$T/tls/srv.key" \
	python3 "$LIB/git-http.py" "$T/srv" "$T/tlsport" "$T/git-https.log" &
GIT_PID="$GIT_PID $!"
GIT_HTTP_TLS="$T/tls/rogue.pem:$T/tls/rogue.key" python3 "$LIB/git-http.py" "$T/srv" "$T/rogueport" "$T/git-rogue.log" &
GIT_PID="$GIT_PID $!"
i=0
until [ -s "$T/tlsport" ] && [ -s "$T/rogueport" ]; do i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: https servers did not start"; exit 1; }; sleep 0.1; done
git -c http.sslCAInfo="$T/tls/ca.pem" ls-remote "https://localhost:$(cat "$T/rogueport")/plain.git" >/dev/null 2>&1 &&
	fail "the test's rogue certificate is trusted by git: the test proves nothing" || pass
for spec in "tls-tok:$(cat "$T/tlsport")/private" "tls-rogue:$(cat "$T/rogueport")"; do
	name=${spec%%:*} rest=${spec#*:}
	c=$(curl -s -o "$T/body" -w '%{http_code}' -X POST -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
		--data-binary "{\"name\": \"$name\", \"url\": \"https://localhost:$rest/plain.git\", \"credentials\": {\"tokenFile\": \"$T/token\"}, \"pollSeconds\": 1}" "$B/v1/repositories")
	[ "$c" = 201 ] && pass || fail "create $name: $c $(cat "$T/body")"
done
i=0
until [ "$(sql "SELECT count(*) FROM revisions r JOIN catalogs c ON c.id = r.catalog_id WHERE c.name = 'tls-tok'")" = 1 ] &&
	[ "$(sql "SELECT count(*) FROM jobs WHERE repository = 'tls-rogue' AND kind = 'repo.poll' AND state = 'failed'")" -ge 1 ]; do
	i=$((i + 1)); [ $i -gt 300 ] && break; sleep 0.1
done
[ "$(sql "SELECT count(*) FROM revisions r JOIN catalogs c ON c.id = r.catalog_id WHERE c.name = 'tls-tok'")" = 1 ] &&
	[ "$(sql "SELECT commit FROM revisions r JOIN catalogs c ON c.id = r.catalog_id WHERE c.name = 'tls-tok'")" = "$C1" ] && pass ||
	fail "no revision over HTTPS: $(sql "SELECT kind, state, error FROM jobs WHERE repository = 'tls-tok'")"
grep -q "POST /private/plain.git/git-upload-pack 200 x-access-token" "$T/git-https.log" && pass || fail "no authenticated fetch over HTTPS: $(cat "$T/git-https.log")"
[ "$(sql "SELECT count(*) FROM catalogs WHERE name = 'tls-rogue'")" = 0 ] &&
	sql "SELECT error FROM jobs WHERE repository = 'tls-rogue' AND state = 'failed' LIMIT 1" | grep -qi "certificate\|ssl\|tls" && pass ||
	fail "an untrusted certificate: $(sql "SELECT kind, state, error FROM jobs WHERE repository = 'tls-rogue'")"
! grep -q "upload-pack" "$T/git-rogue.log" 2>/dev/null && pass || fail "fetched from the untrusted server: $(cat "$T/git-rogue.log")"
for name in tls-tok tls-rogue; do
	curl -s -X PATCH -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' --data-binary '{"pollSeconds": 0}' "$B/v1/repositories/$name" >/dev/null
done
! grep -q poll-git-token-71b0c3e9 "$T/serve.log" "$T/worker.log" && pass || fail "the token leaked over HTTPS"

# --- pollSeconds 0: polling stops (the live poll, if any, may still run once)
c=$(curl -s -o "$T/body" -w '%{http_code}' -X PATCH -H "Authorization: Bearer $ADMIN" \
	-H 'Content-Type: application/json' --data-binary '{"pollSeconds": 0}' "$B/v1/repositories/plain")
[ "$c" = 200 ] && pass || fail "PATCH pollSeconds: $c $(cat "$T/body")"
sleep 2.5
n1=$(sql "SELECT count(*) FROM jobs WHERE kind = 'repo.poll'")
sleep 3
[ "$(sql "SELECT count(*) FROM jobs WHERE kind = 'repo.poll'")" = "$n1" ] && pass || fail "still polling with pollSeconds 0"

# --- a remote that goes away: the poll fails, the service stays up, nothing is stored
c=$(curl -s -o "$T/body" -w '%{http_code}' -X PATCH -H "Authorization: Bearer $ADMIN" \
	-H 'Content-Type: application/json' --data-binary '{"pollSeconds": 1, "url": "http://127.0.0.1:9/nothing.git"}' "$B/v1/repositories/plain")
[ "$c" = 200 ] && pass || fail "PATCH url: $c $(cat "$T/body")"
i=0
until [ "$(sql "SELECT count(*) FROM jobs WHERE kind = 'repo.poll' AND state = 'failed'")" -ge 1 ]; do
	i=$((i + 1)); [ $i -gt 200 ] && break; sleep 0.1
done
[ "$(sql "SELECT count(*) FROM jobs WHERE kind = 'repo.poll' AND state = 'failed'")" -ge 1 ] && pass || fail "an unreachable remote did not fail the poll"
[ "$(revs)" = 2 ] && kill -0 "$SERVE_PID" && kill -0 "$WORKER_PID" && pass || fail "service down or revisions changed"
stop_clean "$SERVE_PID" "$T/serve.log"; SERVE_PID=
stop_clean "$WORKER_PID" "$T/worker.log"; WORKER_PID=
finish
