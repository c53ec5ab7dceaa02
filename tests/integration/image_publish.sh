#!/bin/sh
# catalog.publish end to end (pipeline.md §8, §9): a git repository with a
# publish target in the server's config; each push webhook's new revision is
# built and pushed to a real registry (Debian's docker-registry on loopback,
# plain HTTP) by `fbcd serve --workers`, recorded in `images`, visible from
# the catalog, the digest, the commit and the bundle's history; the pushed
# image is what skopeo sees (labels, platforms, tags); POST
# /v1/catalogs/{c}/images publishes on demand, multi-arch, and publishing a
# revision again gives the same digest.
#   image_publish.sh FBCD EXAMPLE_CATALOG_DIR
FBCD=$1 CATALOG=$2
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$HERE/../lib
for t in docker-registry skopeo git curl; do command -v $t >/dev/null || skip "$t is not installed"; done

PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-pg.XXXXXX")
SERVE_PID= REG_PID=
cleanup() {
	for p in $SERVE_PID $REG_PID; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	if [ -f "$PGDIR/url" ]; then sh "$LIB/pg-stop.sh" "$PGDIR"; else rm -rf "$PGDIR"; fi
	rm -rf "$T"
}
trap cleanup EXIT
URL=$(sh "$LIB/pg-start.sh" "$PGDIR") || { [ $? -eq 77 ] && skip "no PostgreSQL"; echo "FAIL: pg-start"; exit 1; }
. "$LIB/pg-common.sh"
sql() { "$PG_BINDIR/psql" -X -q -t -A -v ON_ERROR_STOP=1 "$URL" -c "$1"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

RP=$(free_port)
REG=127.0.0.1:$RP
mkdir -p "$T/reg"
printf 'version: 0.1\nlog: {level: warn}\nstorage: {filesystem: {rootdirectory: %s/reg/data}, delete: {enabled: true}}\nhttp: {addr: %s}\n' "$T" "$REG" >"$T/reg/config.yml"
docker-registry serve "$T/reg/config.yml" >"$T/reg.log" 2>&1 &
REG_PID=$!
i=0
until curl -s -o /dev/null "http://$REG/v2/"; do i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: registry did not start"; cat "$T/reg.log"; exit 1; }; sleep 0.1; done

export GIT_AUTHOR_NAME="Ada Author" GIT_AUTHOR_EMAIL=ada@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@x
O=$T/origin
mkdir -p "$O" && cp -R "$CATALOG"/. "$O"/ && chmod -R u+w "$O"
git -C "$O" init -q -b main && git -C "$O" add -A && git -C "$O" commit -q -m one
C1=$(git -C "$O" rev-parse HEAD)
SECRET=publish-webhook-secret-3d1
cat >"$T/fbcd.yaml" <<YAML
repositories:
  - name: plain
    url: file://$O
    forge: {kind: github, project: org/plain, api: "http://127.0.0.1:9"}
    credentials: {webhookSecretEnv: WH_SECRET}
    pollSeconds: 0
    publish:
      - catalog: "pl*"
        image: $REG/org/plain-catalog:latest
        tags: ["rev-{revision}", "{commit}"]
        insecure: true
  - name: layout
    url: file://$T/layout
    forge: {kind: github, project: org/layout, api: "http://127.0.0.1:9"}
    credentials: {webhookSecretEnv: WH_SECRET}
    pollSeconds: 0
YAML
# a repository whose targets come from its own .fbcd.yaml (no override in the config)
L=$T/layout
mkdir -p "$L/catalogs/v1" "$L/catalogs/v2"
cp -R "$CATALOG"/. "$L/catalogs/v1"/ && cp -R "$CATALOG"/. "$L/catalogs/v2"/ && chmod -R u+w "$L"
printf 'catalogs:\n  - path: catalogs/*\n    name: "lay-{dir}"\npublish:\n  - catalog: lay-v1\n    image: %s/org/lay:latest\n    insecure: true\n' "$REG" >"$L/.fbcd.yaml"
git -C "$L" init -q -b main && git -C "$L" add -A && git -C "$L" commit -q -m layout
PORT=$(free_port)
B=http://127.0.0.1:$PORT
ADMIN=publish-admin-token-0123456789ab
WH_SECRET=$SECRET FBCD_ADMIN_TOKEN=$ADMIN "$FBCD" serve --config "$T/fbcd.yaml" --listen "127.0.0.1:$PORT" \
	--database-url "$URL" --data-dir "$T/data" --workers 2 --job-poll-ms 200 --retry-base-ms 200 >"$T/serve.log" 2>&1 &
SERVE_PID=$!
i=0
until curl -sf "$B/healthz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: serve did not start"; cat "$T/serve.log"; exit 1; }
	sleep 0.1
