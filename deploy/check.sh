#!/bin/sh
# deploy/check.sh FBCD: verify the deployment files offline (no container
# engine, cluster or systemd instance is needed):
#   - the Containerfile against hadolint's rules that apply here;
#   - every shared library FBCD loads comes from a package its runtime stage
#     installs (or a dependency of one, or the base image);
#   - the Kubernetes kustomizations render, kubectl accepts every object
#     (client-side dry run against a stand-in discovery server), and a
#     structural check of every object passes;
#   - systemd-analyze verify accepts both units, with no warning.
# Prints what it checked; exits 1 on the first failing part.
set -eu
fbcd=$(readlink -f "$1")
here=$(cd "$(dirname "$0")" && pwd)
echo "== Containerfile"
pkgs=$(python3 "$here/check/containerfile_lint.py" "$here/container/Containerfile")
echo "runtime packages: $pkgs"
echo "== runtime libraries of $fbcd"
# shellcheck disable=SC2086
sh "$here/check/libs_covered.sh" "$fbcd" $pkgs
echo "all $(ldd "$fbcd" | grep -c '=>') libraries covered, and the $("$fbcd" version --libraries | wc -l) it loads on first use with theirs"
echo "== Kubernetes"
python3 "$here/check/kube_check.py" "$here/kubernetes/base" "$here/kubernetes/overlays/with-postgres"
echo "== systemd"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for unit in fbcd.service fbcd-worker.service; do
	# systemd-analyze checks that ExecStart's program exists: point it at the build
	sed "s#/usr/bin/fbcd#$fbcd#" "$here/systemd/$unit" >"$tmp/$unit"
	out=$(cd "$tmp" && systemd-analyze verify "$unit" 2>&1) || { echo "$out"; exit 1; }
	if [ -n "$out" ]; then
		echo "$out"
		echo "systemd-analyze verify $unit: warnings (see above)"
		exit 1
	fi
	grep -q '^Type=notify' "$tmp/$unit" || { echo "$unit: not Type=notify"; exit 1; }
	echo "$unit: ok"
done
