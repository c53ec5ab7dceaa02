#!/bin/sh
# pr.check jobs end to end on real pull requests of community-operators'
# history (history.bundle): the repository is served over file:// with its
# refs/pull/N/head refs, `main` set to the parent of the pull request under
# test (as it was when the pull request was open); signed GitHub webhooks
# enqueue pr.check; `fbcd worker` runs them; results are read back through
# `GET /v1/repositories/{r}/pulls/{n}` and compared, check by check and
# finding by finding, with `fbcd pr check` on the command line. Also: a
# newer head supersedes the queued check (only the newest is stored),
# /approve by a ci.yaml reviewer turns `permissions` green, /recheck re-runs.
#   pr_jobs.sh FBCD HISTORY_BUNDLE
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
SERVE_PID= WORKER_PID=
cleanup() {
	for p in $SERVE_PID $WORKER_PID; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	if [ -f "$PGDIR/url" ]; then sh "$LIB/pg-stop.sh" "$PGDIR"; else rm -rf "$PGDIR"; fi
	rm -rf "$T"
}
trap cleanup EXIT; [ -n "${KEEP:-}" ] && trap - EXIT
URL=$(sh "$LIB/pg-start.sh" "$PGDIR") || { [ $? -eq 77 ] && skip "no PostgreSQL"; echo "FAIL: pg-start"; exit 1; }
. "$LIB/pg-common.sh"
sql() { "$PG_BINDIR/psql" -X -q -t -A -v ON_ERROR_STOP=1 "$URL" -c "$1"; }

F=$T/forge.git
git clone -q --mirror "$BUNDLE" "$F" || skip "cannot clone $BUNDLE"
open_pr() { git -C "$F" update-ref refs/heads/main "refs/pull/$1/head^"; } # main as when N was open

SECRET=prjobs-webhook-secret-4f1c2a
cat >"$T/fbcd.yaml" <<YAML
repositories:
  - name: community
    url: file://$F
    branch: main
    forge: {kind: github, project: org/community, api: "http://127.0.0.1:9"}
    credentials: {webhookSecretEnv: WH_SECRET}
    pollSeconds: 0
YAML
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
B=http://127.0.0.1:$PORT
# the HTTP server runs no jobs: deliveries queue up until the worker starts
WH_SECRET=$SECRET "$FBCD" serve --config "$T/fbcd.yaml" --listen "127.0.0.1:$PORT" \
	--database-url "$URL" --data-dir "$T/data" --workers 0 >"$T/serve.log" 2>&1 &
SERVE_PID=$!
i=0
until curl -sf "$B/healthz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: serve did not start"; cat "$T/serve.log"; exit 1; }
	sleep 0.1
done
start_worker() {
	"$FBCD" worker --database-url "$URL" --data-dir "$T/wdata" --workers 2 --job-poll-ms 200 \
		>>"$T/worker.log" 2>&1 &
	WORKER_PID=$!
}

