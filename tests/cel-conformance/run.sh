#!/bin/sh
# meson test wrapper: fetch the cases (or skip with 77), then run the runner.
# usage: run.sh RUNNER SELECTION_FILE CACHE_DIR
set -u
runner="$1"
selection="$2"
cache="$3"
here=$(dirname "$0")
json=$(sh "$here/fetch.sh" "$cache")
rc=$?
if [ $rc -ne 0 ]; then
	exit $rc
fi
exec "$runner" "$json" "$selection"
