/*
 * Rules L10-L12, C1-C28, V1-V12 and the strict extras: for every rule one
 * input that must pass cleanly and one that must produce the rule's code.
 * Inputs are JSON lines written with single quotes (turned into double
 * quotes before decoding) to keep them readable.
 */
#include "fbc_test_util.h"
#include "service/base/buf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define P "{'schema':'olm.package','name':'foo','defaultChannel':'stable'}\n"
#define CH1                                                                                        \
	"{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'foo.v1.0.0'}" \
	"]}\n"
#define BX(name, ver, extra)                                                                   \
	"{'schema':'olm.bundle','name':'" name "','package':'foo','image':'quay.io/foo/b:v1'," \
	"'properties':[{'type':'olm.package','value':{'packageName':'foo','version':'" ver     \
	"'}}]" extra "}\n"
#define B1	     BX("foo.v1.0.0", "1.0.0", "")
#define BASE	     P CH1 B1
#define CSV64	     "a2luZDogQ2x1c3RlclNlcnZpY2VWZXJzaW9uCm1ldGFkYXRhOgogIG5hbWU6IGZvby52MS4wLjAK"
#define DEP(entries) "{'schema':'olm.deprecations','package':'foo','entries':[" entries "]}\n"

static char *sq(const char *s)
{
	char *d = strdup(s), *p;

	assert_non_null(d);
	for (p = d; *p; p++) {
		if (*p == '\'')
			*p = '"';
	}
	return d;
}

static void run(tcat *t, const char *text, bool strict)
{
	char *s = sq(text);

	memset(t, 0, sizeof(*t));
	tcat_validate(t, s, strict);
	free(s);
}

