#!/bin/sh
# Benchmark of the REST API: requests/s and p99 latency at 64 connections
# (wrk) for a package query and for /api/v1/all, each next to nginx serving
# the very same bytes as a static file, in the same run on the same machine;
# /api/v1/all gzip-compressed and POST /v1/resolve; and the three again with
# --threads 4 (a shared event-loop pool, the threading model before the
# default thread per connection); and wrk on the cached package query while
# PostgreSQL is frozen (SIGSTOP) for 4 s, next to the same wrk run without
# a freeze (issue 13 item 7: p99 under 50 ms). The load average is printed
# first and last: the machine may be shared.
#   bench_api.sh FBCD REAL_CATALOG [DURATION_SECONDS]
# Skips (77) without wrk, nginx, PostgreSQL or the catalog.
FBCD=$1 REAL=$2 DUR=${3:-${FBCD_BENCH_SECONDS:-5}}
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$HERE/../lib
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

command -v wrk >/dev/null || skip "wrk is not installed"
[ -x "$NGINX" ] || skip "nginx is not installed"
command -v curl >/dev/null || skip "curl is not installed"
[ -d "$REAL" ] || skip "real catalog not found at $REAL"

PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-pg.XXXXXX")
SERVE_PID=
SERVE2_PID=
SERVE3_PID=
NGINX_PID=
cleanup() {
	[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null
	[ -n "$SERVE2_PID" ] && kill "$SERVE2_PID" 2>/dev/null
	[ -n "$SERVE3_PID" ] && kill "$SERVE3_PID" 2>/dev/null
	[ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null
	if [ -f "$PGDIR/url" ]; then sh "$LIB/pg-stop.sh" "$PGDIR"; else rm -rf "$PGDIR"; fi
	rm -rf "$T"
}
trap cleanup EXIT
URL=$(sh "$LIB/pg-start.sh" "$PGDIR") || { [ $? -eq 77 ] && skip "no PostgreSQL"; exit 1; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
NPORT=$(free_port)
ADMIN=bench-admin-token-0123456789abcdef
B=http://127.0.0.1:$PORT
FBCD_ADMIN_TOKEN=$ADMIN "$FBCD" serve --listen "127.0.0.1:$PORT" --database-url "$URL" \
	--data-dir "$T/data" >"$T/serve.log" 2>&1 &
SERVE_PID=$!
i=0
until curl -sf "$B/healthz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 100 ] && { cat "$T/serve.log"; exit 1; }; sleep 0.1
done

curl -sf -XPOST -H "Authorization: Bearer $ADMIN" -d '{"name":"community"}' "$B/v1/catalogs" >/dev/null
tar -C "$REAL" -czf "$T/cat.tgz" .
START=$(date +%s.%N)
curl -sf -XPUT -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/gzip' \
	--data-binary "@$T/cat.tgz" "$B/v1/catalogs/community/content" >/dev/null || { echo "push failed"; exit 1; }
END=$(date +%s.%N)
echo "push of the real catalog over HTTP (validate + ingest): $(echo "$END - $START" | bc) s"

# the same bytes for nginx
chmod 755 "$T"
mkdir -p "$T/www"
PKG=/v1/catalogs/community/packages/hive-operator
ALL=/catalogs/community/api/v1/all
curl -sf "$B$PKG" -o "$T/www/package.json"
curl -sf "$B$ALL" -o "$T/www/all.jsonl"
chmod -R a+rX "$T/www"
cat >"$T/nginx.conf" <<CONF
worker_processes auto;
daemon off;
pid $T/nginx.pid;
error_log $T/nginx.err;
$( [ "$(id -u)" = 0 ] && echo "user root;" )
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  keepalive_requests 100000000;
  types { application/json json; application/jsonl jsonl; }
  client_body_temp_path $T/nginx-tmp;
  proxy_temp_path $T/nginx-tmp;
  fastcgi_temp_path $T/nginx-tmp;
  uwsgi_temp_path $T/nginx-tmp;
  scgi_temp_path $T/nginx-tmp;
  server { listen 127.0.0.1:$NPORT; root $T/www; }
}
CONF
mkdir -p "$T/nginx-tmp"
"$NGINX" -c "$T/nginx.conf" -p "$T" >"$T/nginx.out" 2>&1 &
NGINX_PID=$!
i=0
until curl -sf "http://127.0.0.1:$NPORT/package.json" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 50 ] && { cat "$T/nginx.err" "$T/nginx.out"; exit 1; }; sleep 0.1
done

# bench NAME URL: prints "NAME  requests/s  p99"
bench() {
	# shellcheck disable=SC2086 # BENCH_ARGS: extra wrk arguments, split
	wrk -t4 -c64 -d"${DUR}s" --latency ${BENCH_ARGS:-} "$2" >"$T/wrk.out" 2>&1
	rps=$(awk '/^Requests\/sec:/ {print $2}' "$T/wrk.out")
	p99=$(awk '$1 == "99%" {print $2}' "$T/wrk.out")
	errs=$(awk '/Non-2xx|Socket errors/ {print}' "$T/wrk.out" | tr '\n' ' ')
	# bytes per response, from "N requests in Ts, SIZE read": shows what was served
	per=$(awk '/requests in/ {n = $1; v = $5; u = 1
		if (v ~ /KB$/) u = 1024; else if (v ~ /MB$/) u = 1048576; else if (v ~ /GB$/) u = 1073741824
		sub(/[KMG]?B$/, "", v); if (n > 0) printf "%.0f", v * u / n}' "$T/wrk.out")
	printf '%-34s %12s req/s   p99 %10s  %10s B/resp  %s\n' "$1" "$rps" "$p99" "${per:-?}" "$errs"
	echo "$rps" >"$T/rps.$3"
}
# a second instance without the response cache: every request queries PostgreSQL
PORT2=$(free_port)
"$FBCD" serve --listen "127.0.0.1:$PORT2" --database-url "$URL" --data-dir "$T/data2" \
	--cache-bytes 0 >"$T/serve2.log" 2>&1 &
SERVE2_PID=$!
i=0
until curl -sf "http://127.0.0.1:$PORT2/healthz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 100 ] && { cat "$T/serve2.log"; exit 1; }; sleep 0.1
done

# the previous threading model (a pool of 4 event-loop threads shared by all
# connections) as the baseline of the default (a thread per connection)
PORT3=$(free_port)
"$FBCD" serve --listen "127.0.0.1:$PORT3" --database-url "$URL" --data-dir "$T/data3" \
	--threads 4 >"$T/serve3.log" 2>&1 &
SERVE3_PID=$!
i=0
until curl -sf "http://127.0.0.1:$PORT3/healthz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 100 ] && { cat "$T/serve3.log"; exit 1; }; sleep 0.1
done
# wrk -H takes "Name: value" only (with the space; "Name:value" is dropped
# without a word), and BENCH_ARGS is split on spaces: the header from a script
cat >"$T/gzip.lua" <<'LUA'
wrk.headers["Accept-Encoding"] = "gzip"
LUA
cat >"$T/resolve.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"catalogs": [{"name": "community"}], "requests": [{"package": "hive-operator", "channel": "alpha"}]}'
LUA
curl -sf -XPOST -d '{"catalogs": [{"name": "community"}], "requests": [{"package": "hive-operator", "channel": "alpha"}]}' \
	"$B/v1/resolve" >/dev/null || echo "warning: POST /v1/resolve failed before the benchmark"

echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
echo "wrk: 4 threads, 64 connections, ${DUR}s each (errors: non-2xx and socket errors)"
bench "fbcd package query" "$B$PKG" fpkg
bench "nginx same bytes (static)" "http://127.0.0.1:$NPORT/package.json" npkg
bench "fbcd package query, no cache" "http://127.0.0.1:$PORT2$PKG" upkg
bench "fbcd /api/v1/all ($(wc -c <"$T/www/all.jsonl") B)" "$B$ALL" fall
bench "nginx same bytes (static)" "http://127.0.0.1:$NPORT/all.jsonl" nall
BENCH_ARGS="-s $T/gzip.lua"
bench "fbcd /api/v1/all, gzip" "$B$ALL" gall
BENCH_ARGS="-s $T/resolve.lua"
bench "fbcd POST /v1/resolve" "$B/v1/resolve" res
BENCH_ARGS=
bench "fbcd package query, --threads 4" "http://127.0.0.1:$PORT3$PKG" tpkg
BENCH_ARGS="-s $T/gzip.lua"
bench "fbcd /api/v1/all, gzip, --threads 4" "http://127.0.0.1:$PORT3$ALL" tall
BENCH_ARGS="-s $T/resolve.lua"
bench "fbcd POST /v1/resolve, --threads 4" "http://127.0.0.1:$PORT3/v1/resolve" tres
BENCH_ARGS=

# cached reads while PostgreSQL is frozen for 4 s (wrk for 8 s: the freeze
# from second 2 to 6), next to the same 8 s without a freeze
FREEZE_DUR=8
PGPID=$(head -1 "$PGDIR/data/postmaster.pid")
freeze_bench() { # NAME FREEZE(0|1)
	wrk -t4 -c64 -d"${FREEZE_DUR}s" --latency "$B$PKG" >"$T/wrk.out" 2>&1 &
	wpid=$!
	if [ "$2" = 1 ]; then
		sleep 2
		pids="$PGPID $(pgrep -P "$PGPID" | tr '\n' ' ')"
		# shellcheck disable=SC2086 # one pid per word
		kill -STOP $pids
		sleep 4
		# shellcheck disable=SC2086
		kill -CONT $pids
	fi
	wait "$wpid"
	rps=$(awk '/^Requests\/sec:/ {print $2}' "$T/wrk.out")
	p99=$(awk '$1 == "99%" {print $2}' "$T/wrk.out")
	max=$(awk '/^    Latency/ {print $4}' "$T/wrk.out")
	errs=$(awk '/Non-2xx|Socket errors/ {print}' "$T/wrk.out" | tr '\n' ' ')
	printf '%-34s %12s req/s   p99 %10s  max %10s  %s\n' "$1" "$rps" "$p99" "$max" "$errs"
}
echo "wrk: 4 threads, 64 connections, ${FREEZE_DUR}s, cached package query"
freeze_bench "fbcd package query, no freeze" 0
freeze_bench "fbcd package query, PG frozen 4 s" 1
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
python3 - "$T" <<'PY'
import sys
t = sys.argv[1]
r = lambda n: float(open(f"{t}/rps.{n}").read() or 0)
for what, f, n in (("package query", "fpkg", "npkg"), ("api/v1/all", "fall", "nall")):
    ratio = r(f) / r(n) if r(n) else 0
    print(f"{what}: fbcd/nginx = {ratio:.2f} (target >= 0.50)")
PY
exit 0
