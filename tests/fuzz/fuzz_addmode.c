/*
 * libFuzzer target for service/addmode: a sequence of adds (and
 * deprecations) described one per line, run against one index. Never a
 * crash; a failed add carries a rule id and leaves the index exactly as it
 * was (same FBC bytes); after every successful add the package's FBC
 * validates (the add validated it) and renders.
 *
 * Line format: MODE|NAME|VERSION|REPLACES|SKIP;SKIP|CHANNEL,CHANNEL|DEFAULT
 * with MODE r, s or p (replaces, semver, semver-skippatch), o (replaces with
 * --overwrite-latest) or d (deprecate NAME); package "a".
 */
#include "tests/fuzz/fuzz.h"

#include "service/addmode/addmode.h"

#include <stdlib.h>
#include <string.h>

static size_t split(char *s, char sep, const char **out, size_t max)
{
	size_t n = 0;

	if (!*s)
		return 0;
	out[n++] = s;
	for (; *s && n < max; s++) {
		if (*s == sep) {
			*s = '\0';
			out[n++] = s + 1;
		}
	}
	return n;
}

static char *dump(const fbc_addmode_index *ix)
{
	fbc_buf b;
	fbc_error err;
	char *s;

	fbc_buf_init(&b, 1 << 24);
	if (fbc_addmode_write_package(ix, "a", &b, &err) != 0) {
		fbc_buf_dispose(&b);
		return strdup("");
	}
	s = fbc_buf_detach(&b, NULL);
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fbc_addmode_index *ix = NULL;
	char *text = fuzz_strndup(data, size), *line, *next;
	fbc_error err;
	size_t n_lines = 0;

	if (!text || fbc_addmode_index_create(&ix, &err) != 0)
		goto done;
	for (line = text; line && n_lines < 64; line = next, n_lines++) {
		const char *f[7] = {"", "", "", "", "", "", ""}, *skips[8], *chans[8];
		char image[64], rule[8], *before, *after;
		fbc_addmode_bundle b;
		fbc_addmode_opts o;
		const fbc_addmode_bundle *p = &b;
		int rc;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		split(line, '|', f, 7);
		memset(&b, 0, sizeof(b));
		memset(&o, 0, sizeof(o));
		b.package = "a";
		b.name = f[1];
		b.version = f[2];
		b.replaces = f[3];
		b.n_skips = split((char *)f[4], ';', skips, 8);
		b.skips = skips;
		b.n_channels = split((char *)f[5], ',', chans, 8);
		b.channels = chans;
		b.default_channel = f[6];
		/* images repeat now and then (A3) */
		snprintf(image, sizeof(image), "img:%.40s", f[1]);
		b.image = image;
		before = dump(ix);
		fbc_error_init(&err);
		switch (f[0][0]) {
		case 'd':
			rc = fbc_addmode_deprecate(ix, "a", &b.name, 1, f[0][1] == '!', &err);
			break;
		case 's':
			o.mode = FBC_ADDMODE_SEMVER;
			rc = fbc_addmode_add(ix, &p, 1, &o, &err);
			break;
		case 'p':
			o.mode = FBC_ADDMODE_SEMVER_SKIPPATCH;
			rc = fbc_addmode_add(ix, &p, 1, &o, &err);
			break;
		case 'o':
			o.overwrite_latest = true;
			rc = fbc_addmode_add(ix, &p, 1, &o, &err);
			break;
		default:
			rc = fbc_addmode_add(ix, &p, 1, &o, &err);
		}
		after = dump(ix);
		if (rc != 0) {
			if (!err.message[0])
				abort();
			fbc_addmode_error_rule(&err, rule);
			if (f[0][0] != 'd' && err.code != FBC_ELIMIT && !rule[0])
				abort(); /* an add failure names its rule */
			if (err.code != FBC_ENOMEM && strcmp(before, after) != 0)
				abort(); /* a failed add or deprecation changes nothing */
		} else if (f[0][0] != 'd' && fbc_addmode_has_package(ix, "a")) {
			fbc_error_init(&err);
			if (fbc_addmode_validate_package(ix, "a", NULL, &err) != 0 &&
			    err.code != FBC_ENOMEM)
				abort(); /* the add validated the package */
		}
		free(before);
		free(after);
	}
done:
	fbc_addmode_index_free(ix);
	free(text);
	return 0;
}
