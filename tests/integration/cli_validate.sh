#!/bin/sh
# fbcd validate against the real catalog, mutated copies of it, a generated
# catalog, and bad invocations.
#   cli_validate.sh FBCD REAL_CATALOG GEN_CATALOG
FBCD=$1 REAL=$2 GEN=$3
. "$(dirname "$0")/lib.sh"

# --- invocation errors (exit 2) -------------------------------------------
run validate "$T/does-not-exist"; expect_rc 2 "missing directory"
expect_grep "does-not-exist" "$T/err" "missing directory message"
echo '{}' >"$T/file.json"
run validate "$T/file.json"; expect_rc 2 "file instead of directory"
expect_grep "not a directory" "$T/err" "not a directory message"
run validate; expect_rc 2 "no argument"
run validate --output xml "$T"; expect_rc 2 "bad --output"
expect_grep "xml" "$T/err" "bad --output message"
run validate --bogus "$T"; expect_rc 2 "unknown option"
run validate "$T" "$T"; expect_rc 2 "two directories"
run validate --help; expect_rc 0 "--help"
expect_grep "^usage: fbcd validate" "$T/out" "--help text"

# --- an empty catalog is valid ----------------------------------------------
mkdir "$T/empty"
run validate --output json "$T/empty"; expect_rc 0 "empty catalog"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r=={"valid":True,"errors":[]}, r' "$T/out" \
	&& pass || fail "empty catalog JSON report"

# --- a generated catalog (JSON and YAML) is valid ------------------------------
"$GEN" --packages 12 --bundles 17 --object-bytes 300 --seed 7 "$T/gen-json" || fail "gen_catalog json"
"$GEN" --packages 12 --bundles 17 --object-bytes 300 --seed 7 --format yaml "$T/gen-yaml" || fail "gen_catalog yaml"
run validate "$T/gen-json"; expect_rc 0 "generated JSON catalog"
run validate "$T/gen-yaml"; expect_rc 0 "generated YAML catalog"

if [ ! -d "$REAL" ]; then
	finish || exit 1
	skip "real catalog not found at $REAL"
fi

# --- the real catalog is valid ----------------------------------------------
run validate "$REAL"; expect_rc 0 "real catalog (text)"
[ -s "$T/out" ] && fail "real catalog: findings printed for a valid catalog" || pass
expect_grep "valid" "$T/err" "real catalog summary"
run validate --output json "$REAL"; expect_rc 0 "real catalog (json)"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["valid"] is True and r["errors"]==[], r' "$T/out" \
	&& pass || fail "real catalog JSON report"
run validate --strict "$REAL"; expect_rc 0 "real catalog --strict"

C="$T/cat"

# --- a duplicate package -> C2, naming the second file -------------------------
copy_catalog "$REAL" "$C"
mkdir "$C/zz-dup"
sed -n '1,/^schema: olm.package/p' "$C/cat-facts-operator/catalog.yaml" >"$C/zz-dup/package.yaml"
run validate --output json "$C"; expect_rc 1 "duplicate package"
has_error C2 cat-facts-operator zz-dup/package.yaml
run validate "$C"; expect_rc 1 "duplicate package (text)"
expect_grep '^zz-dup/package.yaml:[0-9][0-9]*: C2: ' "$T/out" "duplicate package text line"
expect_grep "invalid" "$T/err" "duplicate package summary"

# --- a channel with two heads -> V4 --------------------------------------------
copy_catalog "$REAL" "$C"
cat >"$C/cat-facts-operator/twoheads.yaml" <<'YAML'
schema: olm.channel
package: cat-facts-operator
name: twoheads
entries:
- name: cat-facts-operator.v1.0.0
- name: cat-facts-operator.v1.1.2
YAML
run validate --output json "$C"; expect_rc 1 "channel with two heads"
has_error V4 cat-facts-operator cat-facts-operator/twoheads.yaml twoheads

# --- a bundle in no channel -> C18 -----------------------------------------------
copy_catalog "$REAL" "$C"
cat >"$C/cat-facts-operator/orphan.json" <<'JSON'
{"schema": "olm.bundle", "name": "cat-facts-operator.v9.9.9", "package": "cat-facts-operator",
 "image": "quay.io/community-operator-pipeline-prod/cat-facts-operator:9.9.9",
 "properties": [{"type": "olm.package", "value": {"packageName": "cat-facts-operator", "version": "9.9.9"}}]}
JSON
run validate --output json "$C"; expect_rc 1 "bundle in no channel"
python3 - "$T/out" <<'PY' && pass || fail "C18 names the orphan bundle"
import json, sys
r = json.load(open(sys.argv[1]))
assert any(e["code"] == "C18" and e.get("bundle") == "cat-facts-operator.v9.9.9"
           and e.get("file") == "cat-facts-operator/orphan.json"
           and e.get("package") == "cat-facts-operator" for e in r["errors"]), r
PY

# --- a bad skipRange -> V8 -------------------------------------------------------
copy_catalog "$REAL" "$C"
# line 14 of infinispan/catalog.yaml: the skipRange of infinispan-operator.v2.2.1 in 2.2.x
sed -n 14p "$REAL/infinispan/catalog.yaml" | grep -q "skipRange: '>=2.1.x <2.2.1'" ||
	skip "the real catalog changed: infinispan/catalog.yaml line 14 is not the expected skipRange"
sed "14s/skipRange: .*/skipRange: '>=v2.1.0'/" "$REAL/infinispan/catalog.yaml" >"$C/infinispan/catalog.yaml"
run validate --output json "$C"; expect_rc 1 "bad skipRange"
has_error V8 infinispan infinispan/catalog.yaml 2.2.x infinispan-operator.v2.2.1
run validate "$C"
expect_grep "^infinispan/catalog.yaml:[0-9][0-9]*: V8: .*>=v2.1.0" "$T/out" "bad skipRange text line"

# --- every finding is reported, not only the first --------------------------------
copy_catalog "$REAL" "$C"
mkdir "$C/zz-dup"
sed -n '1,/^schema: olm.package/p' "$C/cat-facts-operator/catalog.yaml" >"$C/zz-dup/package.yaml"
sed "14s/skipRange: .*/skipRange: '>=v2.1.0'/" "$REAL/infinispan/catalog.yaml" >"$C/infinispan/catalog.yaml"
run validate --output json "$C"; expect_rc 1 "two independent errors"
has_error C2 cat-facts-operator zz-dup/package.yaml
has_error V8 infinispan infinispan/catalog.yaml
# and the order is deterministic
cp "$T/out" "$T/first.json"
run validate --output json "$C"
cmp -s "$T/out" "$T/first.json" && pass || fail "JSON report differs between two runs"

finish
