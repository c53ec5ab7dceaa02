#!/bin/sh
# Stop a cluster started by pg-start.sh and remove its directory.
#   tests/lib/pg-stop.sh DIR
set -eu
here=$(dirname "$0")
. "$here/pg-common.sh"
dir=$1
[ -f "$dir/url" ] || { echo "pg-stop: $dir is not a pg-start.sh directory" >&2; exit 2; }
pg_as_user "$PG_BINDIR/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
rm -rf "$dir"
