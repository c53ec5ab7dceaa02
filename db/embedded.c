/* The private PostgreSQL cluster of `fbcd serve` without a URL; see embedded.h. */
#include "db/embedded.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct fbc_db_embedded {
	char bindir[512];
	char pgdata[1024]; /* <data_dir>/pg */
	char log[1100];
	char url[1200];
	uid_t uid; /* user the server runs as */
	gid_t gid;
	int drop; /* run the tools as uid/gid (we are root) */
};

/* Run bin with args (NULL-terminated) as the cluster's user; stdout and
 * stderr go to the log file. Returns the exit status or -1. */
static int run(const fbc_db_embedded *e, const char *const argv[])
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(e->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (e->drop && (setgid(e->gid) != 0 || setuid(e->uid) != 0))
			_exit(126);
		execv(argv[0], (char *const *)argv); /* execv does not modify them */
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void log_tail(const fbc_db_embedded *e, char *out, size_t n)
{
	FILE *f = fopen(e->log, "r");
	long size;
	size_t got;

	out[0] = '\0';
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, size > (long)n - 1 ? size - (long)n + 1 : 0, SEEK_SET);
	got = fread(out, 1, n - 1, f);
	out[got] = '\0';
	for (size_t i = 0; i < got; i++)
		if (out[i] == '\n')
			out[i] = ' ';
	fclose(f);
}

int fbc_db_embedded_start(fbc_db_embedded **out, const char *data_dir, fbc_error *err)
{
	fbc_db_embedded *e = NULL;
	const char *bindir = getenv("FBCD_PG_BINDIR");
	char path[1200], tail[400], opts[1300], initdb[600], pg_ctl[600];
	char abs_dir[PATH_MAX];
	struct stat sb;
	int rc = 0;

	if (!data_dir || !*data_dir || strlen(data_dir) > 900)
		return fbc_error_set(err, FBC_EINVAL, "data-dir", "no (or an over-long) data dir");
	if (!(e = calloc(1, sizeof(*e))))
		return fbc_error_set(err, FBC_ENOMEM, "data-dir", "out of memory");
	snprintf(e->bindir, sizeof(e->bindir), "%s",
		 bindir ? bindir : "/usr/lib/postgresql/15/bin");
	snprintf(initdb, sizeof(initdb), "%s/initdb", e->bindir);
	snprintf(pg_ctl, sizeof(pg_ctl), "%s/pg_ctl", e->bindir);
	if (access(initdb, X_OK) != 0 || access(pg_ctl, X_OK) != 0) {
		rc = fbc_error_set(err, FBC_EUNAVAIL, e->bindir,
				   "PostgreSQL binaries not found in %s (install postgresql-15, "
				   "set FBCD_PG_BINDIR, or give --database-url)",
				   e->bindir);
		goto done;
	}
	if (mkdir(data_dir, 0700) != 0 && errno != EEXIST) {
		rc = fbc_error_set(err, FBC_EIO, data_dir, "cannot create data dir: %s",
				   strerror(errno));
		goto done;
	}
	/* PostgreSQL resolves its socket and lock files against its own working
	 * directory, so a relative data dir must become absolute first. */
	if (!realpath(data_dir, abs_dir)) {
		rc = fbc_error_set(err, FBC_EIO, data_dir, "cannot resolve data dir: %s",
				   strerror(errno));
		goto done;
	}
	if (strlen(abs_dir) > 900) {
		rc = fbc_error_set(err, FBC_EINVAL, data_dir, "data dir path is too long");
		goto done;
	}
	data_dir = abs_dir;
	snprintf(e->pgdata, sizeof(e->pgdata), "%s/pg", data_dir);
	snprintf(e->log, sizeof(e->log), "%s/postgresql.log", data_dir);
	e->uid = getuid();
	e->gid = getgid();
	if (geteuid() == 0) {
		/* PostgreSQL refuses to run as root: use the `postgres` account. */
		struct passwd *pw = getpwnam("postgres");

		if (!pw) {
			rc = fbc_error_set(err, FBC_EUNAVAIL, "postgres",
					   "running as root and no 'postgres' user to run the "
					   "embedded database as");
			goto done;
		}
		e->uid = pw->pw_uid;
		e->gid = pw->pw_gid;
		e->drop = 1;
		if (chown(data_dir, e->uid, e->gid) != 0) {
			rc = fbc_error_set(err, FBC_EIO, data_dir, "chown: %s", strerror(errno));
			goto done;
		}
		int fd = open(e->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

		if (fd >= 0) {
			if (fchown(fd, e->uid, e->gid) != 0) {
				/* the server then logs nowhere; not fatal */
			}
			close(fd);
		}
	}
	snprintf(path, sizeof(path), "%s/PG_VERSION", e->pgdata);
	if (stat(path, &sb) != 0) {
		const char *const argv[] = {initdb, "-D",	  e->pgdata,   "-U",
					    "fbcd", "-A",	  "trust",     "-E",
					    "UTF8", "--locale=C", "--no-sync", NULL};

		if (run(e, argv) != 0) {
			log_tail(e, tail, sizeof(tail));
			rc = fbc_error_set(err, FBC_EIO, e->pgdata, "initdb failed: %s", tail);
			goto done;
		}
	}
	/* Unix socket in the cluster dir only: no TCP port to collide on. */
	snprintf(opts, sizeof(opts), "-c listen_addresses='' -c unix_socket_directories='%s'",
		 e->pgdata);
	{
		const char *const argv[] = {pg_ctl, "-D", e->pgdata, "-l", e->log,  "-o",
					    opts,   "-w", "-t",	     "60", "start", NULL};
		char pidfile[1100];

		snprintf(pidfile, sizeof(pidfile), "%s/postmaster.pid", e->pgdata);
		if (run(e, argv) != 0) {
			log_tail(e, tail, sizeof(tail));
			rc = fbc_error_set(err, FBC_EIO, e->pgdata,
					   "the embedded PostgreSQL did not start: %s", tail);
			goto done;
		}
	}
	snprintf(e->url, sizeof(e->url), "postgresql:///postgres?host=%s&user=fbcd", e->pgdata);
	*out = e;
	e = NULL;
done:
	free(e);
	return rc;
}

const char *fbc_db_embedded_url(const fbc_db_embedded *e)
{
	return e->url;
}

void fbc_db_embedded_stop(fbc_db_embedded *e)
{
	char pg_ctl[600];

	if (!e)
		return;
	snprintf(pg_ctl, sizeof(pg_ctl), "%s/pg_ctl", e->bindir);
	{
		const char *const argv[] = {pg_ctl, "-D", e->pgdata, "-m",
					    "fast", "-w", "stop",    NULL};

		run(e, argv);
	}
	free(e);
}
