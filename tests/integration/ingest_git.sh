#!/bin/sh
# repo.ingest end to end: a repository declared in the server's config file
# (`repositories:`), served over file://, pushes announced by signed GitHub
# webhooks; `fbcd serve --workers` mirrors it with libgit2, builds the plain
# layout from git objects, stores revisions with their provenance (commit,
# pull request, author, time), makes no revision for unchanged content, keeps
# an invalid commit out, and the stored catalog equals `fbcd render` of a
# checkout of the commit.
#   ingest_git.sh FBCD EXAMPLE_CATALOG_DIR
FBCD=$1 CATALOG=$2
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$HERE/../lib
command -v git >/dev/null || skip "git is not installed"
command -v curl >/dev/null || skip "curl is not installed"

PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-pg.XXXXXX")
SERVE_PID=
cleanup() {
	[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
	if [ -f "$PGDIR/url" ]; then sh "$LIB/pg-stop.sh" "$PGDIR"; else rm -rf "$PGDIR"; fi
	rm -rf "$T"
}
trap cleanup EXIT; [ -n "${KEEP:-}" ] && trap - EXIT
URL=$(sh "$LIB/pg-start.sh" "$PGDIR") || { [ $? -eq 77 ] && skip "no PostgreSQL"; echo "FAIL: pg-start"; exit 1; }
. "$LIB/pg-common.sh"
sql() { "$PG_BINDIR/psql" -X -q -t -A -v ON_ERROR_STOP=1 "$URL" -c "$1"; }

# the watched repository: the example catalog at its root (plain layout)
export GIT_AUTHOR_NAME="Ada Author" GIT_AUTHOR_EMAIL=ada@example.com
export GIT_COMMITTER_NAME=Committer GIT_COMMITTER_EMAIL=c@example.com
O=$T/origin
mkdir -p "$O" && cp -R "$CATALOG"/. "$O"/ && chmod -R u+w "$O"
git -C "$O" init -q -b main && git -C "$O" add -A && git -C "$O" commit -q -m one
C1=$(git -C "$O" rev-parse HEAD)

SECRET=ingest-webhook-secret-93ac51
cat >"$T/fbcd.yaml" <<YAML
repositories:
  - name: plain
    url: file://$O
    branch: main
    forge: {kind: github, project: org/plain, api: "http://127.0.0.1:9"}
    credentials: {webhookSecretEnv: WH_SECRET}
    pollSeconds: 0
  - name: layout
    url: file://$T/layout
    branch: main
    forge: {kind: github, project: org/layout, api: "http://127.0.0.1:9"}
    credentials: {webhookSecretEnv: WH_SECRET}
    pollSeconds: 0
YAML
# a .fbcd.yaml repository (pipeline.md §3.1): catalogs/<dir> is the catalog community-<dir>
L=$T/layout
mkdir -p "$L/catalogs/v1" "$L/catalogs/v2" "$L/notes"
cp -R "$CATALOG"/. "$L/catalogs/v1"/ && cp -R "$CATALOG"/. "$L/catalogs/v2"/ && cp -R "$CATALOG"/. "$L/notes"/ && chmod -R u+w "$L"
sed -i 's/^description: .*/description: the second catalog/' "$L/catalogs/v2/example-operator/catalog.yaml"
printf 'catalogs:\n  - path: catalogs/*\n    name: "community-{dir}"\n' >"$L/.fbcd.yaml"
git -C "$L" init -q -b main && git -C "$L" add -A && git -C "$L" commit -q -m layout
L1=$(git -C "$L" rev-parse HEAD)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
B=http://127.0.0.1:$PORT
WH_SECRET=$SECRET "$FBCD" serve --config "$T/fbcd.yaml" --listen "127.0.0.1:$PORT" \
	--database-url "$URL" --data-dir "$T/data" --workers 2 --job-poll-ms 200 >"$T/serve.log" 2>&1 &
SERVE_PID=$!
i=0
until curl -sf "$B/healthz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: serve did not start"; cat "$T/serve.log"; exit 1; }
	sleep 0.1
done
[ "$(curl -s "$B/v1/repositories/plain" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['origin'], d['url'])")" = "config file://$O" ] &&
	pass || fail "repository from the config file"