done
push() { # DELIVERY SHA [PROJECT] -> job id
	echo "{\"ref\": \"refs/heads/main\", \"before\": \"0000000000000000000000000000000000000000\", \"after\": \"$2\", \"repository\": {\"full_name\": \"${3:-org/plain}\"}, \"sender\": {\"login\": \"bot\"}}" >"$T/push.json"
	sig=$(python3 -c "import hmac,hashlib,sys; print('sha256='+hmac.new(sys.argv[1].encode(), open(sys.argv[2],'rb').read(), hashlib.sha256).hexdigest())" "$SECRET" "$T/push.json")
	curl -s -o "$T/body" -X POST -H "X-GitHub-Event: push" -H "X-GitHub-Delivery: $1" \
		-H "X-Hub-Signature-256: $sig" --data-binary "@$T/push.json" "$B/v1/webhooks/github"
	python3 -c "import json; print(json.load(open('$T/body'))['job'])"
}
settle() {
	i=0
	while [ "$(sql "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")" != 0 ]; do
		i=$((i + 1)); [ $i -gt 900 ] && { fail "jobs did not settle"; return; }; sleep 0.1
	done
}
short() { echo "$1" | cut -c1-12; }

# --- a push: revision 1, published to the target by itself
push d-1 "$C1" >/dev/null
settle
[ "$(sql "SELECT state || ' ' || coalesce(error, '') FROM jobs WHERE kind = 'catalog.publish'")" = "succeeded " ] && pass ||
	fail "publish job: $(sql "SELECT state, error FROM jobs WHERE kind = 'catalog.publish'") $(tail -5 "$T/serve.log")"
curl -s "$B/v1/catalogs/plain/images" >"$T/list.json"
D1=$(python3 -c "import json; i=json.load(open('$T/list.json'))['items']; print(i[0]['digest'] if len(i)==1 else '')")
[ -n "$D1" ] && pass || fail "images of the catalog: $(cat "$T/list.json")"
[ "$(python3 -c "import json; i=json.load(open('$T/list.json'))['items'][0]; print(i['revision'], i['repository'], sorted(i['tags']), i['platforms'])")" = "1 $REG/org/plain-catalog ['$(short "$C1")', 'latest', 'rev-1'] ['linux/amd64']" ] &&
	pass || fail "image record: $(cat "$T/list.json")"
# the registry holds exactly that, under every tag
for tag in latest rev-1 "$(short "$C1")"; do
	skopeo inspect --tls-verify=false --raw "docker://$REG/org/plain-catalog:$tag" >"$T/raw.json" 2>"$T/skopeo.err" &&
		[ "sha256:$(sha256sum <"$T/raw.json" | cut -d' ' -f1)" = "$D1" ] && pass || fail "tag $tag: $(cat "$T/skopeo.err")"
done
skopeo inspect --tls-verify=false "docker://$REG/org/plain-catalog:latest" >"$T/insp.json" 2>"$T/skopeo.err"
python3 -c "
import json; d=json.load(open('$T/insp.json')); l=d['Labels']
assert l['operators.operatorframework.io.index.configs.v1'] == '/configs', l
assert l['org.opencontainers.image.revision'] == '$C1' and l['io.fbcd.revision'] == 'plain@1', l
assert l['org.opencontainers.image.source'] == 'file://$O', l" && pass || fail "labels: $(head -c 600 "$T/insp.json") $(cat "$T/skopeo.err")"
# traceability: the digest, the commit, the bundle's history
[ "$(curl -s "$B/v1/images/$D1" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['digest'], [(i['catalog'], i['revision']) for i in d['images']])")" = "$D1 [('plain', 1)]" ] &&
	pass || fail "GET /v1/images/{digest}"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$B/v1/images/sha256:$(printf '0%.0s' $(seq 64))")" = 404 ] && pass || fail "unknown digest not 404"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$B/v1/images/nonsense")" = 400 ] && pass || fail "bad digest not 400"
