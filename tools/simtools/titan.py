"""torchtitan's published runs (tests/validation/data/pytorch_native.csv) as
sim command lines: tools/pytorch-native-check.py's, with its --as-fsdp form,
and tools/unseen-check.py's."""
import os
import subprocess

DATA = os.path.join("tests", "validation", "data", "pytorch_native.csv")
RECOMPUTE = {"none": "none", "full": "full", "selective-op": "selective"}
FP8_RECIPE = {"tensorwise": "tensorwise", "rowwise": "blockwise"}
SCHEDULE = {"1F1B": ("1f1b", 1), "Interleaved 1F1B": ("interleaved", 2)}


def model_layers(sim):
    """layers of each model, from sim list models"""
    p = subprocess.run([sim, "list", "models"], capture_output=True, text=True)
    layers = {}
    for line in p.stdout.splitlines():
        f = line.split()
        # name, parameters, "B", layers, ...
        if len(f) > 3 and f[2] == "B" and f[3].isdigit():
            layers[f[0]] = int(f[3])
    return layers


def titan_split(layers, pp, per_rank):
    """layers per stage as torchtitan @9dec370 generate_split_points splits
    them: the first stage the base count, the middle stages one more while
    the remainder lasts, the last stage what is left"""
    stages = pp * per_rank
    base, extra = divmod(layers, stages)
    counts, used = [], 0
    for i in range(stages - 1):
        n = base
        if i > 0 and extra > 0:
            n, extra = base + 1, extra - 1
        counts.append(n)
        used += n
    return counts + [layers - used]


def layout(counts):
    """Megatron-Core layout string: E embedding, t layer, L loss, | between stages"""
    s = "|".join("t*%d" % n for n in counts)
    return "E" + s + "L"


def titan_command(sim, r, layers, as_fsdp=False):
    """(the sim command, flags for the table) or (None, why it cannot be
    expressed); as_fsdp: the command of --as-fsdp (see the usage)"""
    gpu = r["gpu"]
    topo = "dgx-h200" if "H200" in gpu else "grand-teton-h100" if "H100" in gpu else None
    if topo is None:
        return None, "no shipped cluster file for GPU '%s'" % gpu
    if not r["tokens_per_s_per_gpu"]:
        return None, "no published TPS/GPU"
    n = int(r["num_gpus"])
    f, tp, pp, cp = (int(r[k] or 1) for k in ("fsdp", "tp", "pp", "cp"))
    if f * tp * pp * cp != n:
        return None, "fsdp x tp x pp x cp = %d, not the %d GPUs" % (f * tp * pp * cp, n)
    if r["ac"] not in RECOMPUTE:
        return None, "activation checkpointing '%s' has no sim counterpart" % r["ac"]
    size = ["--gpus", str(n)] if n <= 8 else ["--nodes", str(n // 8)] if n % 8 == 0 else None
    if size is None:
        return None, "%d GPUs is not a whole number of 8-GPU nodes" % n
    micro, sched, per_rank = pipeline(r, pp)
    if micro is None:
        return None, sched
    cmd = [sim, "--topology", topo] + size + ["--model", r["model"], "--tp", str(tp), "--pp", str(pp),
                                              "--cp", str(cp), "--dp", str(f), "--zero", "3"]
    if as_fsdp:
        return generic_command(cmd, r, micro, sched, per_rank)
    cmd += ["--framework", "torchtitan"]
    flags = "C" if r["compile"] == "yes" else ""
    cmd += ["--torch-compile" if r["compile"] == "yes" else "--no-torch-compile"]
    if pp > 1:
        if r["model"] not in layers:
            return None, "model %s not in sim list models" % r["model"]
        cmd += ["--schedule", sched, "--pipeline-model-parallel-layout",
                layout(titan_split(layers[r["model"]], pp, per_rank))]
    cmd += ["--micro-batch", str(micro), "--global-batch", r["global_batch"], "--seq-len", r["seq_len"],
            "--recompute", RECOMPUTE[r["ac"]]]
    f8 = r["float8"] or "none"
    if f8 != "none":
        if f8 not in FP8_RECIPE:
            return None, "float8 recipe '%s' has no sim counterpart" % f8
        cmd += ["--fp8", "hybrid", "--fp8-recipe", FP8_RECIPE[f8],
                "--fp8-params" if r["float8_fsdp_all_gather"] == "yes" else "--no-fp8-params"]
        if f8 == "rowwise":
            flags += "R"
    if tp > 1:
        cmd += ["--tp-comm-overlap" if r["async_tp"] == "yes" else "--no-tp-comm-overlap"]
    return cmd, flags


def pipeline(r, pp):
    """(micro-batch, schedule, chunks per rank) of a row: the local batch
    over its PP micro-batches with PP, else the local batch (schedule None);
    (None, why, None) where it cannot be expressed"""
    lb = int(r["local_batch"])
    if pp < 2:
        return lb, None, 1
    if r["schedule"] not in SCHEDULE:
        return None, "pipeline schedule '%s' has no sim counterpart" % r["schedule"], None
    sched, per_rank = SCHEDULE[r["schedule"]]
    mbs = int(r["pp_microbatches"] or 0)
    if mbs < 1 or lb % mbs:
        return None, "local batch %d does not split into %s PP micro-batches" % (lb, r["pp_microbatches"] or "?"), None
    return lb // mbs, sched, per_rank


def generic_command(cmd, r, micro, sched, per_rank):
    """the rest of --as-fsdp's command after the layout (see
    tools/pytorch-native-check.py's usage): the schedule without the
    pipeline split, the batch, the recomputation and --fp8 hybrid"""
    cmd = cmd + ["--framework", "fsdp"]
    if per_rank > 1:
        cmd += ["--schedule", sched, "--virtual-stages", str(per_rank)]
    cmd += ["--micro-batch", str(micro), "--global-batch", r["global_batch"], "--seq-len", r["seq_len"],
            "--recompute", RECOMPUTE[r["ac"]]]
    if (r["float8"] or "none") != "none":
        cmd += ["--fp8", "hybrid"]
    return cmd, ""
