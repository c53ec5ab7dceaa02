/*
 * Build-time generator: reads openapi/openapi.yaml (the source of truth),
 * converts it to compact JSON with YAML 1.2 core-schema typing of plain
 * scalars (quoted scalars stay strings), and writes a C file defining
 *   const char fbc_http_openapi_json[]; const size_t fbc_http_openapi_json_len;
 * so the server can answer /openapi.json without reading files at run time.
 * A syntax error fails the build with FILE:LINE. Runs once, single-threaded.
 */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_DEPTH 64

static const char *in_path;

static json_t *scalar(const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;

	if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		if (!strcmp(s, "true"))
			return json_true();
		if (!strcmp(s, "false"))
			return json_false();
		if (!strcmp(s, "null") || !strcmp(s, "~") || n == 0)
			return json_null();
		char *end = NULL;
		errno = 0;
		long long v = strtoll(s, &end, 10);
		if (n && *end == '\0' && !errno && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9')))
			return json_integer(v);
		double d = strtod(s, &end);
		if (n && *end == '\0' && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9')))
			return json_real(d);
	}
	return json_stringn(s, n);
}

static json_t *parse_node(yaml_parser_t *p, yaml_event_t *first, int depth);

static int next(yaml_parser_t *p, yaml_event_t *ev)
{
	if (!yaml_parser_parse(p, ev)) {
		fprintf(stderr, "%s:%zu: %s\n", in_path, p->problem_mark.line + 1,
			p->problem ? p->problem : "YAML error");
		return -1;
	}
	return 0;
}

static json_t *parse_node(yaml_parser_t *p, yaml_event_t *ev, int depth)
{
	json_t *out = NULL;

	if (depth > MAX_DEPTH) {
		fprintf(stderr, "%s:%zu: nesting deeper than %d\n", in_path,
			ev->start_mark.line + 1, MAX_DEPTH);
		return NULL;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return scalar(ev);
	case YAML_SEQUENCE_START_EVENT:
		out = json_array();
		for (;;) {
			yaml_event_t c;
			if (next(p, &c))
				goto fail;
			if (c.type == YAML_SEQUENCE_END_EVENT) {
				yaml_event_delete(&c);
				return out;
			}
			json_t *v = parse_node(p, &c, depth + 1);
			yaml_event_delete(&c);
			if (!v || json_array_append_new(out, v))
				goto fail;
		}
	case YAML_MAPPING_START_EVENT:
		out = json_object();
		for (;;) {
			yaml_event_t k, c;
			if (next(p, &k))
				goto fail;
			if (k.type == YAML_MAPPING_END_EVENT) {
				yaml_event_delete(&k);
				return out;
			}
			if (k.type != YAML_SCALAR_EVENT) {
				fprintf(stderr, "%s:%zu: mapping keys must be scalars\n", in_path,
					k.start_mark.line + 1);
				yaml_event_delete(&k);
				goto fail;
			}
			char *key = strdup((const char *)k.data.scalar.value);
			size_t line = k.start_mark.line + 1;
			yaml_event_delete(&k);
			if (!key || next(p, &c)) {
				free(key);
				goto fail;
			}
			json_t *v = parse_node(p, &c, depth + 1);
			yaml_event_delete(&c);
			if (!v) {
				free(key);
				goto fail;
			}
			if (json_object_get(out, key)) {
				fprintf(stderr, "%s:%zu: duplicate key '%s'\n", in_path, line, key);
				json_decref(v);
				free(key);
				goto fail;
			}
			json_object_set_new(out, key, v);
			free(key);
		}
	default:
		fprintf(stderr, "%s:%zu: anchors, aliases and tags are not supported here\n",
			in_path, ev->start_mark.line + 1);
		return NULL;
	}
fail:
	json_decref(out);
	return NULL;
}

int main(int argc, char **argv)
{
	yaml_parser_t p;
	yaml_event_t ev;
	json_t *doc = NULL;
	FILE *in, *out;

	if (argc != 3) {
		fprintf(stderr, "usage: %s openapi.yaml out.c\n", argv[0]);
		return 2;
	}
	in_path = argv[1];
	in = fopen(in_path, "rb");
	if (!in) {
		fprintf(stderr, "%s: %s\n", in_path, strerror(errno));
		return 1;
	}
	yaml_parser_initialize(&p);
	yaml_parser_set_input_file(&p, in);
	for (;;) {
		if (next(&p, &ev))
			return 1;
		if (ev.type == YAML_STREAM_END_EVENT)
			break;
		if (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT ||
		    ev.type == YAML_SCALAR_EVENT) {
			if (doc) {
				fprintf(stderr, "%s: more than one document\n", in_path);
				return 1;
			}
			doc = parse_node(&p, &ev, 0);
			if (!doc)
				return 1;
		}
		yaml_event_delete(&ev);
	}
	yaml_event_delete(&ev);
	yaml_parser_delete(&p);
	fclose(in);
	if (!json_is_object(doc)) {
		fprintf(stderr, "%s: the document is not a mapping\n", in_path);
		return 1;
	}
	char *js = json_dumps(doc, JSON_COMPACT);
	if (!js)
		return 1;
	out = fopen(argv[2], "wb");
	if (!out) {
		fprintf(stderr, "%s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	size_t n = strlen(js);
	fprintf(out,
		"/* generated from openapi/openapi.yaml by http_openapi_gen; do not edit */\n"
		"#include <stddef.h>\n"
		"extern const char fbc_http_openapi_json[];\n"
		"extern const size_t fbc_http_openapi_json_len;\n"
		"const size_t fbc_http_openapi_json_len = %zu;\n"
		"const char fbc_http_openapi_json[] = {\n",
		n);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%d,%s", (unsigned char)js[i], (i % 24 == 23) ? "\n" : "");
	fprintf(out, "0};\n");
	free(js);
	json_decref(doc);
	if (fclose(out) != 0)
		return 1;
	return 0;
}
