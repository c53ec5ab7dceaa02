/*
 * The on-disk layer of the check cache: byte entries as files `<dir>/checks-v1/<key>`, safe to
 * share between processes and bounded in size.
 *
 * - A file is written whole under a temporary name in the same directory and renamed into
 *   place, so a reader sees an old entry, a new one or none, never a partial one; two
 *   processes writing the same key both write the same content (entries are deterministic
 *   functions of their key), the last rename wins.
 * - Each file starts with "fbcd-cache 1 <FNV-1a 64 of the payload, hex> <payload length>\n":
 *   a file cut short or damaged (a full disk, a crash without fsync) is a miss, and removed.
 * - Every hit sets the file's modification time, so the files modified longest ago are the
 *   least recently used. When a write takes the directory past its bound, the oldest files
 *   go until it is at three quarters of it. Temporary files left by a killed process go after
 *   an hour, at the first write of a process or when pruning. Two processes pruning at once may
 * both unlink a file: ENOENT is fine. Nothing here is an error for the caller: a cache that cannot
 * be read or written is a miss.
 */
#include "pipeline/checks/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DISK_SUBDIR	 "checks-v1"
#define DISK_MAGIC	 "fbcd-cache 1 "
#define DISK_MAX_ENTRY	 ((size_t)1 << 30)
#define DISK_DEFAULT_MAX ((uint64_t)1 << 30)
#define DISK_TMP_MAX_AGE 3600

struct chk_disk {
	char *path; /* <dir>/checks-v1 */
	uint64_t max;
	uint64_t used; /* our estimate of the directory's size */
	bool used_known;
	pthread_mutex_t mu;
	unsigned seq;
};

static int mkdir_p(const char *path)
{
	char *p = strdup(path);

	if (!p)
		return -1;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST) {
			free(p);
			return -1;
		}
		*s = '/';
	}
	free(p);
	return mkdir(path, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

int chk_disk_open(chk_disk **out, const char *dir, uint64_t max, fbc_error *err)
{
	chk_disk *d;
	struct stat st;
	size_t n = strlen(dir);

	*out = NULL;
	if (n == 0 || n > 3000)
		return fbc_error_set(err, FBC_EINVAL, dir, "not a usable cache directory path");
	if (!(d = calloc(1, sizeof(*d))) || !(d->path = malloc(n + sizeof(DISK_SUBDIR) + 1))) {
		free(d);
		return fbc_error_set(err, FBC_ENOMEM, dir, "out of memory");
	}
	sprintf(d->path, "%s/%s", dir, DISK_SUBDIR);
	if (mkdir_p(d->path) != 0 || stat(d->path, &st) != 0 || !S_ISDIR(st.st_mode) ||
	    access(d->path, R_OK | W_OK | X_OK) != 0) {
		int e = errno;

		free(d->path);
		free(d);
		return fbc_error_set(err, FBC_EINVAL, dir, "cannot use it as a cache directory: %s",
				     strerror(e ? e : ENOTDIR));
	}
	d->max = max ? max : DISK_DEFAULT_MAX;
	pthread_mutex_init(&d->mu, NULL);
	*out = d;
	return 0;
}

void chk_disk_set_max(chk_disk *d, uint64_t bytes)
{
	d->max = bytes ? bytes : DISK_DEFAULT_MAX;
}

const char *chk_disk_path(const chk_disk *d)
{
	return d->path;
}

void chk_disk_close(chk_disk *d)
{
	if (!d)
		return;
	pthread_mutex_destroy(&d->mu);
	free(d->path);
	free(d);
}

static bool key_ok(const char *key)
{
	size_t n = strlen(key);

	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((key[i] >= '0' && key[i] <= '9') || (key[i] >= 'a' && key[i] <= 'z') ||
		      key[i] == '-'))
			return false;
	return true;
}

