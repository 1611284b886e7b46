#!/usr/bin/env python3
"""Predict the published Blackwell runs with sim and print the error tables.

usage: blackwell-check.py SIM [SOURCE_ROOT] [--extra "OPTIONS"] [--write | --check-band]

--extra adds OPTIONS to every training row, as fidelity.py's does (not with
--write).

Reads SOURCE_ROOT/tests/validation/data/blackwell/training_blackwell.csv (the
columns of tests/validation/data/training_calibration.csv) and
nccl_blackwell.csv (the columns of nccl_collectives.csv).  Each training row is
run the way tools/fidelity.py runs a row (the same model XML, the
same flags: --sequence-parallel when TP > 1, the interleaved schedule for
virtual stages, --fp8 hybrid for FP8 rows with the row's scaling recipe
(FP8-CS: --fp8-recipe current, FP8-MX: mxfp8, as tools/moe-check.py),
--fp4 e2m1 --fp4-recipe nvfp4 for NVFP4 rows, --zero 3
and --framework fsdp for FSDP rows, and the embedding and the loss counted as
layers where the layers do not divide the pp x vp chunks, as Megatron-Core
then needs: counted_split in simtools/commands.py), except that the cluster file is chosen from the gpu column among
the Blackwell files, which fidelity.py does not know:

  B200   topologies/dgx-b200.xml with --nodes GPUs/8;
  GB200  topologies/gb200-nvl72.xml.  sim uses every GPU of a cluster and a
         node is a whole 72-GPU rack, so a run on part of a rack cannot be
         expressed with --nodes.  The script writes a copy of the file whose
         node holds the GPUs the run used: all of them when they fit in one
         rack (8, 64), else 64 GPUs per rack (256 = 4 x 64; NVIDIA does not
         state the split, 64 is an assumption).  NICs follow the GPUs (one each).
  GB300  topologies/gb300-nvl72.xml, placed as GB200.

Nothing is fitted or tuned: the XML files are used as shipped.  The NCCL rows
are compared with `sim collective`; rows whose notes say INPUT gave a number to
the cluster file and are printed but kept out of the error summary.
A row whose layout sim cannot express is listed as not expressible, not
substituted (the 405B recipes' 126 layers on pp x vp interleaved chunks are
expressible since sim splits uneven chunks as sim_plan_chunk_layers says).
Each cluster file's error band is the mean absolute step-time error of its
own rows that sim predicts to fit (a row predicted out of memory trained with a
memory saving its source does not state, so its time is of another run).
A row whose kept_out column gives evidence that the layout printed is not the
one that ran is predicted and printed (flag K) but left out of the summary and
the bands, and listed with the evidence.
None of these rows set a constant of the file (the <efficiency> constants are
Hopper's, fitted on H100 runs only), so the band is an out-of-sample error.
--write stores it as the fitted band of the file's set in the band file,
topologies/bands.xml (simtools/bands.py), which the report prints under the
step time;
--check-band fails (exit 1) when a file's stored band (three decimals, as
written) or its count of rows differs from the one the rows give now, so it
cannot go stale.
Exit status: 0 when every expressible row was predicted (whatever the error)
and, with --check-band, every band is current; 1 otherwise.
"""
import csv, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from simtools import ROOT, bands, commands, models, options, runs
from simtools.clusters import BLACKWELL, blackwell_cluster, gpu_key
from simtools.rows import measured_s
from simtools.summary import NO_WITHIN, summary

