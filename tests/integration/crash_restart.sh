#!/bin/sh
# `fbcd serve` with its embedded PostgreSQL (issue 13, items 5 and 6):
#   - after kill -9 of fbcd (its PostgreSQL left running), of both, and with
#     a stale postmaster.pid naming another live process, the next fbcd
#     serve on the same data dir is ready within 30 s with every revision;
#     stale temporary uploads are removed; a second fbcd on a data dir in
#     use is refused and does not touch the first one's PostgreSQL;
#   - the children (pg_ctl, postgres) get a minimal environment: no
#     FBCD_ADMIN_TOKEN in /proc/<pid>/environ; a changed FBCD_ADMIN_TOKEN
#     revokes the one seeded before; no secret appears in any log, nor a
#     malformed --database-url's password.
#   crash_restart.sh FBCD EXAMPLE_CATALOG_DIR
# Skips (77) without the PostgreSQL binaries.
FBCD=$1 CATALOG=$2
. "$(dirname "$0")/lib.sh"
PG_BINDIR=${FBCD_PG_BINDIR:-/usr/lib/postgresql/15/bin}
[ -x "$PG_BINDIR/initdb" ] || skip "no PostgreSQL binaries in $PG_BINDIR"
command -v curl >/dev/null || skip "curl is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
if [ "$(id -u)" = 0 ]; then
	id postgres >/dev/null 2>&1 || skip "running as root without a postgres user"
	chmod 755 "$T" # the embedded cluster runs as postgres under $T/data
fi

SECRET1=crash-admin-one-0123456789abcdef
SECRET2=crash-admin-two-0123456789abcdef
PWSECRET=pw-crash-secret-0123456789
D=$T/data
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
B=http://127.0.0.1:$PORT
PID=
N=0

# our cluster's postgres processes (cwd is its data dir)
pg_pids() {
	for p in $(pgrep -x postgres 2>/dev/null); do
		[ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$D/pg" ] && echo "$p"
	done
}
cleanup() {
	[ -n "$PID" ] && kill -9 "$PID" 2>/dev/null
	[ -n "${SLEEPER:-}" ] && kill "$SLEEPER" 2>/dev/null
	for p in $(pg_pids); do kill -9 "$p" 2>/dev/null; done
	sleep 0.5
	rm -rf "$T"
}
trap cleanup EXIT

# start TOKEN: fbcd serve in the background; READY_MS is how long until
# /readyz answered 200
start() {
	N=$((N + 1))
	t0=$(date +%s%N)
	FBCD_ADMIN_TOKEN=$1 "$FBCD" serve --listen "127.0.0.1:$PORT" --data-dir "$D" \
		>"$T/serve$N.log" 2>&1 &
	PID=$!
	i=0
	until curl -sf "$B/readyz" >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 600 ] || ! kill -0 "$PID" 2>/dev/null; then
			fail "fbcd serve (start $N) did not become ready"
			sed 's/^/    /' "$T/serve$N.log"
			tail -5 "$D/postgresql.log" 2>/dev/null | sed 's/^/    /'
			exit 1
		fi
		sleep 0.05
	done
	READY_MS=$((($(date +%s%N) - t0) / 1000000))
}
revisions() {
	curl -s -H "Authorization: Bearer $1" "$B/v1/catalogs/ex/revisions?limit=100" |
		python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))'
}

start "$SECRET1"
AUTH="Authorization: Bearer $SECRET1"
curl -sf -o /dev/null -X POST -H "$AUTH" -H 'Content-Type: application/json' -d '{"name":"ex"}' "$B/v1/catalogs" && pass || fail "create catalog"
cp -R "$CATALOG" "$T/cat"
chmod -R u+w "$T/cat"
for i in 1 2 3; do
	echo "# revision $i" >>"$T/cat/example-operator/catalog.yaml"
	tar -C "$T/cat" -czf "$T/cat.tgz" .
	code=$(curl -s -o "$T/body" -w '%{http_code}' -X PUT -H "$AUTH" -H 'Content-Type: application/gzip' --data-binary "@$T/cat.tgz" "$B/v1/catalogs/ex/content")
	[ "$code" = 201 ] || [ "$code" = 200 ] && pass || fail "push $i: HTTP $code $(head -c 300 "$T/body")"
done
REVS=$(revisions "$SECRET1")
[ "$REVS" -ge 1 ] && pass || fail "no revisions"

# ---- 6. the children's environment
for p in $(pg_pids); do
	if tr '\0' '\n' <"/proc/$p/environ" | grep -q -e "$SECRET1" -e FBCD_; then
		fail "postgres pid $p has fbcd's environment"
	fi
done
[ -n "$(pg_pids)" ] && pass || fail "no embedded postgres found"