typedef struct rule_case {
	const char *code;
	const char *valid;
	const char *invalid;
	bool strict;
} rule_case;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const rule_case cases[] = {
	{"L10",
	 "{'schema':'olm.package','Name':'foo','DefaultChannel':'stable','unknown':1,'description':"
	 "null}\n" CH1 B1,
	 P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'foo.v1.0.0'"
	   ",'skips':'x'}]}\n" B1},
	{"L10", BASE,
	 "{'schema':'olm.package','name':'foo','defaultChannel':'stable','icon':{'base64data':'ab$"
	 "c','mediatype':'image/png'}}\n" CH1 B1},
	{"L11",
	 P CH1 "{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','properties':[{'type':'"
	       "olm.package','value':{'packageName':'foo','version':'1.0.0'}},{'type':'olm.bundle."
	       "object','value':{'data':'" CSV64 "'}}]}\n",
	 P CH1 "{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','image':'quay.io/a/"
	       "b:1','properties':[{'type':'olm.package','value':{'packageName':'foo','version':'1."
	       "0.0'}},{'type':'olm.bundle.object','value':{'data':'!!!!'}}]}\n"},
	{"L11", BASE,
	 P CH1 "{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','image':'quay.io/a/"
	       "b:1','properties':[{'type':'olm.package','value':{'packageName':'foo','version':'1."
	       "0.0'}},{'type':'olm.bundle.object','value':{'data':'YTogWzEsIDIK'}}]}\n"},
	{"L11", BASE,
	 P CH1 "{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','image':'quay.io/a/"
	       "b:1','properties':[{'type':'olm.package','value':{'packageName':'foo','version':'1."
	       "0.0'}},{'type':'olm.bundle.object'}]}\n"},
	{"C1", BASE, "{'schema':'olm.package','defaultChannel':'stable'}\n" BASE},
	{"C2", BASE, P BASE},
	{"C3", BASE, "{'schema':'olm.package','name':'my.op','defaultChannel':'stable'}\n"},
	{"C3", BASE, "{'schema':'olm.package','name':'My_Op','defaultChannel':'stable'}\n"},
	{"C4", BASE,
	 BASE
	 "{'schema':'olm.channel','name':'stable','package':'bar','entries':[{'name':'x'}]}\n"},
	{"C5", BASE,
	 BASE "{'schema':'olm.channel','package':'foo','entries':[{'name':'foo.v1.0.0'}]}\n"},
	{"C6", BASE, BASE CH1},
	{"C7", BASE,
	 P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'foo.v1.0.0'"
	   "},{'name':'foo.v1.0.0'}]}\n" B1},
	{"C8", BASE, BASE "{'schema':'olm.bundle','name':'x','image':'quay.io/a/b:1'}\n"},
	{"C9", BASE,
	 BASE "{'schema':'olm.bundle','name':'x','package':'bar','image':'quay.io/a/b:1'}\n"},
	{"C10", BASE, BASE B1},
	{"C11", BX("foo.v1.0.0", "1.0.0", ",'relatedImages':[]") P CH1,
	 P CH1 "{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','image':'quay.io/a/"
	       "b:1','properties':[{'type':'olm.package','value':{'packageName':'foo','version':'1."
	       "0.0'}},{'type':'olm.gvk','value':'x'}]}\n"},
	{"C11",
	 P CH1 "{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','image':'quay.io/a/"
	       "b:1','properties':[{'type':'olm.package','value':{'packageName':'foo','version':'1."
	       "0.0'}},{'type':'my.own','value':null}]}\n",
	 P CH1 "{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','image':'quay.io/a/"
	       "b:1','properties':[{'type':'olm.package','value':{'packageName':'foo','version':'1."
	       "0.0'}},{'type':'my.own'}]}\n"},
	{"C12", BASE,
	 P CH1
	 "{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','image':'quay.io/a/b:1'}\n"},
	{"C13", BASE,
	 P CH1 "{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','image':'quay.io/a/"
	       "b:1','properties':[{'type':'olm.package','value':{'packageName':'bar','version':'1."
	       "0.0'}}]}\n"},
	{"C14", BASE,
	 P CH1 "{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','image':'quay.io/Foo/"
	       "b:v1','properties':[{'type':'olm.package','value':{'packageName':'foo','version':'"
	       "1.0.0'}}]}\n"},
	{"C15",
	 P CH1 BX("foo.v1.0.0", "1.0.0",
		  ",'relatedImages':[{'name':'','image':''},{'image':'registry.io:5000/a/"
		  "b@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'}]"),
	 P CH1 BX("foo.v1.0.0", "1.0.0", ",'relatedImages':[{'name':'x','image':'UPPER'}]")},
	{"C16", BASE, P CH1 BX("foo.v1.0.0", "v1.0.0", "")},
	{"C17",
	 P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'foo-v1.0.0-"
	   "2'}]}\n"
	   "{'schema':'olm.bundle','name':'foo-v1.0.0-2','package':'foo','image':'quay.io/a/"
	   "b:1','properties':[{'type':'olm.package','value':{'packageName':'foo','version':'1.0.0'"
	   ",'release':'2'}}]}\n",
	 P CH1 "{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','image':'quay.io/a/"
	       "b:1','properties':[{'type':'olm.package','value':{'packageName':'foo','version':'1."
	       "0.0','release':'01'}}]}\n"},
	{"C18", BASE, BASE BX("foo.v2.0.0", "2.0.0", "")},
	{"C19", BASE,
	 P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'foo.v1.0.0'"
	   "},{'name':'foo.v2.0.0','replaces':'foo.v1.0.0'}]}\n" B1},
	{"C20", BASE DEP(""), BASE "{'schema':'olm.deprecations','entries':[]}\n"},
	{"C21", BASE DEP(""), BASE "{'schema':'olm.deprecations','package':'bar','entries':[]}\n"},
	{"C22", BASE DEP(""), BASE DEP("") DEP("")},
	{"C23", BASE DEP("{'reference':{'schema':'olm.package'},'message':'gone'}"),
	 BASE DEP("{'reference':{'name':'x'},'message':'m'}")},
	{"C24", BASE DEP("{'reference':{'schema':'olm.bundle','name':'foo.v1.0.0'},'message':'m'}"),
	 BASE DEP("{'reference':{'schema':'olm.bundle','name':'foo.v1.0.0'},'message':'m'},{'"
		  "reference':{'schema':'olm.bundle','name':'foo.v1.0.0'},'message':'n'}")},
	{"C25", BASE DEP("{'reference':{'schema':'olm.bundle','name':'foo.v1.0.0'},'message':'m'}"),
	 BASE DEP("{'reference':{'schema':'olm.bundle','name':'nope'},'message':'m'}")},
	{"C26", BASE DEP("{'reference':{'schema':'olm.channel','name':'stable'},'message':'m'}"),
	 BASE DEP("{'reference':{'schema':'olm.channel','name':'nope'},'message':'m'}")},
	{"C27", BASE DEP("{'reference':{'schema':'olm.package'},'message':'m'}"),
	 BASE DEP("{'reference':{'schema':'olm.package','name':'foo'},'message':'m'}")},
	{"C28", BASE DEP("{'reference':{'schema':'olm.channel','name':'stable'},'message':'m'}"),
	 BASE DEP("{'reference':{'schema':'olm.foo','name':'x'},'message':'m'}")},
	{"V1", BASE, "{'schema':'olm.package','name':'foo'}\n" CH1 B1},
	{"V2", BASE, "{'schema':'olm.package','name':'foo'}\n"},
	{"V3", BASE, "{'schema':'olm.package','name':'foo','defaultChannel':'beta'}\n" CH1 B1},
	{"V3", BASE, P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[]}\n"},
	{"V4",
	 P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'foo.v1.0.0'"
	   "},{'name':'foo.v2.0.0','replaces':'foo.v1.0.0','skipRange':'<2.0.0'}]}\n" B1 BX(
		   "foo.v2.0.0", "2.0.0", ""),
	 P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'foo.v1.0.0'"
	   "},{'name':'foo.v2.0.0','skipRange':'<2.0.0'}]}\n" B1 BX("foo.v2.0.0", "2.0.0", "")},
	{"V5", BASE,
	 P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'a','"
	   "replaces':'b'},{'name':'b','replaces':'a'},{'name':'c','replaces':'b'}]}\n" BX(
		   "a", "1.0.0", "") BX("b", "2.0.0", "") BX("c", "3.0.0", "")},
	{"V6",
	 P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'a'},{'name'"
	   ":'b','replaces':'a'},{'name':'c','replaces':'b','skips':['a']}]}\n" BX("a", "1.0.0", "")
		   BX("b", "2.0.0", "") BX("c", "3.0.0", ""),
	 P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'a'},{'name'"
	   ":'b','replaces':'a'},{'name':'c','replaces':'b','skips':['b']}]}\n" BX("a", "1.0.0", "")
		   BX("b", "2.0.0", "") BX("c", "3.0.0", "")},
	{"V7", BASE,
	 P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'foo.v1.0.0'"
	   ",'skips':['']}]}\n" B1},
	{"V8",
	 P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'foo.v1.0.0'"
	   ",'skipRange':'>=0.1.0 <1.0.0'}]}\n" B1,
	 P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'foo.v1.0.0'"
	   ",'skipRange':'>=1.0 <2.0'}]}\n" B1},
	{"V9", BASE,
	 P CH1 "{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','properties':[{'type':'"
	       "olm.package','value':{'packageName':'foo','version':'1.0.0'}}]}\n"},
	{"V10",
	 P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'foo-v1.0.0-"
	   "2'}]}\n"
	   "{'schema':'olm.bundle','name':'foo-v1.0.0-2','package':'foo','image':'quay.io/a/"
	   "b:1','properties':[{'type':'olm.package','value':{'packageName':'foo','version':'1.0.0'"
	   ",'release':'2'}}]}\n",
	 P CH1 "{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','image':'quay.io/a/"
	       "b:1','properties':[{'type':'olm.package','value':{'packageName':'foo','version':'1."
	       "0.0','release':'2'}}]}\n"},
	{"V10", BASE,
	 P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'foo-v1.0.0+"
	   "b-2'}]}\n"
	   "{'schema':'olm.bundle','name':'foo-v1.0.0+b-2','package':'foo','image':'quay.io/a/"
	   "b:1','properties':[{'type':'olm.package','value':{'packageName':'foo','version':'1.0.0+"
	   "b','release':'2'}}]}\n"},
	{"V11",
	 P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'a'},{'name'"
	   ":'b','replaces':'a'}]}\n" BX("a", "1.0.0+a", "") BX("b", "1.0.0+b", ""),
	 P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'a'},{'name'"
	   ":'b','replaces':'a'}]}\n" BX("a", "1.0.0", "") BX("b", "1.0.0", "")},
	{"V12", BASE DEP("{'reference':{'schema':'olm.bundle','name':'foo.v1.0.0'},'message':'m'}"),
	 BASE DEP("{'reference':{'schema':'olm.bundle','name':'foo.v1.0.0'},'message':''}")},
#define BPROPS(props)                                                                          \
	"{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','image':'quay.io/a/b:1',"  \
	"'properties':[{'type':'olm.package','value':{'packageName':'foo','version':'1.0.0'}}" \
	"," props "]}\n"
	{"S1", P CH1 BPROPS("{'type':'olm.csv.metadata','value':{'displayName':'x'}}"),
	 P CH1 BPROPS(
		 "{'type':'olm.csv.metadata','value':{}},{'type':'olm.csv.metadata','value':{}}"),
	 true},
	{"S2", BASE "{'schema':'my.schema','package':'foo'}\n", BASE "{'schema':'example.com/x'}\n",
	 true},
	{"S4",
	 P CH1 BPROPS("{'type':'olm.constraint','value':{'failureMessage':'f','all':{'constraints':"
		      "[{'gvk':{'group':'g','version':'v','kind':'k'}}]}}}"),
	 P CH1 BPROPS("{'type':'olm.constraint','value':{'failureMessage':'f','all':{'constraints':"
		      "[{'gvk':{'group':'g','flavour':'v'}}]}}}"),
	 true},
	{"S5",
	 P CH1 BPROPS("{'type':'olm.package.required','value':{'packageName':'bar','versionRange':'"
		      ">=1.0.0'}}"),
	 P CH1 BPROPS("{'type':'olm.package.required','value':{'packageName':'bar','versionRange':'"
		      ">=v1'}}"),
	 true},
};
#pragma GCC diagnostic pop

