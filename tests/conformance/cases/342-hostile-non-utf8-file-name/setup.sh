# run in a copy of catalog/ by run.sh (git cannot hold these)
set -e
printf '{broken' > "$(printf 'bad\377name.json')"
