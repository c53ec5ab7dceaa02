# run in a copy of catalog/ by run.sh (git cannot hold these)
set -e
mkfifo pipe.json
