# run in a copy of catalog/ by run.sh (git cannot hold these)
set -e
ln -s real link && ln -s loop loop
