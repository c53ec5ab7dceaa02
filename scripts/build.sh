#!/usr/bin/env bash
# Configure (once) and build fbcd into DIR (default: build). Extra args go to meson setup.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
if [ ! -f "$dir/build.ninja" ]; then
	meson setup "$dir" "$@" >/dev/null
fi
ninja -C "$dir"
