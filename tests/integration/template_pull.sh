#!/bin/sh
# fbcd template render --pull against a real registry (Debian's
# docker-registry on loopback): real bundle directories of community-
# operators' history (kepler-operator) are built into bundle images with
# umoci (two layers: /manifests, then /metadata) and pushed with skopeo; a
# template listing them renders with --pull exactly as it renders from the
# bundle directories themselves (--bundle-root), in both migrate levels.
# Without --pull the image is named as unresolvable; a missing tag and an
# image that is not a bundle fail with the image named; nothing is left in
# TMPDIR.
#   template_pull.sh FBCD HISTORY_BUNDLE
FBCD=$1 BUNDLE=$2
. "$(dirname "$0")/lib.sh"
[ -f "$BUNDLE" ] || skip "no $BUNDLE"
for t in git docker-registry skopeo umoci curl; do
	command -v "$t" >/dev/null || skip "$t is not installed"
done
REG_PID=
cleanup() {
	[ -n "$REG_PID" ] && kill "$REG_PID" 2>/dev/null && wait "$REG_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

git clone -q "$BUNDLE" "$T/co" || { fail "git clone of the history bundle"; finish; exit 1; }
OPS=$T/co/operators
P=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$T/reg"
cat >"$T/reg/config.yml" <<REGISTRY_END
version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: $T/reg/data
http:
  addr: 127.0.0.1:$P
REGISTRY_END
docker-registry serve "$T/reg/config.yml" >"$T/reg.log" 2>&1 &
REG_PID=$!
i=0
until curl -s -o /dev/null "http://127.0.0.1:$P/v2/"; do
	i=$((i + 1)); [ $i -gt 100 ] && { fail "the registry did not start"; cat "$T/reg.log"; finish; exit 1; }
	sleep 0.1
done
R=127.0.0.1:$P/community

# push_image NAME:TAG DIR...: an image with a layer per given directory,
# each added at /<its base name> (umoci unpack/repack: `umoci insert` of
# Debian's umoci 0.4.7 writes layers whose tar stream is cut short)
ROOTLESS=
[ "$(id -u)" = 0 ] || ROOTLESS=--rootless
push_image() {
	ref=$1; shift
	rm -rf "$T/oci" "$T/ub"
	umoci init --layout "$T/oci" && umoci new --image "$T/oci:x" || return 1
	for d in "$@"; do
		rm -rf "$T/ub"
		umoci unpack $ROOTLESS --image "$T/oci:x" "$T/ub" && cp -R "$d" "$T/ub/rootfs/" &&
			umoci repack --image "$T/oci:x" "$T/ub" || return 1
	done
	skopeo copy -q --dest-tls-verify=false "oci:$T/oci:x" "docker://$R/$ref"
}
VERSIONS="0.10.0 0.11.0 0.12.0"
for v in $VERSIONS; do
	push_image "kepler-operator:$v" "$OPS/kepler-operator/$v/manifests" "$OPS/kepler-operator/$v/metadata" >"$T/push.log" 2>&1 ||
		{ fail "push of kepler-operator:$v"; cat "$T/push.log"; finish; exit 1; }
done
mkdir -p "$T/notabundle/docs" && echo hello >"$T/notabundle/docs/README"
push_image "not-a-bundle:1" "$T/notabundle/docs" >"$T/push.log" 2>&1 || { fail "push of not-a-bundle"; cat "$T/push.log"; }
# the images really are in the registry, with two layers
skopeo inspect --tls-verify=false "docker://$R/kepler-operator:0.11.0" >"$T/inspect.json" 2>&1 &&
	[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["Layers"]))' "$T/inspect.json")" = 2 ] &&
	pass || fail "the pushed bundle image: $(cat "$T/inspect.json")"

{
	printf 'schema: olm.template.basic\nentries:\n'
	printf -- '- schema: olm.package\n  name: kepler-operator\n  defaultChannel: alpha\n'
	printf -- '- schema: olm.channel\n  package: kepler-operator\n  name: alpha\n  entries:\n'
	prev=
	for v in $VERSIONS; do
		printf '  - name: kepler-operator.v%s\n' "$v"
		[ -n "$prev" ] && printf '    replaces: kepler-operator.v%s\n' "$prev"
		prev=$v
	done
	for v in $VERSIONS; do printf -- '- schema: olm.bundle\n  image: %s/kepler-operator:%s\n' "$R" "$v"; done
} >"$T/basic.yaml"

mkdir -p "$T/tmp"
for level in none bundle-object-to-csv-metadata; do
	run template render basic "$T/basic.yaml" -o yaml --migrate-level "$level" --bundle-root "$OPS"
	expect_rc 0 "render $level from the bundle directories"
	cp "$T/out" "$T/want-$level.yaml"
	RC=0
	TMPDIR=$T/tmp "$FBCD" template render basic "$T/basic.yaml" -o yaml --migrate-level "$level" --pull --insecure \
		>"$T/out" 2>"$T/err" || RC=$?
	expect_rc 0 "render $level with --pull"
	cmp -s "$T/out" "$T/want-$level.yaml" && pass || {
		fail "--pull ($level) differs from the bundle directories"
		diff "$T/want-$level.yaml" "$T/out" | head -20
	}
	[ "$(grep -c '^schema: olm.bundle$' "$T/out")" = 3 ] && pass || fail "$level: not 3 bundles"
done
grep -q "olm.bundle.object" "$T/want-none.yaml" && grep -q "olm.csv.metadata" "$T/want-bundle-object-to-csv-metadata.yaml" &&
	pass || fail "the two migrate levels are not what they say"
# the pulls went to the registry
grep -q "GET /v2/community/kepler-operator/manifests/0.12.0" "$T/reg.log" && pass || fail "no manifest pulled: $(tail -5 "$T/reg.log")"

# without --pull: the image is named, nothing is fetched
run template render basic "$T/basic.yaml"
expect_rc 1 "without --pull"
expect_grep "cannot resolve image $R/kepler-operator:0.10.0" "$T/err" "without --pull names the image"

# a tag the registry does not have; an image that is not a bundle
sed "s#kepler-operator:0.12.0#kepler-operator:9.9.9#" "$T/basic.yaml" >"$T/missing.yaml"
RC=0
TMPDIR=$T/tmp "$FBCD" template render basic "$T/missing.yaml" --pull --insecure >"$T/out" 2>"$T/err" || RC=$?
[ "$RC" -ne 0 ] && grep -q "pulling $R/kepler-operator:9.9.9" "$T/err" && pass ||
	fail "a missing tag: exit $RC, $(cat "$T/err")"
sed "s#kepler-operator:0.12.0#not-a-bundle:1#" "$T/basic.yaml" >"$T/nb.yaml"
RC=0
TMPDIR=$T/tmp "$FBCD" template render basic "$T/nb.yaml" --pull --insecure >"$T/out" 2>"$T/err" || RC=$?
[ "$RC" -ne 0 ] && grep -q "pulling $R/not-a-bundle:1.*not a bundle image" "$T/err" && pass ||
	fail "not a bundle: exit $RC, $(cat "$T/err")"
[ -z "$(ls -A "$T/tmp")" ] && pass || fail "left in TMPDIR: $(ls -A "$T/tmp")"
finish
