#!/usr/bin/env python3
"""Predict the held-out dense H100 runs with sim and print the error table.

usage: heldout-check.py SIM [SOURCE_ROOT] [--tolerance WORST,MAE,BIAS] [--extra "OPTIONS"]
                         [--scale-drift POINTS] [--kernels-as-configured] [--write | --check-band]

Reads SOURCE_ROOT/tests/validation/data/h100_dense_heldout.csv (the columns
of tests/validation/data/training_calibration.csv; sources and conventions in
h100_dense_heldout.md): NVIDIA's published DGX H100 pre-training runs of
Llama 3/3.1 8B, 70B and 405B and Nemotron-4 15B and 340B (dgxc-benchmarking
releases v25.01-v25.05.04, Megatron-Bridge 25.09-26.06).  No fit has seen
them: the shipped dgx-h100.xml and its <efficiency> constants, fitted on the
NeMo 24.11 rows of training_calibration.csv, are used as shipped.

Each row runs as tools/fidelity.py runs a row (the model XML from
the row's columns: Llama-style SwiGLU/RMSNorm/RoPE unless the id says
nemotron, which is the two-matrix MLP with LayerNorm; --sequence-parallel
when TP > 1; the interleaved schedule for virtual stages; --recompute none;
ZeRO 1; --framework megatron), with two differences where the row says more
than fidelity.py reads:
  - a Megatron-Bridge row with FSDP is Megatron-Core's own FSDP (ZeRO-3
    with Megatron's kernels): --zero 3 --framework megatron, as
    tools/blackwell-check.py maps it, not PyTorch FSDP's preset;
  - an FP8 row passes its scaling recipe where the row names it
    (FP8-CS: --fp8-recipe current); a plain "fp8" row runs sim's default;
  - a layout whose layers do not divide its pp x vp chunks runs with the
    embedding and the loss counted as layers, the only way Megatron-Core's
    own split builds it (simtools/commands.py counted_split, as
    blackwell-check.py runs it).
--extra adds OPTIONS to every row, as fidelity.py's does (to try an
--efficiency or an --attention-kernel on all of them; not with --write).
--kernels-as-configured (an experiment, not with --write) passes each row
the attention kernel its recipe configures: cuDNN for dgxc-benchmarking's
Llama 3.1 (llama3.1/configure.sh @143b90d: NVTE_FUSED_ATTN=1) and for
Megatron-Bridge (Transformer Engine's default on Hopper) and for dgxc
Nemotron-4 15B, FlashAttention-2 for dgxc Nemotron-4 340B (the 15b and 340b
branches of its NeMo 24.11 script, nemotron/configure.sh @35a9aec, export
NVTE_FUSED_ATTN=1 and 0; the later releases taken to keep them).
Left out, each printed with its reason: the MaxText (JAX) rows, which shard
as no sim framework preset does, and the rows in INCONSISTENT
(simtools/heldout.py, with the command), whose published layout
contradicts the same run in a later release.

The mean |error| of the predicted rows is the Hopper generation's held-out
error band, which the report prints under the step time: --write stores it
as the heldout band of the band file, topologies/bands.xml, in the set of
the cluster files that carry the H100 constants (simtools/clusters.py
HOPPER; simtools/bands.py);
--check-band fails when a file's stored band (three decimals) or count
differs from what the rows give now, so that a change of the model or of
the constants cannot leave it stale.

The scaling series: a release's runs of one model and precision on GPU
counts 8x apart or more (Llama 3.1 8B on 8-128 GPUs, 70B and Nemotron-4
15B on 16 or 64-2048) are printed with the error at the largest count less
the error at the smallest, and their mean: a uniform cluster's model drifts
optimistic as the GPU count grows (no step waits for a slower GPU).  With
--scale-drift, that mean must be within POINTS percentage points of zero.

Exit status: 0 when every expressible row was predicted and predicted to
fit (each run trained), with --tolerance the largest |error|, the MAE and
the |bias| are within it, and with --check-band every stored band is
current; 1 otherwise.
"""
import csv, os, statistics, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from simtools import ROOT, bands, models, options, runs
from simtools.clusters import HOPPER
from simtools.heldout import DATA, INCONSISTENT, heldout_command
from simtools.rows import measured_s, read_rows
from simtools.summary import scale_drifts, summary


def source_model_precision(rid):
    """source, model and precision: dgxc llama31_8b bf16, mbridge llama3_70b fp8cs, ..."""
    parts = rid.split("_")
    src = "mbridge" if parts[0].startswith("mbridge") else "dgxc"
    model = "_".join(p for p in parts[2:-2] if not p.startswith("proxy"))
    return "%s %s %s" % (src, model, parts[-2])


def drift(root, rows):
    """The same published layout (model, precision, GPUs, tp, pp, cp, vp,
    micro and global batch) measured in two NVIDIA releases: how much the
    later release ran it faster.  sim predicts one time per layout, so
    this is error no model of the hardware can remove; printed beside the
    bias.  The calibration rows (NeMo 24.11) join where they share a layout."""
    calib = os.path.join(root, "tests", "validation", "data", "training_calibration.csv")
    extra = [r for r in csv.DictReader(open(calib)) if r["row_id"].startswith("dgxc_")] \
        if os.path.exists(calib) else []
    groups = {}
    for r in rows + extra:
        prec = r["precision"] or ""
        prec = "fp8cs" if "FP8-CS" in prec else "fp8" if prec.startswith("fp8") else prec
        key = (r["model"], prec, r["num_gpus"], r["tp"], r["pp"], r["cp"] or "1",
               r["vpp_chunks"] or "1", r["micro_batch"], r["global_batch"])
        groups.setdefault(key, {})[r["framework"]] = measured_s(r)
    pairs = {}
    for times in groups.values():
        rel = sorted(times)
        for a, b in zip(rel, rel[1:]):
            pairs.setdefault((a, b), []).append(times[b] / times[a])
    if pairs:
        print("\nthe same layout in two releases (measured later / earlier step time; sim's is 1)")
        for (a, b), v in sorted(pairs.items()):
            print("  %-44s -> %-44s %3d layouts, mean %.3f (%.3f-%.3f)"
                  % (a[:44], b[:44], len(v), statistics.mean(v), min(v), max(v)))


