#!/bin/sh
# Real data: `fbcd repo catalogs` on community-operators' history (twelve
# add-mode operators replayed through their merge history, nine template-managed
# ones copied): every catalog validates, the default channel and channel heads
# are those index-add.md predicts (repo_catalogs_check.py, an independent
# reading of the spec), the template-managed packages equal the published
# catalog-v4.20. Then bad input in a copy of the repository: a bundle replacing
# a missing bundle, a version already in the package, a malformed
# com.redhat.openshift.versions label, a bad updateGraph, a bundle without a CSV:
# each a finding naming the bundle and the rule, never a crash, and the
# catalogs still validate.
# usage: repo_catalogs.sh FBCD HISTORY_BUNDLE SHARED_CATALOG_V4_20 CHECK_PY
set -u
FBCD=$1
HIST=$2
SHARED=$3
CHECK=$4
[ -f "$HIST" ] || { echo "SKIP: $HIST not found"; exit 77; }
command -v git >/dev/null || { echo "SKIP: git not installed"; exit 77; }
python3 -c 'import yaml' 2>/dev/null || { echo "SKIP: python3-yaml not installed"; exit 77; }
. "$(dirname "$0")/lib.sh"

git clone -q "$HIST" "$T/repo" || exit 1
git -C "$T/repo" checkout -q main || exit 1

validate_all() { # DIR WHAT
	for c in "$1"/v4.*; do
		RC=0
		"$FBCD" validate "$c" >"$T/vout" 2>&1 || RC=$?
		if [ "$RC" -eq 0 ]; then pass; else
			fail "$2: $(basename "$c") does not validate"
			sed -n 1,5p "$T/vout" | sed 's/^/    /'
		fi
	done
}

# ---- the real history ----
start=$(date +%s)
run repo catalogs --repo "$T/repo" --output "$T/cat"
echo "replay: $(($(date +%s) - start)) s"
expect_rc 0 "repo catalogs on the real history"
[ -s "$T/err" ] && { fail "findings on the real history"; sed -n 1,20p "$T/err"; }
expect_grep "v4.20: 12 add-mode package(s)" "$T/out" "v4.20 holds the 12 add-mode packages"
expect_grep "v4.22: 11 add-mode package(s)" "$T/out" "kruize-operator (v4.12-v4.21) is not in v4.22"
validate_all "$T/cat" "real history"
# SV-13: the same build with --keep-bundle-objects, which the check script compares with it
run repo catalogs --keep-bundle-objects --repo "$T/repo" --output "$T/keep"
expect_rc 0 "repo catalogs --keep-bundle-objects"
if python3 "$CHECK" "$T/repo" "$T/cat" "$SHARED" "$T/keep" >"$T/check" 2>&1; then pass; else
	fail "spec predictions (repo_catalogs_check.py)"
fi
grep -v '^NOTE' "$T/check" | sed 's/^/    /'
# deterministic: the same bytes twice, and from another revision name (not in
# the sanitizer build: each replay costs a minute there)
if [ -z "${FBCD_SANITIZE:-}" ] || [ "$FBCD_SANITIZE" = none ]; then
run repo catalogs --repo "$T/repo" --rev "$(git -C "$T/repo" rev-parse HEAD)" --output "$T/cat2"
expect_rc 0 "repo catalogs --rev SHA"
if diff -r "$T/cat" "$T/cat2" >/dev/null; then pass; else fail "two runs differ"; fi
# an older revision: before attune's first bundle, no attune anywhere
old=$(git -C "$T/repo" log --first-parent --format=%H --diff-filter=A -- operators/attune | tail -1)
run repo catalogs --repo "$T/repo" --rev "$old~1" --output "$T/old"
expect_rc 0 "repo catalogs at an older revision"
if [ ! -e "$T/old/v4.20/attune" ] && [ -e "$T/cat/v4.20/attune/catalog.json" ]; then pass; else
	fail "attune at $old~1"
fi
rm -rf "$T/cat2" "$T/old"
fi

