/*
 * libFuzzer target for the com.redhat.openshift.versions label grammar
 * (fbc_ocp_label_admits): never a crash; the verdict is deterministic; the
 * P-5 flag never changes whether a label parses, only what it admits; an
 * error always has a message; a label that parses and admits a catalog
 * v4.N also admits it written as 4.N.
 */
#include "tests/fuzz/fuzz.h"

#include "service/addmode/ocp.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *head, *rest;
	size_t head_len, rest_len;
	char *label, *catalog;
	fbc_error e1, e2, e3;
	bool a = false, b = false, c = false;
	int r1, r2, r3;

	rest = fuzz_split(data, size, 0, &head, &head_len, &rest_len);
	label = fuzz_strndup(head, head_len);
	catalog = fuzz_strndup(rest ? rest : (const uint8_t *)"v4.12", rest ? rest_len : 5);
	if (!label || !catalog)
		goto done;
	fbc_error_init(&e1);
	fbc_error_init(&e2);
	fbc_error_init(&e3);
	r1 = fbc_ocp_label_admits(&a, label, catalog, 0, &e1);
	r2 = fbc_ocp_label_admits(&b, label, catalog, 0, &e2);
	r3 = fbc_ocp_label_admits(&c, label, catalog, FBC_OCP_VLESS_ADMITS_ALL, &e3);
	if (r1 != r2 || (r1 == 0 && a != b))
		abort();
	if ((r1 == 0) != (r3 == 0))
		abort();
	if (r1 != 0 && (!e1.message[0] || e1.code == 0))
		abort();
	if (r1 == 0 && a && !c)
		abort(); /* the flag only widens */
	if (r1 == 0 && catalog[0] == 'v') {
		bool d = false;

		fbc_error_init(&e2);
		if (fbc_ocp_label_admits(&d, label, catalog + 1, 0, &e2) != 0 || d != a)
			abort();
	}
done:
	free(label);
	free(catalog);
	return 0;
}
