"""The parts a published row's sim command line is built of, shared by the
scripts' command builders (the columns of
tests/validation/data/training_calibration.csv)."""


def parallelism(r):
    """(tp, pp, cp, dp) of a row: cp 1 where it is empty, dp as published or
    the GPUs over tp x pp x cp"""
    tp, pp, cp = int(r["tp"]), int(r["pp"]), int(r["cp"] or 1)
    dp = int(r["dp"]) if r["dp"] else int(r["num_gpus"]) // (tp * pp * cp)
    return tp, pp, cp, dp


def base_command(sim, r, topology, nodes, model):
    """sim with the cluster file, node count and model, and the row's --tp,
    --pp, --dp, --micro-batch (1 where the row leaves it empty) and
    --global-batch"""
    tp, pp, cp, dp = parallelism(r)
    return [sim, "--topology", topology, "--nodes", str(nodes), "--model", model, "--tp", str(tp), "--pp", str(pp),
            "--dp", str(dp), "--micro-batch", r["micro_batch"] or "1", "--global-batch", r["global_batch"]]


def recompute_of(r):
    """the row's --recompute: full or selective where its recompute column
    starts with that word, else none"""
    rc = (r["recompute"] or "none").split()[0]
    return rc if rc in ("full", "selective") else "none"


def layout_options(r, sequence_parallel=True):
    """--cp where the row's cp is over 1, --sequence-parallel where its tp is
    (unless sequence_parallel is False), the interleaved schedule where it
    has virtual stages"""
    tp, pp, cp, dp = parallelism(r)
    out = []
    if cp > 1:
        out += ["--cp", str(cp)]
    if sequence_parallel and tp > 1:
        out += ["--sequence-parallel"]
    if r["vpp_chunks"] and int(r["vpp_chunks"]) > 1:
        out += ["--schedule", "interleaved", "--virtual-stages", r["vpp_chunks"]]
    return out


def fp8_options(precision, recipe=True):
    """--fp8 hybrid where the precision column names fp8, with (unless
    recipe is False) the scaling recipe it names: FP8-CS Transformer
    Engine's current scaling, FP8-MX Blackwell's MXFP8; [] otherwise"""
    if "fp8" not in precision:
        return []
    out = ["--fp8", "hybrid"]
    if recipe and "FP8-CS" in precision:
        out += ["--fp8-recipe", "current"]
    elif recipe and "FP8-MX" in precision:
        out += ["--fp8-recipe", "mxfp8"]
    return out


def counted_split(r, pp):
    """Megatron-Core builds a layout whose layers do not divide its pp x vp
    model chunks only with the embedding and the loss counted as layers
    (transformer_block.py get_num_layers_to_build asserts the division):
    such a row ran with both, e.g. Llama 3.1 405B's 126 layers on pp 16 x
    vp 8, where the first chunk holds the embedding alone and the last the
    loss alone (a custom pipeline layout could place them otherwise; the
    sources do not print one): the two options for such a row, [] for
    another"""
    chunks = pp * max(1, int(r["vpp_chunks"] or 1))
    layers = int(r["layers"])
    if layers % chunks != 0 and (layers + 2) % chunks == 0:
        return ["--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split"]
    return []


def cluster_file(r, topologies):
    """the cluster file of a row's GPU: dgx-h100.xml, dgx-a100-40gb.xml for
    an A100 40GB row where sim lists it (topologies), else dgx-a100.xml"""
    gpu = r["gpu"].lower()
    if "h100" in gpu: return "dgx-h100.xml"
    if "40gb" in gpu and "dgx-a100-40gb" in topologies: return "dgx-a100-40gb.xml"
    return "dgx-a100.xml"


def fidelity_command(sim, r, mx, help_text, topologies):
    """the sim command line of a row as a user would type it (without
    --json), tools/fidelity.py's; help_text, sim's --help, says whether it
    offers --framework"""
    fsdp = "FSDP" in r["framework"]
    cmd = base_command(sim, r, cluster_file(r, topologies), max(1, int(r["num_gpus"]) // 8), mx)
    cmd += ["--recompute", recompute_of(r), "--zero", "3" if fsdp else "1"]
    cmd += layout_options(r) + fp8_options(r["precision"] or "", recipe=False)
    if "--framework" in help_text: cmd += ["--framework", "fsdp" if fsdp else "megatron"]
    if r.get("optimizer_states") == "bf16": cmd += ["--recipe", "bf16-adam-bf16-states"]
    return cmd
