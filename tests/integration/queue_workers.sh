#!/bin/sh
# The durable job queue for real: three `fbcd worker` processes (two threads
# each) on one PostgreSQL. 500 jobs enqueued while they run are each executed
# exactly once; a worker killed with SIGKILL mid-job loses nothing (the job
# runs again after its lease and completes once); a job that keeps failing
# stops at max_attempts with its history; ordered jobs of one repository run
# one at a time in id order; PostgreSQL restarted under the workers.
#   queue_workers.sh FBCD
FBCD=$1
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$HERE/../lib

PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-pg.XXXXXX")
PIDS=
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	if [ -f "$PGDIR/url" ]; then sh "$LIB/pg-stop.sh" "$PGDIR"; else rm -rf "$PGDIR"; fi
	rm -rf "$T"
}
trap cleanup EXIT
URL=$(sh "$LIB/pg-start.sh" "$PGDIR") || { [ $? -eq 77 ] && skip "no PostgreSQL"; echo "FAIL: pg-start"; exit 1; }
. "$LIB/pg-common.sh"
sql() { "$PG_BINDIR/psql" -X -q -t -A -v ON_ERROR_STOP=1 "$URL" -c "$1"; }

run migrate --database-url "$URL"
expect_rc 0 "fbcd migrate"

start_worker() { # NAME
	"$FBCD" worker --database-url "$URL" --workers 2 --job-lease 3 --job-poll-ms 500 \
		--retry-base-ms 100 --pool-size 4 >"$T/$1.log" 2>&1 &
	PIDS="$PIDS $!"
	eval "PID_$1=$!"
}
start_worker w1
start_worker w2
start_worker w3
# an HTTP-only replica for the jobs API
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ADMIN=it-admin-token-0123456789abcdef
B=http://127.0.0.1:$PORT
FBCD_ADMIN_TOKEN=$ADMIN "$FBCD" serve --listen "127.0.0.1:$PORT" --database-url "$URL" \
	--data-dir "$T/data" --workers 0 >"$T/serve.log" 2>&1 &
PIDS="$PIDS $!"
i=0
until curl -sf "$B/healthz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: serve did not start"; cat "$T/serve.log"; exit 1; }
	sleep 0.1
done
# code METHOD PATH [TOKEN]: HTTP status, body in $T/body
code() {
	curl -s -o "$T/body" -w '%{http_code}' -X "$1" ${3:+-H "Authorization: Bearer $3"} "$B$2"
}
jq_() { python3 -c "import json,sys; d=json.load(open('$T/body')); print($1)"; }

# wait_sql QUERY EXPECTED SECONDS
wait_sql() {
	i=0
	while [ "$(sql "$1")" != "$2" ]; do
		i=$((i + 1))
		[ $i -gt $(($3 * 10)) ] && return 1
		sleep 0.1
	done
	return 0
}

# --- 500 jobs, enqueued in five batches while the workers run
for b in 0 1 2 3 4; do
	sql "INSERT INTO jobs (kind, key, payload) SELECT 'noop', 'n' || g, '{\"sleepMs\": 2}'
	     FROM generate_series($((b * 100 + 1)), $((b * 100 + 100))) g; NOTIFY fbcd_jobs;"
	sleep 0.3
done
if wait_sql "SELECT count(*) FROM jobs WHERE key LIKE 'n%' AND state = 'succeeded'" 500 120; then pass; else
	fail "500 jobs not all succeeded: $(sql "SELECT state, count(*) FROM jobs GROUP BY 1")"
fi
# one "noop job" log line per execution (JSON lines: the logs go to files)
cat "$T"/w?.log | python3 -c 'import json, sys
for line in sys.stdin:
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if o.get("msg") == "noop job" and o.get("job_key", "").startswith("n"):
        print(o["job_key"], "attempt", o.get("attempt"))' >"$T/runs"
n=$(wc -l <"$T/runs")
d=$(sort -u "$T/runs" | sed 's/ attempt.*//' | sort -u | wc -l)
[ "$n" -eq 500 ] && [ "$d" -eq 500 ] && pass || fail "executions: $n lines, $d distinct keys (want 500, 500)"
[ "$(sql "SELECT count(*) FROM jobs WHERE key LIKE 'n%' AND attempts <> 1")" = 0 ] && pass ||
	fail "some jobs took more than one attempt"
