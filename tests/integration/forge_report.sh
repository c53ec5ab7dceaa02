#!/bin/sh
# forge.report and pr.merge against a local stand-in for GitHub and GitLab
# that records every request (tests/lib/fake-forge.py), on real pull requests
# of history.bundle: check runs created in_progress then completed with their
# annotations (50 a request), commit statuses, GitLab statuses and notes, one
# summary comment edited in place, 429 + Retry-After honoured, merges with
# the checked sha as precondition and a refused merge said in the comment;
# the forge token is sent and never stored or logged.
#   forge_report.sh FBCD HISTORY_BUNDLE
FBCD=$1 BUNDLE=$2
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$HERE/../lib
[ -f "$BUNDLE" ] || skip "no $BUNDLE"
command -v git >/dev/null || skip "git is not installed"
command -v curl >/dev/null || skip "curl is not installed"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@x GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@x
export GIT_CONFIG_NOSYSTEM=1

PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-pg.XXXXXX")
SERVE_PID= FORGE_PID=
cleanup() {
	for p in $SERVE_PID $FORGE_PID; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	if [ -f "$PGDIR/url" ]; then sh "$LIB/pg-stop.sh" "$PGDIR"; else rm -rf "$PGDIR"; fi
	rm -rf "$T"
}
trap cleanup EXIT; [ -n "${KEEP:-}" ] && trap - EXIT
URL=$(sh "$LIB/pg-start.sh" "$PGDIR") || { [ $? -eq 77 ] && skip "no PostgreSQL"; echo "FAIL: pg-start"; exit 1; }
. "$LIB/pg-common.sh"
sql() { "$PG_BINDIR/psql" -X -q -t -A -v ON_ERROR_STOP=1 "$URL" -c "$1"; }

F=$T/forge.git
git clone -q --mirror "$BUNDLE" "$F" || skip "cannot clone $BUNDLE"
for pr in 10886 10888; do git -C "$F" update-ref "refs/merge-requests/$pr/head" "refs/pull/$pr/head"; done
open_pr() { git -C "$F" update-ref refs/heads/main "refs/pull/$1/head^"; }

REC=$T/requests.jsonl CTL=$T/control.json
: >"$REC"
python3 "$LIB/fake-forge.py" "$T/forgeport" "$REC" "$CTL" &
FORGE_PID=$!
i=0
until [ -s "$T/forgeport" ]; do i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: fake forge did not start"; exit 1; }; sleep 0.1; done
API=http://127.0.0.1:$(cat "$T/forgeport")
# GitLab is played over HTTPS (a test CA; fbcd serve --ca-file trusts it),
# recording into the same file
command -v openssl >/dev/null || skip "openssl is not installed"
mkdir -p "$T/tls" && (
	cd "$T/tls" || exit 1
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >ext
	openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=fbcd-test-ca &&
		openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=localhost &&
		openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile ext
) >"$T/tls.log" 2>&1 || { echo "FAIL: openssl"; cat "$T/tls.log"; exit 1; }
FAKE_FORGE_TLS="$T/tls/srv.pem:$T/tls/srv.key" python3 "$LIB/fake-forge.py" "$T/forgeport-tls" "$REC" &
FORGE_PID="$FORGE_PID $!"
i=0
until [ -s "$T/forgeport-tls" ]; do i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: TLS fake forge did not start"; exit 1; }; sleep 0.1; done
API_TLS=https://localhost:$(cat "$T/forgeport-tls")

GH_TOKEN=ghp-forge-token-3c9e7a51d2b84f60 GL_TOKEN=glpat-forge-token-8b1d4e7f2a6c93
printf '%s\n' "$GH_TOKEN" >"$T/gh-token"
SECRET=forge-webhook-secret-62d0a1
cat >"$T/fbcd.yaml" <<YAML
repositories:
  - name: gh
    url: file://$F
    forge: {kind: github, project: org/community, api: "$API", report: checks}
    credentials: {tokenFile: $T/gh-token, webhookSecretEnv: WH_SECRET}
    pollSeconds: 0
    merge: auto
  - name: ghs
    url: file://$F
    forge: {kind: github, project: org/statuses, api: "$API", report: statuses}
    credentials: {tokenFile: $T/gh-token, webhookSecretEnv: WH_SECRET}
    pollSeconds: 0
  - name: gl
    url: file://$F
    forge: {kind: gitlab, project: group/sub, api: "$API_TLS/api/v4"}
    credentials: {tokenEnv: GL_TOKEN, webhookSecretEnv: WH_SECRET}
    pollSeconds: 0
