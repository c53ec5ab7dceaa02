/*
 * libFuzzer target for the resolver's request parser
 * (fbc_resolve_request_parse, the body of POST /v1/resolve and of
 * `fbcd resolve --input`) and, for requests that parse, the inline catalogs
 * built from their blobs and the resolution itself, under small limits.
 */
#include "tests/fuzz/fuzz.h"

#include "service/resolver/resolver.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fbc_resolve_request *rr = NULL;
	fbc_resolve_result *res = NULL;
	fbc_resolve_limits lim;
	fbc_catalog **cats = NULL;
	json_t *body, *out = NULL;
	json_error_t jerr;
	fbc_error err;

	body = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
	if (!body)
		return 0;
	fbc_resolve_limits_default(&lim);
	lim.max_blobs = 500;
	lim.max_variables = 20000;
	fbc_error_init(&err);
	if (fbc_resolve_request_parse(&rr, body, &lim, &err) != 0) {
		if (rr || err.code == 0)
			abort();
		goto done;
	}
	cats = calloc(rr->n_catalogs + 1, sizeof(*cats));
	if (!cats)
		goto done;
	for (size_t i = 0; i < rr->n_catalogs; i++) {
		if (!rr->catalogs[i].fbc)
			goto done; /* "path" catalogs would read the file system */
		fbc_error_init(&err);
		if (fbc_resolve_catalog_from_blobs(&cats[i], rr->catalogs[i].fbc,
						   rr->catalogs[i].name, NULL, &err) != 0)
			goto done;
		rr->catalogs[i].catalog = cats[i];
	}
	fbc_error_init(&err);
	if (fbc_resolve(&res, rr, &lim, &err) == 0) {
		fbc_error_init(&err);
		if (fbc_resolve_result_to_json(&out, res, true, &err) != 0)
			abort();
		json_decref(out);
	}
done:
	fbc_resolve_result_free(res);
	if (cats && rr)
		for (size_t i = 0; i < rr->n_catalogs; i++)
			fbc_catalog_free(cats[i]);
	free(cats);
	fbc_resolve_request_free(rr);
	json_decref(body);
	return 0;
}
