# Shared helpers of the integration scripts (POSIX sh). Source it after
# setting FBCD. Each script runs in its own temporary directory $T.
set -u
T=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-it.XXXXXX")
# fbcd pr check keeps a cache under $XDG_CACHE_HOME: each script its own, never the user's
export XDG_CACHE_HOME="$T/xdg-cache"
trap 'rm -rf "$T"' EXIT
FAILS=0
CHECKS=0

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { CHECKS=$((CHECKS + 1)); }
finish() {
	echo "$CHECKS checks passed, $FAILS failed"
	[ "$FAILS" -eq 0 ]
}

# stop_clean PID LOG...: stop a server with SIGTERM, wait for it, and fail
# if it or its sanitizers (AddressSanitizer, LeakSanitizer at exit, UBSan)
# reported anything in its logs.
stop_clean() {
	_pid=$1
	shift
	kill -TERM "$_pid" 2>/dev/null && wait "$_pid" 2>/dev/null
	if grep -q "ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error" "$@" 2>/dev/null; then
		fail "sanitizer report in $*"
		grep -h -A20 "ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error" "$@" | head -60
	else
		pass
	fi
}

# run ARGS...: runs fbcd, leaves stdout in $T/out, stderr in $T/err, status in $RC.
run() {
	RC=0
	"$FBCD" "$@" >"$T/out" 2>"$T/err" || RC=$?
}

# expect_rc N WHAT
expect_rc() {
	if [ "$RC" -eq "$1" ]; then
		pass
	else
		fail "$2: exit status $RC, expected $1"
		sed -n 1,10p "$T/err" "$T/out" | sed 's/^/    /'
	fi
}

# expect_grep PATTERN FILE WHAT
expect_grep() {
	if grep -q -e "$1" "$2"; then pass; else fail "$3: no line matching '$1' in $(basename "$2")"; sed -n 1,10p "$2" | sed 's/^/    /'; fi
}

# has_error CODE PACKAGE FILE [CHANNEL [BUNDLE]]: the JSON report in $T/out
# lists an error with that code, package and file (and channel, bundle).
has_error() {
	if python3 - "$T/out" "$@" <<'PY'
import json, sys
path, code, pkg, file = sys.argv[1:5]
chan = sys.argv[5] if len(sys.argv) > 5 else None
bundle = sys.argv[6] if len(sys.argv) > 6 else None
rep = json.load(open(path))
assert rep["valid"] is False, "valid is not false"
for e in rep["errors"]:
    if e.get("code") == code and e.get("package") == pkg and e.get("file") == file \
       and (chan is None or e.get("channel") == chan) \
       and (bundle is None or e.get("bundle") == bundle):
        sys.exit(0)
print("    errors:", json.dumps(rep["errors"])[:2000])
sys.exit(1)
PY
	then pass; else fail "expected error $* in the JSON report"; fi
}

# copy_catalog SRC DST: a writable copy.
copy_catalog() {
	rm -rf "$2"
	cp -R "$1" "$2"
	chmod -R u+w "$2"
}