static void rules__valid_and_invalid_case_per_rule(void **state)
{
	size_t i;
	int failures = 0;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tcat t;

		run(&t, cases[i].valid, cases[i].strict);
		if (fbc_diags_count(&t.diags) != 0) {
			fprintf(stderr, "case %zu (%s): valid input has findings:\n", i,
				cases[i].code);
			tcat_dump(&t);
			failures++;
		}
		tcat_dispose(&t);
		run(&t, cases[i].invalid, cases[i].strict);
		if (tcat_count(&t, cases[i].code) == 0) {
			fprintf(stderr, "case %zu (%s): invalid input lacks the rule; found:\n", i,
				cases[i].code);
			tcat_dump(&t);
			failures++;
		}
		tcat_dispose(&t);
	}
	assert_int_equal(failures, 0);
}

static void rules__strict_extras_off_by_default(void **state)
{
	tcat t;

	(void)state;
	run(&t, BASE "{'schema':'example.com/x'}\n", false);
	assert_int_equal(fbc_diags_count(&t.diags), 0);
	tcat_dispose(&t);
}

static void l12__other_schemas_kept_verbatim(void **state)
{
	tcat t;
	const fbc_other *o;

	(void)state;
	run(&t,
	    BASE "{'schema':'example.com/x','package':'foo','b':[1,{'z':1,'a':null}],'a':'x'}\n",
	    false);
	assert_int_equal(fbc_diags_count(&t.diags), 0);
	assert_int_equal(t.cat->others.len, 1);
	o = FBC_CATALOG_AT(t.cat->others, fbc_other, 0);
	assert_string_equal(o->schema, "example.com/x");
	assert_string_equal(o->blob,
			    "{\"a\":\"x\",\"b\":[1,{\"a\":null,\"z\":1}],\"package\":\"foo\","
			    "\"schema\":\"example.com/x\"}");
	assert_int_equal(fbc_catalog_package(t.cat, "foo")->n_others, 1);
	tcat_dispose(&t);
}

static void messages__follow_opm_wording(void **state)
{
	tcat t;
	const fbc_diag *d;

	(void)state;
	run(&t,
	    P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'foo.v1."
	      "0.0'},{'name':'foo.v2.0.0'}]}\n" B1 BX("foo.v2.0.0", "2.0.0", ""),
	    false);
	d = tcat_find(&t, "V4");
	assert_non_null(d);
	assert_string_equal(d->message,
			    "multiple channel heads found in graph: foo.v1.0.0, foo.v2.0.0");
	assert_string_equal(d->package, "foo");
	assert_string_equal(d->channel, "stable");
	assert_string_equal(d->file, "t.json");
	assert_int_equal(d->line, 2);
	tcat_dispose(&t);

	run(&t,
	    P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'a','"
	      "replaces':'b'},{'name':'b','replaces':'a'},{'name':'c','replaces':'b'}]}\n" BX(
		      "a", "1.0.0", "") BX("b", "2.0.0", "") BX("c", "3.0.0", ""),
	    false);
	d = tcat_find(&t, "V5");
	assert_non_null(d);
	assert_string_equal(d->message,
			    "detected cycle in replaces chain of upgrade graph: b -> a -> b");
	tcat_dispose(&t);

	run(&t,
	    P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'foo.v1."
	      "0.0','skips':'x'}]}\n" B1,
	    false);
	d = tcat_find(&t, "L10");
	assert_non_null(d);
	assert_string_equal(d->message,
			    "parse channel: json: cannot unmarshal string into Go struct field "
			    "ChannelEntry.entries.skips of type []string");
	tcat_dispose(&t);

	run(&t,
	    "{'schema':'olm.package','name':'foo','defaultChannel':'stable','icon':{'base64data':'"
	    "ab$c'}}\n" CH1 B1,
	    false);
	d = tcat_find(&t, "L10");
	assert_non_null(d);
	assert_string_equal(d->message, "parse package: illegal base64 data at input byte 2");
	tcat_dispose(&t);

	run(&t, "{'schema':'olm.package','name':'my.op','defaultChannel':'stable'}\n", false);
	d = tcat_find(&t, "C3");
	assert_non_null(d);
	assert_string_equal(d->message, "invalid package name \"my.op\": [must not contain dots]");
	tcat_dispose(&t);

	run(&t, P CH1 BX("foo.v1.0.0", "v1.0.0", ""), false);
	d = tcat_find(&t, "C16");
	assert_non_null(d);
	assert_non_null(
		strstr(d->message, "error parsing bundle \"foo.v1.0.0\" version \"v1.0.0\": "));
	assert_string_equal(d->bundle, "foo.v1.0.0");
	assert_int_equal(d->line, 3);
	tcat_dispose(&t);

	run(&t,
	    P "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'a'},{'"
	      "name':'b','replaces':'a'}]}\n" BX("a", "1.0.0", "") BX("b", "1.0.0", ""),
	    false);
	d = tcat_find(&t, "V11");
	assert_non_null(d);
	assert_string_equal(d->message, "duplicate versions found in bundles: [{1.0.0: [a, b]}]");
	tcat_dispose(&t);
}

