#!/bin/sh
# Benchmark: the cost of metrics and JSON access logging on the package query
# at 64 connections (wrk). Two fbcd servers on one PostgreSQL and one catalog:
# "bare" (--metrics off, no access log) and "ops" (metrics on, --access-log
# --log-format json to a file), measured alternately in the same run;
# prints req/s and p99 min/median/max of each and the ratio. Asserts nothing.
#   bench_ops.sh FBCD EXAMPLE_CATALOG [ROUNDS] [SECONDS]
FBCD=$1 CATALOG=$2 ROUNDS=${3:-5} DUR=${4:-${FBCD_BENCH_SECONDS:-5}}
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$HERE/../lib
command -v wrk >/dev/null || skip "wrk is not installed"
PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-pg.XXXXXX")
P1= P2=
cleanup() {
	[ -n "$P1" ] && kill "$P1" 2>/dev/null
	[ -n "$P2" ] && kill "$P2" 2>/dev/null
	if [ -f "$PGDIR/url" ]; then sh "$LIB/pg-stop.sh" "$PGDIR"; else rm -rf "$PGDIR"; fi
	rm -rf "$T"
}
trap cleanup EXIT
URL=$(sh "$LIB/pg-start.sh" "$PGDIR") || { [ $? -eq 77 ] && skip "no PostgreSQL"; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ADMIN=bench-ops-token-0123456789abcdef
start() { # start PORT ARGS...
	port=$1; shift
	FBCD_ADMIN_TOKEN=$ADMIN "$FBCD" serve --listen "127.0.0.1:$port" --database-url "$URL" \
		--data-dir "$T/data-$port" "$@" >"$T/serve-$port.log" 2>&1 &
	LAST=$!
	i=0
	until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -gt 100 ] && { cat "$T/serve-$port.log"; exit 1; }; sleep 0.1
	done
}
Q1=$(free_port); Q2=$(free_port)
start "$Q1" --metrics off; P1=$LAST
start "$Q2" --access-log --log-format json; P2=$LAST
tar -C "$CATALOG" -czf "$T/cat.tgz" .
curl -sf -XPOST -H "Authorization: Bearer $ADMIN" -d '{"name":"ex"}' "http://127.0.0.1:$Q1/v1/catalogs" >/dev/null
curl -sf -XPUT -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/gzip' \
	--data-binary "@$T/cat.tgz" "http://127.0.0.1:$Q1/v1/catalogs/ex/content" >/dev/null || exit 1
PKG=/v1/catalogs/ex/packages/example-operator
for q in "$Q1" "$Q2"; do curl -sf "http://127.0.0.1:$q$PKG" >/dev/null || exit 1; done
: >"$T/bare"; : >"$T/ops"
for r in $(seq "$ROUNDS"); do
	for which in bare ops; do
		[ $which = bare ] && q=$Q1 || q=$Q2
		wrk -t4 -c64 -d"${DUR}s" --latency "http://127.0.0.1:$q$PKG" >"$T/wrk.out" 2>&1
		rps=$(awk '/^Requests\/sec:/ {print $2}' "$T/wrk.out")
		p99=$(awk '$1 == "99%" {print $2}' "$T/wrk.out")
		echo "$rps $p99" >>"$T/$which"
	done
done
python3 - "$T/bare" "$T/ops" "$T/serve-$Q2.log" <<'PY'
import statistics, sys
def ms(s):
    for unit, f in (("us", 1e-3), ("ms", 1), ("s", 1e3)):
        if s.endswith(unit):
            return float(s[:-len(unit)]) * f
    return float(s)
def load(p):
    rows = [l.split() for l in open(p) if l.strip()]
    return [float(r[0]) for r in rows], [ms(r[1]) for r in rows]
b_rps, b_p99 = load(sys.argv[1])
o_rps, o_p99 = load(sys.argv[2])
def mmm(v): return "%.0f / %.0f / %.0f" % (min(v), statistics.median(v), max(v))
def mmmf(v): return "%.2f / %.2f / %.2f" % (min(v), statistics.median(v), max(v))
lines = sum(1 for _ in open(sys.argv[3]))
print("package query, wrk 4 threads, 64 connections, %d alternating rounds" % len(b_rps))
print("  bare (--metrics off, no access log): req/s min/median/max %s, p99 ms %s" % (mmm(b_rps), mmmf(b_p99)))
print("  ops  (metrics, JSON access log):      req/s min/median/max %s, p99 ms %s" % (mmm(o_rps), mmmf(o_p99)))
print("  ops/bare median req/s: %.3f (overhead %.1f%%); %d log lines written"
      % (statistics.median(o_rps) / statistics.median(b_rps),
         100 * (1 - statistics.median(o_rps) / statistics.median(b_rps)), lines))
PY
