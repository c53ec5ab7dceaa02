#!/bin/sh
# fbcd pr check with its on-disk cache (--cache-dir) on the real community-operators history:
#  1. real pull requests checked without the cache, cold and warm give the same report (the
#     warm run takes the add-mode builds from the cache: timings.cache says so);
#  2. a change the cache has not seen (a fix-up commit to the pull request's bundle: the same
#     key, other content) is never answered from the cache;
#  3. damaged cache files are misses, never wrong answers or crashes; the directory stays
#     within --cache-size; a directory that cannot be used is an error when asked for and a
#     warning when it is the default.
# Usage: pr_cache.sh FBCD HISTORY_BUNDLE
FBCD=$1
BUNDLE=$2
. "$(dirname "$0")/lib.sh"
[ -f "$BUNDLE" ] || skip "no $BUNDLE"
command -v git >/dev/null || skip "no git"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@x GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@x
export GIT_CONFIG_NOSYSTEM=1 HOME="$T/home"
mkdir -p "$HOME"
git clone -q --mirror "$BUNDLE" "$T/co.git" || skip "cannot clone $BUNDLE"
REPO="$T/co.git"
C="$T/cache"

# check NAME BASE HEAD ARGS...: the JSON report in $T/NAME.json, the report without its
# timings in $T/NAME.cmp
check() {
	_n=$1
	_cb=$2
	_ch=$3
	shift 3
	"$FBCD" pr check --repo "$REPO" --base "$_cb" --head "$_ch" --output json "$@" \
		>"$T/$_n.json" 2>"$T/$_n.err"
	echo $? >"$T/$_n.rc"
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); d.pop("timings")
print(json.dumps(d, sort_keys=True))' "$T/$_n.json" >"$T/$_n.cmp" 2>>"$T/$_n.err"
}
# cache_of NAME: "hits misses" of the run
cache_of() {
	python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["timings"].get("cache")
print("%d %d" % (c["hits"], c["misses"]) if c else "none")' "$T/$1.json"
}
same() {
	if cmp -s "$T/$1.cmp" "$T/$2.cmp" && [ "$(cat "$T/$1.rc")" = "$(cat "$T/$2.rc")" ]; then
		pass
	else
		fail "$3: $1 and $2 differ"
		diff "$T/$1.cmp" "$T/$2.cmp" | head -5
	fi
}

# ---------------------------------------------------------------- 1. same answers
# add-mode bundles (ack-sns-controller, kepler-operator), a template-managed bundle and a
# template pull request
for pr in 8553 7074 10885 8682; do
	_b="refs/pull/$pr/head^"
	_h="refs/pull/$pr/head"
	check "$pr.none" "$_b" "$_h" --no-cache
	check "$pr.cold" "$_b" "$_h" --cache-dir "$C"
	check "$pr.warm" "$_b" "$_h" --cache-dir "$C"
	same "$pr.none" "$pr.cold" "PR $pr cold"
	same "$pr.none" "$pr.warm" "PR $pr warm"
	[ "$(cache_of "$pr.none")" = none ] && pass || fail "PR $pr: --no-cache reports a cache"
done
for pr in 8553 7074; do
	[ "$(cache_of "$pr.cold")" = "0 1" ] && pass || fail "PR $pr cold: $(cache_of "$pr.cold")"
	[ "$(cache_of "$pr.warm")" = "1 0" ] && pass || fail "PR $pr warm: $(cache_of "$pr.warm")"
done
n=$(ls "$C/checks-v1" | wc -l)
[ "$n" -ge 2 ] && pass || fail "$n cache entries"

# ---------------------------------------------------------------- 2. not seen: not cached
# PR 9404 adds ack-sns-controller 1.4.0; a fix-up commit gives its CSV the version 1.3.1,
# already in the index (semver mode, IIB: A26). Same packages, same merge histories (the
# directory is first had by the same commit), so the same key as 9404's builds: only the
# content differs, and the answer must be the fix-up's.
W="$T/w"
git clone -q "$REPO" "$W"
CSV=operators/ack-sns-controller/1.4.0/manifests/ack-sns-controller.clusterserviceversion.yaml
(cd "$W" && git fetch -q origin refs/pull/9404/head && git checkout -qf -B fixup FETCH_HEAD &&
	grep -q '^  version: 1.4.0$' "$CSV" &&
	sed -i 's/^  version: 1.4.0$/  version: 1.3.1/' "$CSV" &&
	git commit -qam fixup && git push -q "$REPO" fixup:refs/heads/fixup) >/dev/null 2>&1 ||
	fail "fix-up commit"
