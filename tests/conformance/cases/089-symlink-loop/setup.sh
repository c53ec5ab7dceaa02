# run in a copy of catalog/ by run.sh (git cannot hold these)
set -e
mkdir d && ln -s .. d/up && ln -s loop2 loop1 && ln -s loop1 loop2