deliver() { # EVENT DELIVERY FILE
	sig=$(python3 -c "import hmac,hashlib,sys; print('sha256='+hmac.new(sys.argv[1].encode(), open(sys.argv[2],'rb').read(), hashlib.sha256).hexdigest())" "$SECRET" "$3")
	curl -s -o "$T/body" -w '%{http_code}' -X POST -H "X-GitHub-Event: $1" -H "X-GitHub-Delivery: $2" \
		-H "X-Hub-Signature-256: $sig" --data-binary "@$3" "$B/v1/webhooks/github"
}
push() { # DELIVERY SHA -> job id
	echo "{\"ref\": \"refs/heads/main\", \"before\": \"0000000000000000000000000000000000000000\", \"after\": \"$2\", \"repository\": {\"full_name\": \"org/plain\"}, \"sender\": {\"login\": \"bot\"}}" >"$T/push.json"
	c=$(deliver push "$1" "$T/push.json")
	[ "$c" = 202 ] || { fail "push webhook $1: $c $(cat "$T/body")"; return; }
	python3 -c "import json; print(json.load(open('$T/body'))['job'])"
}
wait_job() { # ID
	i=0
	while :; do
		s=$(sql "SELECT state FROM jobs WHERE id = $1")
		case $s in succeeded|failed|cancelled) echo "$s"; return;; esac
		i=$((i + 1)); [ $i -gt 600 ] && { echo timeout; return; }
		sleep 0.1
	done
}
revs() { sql "SELECT count(*) FROM revisions r JOIN catalogs c ON c.id = r.catalog_id WHERE c.name = 'plain'"; }

# --- first push: one revision with its provenance, equal to fbcd render
J=$(push p-1 "$C1")
[ "$(wait_job "$J")" = succeeded ] && pass || fail "ingest of $C1: $(sql "SELECT state, error FROM jobs WHERE id = $J")"
[ "$(revs)" = 1 ] && pass || fail "revisions after the first push: $(revs)"
curl -s "$B/v1/catalogs/plain/revisions/1" >"$T/rev.json"
[ "$(python3 -c "import json; p=json.load(open('$T/rev.json'))['provenance']; print(p['repository'], p['commit'], p['author'], p['pullRequest'], p['committedAt'] is not None)")" = "plain $C1 Ada Author None True" ] &&
	pass || fail "provenance: $(cat "$T/rev.json")"
curl -s "$B/catalogs/plain/api/v1/all" >"$T/all.jsonl"
checkout() { rm -rf "$T/co" && mkdir "$T/co" && git -C "$O" archive HEAD | tar -x -C "$T/co"; }
checkout
"$FBCD" render "$T/co" >"$T/render.jsonl" 2>"$T/render.err"
cmp -s "$T/all.jsonl" "$T/render.jsonl" && pass || fail "stored catalog differs from fbcd render of the checkout"
[ -d "$T/data/mirrors/plain.git" ] && [ ! -e "$T/data/mirrors/plain.git/example-operator" ] && pass || fail "no bare mirror"
[ "$(sql "SELECT head_commit FROM repositories WHERE name = 'plain'")" = "$C1" ] && pass || fail "repository head"

# --- a commit that changes no catalog content: no new revision
echo "more notes" >>"$O/README.md" && git -C "$O" add -A && git -C "$O" commit -q -m notes
C2=$(git -C "$O" rev-parse HEAD)
J=$(push p-2 "$C2")
[ "$(wait_job "$J")" = succeeded ] && [ "$(revs)" = 1 ] && pass || fail "unchanged content made a revision ($(revs))"
[ "$(sql "SELECT result->'catalogs'->0->>'created' FROM jobs WHERE id = $J")" = false ] && pass || fail "result should say not created"

