#!/bin/sh
# Lazy binding (api/lazy/README.md): the fbcd executable does not link the
# libraries only some commands need; it loads each on first use.
#   lazy_libs.sh FBCD REAL_CATALOG SONAME...
# - none of SONAME is in fbcd's DT_NEEDED (a function missing from
#   api/lazy/*.syms would make the linker add its library back);
# - `fbcd validate` of the real catalog loads none of them;
# - `fbcd resolve` loads CryptoMiniSat when it solves, and gives the same answer;
# - a library that cannot be loaded, or lacks the function, ends the command
#   with status 127 and a message naming the library (and the function).
FBCD=$1 REAL=$2
shift 2
. "$(dirname "$0")/lib.sh"
command -v readelf >/dev/null || skip "readelf (binutils) is missing"

readelf -d "$FBCD" >"$T/dyn" || fail "readelf -d $FBCD"
for so in "$@"; do
	if grep -q "NEEDED.*\[$so\]" "$T/dyn"; then
		fail "fbcd links $so at start-up: a function of it is missing from api/lazy/*.syms"
	else
		pass
	fi
done
[ $# -ge 8 ] && pass || fail "expected the sonames of the lazy libraries as arguments, got $#"
# fbcd version --libraries names exactly those (deploy/check.sh relies on it)
"$FBCD" version --libraries >"$T/libs" || fail "fbcd version --libraries"
printf '%s\n' "$@" | diff - "$T/libs" >/dev/null && pass || { fail "fbcd version --libraries"; cat "$T/libs"; }

# Which lazy libraries a run loads (the dynamic loader's own trace).
loaded() { grep -o "file=[^ ]*" "$1" | sed 's/^file=//' | sort -u; }

[ -d "$REAL" ] || skip "real catalog not found at $REAL"
RC=0
LD_DEBUG=files "$FBCD" validate "$REAL" >"$T/out" 2>"$T/err" || RC=$?
expect_rc 0 "validate the real catalog"
expect_grep ": valid (" "$T/err" "validate says valid (on stderr)"
loaded "$T/err" >"$T/loaded"
for so in "$@"; do
	if grep -qx "$so" "$T/loaded"; then fail "fbcd validate loaded $so"; else pass; fi
done
expect_grep "libjansson" "$T/loaded" "the trace lists the libraries fbcd does link"

# A small catalog to resolve against.
C="$T/cat"; mkdir -p "$C/demo"
cat >"$C/demo/catalog.yaml" <<'YAML'
---
schema: olm.package
name: demo
defaultChannel: stable
---
schema: olm.channel
package: demo
name: stable
entries:
- name: demo.v1.0.0
- name: demo.v1.1.0
  replaces: demo.v1.0.0
---
schema: olm.bundle
package: demo
name: demo.v1.0.0
image: example.com/demo:1.0.0
properties:
- type: olm.package
  value: {packageName: demo, version: 1.0.0}
---
schema: olm.bundle
package: demo
name: demo.v1.1.0
image: example.com/demo:1.1.0
properties:
- type: olm.package
  value: {packageName: demo, version: 1.1.0}
YAML
RC=0
LD_DEBUG=files "$FBCD" resolve --catalog "$C" --request demo:stable >"$T/out" 2>"$T/err" || RC=$?
expect_rc 0 "resolve demo:stable"
expect_grep "demo.v1.1.0" "$T/out" "resolve selects the channel head"
loaded "$T/err" | grep -q "^libcryptominisat5" && pass || fail "resolve did not load CryptoMiniSat lazily"
SAT=$(printf '%s\n' "$@" | grep "^libcryptominisat5" | head -1)

# A broken library: not an ELF file, then an ELF file without the function.
resolve_broken() {
	RC=0
	LD_LIBRARY_PATH="$T/broken" "$FBCD" resolve --catalog "$C" --request demo:stable \
		>"$T/out" 2>"$T/err" || RC=$?
}
if [ -n "$SAT" ]; then
	mkdir -p "$T/broken"
	echo "not a library" >"$T/broken/$SAT"
	resolve_broken
	expect_rc 127 "resolve with an unloadable $SAT"
	expect_grep "^fbcd: cannot load $SAT (needed by this command): " "$T/err" "the message names the library"
	if command -v cc >/dev/null; then
		printf 'int fbcd_lazy_test_nothing(void);\nint fbcd_lazy_test_nothing(void) { return 0; }\n' >"$T/empty.c"
		cc -shared -fPIC -o "$T/broken/$SAT" "$T/empty.c" || fail "cc -shared"
		resolve_broken
		expect_rc 127 "resolve with a $SAT that lacks the solver"
		expect_grep "^fbcd: cannot load $SAT (cmsat_[a-z_]*): .*undefined symbol" "$T/err" "the message names the function"
	fi
else
	fail "no libcryptominisat5 soname among the arguments"
fi
finish
