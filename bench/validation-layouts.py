#!/usr/bin/env python3
"""Every published run in tests/validation/data as a bench-estimate layout,
built as the tool that checks it builds its command:

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
(tests/test-steady-rows.py imports it: layouts(root, out), sim_args())"""
import csv, importlib.util, os, shlex, sys

def tool(root, name):
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), os.path.join(root, "tools", name + ".py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def rows_of(root, name, fields=None):
    path = os.path.join(root, "tests", "validation", "data", name)
    return list(csv.DictReader((line for line in open(path) if not line.startswith("#")), fieldnames=fields))


def plan_string(args):
    """--key value / --flag / --no-flag as key=value,... (sim_plan_parse_string);
    a list value (--recompute-modules, --cuda-graph-scope) joined by + there"""
    items, i = [], 0
    while i < len(args):
        key = args[i][2:]
        if i + 1 < len(args) and not args[i + 1].startswith("--"):
            items.append("%s=%s" % (key, args[i + 1].replace(",", "+"))); i += 2
        elif key.startswith("no-"):
            items.append("%s=false" % key[3:]); i += 1
        else:
            items.append("%s=true" % key); i += 1
    return ",".join(items)


def split(root, cmd):
    """(topology, nodes, model, plan) of a sim command whose first options
    are --topology, --nodes and --model"""
    opts = dict(zip(cmd[1:7:2], cmd[2:7:2]))
    assert list(opts) == ["--topology", "--nodes", "--model"], cmd[:7]
    topo = opts["--topology"]
    if os.sep not in topo:
        topo = os.path.join(root, "topologies", topo)
    model = opts["--model"]
    if not model.endswith(".xml"):
        model = os.path.join(root, "models", model + ".xml")
    return topo, opts["--nodes"], model, plan_string(cmd[7:])


def layouts(root, out):
    """every published run as (row, topology path, nodes, model path, plan),
    its model file (where the row describes one) written under out"""
    os.makedirs(out, exist_ok=True)
    lines = []
    fit = tool(root, "fit-efficiency")
    calibration = os.path.join(root, "tests", "validation", "data", "training_calibration.csv")
    for r in [r for gpu in ("h100", "a100") for fp8 in (False, True) for bad in (False, True)
              for r in fit.select_rows(calibration, gpu, inconsistent=bad, fp8=fp8)]:
        mx = os.path.join(out, r["row_id"] + ".xml")
        fit.model_xml(r, mx)
        lines.append((r["row_id"],) + split(root, fit.command("sim", r, mx)))
    for r in rows_of(root, "mosaic_h100_heldout.csv"):
        mx = os.path.join(out, r["row_id"] + ".xml")
        fit.model_xml(r, mx)
        lines.append((r["row_id"],) + split(root, fit.command("sim", r, mx)))
    # its header is a comment
    for r in rows_of(root, "published_runs.csv", ["row_id", "topology", "nodes", "model", "flags", "metric", "published"]):
        lines.append((r["row_id"], os.path.join(root, "topologies", r["topology"] + ".xml"), r["nodes"],
                      os.path.join(root, "models", r["model"] + ".xml"), plan_string(shlex.split(r["flags"]))))
    held = tool(root, "heldout-check")
    for r in rows_of(root, "h100_dense_heldout.csv"):
        if r["row_id"] in held.INCONSISTENT or not r["pp"] or not r["global_batch"]:
            continue
        mx = os.path.join(out, r["row_id"] + ".xml")
        held.model_xml(r, mx)
        lines.append((r["row_id"],) + split(root, held.command("sim", root, r, mx)))
    moe = tool(root, "moe-check")
    bw = moe.blackwell(root)
    for r in rows_of(root, "moe_training.csv"):
        if moe.skip_reason(r) or moe.is_fsdp(r):
            continue
        topo, nodes, _ = moe.cluster(bw, root, r, out)
        if topo is None:
            continue
        lines.append((r["row_id"],) + split(root, moe.command("sim", r, topo, nodes)))
    return lines


def sim_args(plan):
    """a plan string back as sim's options"""
    args = []
    for kv in plan.split(","):
        k, v = kv.split("=", 1)
        args += ["--" + k] if v == "true" else ["--no-" + k] if v == "false" else ["--" + k, v]
    return args


if __name__ == "__main__":
    root, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    lines = layouts(root, out)
    with open(os.path.join(out, "layouts.tsv"), "w") as f:
        for line in lines:
            f.write("\t".join(str(x) for x in line) + "\n")
    print("%d layouts in %s" % (len(lines), os.path.join(out, "layouts.tsv")))