deliver() { # EVENT DELIVERY FILE -> status
	sig=$(python3 -c "import hmac,hashlib,sys; print('sha256='+hmac.new(sys.argv[1].encode(), open(sys.argv[2],'rb').read(), hashlib.sha256).hexdigest())" "$SECRET" "$3")
	curl -s -o "$T/body" -w '%{http_code}' -X POST -H "X-GitHub-Event: $1" -H "X-GitHub-Delivery: $2" \
		-H "X-Hub-Signature-256: $sig" --data-binary "@$3" "$B/v1/webhooks/github"
}
pr_event() { # ACTION N HEAD AUTHOR DELIVERY -> job id
	cat >"$T/pr.json" <<JSON
{"action": "$1", "number": $2, "pull_request": {"number": $2, "title": "pr $2", "user": {"login": "$4"},
 "head": {"sha": "$3", "ref": "pr-$2"}, "base": {"sha": "$(git -C "$F" rev-parse main)", "ref": "main"}},
 "repository": {"full_name": "org/community"}, "sender": {"login": "$4"}}
JSON
	c=$(deliver pull_request "$5" "$T/pr.json")
	[ "$c" = 202 ] || { fail "pull_request $1 #$2: $c $(cat "$T/body")"; return; }
	python3 -c "import json; print(json.load(open('$T/body'))['job'])"
}
comment() { # N BODY LOGIN DELIVERY -> job id
	cat >"$T/c.json" <<JSON
{"action": "created", "issue": {"number": $1, "pull_request": {"url": "https://api.github.com/repos/org/community/pulls/$1"}},
 "comment": {"body": "$2", "user": {"login": "$3"}}, "repository": {"full_name": "org/community"}, "sender": {"login": "$3"}}
JSON
	c=$(deliver issue_comment "$4" "$T/c.json")
	[ "$c" = 202 ] || { fail "comment '$2' on #$1: $c $(cat "$T/body")"; return; }
	python3 -c "import json; print(json.load(open('$T/body'))['job'])"
}
wait_job() { # ID -> final state
	i=0
	while :; do
		s=$(sql "SELECT state FROM jobs WHERE id = $1")
		case $s in succeeded|failed|cancelled) echo "$s"; return;; esac
		i=$((i + 1)); [ $i -gt 900 ] && { echo timeout; return; }
		sleep 0.1
	done
}
# same N AUTHOR [APPROVERS]: the newest stored result of #N equals fbcd pr check
same() {
	curl -s "$B/v1/repositories/community/pulls/$1" >"$T/pull.json"
	apr=
	for a in ${3:-}; do apr="$apr --approved-by $a"; done
	"$FBCD" pr check --repo "$F" --base main --head "refs/pull/$1/head" --author "$2" \
		$apr --output json >"$T/cli.json"
	python3 - "$T/pull.json" "$T/cli.json" <<'PY'
import json, sys
pull = json.load(open(sys.argv[1])); cli = json.load(open(sys.argv[2]))
svc = pull["checks"][0]["result"]
def norm(doc):
    return (doc["conclusion"], doc.get("head"), [(c["id"], c["conclusion"], sorted(json.dumps(a, sort_keys=True) for a in c.get("annotations", []))) for c in doc["checks"]])
a, b = norm(svc), norm(cli)
if a != b:
    print("service:", a); print("cli:    ", b); sys.exit(1)
assert pull["checks"][0]["conclusion"] == cli["conclusion"]
PY
}

# --- 1. a new bundle by someone who is not a reviewer: permissions waits for /approve
open_pr 10888
H=$(git -C "$F" rev-parse refs/pull/10888/head)
J1=$(pr_event opened 10888 "$H" someone d-1)
[ "$(sql "SELECT state FROM jobs WHERE id = $J1")" = queued ] && pass || fail "pr.check not queued"
# a newer head (synchronize) before any worker ran: the queued check is superseded
git -C "$F" update-ref refs/pull/10888/head "$(git -C "$F" commit-tree -p "$H" -m "second push" "$H^{tree}")"
H2=$(git -C "$F" rev-parse refs/pull/10888/head)
J2=$(pr_event synchronize 10888 "$H2" someone d-2)
[ "$(sql "SELECT state FROM jobs WHERE id = $J1")" = cancelled ] && [ "$J2" != "$J1" ] && pass || fail "older check not superseded: $(sql "SELECT id, state FROM jobs ORDER BY id")"
start_worker
[ "$(wait_job "$J2")" = succeeded ] && pass || fail "pr.check: $(sql "SELECT state, error FROM jobs WHERE id = $J2")"
[ "$(sql "SELECT string_agg(head_sha, ',') FROM pull_checks WHERE number = 10888")" = "$H2" ] && pass || fail "stored heads: $(sql "SELECT head_sha FROM pull_checks")"
same 10888 someone && pass || fail "service result differs from fbcd pr check (#10888)"
[ "$(python3 -c "import json; d=json.load(open('$T/pull.json')); c={x['id']: x['conclusion'] for x in d['checks'][0]['result']['checks']}; print(d['checks'][0]['conclusion'], c['permissions'], d['author'])")" = "action_required action_required someone" ] &&
	pass || fail "#10888 before approval: $(head -c 600 "$T/pull.json")"
