#!/bin/sh
# mkbundle.sh PKG VERSION [REPLACES_VERSION [CRD_FILE]]: write a valid registry+v1 bundle
# directory operators/PKG/VERSION (CSV, annotations, and the CRD file when given) in the
# current directory.
set -eu
pkg=$1 v=$2 r=${3:-} crd=${4:-}
d=operators/$pkg/$v
mkdir -p "$d/manifests" "$d/metadata"
{
	printf 'apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\n'
	printf 'metadata:\n  name: %s.v%s\nspec:\n  displayName: Foo Operator\n' "$pkg" "$v"
	printf '  description: Foo manages foos on a cluster, nothing else.\n'
	printf '  version: %s\n' "$v"
	[ -n "$r" ] && printf '  replaces: %s.v%s\n' "$pkg" "$r"
	printf '  icon:\n  - base64data: PHN2Zy8+\n    mediatype: image/svg+xml\n'
	printf '  maintainers:\n  - name: Foo\n    email: foo@example.com\n'
	printf '  provider:\n    name: Foo Inc\n  links:\n  - name: Home\n    url: https://example.com\n'
	printf '  installModes:\n  - type: AllNamespaces\n    supported: true\n'
	printf '  install:\n    strategy: deployment\n    spec:\n      deployments: []\n'
	if [ -n "$crd" ]; then
		printf '  customresourcedefinitions:\n    owned:\n'
		printf '    - name: foos.x.io\n      version: v1\n      kind: Foo\n'
	fi
} > "$d/manifests/$pkg.clusterserviceversion.yaml"
printf 'annotations:\n' > "$d/metadata/annotations.yaml"
printf '  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n' >> "$d/metadata/annotations.yaml"
printf '  operators.operatorframework.io.bundle.manifests.v1: manifests/\n' >> "$d/metadata/annotations.yaml"
printf '  operators.operatorframework.io.bundle.metadata.v1: metadata/\n' >> "$d/metadata/annotations.yaml"
printf '  operators.operatorframework.io.bundle.package.v1: %s\n' "$pkg" >> "$d/metadata/annotations.yaml"
printf '  operators.operatorframework.io.bundle.channels.v1: stable\n' >> "$d/metadata/annotations.yaml"
if [ -n "$crd" ]; then cp "$crd" "$d/manifests/crd.yaml"; fi
