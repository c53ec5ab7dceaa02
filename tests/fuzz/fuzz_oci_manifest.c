/*
 * libFuzzer target for the manifest/index parser (fbc_oci_manifest_parse)
 * and the image reference and platform parsers of pipeline/oci. The first
 * line is a Content-Type (may be empty), the rest the document. Never a
 * crash; a parsed document has a kind, valid digests and sizes >= 0, at
 * most FBC_OCI_ITEMS_MAX descriptors; a rejected one has a message.
 */
#include "tests/fuzz/fuzz.h"

#include "pipeline/oci/client.h"
#include "pipeline/oci/oci.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *head, *rest;
	size_t hl, rl;
	fbc_oci_manifest m;
	fbc_oci_ref ref;
	fbc_oci_platform p;
	fbc_error err;
	char *ct, *line;

	rest = fuzz_split(data, size, '\n', &head, &hl, &rl);
	if (!rest) {
		rest = (const uint8_t *)"";
		rl = 0;
	}
	if (!(ct = fuzz_strndup(head, hl)))
		return 0;
	fbc_error_init(&err);
	if (fbc_oci_manifest_parse(&m, (const char *)rest, rl, ct[0] ? ct : NULL, &err) == 0) {
		if (m.kind != FBC_OCI_KIND_MANIFEST && m.kind != FBC_OCI_KIND_INDEX)
			abort();
		if (m.n_items > FBC_OCI_ITEMS_MAX)
			abort();
		if (m.kind == FBC_OCI_KIND_MANIFEST &&
		    (!fbc_oci_digest_valid(m.config.digest) || m.config.size < 0))
			abort();
		for (size_t i = 0; i < m.n_items; i++)
			if (!fbc_oci_digest_valid(m.items[i].digest) || m.items[i].size < 0)
				abort();
		fbc_oci_manifest_dispose(&m);
	} else if (err.code == 0 || !err.message[0]) {
		abort();
	}
	/* the first line is also tried as a reference and as a platform */
	line = ct;
	fbc_error_init(&err);
	if (fbc_oci_ref_parse(&ref, line, &err) == 0) {
		if (!ref.registry[0] || !ref.repository[0] || (!ref.tag[0] && !ref.digest[0]))
			abort();
		if (ref.digest[0] && !fbc_oci_digest_valid(ref.digest))
			abort();
	} else if (!err.message[0]) {
		abort();
	}
	fbc_error_init(&err);
	if (fbc_oci_platform_parse(&p, line, &err) == 0) {
		char s[128];
		fbc_oci_platform q;

		fbc_oci_platform_format(&p, s, sizeof(s));
		if (fbc_oci_platform_parse(&q, s, NULL) != 0 || !fbc_oci_platform_equal(&p, &q))
			abort();
	} else if (!err.message[0]) {
		abort();
	}
	free(ct);
	return 0;
}
