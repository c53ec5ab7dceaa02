#!/bin/sh
# Lint openapi/openapi.yaml with Redocly's OpenAPI linter (from npm), and
# check that the routes `fbcd serve` registers are exactly the document's
# operations.
#   openapi_lint.sh FBCD OPENAPI_YAML CACHE_DIR
# The linter is installed once into CACHE_DIR with npm; skips (77) when npm
# is unavailable or the registry cannot be reached. Warnings count as failures.
FBCD=$1 DOC=$2 CACHE=$3
. "$(dirname "$0")/lib.sh"
REDOCLY_VERSION=2.77.0

# Route check first: it needs no network.
"$FBCD" serve --print-routes >"$T/routes" && pass || fail "fbcd serve --print-routes"
"$FBCD" serve --print-openapi >"$T/doc.json" && pass || fail "fbcd serve --print-openapi"
python3 - "$T/doc.json" "$T/routes" <<'PY' && pass || fail "routes and OpenAPI operations differ"
import json, sys
doc = json.load(open(sys.argv[1]))
documented = {(m.upper(), p, op["operationId"]) for p, ops in doc["paths"].items()
              for m, op in ops.items() if m != "parameters"}
served = {tuple(l.split()[:3]) for l in open(sys.argv[2]) if l.strip()}
for x in sorted(documented - served): print("    documented, not served:", *x)
for x in sorted(served - documented): print("    served, not documented:", *x)
sys.exit(0 if documented == served else 1)
PY

command -v npm >/dev/null 2>&1 || { finish; echo "SKIP: npm is not installed"; exit 77; }
BIN=$CACHE/node_modules/.bin/redocly
if [ ! -x "$BIN" ]; then
	mkdir -p "$CACHE"
	if ! npm install --silent --no-audit --no-fund --prefix "$CACHE" "@redocly/cli@$REDOCLY_VERSION" >"$T/npm.log" 2>&1; then
		sed -n 1,5p "$T/npm.log"
		finish
		echo "SKIP: cannot install @redocly/cli from npm"
		exit 77
	fi
fi
# /ui/ (the dashboard) ends with a slash on purpose: its pages link their
# files relatively (app.js, app.css), as a directory index does.
"$BIN" lint --format stylish --skip-rule no-path-trailing-slash "$DOC" >"$T/lint.out" 2>&1
RC=$?
if [ "$RC" -eq 0 ] && ! grep -qiE "You have [0-9]+ warning" "$T/lint.out"; then
	pass
else
	fail "redocly lint (exit $RC)"
	sed -n 1,40p "$T/lint.out" | sed 's/^/    /'
fi
finish
