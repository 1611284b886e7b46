#!/usr/bin/env python3
"""Every published run in tests/validation/data as a bench-estimate layout,
built as the tool that checks it builds its command (tools/simtools/layouts.py
says which):

  training_calibration.csv   tools/fit-efficiency.py (and the equivalence
                             test, tests/test-steady-rows.py)
  mosaic_h100_heldout.csv    the same (tools/fsdp-check.py)
  published_runs.csv         its flags column (tests/test-validation-training.c)
  h100_dense_heldout.csv     tools/heldout-check.py
  moe_training.csv           tools/moe-check.py (the rows it predicts)

One line per run: row, topology path, nodes, model path, plan (sim's
plan-string form of the command's options), tab-separated.  Issue 16's
per-estimate target is the median over them.

usage: validation-layouts.py SOURCE_ROOT OUTDIR   (writes OUTDIR/layouts.tsv)
(tests/test-steady-rows.py imports tools/simtools/layouts.py: layouts(root, out), sim_args())"""
import os, sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
from simtools.layouts import layouts

if __name__ == "__main__":
    root, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    lines = layouts(root, out)
    with open(os.path.join(out, "layouts.tsv"), "w") as f:
        for line in lines:
            f.write("\t".join(str(x) for x in line) + "\n")
    print("%d layouts in %s" % (len(lines), os.path.join(out, "layouts.tsv")))
