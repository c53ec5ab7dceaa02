#!/usr/bin/env bash
# The README's "run" command: install, build, and run fbcd's main job on an
# embedded default. Until `fbcd serve` is complete this validates the bundled
# example catalog and the real catalog beside the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build-release --buildtype=release
fbcd=build-release/api/fbcd
echo "== fbcd validate examples/catalog"
"$fbcd" validate examples/catalog && echo "valid"
shared=../shared/data/community-operators/catalog-v4.20
if [ -d "$shared" ]; then
	echo "== fbcd validate $shared"
	"$fbcd" validate "$shared" && echo "valid"
fi
