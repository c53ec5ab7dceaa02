#!/bin/sh
# fbcd render: canonical, layout-independent output.
#   cli_render.sh FBCD REAL_CATALOG GEN_CATALOG
FBCD=$1 REAL=$2 GEN=$3
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

run render "$T/does-not-exist"; expect_rc 2 "render: missing directory"
run render; expect_rc 2 "render: no argument"
run render --output yaml "$T"; expect_rc 2 "render: unsupported output"
run render --help; expect_rc 0 "render --help"
expect_grep "^usage: fbcd render" "$T/out" "render --help text"

# A load error: nothing is rendered, exit 1, the file is named.
mkdir "$T/bad"
printf 'schema: olm.package\nname: [unclosed\n' >"$T/bad/broken.yaml"
run render "$T/bad"; expect_rc 1 "render of an unloadable file"
expect_grep "broken.yaml" "$T/err" "render names the bad file"
[ -s "$T/out" ] && fail "render printed output despite a load error" || pass

# check_stream FILE: every line one compact JSON object, canonical order.
check_stream() {
	python3 - "$1" <<'PY'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
assert lines[-1] == "", "output does not end with a newline"
rank = {"olm.package": 0, "olm.channel": 1, "olm.bundle": 2, "olm.deprecations": 4}
prev = None
for n, l in enumerate(lines[:-1], 1):
    o = json.loads(l)
    assert isinstance(o, dict), n
    assert l == json.dumps(o, sort_keys=True, separators=(",", ":"), ensure_ascii=False), \
        "line %d is not compact with sorted keys" % n
    s = o["schema"]
    pkg = o["name"] if s == "olm.package" else o.get("package", "")
    tail = s not in rank and not pkg
    key = (tail, pkg, rank.get(s, 3), o.get("name", "") if s in ("olm.channel", "olm.bundle") else
           ("" if s in rank else s))
    assert prev is None or prev <= key, "line %d out of order: %r after %r" % (n, key, prev)
    prev = key
PY
}

# --- generated catalog: JSON vs YAML, same seed -> same bytes ---------------------
"$GEN" --packages 15 --bundles 9 --object-bytes 200 --seed 3 "$T/gj" >/dev/null || fail "gen json"
"$GEN" --packages 15 --bundles 9 --object-bytes 200 --seed 3 --format yaml "$T/gy" >/dev/null || fail "gen yaml"
"$GEN" --packages 15 --bundles 9 --object-bytes 200 --seed 3 "$T/gj2" >/dev/null || fail "gen json again"
diff -r "$T/gj" "$T/gj2" >/dev/null && pass || fail "gen_catalog is not deterministic for a seed"
"$GEN" --packages 15 --bundles 9 --object-bytes 200 --seed 4 "$T/gj3" >/dev/null || fail "gen json seed 4"
diff -r "$T/gj" "$T/gj3" >/dev/null && fail "gen_catalog ignores the seed" || pass
run render "$T/gj"; expect_rc 0 "render generated JSON"; cp "$T/out" "$T/gj.out"
run render "$T/gy"; expect_rc 0 "render generated YAML"; cp "$T/out" "$T/gy.out"
cmp -s "$T/gj.out" "$T/gy.out" && pass || fail "JSON and YAML forms of one catalog render differently"
check_stream "$T/gj.out" && pass || fail "generated catalog: stream not canonical"
grep -q '"schema":"olm.deprecations"' "$T/gj.out" && pass || fail "deprecations missing from render"
grep -q '"schema":"io.example.gen.metadata"' "$T/gj.out" && pass || fail "custom blobs missing from render"
grep -q '"type":"olm.bundle.object"' "$T/gj.out" && pass || fail "olm.bundle.object dropped by render"

if [ ! -d "$REAL" ]; then
	finish || exit 1
	skip "real catalog not found at $REAL"
fi

# --- real catalog ------------------------------------------------------------------
run render "$REAL"; expect_rc 0 "render real catalog"; cp "$T/out" "$T/real.out"
check_stream "$T/real.out" && pass || fail "real catalog: stream not canonical"
[ "$(grep -c '"schema":"olm.package"' "$T/real.out")" -eq 37 ] && pass || fail "expected 37 packages"

# Same content, every YAML document in its own file, reverse order, nested dirs.
python3 "$HERE/relayout.py" split-yaml "$REAL" "$T/split" || fail "relayout split-yaml"
run render "$T/split"; expect_rc 0 "render split catalog"
cmp -s "$T/out" "$T/real.out" && pass || fail "render differs after splitting the YAML files"

# Same content as JSON: one file, then one pretty-printed file per blob.
mkdir "$T/onefile"; cp "$T/real.out" "$T/onefile/catalog.json"
run render "$T/onefile"; expect_rc 0 "render one-file JSON catalog"
cmp -s "$T/out" "$T/real.out" && pass || fail "render of the rendered catalog is not a fixed point"
python3 "$HERE/relayout.py" split-jsonl "$T/real.out" "$T/jsplit" || fail "relayout split-jsonl"
run render "$T/jsplit"; expect_rc 0 "render per-blob JSON catalog"
cmp -s "$T/out" "$T/real.out" && pass || fail "render differs between the YAML and JSON forms"

finish
