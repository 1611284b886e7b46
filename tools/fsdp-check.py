#!/usr/bin/env python3
"""Predict the published PyTorch FSDP runs that no fit saw and print the error table.

usage: fsdp-check.py SIM [SOURCE_ROOT] [--tolerance WORST,MAE,BIAS] [--fp8-tolerance WORST,MAE,BIAS]
                     [--write | --check-band]

Reads SOURCE_ROOT/tests/validation/data/mosaic_h100_heldout.csv (MosaicML
llm-foundry's whole H100 BF16 and FP8 tables on 8-64 GPUs and its
large-scale BF16 table on 128-512, their source in the file's header) and
runs each row as tools/fit-efficiency.py runs the calibration rows
(simtools/calibration.py: --framework fsdp, ZeRO 3 or ZeRO 2 for
SHARD_GRAD_OP, the row's micro-batch, global batch, recomputation and
recipe_flags), with the Hopper files as shipped: their
constants were fitted on NeMo (Megatron) runs only, so these rows say how
far a --framework fsdp plan on Hopper can be trusted.

Prints each row's error and the summary, the BF16 and the FP8 rows (run
with --fp8 hybrid, as fidelity.py runs FP8 rows) apart, each by GPU count
with the drift of every scaling series (a model at three or more GPU
counts with the same sequence, micro-batch, table and recipe flags);
checks that every run (each trained) is predicted to fit; with
--tolerance (BF16) and --fp8-tolerance, that the largest |error|, the mean
|error| and the |mean error| are within the three fractions.  The BF16
summary is the FSDP band the report prints under the step time of a
--framework fsdp plan: --write stores the mean |error|, the mean signed
error, the rows and the rows within 15 % as the fsdp band of the band
file, topologies/bands.xml, in the set of the Hopper cluster files
(simtools/clusters.py HOPPER; simtools/bands.py); --check-band fails when a stored band
(three decimals) differs from what the rows give now.

Exit status: 0 when every row was predicted to fit, within the tolerance
if one is given, and with --check-band every stored band is current; 1
otherwise; 2 on bad usage.
"""
import os, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from simtools import ROOT, bands, options, runs
from simtools.calibration import Runner, select_rows
from simtools.clusters import HOPPER
from simtools.rows import measured_s
from simtools.summary import CALIBRATION, scale_drifts, summary

DATA = "mosaic_h100_heldout.csv"


def judge(sim, label, rows, tolerance):
    """print the rows' table and summary, check each fits and the tolerance;
    (errors, failures)"""
    runner = Runner(sim, rows, os.cpu_count() or 2)
    errs = runner.errors(None, rows)
    print("%s: published vs sim, files as shipped" % label)
    for r in rows:
        e = errs[r["row_id"]]
        print("  %-46s measured %9.3f s  %+6.1f%%%s" % (r["row_id"], measured_s(r), 100 * e,
                                                      "  beyond 15 %" if abs(e) > 0.15 else ""))
    e = list(errs.values())
    print(summary(e, CALIBRATION))
    failed = 0
    for r in rows:
        m = runs.memory(runner.cmds[r["row_id"]])
        if not m["fits"]:
            failed += 1
            print("  %s: predicted out of memory, peak %.2f GB of %.2f GB usable"
                  % (r["row_id"], m["peak_bytes"] / 1e9, m["usable_bytes"] / 1e9))
    print("%d of %d runs that trained predicted to fit" % (len(rows) - failed, len(rows)))
    by_scale(rows, errs)
    if tolerance:
        worst, mae, bias = max(e, key=abs), statistics.mean(abs(x) for x in e), statistics.mean(e)
        ok = abs(worst) <= tolerance[0] and mae <= tolerance[1] and abs(bias) <= tolerance[2]
        print("%s: worst %+.1f%% (<= %.0f%%), MAE %.1f%% (<= %.0f%%), bias %+.1f%% (|.| <= %.0f%%)"
              % ("ok" if ok else "NOT OK", 100 * worst, 100 * tolerance[0], 100 * mae, 100 * tolerance[1],
                 100 * bias, 100 * tolerance[2]))
        failed += not ok
    return e, failed


def by_scale(rows, errs):
    """the summary by GPU count, and for each model with runs at three or
    more counts of one sequence length, micro-batch, table and recipe (a
    scaling series: the same work per GPU), the error at its largest count
    minus at its smallest: the drift, negative where sim grows optimistic
    with scale"""
    counts = sorted(set(int(r["num_gpus"]) for r in rows))
    print("by GPUs:")
    for n in counts:
        e = [errs[r["row_id"]] for r in rows if int(r["num_gpus"]) == n]
        print("  %4d GPUs %3d rows: MAE %5.1f%%, mean %+5.1f%%"
              % (n, len(e), 100 * statistics.mean(abs(x) for x in e), 100 * statistics.mean(e)))
    series = {}
    for r in rows:
        label = "%s seq %s mb %s @%s%s" % (r["model"], r["seq_len"], r["micro_batch"],
                                           r["source_locator"].split(",")[0],
                                           " flash2" if "flash2" in (r.get("recipe_flags") or "") else "")
        series.setdefault(label, []).append((int(r["num_gpus"]), errs[r["row_id"]]))
    drifts = scale_drifts(series)
    if drifts:
        print("  mean drift over %d series: %+.1f points" % (len(drifts), statistics.mean(drifts)))


def main(argv):
    mode = options.take_mode(argv)
    tolerance = options.take_fractions(argv, "--tolerance", 3)
    fp8_tolerance = options.take_fractions(argv, "--fp8-tolerance", 3)
    if tolerance == () or fp8_tolerance == ():
        print("--tolerance, --fp8-tolerance: expected three fractions, WORST,MAE,BIAS")
        return 2
    if not argv:
        print(__doc__.strip().splitlines()[2])
        return 2
    sim = argv[0]
    root = argv[1] if len(argv) > 1 else ROOT
    data = os.path.join(root, "tests", "validation", "data", DATA)
    e, failed = judge(sim, "PyTorch FSDP BF16 runs on H100 no fit saw (%s)" % DATA,
                      select_rows(data, "h100"), tolerance)
    _, fp8_failed = judge(sim, "PyTorch FSDP FP8 runs on H100 no fit saw (%s)" % DATA,
                          select_rows(data, "h100", fp8=True), fp8_tolerance)
    stale = bands.bands([os.path.join(root, "topologies", name) for name in HOPPER], "fsdp", "FSDP",
                        e, mode, "fsdp-check.py")
    return 1 if failed or fp8_failed or stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
