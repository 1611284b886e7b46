"""The mixture-of-experts rows (tests/validation/data/moe_training.csv,
tools/moe-check.py): which are predicted, their cluster and their command."""
import os
import shlex

from . import clusters, commands

# Megatron-Core's recompute_modules (transformer_config.py); a recompute
# column that names only these is the recipe's list, which replaces the
# default ["core_attn"]
MEGATRON_MODULES = {"core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts"}


def skip_reason(r):
    """why a row is not predicted (no step time, token dropping), or None"""
    if not r["step_time_s_published"] and not r["step_time_s_derived"]:
        return "no step time published (%s only)" % r["published_unit"]
    if ("token-drop" in r["row_id"] or "tokendrop" in r["row_id"]) and \
            "--moe-expert-capacity-factor" not in (r.get("recipe_flags") or ""):
        return "token-dropping run whose capacity factor its row does not give"
    return None


def is_fsdp(r):
    """whether the row ran PyTorch FSDP2 (NeMo AutoModel)"""
    return "FSDP" in r["framework"] or "AutoModel" in r["framework"]


def recompute_modules(r):
    """the Megatron-Core modules the row's recompute column names, or []
    where it names anything else (or nothing)"""
    names = [x.strip() for x in (r.get("recompute") or "").replace("+", ",").split(",") if x.strip()]
    return names if names and all(x in MEGATRON_MODULES for x in names) else []


def moe_cluster(root, r, tmp):
    """(cluster file, nodes, what the table prints of it) of a row:
    dgx-h100 or dgx-h800 with GPUs/8 nodes, Blackwell as
    clusters.blackwell_cluster places it"""
    gpus = int(r["num_gpus"])
    for gpu in ("H100", "H800"):
        if r["gpu"].upper().startswith(gpu):
            name = "dgx-" + gpu.lower()
            return os.path.join(root, "topologies", name + ".xml"), max(1, gpus // 8), "%s (%d nodes)" % (name, max(1, gpus // 8))
    return clusters.blackwell_cluster(root, r, tmp)


def moe_command(sim, r, topo, nodes):
    """the sim command line of a row on its cluster (without --json)"""
    tp, pp, cp, dp = commands.parallelism(r)
    cmd = [sim, "--topology", topo, "--nodes", str(nodes), "--model", r["model"], "--tp", str(tp), "--pp", str(pp),
           "--dp", str(dp), "--ep", r["ep"] or "1", "--etp", r["etp"] or "1", "--micro-batch", r["micro_batch"] or "1",
           "--global-batch", r["global_batch"], "--seq-len", r["seq_len"], "--moe-imbalance", "1"]
    modules = recompute_modules(r)
    cmd += ["--recompute-modules", "+".join(modules)] if modules else ["--recompute", "none"]
    # PyTorch FSDP2 (NeMo AutoModel) shards every state: ZeRO-3 and sim's
    # FSDP preset; Megatron-Core's distributed optimizer otherwise
    cmd += ["--zero", "3", "--framework", "fsdp"] if is_fsdp(r) else ["--zero", "1"]
    cmd += commands.layout_options(r, sequence_parallel=False)
    # DeepSeek-V3's multi-token prediction and the recipe's pipeline layout,
    # where the row records them (moe_training.md)
    if r.get("mtp_layers"):
        cmd += ["--mtp-num-layers", r["mtp_layers"]]
    if r.get("pipeline_layout"):
        cmd += ["--pipeline-model-parallel-layout", r["pipeline_layout"]]
    # what the row's recipe sets beyond the layout (overlaps), as sim options
    cmd += shlex.split(r.get("recipe_flags") or "")
    cmd += commands.fp8_options(r["precision"] or "")
    return cmd