[ "$(curl -s "$B/v1/repositories/plain/commits/$C1" | python3 -c "import json,sys; d=json.load(sys.stdin); print([(i['catalog'], i['digest']) for i in d['images']])")" = "[('plain', '$D1')]" ] &&
	pass || fail "the commit's images"
[ "$(curl -s "$B/v1/catalogs/plain/packages/example-operator/bundles/example-operator.v1.0.0/history" | python3 -c "import json,sys; d=json.load(sys.stdin); print([i['digest'] for i in d['images']])")" = "['$D1']" ] &&
	pass || fail "the bundle history's images"

# --- on demand: two platforms (an index), then the same again: same digest
AUTH="Authorization: Bearer $ADMIN"
c=$(curl -s -o "$T/body" -w '%{http_code}' -X POST -H "$AUTH" -H 'Content-Type: application/json' \
	-d "{\"image\": \"$REG/org/multi:v1\", \"platforms\": [\"linux/amd64\", \"linux/arm64\"], \"insecure\": true}" "$B/v1/catalogs/plain/images")
[ "$c" = 202 ] && pass || fail "POST images: $c $(cat "$T/body")"
settle
D2=$(sql "SELECT digest FROM images WHERE repository = '$REG/org/multi'")
skopeo inspect --tls-verify=false --raw "docker://$REG/org/multi:v1" >"$T/idx.json" 2>/dev/null
python3 -c "
import json; d=json.load(open('$T/idx.json'))
assert d['mediaType'] == 'application/vnd.oci.image.index.v1+json', d
assert sorted(m['platform']['architecture'] for m in d['manifests']) == ['amd64', 'arm64'], d" && [ "sha256:$(sha256sum <"$T/idx.json" | cut -d' ' -f1)" = "$D2" ] &&
	pass || fail "multi-arch index: $(head -c 400 "$T/idx.json")"
curl -s -o /dev/null -X POST -H "$AUTH" -H 'Content-Type: application/json' \
	-d "{\"image\": \"$REG/org/multi:v1-again\", \"revision\": 1, \"platforms\": [\"linux/amd64\", \"linux/arm64\"], \"insecure\": true}" "$B/v1/catalogs/plain/images"
settle
[ "$(sql "SELECT count(DISTINCT digest) || ' ' || count(*) FROM images WHERE repository = '$REG/org/multi'")" = "1 1" ] &&
	[ "$(sql "SELECT array_to_string(tags, ',') FROM images WHERE repository = '$REG/org/multi'")" = "v1,v1-again" ] &&
	pass || fail "republishing the revision changed the digest: $(sql "SELECT digest, tags FROM images WHERE repository = '$REG/org/multi'")"
# a runnable image: the first image as the base (its layer under ours, opm's entrypoint)
c=$(curl -s -o "$T/body" -w '%{http_code}' -X POST -H "$AUTH" -H 'Content-Type: application/json' \
	-d "{\"image\": \"$REG/org/runnable:v1\", \"base\": \"$REG/org/plain-catalog:latest\", \"insecure\": true}" "$B/v1/catalogs/plain/images")
[ "$c" = 202 ] && pass || fail "POST a runnable image: $c $(cat "$T/body")"
settle
skopeo inspect --tls-verify=false --config "docker://$REG/org/runnable:v1" >"$T/rcfg.json" 2>"$T/skopeo.err"
skopeo inspect --tls-verify=false "docker://$REG/org/runnable:v1" >"$T/rinsp.json" 2>>"$T/skopeo.err"
python3 -c "
import json; c=json.load(open('$T/rcfg.json'))['config']; i=json.load(open('$T/rinsp.json'))
assert c['Entrypoint'] == ['/bin/opm'] and c['Cmd'] == ['serve', '/configs', '--cache-dir=/tmp/cache'], c
assert len(i['Layers']) == 2, i['Layers']" && pass || fail "runnable image: $(sql "SELECT state, error FROM jobs WHERE key LIKE '%runnable%'") $(cat "$T/skopeo.err") $(head -c 300 "$T/rcfg.json")"