# What a published run's recipe sets beyond its layout, where the recipe
# says so; applied to every row whose id contains the key.  Megatron-Bridge's
# Llama 3 70B FP8-CS presets on GB200 and GB300 (Megatron FSDP, micro-batch
# 2) offload the saved activations of 40 and 20 layers to the Grace CPU
# (NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/llama/
# llama3_workload_base_configs.py @00919dc, LLAMA3_70B_PRETRAIN_CONFIG_
# GB200_FP8_CS_V1/V2 and GB300_FP8_CS_V1/V2: cpu_offloading_num_layers; its
# set_recompute_overrides turns cpu_offloading on with the weights kept).
# The same V2 presets set the same 40 and 20 at the release tags of the
# newer containers, v0.3.1 (26.02.01), v0.4.0 (26.04) and v0.4.2 (26.04.01),
# so the two keys hold for their rows too (26.06 has no 70B row).  No
# GB200, GB300 or H100 V2 preset of Llama 3 70B or 3.1 405B at those tags
# or at v0.5.0 (26.06) sets recomputation.  At v0.4.2 (26.04.01;
# cherry-pick b8f07831 of #3713) and v0.5.0 (26.06), scripts/performance/
# configs/llama/llama31_llm_pretrain.py llama31_405b_pretrain_config_gb200
# turns the parameter-gather overlap off for NVFP4 with the V2 preset
# (disable_param_gather_overlap: ddp.overlap_param_gather False, against an
# OOM, issue 3714); v0.4.0 (26.04) and v0.3.1 (26.02.01) do not.
RUN_CONFIG = {
    "_gb200_llama3_70b_fp8cs_": ["--cpu-offloading-num-layers", "40"],
    "_gb300_llama3_70b_fp8cs_": ["--cpu-offloading-num-layers", "20"],
    "mbridge260401_gb200_llama31_405b_nvfp4_": ["--no-overlap-param-gather"],
    "mbridge2606_gb200_llama31_405b_nvfp4_": ["--no-overlap-param-gather"],
}


def blackwell_command(sim, r, mx, topo, nodes):
    """the sim command line of a training row with its model file mx on its
    cluster (without --json)"""
    tp, pp, cp, dp = commands.parallelism(r)
    # Megatron-Bridge's FSDP is Megatron-Core's (Megatron FSDP): ZeRO-3 with
    # Megatron's kernels, not PyTorch FSDP's llm-foundry preset
    fsdp = "FSDP" in r["framework"] and "Megatron" not in r["framework"]
    zero3 = "FSDP" in r["framework"]
    cmd = commands.base_command(sim, r, topo, nodes, mx)
    cmd += ["--recompute", "none", "--zero", "3" if zero3 else "1", "--framework", "fsdp" if fsdp else "megatron"]
    cmd += commands.layout_options(r) + commands.counted_split(r, pp)
    for key, extra in RUN_CONFIG.items():
        if key in r["row_id"]:
            cmd += extra
    prec = r["precision"] or ""
    # the row's scaling recipe, as tools/moe-check.py passes it: FP8-CS is
    # Transformer Engine's current scaling, FP8-MX Blackwell's MXFP8
    cmd += commands.fp8_options(prec)
    # NVFP4: Megatron-Bridge's bf16_with_nvfp4_mixed (fp4 e2m1, recipe nvfp4)
    if "NVFP4" in prec:
        cmd += ["--fp4", "e2m1", "--fp4-recipe", "nvfp4"]
    return cmd


def training(sim, root, tmp, extra=()):
    data = os.path.join(root, "tests", "validation", "data", "blackwell", "training_blackwell.csv")
    errs, failed, band, kept = [], 0, {f: [] for f in BLACKWELL.values()}, []
    print("training step time: published vs sim (Blackwell files as shipped; GEMM tables and efficiency are estimates)")
    for r in csv.DictReader(open(data)):
        topo, nodes, where = blackwell_cluster(root, r, tmp)
        if topo is None:
            print("%-44s skipped: %s" % (r["row_id"], where)); failed += 1; continue
        mx = os.path.join(tmp, r["row_id"] + ".xml")
        models.model_xml(r, mx)
        j, p = runs.run_json(blackwell_command(sim, r, mx, topo, nodes) + list(extra), timeout=900)
        if j is None:
            why = runs.last_error(p)
            if "must divide" in why or "a layer in each" in why:
                # a layout sim refuses (a chunk without a layer, a split that does not divide):
                # a stand-in would be another run
                print("%-44s not expressible in sim: %s" % (r["row_id"], why[5:120])); continue
            print("%-44s failed: %s" % (r["row_id"], why[:120]))
            failed += 1; continue
        want, got = measured_s(r), j["time"]["step_s"]
        e = (got - want) / want
        fits = "" if j["memory"]["fits"] else "  (predicted OUT OF MEMORY)"
        print("%-44s %-30s measured %8.3f s  sim %8.3f s  %+6.1f%%%s%s"
              % (r["row_id"], where, want, got, 100 * e, fits, "  K" if r.get("kept_out") else ""))
        if r.get("kept_out"):
            kept.append((r["row_id"], e, r["kept_out"]))
            continue
        errs.append(e)
        if j["memory"]["fits"]:
            band[BLACKWELL[gpu_key(r)]].append(e)
    if errs: print(summary(errs, NO_WITHIN))
    if kept:
        print("K: kept out of the summary and the bands, with the evidence (the kept_out column):")
        for rid, e, why in kept:
            print("  %-42s %+6.1f%%  %s" % (rid, 100 * e, why))
    return errs, failed, band


