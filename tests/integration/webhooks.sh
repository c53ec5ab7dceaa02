#!/bin/sh
# Repositories and forge webhooks end to end: repositories through the API
# (admin writes, credentials as references only), GitHub deliveries signed
# with X-Hub-Signature-256 and GitLab ones with X-Gitlab-Token sent with
# curl, 401 and nothing stored on a bad signature, 202 with the job enqueued,
# duplicates, superseded checks, 413 over 25 MiB; finally the known secrets
# are searched for in a pg_dump, the server log and every response.
#   webhooks.sh FBCD
FBCD=$1
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$HERE/../lib
command -v curl >/dev/null || skip "curl is not installed"

PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-pg.XXXXXX")
SERVE_PID=
cleanup() {
	[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
	if [ -f "$PGDIR/url" ]; then sh "$LIB/pg-stop.sh" "$PGDIR"; else rm -rf "$PGDIR"; fi
	rm -rf "$T"
}
trap cleanup EXIT
URL=$(sh "$LIB/pg-start.sh" "$PGDIR") || { [ $? -eq 77 ] && skip "no PostgreSQL"; echo "FAIL: pg-start"; exit 1; }
. "$LIB/pg-common.sh"
sql() { "$PG_BINDIR/psql" -X -q -t -A -v ON_ERROR_STOP=1 "$URL" -c "$1"; }

GH_SECRET=gh-webhook-secret-7f3a9c21d4e8b6
GL_SECRET=gl-webhook-token-5b8e2d1f9a7c43
printf '%s\n' "$GL_SECRET" >"$T/gl-secret"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ADMIN=it-admin-token-0123456789abcdef
B=http://127.0.0.1:$PORT
WH_SECRET=$GH_SECRET FBCD_ADMIN_TOKEN=$ADMIN "$FBCD" serve --listen "127.0.0.1:$PORT" \
	--database-url "$URL" --data-dir "$T/data" --workers 0 --access-log >"$T/serve.log" 2>&1 &
SERVE_PID=$!
i=0
until curl -sf "$B/healthz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: serve did not start"; cat "$T/serve.log"; exit 1; }
	sleep 0.1
done
: >"$T/responses"
# req METHOD PATH [BODY [TOKEN]] -> status; body in $T/body (all kept in $T/responses)
req() {
	c=$(curl -s -o "$T/body" -w '%{http_code}' -X "$1" ${4:+-H "Authorization: Bearer $4"} \
		-H 'Content-Type: application/json' ${3:+--data-binary "$3"} "$B$2")
	cat "$T/body" >>"$T/responses"
	echo "$c"
}
jq_() { python3 -c "import json,sys; d=json.load(open('$T/body')); print($1)"; }
# gh EVENT DELIVERY FILE [SECRET|-]: a signed GitHub delivery -> status
gh() {
	sig=
	if [ "${4:-}" != - ]; then
		sig=$(python3 -c "import hmac,hashlib,sys; print('sha256='+hmac.new(sys.argv[1].encode(), open(sys.argv[2],'rb').read(), hashlib.sha256).hexdigest())" "${4:-$GH_SECRET}" "$3")
	fi
	c=$(curl -s -o "$T/body" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		-H "X-GitHub-Event: $1" -H "X-GitHub-Delivery: $2" ${sig:+-H "X-Hub-Signature-256: $sig"} \
		-H 'User-Agent: GitHub-Hookshot/abc' --data-binary "@$3" "$B/v1/webhooks/github")
	cat "$T/body" >>"$T/responses"
	echo "$c"
}
gl() { # EVENT UUID FILE TOKEN
	c=$(curl -s -o "$T/body" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		-H "X-Gitlab-Event: $1" -H "X-Gitlab-Event-UUID: $2" -H "X-Gitlab-Token: $4" \
		--data-binary "@$3" "$B/v1/webhooks/gitlab")
	cat "$T/body" >>"$T/responses"
	echo "$c"
}

# --- repositories
R1='{"name": "community", "url": "https://github.com/org/community-operators.git", "forge": {"kind": "github", "project": "org/community-operators", "api": "http://127.0.0.1:9/api"}, "credentials": {"tokenEnv": "GH_TOKEN", "webhookSecretEnv": "WH_SECRET"}, "pollSeconds": 0}'
[ "$(req POST /v1/repositories "$R1")" = 401 ] && pass || fail "create without a token not 401"
[ "$(req POST /v1/repositories "$R1" "$ADMIN")" = 201 ] && [ "$(jq_ "d['branch'], d['forge']['report'], d['credentials']['webhookSecretEnv'], d['origin']")" = "main checks WH_SECRET api" ] &&
	pass || fail "create repository: $(cat "$T/body")"
