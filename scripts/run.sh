#!/usr/bin/env bash
# The README's "run" command: install dependencies, build, and run `fbcd serve`
# on its embedded default (a private PostgreSQL cluster under the data dir).
# The bundled example catalog is pushed as catalog "example" once the service
# is ready. Stop with Ctrl-C (the service shuts down cleanly and stops its
# PostgreSQL). Settings: FBCD_LISTEN (127.0.0.1:8080), FBCD_DATA_DIR (.fbcd),
# FBCD_ADMIN_TOKEN (generated when unset and printed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build-release --buildtype=release > /tmp/fbcd-build-release.log 2>&1 || { tail -40 /tmp/fbcd-build-release.log; exit 1; }
fbcd=build-release/api/fbcd
listen=${FBCD_LISTEN:-127.0.0.1:8080}
data=${FBCD_DATA_DIR:-.fbcd}
if [ -z "${FBCD_ADMIN_TOKEN:-}" ]; then
	FBCD_ADMIN_TOKEN=fbcd_$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
fi
export FBCD_ADMIN_TOKEN

"$fbcd" validate examples/catalog
"$fbcd" serve --listen "$listen" --data-dir "$data" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null; wait "$pid"' INT TERM
for _ in $(seq 1 120); do
	curl -fsS "http://$listen/readyz" >/dev/null 2>&1 && break
	kill -0 "$pid" 2>/dev/null || { wait "$pid"; exit 1; }
	sleep 0.5
done
auth=(-H "Authorization: Bearer $FBCD_ADMIN_TOKEN")
curl -fsS "${auth[@]}" -H 'Content-Type: application/json' \
	-d '{"name": "example", "displayName": "Example catalog"}' \
	"http://$listen/v1/catalogs" >/dev/null 2>&1 || true
tar -C examples/catalog -czf - . | curl -fsS "${auth[@]}" -X PUT \
	-H 'Content-Type: application/gzip' --data-binary @- \
	"http://$listen/v1/catalogs/example/content" >/dev/null
cat <<INFO
fbcd is serving on http://$listen (data in $data)
  admin token:  $FBCD_ADMIN_TOKEN
  try:          curl http://$listen/v1/catalogs/example/packages
                curl http://$listen/openapi.json
INFO
wait "$pid"