/* opm stops at the first error; fbcd reports them all. */
static void validate__reports_all_errors(void **state)
{
	tcat t;

	(void)state;
	run(&t,
	    P P
	    "{'schema':'olm.channel','name':'stable','package':'foo','entries':[{'name':'foo.v1.0."
	    "0'},{'name':'foo.v2.0.0'},{'name':'x.v1'}]}\n" B1 BX(
		    "foo.v2.0.0", "v2", "") "{'schema':'olm.bundle','name':'o','package':'nope'}\n",
	    false);
	assert_int_equal(tcat_count(&t, "C2"), 1);
	assert_int_equal(tcat_count(&t, "C9"), 1);
	assert_int_equal(tcat_count(&t, "C16"), 1);
	assert_int_equal(tcat_count(&t, "C19"), 1);
	assert_int_equal(tcat_count(&t, "V4"), 1);
	tcat_dispose(&t);
}

static void link__derived_bundle_fields(void **state)
{
	tcat t;
	fbc_package *p;
	fbc_bundle *b;

	(void)state;
	run(&t,
	    P CH1 "{'schema':'olm.channel','name':'alpha','package':'foo','entries':[{'name':'foo."
		  "v1.0.0'}]}\n"
		  "{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','properties':["
		  "{'type':'olm.package','value':{'packageName':'foo','version':'1.0.0-rc.1+b7'}},"
		  "{'type':'olm.gvk','value':{'group':'g.io','kind':'K','version':'v1'}},"
		  "{'type':'olm.gvk.required','value':{'group':'h.io','kind':'L','version':'v2'}},"
		  "{'type':'olm.package.required','value':{'packageName':'bar','versionRange':'>=1."
		  "0.0'}},"
		  "{'type':'olm.bundle.object','value':{'data':'" CSV64 "'}}]}\n",
	    false);
	assert_int_equal(fbc_diags_count(&t.diags), 0);
	p = fbc_catalog_package(t.cat, "foo");
	assert_non_null(p);
	assert_int_equal(p->n_channels, 2);
	assert_string_equal(p->channels[0]->name, "alpha");
	b = fbc_package_bundle(p, "foo.v1.0.0");
	assert_non_null(b);
	assert_string_equal(b->version, "1.0.0-rc.1+b7");
	assert_true(b->has_semver);
	assert_int_equal(b->semver.major, 1);
	assert_int_equal(b->n_provided, 1);
	assert_string_equal(b->provided[0].group, "g.io");
	assert_int_equal(b->n_required, 1);
	assert_string_equal(b->required[0].kind, "L");
	assert_int_equal(b->n_package_reqs, 1);
	assert_string_equal(b->package_reqs[0].version_range, ">=1.0.0");
	assert_int_equal(b->n_bundle_objects, 1);
	assert_non_null(b->csv_json);
	assert_string_equal(
		b->csv_json,
		"{\"kind\":\"ClusterServiceVersion\",\"metadata\":{\"name\":\"foo.v1.0.0\"}}");
	assert_int_equal(b->n_channels, 2);
	assert_string_equal(b->channels[0]->name, "alpha");
	assert_ptr_equal(fbc_package_channel(p, "stable")->entries[0].bundle, b);
	assert_null(fbc_package_channel(p, "nope"));
	assert_null(fbc_catalog_package(t.cat, "nope"));
	tcat_dispose(&t);
}

/* Go's encoding/json decodes a null array element as the zero value, so
 * opm sees an empty skip, an entry without a name, a property without a
 * value and a deprecation entry without a schema (conformance corpus). */
static void add_meta__null_array_elements_are_zero_values(void **state)
{
	static const struct {
		const char *code;
		const char *text;
	} nulls[] = {
		{"V7", P "{'schema':'olm.channel','name':'stable','package':'foo','entries':"
			 "[{'name':'foo.v1.0.0','skips':[null]}]}\n" B1},
		{"C19", P "{'schema':'olm.channel','name':'stable','package':'foo','entries':"
			  "[{'name':'foo.v1.0.0'},null]}\n" B1},
		{"C11", P CH1 "{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','image':"
			      "'quay.io/foo/b:v1','properties':[null,{'type':'olm.package','value':"
			      "{'packageName':'foo','version':'1.0.0'}}]}\n"},
		{"C23", BASE DEP("null")},
	};
	tcat t;

	(void)state;
	for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++) {
		run(&t, nulls[i].text, false);
		if (tcat_count(&t, nulls[i].code) != 1)
			tcat_dump(&t);
		assert_int_equal(tcat_count(&t, nulls[i].code), 1);
		tcat_dispose(&t);
	}
	/* a null related image is an empty one, which is never checked */
	run(&t, P CH1 BX("foo.v1.0.0", "1.0.0", ",'relatedImages':[null]"), false);
	assert_int_equal(fbc_diags_count(&t.diags), 0);
	tcat_dispose(&t);
}

/* containerPort is an int32 in Go: out-of-range and fractional numbers are
 * type errors (C11), integral ones within range are fine. */