YAML
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
B=http://127.0.0.1:$PORT
GL_TOKEN=$GL_TOKEN WH_SECRET=$SECRET "$FBCD" serve --config "$T/fbcd.yaml" --listen "127.0.0.1:$PORT" \
	--database-url "$URL" --data-dir "$T/data" --workers 2 --job-poll-ms 200 --retry-base-ms 200 \
	--public-url https://fbcd.example.com --ca-file "$T/tls/ca.pem" >"$T/serve.log" 2>&1 &
SERVE_PID=$!
i=0
until curl -sf "$B/healthz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: serve did not start"; cat "$T/serve.log"; exit 1; }
	sleep 0.1
done

gh_deliver() { # EVENT DELIVERY FILE -> status
	sig=$(python3 -c "import hmac,hashlib,sys; print('sha256='+hmac.new(sys.argv[1].encode(), open(sys.argv[2],'rb').read(), hashlib.sha256).hexdigest())" "$SECRET" "$3")
	curl -s -o "$T/body" -w '%{http_code}' -X POST -H "X-GitHub-Event: $1" -H "X-GitHub-Delivery: $2" \
		-H "X-Hub-Signature-256: $sig" --data-binary "@$3" "$B/v1/webhooks/github"
}
gh_pr() { # PROJECT N AUTHOR DELIVERY [ACTION] -> job id
	cat >"$T/pr.json" <<JSON
{"action": "${5:-opened}", "number": $2, "pull_request": {"number": $2, "title": "pr $2", "user": {"login": "$3"},
 "head": {"sha": "$(git -C "$F" rev-parse "refs/pull/$2/head")", "ref": "pr-$2"}, "base": {"sha": "$(git -C "$F" rev-parse main)", "ref": "main"}},
 "repository": {"full_name": "$1"}, "sender": {"login": "$3"}}
JSON
	c=$(gh_deliver pull_request "$4" "$T/pr.json")
	[ "$c" = 202 ] || { fail "pull_request #$2: $c $(cat "$T/body")"; return; }
	python3 -c "import json; print(json.load(open('$T/body'))['job'])"
}
gh_comment() { # PROJECT N BODY LOGIN DELIVERY
	cat >"$T/c.json" <<JSON
{"action": "created", "issue": {"number": $2, "pull_request": {"url": "x"}}, "comment": {"body": "$3", "user": {"login": "$4"}},
 "repository": {"full_name": "$1"}, "sender": {"login": "$4"}}
JSON
	c=$(gh_deliver issue_comment "$5" "$T/c.json")
	[ "$c" = 202 ] || fail "comment #$2: $c $(cat "$T/body")"
}
# settle: wait until no job is queued or running
settle() {
	i=0
	while [ "$(sql "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")" != 0 ]; do
		i=$((i + 1)); [ $i -gt 900 ] && { fail "jobs did not settle: $(sql "SELECT id, kind, state, error FROM jobs WHERE state IN ('queued','running')")"; return; }
		sleep 0.1
	done
}
# q PYTHON-EXPR: evaluated with R = the recorded requests (list of dicts)
q() { python3 -c "import json,re; R=[json.loads(l) for l in open('$REC')]; print($1)"; }
mark() { wc -l <"$REC"; }
since() { python3 -c "import json; R=[json.loads(l) for l in open('$REC')][$1:]; print(json.dumps(R))" >"$T/since.json"; }
s() { python3 -c "import json,re; R=json.load(open('$T/since.json')); print($1)"; }

