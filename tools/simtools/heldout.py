"""The held-out dense H100 rows (tests/validation/data/h100_dense_heldout.csv,
tools/heldout-check.py): the rows kept out and each row's command."""
import os

from . import commands

DATA = os.path.join("tests", "validation", "data", "h100_dense_heldout.csv")

# Rows kept out, with the evidence.  The v25.04 Nemotron-4 340B rows
# publish VP "NA" (no interleaving): with 16 micro-batches per replica on
# 8 pipeline stages a 1F1B step idles (8 - 1) / (16 + 8 - 1) = 30 % of it
# in the bubble, yet the published 4.36 s (256 GPUs) is faster than the
# same layout with VP 12 in v25.05.04 (4.61 s; the calibration rows of
# v24.11, VP 12: 4.67 s), and the published MFU rises from 47.3 % to 58.6 %
# while the step time falls by 5 %; the table dropped the VP that ran.
INCONSISTENT = {
    "dgxc2504_h100_nemotron4_340b_" + p + "_" + n:
        "VP published as NA, yet faster than the same layout interleaved (VP 12) in v25.05.04 "
        "and v24.11; without interleaving 16 micro-batches on 8 stages idle 30 % in the bubble"
    for p in ("bf16", "fp8") for n in ("256", "512", "1024", "2048")
}


def heldout_command(sim, root, r, mx):
    """the sim command line of a held-out row with its model file mx
    (without --json): dgx-h100.xml, --recompute none, ZeRO 1 (ZeRO 3 with
    Megatron's kernels for Megatron-Core's FSDP), --framework megatron, the
    embedding and the loss counted as layers where the layers do not divide
    the chunks, the row's FP8 recipe"""
    tp, pp, cp, dp = commands.parallelism(r)
    fsdp = "FSDP" in r["framework"]
    cmd = commands.base_command(sim, r, os.path.join(root, "topologies", "dgx-h100.xml"),
                                max(1, int(r["num_gpus"]) // 8), mx)
    cmd += ["--recompute", "none", "--zero", "3" if fsdp else "1", "--framework", "megatron"]
    cmd += commands.layout_options(r) + commands.counted_split(r, pp) + commands.fp8_options(r["precision"] or "")
    return cmd
