#!/bin/sh
# fbcd resolve end to end: exit statuses 0/1/2 and the output shape.
# usage: cli_test.sh FBCD DATA_DIR [REAL_CATALOG_DIR]
set -u
fbcd=$1
dir=$2
real=${3:-}
fail=0
check() { # name expected_status needle args...
	name=$1 want=$2 needle=$3
	shift 3
	out=$("$fbcd" resolve "$@" 2>&1)
	got=$?
	if [ "$got" != "$want" ]; then
		echo "not ok - $name: exit $got, want $want: $out"
		fail=1
	elif ! printf '%s' "$out" | grep -q -- "$needle"; then
		echo "not ok - $name: output lacks '$needle': $out"
		fail=1
	else
		echo "ok - $name"
	fi
}
check sat 0 '"bundle": "etcd.v0.9.2"' --input "$dir/sat.json"
check stdin 0 '"satisfiable":true' --compact --input - <"$dir/sat.json"
check unsat 1 '"kind": "conflict"' --input "$dir/unsat.json"
check unsat-names-package 1 'originate from package etcd' --input "$dir/unsat.json"
check bad-range 1 '"kind": "error"' --input "$dir/bad_range.json"
check usage 2 'usage' --bogus
check missing-file 2 'No such file' --input "$dir/does-not-exist.json"
check flags-and-input 2 'either --input' --input "$dir/sat.json" --request x
check bad-request-flag 2 'PKG' --catalog "$dir" --request ':x'
check semantics-override 1 'not supported' --semantics v1 --input "$dir/sat.json"
if [ -n "$real" ] && [ -d "$real" ]; then
	check flags-upgrade 0 '"replaces": "kube-green.v0.6.0"' --catalog "$real" \
		--request kube-green --installed kube-green.v0.6.0@0.6.0
	check flags-range 0 '"bundle": "kube-green.v0.6.0"' --catalog "$real" \
		--request 'kube-green:alpha@<0.7.0'
	check flags-v1 0 '"catalog": "catalog-v4.20"' --semantics v1 --catalog "$real" \
		--request kube-green
	check flags-unknown-bundle 2 'in no catalog' --catalog "$real" --request kube-green \
		--installed nope.v1@1.0.0
fi
exit $fail
