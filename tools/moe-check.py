#!/usr/bin/env python3
"""Predict the published mixture-of-experts runs with sim and print the error table.

usage: moe-check.py SIM [SOURCE_ROOT] [--extra "OPTIONS"] [--write | --check-band]

Reads SOURCE_ROOT/tests/validation/data/moe_training.csv (its sources are in
moe_training.md) and runs each row the way a user would: the shipped model
file named in the model column, the shipped cluster file of the gpu column
(H100: topologies/dgx-h100.xml with --nodes GPUs/8; B200 and GB200 as
tools/blackwell-check.py places them), and the row's layout:

  --tp --pp --ep --dp, --etp as published or 1 where the row leaves it empty
  (NVIDIA's Megatron-Bridge MoE recipes keep the experts unsplit; Megatron-
  Core's own default, etp = tp, would not fold for the tp 2 rows), the
  interleaved schedule for virtual stages, --micro-batch, --global-batch,
  --seq-len, --recompute none (no row publishes a full recomputation) or,
  where the recompute column names Megatron-Core's recompute_modules,
  --recompute-modules with them,
  ZeRO 1 (Megatron-Core's distributed optimizer; ZeRO 3 and --framework fsdp
  for the FSDP2 rows of NeMo AutoModel), --fp8 hybrid with the row's scaling
  recipe (FP8-CS: current, FP8-MX: mxfp8) for FP8 rows; and the options of
  the row's recipe_flags column (the DeepSeek-V3 report's DualPipe,
  dispatch and FP8 recipe; overlaps and CUDA graphs of the NVIDIA rows).

Nothing is fitted: the cluster and model files are used as shipped, with
--moe-imbalance 1 (the Megatron-Bridge and AutoModel rows force balanced
routing; moe_training.md).  Rows sim cannot express are listed with the
reason and kept out of the summary: a GPU without a cluster file,
layouts whose pp x vp does not divide the layers,
FSDP2 runs that fit only with a memory saving their source does not state,
runs predicted out of memory whose recipe recomputes what sim cannot express
(a recompute column in words), token-dropping runs whose recipe_flags give no
capacity factor (--moe-expert-capacity-factor),
runs published without a step time, and rows whose own figures disagree:
their published model TFLOP/s over their tokens/s gives FLOPs per token more
than 10 % from the median of the same model's rows (inconsistent() below).
Rows whose kept_out column gives evidence against them (a later run of the
same suite on the same GPUs, batch and precision, several times faster) are
predicted and printed, marked K, but kept out of the summary and the bands;
the summary with them follows it.

The errors of each GPU generation's rows are its MoE band, which the report
prints under the step time of a mixture-of-experts plan: --write stores the
mean |error|, the mean signed error, the rows and the rows within 15 % as
the moe band of the band file, topologies/bands.xml, in the set of the
generation's cluster files (BAND_FILES below; simtools/bands.py);
--check-band fails when a stored band (three decimals) differs from what the
rows give now, so that a change of the model cannot leave it stale.

Exit status: 0 when every expressible row was predicted (whatever the
error) and predicted to fit in memory (each run trained), and with
--check-band every stored band is current; 1 otherwise.
"""
import os, statistics, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from simtools import ROOT, bands, options, runs
from simtools.clusters import BLACKWELL, HOPPER, gpu_key
from simtools.moe import is_fsdp, moe_cluster, moe_command, recompute_modules, skip_reason
from simtools.rows import read_rows
from simtools.summary import summary

# the cluster files that carry each generation's efficiency constants, by
# the generation key of a row (generation() below): the Hopper files share
# the H100 fit and its set of bands, each Blackwell file has its own
BAND_FILES = dict({"H100": HOPPER}, **{gpu: (name,) for gpu, name in BLACKWELL.items()})


def generation(r):
    """the BAND_FILES key of a row's GPU: H100 and H800 rows are Hopper's"""
    if r["gpu"].upper().startswith(("H100", "H800")):
        return "H100"
    return gpu_key(r)


def moe_bands(root, by_gen, mode):
    """print each generation's band, write it or check the stored ones; the
    count of stale files"""
    return sum(bands.bands([os.path.join(root, "topologies", name) for name in BAND_FILES[gen]], "moe", "MoE",
                           by_gen[gen], mode, "moe-check.py") for gen in sorted(by_gen))


def flop_per_token(r):
    """the model FLOPs per token a row's own figures imply: its published
    model TFLOP/s per GPU over its tokens/s per GPU (published, or from its
    step time); None where it publishes no TFLOP/s"""
    tflops = tokens = None
    for v, u in ((r["published_value"], r["published_unit"]), (r["published_value_2"], r["published_unit_2"])):
        if v and "TFLOP" in u:
            tflops = float(v)
        elif v and "tokens/s/GPU" in u:
            tokens = float(v)
    step = r["step_time_s_published"] or r["step_time_s_derived"]
    if tokens is None and step:
        tokens = int(r["global_batch"]) * int(r["seq_len"]) / float(step) / int(r["num_gpus"])
    return tflops * 1e12 / tokens if tflops and tokens else None


