#!/bin/sh
# fbcd image build/push/pull/inspect against real registries (Debian's
# docker-registry, distribution v2.8) started here on loopback ports: plain,
# htpasswd basic auth, behind this test's own token server (bearer
# challenge), and TLS from a test CA. Results are checked with tools fbcd
# did not write: skopeo (inspect --raw, copy) and umoci (unpack), then fbcd
# validate / render on the unpacked /configs. A proxy fails the Nth request
# of a push (500, dropped connection) for every N: the tag must then be
# absent or name the complete image.
# usage: image_registry.sh FBCD CATALOG
FBCD=$1
CATALOG=$2
TOOLS=$(dirname "$0")/registry_tools.py
. "$(dirname "$0")/lib.sh"

[ -d "$CATALOG" ] || skip "catalog $CATALOG not found"
for t in docker-registry skopeo umoci openssl htpasswd; do
	command -v "$t" >/dev/null 2>&1 || skip "$t not installed (scripts/install-deps.sh)"
done

PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

port() { python3 "$TOOLS" free-port; }
# wait_port PORT: until something listens there
wait_port() {
	i=0
	until curl -s -o /dev/null "http://127.0.0.1:$1/"; do
		i=$((i + 1))
		[ $i -gt 100 ] && { fail "nothing listens on $1"; return 1; }
		sleep 0.1
	done
}

# start_registry NAME PORT [AUTH_AND_TLS_YAML]: a registry with its own storage
# and access log ($T/NAME.log); waits until /v2/ answers.
start_registry() {
	name=$1 p=$2 extra=${3:-}
	mkdir -p "$T/$name"
	cat >"$T/$name/config.yml" <<EOF
version: 0.1
log:
  level: info
  accesslog:
    disabled: false
storage:
  filesystem:
    rootdirectory: $T/$name/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$p
$extra
EOF
	docker-registry serve "$T/$name/config.yml" >"$T/$name.log" 2>&1 &
	PIDS="$PIDS $!"
	i=0
	until curl -sk -o /dev/null "http://127.0.0.1:$p/v2/" || curl -sk -o /dev/null "https://127.0.0.1:$p/v2/"; do
		i=$((i + 1))
		[ $i -gt 100 ] && { fail "registry $name did not start"; sed -n 1,20p "$T/$name.log"; finish; exit 1; }
		sleep 0.1
	done
}

PLATS="--platform linux/amd64 --platform linux/arm64 --platform linux/ppc64le --platform linux/s390x"

# ---- build: reproducible, in two directories from two copies of the catalog
cp -r "$CATALOG" "$T/checkout2"
run image build --catalog "$CATALOG" $PLATS --output "oci:$T/img" --source https://example.com/cat \
	--commit 0123abc --revision-label community@7 --label team=ops
expect_rc 0 "image build (4 platforms)"
DIGEST=$(cat "$T/out")
(cd "$T" && "$FBCD" image build --catalog checkout2 $PLATS --output oci:img2 --source https://example.com/cat \
	--commit 0123abc --revision-label community@7 --label team=ops >"$T/out2" 2>"$T/err2")