# --- 1. GitHub check runs on a real graph break (#9631, G5), first create answered 429 once
echo '{"fail": [{"method": "POST", "path": "/check-runs$", "status": 429, "retryAfter": 1, "times": 1}]}' >"$CTL"
open_pr 9631
M=$(mark)
gh_pr org/community 9631 someone g-1 >/dev/null
settle
since "$M"
[ "$(s "sum(1 for r in R if r['method']=='POST' and r['path']=='/repos/org/community/check-runs')")" = 10 ] && pass || fail "check-run creations (9 + the 429): $(s "[(r['method'], r['path']) for r in R]")"
[ "$(s "sorted(set(r['body']['name'] for r in R if r['method']=='POST' and r['path'].endswith('/check-runs')))")" = "['fbcd/bundles', 'fbcd/catalogs', 'fbcd/changes', 'fbcd/crds', 'fbcd/graph', 'fbcd/permissions', 'fbcd/policy', 'fbcd/resolve', 'fbcd/templates']" ] && pass || fail "check-run names"
[ "$(s "all(r['body']['status']=='in_progress' and r['body']['head_sha']=='$(git -C "$F" rev-parse refs/pull/9631/head)' and r['body']['details_url']=='https://fbcd.example.com/v1/repositories/gh/pulls/9631' for r in R if r['method']=='POST' and r['path'].endswith('/check-runs'))")" = True ] && pass || fail "in_progress runs"
[ "$(s "sum(1 for r in R if r['method']=='PATCH' and re.search('/check-runs/[0-9]+$', r['path']) and r['body'].get('status')=='completed')")" = 9 ] && pass || fail "completed runs: $(s "[(r['method'], r['path']) for r in R]")"
[ "$(s "[ (r['body']['conclusion'], [a['title'] for a in r['body']['output']['annotations']][:1], r['body']['output']['annotations'][0]['path'][:10]) for r in R if r['method']=='PATCH' and r['body'].get('output',{}).get('annotations') and any(a['title'].startswith('graph/') for a in r['body']['output']['annotations'])][0]")" = "('failure', ['graph/G5'], 'catalogs/v')" ] &&
	pass || fail "graph run: $(s "[r['body'] for r in R if r['method']=='PATCH'][:3]")"
[ "$(s "all(r['headers'].get('Authorization')=='Bearer $GH_TOKEN' and r['headers'].get('X-GitHub-Api-Version')=='2022-11-28' for r in R)")" = True ] && pass || fail "Authorization header"
[ "$(s "sum(1 for r in R if r['method']=='POST' and r['path']=='/repos/org/community/issues/9631/comments')")" = 1 ] && pass || fail "summary comment not created once"
s "[r['body']['body'] for r in R if r['path'].endswith('/issues/9631/comments')][0]" >"$T/comment.md"
grep -q '^| graph | ❌ failure |' "$T/comment.md" && grep -q 'fbcd:summary' "$T/comment.md" && grep -q 'https://fbcd.example.com/v1/repositories/gh/pulls/9631' "$T/comment.md" &&
	pass || fail "comment: $(head -c 800 "$T/comment.md")"
[ "$(s "sum(1 for r in R if r['path'].endswith('/merge'))")" = 0 ] && pass || fail "a failing pull request was merged"
[ "$(sql "SELECT count(*) FROM jobs WHERE kind = 'forge.report' AND state = 'succeeded'")" = 2 ] && pass || fail "report jobs: $(sql "SELECT state, error FROM jobs WHERE kind = 'forge.report'")"

# --- 2. /recheck: the same comment edited in place, runs completed again
M=$(mark)
gh_comment org/community 9631 /recheck someone g-2
settle
since "$M"
CID=$(sql "SELECT comment_id FROM pulls WHERE repository = 'gh' AND number = 9631")
[ "$(s "[(r['method'], r['path']) for r in R if 'comments' in r['path']]")" = "[('PATCH', '/repos/org/community/issues/comments/$CID')]" ] && pass || fail "comment not edited in place: $(s "[(r['method'], r['path']) for r in R]")"