def inconsistent(rows):
    """rows whose published TFLOP/s and tokens/s disagree: a model's FLOPs
    per token are the same in every run of one sequence length (within the
    4 % that multi-token prediction adds), so a row more than 10 % from the
    median of its model's rows has one of its two figures wrong; row id ->
    the evidence"""
    per = {}
    for r in rows:
        f = flop_per_token(r)
        if f:
            per.setdefault((r["model"], r["seq_len"]), []).append((r["row_id"], f))
    out = {}
    for (model, _), v in per.items():
        mid = statistics.median(f for _, f in v)
        for rid, f in v:
            if len(v) >= 3 and abs(f / mid - 1) > 0.10:
                out[rid] = ("its published model TFLOP/s and tokens/s imply %.1f GFLOP per token, %.2f times the "
                            "%.1f of the median of %s's %d rows: one of the two figures is wrong"
                            % (f / 1e9, f / mid, mid / 1e9, model, len(v)))
    return out


def main():
    argv = sys.argv[1:]
    mode = options.take_mode(argv)
    # options added to every row's command, as fidelity.py's --extra
    extra = options.take_extra(argv)
    if extra is None:
        return 2
    sim = argv[0]
    root = argv[1] if len(argv) > 1 else ROOT
    rows = read_rows(os.path.join(root, "tests", "validation", "data", "moe_training.csv"))
    bad = inconsistent(rows)
    if extra and mode == "--write":
        print("--write: not with --extra (the stored bands are of the files as shipped)")
        return 2
    errs, failed, oom, by_gen, every, kept = [], 0, 0, {}, [], []
    print("mixture-of-experts step time: published vs sim (files as shipped, balanced routing)")
    with tempfile.TemporaryDirectory() as tmp:
        for r in rows:
            why = skip_reason(r) or bad.get(r["row_id"])
            topo, nodes, where = (None, 0, "") if why else moe_cluster(root, r, tmp)
            if why is None and topo is None:
                why = where
            if why:
                print("%-44s not predicted: %s" % (r["row_id"][:44], why)); continue
            j, p = runs.run_json(moe_command(sim, r, topo, nodes) + extra, timeout=900)
            if j is None:
                msg = runs.last_error(p)
                if "must divide" in msg or "divide" in msg:
                    print("%-44s not expressible in sim: %s" % (r["row_id"][:44], msg[5:110])); continue
                print("%-44s failed: %s" % (r["row_id"][:44], msg[:110])); failed += 1; continue
            want = float(r["step_time_s_published"] or r["step_time_s_derived"])
            if not j["memory"]["fits"] and r.get("recompute") and not recompute_modules(r):
                # the run recomputed what its source describes in words, which
                # sim cannot express: as run with --recompute none it is
                # another run
                print("%-44s not predicted: its recipe recomputes %s, which sim cannot express; without it "
                      "sim needs %.0f GB per GPU" % (r["row_id"][:44], r["recompute"], j["memory"]["peak_bytes"] / 1e9))
                continue
            if not j["memory"]["fits"] and is_fsdp(r) and not r.get("recompute"):
                # the run trained, so it saved memory in a way its source does
                # not state (recomputation, optimizer precision): no layout to
                # predict it from
                print("%-44s not predicted: FSDP2 run without its recomputation published: as published it "
                      "needs %.0f GB per GPU (sim), so it saved memory in a way the source does not state"
                      % (r["row_id"][:44], j["memory"]["peak_bytes"] / 1e9)); continue
            got = j["time"]["step_s"]
            e = (got - want) / want
            every.append(e)
            if r.get("kept_out"):
                kept.append((r["row_id"], e, r["kept_out"]))
            else:
                errs.append(e)
                by_gen.setdefault(generation(r), []).append(e)
            fits = j["memory"]["fits"]
            oom += 0 if fits else 1
            ep = j["time"]["exposed_comm_s"]["ep"]
            print("%-44s %-24s measured %7.2f s  sim %7.2f s  %+6.1f%%  EP exp. %5.1f%%%s%s"
                  % (r["row_id"][:44], where[:24], want, got, 100 * e, 100 * ep / got,
                     "" if fits else "  (predicted OUT OF MEMORY)", "  K" if r.get("kept_out") else ""))
    if errs:
        print(summary(errs) + "; %d predicted out of memory" % oom)
    if kept:
        print("with the %d rows marked K: %s" % (len(kept), summary(every)))
        print("K: kept out of the summary and the MoE bands, with the evidence (the kept_out column):")
        for rid, e, why in kept:
            print("  %-42s %+6.1f%%  %s" % (rid, 100 * e, why))
    stale = moe_bands(root, by_gen, mode)
    return 1 if failed or oom or stale else 0


if __name__ == "__main__":
    sys.exit(main())
