# run in a copy of catalog/ by run.sh (git cannot hold these)
set -e
python3 -c 'import json; print(json.dumps({"schema": "olm.package", "name": "foo", "defaultChannel": "stable", "description": "x" * 3000000}))' > pkg.json
