# Sourced by pg-start.sh, pg-stop.sh, pg-restart.sh.
PG_BINDIR=${FBCD_PG_BINDIR:-/usr/lib/postgresql/15/bin}

# Run a PostgreSQL binary as an unprivileged user: the server refuses root.
pg_as_user() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}
