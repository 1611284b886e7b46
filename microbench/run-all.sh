#!/bin/sh
# run-all.sh — runs the three microbenchmarks on this machine, in under
# 8 minutes, and writes what `sim calibrate` and `sim validate` read.
#
#   microbench/run-all.sh [BUILD_DIR [OUT_DIR]]
#
# BUILD_DIR holds the programs gemm, hbm and collectives (default: the
# build/microbench beside this script's folder, i.e. ../build/microbench from
# microbench/); this script builds nothing.  OUT_DIR (default ./out) receives
#
#   gemm.csv          the 343-shape grid, bf16 (and fp8 where the GPU has it)
#   gemm-model.csv    the GEMMs of llama3-70b at tp 8 (`sim shapes`), bf16
#   hbm.csv           copy and triad, 64 MiB .. 4 GiB
#   collectives.csv   NCCL on all GPUs of the node, 8 B .. 8 GiB
#   *.log             each program's stderr (collectives.log: the nccl-tests
#                     style tables)
#
# Each program runs under `timeout`; the limits below add up to 7 minutes.
# A program cut short still leaves a valid CSV of the rows it finished.
# gemm --model runs `sim shapes`: sim on the PATH, $SIM, or BUILD_DIR/../sim/sim.
# MB_QUICK=1 runs a smoke test of about a minute (smaller sizes, fewer
# iterations).  Exit status: 0 when every program finished, 1 otherwise.
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build/microbench}
out=${2:-./out}

for p in gemm hbm collectives; do
  if [ ! -x "$build/$p" ]; then
    echo "run-all.sh: $build/$p not found; build with: meson setup build -Dmicrobench=enabled && ninja -C build" >&2
    exit 2
  fi
done
mkdir -p "$out" || exit 2

if [ -z "${SIM:-}" ] && ! command -v sim >/dev/null 2>&1 && [ -x "$build/../sim/sim" ]; then
  SIM=$(cd "$build/../sim" && pwd)/sim
  export SIM
fi

# seconds per program, and sizes; 120 + 60 + 60 + 180 = 420 s at most
if [ "${MB_QUICK:-0}" = 1 ]; then
  grid="--grid-max 4096 --warmup 3 --iters 10"
  model="--warmup 3 --iters 10"
  hbm="--max-bytes 1GiB --warmup 2 --iters 10"
  coll="--max-bytes 1GiB --warmup 2 --iters 10"
else
  grid="--warmup 5 --iters 30"
  model="--warmup 10 --iters 50"
  hbm="--min-bytes 64MiB --max-bytes 4GiB --warmup 5 --iters 20"
  coll="--min-bytes 8 --max-bytes 8GiB --warmup 5 --iters 20"
fi

failed=0
status() {
  # $1 name, $2 exit status
  case $2 in
    0) echo "run-all.sh: $1: done" >&2 ;;
    124) echo "run-all.sh: $1: stopped by its time limit; the CSV holds the rows finished" >&2; failed=1 ;;
    *) echo "run-all.sh: $1: exit status $2 (see $out/$1.log)" >&2; failed=1 ;;
  esac
}

start=$(date +%s)

echo "run-all.sh: gemm grid" >&2
# word splitting of $grid etc. is wanted
# shellcheck disable=SC2086
timeout -k 10 120 "$build/gemm" --grid --dtype bf16,fp8 $grid -o "$out/gemm.csv" 2>"$out/gemm.log"
rc=$?
if [ $rc = 2 ] && grep -q "fp8 needs compute capability" "$out/gemm.log"; then
  echo "run-all.sh: no fp8 on this GPU; gemm grid in bf16 only" >&2
  # shellcheck disable=SC2086
  timeout -k 10 120 "$build/gemm" --grid --dtype bf16 $grid -o "$out/gemm.csv" 2>"$out/gemm.log"
  rc=$?
fi
status gemm $rc

echo "run-all.sh: gemm llama3-70b tp 8" >&2
# shellcheck disable=SC2086
timeout -k 10 60 "$build/gemm" --model llama3-70b --tp 8 --dtype bf16 $model -o "$out/gemm-model.csv" \
  2>"$out/gemm-model.log"
status gemm-model $?

echo "run-all.sh: hbm" >&2
# shellcheck disable=SC2086
timeout -k 10 60 "$build/hbm" $hbm -o "$out/hbm.csv" 2>"$out/hbm.log"
status hbm $?

echo "run-all.sh: collectives" >&2
# shellcheck disable=SC2086
timeout -k 10 180 "$build/collectives" $coll -o "$out/collectives.csv" 2>"$out/collectives.log"
status collectives $?

# ---- summary: the best rate of each (kind, op, dtype), from the CSVs ----
echo
echo "microbench results in $out ($(($(date +%s) - start)) s)"
for f in gemm gemm-model hbm collectives; do
  csv="$out/$f.csv"
  [ -s "$csv" ] || { echo "  $f.csv: missing"; continue; }
  awk -F, -v name="$f.csv" '
    /^#/ && /gpu:/ { sub(/^# gpu: /, ""); gpu = $0; next }
    /^#/ || /^kind,/ || NF != 10 { next }
    {
      key = $1 " " $2 " " $3
      n[key]++
      if (!(key in best) || $10 + 0 > best[key] + 0) { best[key] = $10; at[key] = ($1 == "gemm") ? $4 "x" $5 "x" $6 : $7 " B" }
      if (!(key in order)) { order[key] = ++keys; names[keys] = key }
      if ($1 == "nccl") gpus[key] = $8
    }
    END {
      printf "  %s (%s): %d rows\n", name, gpu, NR_rows()
      for (i = 1; i <= keys; i++) {
        k = names[i]; split(k, p, " ")
        if (p[1] == "gemm") printf "    %-26s %4d shapes, best %7.1f TFLOP/s at %s\n", k, n[k], best[k] / 1e12, at[k]
        else if (p[1] == "hbm") printf "    %-26s %4d sizes,  best %7.1f GB/s at %s\n", k, n[k], best[k] / 1e9, at[k]
        else printf "    %-26s %4d sizes,  best busbw %7.1f GB/s at %s on %d GPUs\n", k, n[k], best[k] / 1e9, at[k], gpus[k]
      }
    }
    function NR_rows(   i, t) { t = 0; for (i in n) t += n[i]; return t }
  ' "$csv"
done
echo
echo "these CSVs feed sim calibrate and sim validate: see microbench/README.md"
exit $failed
