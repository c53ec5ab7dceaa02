/* The private PostgreSQL cluster of `fbcd serve` without a URL; see embedded.h. */
#include "db/embedded.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
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
		/* A minimal environment: fbcd's own (FBCD_ADMIN_TOKEN, a database
		 * URL with its password, cloud credentials) must not reach the
		 * database server, whose environment its OS user can read. */
		static char env_path[] = "PATH=/usr/bin:/bin", env_lc[] = "LC_ALL=C";
		char *const envp[] = {env_path, env_lc, NULL};
		execve(argv[0], (char *const *)argv, envp); /* execve does not modify them */
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

/* Is pid a PostgreSQL server of our cluster directory? A postmaster's
 * working directory is its data directory and its executable is named
 * postgres; a pid reused by anything else fails one of the two. */
static bool is_our_postgres(const fbc_db_embedded *e, long pid)
{
	char link[64], target[PATH_MAX];
	ssize_t n;
	const char *base;

	snprintf(link, sizeof(link), "/proc/%ld/cwd", pid);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	if (strcmp(target, e->pgdata) != 0)
		return false;
	snprintf(link, sizeof(link), "/proc/%ld/exe", pid);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	return strcmp(base, "postgres") == 0 || strncmp(base, "postgres ", 9) == 0;
}

static bool is_zombie(long pid)
{
	char path[64], buf[512], *rp;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (!(f = fopen(path, "r")))
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	rp = strrchr(buf, ')'); /* "pid (comm) S ...": comm may hold spaces */
	return rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
}

static bool is_live_postgres(const fbc_db_embedded *e, long pid)
{
	return pid > 0 && kill((pid_t)pid, 0) == 0 && !is_zombie(pid) && is_our_postgres(e, pid);
}

/* Remove postmaster.pid and the socket lock files that do not name a
 * running server of this cluster. */
static int remove_locks(const fbc_db_embedded *e, fbc_error *err)
{
	char path[1200], line[64];
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "%s/postmaster.pid", e->pgdata);
	if (unlink(path) != 0 && errno != ENOENT)
		return fbc_error_set(err, FBC_EIO, path, "cannot remove: %s", strerror(errno));
	if (!(d = opendir(e->pgdata)))
		return 0;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		FILE *f;
		if (strncmp(de->d_name, ".s.PGSQL.", 9) != 0 || len < 5 ||
		    strcmp(de->d_name + len - 5, ".lock") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", e->pgdata, de->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		bool stale = fgets(line, sizeof(line), f) &&
			     !is_live_postgres(e, strtol(line, NULL, 10));
		fclose(f);
		if (stale && unlink(path) != 0 && errno != ENOENT) {
			closedir(d);
			return fbc_error_set(err, FBC_EIO, path, "cannot remove: %s",
					     strerror(errno));
		}
	}
	closedir(d);
	return 0;
}

/* A previous fbcd serve on this data dir was killed (kill -9, power loss)
 * and may have left its PostgreSQL running, or only its lock file. The
 * caller holds the data dir's fbcd lock, so no live fbcd owns that server:
 * stop it cleanly (fast, then immediate), or remove a lock file whose pid
 * now belongs to another process. A lock file of a dead pid is left to
 * PostgreSQL, which removes it itself. */
static int stop_leftover(const fbc_db_embedded *e, const char *pg_ctl, fbc_error *err)
{
	char pidfile[1100], line[64];
	FILE *f;
	long pid = 0;
	char *end = NULL;

	snprintf(pidfile, sizeof(pidfile), "%s/postmaster.pid", e->pgdata);
	if (!(f = fopen(pidfile, "r")))
		return 0;
	if (fgets(line, sizeof(line), f))
		pid = strtol(line, &end, 10);
	fclose(f);
	if (pid <= 0)
		return 0;
	if (!is_live_postgres(e, pid)) {
		/* PostgreSQL removes a lock file of a dead pid itself, but takes a
		 * zombie (a killed postmaster nobody reaped) or a reused pid for
		 * a live server and refuses to start. */
		if (kill((pid_t)pid, 0) == 0)
			fprintf(stderr,
				"fbcd serve: %s names pid %ld, which is not this cluster's "
				"running PostgreSQL; removing the stale lock files\n",
				pidfile, pid);
		return remove_locks(e, err);
	}
	fprintf(stderr,
		"fbcd serve: stopping the PostgreSQL (pid %ld) left running on %s by a previous "
		"fbcd\n",
		pid, e->pgdata);
	{
		const char *const fast[] = {pg_ctl, "-D", e->pgdata, "-m",   "fast",
					    "-w",   "-t", "20",	     "stop", NULL};
		const char *const now[] = {pg_ctl, "-D", e->pgdata, "-m",   "immediate",
					   "-w",   "-t", "10",	    "stop", NULL};
		if (run(e, fast) != 0 && run(e, now) != 0)
			return fbc_error_set(err, FBC_EIO, e->pgdata,
					     "cannot stop the PostgreSQL (pid %ld) left running "
					     "by a previous fbcd",
					     pid);
	}
	return 0;
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
	if ((rc = stop_leftover(e, pg_ctl, err)) != 0)
		goto done;
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