_b="refs/pull/9404/head^"
_h="refs/pull/9404/head"
check 9404.cold "$_b" "$_h" --cache-dir "$C"
check 9404.none "$_b" "$_h" --no-cache
same 9404.none 9404.cold "PR 9404 cold"
_h=refs/heads/fixup
check fixup.warm "$_b" "$_h" --cache-dir "$C"
check fixup.none "$_b" "$_h" --no-cache
same fixup.none fixup.warm "fix-up commit with a cache holding its pull request"
[ "$(cache_of fixup.warm)" = "0 1" ] && pass || fail "fix-up answered from the cache: $(cache_of fixup.warm)"
grep -q '"code": "A26"' "$T/fixup.warm.json" && pass || fail "fix-up: no A26"
grep -q 'A26' "$T/9404.cold.json" && fail "9404 has A26" || pass
# and both stay cached side by side
check fixup.warm2 "$_b" "$_h" --cache-dir "$C"
same fixup.none fixup.warm2 "fix-up, warm"
[ "$(cache_of fixup.warm2)" = "1 0" ] && pass || fail "fix-up warm: $(cache_of fixup.warm2)"

# ---------------------------------------------------------------- processes at once
# four processes check the same change on one empty directory: each writes the entry (under a
# name of its own, renamed into place), all answer the same, nothing half-written is left
P="$T/parallel"
_b="refs/pull/8553/head^"
_h="refs/pull/8553/head"
for i in 1 2 3 4; do
	check "8553.p$i" "$_b" "$_h" --cache-dir "$P" &
done
wait
for i in 1 2 3 4; do same 8553.none "8553.p$i" "parallel run $i"; done
n=$(ls -A "$P/checks-v1" | grep -c '^\.tmp\.')
[ "$n" = 0 ] && pass || fail "$n temporary files left"
check 8553.after "$_b" "$_h" --cache-dir "$P"
[ "$(cache_of 8553.after)" = "1 0" ] && pass || fail "after parallel writers: $(cache_of 8553.after)"

# ---------------------------------------------------------------- 3. damage and bounds
for f in "$C"/checks-v1/*; do
	python3 -c '
import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 0x55
open(p, "wb").write(b)' "$f"
done
_b="refs/pull/8553/head^"
_h="refs/pull/8553/head"
check 8553.damaged "$_b" "$_h" --cache-dir "$C"
same 8553.none 8553.damaged "damaged cache files"
[ "$(cache_of 8553.damaged)" = "0 1" ] && pass || fail "damaged entry used: $(cache_of 8553.damaged)"
truncate -s 100 "$C"/checks-v1/* 2>/dev/null
check 8553.cut "$_b" "$_h" --cache-dir "$C"
same 8553.none 8553.cut "truncated cache files"

B="$T/bounded"
for pr in 8553 7074 9404; do
	_b="refs/pull/$pr/head^"
	_h="refs/pull/$pr/head"
	check "$pr.bounded" "$_b" "$_h" --cache-dir "$B" --cache-size 8
	same "$pr.none" "$pr.bounded" "PR $pr with an 8 MiB cache"
done
size=$(du -sk "$B/checks-v1" | cut -f1)
[ "$size" -le 8192 ] && pass || fail "cache of $size KiB past --cache-size 8"

# the default directory: $XDG_CACHE_HOME/fbcd
_b="refs/pull/10885/head^"
_h="refs/pull/10885/head"
(XDG_CACHE_HOME="$T/xdg" && export XDG_CACHE_HOME && check 10885.xdg "$_b" "$_h")
[ -d "$T/xdg/fbcd/checks-v1" ] && pass || fail "no cache under XDG_CACHE_HOME"
same 10885.none 10885.xdg "default cache directory"
# unusable: an error when asked for, a warning (and a full report) when it is the default
echo x >"$T/afile"
run pr check --repo "$REPO" --base "$_b" --head "$_h" --cache-dir "$T/afile"
expect_rc 2 "--cache-dir on a file"
expect_grep "afile: cannot use it as a cache directory" "$T/err" "--cache-dir message"
(XDG_CACHE_HOME="$T/afile" && export XDG_CACHE_HOME && check 10885.badxdg "$_b" "$_h")
same 10885.none 10885.badxdg "unusable default cache directory"
expect_grep "running without the cache" "$T/10885.badxdg.err" "unusable default: warning"
run pr check --repo "$REPO" --base "$_b" --head "$_h" --cache-dir "$C" --no-cache
expect_rc 2 "--cache-dir with --no-cache"
run pr check --repo "$REPO" --base "$_b" --head "$_h" --cache-size 0
expect_rc 2 "--cache-size 0"
grep -q "AddressSanitizer\|runtime error" "$T"/*.err && fail "sanitizer report" || pass

finish
