#!/bin/sh
# charts.sh — the pictures of examples/README.md, from three runs of sim.
#
#   examples/charts.sh [OUT_DIR]     (default examples/images)
#
# 1. the headline layout, Llama-3-70B on 8 DGX H100 (64 GPUs): Gantt + memory
# 2. the same layout, 1F1B vs interleaved (v = 2), 32 micro-batches: two Gantts
# 3. an out-of-memory case: 4-sequence micro-batches without fused attention
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/examples/images}
sim=sim
command -v sim >/dev/null 2>&1 || sim="$here/build/sim/sim"
mkdir -p "$out"
"$sim" --topology dgx8x4.xml --tp 8 --pp 4 --dp 2 \
  --gantt "$out/headline-gantt.png" --memory-chart "$out/headline-memory.png" >/dev/null
"$sim" --topology dgx8x4.xml --tp 8 --pp 4 --dp 2 --global-batch 64 --schedule 1f1b \
  --gantt "$out/1f1b-gantt.png" >/dev/null
"$sim" --topology dgx8x4.xml --tp 8 --pp 4 --dp 2 --global-batch 64 --schedule interleaved \
  --virtual-stages 2 --gantt "$out/interleaved-gantt.png" >/dev/null
"$sim" --topology dgx8x4.xml --tp 8 --pp 4 --dp 2 --global-batch 64 --micro-batch 4 \
  --no-flash-attention --no-sequence-parallel --zero 0 --memory-chart "$out/oom-memory.png" >/dev/null ||
  [ $? -eq 1 ] # exit 1: the plan does not fit, as this example means it not to
echo "wrote $out/headline-gantt.png headline-memory.png 1f1b-gantt.png interleaved-gantt.png oom-memory.png"
