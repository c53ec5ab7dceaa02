#!/bin/sh
# fbcd bundle validate and fbcd render of bundle directories: a real bundle from community-operators'
# history renders to its committed catalog blob (JSON and YAML text), and bad bundles give clear
# findings with file and line, never a crash.
# usage: cli_bundle.sh FBCD HISTORY_BUNDLE
FBCD=$1
HIST=$2
. "$(dirname "$0")/lib.sh"

# mkbundle DIR: a small valid bundle (CSV, CRD, annotations).
mkbundle() {
	mkdir -p "$1/manifests" "$1/metadata"
	cat >"$1/manifests/foo.csv.yaml" <<'Y'
apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: foo.v1.0.0
  annotations:
    olm.skipRange: '<1.0.0'
spec:
  displayName: Foo
  version: 1.0.0
  installModes:
  - type: AllNamespaces
    supported: true
  customresourcedefinitions:
    owned:
    - name: foos.example.com
      version: v1
      kind: Foo
  install:
    strategy: deployment
    spec:
      deployments:
      - name: foo
        spec:
          template:
            spec:
              containers:
              - image: quay.io/example/foo:1.0.0
Y
	cat >"$1/manifests/foos.crd.yaml" <<'Y'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.example.com
spec:
  group: example.com
  names:
    kind: Foo
    plural: foos
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
Y
	cat >"$1/metadata/annotations.yaml" <<'Y'
annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: foo
  operators.operatorframework.io.bundle.channels.v1: alpha
Y
}

# A valid bundle: exit 0, both outputs.
mkbundle "$T/ok"
run bundle validate "$T/ok"; expect_rc 0 "valid bundle"
run bundle validate --output json "$T/ok"; expect_rc 0 "valid bundle, json"
expect_grep '"valid":true' "$T/out" "json report"
run render "$T/ok" --image quay.io/example/foo-bundle:1.0.0; expect_rc 0 "render bundle"
expect_grep '^    "schema": "olm.bundle",$' "$T/out" "4-space JSON"
expect_grep '"image": "quay.io/example/foo-bundle:1.0.0"' "$T/out" "image"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/out" && pass || fail "render output is not JSON"
run render "$T/ok" --image q/b:1 --migrate-level bundle-object-to-csv-metadata -o yaml
expect_rc 0 "render yaml"
expect_grep '^- type: olm.csv.metadata$' "$T/out" "csv metadata in yaml"
expect_grep '^---$' "$T/out" "yaml document marker"
run render "$T/ok" --migrate-level bogus; expect_rc 2 "unknown migration level"
expect_grep 'unknown migration level "bogus"' "$T/err" "migration level message"
run render --image x "$(dirname "$0")/../../examples/catalog"; expect_rc 2 "--image on a catalog"

# No CSV: B3, and render fails with opm's message.
mkbundle "$T/nocsv"; rm "$T/nocsv/manifests/foo.csv.yaml"
run bundle validate "$T/nocsv"; expect_rc 1 "no CSV"
expect_grep ': B3: .*no csv in bundle' "$T/out" "B3"
run render "$T/nocsv"; expect_rc 1 "render without CSV"
expect_grep "render reference \"$T/nocsv\": no csv in bundle" "$T/err" "opm's render error"

# Two CSVs: FB1 at the second one's kind line; render uses the first (as opm).
mkbundle "$T/two"
sed 's/foo.v1.0.0/foo.v2.0.0/' "$T/two/manifests/foo.csv.yaml" >"$T/two/manifests/zz.csv.yaml"
run bundle validate "$T/two"; expect_rc 1 "two CSVs"
expect_grep '^manifests/zz.csv.yaml:2: FB1: ' "$T/out" "FB1 with file and line"
run render "$T/two"; expect_rc 0 "render with two CSVs"
expect_grep '"name": "foo.v1.0.0"' "$T/out" "first CSV rendered"

# A CSV that is not YAML: FB3 with the line of the syntax error, then B3.
mkbundle "$T/badyaml"
printf 'apiVersion: v1\nkind: ClusterServiceVersion\nmetadata:\n  name: [unclosed\n' >"$T/badyaml/manifests/foo.csv.yaml"
run bundle validate "$T/badyaml"; expect_rc 1 "CSV not YAML"
expect_grep '^manifests/foo.csv.yaml:[45]: FB3: ' "$T/out" "FB3 with file and line"
expect_grep ': B3: ' "$T/out" "B3 after the skipped CSV"

# A 50 MB CRD: a LIMIT finding naming the file; render refuses with the same reason.
mkbundle "$T/big"
{ cat "$T/big/manifests/foos.crd.yaml"; printf '  description: "'; head -c 52428800 /dev/zero | tr '\0' 'x'; printf '"\n'; } >"$T/big/manifests/foos.crd.yaml.tmp"
mv "$T/big/manifests/foos.crd.yaml.tmp" "$T/big/manifests/foos.crd.yaml"
run bundle validate "$T/big"; expect_rc 1 "50 MB CRD"
expect_grep '^manifests/foos.crd.yaml: LIMIT: file of 5[0-9]* bytes exceeds' "$T/out" "LIMIT with file"
run render "$T/big"; expect_rc 2 "render of a 50 MB CRD"
expect_grep 'manifests/foos.crd.yaml: file of' "$T/err" "render names the file"
rm -rf "$T/big"

# Annotations without a package: FB2 at the annotations line; render writes nothing (as opm).
mkbundle "$T/nopkg"
sed -i '/bundle.package.v1/d' "$T/nopkg/metadata/annotations.yaml"
run bundle validate "$T/nopkg"; expect_rc 1 "no package"
expect_grep '^metadata/annotations.yaml:1: FB2: ' "$T/out" "FB2 with file and line"
expect_grep 'VF5: .*Missing annotation "operators.operatorframework.io.bundle.package.v1"' "$T/out" "VF5"
run render "$T/nopkg"; expect_rc 0 "render without a package"
[ -s "$T/out" ] && fail "render without a package wrote something" || pass

# Not a bundle: VF2.
mkdir -p "$T/half/manifests"
run bundle validate "$T/half"; expect_rc 1 "no metadata directory"
expect_grep 'VF2: Unable to locate metadata directory' "$T/out" "VF2"

# A real bundle: the YAML text opm wrote into the v4.20 catalog, byte for byte.
if [ -f "$HIST" ] && command -v git >/dev/null; then
	git clone -q "$HIST" "$T/repo" && git -C "$T/repo" checkout -q main
	B="$T/repo/operators/kepler-operator/0.22.0"
	IMG=$(python3 - "$T/repo/catalogs/v4.20/kepler-operator/catalog.yaml" <<'PY'
import sys
for doc in open(sys.argv[1]).read().split("\n---\n"):
    if "\nname: kepler-operator.v0.22.0\n" in doc:
        print([l[7:] for l in doc.split("\n") if l.startswith("image: ")][0])
PY
)
	run render "$B" --image "$IMG" --migrate-level bundle-object-to-csv-metadata -o yaml
	expect_rc 0 "render real bundle"
	python3 - "$T/out" "$T/repo/catalogs/v4.20/kepler-operator/catalog.yaml" <<'PY' && pass || fail "rendered YAML is not in the committed catalog byte for byte"
import sys
doc = open(sys.argv[1]).read()
cat = open(sys.argv[2]).read()
sys.exit(0 if doc and doc in cat else 1)
PY
	run bundle validate "$B"; expect_rc 0 "real bundle validates"
else
	echo "SKIP: real bundle part ($HIST or git missing)"
fi
finish