# ---- bad input ----
git clone -q "$T/repo" "$T/bad" || exit 1
python3 - "$T/bad" <<'PY' || exit 1
import os, shutil, sys, yaml
repo = sys.argv[1]

def clone_bundle(pkg, src, dst, name, version, replaces=None, label=None, drop_csv=False):
    d = os.path.join(repo, "operators", pkg, dst)
    shutil.copytree(os.path.join(repo, "operators", pkg, src), d)
    for f in sorted(os.listdir(os.path.join(d, "manifests"))):
        p = os.path.join(d, "manifests", f)
        doc = yaml.safe_load(open(p))
        if isinstance(doc, dict) and doc.get("kind") == "ClusterServiceVersion":
            if drop_csv:
                os.remove(p)
                continue
            doc["metadata"]["name"] = name
            doc["spec"]["version"] = version
            if replaces is not None:
                doc["spec"]["replaces"] = replaces
            yaml.safe_dump(doc, open(p, "w"))
    if label is not None:
        p = os.path.join(d, "metadata", "annotations.yaml")
        ann = yaml.safe_load(open(p))
        ann["annotations"]["com.redhat.openshift.versions"] = label
        yaml.safe_dump(ann, open(p, "w"))

# replaces mode: a bundle replacing a bundle that does not exist (A20)
clone_bundle("kaoto-operator", "2.11.0", "9.9.9", "kaoto-operator.v9.9.9", "9.9.9",
             replaces="kaoto-operator.v0.0.0-missing")
# semver mode: a version the package already has (A26)
clone_bundle("attune", "0.1.23", "0.1.23-dup", "attune.v0.1.23-dup", "0.1.23")
# a label IIB cannot parse (P-4)
clone_bundle("hermes-operator", "0.1.20", "0.1.21", "hermes-operator.v0.1.21", "0.1.21",
             label="v4.x")
# a bundle without a CSV
clone_bundle("fence-agents-remediation", "0.8.0", "0.9.0", "x", "0.9.0", drop_csv=True)
# a bad updateGraph (A34)
p = os.path.join(repo, "operators", "paperclip-operator", "ci.yaml")
ci = yaml.safe_load(open(p))
ci["updateGraph"] = "fast-mode"
yaml.safe_dump(ci, open(p, "w"))
PY
git -C "$T/bad" add -A && git -C "$T/bad" -c user.name=t -c user.email=t@e commit -qm bad || exit 1
run repo catalogs --repo "$T/bad" --output "$T/badcat"
expect_rc 1 "repo catalogs with bad bundles"
expect_grep "^operators/kaoto-operator/9.9.9: v4.13: A20: .*replaces nonexistent bundle kaoto-operator.v0.0.0-missing" "$T/err" "A20 names the bundle"
expect_grep "^operators/attune/0.1.23-dup: v4.19: A26: Bundle version 0.1.23 already added" "$T/err" "A26 names the bundle"
expect_grep "^operators/hermes-operator/0.1.21: P-4: .*\"v4.x\"" "$T/err" "a malformed label is named"
expect_grep "^operators/fence-agents-remediation/0.9.0: .*" "$T/err" "a bundle without a CSV is named"
expect_grep "^operators/paperclip-operator/ci.yaml: A34: .*fast-mode" "$T/err" "A34 names ci.yaml"
grep -q "AddressSanitizer\|runtime error" "$T/err" && fail "sanitizer report" || pass
validate_all "$T/badcat" "bad input"
# the bad bundles are nowhere, the rest is as before
if grep -rq "kaoto-operator.v9.9.9\|attune.v0.1.23-dup\|hermes-operator.v0.1.21" "$T/badcat"; then
	fail "a rejected bundle reached a catalog"
else pass; fi
if [ ! -e "$T/badcat/v4.20/paperclip-operator" ]; then pass; else fail "paperclip with a bad ci.yaml was built"; fi
if diff -q "$T/cat/v4.13/kaoto-operator/catalog.json" "$T/badcat/v4.13/kaoto-operator/catalog.json" >/dev/null; then pass; else
	fail "kaoto-operator changed although its new bundle was rejected"
fi
finish
