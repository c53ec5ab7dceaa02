#!/bin/sh
# Start a throwaway PostgreSQL cluster for tests and print its URL.
#
#   tests/lib/pg-start.sh [DIR]
#
# DIR (default: a new temp dir) receives the cluster (DIR/data), its log
# (DIR/log) and the URL (DIR/url). The server listens on 127.0.0.1 on a free
# port and on a unix socket in DIR; authentication is trust (tests only).
# Exit status 77 (meson's "skip") when initdb is not installed.
# Stop it with tests/lib/pg-stop.sh DIR.
set -eu
here=$(dirname "$0")
. "$here/pg-common.sh"

if [ ! -x "$PG_BINDIR/initdb" ]; then
	echo "pg-start: $PG_BINDIR/initdb not found" >&2
	exit 77
fi
dir=${1:-$(mktemp -d /tmp/fbcd-pg.XXXXXX)}
mkdir -p "$dir"
chmod 755 "$dir"
[ "$(id -u)" = 0 ] && chown postgres "$dir"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pg_as_user "$PG_BINDIR/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-sync \
	--locale=C >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
CONF
pg_as_user "$PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 start >/dev/null ||
	{ cat "$dir/log" >&2; exit 1; }
url="postgresql://postgres@127.0.0.1:$port/postgres"
echo "$url" >"$dir/url"
echo "$dir" >"$dir/dir"
echo "$url"
