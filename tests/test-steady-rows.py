#!/usr/bin/env python3
"""sim's shortcuts (the steady-state extrapolation of long 1F1B and
interleaved runs, TP collectives as their time alone where no flow meets
them, TP rank 0's data-parallel collectives standing for every rank's where
they mirror) against the reference (--exact: every micro-batch, every
collective's flows, every TP rank's) on every published run of
tests/validation/data (tools/simtools/layouts.py: the calibration,
held-out, published and mixture-of-experts runs, each built as its checking
tool builds it): the step time, each kind of exposed communication and the
bubble within 0.1 % of the step, the activation peak equal.
Prints the comparison table.

usage: test-steady-rows.py SIM SOURCE_ROOT"""
import concurrent.futures, json, os, subprocess, sys, tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
from simtools import layouts as vl

sim, root = sys.argv[1], os.path.abspath(sys.argv[2])
KINDS = ("exposed_tp_s", "exposed_cp_s", "exposed_pp_s", "exposed_dp_s", "exposed_ep_s")


def result(cmd):
    p = subprocess.run(cmd + ["--json", "-"], capture_output=True, text=True, timeout=600)
    return json.loads(p.stdout) if p.returncode in (0, 1) else None


def compare(row):
    rid, topo, nodes, model, plan = row
    cmd = [sim, "--topology", topo, "--nodes", nodes, "--model", model] + vl.sim_args(plan)
    fast, whole = result(cmd), result(cmd + ["--exact"])
    if fast is None or whole is None or "time" not in whole:
        return rid, None, "no result"
    f, w = fast["time"], whole["time"]
    step = w["step_s"]
    errs = [abs(f["step_s"] - step) / step, abs(f["bubble_fraction"] - w["bubble_fraction"])]
    for a, b in zip(f["stages"], w["stages"]):
        errs += [abs(a[k] - b[k]) / step for k in KINDS if k in b]
    # the activation peak of each stage, from the timeline (memory.stages)
    for a, b in zip(fast["memory"]["stages"], whole["memory"]["stages"]):
        if a["activations_peak_bytes"] != b["activations_peak_bytes"]:
            return rid, f, "activation peak %d != %d" % (a["activations_peak_bytes"], b["activations_peak_bytes"])
    if whole["time"]["steady_micro_batches"]:
        return rid, f, "--exact was extrapolated"
    return rid, f, max(errs)


failed = 0
extrapolated = 0
with tempfile.TemporaryDirectory() as tmp:
    rows = vl.layouts(root, tmp)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        results = list(pool.map(compare, rows))
print("%-48s %-12s %s" % ("row", "runs", "largest difference (fraction of the step)"))
for rid, f, err in results:
    runs = ",".join(str(m) for m in f["steady_micro_batches"]) if f else "-"
    extrapolated += bool(f and f["steady_micro_batches"])
    ok = isinstance(err, float) and err <= 1e-3
    failed += not ok
    print("%-48s %-12s %s%s" % (rid, runs or "whole", "%.1e" % err if isinstance(err, float) else err,
                                "" if ok else "  FAIL"))
print("%d rows, %d extrapolated from their steady state, %d failed" % (len(results), extrapolated, failed))
# the comparison means something only if rows were extrapolated at all
sys.exit(1 if failed or extrapolated == 0 else 0)
