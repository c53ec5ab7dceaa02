# run in a copy of catalog/ by run.sh (git cannot hold these)
set -e
python3 -c 'import json; print(json.dumps({"schema": "x", ("k" * 100000): 1}))' > k.json
