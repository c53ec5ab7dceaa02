#!/bin/sh
# Real data: every olm.bundle blob committed in catalogs/v4.NN/<pkg>/catalog.yaml of
# community-operators' history at main is rendered again from its bundle directory and
# compared (bundles.md §8; both property forms). Needs ../shared/data and git.
# usage: bundle_realdata.sh BUNDLE_REALDATA_EXE HISTORY_BUNDLE
set -u
EXE=$1
HIST=$2
[ -f "$HIST" ] || { echo "SKIP: $HIST not found"; exit 77; }
command -v git >/dev/null || { echo "SKIP: git not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-bundle.XXXXXX")
trap 'rm -rf "$T"' EXIT
git clone -q "$HIST" "$T/repo" || exit 1
git -C "$T/repo" checkout -q main || exit 1
"$EXE" "$T/repo"