static void gt_check__int32_range(void **state)
{
	static const struct {
		const char *port;
		size_t c11;
	} ports[] = {{"8443", 0},	{"2147483647", 0},  {"-2147483648", 0}, {"8443.0", 0},
		     {"2147483648", 1}, {"-2147483649", 1}, {"3e9", 1},		{"80.5", 1}};
	char text[1024];
	tcat t;

	(void)state;
	for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
		snprintf(text, sizeof(text),
			 "%s%s{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','image':"
			 "'quay.io/foo/b:v1','properties':[{'type':'olm.package','value':{"
			 "'packageName':'foo','version':'1.0.0'}},{'type':'olm.csv.metadata',"
			 "'value':{'apiServiceDefinitions':{'owned':[{'containerPort':%s}]}}}]}\n",
			 P, CH1, ports[i].port);
		run(&t, text, false);
		if (tcat_count(&t, "C11") != ports[i].c11)
			tcat_dump(&t);
		assert_int_equal(tcat_count(&t, "C11"), ports[i].c11);
		tcat_dispose(&t);
	}
}

/* The findings of one catalog as text, in order. */
static char *findings_text(const tcat *t)
{
	fbc_buf b;

	fbc_buf_init(&b, 0);
	for (size_t i = 0; i < fbc_diags_count(&t->diags); i++) {
		const fbc_diag *d = fbc_diags_at(&t->diags, i);

		assert_int_equal(fbc_buf_printf(&b, "%s:%d: %s %s\n", d->file ? d->file : "",
						d->line, d->code, d->message),
				 0);
	}
	assert_int_equal(fbc_buf_putc(&b, '\0'), 0);
	return fbc_buf_detach(&b, NULL);
}

/* A catalog loaded only to be validated (fbc_load_limits.validate_only and
 * validate_lean) keeps no olm.csv.metadata, olm.package, olm.gvk, olm.gvk.required or
 * olm.package.required value that decodes, nor images that parse, keeps those that do
 * not, and gives exactly the findings of a full load: every valid and invalid case of
 * the rule table, strict or not. validate_only alone keeps all but olm.csv.metadata. */
static void validate_only__same_findings_less_kept(void **state)
{
	fbc_load_limits lim, checks_lim;
	size_t dropped = 0, dropped_package = 0, images_gone = 0;

	(void)state;
	fbc_load_limits_default(&lim);
	lim.validate_only = true;
	lim.validate_lean = true;
	checks_lim = lim;
	checks_lim.validate_lean = false;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *texts[2] = {cases[i].valid, cases[i].invalid};

		for (int k = 0; k < 2; k++) {
			for (int strict = 0; strict < 2; strict++) {
				fbc_validate_opts o = {.strict = strict};
				char *s = sq(texts[k]), *full, *lean;
				fbc_error err;
				tcat a, b;

				memset(&a, 0, sizeof(a));
				memset(&b, 0, sizeof(b));
				tcat_validate(&a, s, strict);
				tcat_load_limits(&b, s, &lim);
				assert_int_equal(fbc_validate(b.cat, &o, &b.diags, &err), 0);
				fbc_diags_sort(&b.diags);
				full = findings_text(&a);
				lean = findings_text(&b);
				if (strcmp(full, lean) != 0)
					fail_msg("case %zu (%s) %s: full "
						 "load:\n%s\nvalidate_only:\n%s",
						 i, cases[i].code, k ? "invalid" : "valid", full,
						 lean);
				for (size_t j = 0; j < b.cat->bundles.len; j++) {
					const fbc_bundle *x =
						FBC_CATALOG_AT(b.cat->bundles, fbc_bundle, j);

					images_gone += x->image == FBC_IMAGE_NOT_KEPT;
					for (size_t q = 0; q < x->n_properties; q++) {
						bool gone = x->properties[q].value ==
							    FBC_PROPERTY_NOT_KEPT;

						dropped += gone;
						dropped_package +=
							gone && strcmp(x->properties[q].type,
								       "olm.package") == 0;
					}
				}
				free(full);
				free(lean);
				free(s);
				tcat_dispose(&a);
				tcat_dispose(&b);
			}
		}
	}
	assert_true(dropped > dropped_package);
	assert_true(dropped_package > 0);
	assert_true(images_gone > 0);
	/* a value that does not decode is kept (and reported); the valid olm.package
	 * beside it is not, its fields live on as the bundle's derived ones */
	{
		tcat b;
		char *s = sq(P CH1
			     "{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','image':"
			     "'quay.io/foo/b:v1','properties':[{'type':'olm.package','value':{"
			     "'packageName':'foo','version':'1.0.0'}},{'type':'olm.csv.metadata',"
			     "'value':{'displayName':1}}]}\n");
		fbc_error err;

		memset(&b, 0, sizeof(b));
		tcat_load_limits(&b, s, &lim);
		assert_int_equal(fbc_validate(b.cat, NULL, &b.diags, &err), 0);
		assert_int_equal(tcat_count(&b, "C11"), 1);
		{
			const fbc_bundle *x = FBC_CATALOG_AT(b.cat->bundles, fbc_bundle, 0);

			assert_true(x->properties[1].value != FBC_PROPERTY_NOT_KEPT);
			assert_non_null(strstr(x->properties[1].value, "displayName"));
			assert_true(x->properties[0].value == FBC_PROPERTY_NOT_KEPT);
			assert_string_equal(x->version, "1.0.0");
			assert_ptr_equal(x->image, FBC_IMAGE_NOT_KEPT);
		}
		tcat_dispose(&b);
		/* what the resolver and the pull-request checks read stays */
		memset(&b, 0, sizeof(b));
		tcat_load_limits(&b, s, &checks_lim);
		{
			const fbc_bundle *x = FBC_CATALOG_AT(b.cat->bundles, fbc_bundle, 0);

			assert_true(x->properties[1].value != FBC_PROPERTY_NOT_KEPT);
			assert_non_null(strstr(x->properties[0].value, "1.0.0"));
			assert_string_equal(x->image, "quay.io/foo/b:v1");
		}
		tcat_dispose(&b);
		free(s);
	}
}

/* A staged load (the loader's threads, as fbcd loads trees) of text as t.json,
 * validated: the fingerprint's lines that do not depend on what validate_only
 * keeps (findings, packages, channels, other blobs). malloc'd. */