# --- a merged pull request, then its push: revision 2 names the pull request
sed -i 's/^description: .*/description: changed by pull request seven/' "$O/example-operator/catalog.yaml"
grep -q "pull request seven" "$O/example-operator/catalog.yaml" || { sed -i '0,/^schema: olm.package/s//schema: olm.package\ndescription: changed by pull request seven/' "$O/example-operator/catalog.yaml"; }
git -C "$O" add -A && git -C "$O" commit -q -m "pr 7"
C3=$(git -C "$O" rev-parse HEAD)
cat >"$T/merged.json" <<JSON
{"action": "closed", "number": 7, "pull_request": {"number": 7, "merged": true, "title": "change", "user": {"login": "alice"}, "head": {"sha": "$C3", "ref": "x"}, "base": {"sha": "$C2", "ref": "main"}}, "repository": {"full_name": "org/plain"}, "sender": {"login": "alice"}}
JSON
[ "$(deliver pull_request p-3 "$T/merged.json")" = 202 ] && pass || fail "merged webhook"
J=$(push p-4 "$C3")
[ "$(wait_job "$J")" = succeeded ] && [ "$(revs)" = 2 ] && pass || fail "changed content: $(revs) revisions, job $(sql "SELECT state, error FROM jobs WHERE id = $J")"
curl -s "$B/v1/catalogs/plain/revisions/2" >"$T/rev2.json"
[ "$(python3 -c "import json; p=json.load(open('$T/rev2.json'))['provenance']; print(p['commit'], p['pullRequest'])")" = "$C3 7" ] &&
	pass || fail "provenance of revision 2: $(cat "$T/rev2.json")"
curl -s "$B/catalogs/plain/api/v1/all" >"$T/all2.jsonl"
checkout
"$FBCD" render "$T/co" >"$T/render2.jsonl"
cmp -s "$T/all2.jsonl" "$T/render2.jsonl" && pass || fail "revision 2 differs from fbcd render"

# --- traceability: commits and bundle history
curl -s -o "$T/c.json" -w '%{http_code}' "$B/v1/repositories/plain/commits/$C3" >"$T/code"
[ "$(cat "$T/code")" = 200 ] && [ "$(python3 -c "import json; d=json.load(open('$T/c.json')); print(d['commit'], d['pullRequest'], d['author'], [(r['catalog'], r['revision']) for r in d['revisions']], d['ingest']['state'])")" = "$C3 7 Ada Author [('plain', 2)] succeeded" ] &&
	pass || fail "GET commits/$C3: $(cat "$T/c.json")"
short=$(echo "$C1" | cut -c1-10)
[ "$(curl -s "$B/v1/repositories/plain/commits/$short" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['commit'], [r['revision'] for r in d['revisions']])")" = "$C1 [1]" ] &&
	pass || fail "commit by prefix"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$B/v1/repositories/plain/commits/abcdef0123456")" = 404 ] && pass || fail "unknown commit not 404"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$B/v1/repositories/plain/commits/XYZ")" = 400 ] && pass || fail "bad sha not 400"
curl -s "$B/v1/catalogs/plain/packages/example-operator/bundles/example-operator.v1.0.0/history" >"$T/h.json"
[ "$(python3 -c "import json; d=json.load(open('$T/h.json')); print(d['firstRevision']['revision'], d['firstRevision']['provenance']['commit'], d['revisions'])")" = "1 $C1 [1, 2]" ] &&
	pass || fail "bundle history: $(cat "$T/h.json")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$B/v1/catalogs/plain/packages/example-operator/bundles/nope/history")" = 404 ] && pass || fail "history of an unknown bundle not 404"

# --- an invalid commit is not stored; the job succeeds and reports why
printf '{"schema": "olm.channel", "package": "nope", "name": "x", "entries": [{"name": "y"}]}\n' >"$O/broken.json"
git -C "$O" add -A && git -C "$O" commit -q -m broken
C4=$(git -C "$O" rev-parse HEAD)
J=$(push p-5 "$C4")
[ "$(wait_job "$J")" = succeeded ] && [ "$(revs)" = 2 ] && pass || fail "invalid commit stored or job failed"
[ "$(sql "SELECT result->'catalogs'->0->>'valid' FROM jobs WHERE id = $J")" = false ] && [ -n "$(sql "SELECT result->'catalogs'->0->'findings'->0->>'code' FROM jobs WHERE id = $J")" ] &&
	pass || fail "invalid result: $(sql "SELECT result FROM jobs WHERE id = $J")"
# the same push delivered again is a no-op
[ "$(deliver push p-5 "$T/push.json")" = 200 ] && pass || fail "redelivery not 200"
# a commit that does not exist on the remote fails without retrying
J=$(push p-6 1234567890123456789012345678901234567890)
[ "$(wait_job "$J")" = failed ] && [ "$(sql "SELECT attempts FROM jobs WHERE id = $J")" = 1 ] && pass || fail "missing commit: $(sql "SELECT state, attempts, error FROM jobs WHERE id = $J")"

