#!/bin/sh
# Re-validating the real catalog after one package changed, through the file cache, next to a
# cold validate in the same run (bench_revalidate.c). The catalog goes into a git repository
# (commit A); one package's catalog.yaml gets a new bundle appended (commit B; in no channel, so
# B has one finding, C18, which the cached and uncached loads must both report).
# Usage: bench_revalidate.sh BENCH_REVALIDATE CATALOG_DIR [ROUNDS]
BIN=$1
CATALOG=$2
ROUNDS=${3:-${BENCH_RUNS:-9}}
[ -d "$CATALOG" ] || { echo "SKIP: no $CATALOG"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-bench-reval.XXXXXX")
trap 'rm -rf "$T"' EXIT
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@x GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@x \
	GIT_CONFIG_NOSYSTEM=1 HOME="$T"
git init -q "$T/repo" && cp -r "$CATALOG"/. "$T/repo/" &&
	git -C "$T/repo" add -A && git -C "$T/repo" commit -qm A || exit 1
# one package changes: kube-green gets a bundle (a package of median size)
PKG=kube-green
[ -f "$T/repo/$PKG/catalog.yaml" ] || PKG=$(ls "$T/repo" | head -1)
printf -- '---\nschema: olm.bundle\nname: %s.v99.0.0\npackage: %s\nimage: quay.io/bench/%s:v99.0.0\nproperties:\n- type: olm.package\n  value:\n    packageName: %s\n    version: 99.0.0\n' \
	"$PKG" "$PKG" "$PKG" "$PKG" >>"$T/repo/$PKG/catalog.yaml"
git -C "$T/repo" commit -qam B || exit 1
echo "catalog $(du -sh "$CATALOG" | cut -f1), $(ls "$CATALOG" | wc -l) packages; changed: $PKG ($(du -h "$T/repo/$PKG/catalog.yaml" | cut -f1)); machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
nice "$BIN" "$T/repo" HEAD^ HEAD "$ROUNDS" || { echo "bench_revalidate failed: $?"; exit 1; }