static char *staged_print(const char *text, bool validate_only, bool lean)
{
	const char *paths[] = {"t.json"}, *data[] = {text};
	size_t lens[] = {strlen(text)};
	fbc_load_limits lim;
	fbc_tree *t = NULL;
	fbc_catalog *cat = NULL;
	fbc_diags diags;
	fbc_error err;
	char *all, *out, *o;

	fbc_load_limits_default(&lim);
	lim.validate_only = validate_only;
	lim.validate_lean = lean;
	lim.threads = 1;
	fbc_error_init(&err);
	assert_int_equal(fbc_diags_init(&diags, 0), 0);
	assert_int_equal(fbc_tree_open_mem(&t, paths, data, lens, 1, "mem", &err), 0);
	if (fbc_catalog_load_tree(&cat, t, &lim, &diags, &err) != 0)
		fail_msg("load: %s", err.message);
	all = tcat_validate_print(cat, &diags);
	out = o = malloc(strlen(all) + 1);
	assert_non_null(out);
	for (const char *l = all; *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l + 1) : strlen(l);

		if (strchr("DPCO", l[0]) && l[1] == ' ') {
			memcpy(o, l, n);
			o += n;
		}
		l += n;
	}
	*o = '\0';
	free(all);
	fbc_catalog_free(cat);
	fbc_tree_free(t);
	fbc_diags_dispose(&diags);
	return out;
}

/* The values a validate_only load's loader checks on the raw text instead of
 * building (olm.csv.metadata, olm.bundle.object, and in a lean load olm.gvk and
 * olm.gvk.required: service/fbc/load.c) give the findings (and packages, channels and other blobs)
 * of a load that builds every value: valid and invalid at every level of the Go types, escapes,
 * duplicate and case-variant keys, the depth limit, other member orders, other
 * schemas and a blob without one (L9 prints it). */
static void validate_only__skimmed_values_as_built(void **state)
{
#define DEEP                                                                                       \
	"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]" \
	"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
#define CSV(v)	"{'type':'olm.csv.metadata','value':" v "}"
#define BOBJ(v) "{'type':'olm.bundle.object','value':" v "}"
#define GVK(v)	"{'type':'olm.gvk','value':" v "}"
#define GVKR(v) "{'type':'olm.gvk.required','value':" v "}"
	static const char *const props[] = {
		CSV("{'annotations':{'a':'b'},'apiServiceDefinitions':{'owned':[{'name':'n',"
		    "'containerPort':8443,'resources':[{'name':'r','kind':'K','version':'v1'}],"
		    "'specDescriptors':[{'path':'p','value':{'any':[1,'x',null,true]}}]}]},"
		    "'crdDescriptions':{'owned':[{'name':'c','version':'v1','kind':'K',"
		    "'statusDescriptors':[{'path':'s','x-descriptors':['a','b']}]}],"
		    "'required':null},'description':'d','displayName':'D','installModes':[{"
		    "'type':'OwnNamespace','supported':true}],'keywords':['k'],'labels':{'l':"
		    "'v'},'links':[{'name':'n','url':'u'}],'maintainers':[{'name':'m','email':"
		    "'e'}],'maturity':'alpha','minKubeVersion':'1.20.0','nativeAPIs':[{'group':"
		    "'','version':'v1','kind':'Pod'}],'provider':{'name':'p','url':'u'},"
		    "'unknown':{'x':[1,{}]}}"),
		CSV("{'displayName':1}"),
		CSV("{'apiServiceDefinitions':{'owned':[{'containerPort':2147483648}]}}"),
		CSV("{'apiServiceDefinitions':{'owned':[{'containerPort':-2147483648}]}}"),
		CSV("{'apiServiceDefinitions':{'owned':[{'containerPort':'80'}]}}"),
		CSV("{'apiServiceDefinitions':{'owned':[{'containerPort':80.5}]}}"),
		CSV("{'installModes':{'type':'x'}}"),
		CSV("{'keywords':[1]}"),
		CSV("{'labels':{'a':1}}"),
		CSV("{'labels':{'\\u00e9':'x'}}"),
		CSV("{'DisplayName':'x','MATURITY':'y'}"),
		CSV("{'DISPLAYNAME':5}"),
		CSV("{'description':'line\\nnext \\u00e9 \\ud83d\\ude00 \\\\ \\''}"),
		CSV("{'display\\u004eame':1}"),
		CSV("{'display\\u004eame':'ok'}"),
		CSV("{'displayName':1,'displayName':'x'}"),
		CSV("{'displayName':'x','displayName':'y'}"),
		CSV("null"),
		CSV("'text'"),
		CSV("[]"),
		CSV("{'provider':{'name':true}}"),
		CSV("{'crdDescriptions':{'owned':[{'specDescriptors':[{'value':"
		    "%DEEP%"
		    "}]}]}}"),
		"{'value':{'displayName':1},'type':'olm.csv.metadata'}",
		"{'type':'olm.csv.metadata','value':{'displayName':'x'},'z':1}",
		"{'type':'olm.csv.metadata','value':{'displayName':1},'z':1}",
		"{'Type':'olm.csv.metadata','value':{'displayName':1}}",
		BOBJ("{'data':'eyJraW5kIjoiQ2x1c3RlclNlcnZpY2VWZXJzaW9uIiwibWV0YWRhdGEiOnsibmFtZSI6"
		     "IngifX0='}"),
		BOBJ("{'data':'a2luZDogQ2x1c3RlclNlcnZpY2VWZXJzaW9uCg=='}"),
		BOBJ("{'data':'a2luZDogW3VuY2xvc2VkCg=='}"),
		BOBJ("{'data':'ICAgCgl7fQ=='}"),
		BOBJ("{'data':'ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAg"
		     "ICAgICAgICAgICAgICAgICAgIHt9'}"),
		BOBJ("{'data':'a==='}"),
		BOBJ("{'data':'e30\\u003d'}"),
		BOBJ("{'data':'e30=','x':1}"),
		BOBJ("{'data':5}"),
		BOBJ("{'Data':'e30='}"),
		BOBJ("{}"),
		BOBJ("null"),
		BOBJ("'e30='"),
		GVK("{'group':'g','kind':'K','version':'v1'}"),
		GVK("{'group':'g','kind':'K','version':'v1','x':[1,{'y':null}]}"),
		GVK("{'Group':'g','KIND':'K','version':'v1'}"),
		GVK("{'group':1,'kind':'K','version':'v1'}"),
		GVK("{'group':'g','group':2}"),
		GVK("{'gro\\u0075p':2}"),
		GVK("{'kind':null}"),
		GVK("{}"),
		GVK("null"),
		GVK("'g/v1/K'"),
		GVK("[]"),
		GVKR("{'group':'g','kind':'K','version':'v1'}"),
		GVKR("{'group':'g','kind':['K'],'version':'v1'}"),
		GVKR("{'VERSION':true}"),
		GVKR("7"),
	};
	(void)state;
	for (size_t i = 0; i < sizeof(props) / sizeof(props[0]); i++) {
		for (int shape = 0; shape < 4; shape++) {
			/* the property in a bundle, in a package, in another schema's blob and
			 * in a blob without a schema */
			static const char *const heads[] = {
				"{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','image'"
				":"
				"'quay.io/a/b:1','properties':[{'type':'olm.package','value':{"
				"'packageName':'foo','version':'1.0.0'}},",
				"{'schema':'olm.package','name':'bar','defaultChannel':'stable',"
				"'properties':[",
				"{'schema':'my.schema','name':'x','properties':[",
				"{'name':'x','properties':["};
			const char *p = props[i], *d = strstr(p, "%DEEP%");
			fbc_buf text;
			char *s, *built, *skimmed;

			fbc_buf_init(&text, 0);
			assert_int_equal(fbc_buf_printf(&text, "%s%s%s", P, CH1, heads[shape]), 0);
			if (d)
				assert_int_equal(fbc_buf_printf(&text, "%.*s%s%s", (int)(d - p), p,
								DEEP, d + 6),
						 0);
			else
				assert_int_equal(fbc_buf_puts(&text, p), 0);
			assert_int_equal(fbc_buf_puts(&text, "]}\n"), 0);
			s = sq(text.data);
			fbc_buf_dispose(&text);
			built = staged_print(s, false, false);
			for (int lean = 0; lean < 2; lean++) {
				skimmed = staged_print(s, true, lean);
				if (strcmp(built, skimmed) != 0)
					fail_msg("property %zu, shape %d, lean %d:\n%s\nbuilt:\n%"
						 "s\nskimmed:\n%s",
						 i, shape, lean, s, built, skimmed);
				free(skimmed);
			}
			free(built);
			free(s);
		}
	}
#undef DEEP
#undef CSV
#undef BOBJ
#undef GVK
#undef GVKR
}