if [ "$(cat "$T/out2")" = "$DIGEST" ] && diff -r "$T/img" "$T/img2" >/dev/null; then pass; else fail "second build differs: $(cat "$T/out2") vs $DIGEST"; fi
# the layer is compressed on every core: on one core the bytes are the same
if command -v taskset >/dev/null && [ "$(nproc)" -gt 1 ]; then
	taskset -c 0 "$FBCD" image build --catalog "$CATALOG" $PLATS --output "oci:$T/img1cpu" --source https://example.com/cat \
		--commit 0123abc --revision-label community@7 --label team=ops >"$T/out1cpu" 2>/dev/null
	if [ "$(cat "$T/out1cpu")" = "$DIGEST" ] && diff -r "$T/img" "$T/img1cpu" >/dev/null; then pass; else fail "a one-core build differs: $(cat "$T/out1cpu") vs $DIGEST"; fi
	for f in "$T"/img/blobs/sha256/*; do
		if [ "$(head -c 2 "$f" | od -An -tx1 | tr -d ' ')" = 1f8b ]; then
			gzip -t <"$f" && pass || fail "the layer is not valid gzip"
		fi
	done
fi
SOURCE_DATE_EPOCH=1700000000 "$FBCD" image build --catalog "$CATALOG" $PLATS --output "oci:$T/img3" \
	--source https://example.com/cat --commit 0123abc --revision-label community@7 --label team=ops >"$T/out3" 2>/dev/null
if [ -s "$T/out3" ] && [ "$(cat "$T/out3")" != "$DIGEST" ]; then pass; else fail "SOURCE_DATE_EPOCH did not change the digest"; fi
run image inspect "oci:$T/img"
expect_rc 0 "inspect layout"
python3 - "$T/out" "$CATALOG" <<'PY' && pass || fail "inspect of the layout"
import json, os, sys
r = json.load(open(sys.argv[1]))
plats = sorted(m["platform"] for m in r["manifests"])
assert plats == ["linux/amd64", "linux/arm64", "linux/ppc64le", "linux/s390x"], plats
pk = sorted(d for d in os.listdir(sys.argv[2]) if os.path.isdir(os.path.join(sys.argv[2], d)))
for m in r["manifests"]:
    assert m["labels"]["operators.operatorframework.io.index.configs.v1"] == "/configs"
    assert m["labels"]["io.fbcd.revision"] == "community@7"
    assert m["labels"]["team"] == "ops"
    assert len(m["packages"]) == len(pk), (len(m["packages"]), len(pk))
assert len({m["layers"][0]["digest"] for m in r["manifests"]}) == 1, "one shared layer"
PY
run image build --catalog "$CATALOG" --single-manifest --output "oci:$T/single"
expect_rc 0 "single-manifest build"
if grep -q '"application/vnd.oci.image.manifest.v1+json"' "$T/single/index.json"; then pass; else fail "single manifest layout"; fi

# ---- bad input: each a clear message and exit 2
run image build --catalog "$CATALOG" --platform linux/sparc99 --output "oci:$T/bad"
expect_rc 2 "unknown platform"
expect_grep "unknown platform architecture" "$T/err" "unknown platform message"
run image push "oci:$T/img" "Bad//Ref:x" --insecure
expect_rc 2 "malformed reference"
expect_grep "reference" "$T/err" "malformed reference message"
run image push "oci:$T/img" "127.0.0.1:1/x:y" --tag "-bad" --insecure
expect_rc 2 "invalid tag"
mkdir -p "$T/invalid" && printf '{"schema":"olm.channel","name":"c","package":"nope","entries":[]}\n' >"$T/invalid/c.json"
run image build --catalog "$T/invalid" --output "oci:$T/bad"
expect_rc 1 "invalid catalog"
for mode in html mismatch huge; do
	FP=$(port)
	python3 "$TOOLS" fake "$FP" $mode &
	PIDS="$PIDS $!"
	wait_port "$FP"
	run image pull "127.0.0.1:$FP/x/y:z" --insecure --output "oci:$T/pull-$mode" --retries 0
	expect_rc 2 "pull from a registry answering $mode"
	case $mode in
	html) expect_grep "HTML" "$T/err" "html message" ;;
	mismatch) expect_grep "digest mismatch" "$T/err" "mismatch message" ;;
	huge) expect_grep "larger than" "$T/err" "oversized manifest message" ;;
	esac
	if [ $mode = html ]; then
		run image push "oci:$T/img" "127.0.0.1:$FP/x/y:z" --insecure --retries 0
		expect_rc 2 "push to a registry answering HTML"
		expect_grep "HTML" "$T/err" "html push message"
	fi
done

# ---- plain registry
P=$(port)
start_registry plain "$P"
R=127.0.0.1:$P
run image push "oci:$T/img" "$R/cat/ops:v1" --insecure --tag latest
expect_rc 0 "push (plain)"
expect_grep "$DIGEST" "$T/out" "push prints the digest"
skopeo inspect --tls-verify=false --raw "docker://$R/cat/ops:v1" >"$T/raw.json" 2>"$T/err" || fail "skopeo inspect --raw"
python3 - "$T/raw.json" "$DIGEST" <<'PY' && pass || fail "skopeo inspect --raw: not the 4-platform index"
import hashlib, json, sys
raw = open(sys.argv[1], "rb").read()
assert "sha256:" + hashlib.sha256(raw).hexdigest() == sys.argv[2]
idx = json.loads(raw)
assert idx["mediaType"] == "application/vnd.oci.image.index.v1+json"
assert sorted(m["platform"]["architecture"] for m in idx["manifests"]) == ["amd64", "arm64", "ppc64le", "s390x"]
PY
"$FBCD" render "$CATALOG" >"$T/render-src"
for arch in amd64 arm64 ppc64le s390x; do
	rm -rf "$T/u"
	if skopeo copy -q --src-tls-verify=false --override-arch $arch "docker://$R/cat/ops:v1" "oci:$T/sk:$arch" >/dev/null 2>"$T/err" &&
		umoci unpack --rootless --image "$T/sk:$arch" "$T/u" >/dev/null 2>>"$T/err"; then
		pass
	else
		fail "skopeo copy / umoci unpack $arch"
		sed -n 1,5p "$T/err"
		continue
	fi
	run validate "$T/u/rootfs/configs"
	expect_rc 0 "unpacked /configs validates ($arch)"
	"$FBCD" render "$T/u/rootfs/configs" >"$T/render-img"
	if cmp -s "$T/render-src" "$T/render-img"; then pass; else fail "$arch: /configs renders differently"; fi
	skopeo inspect --tls-verify=false --override-arch $arch "docker://$R/cat/ops:v1" >"$T/insp.json" 2>/dev/null
	python3 - "$T/insp.json" $arch <<'PY' && pass || fail "$arch: label or architecture"
import json, sys
i = json.load(open(sys.argv[1]))
assert i["Labels"]["operators.operatorframework.io.index.configs.v1"] == "/configs", i["Labels"]
assert i["Architecture"] == sys.argv[2]
PY
done
# pull back with fbcd, all platforms, then one
run image pull "$R/cat/ops:v1" --insecure --output "oci:$T/pulled"
expect_rc 0 "pull"
if [ "$(cat "$T/out")" = "$DIGEST" ]; then pass; else fail "pull digest $(cat "$T/out")"; fi
run image pull "$R/cat/ops@$DIGEST" --insecure --platform linux/arm64 --output "oci:$T/pulled-arm"
expect_rc 0 "pull one platform by digest"
run image inspect "oci:$T/pulled-arm"
expect_grep '"platform": "linux/arm64"' "$T/out" "pulled platform"
run image inspect "$R/cat/ops:v1" --insecure
expect_rc 0 "inspect from the registry"
expect_grep '"linux/s390x"' "$T/out" "inspect lists s390x"

# re-push: nothing uploaded twice (the registry's access log)
before=$(grep -c 'PUT /v2/cat/ops/blobs/uploads' "$T/plain.log")
run image push "oci:$T/img" "$R/cat/ops:v1" --insecure
expect_rc 0 "re-push"
after=$(grep -c 'PUT /v2/cat/ops/blobs/uploads' "$T/plain.log")
if [ "$before" = "$after" ] && [ "$before" -gt 0 ]; then pass; else fail "re-push uploaded blobs again ($before -> $after)"; fi
expect_grep "0 blobs uploaded" "$T/err" "re-push stats"
# second repository: mounted, not uploaded
run image push "oci:$T/img" "$R/mirror/ops:v1" --insecure --mount-from cat/ops
expect_rc 0 "push with mount"
if grep -q 'POST /v2/mirror/ops/blobs/uploads/?mount=' "$T/plain.log" && ! grep -q 'PUT /v2/mirror/ops/blobs/uploads' "$T/plain.log"; then pass; else fail "second repository was not mounted"; fi
# chunked upload of the layer (small chunks)
run image push "oci:$T/img" "$R/chunked/ops:v1" --insecure --chunk-size 65536
expect_rc 0 "chunked push"
if grep -q 'PATCH /v2/chunked/ops/blobs/uploads' "$T/plain.log"; then pass; else fail "no PATCH in the chunked push"; fi
python3 "$TOOLS" complete "$R" chunked/ops v1 && pass || fail "chunked image incomplete"

# ---- fault injection: a proxy fails the Nth request, for every N
PP=$(port)
python3 "$TOOLS" proxy "$PP" "$P" "$T/proxy.log" &
PIDS="$PIDS $!"
wait_port "$PP"
curl -s "http://127.0.0.1:$PP/__fault?n=0" >/dev/null
: >"$T/proxy.log"
"$FBCD" image push "oci:$T/img" "127.0.0.1:$PP/fault/clean:v1" --insecure >/dev/null 2>&1 || fail "clean push through the proxy"
TOTAL=$(wc -l <"$T/proxy.log")
[ "$TOTAL" -gt 10 ] && pass || fail "a push makes only $TOTAL requests?"
bad=0
for mode in 500 drop; do
	n=1
	while [ $n -le "$TOTAL" ]; do
		curl -s "http://127.0.0.1:$PP/__fault?n=$n&mode=$mode" >/dev/null
		"$FBCD" image push "oci:$T/img" "127.0.0.1:$PP/fault/m$mode-$n:v1" --insecure --retries 0 >/dev/null 2>"$T/ferr"
		rc=$?
		curl -s "http://127.0.0.1:$PP/__fault?n=0" >/dev/null
		if ! python3 "$TOOLS" complete "$R" "fault/m$mode-$n" v1 >"$T/fout"; then
			fail "fault $mode at request $n: the tag names an incomplete image: $(cat "$T/fout")"
			bad=1
		fi
		if [ $rc -ne 0 ] && [ $rc -ne 2 ]; then fail "fault $mode at $n: exit $rc"; bad=1; fi
		if [ $rc -eq 2 ] && ! [ -s "$T/ferr" ]; then fail "fault $mode at $n: no message"; bad=1; fi
		n=$((n + 1))
	done
done
[ $bad -eq 0 ] && pass
# with retries (the default) an injected 500 or drop is absorbed: complete image
for n in 1 3 7; do
	curl -s "http://127.0.0.1:$PP/__fault?n=$n&mode=500" >/dev/null
	run image push "oci:$T/img" "127.0.0.1:$PP/fault/retry-$n:v1" --insecure
	expect_rc 0 "push with a 500 at request $n, retried"
done
# a connection dropped mid-blob (chunked upload): before a chunk reaches the
# registry (drop), or after it was stored with the answer lost (lost) — the
# blob is restarted and the push completes with a complete image
curl -s "http://127.0.0.1:$PP/__fault?n=0" >/dev/null
: >"$T/proxy.log"
"$FBCD" image push "oci:$T/img" "127.0.0.1:$PP/fault/chunk-clean:v1" --insecure --chunk-size 65536 >/dev/null 2>&1 ||
	fail "clean chunked push through the proxy"
PATCHES=$(grep -n '^PATCH ' "$T/proxy.log" | cut -d: -f1 | tr '\n' ' ')
[ "$(echo $PATCHES | wc -w)" -ge 3 ] && pass || fail "the chunked push made too few PATCH requests: $PATCHES"
bad=0
for mode in drop lost; do
	for n in $PATCHES; do
		curl -s "http://127.0.0.1:$PP/__fault?n=$n&mode=$mode" >/dev/null
		"$FBCD" image push "oci:$T/img" "127.0.0.1:$PP/fault/chunk-$mode-$n:v1" --insecure --chunk-size 65536 >/dev/null 2>"$T/ferr"
		rc=$?
		curl -s "http://127.0.0.1:$PP/__fault?n=0" >/dev/null
		[ $rc -eq 0 ] || { fail "chunk $mode at request $n: exit $rc: $(head -3 "$T/ferr")"; bad=1; }
		python3 "$TOOLS" complete "$R" "fault/chunk-$mode-$n" v1 >"$T/fout" ||
			{ fail "chunk $mode at request $n: incomplete image: $(cat "$T/fout")"; bad=1; }
	done
done
[ $bad -eq 0 ] && pass

# ---- htpasswd basic auth
BP=$(port)
htpasswd -Bbn alice s3cret >"$T/htpasswd"
start_registry basic "$BP" "auth:
  htpasswd:
    realm: fbcd-test
    path: $T/htpasswd"
run image push "oci:$T/img" "127.0.0.1:$BP/cat/ops:v1" --insecure
expect_rc 2 "basic auth without credentials"
expect_grep "user and password" "$T/err" "basic auth message"
printf 'alice:s3cret\n' >"$T/creds"
run image push "oci:$T/img" "127.0.0.1:$BP/cat/ops:v1" --insecure --creds-file "$T/creds" --request-log "$T/basic-req.log"
expect_rc 0 "basic auth with --creds-file"
if grep -q s3cret "$T/basic-req.log" "$T/err" "$T/out"; then fail "the password was logged"; else pass; fi
mkdir -p "$T/dockercfg"
printf '{"auths":{"127.0.0.1:%s":{"auth":"%s"}}}\n' "$BP" "$(printf alice:s3cret | base64)" >"$T/dockercfg/config.json"
DOCKER_CONFIG="$T/dockercfg" "$FBCD" image pull "127.0.0.1:$BP/cat/ops:v1" --insecure --output "oci:$T/basic-pull" >"$T/out" 2>"$T/err" && pass || fail "pull with docker config.json auths: $(cat "$T/err")"
# a credential helper (credsStore)
mkdir -p "$T/bin"
cat >"$T/bin/docker-credential-fbcdtest" <<'EOF'
#!/bin/sh
read server
echo "{\"ServerURL\":\"$server\",\"Username\":\"alice\",\"Secret\":\"s3cret\"}"
EOF
chmod +x "$T/bin/docker-credential-fbcdtest"
printf '{"credsStore":"fbcdtest"}\n' >"$T/dockercfg/config.json"
PATH="$T/bin:$PATH" DOCKER_CONFIG="$T/dockercfg" "$FBCD" image inspect "127.0.0.1:$BP/cat/ops:v1" --insecure >"$T/out" 2>"$T/err" && pass || fail "credsStore helper: $(cat "$T/err")"
skopeo inspect --tls-verify=false --creds alice:s3cret --raw "docker://127.0.0.1:$BP/cat/ops:v1" >/dev/null 2>&1 && pass || fail "skopeo reads the basic-auth push"

# ---- bearer token server
TP=$(port)
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/tok.key" -out "$T/tok.crt" -days 2 -subj /CN=fbcd-token >/dev/null 2>&1
python3 "$TOOLS" token-server "$TP" "$T/tok.key" "$T/tok.crt" alice:s3cret "$T/token.log" &
PIDS="$PIDS $!"
wait_port "$TP"
KP=$(port)
start_registry bearer "$KP" "auth:
  token:
    realm: http://127.0.0.1:$TP/token
    service: fbcd-registry
    issuer: fbcd-test
    rootcertbundle: $T/tok.crt"
run image push "oci:$T/img" "127.0.0.1:$KP/cat/ops:v1" --insecure --creds-file "$T/creds"
expect_rc 0 "push through the bearer challenge"
ntok=$(wc -l <"$T/token.log")
if [ "$ntok" -ge 1 ] && [ "$ntok" -le 3 ]; then pass; else fail "$ntok token requests for one push (tokens not cached?)"; fi
expect_grep '"repository:cat/ops:pull,push"' "$T/token.log" "token scope"
run image push "oci:$T/img" "127.0.0.1:$KP/cat/ops:anon" --insecure
expect_rc 2 "anonymous push (a new tag) to the bearer registry is refused"
expect_grep "401\|UNAUTHORIZED\|DENIED\|refused" "$T/err" "anonymous push message"
run image pull "127.0.0.1:$KP/cat/ops:v1" --insecure --output "oci:$T/bearer-pull"
expect_rc 0 "anonymous pull through the bearer challenge"

# ---- TLS from a test CA
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/ca.key" -out "$T/ca.crt" -days 2 -subj /CN=fbcd-test-ca >/dev/null 2>&1
openssl req -newkey rsa:2048 -nodes -keyout "$T/srv.key" -out "$T/srv.csr" -subj /CN=127.0.0.1 >/dev/null 2>&1
printf 'subjectAltName=IP:127.0.0.1\n' >"$T/san.ext"
openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.crt" -CAkey "$T/ca.key" -CAcreateserial -out "$T/srv.crt" -days 2 -extfile "$T/san.ext" >/dev/null 2>&1
SP=$(port)
start_registry tls "$SP" "  tls:
    certificate: $T/srv.crt
    key: $T/srv.key"
run image push "oci:$T/img" "127.0.0.1:$SP/cat/ops:v1" --retries 0
expect_rc 2 "TLS with an unknown CA is refused"
expect_grep "TLS" "$T/err" "TLS message"
run image push "oci:$T/img" "127.0.0.1:$SP/cat/ops:v1" --ca-file "$T/ca.crt"
expect_rc 0 "push over TLS with --ca-file"
skopeo inspect --cert-dir /nonexistent --tls-verify=false --raw "docker://127.0.0.1:$SP/cat/ops:v1" >/dev/null 2>&1 && pass || fail "skopeo reads the TLS push"

# ---- runnable image on a base (umoci-made base layout, linux/amd64 only)
mkdir -p "$T/baseroot/bin"
umoci init --layout "$T/base" >/dev/null 2>&1 && umoci new --image "$T/base:latest" >/dev/null 2>&1 &&
	umoci config --image "$T/base:latest" --os linux --architecture amd64 >/dev/null 2>&1 &&
	umoci unpack --rootless --image "$T/base:latest" "$T/bb" >/dev/null 2>&1 &&
	printf '#!/bin/sh\necho opm\n' >"$T/bb/rootfs/opm-marker" &&
	umoci repack --image "$T/base:latest" "$T/bb" >/dev/null 2>&1 || fail "making a base image with umoci"
run image build --catalog "$CATALOG" --base "oci:$T/base:latest" --output "oci:$T/runnable"
expect_rc 0 "build on a base"
run image inspect "oci:$T/runnable"
python3 - "$T/out" <<'PY' && pass || fail "runnable image: entrypoint, cmd, layers"
import json, sys
m = json.load(open(sys.argv[1]))["manifests"][0]
assert m["entrypoint"] == ["/bin/opm"], m.get("entrypoint")
assert m["cmd"] == ["serve", "/configs", "--cache-dir=/tmp/cache"], m.get("cmd")
assert len(m["layers"]) >= 2
PY
run image build --catalog "$CATALOG" --base "oci:$T/base:latest" --platform linux/arm64 --output "oci:$T/runnable2"
expect_rc 2 "base without the platform"
expect_grep "base image" "$T/err" "base platform message"
run image push "oci:$T/runnable" "$R/cat/runnable:v1" --insecure
expect_rc 0 "push the runnable image"
run image build --catalog "$CATALOG" --base "$R/cat/runnable:v1" --insecure --output "oci:$T/runnable3"
expect_rc 0 "build on a pulled base"

finish
