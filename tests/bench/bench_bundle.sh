#!/bin/sh
# Benchmark the bundle renderer on community-operators' history at main, next to fbcd validate
# of the resulting catalogs in the same run (bench_bundle.c). Prints figures only.
# usage: bench_bundle.sh BENCH_BUNDLE HISTORY_BUNDLE   (BENCH_RUNS, default 5)
set -u
EXE=$1
HIST=$2
[ -f "$HIST" ] || { echo "SKIP: $HIST not found"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-bench-bundle.XXXXXX")
trap 'rm -rf "$T"' EXIT
git clone -q "$HIST" "$T/repo" && git -C "$T/repo" checkout -q main || exit 1
nice "$EXE" "$T/repo" "${BENCH_RUNS:-5}"