def heldout_bands(root, errs, mode):
    """print the band, write it or check the stored ones (HOPPER); the count
    of stale files"""
    now = bands.band_of(errs, "heldout", signed=True)
    return bands.settle([(os.path.join(root, "topologies", name), "heldout", now,
                          "%-14s held-out band +/-%.1f%%, bias %+.1f%% on %d runs: "
                          % (name, 100 * now[0], 100 * now[1], now[2]))
                         for name in HOPPER], mode)


def scale_drift(by_id, limit):
    """the scaling series of by_id (row id -> error) and the mean drift from
    the smallest GPU count to the largest; False when --scale-drift's limit
    is given and exceeded"""
    series = {}
    for rid, e in by_id.items():
        head, _, n = rid.rpartition("_")
        if n.isdigit():
            series.setdefault(head, []).append((int(n), e))
    print("\nscaling series (error at the largest GPU count less at the smallest, in points)")
    drifts = scale_drifts(series, 8)
    if not drifts:
        return True
    mean = statistics.mean(drifts)
    ok = limit is None or abs(mean) <= limit
    print("  %d series: mean drift %+.2f points, mean |drift| %.2f%s"
          % (len(drifts), mean, statistics.mean(abs(d) for d in drifts),
             "" if limit is None else " (%s: |mean| <= %g)" % ("ok" if ok else "NOT WITHIN", limit)))
    return ok


def main(argv):
    mode = options.take_mode(argv)
    configured = "--kernels-as-configured" in argv
    argv = [a for a in argv if a != "--kernels-as-configured"]
    if configured and mode == "--write":
        print("--write: not with --kernels-as-configured (the stored band is of the files as shipped)")
        return 2
    extra = options.take_extra(argv, mode)
    if extra is None:
        return 2
    tol = options.take_fractions(argv)
    limit = None
    if "--scale-drift" in argv:
        i = argv.index("--scale-drift")
        limit = float(argv[i + 1])
        del argv[i:i + 2]
    if not argv or tol == ():
        print(__doc__.strip().splitlines()[2])
        return 2
    sim = argv[0]
    root = argv[1] if len(argv) > 1 else ROOT
    tmp = tempfile.mkdtemp()
    errs, fams, failed, oom, by_id = [], {}, 0, 0, {}
    print("held-out dense H100 runs: published vs sim (dgx-h100.xml as shipped; no fit saw these rows)")
    rows = read_rows(os.path.join(root, DATA))
    for r in rows:
        rid = r["row_id"]
        if "maxtext" in rid:
            print("%-46s left out: MaxText (JAX) shards as no sim framework preset does" % rid)
            continue
        if rid in INCONSISTENT:
            print("%-46s kept out: %s" % (rid, INCONSISTENT[rid]))
            continue
        mx = os.path.join(tmp, rid + ".xml")
        models.model_xml(r, mx)
        kernel = (["--attention-kernel", "flash2" if "nemotron4_340b" in rid else "cudnn"] if configured else [])
        j, p = runs.run_json(heldout_command(sim, root, r, mx) + kernel + extra)
        if j is None:
            why = runs.last_error(p)
            if "virtual stages" in why or "must divide" in why:
                print("%-46s not expressible in sim: %s" % (rid, why[5:110]))
                continue
            print("%-46s failed: %s" % (rid, why[:120]))
            failed += 1
            continue
        want, got = measured_s(r), j["time"]["step_s"]
        e = (got - want) / want
        errs.append(e)
        by_id[rid] = e
        fams.setdefault(source_model_precision(rid), []).append(e)
        fits = j["memory"]["fits"]
        oom += not fits
        print("%-46s measured %8.3f s  sim %8.3f s  %+6.1f%%%s"
              % (rid, want, got, 100 * e, "" if fits else "  (predicted OUT OF MEMORY)"))
    print("\nby source, model and precision")
    for k in sorted(fams):
        print("  %-34s %s" % (k, summary(fams[k])))
    print(summary(errs) + ("; %d predicted out of memory" % oom))
    drift(root, [r for r in rows if "maxtext" not in r["row_id"] and r["row_id"] not in INCONSISTENT])
    ok = not failed and not oom and errs
    ok = scale_drift(by_id, limit) and ok
    if tol is not None and errs:
        worst = max(abs(e) for e in errs)
        mae = statistics.mean(abs(e) for e in errs)
        bias = statistics.mean(errs)
        within = worst <= tol[0] and mae <= tol[1] and abs(bias) <= tol[2]
        print("%s: worst %.1f%% (<= %.0f%%), MAE %.1f%% (<= %.0f%%), |bias| %.1f%% (<= %.0f%%)"
              % ("ok" if within else "NOT WITHIN TOLERANCE", 100 * worst, 100 * tol[0], 100 * mae,
                 100 * tol[1], 100 * abs(bias), 100 * tol[2]))
        ok = ok and within
    if errs and heldout_bands(root, errs, mode):
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
