#!/bin/sh
# sweep-parallel.sh — the same split on one machine (or several, with
# GNU parallel's --sshlogin), then merged:
#
#   examples/sweep-parallel.sh 8
#
set -eu
N=${1:-8}
seq 1 "$N" | parallel -j "$N" \
  sim sweep --topology dgx8x4.xml --model llama3-70b --threads 1 --shard {}/"$N" --quiet --json sweep-{}.json
sim sweep --merge $(seq -f 'sweep-%g.json' 1 "$N")