# bad requests: no token, a bad target, an unknown revision
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d '{"image": "x/y:z"}' "$B/v1/catalogs/plain/images")" = 401 ] && pass || fail "POST without a token"
c=$(curl -s -o "$T/body" -w '%{http_code}' -X POST -H "$AUTH" -d '{"image": "not a reference!"}' "$B/v1/catalogs/plain/images")
[ "$c" = 400 ] && pass || fail "bad image reference: $c $(cat "$T/body")"
c=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "$AUTH" -d "{\"image\": \"$REG/a/b:c\", \"revision\": 9}" "$B/v1/catalogs/plain/images")
[ "$c" = 404 ] && pass || fail "unknown revision: $c"

# a repository whose publish target is wrong is refused, naming the entry
c=$(curl -s -o "$T/body" -w '%{http_code}' -X POST -H "$AUTH" -H 'Content-Type: application/json' \
	-d '{"name": "other", "url": "file:///nowhere", "publish": [{"catalog": "x", "image": "r/a:b", "platforms": ["linux/nonsense"]}]}' "$B/v1/repositories")
[ "$c" = 400 ] && grep -q 'publish\[0\]' "$T/body" && pass || fail "bad publish target accepted: $c $(cat "$T/body")"

# --- a new commit: revision 2 published too (latest moves), revision 1's tags stay
sed -i 's/^description: .*/description: the second revision/' "$O/example-operator/catalog.yaml"
git -C "$O" commit -q -am two
C2=$(git -C "$O" rev-parse HEAD)
push d-2 "$C2" >/dev/null
settle
D3=$(sql "SELECT i.digest FROM images i WHERE i.revision = 2 AND repository = '$REG/org/plain-catalog'")
[ -n "$D3" ] && [ "$D3" != "$D1" ] && skopeo inspect --tls-verify=false --raw "docker://$REG/org/plain-catalog:latest" | sha256sum | grep -q "$(echo "$D3" | cut -c8-)" &&
	skopeo inspect --tls-verify=false --raw "docker://$REG/org/plain-catalog:rev-1" | sha256sum | grep -q "$(echo "$D1" | cut -c8-)" &&
	pass || fail "second publish: $(sql "SELECT revision, digest, tags FROM images")"
# .fbcd.yaml targets: lay-v1 is published, lay-v2 (no target) is not
push d-3 "$(git -C "$L" rev-parse HEAD)" org/layout >/dev/null
settle
[ "$(sql "SELECT string_agg(c.name || ' ' || i.repository, ',') FROM images i JOIN catalogs c ON c.id = i.catalog_id WHERE c.name LIKE 'lay-%'")" = "lay-v1 $REG/org/lay" ] &&
	pass || fail ".fbcd.yaml publish targets: $(sql "SELECT c.name, i.repository FROM images i JOIN catalogs c ON c.id = i.catalog_id") $(sql "SELECT kind, state, error FROM jobs WHERE repository = 'layout'")"

# a registry that is down: the job fails with the reason, nothing recorded
kill "$REG_PID" && wait "$REG_PID" 2>/dev/null; REG_PID=
curl -s -o /dev/null -X POST -H "$AUTH" -d "{\"image\": \"$REG/org/down:x\", \"insecure\": true}" "$B/v1/catalogs/plain/images"
i=0
until [ "$(sql "SELECT state FROM jobs WHERE key LIKE 'publish:plain:2:%down%'")" = failed ]; do
	i=$((i + 1)); [ $i -gt 1200 ] && break; sleep 0.1
done
[ "$(sql "SELECT count(*) FROM images WHERE repository LIKE '%/org/down'")" = 0 ] && sql "SELECT error FROM jobs WHERE key LIKE 'publish:plain:2:%down%'" | grep -q . &&
	pass || fail "publish to a registry that is down: $(sql "SELECT state, attempts, error FROM jobs WHERE key LIKE '%down%'")"
[ -z "$(ls -A "$T/data/tmp" 2>/dev/null | grep publish)" ] && pass || fail "build directories left in $T/data/tmp"
stop_clean "$SERVE_PID" "$T/serve.log"; SERVE_PID=
finish