# --- 3. more than 50 annotations: a stored result with 120, reported in batches of 50
python3 - "$T/big.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1])) if False else None
ann = [{"path": "catalogs/v4.20/x/catalog.yaml", "line": i + 1, "level": "failure", "code": "V%d" % i, "message": "finding %d" % i} for i in range(120)]
doc = {"conclusion": "failure", "head": "0" * 40, "checks": [{"id": "catalogs", "conclusion": "failure", "summary": "120 findings", "annotations": ann}]}
json.dump(doc, open(sys.argv[1], "w"))
PY
H=$(git -C "$F" rev-parse refs/pull/9631/head)
CK=$(sql "INSERT INTO pull_checks (repository, number, head_sha, conclusion, result, job_id) VALUES ('gh', 9631, '$H', 'failure', '$(cat "$T/big.json")', -1) RETURNING id" | head -1)
M=$(mark)
sql "INSERT INTO jobs (kind, key, repository, payload) VALUES ('forge.report', 'report:gh:9631:$CK', 'gh', '{\"repository\": \"gh\", \"number\": 9631, \"sha\": \"$H\", \"phase\": \"final\", \"pullCheck\": $CK}'); NOTIFY fbcd_jobs, 'forge.report'" >/dev/null
settle
since "$M"
[ "$(s "[len(r['body']['output']['annotations']) for r in R if r['method']=='PATCH' and '/check-runs/' in r['path']]")" = "[50, 50, 20]" ] && pass || fail "annotation batches: $(s "[(r['path'], len(r['body'].get('output',{}).get('annotations',[]))) for r in R]")"

# --- 4. statuses mode and the merge: #10888 by a ci.yaml reviewer passes every check
open_pr 10888
M=$(mark)
gh_pr org/statuses 10888 SebTardif s-1 >/dev/null
settle
since "$M"
SHA=$(git -C "$F" rev-parse refs/pull/10888/head)
[ "$(s "sorted(set((r['body']['state'], r['body']['context'][:5]) for r in R if r['path']=='/repos/org/statuses/statuses/$SHA'))")" = "[('pending', 'fbcd/'), ('success', 'fbcd/')]" ] && pass || fail "statuses: $(s "[(r['path'], r['body']) for r in R][:4]")"
[ "$(s "sum(1 for r in R if r['path'].endswith('/statuses/$SHA') and len(r['body']['description']) <= 140 and r['body']['target_url'].endswith('/ghs/pulls/10888'))")" = 18 ] && pass || fail "18 statuses with description and target_url"
[ "$(s "sum(1 for r in R if r['path'].endswith('/merge'))")" = 0 ] && pass || fail "merge: off repository merged"
M=$(mark)
gh_pr org/community 10888 SebTardif g-3 >/dev/null
settle
since "$M"
[ "$(s "[(r['method'], r['path'], r['body']) for r in R if r['path'].endswith('/merge')]")" = "[('PUT', '/repos/org/community/pulls/10888/merge', {'sha': '$SHA'})]" ] && pass || fail "merge request: $(s "[(r['method'], r['path']) for r in R]")"
[ "$(sql "SELECT state || ' ' || merge_sha FROM pulls WHERE repository = 'gh' AND number = 10888")" = "merged $(printf 'a%.0s' $(seq 40))" ] && pass || fail "merged state: $(sql "SELECT state, merge_sha, merge_error FROM pulls WHERE repository = 'gh' AND number = 10888")"

# --- 5. a refused merge (the head moved: 409) is said in the comment, not retried
echo '{"fail": [{"method": "PUT", "path": "/pulls/10888/merge$", "status": 409, "times": 5, "body": {"message": "Head branch was modified. Review and try the merge again."}}]}' >"$CTL"
M=$(mark)
gh_comment org/community 10888 /recheck SebTardif g-4
settle
since "$M"
[ "$(s "sum(1 for r in R if r['path'].endswith('/merge'))")" = 1 ] && pass || fail "refused merge retried: $(s "[(r['method'], r['path']) for r in R]")"
[ "$(s "'Head branch was modified' in [r for r in R if 'comments' in r['path']][-1]['body']['body']")" = True ] && pass || fail "merge refusal not in the comment"
sql "SELECT merge_error FROM pulls WHERE repository = 'gh' AND number = 10888" | grep -q "409" && pass || fail "merge_error not recorded"
[ "$(sql "SELECT state FROM jobs WHERE kind = 'pr.merge' ORDER BY id DESC LIMIT 1")" = succeeded ] && pass || fail "refused merge job state"

