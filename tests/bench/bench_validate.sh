#!/bin/sh
# Benchmark `fbcd validate` against the tokenize-only baseline (libyaml events
# and jansson, tests/bench/tokenize_only.c), measured in the same run, on the
# real catalog and on a generated large one. Prints figures only.
#
#   bench_validate.sh FBCD TOKENIZE_ONLY GEN_CATALOG REAL_CATALOG_DIR
# Environment: BENCH_PACKAGES (2000), BENCH_BUNDLES (25), BENCH_OBJECT_BYTES
# (2000), BENCH_FORMAT (json), BENCH_RUNS (3, the best run is reported),
# BENCH_KEEP=1 keeps the generated catalog.
set -eu
FBCD=$1 TOK=$2 GEN=$3 REAL=$4
PACKAGES=${BENCH_PACKAGES:-2000}
BUNDLES=${BENCH_BUNDLES:-25}
OBJECT_BYTES=${BENCH_OBJECT_BYTES:-2000}
FORMAT=${BENCH_FORMAT:-json}
RUNS=${BENCH_RUNS:-3}
TIME=/usr/bin/time
if [ ! -x "$TIME" ]; then
	echo "bench_validate: /usr/bin/time is missing (apt-get install -y time)" >&2
	exit 77
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-bench.XXXXXX")
cleanup() { [ "${BENCH_KEEP:-0}" = 1 ] && echo "kept $WORK" || rm -rf "$WORK"; }
trap cleanup EXIT

# measure LABEL CMD... -> sets SECS and KB (best wall time over RUNS, its peak RSS)
measure() {
	label=$1; shift
	SECS=; KB=
	i=0
	while [ $i -lt "$RUNS" ]; do
		rc=0
		"$TIME" -v -o "$WORK/time.txt" "$@" >/dev/null 2>"$WORK/stderr.txt" || rc=$?
		if [ $rc -ne 0 ]; then
			echo "bench_validate: $label exited $rc:" >&2
			head -5 "$WORK/stderr.txt" >&2
			[ "$label" = validate ] && [ $rc -eq 1 ] || exit 1
		fi
		s=$(awk -F': ' '/Elapsed \(wall clock\)/ {
			n = split($2, p, ":"); t = 0
			for (k = 1; k <= n; k++) t = t * 60 + p[k]
			print t }' "$WORK/time.txt")
		k=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
		if [ -z "$SECS" ] || awk -v a="$s" -v b="$SECS" 'BEGIN{exit !(a < b)}'; then
			SECS=$s; KB=$k
		fi
		i=$((i + 1))
	done
}

report() {
	name=$1 dir=$2
	bytes=$(find "$dir" -type f ! -name .indexignore -exec cat {} + | wc -c)
	files=$(find "$dir" -type f ! -name .indexignore | wc -l)
	measure tokenize "$TOK" "$dir"; tsecs=$SECS tkb=$KB
	measure validate "$FBCD" validate "$dir"; vsecs=$SECS vkb=$KB
	awk -v name="$name" -v files="$files" -v bytes="$bytes" -v ts="$tsecs" -v tkb="$tkb" \
	    -v vs="$vsecs" -v vkb="$vkb" 'BEGIN {
		mb = bytes / 1048576
		printf "%s: %d files, %.1f MiB input\n", name, files, mb
		printf "  tokenize-only (libyaml+jansson): %7.2f s  peak RSS %8.1f MiB\n", ts, tkb / 1024
		printf "  fbcd validate                  : %7.2f s  peak RSS %8.1f MiB\n", vs, vkb / 1024
		tr = ts > 0 ? vs / ts : 0
		mr = bytes > 0 ? vkb * 1024 / bytes : 0
		printf "  time ratio validate/tokenize   : %7.2fx (target <= 1.5x)%s\n", tr, tr <= 1.5 ? "" : "  ABOVE TARGET"
		printf "  peak RSS / input bytes         : %7.2fx (target <= 2x)%s\n", mr, mr <= 2 ? "" : "  ABOVE TARGET"
		printf "  validate throughput            : %7.1f MiB/s\n", vs > 0 ? mb / vs : 0
	}'
}

echo "fbcd validate benchmark (best of $RUNS runs, $(nproc) CPUs)"
if [ -d "$REAL" ]; then
	report "real catalog ($REAL)" "$REAL"
else
	echo "real catalog not found at $REAL: skipped"
fi
GEN_DIR="$WORK/generated"
"$GEN" --packages "$PACKAGES" --bundles "$BUNDLES" --object-bytes "$OBJECT_BYTES" \
	--format "$FORMAT" --seed 1 "$GEN_DIR"
report "generated catalog ($PACKAGES packages x $BUNDLES bundles, $FORMAT)" "$GEN_DIR"
