#!/bin/sh
# Build the base repository of the check-engine tests in $1/r (operator layout):
# config.yaml, packages foo (reviewers Alice) and bar (no ci.yaml reviewers), one
# bundle directory, catalogs v4.16 and v4.18 (csv-metadata only by the v4.17+ rule).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cp "$here/mkbundle.sh" "$here/crd.yaml" "$1/"
cd "$1"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@x GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@x
export GIT_CONFIG_NOSYSTEM=1 HOME="$1"
git init -q -b main r
cd r
mkdir -p operators/foo/1.0.0/manifests operators/bar catalogs/v4.16/foo catalogs/v4.18/foo
cat > config.yaml <<'EOF'
maintainers: [Maint]
tests:
  - name: check_dangling_bundles
    ignore_operators: [^waived-]
allowed_bundle_registries: [quay.io/ok/]
EOF
printf 'reviewers:\n  - Alice\nupdateGraph: replaces-mode\n' > operators/foo/ci.yaml
printf 'updateGraph: replaces-mode\n' > operators/bar/ci.yaml
sh ../mkbundle.sh foo 1.0.0 "" ../crd.yaml
catalog() { # $1 = entries block
	printf -- '---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n'
	printf -- '---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n%s' "$1"
	for v in 1.0.0 2.0.0 3.0.0; do
		printf -- '---\nschema: olm.bundle\npackage: foo\nname: foo.v%s\n' $v
		printf 'image: quay.io/ok/foo:v%s\nproperties:\n' $v
		printf -- '- type: olm.package\n  value: {packageName: foo, version: %s}\n' $v
	done
}
ENTRIES='- name: foo.v1.0.0
- name: foo.v2.0.0
  replaces: foo.v1.0.0
- name: foo.v3.0.0
  replaces: foo.v2.0.0
'
catalog "$ENTRIES" > catalogs/v4.16/foo/catalog.yaml
catalog "$ENTRIES" > catalogs/v4.18/foo/catalog.yaml
git add -A
git commit -qm base
