#!/usr/bin/env bash
# The README's "test" command and what CI runs: install, build twice (normal
# and AddressSanitizer+UndefinedBehaviorSanitizer), check formatting, run the
# unit and integration suites in both builds, the threaded ones again under
# ThreadSanitizer, and end with one summary line "N passed, N failed[, N
# skipped]".
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh || { echo "install-deps failed"; echo "0 passed, 1 failed"; exit 1; }

passed=0 failed=0 skipped=0
count_log() { # add the results of a meson testlog.json
	local log=$1
	[ -f "$log" ] || return 0
	read -r p f s < <(python3 - "$log" <<'PY'
import json, sys
p = f = s = 0
for line in open(sys.argv[1]):
    line = line.strip()
    if not line:
        continue
    r = json.loads(line).get("result")
    if r in ("OK", "EXPECTEDFAIL"):
        p += 1
    elif r == "SKIP":
        s += 1
    else:
        f += 1
print(p, f, s)
PY
)
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
}

run_build() { # name, meson setup args...
	local dir=$1; shift
	echo "=== build $dir"
	if ! bash scripts/build.sh "$dir" "$@" > "/tmp/fbcd-$dir-build.log" 2>&1; then
		tail -50 "/tmp/fbcd-$dir-build.log"
		echo "build $dir FAILED"
		failed=$((failed + 1))
		return
	fi
	echo "=== test $dir"
	rm -f "$dir/meson-logs/testlog.json"
	meson test -C "$dir" --no-rebuild --print-errorlogs --suite unit --suite integration \
		--timeout-multiplier "${TIMEOUT_MULT:-3}" 2>&1 | grep -vE '^ *[0-9]+/[0-9]+ .* (OK|SKIP) ' || true
	count_log "$dir/meson-logs/testlog.json"
}

echo "=== format check"
if bash .ci/format-check; then passed=$((passed + 1)); else failed=$((failed + 1)); fi

run_build build
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0 \
	run_build build-asan -Db_sanitize=address,undefined -Db_lundef=false

# ThreadSanitizer over the tests of what runs on threads (the loader's
# walk, parser pool and delivery; validation's two threads): a race fails.
TSAN_TESTS="load_dir load_tree load_jsonfast fbc_validate fbc_catalog fbc_cache"
echo "=== build build-tsan"
if ! { [ -f build-tsan/build.ninja ] || meson setup build-tsan -Db_sanitize=thread >/dev/null; } ||
	! ninja -C build-tsan tests/unit/load/test_load_dir tests/unit/load/test_load_tree \
		tests/unit/load/test_load_jsonfast tests/unit/fbc/test_fbc_validate \
		tests/unit/fbc/test_fbc_catalog tests/unit/fbc/test_fbc_cache \
		> /tmp/fbcd-build-tsan-build.log 2>&1; then
	tail -50 /tmp/fbcd-build-tsan-build.log
	echo "build build-tsan FAILED"
	failed=$((failed + 1))
else
	echo "=== test build-tsan"
	rm -f build-tsan/meson-logs/testlog.json
	# shellcheck disable=SC2086
	TSAN_OPTIONS=halt_on_error=1:exitcode=66 meson test -C build-tsan --no-rebuild \
		--print-errorlogs --timeout-multiplier "${TIMEOUT_MULT:-3}" $TSAN_TESTS 2>&1 |
		grep -vE '^ *[0-9]+/[0-9]+ .* (OK|SKIP) ' || true
	count_log build-tsan/meson-logs/testlog.json
fi

echo
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
