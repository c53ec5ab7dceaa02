#!/usr/bin/env bash
# Install everything fbcd needs to build, run and test on Debian 12 (as root).
# Idempotent; safe to run on a machine that already has some of it.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
packages=(
	build-essential meson ninja-build pkg-config git ca-certificates
	libjansson-dev libyaml-dev libcmocka-dev libmicrohttpd-dev libgit2-dev
	libcryptominisat5-dev libpq-dev libarchive-dev zlib1g-dev libssl-dev libcurl4-openssl-dev
	libsystemd-dev libgraphviz-dev python3-yaml systemd
	postgresql postgresql-contrib
	clang clang-format jq curl python3 time tar gzip
	nodejs npm wrk nginx-light docker-registry skopeo umoci apache2-utils openssl
	chromium chromium-driver python3-selenium prometheus openssh-server openssh-client
)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# npm is often provided by a non-Debian Node.js install; accept any npm on PATH.
if command -v npm >/dev/null 2>&1; then
	missing=("${missing[@]/npm/}"); missing=("${missing[@]/nodejs/}")
fi
# deploy/check.sh needs a kubectl with kustomize; Debian's is kubernetes-client
# (skipped when some other kubectl, e.g. a cloud SDK's, is already installed).
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
missing=($(printf '%s\n' "${missing[@]}" | grep -v '^$' || true))
if [ "${#missing[@]}" -gt 0 ]; then
	echo "install-deps: installing ${missing[*]}"
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The packaged services must not hold ports our tests use.
for svc in nginx docker-registry postgresql prometheus; do
	if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
		systemctl stop "$svc" || true
	fi
done
pkill -x nginx 2>/dev/null || true
exit 0
