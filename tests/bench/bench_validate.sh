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

# once LABEL CMD...: one timed run; sets S (wall s), C (user+sys s), K (peak RSS KiB).
once() {
	label=$1; shift
	rc=0
	"$TIME" -v -o "$WORK/time.txt" "$@" >/dev/null 2>"$WORK/stderr.txt" || rc=$?
	if [ $rc -ne 0 ] && ! { [ "$label" = validate ] && [ $rc -eq 1 ]; }; then
		echo "bench_validate: $label exited $rc:" >&2
		head -5 "$WORK/stderr.txt" >&2
		exit 1
	fi
	[ $rc -eq 1 ] && echo "  (note: fbcd validate reported the catalog invalid)"
	S=$(awk -F': ' '/Elapsed \(wall clock\)/ {
		n = split($2, p, ":"); t = 0
		for (k = 1; k <= n; k++) t = t * 60 + p[k]
		print t }' "$WORK/time.txt")
	C=$(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {print u + s}' "$WORK/time.txt")
	K=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
}

# better OLD NEW: is NEW a smaller time than OLD (or OLD unset)?
better() { [ -z "$1" ] || awk -v a="$2" -v b="$1" 'BEGIN{exit !(a < b)}'; }

report() {
	name=$1 dir=$2
	bytes=$(find "$dir" -type f ! -name .indexignore -exec cat {} + | wc -c)
	files=$(find "$dir" -type f ! -name .indexignore | wc -l)
	ts= tc= tkb= vs= vc= vkb=
	# The process's own floor: fbcd maps ~40 shared libraries (libpq, gnutls,
	# libstdc++...) whose pages count in RSS before any catalog is read.
	once help "$FBCD" --help
	bkb=$K
	# Interleaved, best of RUNS each, so that both see the same machine load.
	i=0
	while [ $i -lt "$RUNS" ]; do
		once tokenize "$TOK" "$dir"
		if better "$ts" "$S"; then ts=$S; tkb=$K; fi
		if better "$tc" "$C"; then tc=$C; fi
		once validate "$FBCD" validate "$dir"
		if better "$vs" "$S"; then vs=$S; vkb=$K; fi
		if better "$vc" "$C"; then vc=$C; fi
		i=$((i + 1))
	done
	awk -v name="$name" -v files="$files" -v bytes="$bytes" -v ts="$ts" -v tc="$tc" -v tkb="$tkb" \
	    -v vs="$vs" -v vc="$vc" -v vkb="$vkb" -v bkb="$bkb" 'BEGIN {
		mb = bytes / 1048576
		printf "%s: %d files, %.1f MiB input\n", name, files, mb
		printf "  %-32s %8s %9s %13s\n", "", "wall", "cpu", "peak RSS"
		printf "  %-32s %7.2fs %8.2fs %9.1f MiB\n", "tokenize-only (libyaml+jansson)", ts, tc, tkb / 1024
		printf "  %-32s %7.2fs %8.2fs %9.1f MiB\n", "fbcd validate", vs, vc, vkb / 1024
		tr = ts > 0 ? vs / ts : 0
		cr = tc > 0 ? vc / tc : 0
		mr = bytes > 0 ? vkb * 1024 / bytes : 0
		printf "  wall ratio validate/tokenize : %6.2fx (target <= 1.5x)%s\n", tr, tr <= 1.5 ? "" : "  ABOVE TARGET"
		printf "  cpu ratio validate/tokenize  : %6.2fx\n", cr
		printf "  peak RSS / input bytes       : %6.2fx (target <= 2x)%s\n", mr, mr <= 2 ? "" : "  ABOVE TARGET"
		printf "  peak RSS above the idle binary RSS (%.1f MiB) / input: %5.2fx\n", bkb / 1024, (bytes > 0 ? (vkb - bkb) * 1024 / bytes : 0)
		printf "  validate throughput          : %6.1f MiB/s\n", (vs > 0 ? mb / vs : 0)
	}'
}

echo "fbcd validate benchmark (best of $RUNS interleaved runs, $(nproc) CPUs, load average $(cut -d" " -f1 /proc/loadavg))"
if [ -d "$REAL" ]; then
	report "real catalog ($REAL)" "$REAL"
else
	echo "real catalog not found at $REAL: skipped"
fi
GEN_DIR="$WORK/generated"
"$GEN" --packages "$PACKAGES" --bundles "$BUNDLES" --object-bytes "$OBJECT_BYTES" \
	--format "$FORMAT" --seed 1 "$GEN_DIR"
report "generated catalog ($PACKAGES packages x $BUNDLES bundles, $FORMAT)" "$GEN_DIR"