# ---- a second fbcd on the same data dir is refused and harms nothing
FBCD_ADMIN_TOKEN=$SECRET1 "$FBCD" serve --listen 127.0.0.1:0 --data-dir "$D" >"$T/second.log" 2>&1
[ $? -ne 0 ] && grep -q "another fbcd serve" "$T/second.log" && pass || fail "a second fbcd on the data dir: $(cat "$T/second.log")"
curl -sf -o /dev/null "$B/v1/catalogs/ex/packages" && pass || fail "the first fbcd broke when a second one started"

# ---- 5a. kill -9 fbcd: its PostgreSQL is left running, with an upload in flight
mkdir -p "$D/tmp/fbcd-upload-stale/x"
echo '{}' >"$D/tmp/fbcd-upload-stale/x/y.json"
kill -9 "$PID"
wait "$PID" 2>/dev/null
[ -n "$(pg_pids)" ] && pass || fail "expected the embedded PostgreSQL to outlive fbcd"
start "$SECRET2"
echo "    restart after kill -9 of fbcd: ready in $READY_MS ms"
[ "$READY_MS" -lt 30000 ] && pass || fail "ready only after $READY_MS ms"
[ "$(revisions "$SECRET2")" = "$REVS" ] && pass || fail "revisions after the restart: $(revisions "$SECRET2"), expected $REVS"
[ -z "$(ls -A "$D/tmp")" ] && pass || fail "stale temporary files kept: $(ls "$D/tmp")"
# the new FBCD_ADMIN_TOKEN replaced the old one
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $SECRET1" -H 'Content-Type: application/json' -d '{"name":"x1"}' "$B/v1/catalogs")
[ "$code" = 401 ] && pass || fail "the previously seeded token still works after FBCD_ADMIN_TOKEN changed (HTTP $code)"

# ---- 5b. kill -9 of fbcd and of its PostgreSQL (power loss)
kill -9 "$PID" $(pg_pids)
wait "$PID" 2>/dev/null
sleep 0.3
start "$SECRET2"
echo "    restart after kill -9 of fbcd and PostgreSQL: ready in $READY_MS ms"
[ "$READY_MS" -lt 30000 ] && pass || fail "ready only after $READY_MS ms"
[ "$(revisions "$SECRET2")" = "$REVS" ] && pass || fail "revisions after the crash: $(revisions "$SECRET2"), expected $REVS"

# ---- 5c. both killed and the pid in postmaster.pid now belongs to another
# process: it must not be signalled, and the server must start anyway
kill -9 "$PID" $(pg_pids)
wait "$PID" 2>/dev/null
sleep 0.3
sleep 300 &
SLEEPER=$!
python3 - "$D/pg/postmaster.pid" "$SLEEPER" <<'PY'
import sys
p, pid = sys.argv[1], sys.argv[2]
lines = open(p).read().split("\n")
lines[0] = pid
open(p, "w").write("\n".join(lines))
PY
start "$SECRET2"
echo "    restart with a postmaster.pid naming another process: ready in $READY_MS ms"
[ "$READY_MS" -lt 30000 ] && pass || fail "ready only after $READY_MS ms"
kill -0 "$SLEEPER" 2>/dev/null && pass || fail "the unrelated process named in postmaster.pid was killed"
[ "$(revisions "$SECRET2")" = "$REVS" ] && pass || fail "revisions: $(revisions "$SECRET2"), expected $REVS"
for p in $(pg_pids); do
	tr '\0' '\n' <"/proc/$p/environ" | grep -q -e "$SECRET2" -e FBCD_ && fail "postgres pid $p has fbcd's environment"
done

# ---- a clean stop stops the embedded PostgreSQL too
kill "$PID"
wait "$PID"
[ $? -eq 0 ] && pass || fail "fbcd serve did not exit 0 on SIGTERM"
PID=
[ -z "$(pg_pids)" ] && pass || fail "the embedded PostgreSQL outlived a clean stop"

# ---- no secret is printed: a malformed URL's password, the tokens
"$FBCD" serve --listen 127.0.0.1:0 --data-dir "$T/other" \
	--database-url "postgresql://fbcd:$PWSECRET@localhost:1/db?sslmode=bogus%zz" >"$T/badurl.log" 2>&1
[ $? -ne 0 ] && pass || fail "a malformed --database-url was accepted"
"$FBCD" serve --listen 127.0.0.1:0 --data-dir "$T/other" \
	--database-url "host=/nonexistent password=$PWSECRET dbname=x connect_timeout=2" >>"$T/badurl.log" 2>&1
[ $? -ne 0 ] && pass || fail "an unreachable database was accepted"
for f in "$T"/*.log "$D/postgresql.log"; do
	if grep -q -e "$PWSECRET" -e "$SECRET1" -e "$SECRET2" "$f"; then
		fail "a secret is printed in $(basename "$f"): $(grep -e "$PWSECRET" -e "$SECRET1" -e "$SECRET2" "$f" | head -2)"
	else
		pass
	fi
done
finish
