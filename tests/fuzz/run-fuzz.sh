#!/bin/bash
# Fuzz every target for a bounded time and keep what it finds.
#
#   tests/fuzz/run-fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Builds build-fuzz/ with clang, libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer (Debian: apt-get install clang
# libclang-rt-14-dev, or the version available), fuzzes each target starting
# from the kept corpus plus the project's own inputs (models, topologies,
# nccl-tests logs, CSVs), then merges the kept corpus with what was found
# into a minimal set that covers the same code, and prints executions and
# crashes per target.  Crashers are written to tests/fuzz/crashers/<target>;
# once fixed, move them to tests/fuzz/regressions/<target>, which every test
# run replays and no merge prunes.
set -u
cd "$(dirname "$0")/../.."
secs=${1:-60}
shift || true
targets=${*:-units topology bands model calibration nccl microbench json plan sweep merge layout config import}

if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
    -Db_lundef=false -Dbuildtype=debugoptimized >/dev/null || exit 1
fi
ninja -C build-fuzz >/dev/null || exit 1

seeds() {
  case $1 in
    units) echo tests/fuzz/seeds/units ;;
    topology) echo topologies tests/data ;;
    bands) echo tests/fuzz/seeds/bands ;;
    model) echo models ;;
    calibration) echo tests/fuzz/seeds/calibration ;;
    nccl) echo tests/validation/data/nccl-tests ;;
    microbench) echo tests/validation/data/h100-sxm tests/validation/data/a100-sxm tests/fuzz/seeds/microbench ;;
    json) echo tests/fuzz/seeds/json ;;
    plan) echo tests/fuzz/seeds/plan ;;
    sweep) echo tests/fuzz/seeds/merge tests/fuzz/seeds/json ;;
    merge) echo tests/fuzz/seeds/merge ;;
    layout) echo tests/fuzz/seeds/layout ;;
    config) echo tests/fuzz/seeds/config ;;
    import) echo tests/fuzz/seeds/import ;;
  esac
}
dict() {
  case $1 in
    topology|bands|model|calibration) echo -dict=tests/fuzz/xml.dict ;;
    plan) echo -dict=tests/fuzz/plan.dict ;;
  esac
}

printf '%-12s %12s %8s %8s\n' target executions crashes corpus
for t in $targets; do
  corpus=tests/fuzz/corpus/$t
  work=$(mktemp -d)
  mkdir -p "$corpus" tests/fuzz/crashers/$t
  # shellcheck disable=SC2046
  ./build-fuzz/tests/fuzz/fuzz-$t $(dict $t) -max_total_time="$secs" -timeout=10 \
    -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
    -artifact_prefix=tests/fuzz/crashers/$t/ "$work" "$corpus" $(seeds $t) \
    >"$work.log" 2>&1
  execs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$work.log")
  crashes=$(find tests/fuzz/crashers/$t -type f | wc -l)
  # keep a minimal corpus covering what the old corpus and the new finds cover
  min=$(mktemp -d)
  # shellcheck disable=SC2046
  ./build-fuzz/tests/fuzz/fuzz-$t -merge=1 "$min" "$corpus" "$work" $(seeds $t) \
    >/dev/null 2>&1
  if [ -n "$(ls -A "$min")" ]; then
    rm -f "$corpus"/*
    cp "$min"/* "$corpus"/
  fi
  printf '%-12s %12s %8s %8s\n' "$t" "${execs:-?}" "$crashes" "$(ls "$corpus" | wc -l)"
  [ "$crashes" -gt 0 ] && tail -n 30 "$work.log"
  rm -rf "$work" "$work.log" "$min"
done
