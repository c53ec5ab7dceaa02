#!/bin/sh
# Benchmark `fbcd validate` against the tokenize-only floor (tests/bench/
# tokenize_only.c: libyaml events for YAML, a lexer that builds nothing for
# JSON), measured in the same run, alternating (floor, fbcd, floor, fbcd...),
# on: the real catalog (community v4.20, YAML with olm.csv.metadata); the
# catalogs v4.12-v4.22 that `fbcd repo catalogs --keep-bundle-objects` builds from the history
# bundle (v4.12-v4.16 carry olm.bundle.object, v4.17+ olm.csv.metadata;
# mostly JSON); and a generated large one. Each figure is min / median / max
# over the runs; the ratios are of the medians (and min/max of the per-run
# ratios). Every timed run starts with the catalog's files read once (not
# timed), so that neither side pays for disk reads where the system reclaims
# the page cache between runs. Prints figures only.
#
#   bench_validate.sh FBCD TOKENIZE_ONLY GEN_CATALOG REAL_CATALOG_DIR [HISTORY_BUNDLE]
# Environment: BENCH_RUNS (5), BENCH_CATALOGS (a grep -E pattern over the
# catalog labels, e.g. 'v4.1[2-6]'; default all), BENCH_PACKAGES (2000),
# BENCH_BUNDLES (25), BENCH_OBJECT_BYTES (2000), BENCH_FORMAT (json),
# BENCH_KEEP=1 keeps the work directory.
set -eu
FBCD=$1 TOK=$2 GEN=$3 REAL=$4 HIST=${5:-}
PACKAGES=${BENCH_PACKAGES:-2000}
BUNDLES=${BENCH_BUNDLES:-25}
OBJECT_BYTES=${BENCH_OBJECT_BYTES:-2000}
FORMAT=${BENCH_FORMAT:-json}
RUNS=${BENCH_RUNS:-5}
PICK=${BENCH_CATALOGS:-.}
TIME=/usr/bin/time
if [ ! -x "$TIME" ]; then
	echo "bench_validate: /usr/bin/time is missing (apt-get install -y time)" >&2
	exit 77
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-bench.XXXXXX")
cleanup() { [ "${BENCH_KEEP:-0}" = 1 ] && echo "kept $WORK" || rm -rf "$WORK"; }
trap cleanup EXIT

# warm DIR: read every file of DIR into the page cache (untimed).
warm() {
	find "$1" -type f -exec cat {} + >/dev/null 2>&1 || true
}

