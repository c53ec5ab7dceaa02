#!/bin/sh
# Fetch the CEL conformance cases from the npm package @bufbuild/cel-spec
# into CACHE_DIR (under the build directory) and convert them to JSON for
# the C runner. Exit 77 (meson's "skipped") when npm or node is missing or
# the registry cannot be reached; nothing is written to the source tree.
#
# usage: fetch.sh CACHE_DIR   -> prints the path of conformance.json
set -eu
VERSION="${CEL_SPEC_VERSION:-0.6.1}"
cache="${1:?usage: fetch.sh CACHE_DIR}"
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
out="$cache/cel-spec-$VERSION/conformance.json"

if [ -s "$out" ]; then
	echo "$out"
	exit 0
fi
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	echo "fetch.sh: npm or node not available; skipping CEL conformance" >&2
	exit 77
fi
mkdir -p "$cache/cel-spec-$VERSION"
work="$cache/cel-spec-$VERSION"
if ! (cd "$work" && npm pack --silent "@bufbuild/cel-spec@$VERSION" >pack.log 2>&1); then
	echo "fetch.sh: npm pack @bufbuild/cel-spec@$VERSION failed (offline?); skipping" >&2
	cat "$work/pack.log" >&2 || true
	exit 77
fi
tgz=$(ls "$work"/bufbuild-cel-spec-*.tgz | head -n 1)
rm -rf "$work/package"
tar -xzf "$tgz" -C "$work"
node -e '
const t = require(process.argv[1]).tests;
require("fs").writeFileSync(process.argv[2] + ".tmp", JSON.stringify(t));
' "$work/package/dist/cjs/testdata/conformance.js" "$out"
mv "$out.tmp" "$out"
echo "$out"