[ "$(sql "SELECT count(*) FROM job_effects WHERE key LIKE 'n%'")" = 500 ] && pass || fail "job_effects != 500"
nw=$(sql "SELECT count(DISTINCT worker) FROM jobs WHERE key LIKE 'n%'")
[ "$(sql "SELECT count(DISTINCT e.worker) FROM job_events e JOIN jobs j ON j.id = e.job_id WHERE j.key LIKE 'n%' AND e.to_state = 'running'")" -ge 2 ] &&
	pass || fail "the jobs were not shared between worker processes"
[ "$(sql "SELECT count(*) FROM job_events e JOIN jobs j ON j.id = e.job_id WHERE j.key LIKE 'n%'")" = 1000 ] &&
	pass || fail "history: expected running and succeeded per job"
: "$nw"

# --- SIGKILL of a worker mid-job
sql "INSERT INTO jobs (kind, key, payload) VALUES ('noop', 'slow', '{\"sleepMs\": 4000}'); NOTIFY fbcd_jobs;"
if wait_sql "SELECT state FROM jobs WHERE key = 'slow'" running 20; then pass; else fail "slow job not claimed"; fi
owner=$(sql "SELECT worker FROM jobs WHERE key = 'slow'")
victim=${owner##*:}
kill -9 "$victim" && pass || fail "cannot kill worker $owner"
if wait_sql "SELECT state FROM jobs WHERE key = 'slow'" succeeded 30; then pass; else
	fail "killed job did not complete: $(sql "SELECT state, attempts, error FROM jobs WHERE key = 'slow'")"
fi
[ "$(sql "SELECT attempts FROM jobs WHERE key = 'slow'")" = 2 ] && pass || fail "slow job attempts != 2"
[ "$(sql "SELECT count(*) FROM job_effects WHERE key = 'slow'")" = 1 ] && pass || fail "slow job effect not once"
[ "$(sql "SELECT count(*) FROM job_events e JOIN jobs j ON j.id = e.job_id WHERE j.key = 'slow' AND e.reason LIKE '%expired%'")" = 1 ] &&
	pass || fail "no 'lease expired' event in the history"
[ "$(sql "SELECT e.worker FROM job_events e JOIN jobs j ON j.id = e.job_id WHERE j.key = 'slow' AND e.to_state = 'succeeded'")" != "$owner" ] &&
	pass || fail "completed by the killed worker?"
start_worker w4

# --- a job that keeps failing stops at max_attempts with its history
sql "INSERT INTO jobs (kind, key, payload, max_attempts) VALUES ('noop', 'bad', '{\"failAttempts\": 99}', 3); NOTIFY fbcd_jobs;"
if wait_sql "SELECT state || ' ' || attempts FROM jobs WHERE key = 'bad'" "failed 3" 30; then pass; else
	fail "failing job: $(sql "SELECT state, attempts FROM jobs WHERE key = 'bad'")"
fi
[ "$(sql "SELECT count(*) FROM job_events e JOIN jobs j ON j.id = e.job_id WHERE j.key = 'bad' AND e.from_state = 'running' AND e.reason LIKE 'EUNAVAIL%failing attempt%'")" = 3 ] &&
	pass || fail "failing job history: $(sql "SELECT to_state, reason FROM job_events e JOIN jobs j ON j.id = e.job_id WHERE j.key = 'bad'")"
[ "$(sql "SELECT count(*) FROM job_effects WHERE key = 'bad'")" = 0 ] && pass || fail "failed job left an effect"
# backoff grows: the gap before attempt 3 is longer than before attempt 2 (base 100 ms, jitter 0.5-1.5)
gaps=$(sql "SELECT string_agg(round(extract(epoch FROM at) * 1000)::text, ' ' ORDER BY id) FROM job_events e WHERE job_id = (SELECT id FROM jobs WHERE key = 'bad') AND to_state = 'running'")
set -- $gaps
[ $(($3 - $2)) -gt 100 ] && pass || fail "backoff before attempt 3 too short: $gaps"

# --- the jobs API
bad=$(sql "SELECT id FROM jobs WHERE key = 'bad'")
[ "$(code GET "/v1/jobs?state=failed&kind=noop")" = 200 ] && [ "$(jq_ "[j['key'] for j in d['items']]")" = "['bad']" ] &&
	pass || fail "GET /v1/jobs?state=failed: $(cat "$T/body")"
[ "$(code GET "/v1/jobs/$bad")" = 200 ] && [ "$(jq_ "[e['to'] for e in d['events']]")" = "['running', 'queued', 'running', 'queued', 'running', 'failed']" ] &&
	pass || fail "GET /v1/jobs/$bad events: $(cat "$T/body")"
[ "$(code GET "/v1/jobs?limit=2")" = 200 ] && [ "$(jq_ "len(d['items']) == 2 and d['next'] is not None")" = True ] &&
	pass || fail "jobs paging"
[ "$(code GET "/v1/jobs?state=bogus")" = 400 ] && pass || fail "bad state filter not 400"
[ "$(code GET "/v1/jobs/abc")" = 400 ] && pass || fail "bad job id not 400"
[ "$(code GET "/v1/jobs/999999")" = 404 ] && pass || fail "unknown job not 404"
[ "$(code POST "/v1/jobs/$bad/retry")" = 401 ] && pass || fail "retry without a token not 401"
[ "$(code POST "/v1/jobs/$bad/retry" "$ADMIN")" = 200 ] && [ "$(jq_ "d['state'], d['attempts']")" = "queued 0" ] &&
	pass || fail "retry: $(cat "$T/body")"
if wait_sql "SELECT state || ' ' || attempts FROM jobs WHERE key = 'bad'" "failed 3" 30; then pass; else fail "retried job did not run to max_attempts again"; fi
[ "$(code POST "/v1/jobs/$bad/cancel" "$ADMIN")" = 409 ] && pass || fail "cancel of a failed job not 409"
later=$(sql "INSERT INTO jobs (kind, key, run_after) VALUES ('noop', 'later', now() + interval '1 hour') RETURNING id")
[ "$(code POST "/v1/jobs/$later/cancel" "$ADMIN")" = 200 ] && [ "$(jq_ "d['state']")" = cancelled ] &&
	pass || fail "cancel: $(cat "$T/body")"
[ "$(code GET "/v1/jobs?repository=nope")" = 200 ] && [ "$(jq_ "len(d['items'])")" = 0 ] && pass || fail "repository filter"

# --- ordered jobs of one repository: one at a time, in id order
sql "INSERT INTO jobs (kind, key, repository, ordered, payload) SELECT 'noop', 'o' || g, 'r1', true, '{\"sleepMs\": 60}' FROM generate_series(1, 12) g; NOTIFY fbcd_jobs;"
if wait_sql "SELECT count(*) FROM jobs WHERE key LIKE 'o%' AND state = 'succeeded'" 12 60; then pass; else fail "ordered jobs did not finish"; fi
overlap=$(sql "SELECT count(*) FROM jobs a JOIN jobs b ON b.id = a.id + 1 WHERE a.key LIKE 'o%' AND b.key LIKE 'o%' AND b.started_at < a.finished_at")
[ "$overlap" = 0 ] && pass || fail "$overlap ordered jobs started before their predecessor finished"

# --- PostgreSQL restarted under running workers
sql "INSERT INTO jobs (kind, key, payload) SELECT 'noop', 'p' || g, '{\"sleepMs\": 30}' FROM generate_series(1, 100) g; NOTIFY fbcd_jobs;"
sleep 0.5
sh "$LIB/pg-restart.sh" "$PGDIR" && pass || fail "pg-restart"
if wait_sql "SELECT count(*) FROM jobs WHERE key LIKE 'p%' AND state = 'succeeded'" 100 90; then pass; else
	fail "after the restart: $(sql "SELECT state, count(*) FROM jobs WHERE key LIKE 'p%' GROUP BY 1")"
fi
[ "$(sql "SELECT count(*) FROM job_effects WHERE key LIKE 'p%'")" = 100 ] && pass || fail "effects after restart != 100"
# a job enqueued after the restart is picked up (LISTEN re-established or polling)
sql "INSERT INTO jobs (kind, key) VALUES ('noop', 'after'); NOTIFY fbcd_jobs;"
if wait_sql "SELECT state FROM jobs WHERE key = 'after'" succeeded 20; then pass; else fail "job after restart not run"; fi
for p in $PID_w1 $PID_w2 $PID_w3 $PID_w4; do
	[ "$p" = "$victim" ] && continue
	kill -0 "$p" 2>/dev/null && pass || fail "worker $p died"
done
grep -h "FAIL\|ERROR\|AddressSanitizer\|runtime error" "$T"/w?.log && fail "errors in worker logs"

finish
