#!/bin/sh
# Conformance corpus for `fbcd validate` (see README.md).
#   run.sh FBCD [--filter SUBSTR] [--keep] [-v]
exec python3 "$(dirname "$0")/run.py" "$@"