# /approve by someone who is not a reviewer changes nothing; by a ci.yaml reviewer, it passes
J=$(comment 10888 "/approve" mallory d-3)
[ "$(wait_job "$J")" = succeeded ] && [ "$(sql "SELECT conclusion FROM pull_checks WHERE job_id = $J")" = action_required ] && pass || fail "/approve by a stranger: $(sql "SELECT conclusion FROM pull_checks WHERE job_id = $J")"
J=$(comment 10888 "/approve" SebTardif d-4)
[ "$(wait_job "$J")" = succeeded ] && pass || fail "/approve job: $(sql "SELECT state, error FROM jobs WHERE id = $J")"
[ "$(sql "SELECT conclusion FROM pull_checks WHERE job_id = $J")" = success ] && pass || fail "/approve by a reviewer: $(sql "SELECT result FROM pull_checks WHERE job_id = $J")"
same 10888 someone "mallory SebTardif" && pass || fail "approved result differs from fbcd pr check --approved-by"
[ "$(curl -s "$B/v1/repositories/community/pulls/10888" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['approvals'], len(d['checks']))")" = "['mallory', 'SebTardif'] 3" ] &&
	pass || fail "approvals and check history"
# /recheck runs again with the same approvals
J=$(comment 10888 "/recheck" someone d-5)
[ "$(wait_job "$J")" = succeeded ] && [ "$(sql "SELECT conclusion FROM pull_checks WHERE job_id = $J")" = success ] && pass || fail "/recheck"
# the commit view lists the check of its head
curl -s "$B/v1/repositories/community/commits/$H2" | python3 -c "import json,sys; d=json.load(sys.stdin); assert len(d['checks']) == 4 and d['checks'][0]['pullRequest'] == 10888, d" &&
	pass || fail "commit $H2 does not list its checks"

# --- 2. a real upgrade-graph break (pr_check's documented exception 9631: G5)
open_pr 9631
J=$(pr_event opened 9631 "$(git -C "$F" rev-parse refs/pull/9631/head)" someone d-6)
[ "$(wait_job "$J")" = succeeded ] && pass || fail "pr.check #9631: $(sql "SELECT state, error FROM jobs WHERE id = $J")"
same 9631 someone && pass || fail "service result differs from fbcd pr check (#9631)"
python3 -c "
import json; d=json.load(open('$T/pull.json'))['checks'][0]['result']
g=[c for c in d['checks'] if c['id']=='graph'][0]
assert d['conclusion']=='failure' and g['conclusion']=='failure' and any(a['code']=='G5' and a['path'] for a in g['annotations']), g" &&
	pass || fail "#9631 graph G5 not reported with its file"

# --- 3. a few more real pull requests, each equal to the command line
for pr in 10885 10886 10887 10897; do
	open_pr $pr
	J=$(pr_event opened $pr "$(git -C "$F" rev-parse refs/pull/$pr/head)" someone "d-$pr")
	[ "$(wait_job "$J")" = succeeded ] && same $pr someone && pass || fail "#$pr: $(sql "SELECT state, error FROM jobs WHERE id = $J")"
done
# the workers keep the add-mode builds they made (10885, 10897) in their data directory's cache
n=$(ls "$T/wdata/cache/checks-v1" 2>/dev/null | grep -c '^am-')
[ "$n" -ge 2 ] && pass || fail "$n add-mode builds in $T/wdata/cache/checks-v1"

# --- 4. a head that does not exist fails the job (not retried), the service stays up
J=$(pr_event synchronize 10897 1234567890123456789012345678901234567890 someone d-x)
[ "$(wait_job "$J")" = failed ] && [ "$(sql "SELECT attempts FROM jobs WHERE id = $J")" = 1 ] && pass || fail "missing head: $(sql "SELECT state, attempts, error FROM jobs WHERE id = $J")"
# forge reports were asked for (github): one pending and one final per stored check
[ "$(sql "SELECT count(*) FROM jobs WHERE kind = 'forge.report' AND payload->>'phase' = 'final'")" = "$(sql "SELECT count(*) FROM pull_checks")" ] &&
	pass || fail "final forge.report jobs: $(sql "SELECT count(*) FROM jobs WHERE kind = 'forge.report'")"
kill -0 "$SERVE_PID" && kill -0 "$WORKER_PID" && pass || fail "a process died"
stop_clean "$SERVE_PID" "$T/serve.log"; SERVE_PID=
stop_clean "$WORKER_PID" "$T/worker.log"; WORKER_PID=
finish