[ "$(req POST /v1/repositories "$R1" "$ADMIN")" = 409 ] && pass || fail "duplicate repository not 409"
[ "$(req POST /v1/repositories '{"name": "x", "url": "https://h/x", "credentials": {"token": "s3cr3t-value-here"}}' "$ADMIN")" = 400 ] &&
	! grep -q s3cr3t-value-here "$T/body" && pass || fail "a credential value was accepted or echoed: $(cat "$T/body")"
[ "$(req POST /v1/repositories '{"name": "Bad_Name", "url": "https://h/x"}' "$ADMIN")" = 400 ] && pass || fail "bad name not 400"
[ "$(req POST /v1/repositories '{"name": "x", "url": "ftp://h/x"}' "$ADMIN")" = 400 ] && pass || fail "bad url not 400"
[ "$(req POST /v1/repositories '{"name": "x", "url": "https://h/x", "credentials": {"tokenFile": "relative"}}' "$ADMIN")" = 400 ] && pass || fail "relative secret path not 400"
R2="{\"name\": \"gl\", \"url\": \"https://gitlab.example.com/group/catalog.git\", \"forge\": {\"kind\": \"gitlab\", \"project\": \"group/catalog\", \"report\": \"statuses\"}, \"credentials\": {\"webhookSecretFile\": \"$T/gl-secret\"}}"
[ "$(req POST /v1/repositories "$R2" "$ADMIN")" = 201 ] && pass || fail "create gitlab repository: $(cat "$T/body")"
[ "$(req PATCH /v1/repositories/gl '{"pollSeconds": 60, "forge": {"api": "http://127.0.0.1:9/api/v4"}}' "$ADMIN")" = 200 ] &&
	[ "$(jq_ "d['pollSeconds'], d['forge']['api'], d['forge']['kind']")" = "60 http://127.0.0.1:9/api/v4 gitlab" ] && pass || fail "patch: $(cat "$T/body")"
[ "$(req PATCH /v1/repositories/gl '{"name": "other"}' "$ADMIN")" = 400 ] && pass || fail "rename not refused"
[ "$(req PATCH /v1/repositories/gl '{"pollSeconds": -1}' "$ADMIN")" = 400 ] && pass || fail "bad patch not 400"
[ "$(req GET /v1/repositories)" = 200 ] && [ "$(jq_ "[r['name'] for r in d['items']]")" = "['community', 'gl']" ] && pass || fail "list repositories"
[ "$(req GET /v1/repositories/nope)" = 404 ] && pass || fail "unknown repository not 404"

# --- GitHub deliveries
H1=1111111111111111111111111111111111111111
H2=2222222222222222222222222222222222222222
BASE=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
pr() { # ACTION HEAD MERGED > file
	cat <<JSON
{"action": "$1", "number": 42, "pull_request": {"number": 42, "draft": false, "merged": $3, "title": "operator foo (1.2.0)", "user": {"login": "alice"}, "head": {"sha": "$2", "ref": "foo-1.2.0"}, "base": {"sha": "$BASE", "ref": "main"}}, "repository": {"full_name": "org/community-operators", "clone_url": "https://github.com/org/community-operators.git"}, "sender": {"login": "alice"}}
JSON
}
echo '{"zen": "Design for failure.", "hook_id": 1, "repository": {"full_name": "org/community-operators"}}' >"$T/ping.json"
[ "$(gh ping d-ping "$T/ping.json")" = 200 ] && [ "$(jq_ "d['status']")" = pong ] && pass || fail "ping: $(cat "$T/body")"
pr synchronize $H1 false >"$T/pr1.json"
[ "$(gh pull_request d-1 "$T/pr1.json" - )" = 401 ] && pass || fail "missing signature not 401"
[ "$(gh pull_request d-1 "$T/pr1.json" wrong-secret)" = 401 ] && pass || fail "bad signature not 401"
[ "$(sql "SELECT count(*) FROM webhook_deliveries") $(sql "SELECT count(*) FROM jobs")" = "0 0" ] && pass || fail "a refused delivery stored something"
[ "$(gh pull_request d-1 "$T/pr1.json")" = 202 ] && [ "$(jq_ "d['status']")" = accepted ] && pass || fail "signed pull_request: $(cat "$T/body")"
J1=$(jq_ "d['job']")
[ "$(req GET "/v1/jobs/$J1")" = 200 ] && [ "$(jq_ "d['kind'], d['key'], d['state'], d['payload']['head'], d['payload']['number'], d['payload']['author']")" = "pr.check pr:community:42 queued $H1 42 alice" ] &&
	pass || fail "pr.check job: $(cat "$T/body")"
[ "$(gh pull_request d-1 "$T/pr1.json")" = 200 ] && [ "$(jq_ "d['status']")" = duplicate ] && pass || fail "repeated delivery not a 200 no-op"
[ "$(sql "SELECT count(*) FROM webhook_deliveries WHERE delivery_id = 'd-1'") $(sql "SELECT count(*) FROM jobs WHERE kind = 'pr.check'")" = "1 1" ] && pass || fail "duplicate stored twice"
# tampered body with the old signature
sed 's/alice/mallory/' "$T/pr1.json" >"$T/pr1t.json"
sig=$(python3 -c "import hmac,hashlib,sys; print('sha256='+hmac.new(sys.argv[1].encode(), open(sys.argv[2],'rb').read(), hashlib.sha256).hexdigest())" "$GH_SECRET" "$T/pr1.json")
c=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "X-GitHub-Event: pull_request" -H "X-GitHub-Delivery: d-t" -H "X-Hub-Signature-256: $sig" --data-binary "@$T/pr1t.json" "$B/v1/webhooks/github")
[ "$c" = 401 ] && pass || fail "tampered body accepted ($c)"
# a newer head supersedes the queued check
pr synchronize $H2 false >"$T/pr2.json"
[ "$(gh pull_request d-2 "$T/pr2.json")" = 202 ] && pass || fail "second head"
J2=$(jq_ "d['job']")
[ "$(sql "SELECT state FROM jobs WHERE id = $J1") $(sql "SELECT state FROM jobs WHERE id = $J2")" = "cancelled queued" ] && pass || fail "older check not superseded"
[ "$(req GET "/v1/jobs/$J1")" = 200 ] && [ "$(jq_ "d['events'][-1]['reason']")" = "superseded by a newer job of the same key" ] && pass || fail "superseded reason: $(cat "$T/body")"
# /approve comment
cat >"$T/comment.json" <<JSON
{"action": "created", "issue": {"number": 42, "user": {"login": "alice"}, "pull_request": {"url": "https://api.github.com/repos/org/community-operators/pulls/42"}}, "comment": {"body": "LGTM\n/approve", "user": {"login": "bob"}}, "repository": {"full_name": "org/community-operators"}, "sender": {"login": "bob"}}
JSON
[ "$(gh issue_comment d-3 "$T/comment.json")" = 202 ] && pass || fail "approve comment"
[ "$(req GET /v1/repositories/community/pulls/42)" = 200 ] && [ "$(jq_ "d['approvals'], d['headSha'], d['state'], len(d['jobs'])")" = "['bob'] $H2 open 3" ] &&
	pass || fail "pull after /approve: $(cat "$T/body")"
sed 's#LGTM\\n/approve#just a comment#' "$T/comment.json" >"$T/comment2.json"
[ "$(gh issue_comment d-4 "$T/comment2.json")" = 202 ] && [ "$(jq_ "d['status']")" = ignored ] && pass || fail "plain comment not ignored"
# push to the tracked branch and to another one
echo "{\"ref\": \"refs/heads/main\", \"before\": \"$BASE\", \"after\": \"$H2\", \"repository\": {\"full_name\": \"org/community-operators\"}, \"sender\": {\"login\": \"bot\"}}" >"$T/push.json"
[ "$(gh push d-5 "$T/push.json")" = 202 ] && pass || fail "push"
J5=$(jq_ "d['job']")
[ "$(sql "SELECT kind || ' ' || key || ' ' || ordered::text FROM jobs WHERE id = $J5")" = "repo.ingest ingest:community:$H2 true" ] && pass || fail "ingest job"
sed 's#refs/heads/main#refs/heads/feature#' "$T/push.json" >"$T/push2.json"
[ "$(gh push d-6 "$T/push2.json")" = 202 ] && [ "$(jq_ "d['status']")" = ignored ] && pass || fail "push to another branch not ignored"
pr closed $H2 true >"$T/merged.json"
[ "$(gh pull_request d-7 "$T/merged.json")" = 202 ] && pass || fail "merged"
[ "$(sql "SELECT state FROM pulls WHERE number = 42")" = merged ] && pass || fail "pull not merged"
echo '{"action": "completed", "repository": {"full_name": "org/community-operators"}}' >"$T/other.json"
[ "$(gh check_run d-8 "$T/other.json")" = 202 ] && [ "$(jq_ "d['status']")" = ignored ] && pass || fail "unknown event not 202 ignored"
echo '{"repository": {"full_name": "someone/else"}, "zen": "x"}' >"$T/ping2.json"
[ "$(gh ping d-9 "$T/ping2.json")" = 401 ] && pass || fail "delivery for an unknown repository not 401"
[ "$(gh pull_request d-10 "$T/comment.json")" = 400 ] && pass || fail "pull_request without its fields not 400"
python3 -c "import sys; sys.stdout.write('{\"zen\": \"' + 'x' * (25 * 1024 * 1024) + '\"}')" >"$T/big.json"
[ "$(gh ping d-big "$T/big.json")" = 413 ] && pass || fail "26 MiB delivery not 413"

# --- GitLab deliveries
cat >"$T/mr.json" <<JSON
{"object_kind": "merge_request", "event_type": "merge_request", "user": {"username": "carol"}, "project": {"id": 7, "path_with_namespace": "group/catalog", "git_http_url": "https://gitlab.example.com/group/catalog.git"}, "object_attributes": {"iid": 5, "action": "open", "state": "opened", "draft": false, "source_branch": "foo", "target_branch": "main", "title": "Add foo", "last_commit": {"id": "$H1"}, "author": {"username": "carol"}}}
JSON
[ "$(gl "Merge Request Hook" u-1 "$T/mr.json" wrong)" = 401 ] && pass || fail "bad gitlab token not 401"
[ "$(gl "Merge Request Hook" u-1 "$T/mr.json" "$GL_SECRET")" = 202 ] && [ "$(jq_ "d['status']")" = accepted ] && pass || fail "merge request hook: $(cat "$T/body")"
[ "$(sql "SELECT key || ' ' || (payload->>'head') FROM jobs WHERE kind = 'pr.check' AND repository = 'gl'")" = "pr:gl:5 $H1" ] && pass || fail "gitlab pr.check"
[ "$(gl "Merge Request Hook" u-1 "$T/mr.json" "$GL_SECRET")" = 200 ] && pass || fail "gitlab duplicate"
cat >"$T/note.json" <<JSON
{"object_kind": "note", "user": {"username": "dave"}, "project": {"id": 7, "path_with_namespace": "group/catalog"}, "object_attributes": {"note": "/recheck", "noteable_type": "MergeRequest"}, "merge_request": {"iid": 5, "target_branch": "main", "last_commit": {"id": "$H1"}}}
JSON
[ "$(gl "Note Hook" u-2 "$T/note.json" "$GL_SECRET")" = 202 ] && [ "$(sql "SELECT count(*) FROM jobs WHERE repository = 'gl' AND kind = 'pr.check'")" = 2 ] && pass || fail "gitlab /recheck"
echo "{\"object_kind\": \"push\", \"ref\": \"refs/heads/main\", \"before\": \"$BASE\", \"after\": \"$H1\", \"user\": {\"username\": \"bot\"}, \"project\": {\"id\": 7, \"path_with_namespace\": \"group/catalog\"}}" >"$T/glpush.json"
[ "$(gl "Push Hook" u-3 "$T/glpush.json" "$GL_SECRET")" = 202 ] && [ "$(sql "SELECT count(*) FROM jobs WHERE key = 'ingest:gl:$H1'")" = 1 ] && pass || fail "gitlab push"

# --- no secret anywhere
"$PG_BINDIR/pg_dump" "$URL" >"$T/dump.sql" 2>&1 && pass || fail "pg_dump"
for f in "$T/dump.sql" "$T/serve.log" "$T/responses"; do
	if grep -q -e "$GH_SECRET" -e "$GL_SECRET" "$f"; then fail "a secret appears in $(basename "$f")"; else pass; fi
done
grep -q "webhookSecretEnv" "$T/dump.sql" || grep -q "WH_SECRET" "$T/dump.sql" && pass || fail "the reference itself should be stored"

[ "$(req DELETE /v1/repositories/gl "" "$ADMIN")" = 204 ] && [ "$(sql "SELECT count(*) FROM webhook_deliveries WHERE repository = 'gl'")" = 0 ] && pass || fail "delete repository"
kill -0 "$SERVE_PID" && pass || fail "server died"
finish
