/*
 * Line numbers for findings: where a field sits in a manifest or metadata
 * file. The decoded json_t carries no positions, so the text is walked once
 * more with libyaml's event parser (which reads JSON too) following the
 * path; only done when a finding is reported.
 */
#include "service/bundle/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct pframe {
	bool is_map;
	bool expect_key; /* maps: the next node is a key */
	long index;	 /* sequences: index of the next item */
} pframe;

int fbc_bundle_line_of(const char *text, size_t len, const char *const *path, size_t depth)
{
	yaml_parser_t p;
	yaml_event_t ev;
	pframe st[256];
	size_t sp = 0;	      /* open collections */
	size_t matched = 0;   /* path segments matched; frames [0, matched] are on the path */
	bool pending = false; /* the next node of frame `matched` is the matched segment's value */
	int best = 1;
	bool done = false;

	if (text == NULL)
		return 1;
	if (!yaml_parser_initialize(&p))
		return 1;
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!done && yaml_parser_parse(&p, &ev)) {
		int line = (int)ev.start_mark.line + 1;
		bool node = ev.type == YAML_SCALAR_EVENT || ev.type == YAML_ALIAS_EVENT ||
			    ev.type == YAML_MAPPING_START_EVENT ||
			    ev.type == YAML_SEQUENCE_START_EVENT;
		bool on_path_frame = sp > 0 && sp - 1 == matched;

		switch (ev.type) {
		case YAML_DOCUMENT_END_EVENT:
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		if (node && sp == 0 && ev.type != YAML_MAPPING_START_EVENT &&
		    ev.type != YAML_SEQUENCE_START_EVENT)
			done = true; /* a scalar document */
		if (node && sp > 0 && !done) {
			pframe *f = &st[sp - 1];
			bool is_key = f->is_map && f->expect_key;

			if (f->is_map)
				f->expect_key = !f->expect_key;
			if (pending && on_path_frame && !is_key) {
				pending = false;
				if (ev.type != YAML_MAPPING_START_EVENT &&
				    ev.type != YAML_SEQUENCE_START_EVENT)
					done = true; /* a scalar: cannot go deeper */
				else
					matched++; /* the collection pushed below is on the path */
			} else if (on_path_frame && matched < depth) {
				bool hit = false;
				if (is_key && ev.type == YAML_SCALAR_EVENT)
					hit = strcmp((const char *)ev.data.scalar.value,
						     path[matched]) == 0;
				else if (!f->is_map) {
					char idx[32];
					snprintf(idx, sizeof(idx), "#%ld", f->index);
					hit = strcmp(idx, path[matched]) == 0;
				}
				if (hit) {
					best = line;
					if (matched + 1 == depth) {
						done = true;
					} else if (f->is_map) {
						pending = true;
					} else if (ev.type == YAML_MAPPING_START_EVENT ||
						   ev.type == YAML_SEQUENCE_START_EVENT) {
						matched++;
					} else {
						done = true;
					}
				}
			}
			if (!f->is_map)
				f->index++;
		}
		if (!done &&
		    (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT)) {
			if (sp == sizeof(st) / sizeof(st[0])) {
				done = true;
			} else {
				st[sp].is_map = ev.type == YAML_MAPPING_START_EVENT;
				st[sp].expect_key = true;
				st[sp].index = 0;
				sp++;
			}
		} else if (ev.type == YAML_MAPPING_END_EVENT ||
			   ev.type == YAML_SEQUENCE_END_EVENT) {
			if (sp > 0 && sp - 1 <= matched && sp - 1 < matched + 1 && sp - 1 != 0 &&
			    sp - 1 == matched)
				done = true; /* the path's collection ended without a match */
			if (sp > 0)
				sp--;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return best;
}