/* A lean load skims a bundle's relatedImages when they plainly decode and
 * every image parses: the findings (C14, C15 and the rest), packages,
 * channels and other blobs are those of a load that builds them, whatever
 * the array holds and whether the bundle's own image parses. */
static void validate_only__related_images_skimmed_as_built(void **state)
{
	static const char *const rels[] = {
		"[{'image':'quay.io/a/op:1','name':'op'},{'name':'n'},{}]",
		"[{'name':'op','image':'quay.io/a/op@sha256:"
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'}]",
		"[]",
		"[{'image':'quay.io/a/Bad:1','name':'bad'}]",
		"[{'image':'quay.io/a/op:1'},{'image':'not a ref'}]",
		"[{'Image':'not a ref'}]",
		"[{'image':'quay.io/a/op:1','IMAGE':'not a ref'}]",
		"[{'image':'quay.io/a/op:1','image':'not a ref'}]",
		"[{'image':'not a ref','image':'quay.io/a/op:1'}]",
		"[{'image':'quay.io/a/\\u0042ad:1'}]",
		"[{'image':'quay.io/a/op:1','digest':'x'}]",
		"[{'image':null,'name':'op'}]",
		"[{'image':''}]",
		"[null]",
		"[5]",
		"[{'image':5}]",
		"{'image':'quay.io/a/op:1'}",
		"null",
		"'quay.io/a/op:1'",
	};
	static const char *const images[] = {"quay.io/a/b:1", "Quay.io/A/b:1", ""};

	(void)state;
	for (size_t i = 0; i < sizeof(rels) / sizeof(rels[0]); i++) {
		for (size_t m = 0; m < sizeof(images) / sizeof(images[0]); m++) {
			fbc_buf text;
			char *sq_text, *built, *lean;

			fbc_buf_init(&text, 0);
			assert_int_equal(
				fbc_buf_printf(
					&text,
					"%s%s{'schema':'olm.bundle','name':'foo.v1.0.0',"
					"'package':'foo','image':'%s','properties':[{'type':"
					"'olm.package','value':{'packageName':'foo','version':"
					"'1.0.0'}}],'relatedImages':%s}\n",
					P, CH1, images[m], rels[i]),
				0);
			sq_text = sq(text.data);
			fbc_buf_dispose(&text);
			built = staged_print(sq_text, false, false);
			lean = staged_print(sq_text, true, true);
			if (strcmp(built, lean) != 0)
				fail_msg("relatedImages %zu, image %zu:\n%s\nbuilt:\n%s\nlean:\n%s",
					 i, m, sq_text, built, lean);
			free(built);
			free(lean);
			free(sq_text);
		}
	}
}

/* Replace every "foo" of text by pkg (one package per copy of a case). */
static void put_renamed(fbc_buf *b, const char *text, const char *pkg)
{
	for (const char *p = text; *p;) {
		if (strncmp(p, "foo", 3) == 0) {
			assert_int_equal(fbc_buf_puts(b, pkg), 0);
			p += 3;
		} else {
			assert_int_equal(fbc_buf_putc(b, *p++), 0);
		}
	}
}

/* One catalog of every case of the rule table, valid and invalid, each copy its own
 * package, past FBC_VALIDATE_PARALLEL_MIN: validated on one thread and with the model
 * rules on a second, the findings are the same, in the same order, unsorted; with a
 * max, the same are kept and the same number dropped. */
