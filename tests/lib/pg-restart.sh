#!/bin/sh
# Restart (fast shutdown, then start) a cluster started by pg-start.sh:
# open connections die, as after a real server restart.
#   tests/lib/pg-restart.sh DIR
set -eu
here=$(dirname "$0")
. "$here/pg-common.sh"
dir=$1
pg_as_user "$PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/log" -m fast -w -t 60 restart >/dev/null
