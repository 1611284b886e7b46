#!/bin/bash
# sweep-slurm.sh — a sim sweep split over a Slurm job array, then merged.
#
#   sbatch --array=1-16 examples/sweep-slurm.sh          # 16 shards, one task each
#   sim sweep --merge sweep-*.json                        # when all have finished
#
# Each task runs one shard (--shard I/N) of the same sweep on the cores it was
# given and writes its rows as JSON; --merge ranks the union.  Nothing here is
# specific to sim's own scheduling: Slurm runs the tasks, the files join them.
#SBATCH --job-name=sim-sweep
#SBATCH --cpus-per-task=8
#SBATCH --time=00:30:00
#SBATCH --output=sweep-%a.log
set -euo pipefail
N=${SLURM_ARRAY_TASK_COUNT:-16}
I=${SLURM_ARRAY_TASK_ID:?run me with sbatch --array=1-N}
sim sweep --topology dgx-h100.xml --model llama3-405b --scale \
  --threads "${SLURM_CPUS_PER_TASK:-8}" --shard "$I/$N" --quiet --json "sweep-$I.json"
