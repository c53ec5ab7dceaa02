/*
 * Private helpers shared by the files of service/fbc (not part of the
 * module's API; nothing outside service/fbc includes this header).
 *
 * gotype: a small table-driven imitation of Go's encoding/json typed
 * decoding, enough to reproduce opm's verdicts and messages for the typed
 * FBC blobs (L10) and bundle properties (C11): case-insensitive field names
 * (exact match first), unknown fields ignored, null leaves the zero value,
 * a JSON type mismatch is an error naming the Go struct field, []byte
 * fields are standard padded base64.
 *
 * All functions are pure (no global state) and thread-safe.
 */
#ifndef FBC_FBC_INTERNAL_H
#define FBC_FBC_INTERNAL_H

#include "service/base/buf.h"
#include "service/fbc/model.h"
#include "service/load/gotype.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Well-known types. */
extern const fbc_gt_type fbc_gt_package, fbc_gt_channel, fbc_gt_bundle, fbc_gt_deprecation;
extern const fbc_gt_type fbc_gt_prop_package, fbc_gt_prop_package_required, fbc_gt_prop_gvk,
	fbc_gt_prop_gvk_required, fbc_gt_prop_bundle_object, fbc_gt_prop_csv_metadata,
	fbc_gt_prop_channel;

/* Check v against t the way json.Unmarshal would. Returns 0 when it decodes,
 * 1 with the Go error text appended to msg when it does not, <0 on OOM. */
int fbc_gt_check(const fbc_gt_type *t, const json_t *v, fbc_buf *msg);

/* The property type table of property.Parse: the Go type a property value
 * of this type decodes into, or NULL for json.RawMessage (anything). */
const fbc_gt_type *fbc_gt_for_property(const char *type);

/* Go encoding/json field look-up: the value of the member whose name equals
 * `name` ignoring ASCII case; when several match, the one that sorts last
 * (opm re-serialises blobs with sorted keys, so the last one wins), skipping
 * nulls. NULL when absent or null. */
json_t *fbc_gt_get(const json_t *obj, const char *name);
/* The string value of fbc_gt_get, or "" when absent or not a string. */
const char *fbc_gt_get_str(const json_t *obj, const char *name);
/* fbc_gt_get of each of names[0..n) (n <= FBC_GT_MEMBERS_MAX, distinct
 * ignoring case) into out[], in one pass over obj's members; bit i of nulls
 * set: a null is names[i]'s value too (json.RawMessage takes it). */
#define FBC_GT_MEMBERS_MAX 8
void fbc_gt_members(const json_t *obj, const char *const *names, size_t n, unsigned nulls,
		    json_t **out);
/* The string value of a member, or "" when absent or not a string. */
static inline const char *fbc_gt_str(const json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "";
}

/* Append s as a Go %q string. */
int fbc_buf_put_goquote(fbc_buf *b, const char *s);
/* Go %q into a static-size buffer (truncated): for messages. */
const char *fbc_goquote(char *dst, size_t size, const char *s);

/* Compact JSON (keys sorted) of v into the arena; NULL on OOM. The same
 * bytes as json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY). */
const char *fbc_json_compact(fbc_arena *a, const json_t *v, size_t *len_out);
/* The same, with a caller's scratch buffer reused between calls. */
const char *fbc_json_compact_buf(fbc_arena *a, fbc_buf *scratch, const json_t *v, size_t *len_out);
/* The canonical text of v into out (reset first). 0 or FBC_ENOMEM/FBC_ELIMIT. */
int fbc_json_canonical(fbc_buf *out, const json_t *v);

/*
 * The two halves of fbc_catalog_add_meta, for fbc_catalog_load_dir's staged
 * load. prepare does the typed decoding (L10-L12) on a parser thread into
 * `arena` (which must outlive the catalog's use of the records: the caller
 * hands it to the catalog afterwards), reading nothing of cat but its limits;
 * scratch is a reusable buffer of the same thread. Its result lives in arena;
 * NULL only when even that could not be allocated. commit, on the loading
 * thread and in load order, records the findings and appends the record to
 * the catalog: the same findings, in the same order, as add_meta.
 */
typedef struct fbc_prepared fbc_prepared;

fbc_prepared *fbc_catalog_prepare_meta(const fbc_catalog *cat, fbc_arena *arena, fbc_buf *scratch,
				       const fbc_meta *meta);
int fbc_catalog_commit_meta(fbc_catalog *cat, const fbc_meta *meta, fbc_diags *diags,
			    fbc_error *err);

#endif