static void validate__parallel_model_same_findings_in_order(void **state)
{
	fbc_buf b;
	tcat t;
	char pkg[32], *one, *two, *text;
	size_t copies = 0;

	(void)state;
	fbc_buf_init(&b, 0);
	for (int r = 0; copies * 2 < FBC_VALIDATE_PARALLEL_MIN * 3; r++) {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			if (cases[i].strict)
				continue;
			snprintf(pkg, sizeof(pkg), "p%zur%d", i, r);
			put_renamed(&b, cases[i].invalid, pkg);
			snprintf(pkg, sizeof(pkg), "v%zur%d", i, r);
			put_renamed(&b, cases[i].valid, pkg);
			copies++;
		}
	}
	assert_int_equal(fbc_buf_putc(&b, '\0'), 0);
	text = sq(b.data);
	fbc_buf_dispose(&b);
	memset(&t, 0, sizeof(t));
	tcat_load(&t, text);
	assert_true(t.cat->bundles.len + t.cat->channels.len >= FBC_VALIDATE_PARALLEL_MIN);
	for (int strict = 0; strict < 2; strict++) {
		for (size_t max = 0; max <= 500; max += 500) {
			fbc_validate_opts o1 = {.strict = strict, .threads = 1};
			fbc_validate_opts o2 = {.strict = strict, .threads = 0};
			fbc_diags d1, d2;
			fbc_error err;
			tcat x;

			assert_int_equal(fbc_diags_init(&d1, max), 0);
			assert_int_equal(fbc_diags_init(&d2, max), 0);
			assert_int_equal(fbc_validate(t.cat, &o1, &d1, &err), 0);
			assert_int_equal(fbc_validate(t.cat, &o2, &d2, &err), 0);
			x.diags = d1;
			one = findings_text(&x);
			x.diags = d2;
			two = findings_text(&x);
			assert_string_equal(one, two);
			assert_int_equal(d1.dropped, d2.dropped);
			if (max)
				assert_true(d1.dropped >
					    0); /* the max cut into the model's findings */
			else
				assert_true(tcat_count(&x, "V4") > 0 && tcat_count(&x, "C11") > 0);
			free(one);
			free(two);
			fbc_diags_dispose(&d1);
			fbc_diags_dispose(&d2);
		}
	}
	tcat_dispose(&t);
	free(text);
}

/* A bundle object without a value is L11 at load; C11 must not repeat it. */
static void validate__bundle_object_without_value_reported_once(void **state)
{
	tcat t;

	(void)state;
	run(&t,
	    P CH1 "{'schema':'olm.bundle','name':'foo.v1.0.0','package':'foo','image':"
		  "'quay.io/foo/b:v1','properties':[{'type':'olm.package','value':{"
		  "'packageName':'foo','version':'1.0.0'}},{'type':'olm.bundle.object'}]}\n",
	    false);
	assert_int_equal(tcat_count(&t, "L11"), 1);
	assert_int_equal(tcat_count(&t, "C11"), 0);
	tcat_dispose(&t);
}

/* C24 keys cannot collide, and deprecations scale: C24, C25 and V12 use sets,
 * and the graph marks deprecated entries from a set (these loops were
 * quadratic: 100k references took minutes). */
static void check_deprecations__unambiguous_and_linear(void **state)
{
	const size_t n = 50000;
	struct timespec t0, t1;
	fbc_buf b;
	tcat t;
	double ms;

	(void)state;
	run(&t,
	    BASE DEP("{'reference':{'schema':'a\\u001fb','name':'c'},'message':'m'},"
		     "{'reference':{'schema':'a','name':'b\\u001fc'},'message':'m'},"
		     "{'reference':{'schema':'olm.bundle','name':'foo.v1.0.0'},'message':'m'},"
		     "{'reference':{'schema':'olm.bundle','name':'foo.v1.0.0'},'message':'m'}"),
	    false);
	assert_int_equal(tcat_count(&t, "C24"), 1);
	assert_int_equal(tcat_count(&t, "C28"), 2);
	tcat_dispose(&t);

	fbc_buf_init(&b, 0);
	assert_int_equal(fbc_buf_puts(&b, P B1 "{\"schema\":\"olm.channel\",\"name\":\"stable\","
					       "\"package\":\"foo\",\"entries\":[{\"name\":"
					       "\"foo.v1.0.0\"}"),
			 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(fbc_buf_printf(&b, ",{\"name\":\"e%06zu\",\"skips\":[\"z\"]}", i),
				 0);
	assert_int_equal(fbc_buf_puts(&b, "]}\n{\"schema\":\"olm.deprecations\",\"package\":"
					  "\"foo\",\"entries\":["),
			 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(fbc_buf_printf(&b,
						"%s{\"reference\":{\"schema\":\"olm.bundle\","
						"\"name\":\"%c%06zu\"},\"message\":\"\"}",
						i ? "," : "", i % 2 ? 'e' : 'm', i),
				 0);
	assert_int_equal(fbc_buf_puts(&b, "]}\n"), 0);
	memset(&t, 0, sizeof(t));
	{
		char *text = sq(b.data); /* P and B1 are written with single quotes */

		tcat_load(&t, text);
		free(text);
	}
	t.diags.max = 10 * n; /* keep every finding (C19 for each entry, then C25/V12) */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(fbc_validate(t.cat, NULL, &t.diags, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	/* every other reference names an entry (V12: no message), the rest none (C25) */
	assert_int_equal(tcat_count(&t, "C25"), n / 2);
	assert_int_equal(tcat_count(&t, "V12"), n / 2);
	assert_int_equal(tcat_count(&t, "C24"), 0);
	assert_true(ms < 3000.0);
	tcat_dispose(&t);
	fbc_buf_dispose(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rules__valid_and_invalid_case_per_rule),
		cmocka_unit_test(rules__strict_extras_off_by_default),
		cmocka_unit_test(l12__other_schemas_kept_verbatim),
		cmocka_unit_test(messages__follow_opm_wording),
		cmocka_unit_test(validate__reports_all_errors),
		cmocka_unit_test(link__derived_bundle_fields),
		cmocka_unit_test(add_meta__null_array_elements_are_zero_values),
		cmocka_unit_test(gt_check__int32_range),
		cmocka_unit_test(validate__bundle_object_without_value_reported_once),
		cmocka_unit_test(validate__parallel_model_same_findings_in_order),
		cmocka_unit_test(validate_only__same_findings_less_kept),
		cmocka_unit_test(validate_only__skimmed_values_as_built),
		cmocka_unit_test(validate_only__related_images_skimmed_as_built),
		cmocka_unit_test(check_deprecations__unambiguous_and_linear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
