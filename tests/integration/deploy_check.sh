#!/bin/sh
# deploy/ verified offline (deploy/check.sh: Containerfile rules, runtime
# libraries, Kubernetes manifests through kubectl and a structural check,
# systemd units through systemd-analyze), then the Type=notify contract:
# `fbcd serve` sends READY=1 to $NOTIFY_SOCKET once it answers /readyz, and
# STOPPING=1 on SIGTERM.
FBCD=$1
SRC=$2
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null 2>&1 || skip "kubectl not installed"
command -v systemd-analyze >/dev/null 2>&1 || skip "systemd-analyze not installed"

if sh "$SRC/deploy/check.sh" "$FBCD" >"$T/check" 2>&1; then pass; else fail "deploy/check.sh"; cat "$T/check"; fi

# sd_notify: a datagram socket plays systemd
if ! ldd "$FBCD" | grep -q libsystemd; then
	echo "fbcd built without libsystemd: no notify check"
	finish
	exit $?
fi
PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-pg.XXXXXX")
trap 'if [ -f "$PGDIR/url" ]; then sh "$SRC/tests/lib/pg-stop.sh" "$PGDIR"; else rm -rf "$PGDIR"; fi; rm -rf "$T"' EXIT
PG=$(sh "$SRC/tests/lib/pg-start.sh" "$PGDIR") || { [ $? -eq 77 ] && skip "no PostgreSQL"; echo "FAIL: pg-start"; exit 1; }
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 - "$T/notify.sock" "$T/notify.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(60)
with open(sys.argv[2], "w") as log:
    try:
        while True:
            msg = s.recv(4096).decode()
            log.write(msg.replace("\n", " ") + "\n")
            log.flush()
            if "STOPPING=1" in msg:
                break
    except socket.timeout:
        pass
PY
LISTENER=$!
for _ in $(seq 50); do [ -S "$T/notify.sock" ] && break; sleep 0.1; done
NOTIFY_SOCKET=$T/notify.sock "$FBCD" serve --listen "127.0.0.1:$PORT" --database-url "$PG" \
	--data-dir "$T/data" 2>"$T/serve.err" &
SERVE=$!
ready=""
for _ in $(seq 100); do
	if grep -q "READY=1" "$T/notify.log" 2>/dev/null; then ready=1; break; fi
	sleep 0.1
done
[ -n "$ready" ] && pass || fail "no READY=1 on NOTIFY_SOCKET"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/readyz")
[ "$code" = 200 ] && pass || fail "READY=1 sent but /readyz answers $code"
kill -TERM "$SERVE"
wait "$SERVE" && pass || fail "fbcd serve exit status after SIGTERM"
wait "$LISTENER" 2>/dev/null
expect_grep "STOPPING=1" "$T/notify.log" "STOPPING=1 on SIGTERM"
finish