# --- a pull request merged with a merge commit: the push names the merge
# commit, not the pull request's head; the merged delivery's merge_commit_sha
# ties them, so the revision still names the pull request
git -C "$O" checkout -q -b fix
git -C "$O" rm -q broken.json
sed -i 's/^description: .*/description: fixed on a branch/' "$O/example-operator/catalog.yaml"
git -C "$O" commit -q -am "fix on a branch"
H8=$(git -C "$O" rev-parse HEAD)
git -C "$O" checkout -q main
git -C "$O" merge -q --no-ff -m "Merge pull request #8" fix
M8=$(git -C "$O" rev-parse HEAD)
cat >"$T/merged8.json" <<JSON
{"action": "closed", "number": 8, "pull_request": {"number": 8, "merged": true, "merge_commit_sha": "$M8", "title": "fix", "user": {"login": "bob"}, "head": {"sha": "$H8", "ref": "fix"}, "base": {"sha": "$C4", "ref": "main"}}, "repository": {"full_name": "org/plain"}, "sender": {"login": "bob"}}
JSON
[ "$(deliver pull_request p-8 "$T/merged8.json")" = 202 ] && pass || fail "merged webhook with a merge commit"
J=$(push p-9 "$M8")
[ "$(wait_job "$J")" = succeeded ] && [ "$(sql "SELECT commit || ' ' || pull_request FROM revisions r JOIN catalogs c ON c.id = r.catalog_id WHERE c.name = 'plain' AND r.number = 3")" = "$M8 8" ] &&
	pass || fail "merge commit provenance: $(sql "SELECT number, commit, pull_request FROM revisions r JOIN catalogs c ON c.id = r.catalog_id WHERE c.name = 'plain'") $(sql "SELECT state, error FROM jobs WHERE id = $J")"

# --- the .fbcd.yaml layout: one revision per declared directory, named by the pattern
push_to() { # REPO DELIVERY SHA -> job id
	echo "{\"ref\": \"refs/heads/main\", \"before\": \"0000000000000000000000000000000000000000\", \"after\": \"$3\", \"repository\": {\"full_name\": \"org/$1\"}, \"sender\": {\"login\": \"bot\"}}" >"$T/push.json"
	c=$(deliver push "$2" "$T/push.json")
	[ "$c" = 202 ] || { fail "push webhook $2: $c $(cat "$T/body")"; return; }
	python3 -c "import json; print(json.load(open('$T/body'))['job'])"
}
J=$(push_to layout l-1 "$L1")
[ "$(wait_job "$J")" = succeeded ] && pass || fail "ingest of the .fbcd.yaml layout: $(sql "SELECT state, error FROM jobs WHERE id = $J")"
[ "$(sql "SELECT string_agg(c.name || '@' || r.commit, ' ' ORDER BY c.name) FROM revisions r JOIN catalogs c ON c.id = r.catalog_id WHERE r.repository = 'layout'")" = "community-v1@$L1 community-v2@$L1" ] &&
	pass || fail ".fbcd.yaml catalogs: $(sql "SELECT result FROM jobs WHERE id = $J")"
for d in v1 v2; do
	curl -s "$B/catalogs/community-$d/api/v1/all" >"$T/l.jsonl"
	"$FBCD" render "$L/catalogs/$d" >"$T/lr.jsonl"
	cmp -s "$T/l.jsonl" "$T/lr.jsonl" && pass || fail "community-$d differs from fbcd render of catalogs/$d"
done
# a .fbcd.yaml that does not parse fails the ingest, naming the file; nothing stored
printf 'catalogs: [unclosed\n' >"$L/.fbcd.yaml"
git -C "$L" commit -q -am "broken settings"
J=$(push_to layout l-2 "$(git -C "$L" rev-parse HEAD)")
[ "$(wait_job "$J")" = failed ] && sql "SELECT error FROM jobs WHERE id = $J" | grep -q '\.fbcd\.yaml' &&
	[ "$(sql "SELECT count(*) FROM revisions WHERE repository = 'layout'")" = 2 ] &&
	pass || fail "broken .fbcd.yaml: $(sql "SELECT state, error FROM jobs WHERE id = $J")"
kill -0 "$SERVE_PID" && pass || fail "server died"
finish
