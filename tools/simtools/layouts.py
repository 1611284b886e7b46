"""Every published run in tests/validation/data as a bench-estimate layout,
built as the tool that checks it builds its command:

  training_calibration.csv   tools/fit-efficiency.py (calibration)
  mosaic_h100_heldout.csv    the same (tools/fsdp-check.py)
  published_runs.csv         its flags column (tests/test-validation-training.c)
  h100_dense_heldout.csv     tools/heldout-check.py (heldout)
  moe_training.csv           tools/moe-check.py (moe; the rows it predicts)

bench/validation-layouts.py writes them, tests/test-steady-rows.py runs
them."""
import os
import shlex

from . import calibration, heldout, models, moe
from .rows import data_path, read_rows


def plan_string(args):
    """--key value / --flag / --no-flag as key=value,... (sim_plan_request_parse_string);
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


def split_command(root, cmd):
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
    data = data_path(root, "training_calibration.csv")
    for r in [r for gpu in ("h100", "a100") for fp8 in (False, True) for bad in (False, True)
              for r in calibration.select_rows(data, gpu, inconsistent=bad, fp8=fp8)]:
        mx = os.path.join(out, r["row_id"] + ".xml")
        models.model_xml(r, mx)
        lines.append((r["row_id"],) + split_command(root, calibration.calibration_command("sim", r, mx)))
    for r in read_rows(data_path(root, "mosaic_h100_heldout.csv")):
        mx = os.path.join(out, r["row_id"] + ".xml")
        models.model_xml(r, mx)
        lines.append((r["row_id"],) + split_command(root, calibration.calibration_command("sim", r, mx)))
    # its header is a comment
    for r in read_rows(data_path(root, "published_runs.csv"),
                       ["row_id", "topology", "nodes", "model", "flags", "metric", "published"]):
        lines.append((r["row_id"], os.path.join(root, "topologies", r["topology"] + ".xml"), r["nodes"],
                      os.path.join(root, "models", r["model"] + ".xml"), plan_string(shlex.split(r["flags"]))))
    for r in read_rows(data_path(root, "h100_dense_heldout.csv")):
        if r["row_id"] in heldout.INCONSISTENT or not r["pp"] or not r["global_batch"]:
            continue
        mx = os.path.join(out, r["row_id"] + ".xml")
        models.model_xml(r, mx)
        lines.append((r["row_id"],) + split_command(root, heldout.heldout_command("sim", root, r, mx)))
    for r in read_rows(data_path(root, "moe_training.csv")):
        if moe.skip_reason(r) or moe.is_fsdp(r):
            continue
        topo, nodes, _ = moe.moe_cluster(root, r, out)
        if topo is None:
            continue
        lines.append((r["row_id"],) + split_command(root, moe.moe_command("sim", r, topo, nodes)))
    return lines


def sim_args(plan):
    """a plan string back as sim's options"""
    args = []
    for kv in plan.split(","):
        k, v = kv.split("=", 1)
        args += ["--" + k] if v == "true" else ["--no-" + k] if v == "false" else ["--" + k, v]
    return args
