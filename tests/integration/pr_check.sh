#!/bin/sh
# fbcd pr check on the real community-operators history (history.bundle):
#  1. every pull request against its parent: merged ones fail no check but
#     `permissions` (no approvals are replayed), except the known exceptions
#     below, each with the reason the engine is right to flag it;
#  2. mutated copies, each failing exactly the check that owns the rule, at the
#     right file and line;
#  3. bad input: a clear finding or exit 2, never a crash.
# Usage: pr_check.sh FBCD HISTORY_BUNDLE. With FBCD_SANITIZED=1 (sanitizer
# build) only every 8th pull request is replayed.
FBCD=$1
BUNDLE=$2
. "$(dirname "$0")/lib.sh"
[ -f "$BUNDLE" ] || skip "no $BUNDLE"
command -v git >/dev/null || skip "no git"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@x GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@x
export GIT_CONFIG_NOSYSTEM=1 HOME="$T"

git clone -q --mirror "$BUNDLE" "$T/co.git" || skip "cannot clone $BUNDLE"
REPO="$T/co.git"

# ---------------------------------------------------------------- 1. history
# Known exceptions: merged pull requests that break the upgrade graph by the
# rules of pipeline.md §5.3 (classic semantics); the community pipeline had no
# such check. PR number -> the failing check/codes expected.
cat > "$T/exceptions" <<'EOF'
7833 graph:G5 channel alpha removed and default channel moved to fast-v0.2 (clusterpulse)
7840 graph:G5 channels alpha and candidate-v0 removed (clusterpulse)
8659 graph:G4 aws-neuron-operator 0.0.5 replaces 0.1.2: the channel heads went back
8764 graph:G1,G3 clusterpulse fast-v0: v0.2.3 both replaced and skipped by v0.3.0 strands v0.1.1-v0.2.2 (classic chain rule, resolver.md 3.1)
9025 graph:G5 default channel fast-v0 -> fast-v1 with no upgrade from v0.3.0 (clusterpulse)
9194 graph:G5 default channel fast-v0 -> fast-v1 with no upgrade from v0.3.0 (clusterpulse, v4.21)
9631 graph:G5 channel stable-v1 removed (cat-facts-operator)
7957 bundles:read operators/aws-neuron-operator/0.0.2 has no manifests/ and metadata/: not a registry+v1 bundle
8193 bundles:version-dir operators/node-healthcheck-operator/0.8.1 holds a CSV whose spec.version is 0.8.0
8648 bundles:version-dir operators/aws-neuron-operator/0.0.4 holds a CSV whose spec.version is 0.1.2
8860 templates:stale-render promotion to v4.21 copied an older render of v4.20 that lacks clusterpulse 1.0.0, which the template already lists (v4.20 itself is current)
EOF
mkdir -p "$T/prs"
n=0
for ref in $(git -C "$REPO" for-each-ref --format='%(refname)' refs/pull); do
	n=$((n + 1))
	if [ "${FBCD_SANITIZED:-0}" = 1 ] && [ $((n % 8)) -ne 0 ]; then continue; fi
	pr=${ref#refs/pull/}
	pr=${pr%/head}
	rc=0
	"$FBCD" pr check --repo "$REPO" --base "$ref^" --head "$ref" --output json \
		>"$T/prs/$pr.json" 2>"$T/prs/$pr.err" || rc=$?
	echo "$rc" >"$T/prs/$pr.rc"
done
if python3 - "$T/prs" "$T/exceptions" <<'PY'; then pass; else fail "history replay"; fi
import json, os, sys
d, exc_file = sys.argv[1], sys.argv[2]
exc = {}
for line in open(exc_file):
    pr, want = line.split()[:2]
    exc[pr] = want
bad = 0
n = 0
for f in sorted(os.listdir(d)):
    if not f.endswith(".json"):
        continue
    pr = f[:-5]
    n += 1
    rc = open(os.path.join(d, pr + ".rc")).read().strip()
    if rc not in ("0", "1"):
        print("PR", pr, "exit", rc, open(os.path.join(d, pr + ".err")).read()[:300])
        bad += 1
        continue
    doc = json.load(open(os.path.join(d, f)))
    failing = []
    for c in doc["checks"]:
        if c["conclusion"] == "failure" and c["id"] != "permissions":
            codes = sorted({a["code"] for a in c["annotations"] if a["level"] == "failure"})
            failing.append(c["id"] + ":" + ",".join(codes))
        for a in c["annotations"]:
            if not a["path"] and c["id"] != "permissions":
                print("PR", pr, c["id"], "annotation without a path", a)
                bad += 1
    got = " ".join(failing)
    want = exc.get(pr, "")
    if got != want:
        print("PR", pr, "failing:", got or "-", "expected:", want or "-")
        bad += 1
print(n, "pull requests replayed,", bad, "unexpected")
sys.exit(1 if bad or n == 0 else 0)
PY

# the templates check on real history (templates.md §7): a bundle pull request that appends
# to a template and leaves the catalogs to the release automation is a warning; a promotion
# copy rendered by opm v1.46 matches the other rules; a bot-written catalog with the same
# blobs in another YAML style is a formatting warning
for pr in 10590 10540 8682 10418; do # the sanitizer build replays only every 8th
	[ -f "$T/prs/$pr.json" ] || "$FBCD" pr check --repo "$REPO" --base "refs/pull/$pr/head^" \
		--head "refs/pull/$pr/head" --output json >"$T/prs/$pr.json" 2>/dev/null
done
if python3 - "$T/prs" <<'PY'; then pass; else fail "templates on real history"; fi
import json, sys
d = sys.argv[1]
def tpl(pr):
    doc = json.load(open("%s/%s.json" % (d, pr)))
    return [c for c in doc["checks"] if c["id"] == "templates"][0]
bad = 0
t = tpl("10590")
codes = sorted({(a["level"], a["code"]) for a in t["annotations"]})
if t["conclusion"] != "warning" or codes != [("warning", "stale-render")] or len(t["annotations"]) != 11:
    print("    10590:", t["conclusion"], codes, len(t["annotations"])); bad += 1
t = tpl("10540")
if t["conclusion"] != "success" or "(6 matched the other opm's semver rules" not in t["summary"]:
    print("    10540:", t["conclusion"], t["summary"]); bad += 1
t = tpl("8682")
if t["conclusion"] != "warning" or "5 differ only in formatting" not in t["summary"] or \
        {a["code"] for a in t["annotations"]} != {"format"}:
    print("    8682:", t["conclusion"], t["summary"]); bad += 1
t = tpl("10418")
if t["conclusion"] != "success" or not t["summary"].startswith("11 (template, catalog) renders"):
    print("    10418:", t["conclusion"], t["summary"]); bad += 1
sys.exit(1 if bad else 0)
PY

# --------------------------------------------------------------- 2. mutations
git clone -q "$REPO" "$T/w"
W="$T/w"
CAT=catalogs/v4.20/kepler-operator/catalog.yaml
# mutate NAME SCRIPT [FROM]: branch NAME from FROM (origin/main) with SCRIPT's change committed
mutate() {
	(cd "$W" && git checkout -qf -B "$1" "${3:-origin/main}" && sh -c "$2" && git add -A &&
		git commit -qm "$1") >/dev/null 2>&1 || fail "cannot make mutation $1"
}
# owns NAME CHECK CODE PATH LINE [BASE [ALSO]]: only CHECK fails (permissions aside; ALSO, a
# comma-separated list, fails too), with CODE at PATH:LINE, the pull request being NAME
# against BASE (origin/main). A hand edit of a template-managed catalog is also a stale
# render, so mutations of committed catalogs fail `templates` too (ALSO=templates).
owns() {
	run pr check --repo "$W" --base "${6:-origin/main}" --head "$1" --output json
	if python3 - "$T/out" "$2" "$3" "$4" "$5" "${7:-}" <<'PY'; then pass; else fail "mutation $1"; fi
import json, sys
doc = json.load(open(sys.argv[1]))
check, code, path, line = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
want = sorted([check] + [x for x in sys.argv[6].split(",") if x])
failing = sorted(c["id"] for c in doc["checks"] if c["conclusion"] == "failure")
if failing != want:
    print("    failing checks:", failing, "expected", want)
    for c in doc["checks"]:
        for a in c["annotations"]:
            if a["level"] == "failure":
                print("     ", c["id"], a)
    sys.exit(1)
c = [c for c in doc["checks"] if c["id"] == check][0]
hits = [a for a in c["annotations"] if a["code"] == code and a["path"] == path and
        (line == 0 or a["line"] == line)]
if not hits:
    print("    no", code, "at", path, line, "in", c["annotations"][:5])
    sys.exit(1)
PY
	[ "$RC" -eq 1 ] && pass || fail "mutation $1: exit $RC"
}

CSV=$(cd "$W" && git ls-files 'operators/kaoto-operator/*/manifests/*clusterserviceversion.yaml' | head -1)
mutate modified "echo '# edited' >> $CSV"
owns modified changes bundle-modified "$CSV" 0

# a real pull request adding a kaoto-operator bundle, plus a touch of another package
git -C "$W" fetch -q origin refs/pull/10029/head:pr10029
mutate twopkgs "echo '# x' >> operators/kepler-operator/ci.yaml" pr10029
owns twopkgs changes many-packages operators/kepler-operator/ci.yaml 0 pr10029^

mutate nocsv "git rm -q operators/kaoto-operator/2.11.0/manifests/*clusterserviceversion*" pr10029
owns nocsv bundles B3 operators/kaoto-operator/2.11.0/manifests 1 pr10029^

# kaoto-operator is in add mode (replaces-mode, no fbc.enabled): the checks build it from its
# merge history as the ingest will. 2.11.0 replacing a version never added: IIB's add fails.
KCSV=operators/kaoto-operator/2.11.0/manifests/kaoto-operator.clusterserviceversion.yaml
KANN=operators/kaoto-operator/2.11.0/metadata/annotations.yaml
mutate addfails "sed -i 's/replaces: kaoto-operator.v2.10.0/replaces: kaoto-operator.v2.9.9/' $KCSV" pr10029
owns addfails templates A20 "$KCSV" 254 pr10029^
# 2.11.0 alone in a new default channel: subscriptions to alpha lose their upgrade (G5 in
# every catalog the v4.13-v4.18 label admits)
mutate addchannel "sed -i '/replaces: kaoto-operator.v2.10.0/d' $KCSV && sed -i 's/channels.v1: alpha/channels.v1: beta\\n  operators.operatorframework.io.bundle.channel.default.v1: beta/' $KANN" pr10029
owns addchannel graph G5 "$KCSV" 0 pr10029^
if python3 - "$T/out" <<'PY'; then pass; else fail "add-mode G5 names its catalogs"; fi
import json, sys
doc = json.load(open(sys.argv[1]))
g = [c for c in doc["checks"] if c["id"] == "graph"][0]
cats = sorted({a["message"].split(" ")[1] for a in g["annotations"] if a["code"] == "G5"})
want = ["v4.%d" % n for n in range(13, 19)]
if cats != want:
    print("    G5 in", cats, "expected", want)
    sys.exit(1)
PY

# a real template pull request (kairos-operator 2.1.0 rendered into catalogs v4.12-v4.22)
# whose v4.20 catalog is edited by hand: no longer the render of the template
git -C "$W" fetch -q origin refs/pull/10418/head:pr10418
mutate stale "sed -i '349s/displayName: Mode\$/displayName: Mode of operation/' catalogs/v4.20/kairos-operator/catalog.yaml" pr10418
owns stale templates stale-render catalogs/v4.20/kairos-operator/catalog.yaml 15 pr10418^

mutate outside "mkdir -p docs && echo x > docs/notes.md"
owns outside changes outside-layout docs/notes.md 0

mutate nowhere "sed -i '17s/replaces: kepler-operator.v0.22.0/replaces: kepler-operator.v0.0.1/' $CAT"
owns nowhere catalogs V4 "$CAT" 9 origin/main templates

mutate middle "sed -i '16,17d' $CAT"
owns middle catalogs V4 "$CAT" 9 origin/main templates

mutate registry "sed -i '24s#quay.io/community-operator-pipeline-prod/#docker.io/evil/#' $CAT"
owns registry policy registry "$CAT" 24 origin/main templates

mutate bundleobject "sed -i '27a- type: olm.bundle.object\n  value:\n    data: eyJraW5kIjoiQ29uZmlnTWFwIiwiYXBpVmVyc2lvbiI6InYxIn0=' $CAT"
owns bundleobject policy bundle-object "$CAT" 28 origin/main templates

# text output: path:line: level: check/code: message, then the table
run pr check --repo "$W" --base origin/main --head registry
expect_rc 1 "text output exit status"
expect_grep "^$CAT:24: failure: policy/registry: " "$T/out" "text finding line"
expect_grep "^policy  *failure " "$T/out" "summary table"
run pr check --repo "$W" --base origin/main --head registry --check policy --author tomasbakk
expect_rc 1 "--check policy"
grep -q "^graph " "$T/out" && fail "--check policy ran graph" || pass

# ------------------------------------------------------------- 3. bad input
run pr check --repo "$W" --base origin/main --head no-such-rev
expect_rc 2 "missing head"
expect_grep "no-such-rev" "$T/err" "missing head names the revision"
run pr check --repo "$W" --base no-such-rev --head origin/main
expect_rc 2 "missing base"
(cd "$W" && git checkout -qf --orphan lonely && git rm -rqf . && echo z > z && git add z &&
	git commit -qm lonely) >/dev/null 2>&1
run pr check --repo "$W" --base origin/main --head lonely
expect_rc 2 "unrelated histories"
expect_grep "no common ancestor" "$T/err" "unrelated histories message"
run pr check --repo "$T/nowhere" --base a --head b
expect_rc 2 "not a repository"
run pr check --repo "$W" --base origin/main
expect_rc 2 "usage: no --head"
run pr check --repo "$W" --base origin/main --head origin/main --check nope
expect_rc 2 "usage: unknown check"

mutate loop "ln -s l2 catalogs/v4.20/kepler-operator/l1 && ln -s l1 catalogs/v4.20/kepler-operator/l2"
run pr check --repo "$W" --base origin/main --head loop --check catalogs
expect_rc 1 "symlink loop"
expect_grep "catalogs/v4.20/kepler-operator/l1:1: failure: catalogs/L1" "$T/out" "symlink loop finding"

mutate binary "head -c 4096 /dev/urandom > catalogs/v4.20/kepler-operator/blob.bin"
run pr check --repo "$W" --base origin/main --head binary --check catalogs
expect_rc 1 "binary file"
expect_grep "catalogs/v4.20/kepler-operator/blob.bin:" "$T/out" "binary file finding"

mutate big "head -c 104857600 /dev/zero > catalogs/v4.20/kepler-operator/big.json"
run pr check --repo "$W" --base origin/main --head big --check catalogs
expect_rc 1 "100 MB file"
expect_grep "big.json:1: failure: catalogs/LIMIT" "$T/out" "100 MB file finding"

mutate badconfig "printf 'maintainers: [a\n\t- : {' > config.yaml"
(cd "$W" && git checkout -qf -B afterbad badconfig && echo '# x' >> $CAT && git commit -qam x) >/dev/null 2>&1
run pr check --repo "$W" --base badconfig --head afterbad
expect_rc 1 "config.yaml that is not YAML"
expect_grep "config.yaml:1: failure: changes/settings: .*not valid YAML" "$T/out" "config.yaml finding"

rm -rf "$W/.git/objects/pack" "$W/.git/objects/"[0-9a-f][0-9a-f]
run pr check --repo "$W" --base origin/main --head registry
expect_rc 2 "corrupt repository"
grep -q "AddressSanitizer\|runtime error" "$T/err" && fail "sanitizer report" || pass

finish
