#!/bin/sh
# Benchmark: render every template of the nine template-managed operators of
# community-operators' history for every catalog its ci.yaml maps it to
# (`fbcd template verify`: load the bundle sources, render, compare), next
# to `fbcd validate` of the resulting catalogs, in the same run. Prints
# figures only (min/median/max wall seconds over BENCH_RUNS runs, default 3).
#   bench_template.sh FBCD HISTORY_BUNDLE
set -eu
FBCD=$1 BUNDLE=$2
RUNS=${BENCH_RUNS:-3}
[ -f "$BUNDLE" ] || { echo "bench_template: no $BUNDLE"; exit 77; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-bench-tpl.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
git clone -q "$BUNDLE" "$WORK/co"
CO=$WORK/co
mkdir "$WORK/none"

now() { date +%s.%N; }
# stats T1 T2 ...: "min median max"
stats() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {printf "%.3f %.3f %.3f", a[1], a[int((NR+1)/2)], a[NR]}'; }

# timed CMD...: wall seconds of one run (output discarded; exit 0/1 accepted)
timed() {
	t0=$(now)
	"$@" >/dev/null 2>&1 || [ $? -eq 1 ]
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", b - a}'
}

echo "bench_template: $RUNS runs each, machine shared with other jobs (figures are indicative)"
printf '%-26s %5s  %-23s %-23s %-23s\n' operator pairs "render+compare (s)" "render, dirs only (s)" "validate catalogs (s)"
printf '%-26s %5s  %-23s %-23s %-23s\n' "" "" "min median max" "min median max" "min median max"
for op in kepler-operator cat-facts-operator rabbitmq-cluster-operator aws-neuron-operator \
	jumpstarter-operator kube-green clusterpulse kairos-operator dotvirt-operator; do
	rules=""
	[ "$op" = clusterpulse ] && rules="--semver-rules v1.46"
	"$FBCD" template verify --repo "$CO" --operator "$op" $rules >"$WORK/verify.txt" || true
	pairs=$(tail -1 "$WORK/verify.txt" | sed 's/.*: \([0-9]*\) of \([0-9]*\) pairs.*/\1\/\2/')
	cats=$(sed -n 's/^[^:]*: [^ ]* -> \([^:]*\): .*/\1/p' "$WORK/verify.txt" | sort -u)
	r1=""; r2=""; v=""
	for i in $(seq "$RUNS"); do
		r1="$r1 $(timed "$FBCD" template verify --repo "$CO" --operator "$op" $rules)"
		r2="$r2 $(timed "$FBCD" template verify --repo "$CO" --operator "$op" $rules --bundles-from "$WORK/none")"
		t0=$(now)
		for c in $cats; do
			[ -d "$CO/catalogs/$c/$op" ] && "$FBCD" validate "$CO/catalogs/$c/$op" >/dev/null 2>&1 || true
		done
		t1=$(now)
		v="$v $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", b - a}')"
	done
	printf '%-26s %5s  %-23s %-23s %-23s\n' "$op" "$pairs" "$(stats $r1)" "$(stats $r2)" "$(stats $v)"
done
echo "render+compare loads every committed catalog as --bundles-from (6.6 MB) in each run;"
echo "'dirs only' renders from operators/<op>/<version>/ (fails fast where images are digests);"
echo "validate runs fbcd validate once per mapped catalog (one process each)."