int chk_disk_decode(const char *file, size_t len, const char **payload, size_t *plen)
{
	const size_t ml = sizeof(DISK_MAGIC) - 1;
	const char *p, *e = file + len;
	char *end;
	unsigned long long sum, n;

	if (len < ml || memcmp(file, DISK_MAGIC, ml) != 0)
		return FBC_EINVAL;
	p = file + ml;
	/* 16 hex digits, a space, a decimal length, a newline */
	if (e - p < 19)
		return FBC_EINVAL;
	for (int i = 0; i < 16; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return FBC_EINVAL;
	if (p[16] != ' ' || p[17] < '0' || p[17] > '9')
		return FBC_EINVAL;
	{
		char hex[17];

		memcpy(hex, p, 16);
		hex[16] = '\0';
		sum = strtoull(hex, NULL, 16);
	}
	p += 17;
	{
		char num[24];
		size_t k = 0;

		while (p + k < e && k < sizeof(num) - 1 && p[k] >= '0' && p[k] <= '9')
			k++;
		if (p + k >= e || p[k] != '\n' || k >= 20)
			return FBC_EINVAL;
		memcpy(num, p, k);
		num[k] = '\0';
		n = strtoull(num, &end, 10);
		p += k + 1;
	}
	if (n != (unsigned long long)(e - p) || fbc_hash_bytes(p, (size_t)n) != sum)
		return FBC_EINVAL;
	*payload = p;
	*plen = (size_t)n;
	return 0;
}

static int read_file(const char *path, char **data, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf;
	size_t got = 0;

	if (fd < 0)
		return FBC_ENOTFOUND;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > DISK_MAX_ENTRY ||
	    !(buf = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return FBC_EINVAL;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (got != (size_t)st.st_size) {
		free(buf);
		return FBC_EINVAL;
	}
	*data = buf;
	*len = got;
	return 0;
}

int chk_disk_get(chk_disk *d, const char *key, char **data, size_t *len)
{
	char path[4096];
	char *file = NULL;
	const char *payload;
	size_t flen = 0, plen;
	int rc;

	*data = NULL;
	*len = 0;
	if (!key_ok(key))
		return FBC_EINVAL;
	snprintf(path, sizeof(path), "%s/%s", d->path, key);
	if ((rc = read_file(path, &file, &flen)) != 0) {
		if (rc == FBC_EINVAL)
			unlink(path);
		return rc;
	}
	if (chk_disk_decode(file, flen, &payload, &plen) != 0) {
		free(file);
		unlink(path); /* damaged: the next put writes it again */
		return FBC_EINVAL;
	}
	memmove(file, payload, plen);
	*data = file;
	*len = plen;
	utimensat(AT_FDCWD, path, NULL, 0); /* used now */
	return 0;
}

typedef struct disk_file {
	char *name;
	uint64_t size;
	struct timespec mtime;
} disk_file;

static int cmp_mtime(const void *a, const void *b)
{
	const disk_file *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Measure the directory; with prune, remove the oldest entries down to 3/4 of the bound and
 * temporary files older than an hour. Called with d->mu held. */
static void scan(chk_disk *d, bool prune)
{
	DIR *dir = opendir(d->path);
	struct dirent *de;
	disk_file *files = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	time_t now = time(NULL);
	char path[4096];

	if (!dir)
		return;
	while ((de = readdir(dir))) {
		struct stat st;

		if (de->d_name[0] == '.' && strncmp(de->d_name, ".tmp.", 5) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", d->path, de->d_name);
		if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (strncmp(de->d_name, ".tmp.", 5) == 0) {
			if (now - st.st_mtime > DISK_TMP_MAX_AGE)
				unlink(path); /* a killed process's */
			else
				total += (uint64_t)st.st_size;
			continue;
		}
		total += (uint64_t)st.st_size;
		if (!prune)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			disk_file *nf = realloc(files, nc * sizeof(*nf));

			if (!nf)
				break;
			files = nf;
			cap = nc;
		}
		if (!(files[n].name = strdup(de->d_name)))
			break;
		files[n].size = (uint64_t)st.st_size;
		files[n].mtime = st.st_mtim;
		n++;
	}
	closedir(dir);
	if (prune && total > d->max) {
		qsort(files, n, sizeof(*files), cmp_mtime);
		for (size_t i = 0; i < n && total > d->max / 4 * 3; i++) {
			snprintf(path, sizeof(path), "%s/%s", d->path, files[i].name);
			if (unlink(path) == 0 || errno == ENOENT)
				total -= files[i].size;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(files[i].name);
	free(files);
	d->used = total;
	d->used_known = true;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

void chk_disk_put(chk_disk *d, const char *key, const char *data, size_t len)
{
	char tmp[4096], path[4096], head[80];
	int fd, hl;
	unsigned seq;

	if (!key_ok(key) || len > DISK_MAX_ENTRY || len + 80 > d->max / 2)
		return;
	pthread_mutex_lock(&d->mu);
	seq = ++d->seq;
	pthread_mutex_unlock(&d->mu);
	snprintf(path, sizeof(path), "%s/%s", d->path, key);
	snprintf(tmp, sizeof(tmp), "%s/.tmp.%ld.%u.%s", d->path, (long)getpid(), seq, key);
	hl = snprintf(head, sizeof(head), DISK_MAGIC "%016" PRIx64 " %zu\n",
		      fbc_hash_bytes(data, len), len);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write_all(fd, head, (size_t)hl) != 0 || write_all(fd, data, len) != 0) {
		close(fd);
		unlink(tmp);
		return;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return;
	}
	pthread_mutex_lock(&d->mu);
	if (!d->used_known)
		scan(d, false);
	else
		d->used += (uint64_t)hl + len;
	if (d->used > d->max)
		scan(d, true);
	pthread_mutex_unlock(&d->mu);
}
