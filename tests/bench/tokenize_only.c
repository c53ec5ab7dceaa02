/*
 * tokenize_only: the baseline for bench_validate.sh. Walks a catalog tree
 * (sorted, like the loader, skipping nothing but .indexignore files) and
 * only tokenizes each file: JSON streams with a lexer that builds nothing
 * (tok_json: no jansson, no values) and YAML with libyaml events
 * (yaml_parser_parse until the stream end). No model, no validation: this is
 * the floor that `fbcd validate` is compared against.
 *
 *   tokenize_only DIR   -> prints "files=N bytes=B values=V" on stdout
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

typedef struct stats {
	unsigned long files, values, bytes;
} stats;

static int read_file(const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return -1;
	for (;;) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *nb = realloc(buf, ncap + 1);

			if (!nb) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
			cap = ncap;
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

/* A JSON lexer that builds nothing (the floor for JSON catalogs): tokens of
 * a stream of values — strings with their escapes checked, numbers,
 * literals, structure — with the nesting tracked so that each top-level
 * value is counted. Rejects what is not JSON's lexical grammar. */
static int lex_fail(const char *path, size_t off, const char *why)
{
	fprintf(stderr, "tokenize_only: %s: byte %zu: %s\n", path, off, why);
	return -1;
}

static int tok_json(const char *data, size_t len, stats *st, const char *path)
{
	const unsigned char *p = (const unsigned char *)data, *end = p + len;
	long depth = 0;

	while (p < end) {
		const unsigned char *q;
		switch (*p) {
		case ' ':
		case '\n':
		case '\t':
		case '\r':
		case ',':
		case ':':
			p++;
			continue;
		case '{':
		case '[':
			depth++;
			p++;
			continue;
		case '}':
		case ']':
			if (--depth < 0)
				return lex_fail(path, (size_t)(p - (const unsigned char *)data),
						"unbalanced");
			p++;
			break;
		case '"':
			for (p++;; p++) {
				q = memchr(p, '"', (size_t)(end - p));
				if (!q)
					return lex_fail(path, len, "unterminated string");
				/* an escaped quote has an odd run of backslashes before it */
				size_t bs = 0;
				while (q - bs > p && q[-1 - (long)bs] == '\\')
					bs++;
				p = q;
				if (bs % 2 == 0)
					break;
			}
			p++;
			break;
		case 't':
		case 'f':
		case 'n':
			q = p;
			while (p < end && *p >= 'a' && *p <= 'z')
				p++;
			if (!((p - q == 4 && (!memcmp(q, "true", 4) || !memcmp(q, "null", 4))) ||
			      (p - q == 5 && !memcmp(q, "false", 5))))
				return lex_fail(path, (size_t)(q - (const unsigned char *)data),
						"bad literal");
			break;
		default:
			if (*p == '-' || (*p >= '0' && *p <= '9')) {
				p++;
				while (p < end &&
				       ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' ||
					*p == 'E' || *p == '+' || *p == '-'))
					p++;
				break;
			}
			return lex_fail(path, (size_t)(p - (const unsigned char *)data),
					"unexpected byte");
		}
		if (depth == 0)
			st->values++;
	}
	return depth ? lex_fail(path, len, "unterminated value") : 0;
}

static int tok_yaml(const char *data, size_t len, stats *st, const char *path)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int rc = 0, done = 0;

	if (!yaml_parser_initialize(&p))
		return -1;
	yaml_parser_set_input_string(&p, (const unsigned char *)data, len);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			fprintf(stderr, "tokenize_only: %s: %s\n", path,
				p.problem ? p.problem : "yaml error");
			rc = -1;
			break;
		}
		if (ev.type == YAML_DOCUMENT_START_EVENT)
			st->values++;
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rc;
}

static int tok_file(const char *path, stats *st)
{
	char *data = NULL;
	size_t len = 0, i = 0;
	int rc;

	if (read_file(path, &data, &len)) {
		fprintf(stderr, "tokenize_only: %s: %s\n", path, strerror(errno));
		return -1;
	}
	st->files++;
	st->bytes += len;
	/* Same sniffing rule as the loader: first non-space byte '{' means JSON. */
	while (i < len && i < 4096 &&
	       (data[i] == ' ' || data[i] == '\n' || data[i] == '\t' || data[i] == '\r'))
		i++;
	if (i < len && data[i] == '{')
		rc = tok_json(data, len, st, path);
	else
		rc = tok_yaml(data, len, st, path);
	free(data);
	return rc;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk(const char *dir, stats *st, int depth)
{
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (depth > 64)
		return -1;
	if (!(d = opendir(dir))) {
		fprintf(stderr, "tokenize_only: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **nn = realloc(names, cap * sizeof(*names));
			if (!nn) {
				rc = -1;
				goto done;
			}
			names = nn;
		}
		if (!(names[n] = strdup(de->d_name))) {
			rc = -1;
			goto done;
		}
		n++;
	}
	qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n && rc == 0; i++) {
		char path[PATH_MAX];
		struct stat sb;

		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= sizeof(path)) {
			rc = -1;
			break;
		}
		if (lstat(path, &sb)) {
			rc = -1;
			break;
		}
		if (S_ISDIR(sb.st_mode))
			rc = walk(path, st, depth + 1);
		else if (strcmp(names[i], ".indexignore") != 0)
			rc = tok_file(path, st);
	}
done:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	stats st = {0};

	if (argc != 2) {
		fprintf(stderr, "usage: tokenize_only DIR\n");
		return 2;
	}
	if (walk(argv[1], &st, 0))
		return 1;
	printf("files=%lu bytes=%lu values=%lu\n", st.files, st.bytes, st.values);
	return 0;
}
