#!/bin/sh
# Regenerates the golden files of tests/golden/ (the text of the headline,
# compare and sweep commands, which tests/test-golden.py compares byte for
# byte) with the given sim binary.  Run it after an intended change to a
# report or a number, then review and commit the diff:
#
#     tools/update-golden.sh build/sim/sim
#     git diff tests/golden
#
# The commands themselves are listed once, in tests/test-golden.py (GOLDEN).
set -eu
if [ $# -ne 1 ]; then
  echo "usage: $0 SIM   (e.g. $0 build/sim/sim)" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
exec python3 -B "$root/tests/test-golden.py" --update "$1" "$root"