# --- 6. GitLab: statuses, a note, the merge through the MR API (PRIVATE-TOKEN); MR 10886
# adds a bundle of a template-managed package without its catalogs, so `catalogs` is
# skipped (GitLab state "skipped")
echo '{}' >"$CTL"
open_pr 10886
SHA=$(git -C "$F" rev-parse refs/pull/10886/head)
cat >"$T/mr.json" <<JSON
{"object_kind": "merge_request", "user": {"username": "someone"}, "project": {"id": 42, "path_with_namespace": "group/sub"},
 "object_attributes": {"iid": 10886, "action": "open", "title": "mr", "target_branch": "main", "source_branch": "x",
 "last_commit": {"id": "$SHA"}, "author": {"username": "someone"}}}
JSON
M=$(mark)
c=$(curl -s -o "$T/body" -w '%{http_code}' -X POST -H "X-Gitlab-Event: Merge Request Hook" -H "X-Gitlab-Token: $SECRET" \
	-H "X-Gitlab-Event-UUID: gl-1" --data-binary "@$T/mr.json" "$B/v1/webhooks/gitlab")
[ "$c" = 202 ] && pass || fail "GitLab hook: $c $(cat "$T/body")"
settle
since "$M"
[ "$(s "sorted(set(r['body']['state'] for r in R if r['path']=='/api/v4/projects/group%2Fsub/statuses/$SHA'))")" = "['pending', 'running', 'skipped', 'success']" ] &&
	pass || fail "GitLab statuses (running; then success, skipped for catalogs, pending for permissions): $(s "sorted(set(r['body']['state'] for r in R if 'statuses' in r['path']))")"
[ "$(s "all(r['headers'].get('PRIVATE-TOKEN')=='$GL_TOKEN' and 'Authorization' not in r['headers'] for r in R)")" = True ] && pass || fail "PRIVATE-TOKEN"
[ "$(s "[(r['method'], r['path']) for r in R if 'notes' in r['path']]")" = "[('POST', '/api/v4/projects/group%2Fsub/merge_requests/10886/notes')]" ] && pass || fail "GitLab note: $(s "[(r['method'], r['path']) for r in R]")"
[ "$(s "sum(1 for r in R if r['body'] and r['body'].get('name','').startswith('fbcd/'))")" -ge 9 ] && pass || fail "GitLab status names"

# --- metrics of the pipeline
curl -s "$B/metrics" >"$T/metrics.txt"
grep -q '^fbcd_pr_check_duration_seconds_count{check="graph"} [1-9]' "$T/metrics.txt" && pass || fail "fbcd_pr_check_duration_seconds{check}"
grep -q '^fbcd_webhook_deliveries_total{forge="github",event="pull_request",result="accepted"} 3' "$T/metrics.txt" && pass || fail "fbcd_webhook_deliveries_total: $(grep webhook_deliveries "$T/metrics.txt")"
grep -q '^fbcd_jobs{kind="forge.report",state="succeeded"} [1-9]' "$T/metrics.txt" && pass || fail "fbcd_jobs"

# --- 7. the tokens are in no log, job record or database dump
"$PG_BINDIR/pg_dump" "$URL" >"$T/dump.sql" 2>/dev/null || fail "pg_dump"
for tok in "$GH_TOKEN" "$GL_TOKEN"; do
	! grep -q -- "$tok" "$T/serve.log" "$T/dump.sql" && pass || fail "a token leaked into the log or the database"
done
grep -q 'forge' "$T/dump.sql" && pass || fail "dump holds nothing (the check above would prove nothing)"
kill -0 "$SERVE_PID" && pass || fail "server died"
stop_clean "$SERVE_PID" "$T/serve.log"; SERVE_PID=
finish
