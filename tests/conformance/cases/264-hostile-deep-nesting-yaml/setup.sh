# run in a copy of catalog/ by run.sh (git cannot hold these)
set -e
python3 -c 'import sys; sys.stdout.write("schema: x\nd: " + "[" * 20000 + "]" * 20000 + "\n")' > deep.yaml
