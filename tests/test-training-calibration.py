#!/usr/bin/env python3
"""Validation: step times of the published bf16 runs of
tests/validation/data/training_calibration.csv (a copy of
tests/validation/data/training_calibration.csv: NVIDIA DGX Cloud NeMo 24.11
recipes on H100, MosaicML llm-foundry FSDP runs on A100), each predicted by
the sim command line as a user would run it, with the shipped cluster
files and their fitted <efficiency> constants.  Prints the error table per
row and per GPU; asserts the tolerances below, which are what the model
reaches today (the calibration's goals are tighter: every row within 15 %,
MAE <= 6 %, |bias| <= 3 %).  Rows whose data contradict their neighbours
(INCONSISTENT of tools/simtools/calibration.py, which fit-efficiency.py
keeps out of the fit) are printed with the evidence and kept out
of the tolerances.  Every run, those included, trained: each must be
predicted to fit (--memory-only).

usage: test-training-calibration.py SIM SOURCE_ROOT
"""
import os, statistics, sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
from simtools import calibration, models, runs
from simtools.rows import measured_s
from simtools.summary import CALIBRATION, summary

# per GPU: (largest |error| of any row, largest MAE, largest |bias|)
TOLERANCE = {"h100": (0.15, 0.06, 0.03), "a100": (0.17, 0.06, 0.03)}
# the FP8 runs, never fitted: the BF16 constants and the FP8 GEMM
# rate of sim-cost.c; the goal is every row within 15 %, MAE <= 8 %
FP8_TOLERANCE = ("h100", (0.17, 0.08, 0.05))
# the calibration's goal, the bound each row is marked against in the printed tables
ROW_GOAL = 0.15


def fits(sim, runner, rows, gpu):
    """every published run trained: each must be predicted to fit"""
    oom = []
    for r in rows:
        mx = os.path.join(runner.tmp, r["row_id"] + ".xml")
        models.model_xml(r, mx)
        m = runs.memory(calibration.calibration_command(sim, r, mx))
        if not m["fits"]:
            oom.append(r["row_id"])
            print("#   %s: predicted out of memory, peak %.2f GB of %.2f GB usable"
                  % (r["row_id"], m["peak_bytes"] / 1e9, m["usable_bytes"] / 1e9))
    print("%s - %s: %d of %d runs that trained predicted to fit"
          % ("not ok" if oom else "ok", gpu, len(rows) - len(oom), len(rows)))
    return not oom


def judge(label, rows, errs, tolerance):
    """prints the error table of rows and whether it is within tolerance
    (largest |error|, MAE, |bias|); True when it is"""
    worst_tol, mae_tol, bias_tol = tolerance
    print("# %s: %d runs" % (label, len(rows)))
    for r in rows:
        e = errs[r["row_id"]]
        print("#   %-46s measured %9.3f s  %+6.1f%%%s" % (r["row_id"], measured_s(r), 100 * e,
                                                       "  OUT" if abs(e) > worst_tol else
                                                       "  beyond 15 %" if abs(e) > ROW_GOAL else ""))
    e = list(errs.values())
    mae, bias, worst = statistics.mean(abs(x) for x in e), statistics.mean(e), max(e, key=abs)
    print("# %s: %s" % (label, summary(e, CALIBRATION)))
    ok = abs(worst) <= worst_tol and mae <= mae_tol and abs(bias) <= bias_tol
    print("%s - %s: worst %+.1f%% (<= %.0f%%), MAE %.1f%% (<= %.0f%%), bias %+.1f%% (|.| <= %.0f%%)"
          % ("ok" if ok else "not ok", label, 100 * worst, 100 * worst_tol, 100 * mae, 100 * mae_tol,
             100 * bias, 100 * bias_tol))
    return ok


def main(sim, root):
    data = os.path.join(root, "tests", "validation", "data", "training_calibration.csv")
    jobs = os.cpu_count() or 2
    failed = 0
    for gpu, tolerance in TOLERANCE.items():
        rows = calibration.select_rows(data, gpu)
        runner = calibration.Runner(sim, rows, jobs)
        failed += not judge(gpu + " bf16", rows, runner.errors(None, rows), tolerance)
        out = calibration.select_rows(data, gpu, inconsistent=True)
        errs_out = calibration.Runner(sim, out, jobs).errors(None, out) if out else {}
        for r in out:
            print("#   kept out %-37s measured %9.3f s  %+6.1f%%: %s"
                  % (r["row_id"], measured_s(r), 100 * errs_out[r["row_id"]], calibration.INCONSISTENT[r["row_id"]]))
        failed += not fits(sim, runner, rows + out, gpu)
    gpu, tolerance = FP8_TOLERANCE
    rows = calibration.select_rows(data, gpu, fp8=True)
    runner = calibration.Runner(sim, rows, jobs)
    failed += not judge(gpu + " FP8", rows, runner.errors(None, rows), tolerance)
    failed += not fits(sim, runner, rows, gpu + " FP8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
