#!/usr/bin/env python3
"""Predict the Megatron-LM baseline of MegaScale's 175B strong-scaling
table (256 to 12,288 A100s) and print the error table and its drift.

usage: megascale-check.py SIM [SOURCE_ROOT] [--tolerance MAE,DRIFT]

Reads SOURCE_ROOT/tests/validation/data/megascale_scaling.csv (the columns
of training_calibration.csv; sources and what had to be assumed in
megascale_scaling.md): Jiang et al., MegaScale (NSDI 2024, arXiv
2402.15627), Table 2, the Megatron-LM rows: GPT-3 175B (Table 1: 96 layers,
hidden 12,288, 128 heads, TP 8, PP 8), the interleaved schedule with six
virtual stages, sequence 2,048, global batch 768 on 256-1,024 GPUs and
6,144 on 3,072-12,288.  No fit has seen them.

Each row runs twice:
  - as tools/fidelity.py runs it (the calibration command of
    simtools/calibration.py, as fit-efficiency.py runs it: dgx-a100.xml,
    ZeRO 1, sequence parallelism, --framework megatron with its default
    overlaps);
  - as the stack the paper compares against ran, where the paper says what
    it lacked: MegaScale's Table 3 adds TP, PP and DP communication overlap
    to this baseline, so --no-tp-comm-overlap --no-overlap-grad-reduce
    --no-overlap-param-gather (sim has no flag for the PP overlap); and
    Megatron-LM with --bf16 accumulates and all-reduces the gradients in
    fp32 (megatron/arguments.py at the paper's commit 285068c8: "bfloat16
    requires gradient accumulation and all-reduce to be done in fp32"), so
    --grad-reduce-in-fp32.

The drift is the error at the largest GPU count less the error at the
smallest (the goal: within 5 points).  The fixed cost per step is the
intercept c of a least-squares line T = a m + c through the steps of one
global batch against the micro-batches per replica m (GBS / (DP x
micro-batch)): at a fixed global batch, adding GPUs shrinks m, so what a
step pays whatever its m (pipeline fill and drain, unhidden gradient
reduction, the optimizer, waits on the slowest GPU) weighs more.  A
measured c above the simulated one is a per-step cost sim lacks.

Exit status: 0 when every row was predicted and predicted to fit (each run
trained) and, with --tolerance, the default run's MAE and |drift| are
within it; 1 otherwise.
"""
import csv, os, statistics, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from simtools import ROOT, models, options
from simtools.calibration import calibration_command
from simtools.runs import step
from simtools.summary import SCALING, summary

OLD_STACK = ["--no-tp-comm-overlap", "--no-overlap-grad-reduce", "--no-overlap-param-gather", "--grad-reduce-in-fp32"]


def line_fit(xs, ys):
    """(slope, intercept) of the least-squares line through (xs, ys)"""
    mx, my = statistics.mean(xs), statistics.mean(ys)
    a = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return a, my - a * mx


def main(argv):
    tol = options.take_fractions(argv)
    if not argv or len(argv) > 2 or any(a.startswith("-") for a in argv) or tol == ():
        print(next(l for l in __doc__.splitlines() if l.startswith("usage:")), file=sys.stderr)
        return 2
    sim = argv[0]
    root = argv[1] if len(argv) > 1 else ROOT
    data = os.path.join(root, "tests", "validation", "data", "megascale_scaling.csv")
    rows = sorted(csv.DictReader(open(data)), key=lambda r: int(r["num_gpus"]))
    errs = {"default": [], "old": []}
    groups = {}  # global batch -> [(m, measured, default, old)]
    failed = 0
    print("MegaScale Table 2, Megatron-LM 175B: measured step against sim as fidelity.py runs it (default)\n"
          "and as the baseline's stack ran (%s)" % " ".join(OLD_STACK))
    print("%-40s %6s %4s %9s %9s %7s %9s %7s" % ("row", "GPUs", "m", "measured", "default", "error", "old", "error"))
    with tempfile.TemporaryDirectory() as tmp:
        for r in rows:
            rid = r["row_id"]
            mx = os.path.join(tmp, rid + ".xml")
            models.model_xml(r, mx)
            base = calibration_command(sim, r, mx)
            want = float(r["iter_time_s"])
            # a run that does not fit is not searched for a layout that does
            got = {"default": step(base + ["--no-search"]),
                   "old": step(base + OLD_STACK + ["--no-search"])}
            if None in got.values() or not got["default"][1]:
                print("%-40s failed: %s" % (rid, "no result" if None in got.values() else "predicted out of memory"))
                failed += 1
                continue
            e = {k: (got[k][0] - want) / want for k in got}
            for k in got:
                errs[k].append(e[k])
            m = int(r["global_batch"]) // (int(r["dp"]) * int(r["micro_batch"] or 1))
            groups.setdefault(int(r["global_batch"]), []).append((m, want, got["default"][0], got["old"][0]))
            print("%-40s %6s %4d %8.2fs %8.2fs %+6.1f%% %8.2fs %+6.1f%%"
                  % (rid, r["num_gpus"], m, want, got["default"][0], 100 * e["default"], got["old"][0], 100 * e["old"]))
    if not errs["default"]:
        print("no row predicted")
        return 1
    print("default: " + summary(errs["default"], SCALING))
    print("old:     " + summary(errs["old"], SCALING))
    for gb, pts in sorted(groups.items()):
        if len(pts) < 2:
            continue
        ms = [p[0] for p in pts]
        fits = [line_fit(ms, [p[k] for p in pts]) for k in (1, 2, 3)]
        print("global batch %d (m %s): T = a m + c, measured a %.4f s c %.2f s; default a %.4f s c %.2f s; "
              "old a %.4f s c %.2f s" % (gb, ",".join(map(str, ms)), *fits[0], *fits[1], *fits[2]))
    ok = failed == 0
    if tol is not None:
        mae = statistics.mean(abs(e) for e in errs["default"])
        drift = errs["default"][-1] - errs["default"][0]
        within = mae <= tol[0] and abs(drift) <= tol[1]
        print("tolerance: MAE %.1f%% (at most %.1f%%), |drift| %.1f points (at most %.1f): %s"
              % (100 * mae, 100 * tol[0], 100 * abs(drift), 100 * tol[1], "ok" if within else "FAILED"))
        ok = ok and within
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