def blackwell_bands(root, band, mode):
    """print each file's band as the rows give it; write or check the stored
    one; the count of stale files"""
    print("\nerror band per cluster file (rows predicted to fit; no row set a constant of the file)")
    items = []
    for name, e in band.items():
        now = bands.band_of(e, "fitted", signed=True) if e else None
        items.append((os.path.join(root, "topologies", name), "fitted", now, "%-16s %s  " % (
            name, "+/-%.1f%%, bias %+.1f%% on %d runs" % (100 * now[0], 100 * now[1], now[2]) if now else "no rows")))
    return bands.settle(items, mode)


def nccl(sim, root, tmp):
    data = os.path.join(root, "tests", "validation", "data", "blackwell", "nccl_blackwell.csv")
    errs, failed = [], 0
    print("\nnccl-tests bus bandwidth: published vs sim collective (in place where given)")
    for r in csv.DictReader(open(data)):
        g = r["gpu"].upper()
        if not r["size_bytes"]:
            print("%-44s no message size: not simulated (%s)" % (r["row_id"], r["notes"][:60])); continue
        n = int(r["num_gpus"])
        if g.startswith("GB200"):
            topo, nodes = os.path.join(root, "topologies", "gb200-nvl72.xml"), max(1, (n + 71) // 72)
        else:
            topo, nodes = os.path.join(root, "topologies", "dgx-b200.xml"), max(1, n // 8)
        size = r["size_bytes"]
        p = subprocess.run([sim, "collective", "--topology", topo, "--nodes", str(nodes), "--op", r["collective"],
                            "--gpus", str(n), "--min-bytes", size + "B", "--max-bytes", size + "B"],
                           capture_output=True, text=True, timeout=300)
        rows = [l.split() for l in p.stdout.splitlines() if l.strip() and not l.startswith("#")]
        if p.returncode != 0 or not rows:
            print("%-44s failed: %s" % (r["row_id"], runs.last_error(p)[:120]))
            failed += 1; continue
        got = float(rows[0][7])
        want = float(r["busbw_GBps_inplace"] or r["busbw_GBps"])
        e = (got - want) / want
        tag = "  (INPUT of the cluster file)" if "INPUT" in r["notes"] and r["size_bytes"] == "8589934592" else ""
        if not tag: errs.append(e)
        print("%-44s %10s B  measured %7.1f GB/s  sim %7.1f GB/s  %+6.1f%%  %s%s"
              % (r["row_id"], size, want, got, 100 * e, rows[0][-1], tag))
    if errs: print(summary(errs, NO_WITHIN) + " (INPUT rows left out)")
    return errs, failed


def main(argv):
    if not argv:
        print(__doc__.strip().splitlines()[2]); return 2
    mode = options.take_mode(argv)
    extra = options.take_extra(argv, mode)
    if extra is None:
        return 2
    sim = argv[0]
    root = argv[1] if len(argv) > 1 else ROOT
    tmp = tempfile.mkdtemp()
    _, f1, band = training(sim, root, tmp, extra)
    _, f2 = nccl(sim, root, tmp)
    stale = blackwell_bands(root, band, mode)
    return 1 if f1 or f2 or stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
