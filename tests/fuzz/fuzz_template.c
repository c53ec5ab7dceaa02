/*
 * libFuzzer target for service/template's decoder and renderer: any bytes
 * as a template of each type (auto, basic, semver, both rule sets), with a
 * small in-memory catalog as the only bundle source. A render either
 * succeeds, and then writes YAML that parses back and JSON, or fails with
 * a message and a location; nothing crashes or leaks.
 */
#include "tests/fuzz/fuzz.h"

#include "service/load/load.h"
#include "service/template/template.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static fbc_template_sources *src;

static int count_meta(void *ctx, const fbc_meta *meta, fbc_error *err)
{
	(void)meta;
	(void)err;
	(*(size_t *)ctx)++;
	return 0;
}

static void init_sources(void)
{
	char dir[] = "/tmp/fuzz-template.XXXXXX";
	char path[64];
	fbc_error err;
	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(path, sizeof(path), "%s/c.json", dir);
	FILE *f = fopen(path, "w");
	if (f == NULL)
		abort();
	const char *vs[] = {"0.1.0", "0.1.1", "0.2.0", "1.0.0", "1.0.1", "1.1.0", "2.0.0-rc.1"};
	for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++)
		fprintf(f,
			"{\"schema\":\"olm.bundle\",\"name\":\"demo.v%s\",\"package\":\"demo\","
			"\"image\":\"q/"
			"demo:%s\",\"properties\":[{\"type\":\"olm.package\",\"value\":"
			"{\"packageName\":\"demo\",\"version\":\"%s\"}}]}\n",
			vs[i], vs[i], vs[i]);
	fclose(f);
	fbc_error_init(&err);
	if (fbc_template_sources_create(&src, &err) != 0 ||
	    fbc_template_sources_add_fbc(src, dir, NULL, &err) != 0)
		abort();
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (src == NULL)
		init_sources();
	static const fbc_template_type types[] = {FBC_TEMPLATE_AUTO, FBC_TEMPLATE_BASIC,
						  FBC_TEMPLATE_SEMVER};
	for (int t = 0; t < 3; t++) {
		for (int rules = 0; rules < 2; rules++) {
			if (t != 2 && rules == 1)
				continue;
			fbc_template_opts o = {types[t], (fbc_bundle_migrate)rules,
					       (fbc_semver_rules)rules, "fuzz.yaml"};
			fbc_template_result r = {NULL};
			fbc_error err;
			fbc_error_init(&err);
			if (fbc_template_render(&r, (const char *)data, size, &o, src, &err) != 0) {
				if (err.code == 0 || err.message[0] == '\0')
					abort(); /* a failure always says why */
				continue;
			}
			fbc_buf y, j;
			fbc_buf_init(&y, 1 << 26);
			fbc_buf_init(&j, 1 << 26);
			if (fbc_template_write_yaml(&y, &r, &err) != 0 ||
			    fbc_template_write_json(&j, &r, &err) != 0)
				abort();
			/* the YAML written reads back as one document per blob, without
			 * a finding, unless a blob has no schema the loader accepts */
			fbc_diags diags;
			size_t n = 0;
			fbc_diags_init(&diags, 100);
			if (fbc_load_buffer("out.yaml", y.data ? y.data : "", y.len, NULL,
					    count_meta, &n, &diags, &err) != 0)
				abort();
			if (fbc_diags_count(&diags) == 0 && n != json_array_size(r.blobs))
				abort();
			fbc_diags_dispose(&diags);
			fbc_buf_dispose(&y);
			fbc_buf_dispose(&j);
			fbc_template_result_dispose(&r);
		}
	}
	return 0;
}
