#!/usr/bin/env python3
"""Predict the published A100 40GB runs with the A100 40GB cluster file and
with the 80 GB one, and print the error table.

usage: a100-40gb-check.py SIM [SOURCE_ROOT] [--tolerance MAE,BIAS]

Reads the bf16 rows of SOURCE_ROOT/tests/validation/data/training_calibration.csv
that ran on A100 40GB (MosaicML's llm-foundry benchmarks, rows
mosaic_a100_40gb_*, the copy of tests/validation/data/training_calibration.csv)
and runs each as tools/fit-efficiency.py does (its model file, layout and
options: simtools/calibration.py), once with topologies/dgx-a100-40gb.xml
and once with topologies/dgx-a100.xml (80 GB of HBM2e at 2,039 GB/s
against 40 GB of HBM2 at 1,555 GB/s; everything else the same).
tools/fidelity.py runs
every A100 row on dgx-a100.xml, and the Ampere <efficiency> constants were
fitted that way, so these rows are in the fit's sample: the table checks
the memory model of the 40 GB file (its bandwidth and capacity), not the
constants.  The rows INCONSISTENT (simtools/calibration.py), which
tools/fit-efficiency.py keeps out of the fit, are printed but kept out of
the summary, as in the fit.

Every one of these runs trained, so each bounds the fragmentation
allowance (sim/sim-memory.h): the largest fraction of what the CUDA context
leaves under which its peak is within usable memory.  The table ends with
the tightest three, and the allowance may not exceed the smallest by more
than half a point.

Exit status: 0 when every row was predicted and predicted to fit in 40 GB
(each run trained), the allowance is within that bound and, with
--tolerance, the 40 GB file's mean |error| and |mean error| are within it;
1 otherwise.
"""
import csv, os, statistics, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from simtools import ROOT, models, options
from simtools.calibration import INCONSISTENT, calibration_command
from simtools.rows import measured_s
from simtools.runs import step
from simtools.summary import WITHIN_LAST, summary


def main(argv):
    tol = options.take_fractions(argv)
    if not argv or tol == ():
        print(__doc__.strip().splitlines()[2])
        return 2
    sim = argv[0]
    root = argv[1] if len(argv) > 1 else ROOT
    data = os.path.join(root, "tests", "validation", "data", "training_calibration.csv")
    files = {"40": os.path.join(root, "topologies", "dgx-a100-40gb.xml"),
             "80": os.path.join(root, "topologies", "dgx-a100.xml")}
    errs = {"40": [], "80": []}
    bounds = []  # (largest allowance under which it fits in 40 GB, row, the file's allowance)
    failed = 0
    print("A100 40GB runs: published vs sim with dgx-a100-40gb.xml and with dgx-a100.xml (80 GB)")
    with tempfile.TemporaryDirectory() as tmp:
        for r in csv.DictReader(open(data)):
            rid = r["row_id"]
            if "a100_40gb" not in rid or "bf16" not in (r["precision"] or ""):
                continue
            mx = os.path.join(tmp, rid + ".xml")
            models.model_xml(r, mx)
            base = calibration_command(sim, r, mx)
            i = base.index("--topology")
            want = measured_s(r)
            got = {}
            for k, path in files.items():
                got[k] = step(base[:i + 1] + [path] + base[i + 2:])
            if got["40"] is None or got["80"] is None:
                print("%-46s failed: sim gave no result" % rid)
                failed += 1
                continue
            e = {k: (got[k][0] - want) / want for k in files}
            kept = rid not in INCONSISTENT
            if kept:
                for k in files:
                    errs[k].append(e[k])
            if not got["40"][1]:
                failed += 1
            # every run trained, its time consistent or not: the largest
            # fragmentation allowance (of what the CUDA context leaves) under
            # which its peak is within usable memory
            m = got["40"][2]
            room = m["capacity_bytes"] - m["context_reserve_bytes"]
            bounds.append((1 - m["peak_bytes"] / room, rid, m["fragmentation_bytes"] / room))
            print("%-46s measured %8.3f s  40 GB file %8.3f s %+6.1f%%  80 GB file %+6.1f%%%s%s"
                  % (rid, want, got["40"][0], 100 * e["40"], 100 * e["80"],
                     "" if got["40"][1] else "  (predicted OUT OF MEMORY in 40 GB)",
                     "" if kept else "  (kept out: inconsistent, tools/fit-efficiency.py)"))
    if not errs["40"]:
        print("no row predicted")
        return 1
    print("dgx-a100-40gb.xml: " + summary(errs["40"], WITHIN_LAST))
    print("dgx-a100.xml:      " + summary(errs["80"], WITHIN_LAST))
    # The allowance (sim/sim-memory.h) is bounded by the tightest runs that
    # trained: it may not exceed the smallest of their bounds by more than
    # half a point
    bounds.sort()
    print("fragmentation allowance of dgx-a100-40gb.xml %.1f%%; the tightest runs that trained fit below: %s"
          % (100 * bounds[0][2], ", ".join("%s %.1f%%" % (b[1], 100 * b[0]) for b in bounds[:3])))
    ok = not failed
    if bounds[0][2] > bounds[0][0] + 0.005:
        print("NOT WITHIN TOLERANCE: the allowance puts %s, a run that trained, %.1f points above usable"
              % (bounds[0][1], 100 * (bounds[0][2] - bounds[0][0])))
        ok = False
    if tol is not None:
        mae = statistics.mean(abs(x) for x in errs["40"])
        bias = statistics.mean(errs["40"])
        within = mae <= tol[0] and abs(bias) <= tol[1]
        print("%s: MAE %.1f%% (<= %.0f%%), |bias| %.1f%% (<= %.0f%%)"
              % ("ok" if within else "NOT WITHIN TOLERANCE", 100 * mae, 100 * tol[0], 100 * abs(bias), 100 * tol[1]))
        ok = ok and within
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
