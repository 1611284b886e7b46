#!/usr/bin/env python3
"""Predict the held-out dense H100 runs with sim and print the error table.

usage: heldout-check.py SIM [SOURCE_ROOT] [--tolerance WORST,MAE,BIAS] [--extra "OPTIONS"]
                         [--scale-drift POINTS] [--kernels-as-configured] [--write | --check-band]

Reads SOURCE_ROOT/tests/validation/data/h100_dense_heldout.csv (the columns
of tests/validation/data/training_calibration.csv; sources and conventions in
h100_dense_heldout.md): NVIDIA's published DGX H100 pre-training runs of
Llama 3/3.1 8B, 70B and 405B and Nemotron-4 15B and 340B (dgxc-benchmarking
releases v25.01-v25.05.04, Megatron-Bridge 25.09-26.02).  No fit has seen
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
    own split builds it (blackwell-check.py's counted_split).
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
as no sim framework preset does, and the rows in INCONSISTENT below, whose
published layout contradicts the same run in a later release.

The mean |error| of the predicted rows is the Hopper generation's held-out
error band, which the report prints under the step time: --write stores it
as the heldout-error and heldout-rows attributes of the <efficiency> element
of every cluster file that carries the H100 constants (HOPPER below);
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
import csv, importlib.util, json, os, re, statistics, subprocess, sys, tempfile

DATA = os.path.join("tests", "validation", "data", "h100_dense_heldout.csv")
# the shipped cluster files whose <efficiency> is the H100 fit's
# (tools/fit-efficiency.py SHIPPED["h100"])
HOPPER = ("dgx-h100.xml", "dgx8x4.xml", "dgx-h200.xml", "dgx-h800.xml", "grand-teton-h100.xml")

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


_blackwell = []


def blackwell():
    """tools/blackwell-check.py, whose counted_split this script shares (loaded once)"""
    if not _blackwell:
        spec = importlib.util.spec_from_file_location(
            "blackwell_check", os.path.join(os.path.dirname(os.path.abspath(__file__)), "blackwell-check.py"))
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        _blackwell.append(m)
    return _blackwell[0]


def model_xml(r, path):
    rid = r["row_id"]
    nemotron = "nemotron" in rid
    heads = r["heads"]
    attrs = [("layers", r["layers"]), ("hidden", r["hidden"]), ("heads", heads),
             ("kv-heads", r["kv_heads"] or heads), ("ffn-hidden", r["ffn_hidden"]),
             ("vocab", r["vocab"]), ("seq-len", r["seq_len"]),
             ("mlp", "gelu" if nemotron else "swiglu"), ("norm", "layernorm" if nemotron else "rmsnorm"),
             ("position", "rope"), ("tied-embeddings", "false"), ("bias", "false"), ("dropout", "false")]
    with open(path, "w") as f:
        f.write('<model name="%s" description="published run %s"><transformer %s/></model>\n'
                % (os.path.basename(path)[:-4], rid, " ".join('%s="%s"' % a for a in attrs)))




def command(sim, root, r, mx):
    gpus = int(r["num_gpus"])
    tp, pp, cp = int(r["tp"]), int(r["pp"]), int(r["cp"] or 1)
    dp = int(r["dp"]) if r["dp"] else gpus // (tp * pp * cp)
    fsdp = "FSDP" in r["framework"]
    cmd = [sim, "--topology", os.path.join(root, "topologies", "dgx-h100.xml"), "--nodes", str(max(1, gpus // 8)),
           "--model", mx, "--tp", str(tp), "--pp", str(pp), "--dp", str(dp),
           "--micro-batch", r["micro_batch"] or "1", "--global-batch", r["global_batch"],
           "--recompute", "none", "--zero", "3" if fsdp else "1", "--framework", "megatron"]
    if cp > 1:
        cmd += ["--cp", str(cp)]
    if tp > 1:
        cmd += ["--sequence-parallel"]
    if r["vpp_chunks"] and int(r["vpp_chunks"]) > 1:
        cmd += ["--schedule", "interleaved", "--virtual-stages", r["vpp_chunks"]]
    cmd += blackwell().counted_split(r, pp)
    prec = r["precision"] or ""
    if prec.startswith("fp8"):
        cmd += ["--fp8", "hybrid"]
        if "FP8-CS" in prec:
            cmd += ["--fp8-recipe", "current"]
    return cmd


def measured_s(r):
    if r["iter_time_s"]:
        return float(r["iter_time_s"])
    return int(r["global_batch"]) * int(r["seq_len"]) / float(r["tokens_per_s"])


def summary(errs):
    a = [abs(e) for e in errs]
    return ("%d rows: %d within 15%%, MAE %.1f%%, median %.1f%%, bias %+.1f%%, worst %+.1f%%"
            % (len(errs), sum(1 for v in a if v <= 0.15), 100 * statistics.mean(a), 100 * statistics.median(a),
               100 * statistics.mean(errs), 100 * max(errs, key=abs)))


def family(rid):
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


def stored_band(path):
    m = re.search(r'<efficiency [^>]*heldout-error="([0-9.]+)" heldout-rows="([0-9]+)"', open(path).read())
    return (float(m.group(1)), int(m.group(2))) if m else None


def bands(root, errs, mode):
    """print the band, write it or check the stored ones; the count of stale files"""
    now = (round(statistics.mean(abs(e) for e in errs), 3), len(errs))
    stale = 0
    for name in HOPPER:
        path = os.path.join(root, "topologies", name)
        have = stored_band(path)
        print("%-14s held-out band +/-%.1f%% on %d runs: %s"
              % (name, 100 * now[0], now[1], "stored" if have == now else "STALE: stored %s" % (have,)))
        if mode == "--write" and have != now:
            src = open(path).read()
            m = re.search(r"<efficiency [^>]*?(\s*/>)", src)
            el = re.sub(r' heldout-error="[^"]*" heldout-rows="[^"]*"', "", m.group(0)[:-len(m.group(1))])
            el += ' heldout-error="%.3f" heldout-rows="%d"' % now + m.group(1)
            open(path, "w").write(src[:m.start()] + el + src[m.end():])
        elif mode == "--check-band" and have != now:
            stale += 1
    return stale


def take_tolerance(argv):
    """the comma-separated fractions of --tolerance A,B,..., removed from
    argv; None without it (also used by a100-40gb-check.py)"""
    if "--tolerance" not in argv:
        return None
    i = argv.index("--tolerance")
    tol = [float(v) for v in argv[i + 1].split(",")]
    del argv[i:i + 2]
    return tol


def scale_drift(by_id, limit):
    """the scaling series of by_id (row id -> error) and the mean drift from
    the smallest GPU count to the largest; False when --scale-drift's limit
    is given and exceeded"""
    series = {}
    for rid, e in by_id.items():
        head, _, n = rid.rpartition("_")
        if n.isdigit():
            series.setdefault(head, []).append((int(n), e))
    drifts = []
    print("\nscaling series (error at the largest GPU count less at the smallest, in points)")
    for head in sorted(series):
        v = sorted(series[head])
        if len(v) < 3 or v[-1][0] < 8 * v[0][0]:
            continue
        drifts.append(100 * (v[-1][1] - v[0][1]))
        print("  %-38s %5d -> %5d GPUs: %+6.1f%% -> %+6.1f%%  drift %+5.1f"
              % (head, v[0][0], v[-1][0], 100 * v[0][1], 100 * v[-1][1], drifts[-1]))
    if not drifts:
        return True
    mean = statistics.mean(drifts)
    ok = limit is None or abs(mean) <= limit
    print("  %d series: mean drift %+.2f points, mean |drift| %.2f%s"
          % (len(drifts), mean, statistics.mean(abs(d) for d in drifts),
             "" if limit is None else " (%s: |mean| <= %g)" % ("ok" if ok else "NOT WITHIN", limit)))
    return ok


def main(argv):
    mode = next((a for a in argv if a in ("--write", "--check-band")), None)
    argv = [a for a in argv if a not in ("--write", "--check-band")]
    extra = []
    configured = "--kernels-as-configured" in argv
    argv = [a for a in argv if a != "--kernels-as-configured"]
    if configured and mode == "--write":
        print("--write: not with --kernels-as-configured (the stored band is of the files as shipped)")
        return 2
    extra = blackwell().take_extra(argv, mode)
    if extra is None:
        return 2
    tol = take_tolerance(argv)
    limit = None
    if "--scale-drift" in argv:
        i = argv.index("--scale-drift")
        limit = float(argv[i + 1])
        del argv[i:i + 2]
    if not argv:
        print(__doc__.strip().splitlines()[2])
        return 2
    sim = argv[0]
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tmp = tempfile.mkdtemp()
    errs, fams, failed, oom, by_id = [], {}, 0, 0, {}
    print("held-out dense H100 runs: published vs sim (dgx-h100.xml as shipped; no fit saw these rows)")
    rows = list(csv.DictReader(line for line in open(os.path.join(root, DATA)) if not line.startswith("#")))
    for r in rows:
        rid = r["row_id"]
        if "maxtext" in rid:
            print("%-46s left out: MaxText (JAX) shards as no sim framework preset does" % rid)
            continue
        if rid in INCONSISTENT:
            print("%-46s kept out: %s" % (rid, INCONSISTENT[rid]))
            continue
        mx = os.path.join(tmp, rid + ".xml")
        model_xml(r, mx)
        kernel = (["--attention-kernel", "flash2" if "nemotron4_340b" in rid else "cudnn"] if configured else [])
        p = subprocess.run(command(sim, root, r, mx) + kernel + extra + ["--json", "-"], capture_output=True,
                           text=True, timeout=600)
        try:
            j = json.loads(p.stdout[p.stdout.index("{"):])
        except ValueError:
            why = (p.stderr.strip().splitlines() or ["no output"])[-1]
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
        fams.setdefault(family(rid), []).append(e)
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
    if errs and bands(root, errs, mode):
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
