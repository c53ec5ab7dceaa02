#!/bin/sh
# fbcd pr check benchmark on community-operators' history: every refs/pull/*/head against
# its parent, cold and warm, next to validating the same catalogs (bench_pr_check.c).
# Usage: bench_pr_check.sh BENCH_PR_CHECK HISTORY_BUNDLE
BIN=$1
BUNDLE=$2
[ -f "$BUNDLE" ] || { echo "SKIP: no $BUNDLE"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
git clone -q --mirror "$BUNDLE" "$T/co.git" || exit 77
git -C "$T/co.git" for-each-ref --format='%(refname)' refs/pull > "$T/refs"
nice "$BIN" "$T/co.git" "$T/refs" "$T/cache" || { echo "bench_pr_check failed: $?"; exit 1; }
du -sh "$T/cache" | sed 's/^/on-disk cache after the run: /'
