#!/bin/sh
# fbcd image build's layer (pipeline/image/layer.c): the tar is written while
# the catalog renders and compressed in 1 MiB blocks while it is written, so
# check what that must keep: entries in directory key order ("foo-bar/"
# before "foo/", "_nopackage/" among the packages), every catalog.json the
# render of its package, the gzip a valid stream whose tar hashes to the
# config's diff_id and whose blob hashes to its digest, for layers below,
# at and above the two blocks where block compression starts; the same
# digests twice and on one CPU.
# usage: image_layer.sh FBCD GEN_CATALOG
FBCD=$1 GEN=$2
. "$(dirname "$0")/lib.sh"
CHECK=$(dirname "$0")/image_layer_check.py

mkcat() { # mkcat DIR EXTRA_JSON NAME...: packages copied from one template
	_d=$1 _extra=$2
	shift 2
	for _n in "$@"; do
		mkdir -p "$_d/$_n"
		printf '%s\n' \
			"{\"schema\":\"olm.package\",\"name\":\"$_n\",\"defaultChannel\":\"stable\"}" \
			"{\"schema\":\"olm.channel\",\"package\":\"$_n\",\"name\":\"stable\",\"entries\":[{\"name\":\"$_n.v1.0.0\"}]}" \
			"{\"schema\":\"olm.bundle\",\"package\":\"$_n\",\"name\":\"$_n.v1.0.0\",\"image\":\"quay.io/x/$_n:v1\",\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"$_n\",\"version\":\"1.0.0\"}}]}" \
			>"$_d/$_n/catalog.json"
	done
	[ -n "$_extra" ] && printf '%s\n' "$_extra" >"$_d/extra.json"
	return 0
}

mkcat "$T/prefix" "" foo foo-bar foo-bar-baz foo-a fooz foo1 a foo-bar1 zed
mkcat "$T/nopkg" '{"schema":"acme.thing","name":"x","v":1}' 0abc 9z foo foo-bar zz
"$GEN" --packages 2 --bundles 2 --seed 1 --format json "$T/tiny" >/dev/null
"$GEN" --packages 20 --bundles 14 --seed 3 --format yaml "$T/under2m" >/dev/null
"$GEN" --packages 22 --bundles 14 --seed 3 --format yaml "$T/over2m" >/dev/null
"$GEN" --packages 20 --bundles 30 --seed 7 --format json "$T/blocks" >/dev/null

for c in prefix nopkg tiny under2m over2m blocks; do
	run image build --catalog "$T/$c" --output "oci:$T/img-$c"
	expect_rc 0 "image build $c"
	D=$(cat "$T/out")
	"$FBCD" render "$T/$c" >"$T/render-$c" 2>/dev/null
	if python3 "$CHECK" "$T/img-$c" "$T/render-$c" >"$T/check" 2>&1; then pass; else
		fail "layer of $c"
		sed 's/^/    /' "$T/check"
	fi
	run image build --catalog "$T/$c" --output "oci:$T/again-$c"
	if [ "$(cat "$T/out")" = "$D" ]; then pass; else fail "$c: a second build differs"; fi
	if command -v taskset >/dev/null 2>&1; then
		RC=0
		taskset -c 0 "$FBCD" image build --catalog "$T/$c" --output "oci:$T/one-$c" >"$T/out" 2>"$T/err" || RC=$?
		if [ "$RC" -eq 0 ] && [ "$(cat "$T/out")" = "$D" ]; then pass; else fail "$c: the build on one CPU differs"; fi
	fi
done
finish