# once LABEL CMD...: one timed run; sets S (wall s), C (user+sys s), K (peak RSS KiB).
once() {
	label=$1; shift
	rc=0
	t0=$(date +%s%N)
	"$TIME" -v -o "$WORK/time.txt" "$@" >/dev/null 2>"$WORK/stderr.txt" || rc=$?
	t1=$(date +%s%N)
	if [ $rc -ne 0 ] && ! { [ "$label" = validate ] && [ $rc -eq 1 ]; }; then
		echo "bench_validate: $label exited $rc:" >&2
		head -5 "$WORK/stderr.txt" >&2
		exit 1
	fi
	VRC=$rc
	# wall time to the microsecond (time -v rounds to 10 ms), time's own start included
	S=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", (b - a) / 1e9}')
	C=$(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {print u + s}' "$WORK/time.txt")
	K=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
}

# mmm FILE: "min / median / max" of the numbers in FILE (one a line)
mmm() { sort -g "$1" | awk '{v[NR] = $1} END {printf "%.4f / %.4f / %.4f", v[1], (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[NR]}'; }
med() { sort -g "$1" | awk '{v[NR] = $1} END {printf "%.6f", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }

report() {
	name=$1 dir=$2
	echo "$name" | grep -Eq -e "$PICK" || return 0
	bytes=$(find "$dir" -type f ! -name .indexignore -exec cat {} + | wc -c)
	files=$(find "$dir" -type f ! -name .indexignore | wc -l)
	objs=$(grep -rho '"olm.bundle.object"\|olm\.bundle\.object' "$dir" | wc -l)
	csvm=$(grep -rho '"olm.csv.metadata"\|olm\.csv\.metadata' "$dir" | wc -l)
	: >"$WORK/ts" ; : >"$WORK/vs"; : >"$WORK/vk"; : >"$WORK/r"
	once help "$FBCD" --help
	bkb=$K
	i=0
	status=valid
	while [ $i -lt "$RUNS" ]; do
		warm "$dir"
		once tokenize "$TOK" "$dir"
		t=$S
		echo "$S" >>"$WORK/ts"
		warm "$dir"
		once validate "$FBCD" validate "$dir"
		[ "$VRC" = 1 ] && status=invalid
		echo "$S" >>"$WORK/vs"
		echo "$K" >>"$WORK/vk"
		awk -v a="$S" -v b="$t" 'BEGIN {if (b > 0) printf "%.3f\n", a / b}' >>"$WORK/r"
		i=$((i + 1))
	done
	awk -v name="$name" -v files="$files" -v bytes="$bytes" -v objs="$objs" -v csvm="$csvm" \
	    -v tmmm="$(mmm "$WORK/ts")" -v vmmm="$(mmm "$WORK/vs")" -v kmmm="$(mmm "$WORK/vk")" \
	    -v rmmm="$(mmm "$WORK/r")" -v tmed="$(med "$WORK/ts")" -v vmed="$(med "$WORK/vs")" \
	    -v kmed="$(med "$WORK/vk")" -v bkb="$bkb" -v status="$status" 'BEGIN {
		mb = bytes / 1048576
		printf "%s: %d files, %.1f MiB, %d olm.bundle.object, %d olm.csv.metadata; fbcd says %s\n", name, files, mb, objs, csvm, status
		printf "  tokenize-only floor wall s (min/median/max): %s\n", tmmm
		printf "  fbcd validate wall s      (min/median/max): %s\n", vmmm
		tr = tmed > 0 ? vmed / tmed : 0
		printf "  ratio of medians %.2fx (target <= 1.5x)%s; per-run ratios min/median/max %s\n", tr, tr <= 1.5 ? "" : "  ABOVE TARGET", rmmm
		split(kmmm, kk, " / ")
		printf "  fbcd validate peak RSS MiB (min/median/max): %.1f / %.1f / %.1f; median / input %.2fx (target <= 2x); idle binary %.1f MiB, median above it / input %.2fx\n", kk[1] / 1024, kk[2] / 1024, kk[3] / 1024, (bytes > 0 ? kmed * 1024 / bytes : 0), bkb / 1024, (bytes > 0 ? (kmed - bkb) * 1024 / bytes : 0)
	}'
}

echo "fbcd validate benchmark ($RUNS alternating runs each, $(nproc) CPUs, load average at start $(cut -d" " -f1-3 /proc/loadavg))"
if [ -d "$REAL" ]; then
	report "real catalog v4.20 (YAML)" "$REAL"
else
	echo "real catalog not found at $REAL: skipped"
fi
if [ -n "$HIST" ] && [ -f "$HIST" ] && command -v git >/dev/null; then
	git clone -q "$HIST" "$WORK/history" 2>/dev/null &&
		# --keep-bundle-objects: every bundle keeps its olm.bundle.object (v4.12-v4.16) or
		# olm.csv.metadata, as before SV-13 was modelled, so the catalogs measured stay the
		# object-heavy ones the loading figures are about
		"$FBCD" repo catalogs --keep-bundle-objects --repo "$WORK/history" --output "$WORK/built" >/dev/null 2>&1 || true
	for c in "$WORK"/built/v4.*; do
		[ -d "$c" ] && report "history catalog $(basename "$c") (fbcd repo catalogs)" "$c"
	done
else
	echo "history bundle not given or not found: catalogs v4.12-v4.22 skipped"
fi
GEN_DIR="$WORK/generated"
"$GEN" --packages "$PACKAGES" --bundles "$BUNDLES" --object-bytes "$OBJECT_BYTES" \
	--format "$FORMAT" --seed 1 "$GEN_DIR"
report "generated catalog ($PACKAGES packages x $BUNDLES bundles, $FORMAT)" "$GEN_DIR"
echo "load average at end $(cut -d" " -f1-3 /proc/loadavg)"
