#!/bin/sh
# Benchmark: the job queue's throughput on trivial jobs (noop, no sleep) with
# `fbcd worker --workers 1, 2 and 4`, next to the floor of a bare
# `SELECT … FOR UPDATE SKIP LOCKED` claim-and-finish loop with as many
# connections (queue_floor), on the same PostgreSQL in the same run, rounds
# alternating. Prints jobs/s min/median/max of each and the ratio
# queue/floor. Asserts nothing (exits 1 only if jobs were lost or doubled).
#   bench_queue.sh FBCD QUEUE_FLOOR [JOBS] [ROUNDS]
FBCD=$1 FLOOR=$2 JOBS=${3:-${FBCD_BENCH_JOBS:-2000}} ROUNDS=${4:-${FBCD_BENCH_ROUNDS:-3}}
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$HERE/../lib
PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-pg.XXXXXX")
WPID=
cleanup() {
	[ -n "$WPID" ] && kill "$WPID" 2>/dev/null && wait "$WPID" 2>/dev/null
	if [ -f "$PGDIR/url" ]; then sh "$LIB/pg-stop.sh" "$PGDIR"; else rm -rf "$PGDIR"; fi
	rm -rf "$T"
}
trap cleanup EXIT
URL=$(sh "$LIB/pg-start.sh" "$PGDIR") || { [ $? -eq 77 ] && skip "no PostgreSQL"; exit 1; }
. "$LIB/pg-common.sh"
sql() { "$PG_BINDIR/psql" -X -q -t -A -v ON_ERROR_STOP=1 "$URL" -c "$1"; }
"$FBCD" migrate --database-url "$URL" >/dev/null || { echo "migrate failed"; exit 1; }

enqueue() { # N: N queued noop jobs (as fbcd enqueues them: one event each)
	sql "DELETE FROM jobs; INSERT INTO jobs (kind, key, payload) SELECT 'noop', 'b' || g, '{}' FROM generate_series(1, $1) g;
	     INSERT INTO job_events (job_id, to_state, reason) SELECT id, 'queued', 'enqueued' FROM jobs;" >/dev/null
}
queue_round() { # W -> jobs/s
	enqueue "$JOBS"
	"$FBCD" worker --database-url "$URL" --data-dir "$T/data" --workers "$1" --job-poll-ms 50 \
		--pool-size $(($1 + 2)) >"$T/worker.log" 2>&1 &
	WPID=$!
	while [ "$(sql "SELECT count(*) FROM jobs WHERE state <> 'succeeded'")" != 0 ]; do sleep 0.05; done
	kill "$WPID"; wait "$WPID" 2>/dev/null; WPID=
	n=$(sql "SELECT count(*) FROM jobs WHERE state = 'succeeded' AND attempts = 1")
	[ "$n" = "$JOBS" ] || { echo "LOST OR DOUBLED: $n of $JOBS ran exactly once" >&2; exit 1; }
	# from the first claim to the last completion (process start-up excluded)
	sql "SELECT round($JOBS / extract(epoch FROM max(finished_at) - min(started_at)))::bigint FROM jobs"
}
floor_round() { # W -> jobs/s
	enqueue "$JOBS"
	set -- $("$FLOOR" "$URL" "$1")
	[ "$1" = "$JOBS" ] || { echo "floor did $1 of $JOBS" >&2; exit 1; }
	python3 -c "print('%.0f' % ($JOBS / $2))"
}
stats() { python3 -c "import sys,statistics; v=sorted(float(x) for x in sys.argv[1:]); print('%.0f %.0f %.0f' % (v[0], statistics.median(v), v[-1]))" "$@"; }

echo "bench_queue: $JOBS trivial jobs per round, $ROUNDS rounds, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-28s %-28s %s\n' workers "fbcd worker jobs/s min/med/max" "bare SKIP LOCKED min/med/max" "ratio (median)"
for w in 1 2 4; do
	q= f=
	for r in $(seq "$ROUNDS"); do
		f="$f $(floor_round "$w")" || exit 1
		q="$q $(queue_round "$w")" || exit 1
	done
	set -- $(stats $q); qs="$1 / $2 / $3"; qm=$2
	set -- $(stats $f); fs="$1 / $2 / $3"; fm=$2
	printf '%-8s %-28s %-28s %s\n' "$w" "$qs" "$fs" "$(python3 -c "print('%.2f' % ($qm / $fm))")"
done
echo "(the queue's claim takes a lease, writes an event per transition and completes in a second transaction; the floor only flips a state)"
