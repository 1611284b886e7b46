#!/usr/bin/env python3
"""Predict torchtitan's published benchmark rows with sim and print the error table.

usage: pytorch-native-check.py SIM [CSV] [--extra "OPTIONS"] [--commands]
                               [--tolerance WORST,MAE,BIAS] [--write | --check-band | --as-fsdp]

Reads CSV (default tests/validation/data/pytorch_native.csv, beside this
script's repository root): every row of the three benchmark files of
pytorch/torchtitan (FSDP2, TP / async TP, PP, CP, torch.compile, torchao
float8 on Grand Teton H100 96GB HBM2e at 500 W, and Trainy's H200 runs),
sources and assumptions in pytorch_native.md.  No fit has seen these rows:
the shipped grand-teton-h100.xml and dgx-h200.xml are used as shipped.

Each row runs as a user would type it:
  sim --topology grand-teton-h100 (the benchmark files' hardware; dgx-h200
      for H200 rows) --gpus N (N <= 8) or --nodes N/8, --model, --tp --pp
      --cp --dp FSDP, --zero 3, --micro-batch (the local batch; with PP the
      local batch over the PP micro-batches), --global-batch, --seq-len,
      --recompute none|selective|full (op-level SAC as sim's selective),
      float8: --fp8 hybrid --fp8-recipe tensorwise (torchao tensorwise) or
      blockwise (torchao rowwise, the nearest sim recipe: marked R),
      --fp8-params when the row says FSDP float8 all-gather, else
      --no-fp8-params; TP rows --tp-comm-overlap for async TP, else
      --no-tp-comm-overlap; PP rows --schedule 1f1b|interleaved with the
      layers split as torchtitan's generate_split_points (@9dec370) splits
      them, given as --pipeline-model-parallel-layout; --framework
      torchtitan, --torch-compile for the rows that compiled (marked C),
      else --no-torch-compile; --json -.
--extra adds OPTIONS to every row (to try e.g. --attention-kernel cudnn);
--commands prints each row's command.

--as-fsdp runs each row as a user who names only PyTorch FSDP would, as
tools/fidelity.py runs a row whose framework says FSDP: --framework fsdp
--zero 3 with the row's cluster, layout, batch, sequence and recomputation,
--fp8 hybrid for float8 rows, and nothing torchtitan-specific (no
--torch-compile, float8 recipe, async TP or pipeline split): the plans with
TP, PP or CP over 1 then take torchtitan's mechanics by themselves
(sim_plan_resolve_pytorch_parallelism), the FSDP-only ones llm-foundry's.
No band is written or checked in this mode.

Error: step-time error = published TPS / predicted TPS - 1 (negative: sim
is optimistic, too fast).  Prints every row, then summaries per source and
table, per GPU type and count, and per float8 recipe.  Rows sim cannot
express are listed as skipped with the reason.  Rows whose kept_out column
gives evidence from their own table that they do not measure what the
hardware and software can do are predicted and printed (flag K) but left
out of the summaries and the tolerance, and listed with the evidence.

--tolerance: also fail (exit status 1) when the worst |error|, the mean
|error| or the |mean signed error| of all predicted rows exceeds the
fraction given (meson test validation-pytorch-native holds the level the
model reaches today, so that a change that loses ground on these runs is
seen).

--write stores the summary's band (mean |error|, mean signed error, rows,
rows within 15 %) as the torchtitan band of the band file,
topologies/bands.xml, in the set of the Hopper cluster files
(simtools/clusters.py HOPPER: the rows ran on H100 and H200), which the
report of a --framework torchtitan plan prints and takes its step's range
from;
--check-band fails when a stored band is not the one the rows give.

Exit status: 0, unless sim failed with status 2 (bad input or error) on a
row (its message is printed, the rest still run) or a tolerance is
exceeded: 1; 2 on bad usage.
"""
import concurrent.futures, os, shlex, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from simtools import ROOT, bands, options, runs
from simtools.clusters import HOPPER
from simtools.rows import read_rows
from simtools.summary import ALIGNED, summary
from simtools.titan import DATA, model_layers, titan_command

GIB = 2 ** 30

SOURCE = {"llama3_h100_202412_torchtitan.md": "titan 2024-12",
          "asyncTP_llama3_h100_2025-06_torchtitan.md": "titan asyncTP 2025-06",
          "llama3-8b_h200_202506_trainy-whitefiber.md": "Trainy H200 2025-06"}


def mem_summary(diffs):
    if not diffs:
        return "memory: not published"
    return ("memory (sim - published) over %d rows: mean %+5.1f GiB, mean |.| %4.1f GiB"
            % (len(diffs), statistics.mean(diffs), statistics.mean(abs(d) for d in diffs)))


def main(argv):
    show = "--commands" in argv
    as_fsdp = "--as-fsdp" in argv
    mode = options.take_mode(argv)
    argv = [a for a in argv if a not in ("--commands", "--as-fsdp")]
    if as_fsdp and mode:
        print("%s: not with --as-fsdp (the stored band is torchtitan's)" % mode)
        return 2
    tol = options.take_fractions(argv, "--tolerance", 3)
    if tol == ():
        print("--tolerance: expected WORST,MAE,BIAS (fractions)")
        return 2
    extra = options.take_extra(argv)
    if extra is None:
        return 2
    if not argv or argv[0].startswith("-"):
        print(__doc__.strip().splitlines()[2])
        return 2
    sim = argv[0]
    data = argv[1] if len(argv) > 1 else os.path.join(ROOT, DATA)
    rows = read_rows(data)
    layers = model_layers(sim)
    plans = [(r,) + titan_command(sim, r, layers, as_fsdp) for r in rows]
    todo = [(r, cmd + extra) for r, cmd, _ in plans if cmd]
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        results = dict(zip((r["row_id"] for r, _ in todo), pool.map(runs.run_json, (c for _, c in todo))))

    print("torchtitan published runs vs sim (grand-teton-h100.xml / dgx-h200.xml as shipped; no fit saw these rows)")
    if as_fsdp:
        print("--as-fsdp: each row as --framework fsdp with its layout, batch, recomputation and --fp8 hybrid only")
    print("error = published TPS / sim TPS - 1 = sim step time / published step time - 1 (negative: sim too fast)")
    if extra:
        print("--extra on every row: %s" % " ".join(extra))
    print()
    hdr = ("%-41s %4s %-15s %8s %8s %7s %6s %6s %-4s %s"
           % ("row", "GPUs", "fsdp/tp/pp/cp", "pub TPS", "sim TPS", "error", "pubGiB", "simGiB", "fits", "flags"))
    print(hdr)
    print("-" * len(hdr))
    errs, groups, mems, skipped, failed, kept = {}, {}, {}, [], [], []
    for r, cmd, why in plans:
        rid = r["row_id"]
        if cmd is None:
            skipped.append((rid, why))
            continue
        j, p = results[rid]
        rc = p.returncode
        if rc not in (0, 1):
            j = None
        if j is None:
            msg = runs.last_error(p)
            failed.append((rid, rc, msg))
            print("%-41s sim exit status %d: %s" % (rid, rc, msg[:90]))
            continue
        pub = float(r["tokens_per_s_per_gpu"])
        got = j["time"]["tokens_per_s"] / j["plan"]["gpus"]
        e = pub / got - 1
        peak = j["memory"]["peak_bytes"] / GIB
        pmem = float(r["memory_gib"]) if r["memory_gib"] else None
        if not r.get("kept_out"):
            errs[rid] = e
            if pmem is not None:
                mems[rid] = peak - pmem
        layout_s = "%s/%s/%s/%s" % (r["fsdp"], r["tp"], r["pp"], r["cp"])
        print("%-41s %4s %-15s %8.1f %8.1f %+6.1f%% %6s %6.1f %-4s %s"
              % (rid, r["num_gpus"], layout_s, pub, got, 100 * e, "%.1f" % pmem if pmem is not None else "-",
                 peak, "yes" if rc == 0 else "OOM", why + ("K" if r.get("kept_out") else "")))
        if show:
            print("    " + " ".join(shlex.quote(c) for c in cmd + extra))
        if r.get("kept_out"):
            kept.append((rid, e, r["kept_out"]))
            continue
        src = SOURCE.get(os.path.basename(r["source_file"].split(" @")[0].split()[-1]), r["source_file"])
        kind = "H200" if "H200" in r["gpu"] else "H100"
        for g in (("source", src), ("table", "%s, %s" % (src, r["table"])),
                  ("gpus", "%s x %4d" % (kind, int(r["num_gpus"]))),
                  ("float8", "float8 %s%s" % (r["float8"] or "none", " (sim blockwise)" if r["float8"] == "rowwise" else "")),
                  ("compile", "torch.compile %s" % r["compile"])):
            groups.setdefault(g, []).append(rid)
    print("flags: C torch.compile (--torch-compile), R torchao rowwise float8 run as sim's "
          "blockwise recipe,\n       K kept out of the summaries (see the end)")
    for kind, title in (("source", "per source"), ("table", "per table"), ("gpus", "per GPU type and count"),
                        ("float8", "per float8 recipe"), ("compile", "per torch.compile")):
        print("\n%s" % title)
        for (k, name), ids in sorted(groups.items()):
            if k != kind:
                continue
            m = [mems[i] for i in ids if i in mems]
            print("  %-48s %s" % (name, summary([errs[i] for i in ids], ALIGNED)))
            if kind in ("source", "table") and m:
                print("  %-48s %s" % ("", mem_summary(m)))
    if errs:
        print("\nall predicted rows: %s" % summary(list(errs.values()), ALIGNED))
        print("                    %s" % mem_summary(list(mems.values())))
        oom = [i for i in errs if results[i][1].returncode == 1]
        print("                    %d of %d predicted to fit the shipped cluster file's GPU (%s)"
              % (len(errs) - len(oom), len(errs), ", ".join(oom) if oom else "all fit"))
    print("\nkept out of the summaries, with the evidence from their own table: %d" % len(kept))
    for rid, e, why in kept:
        print("  %-41s %+6.1f%%  %s" % (rid, 100 * e, why))
    print("\nskipped (not expressible in sim): %d" % len(skipped))
    for rid, why in skipped:
        print("  %-41s %s" % (rid, why))
    if failed:
        print("\nsim failed (exit status 2 or no JSON) on %d rows:" % len(failed))
        for rid, rc, msg in failed:
            print("  %-41s status %d: %s" % (rid, rc, msg))
    bad = []
    if tol and errs:
        e = list(errs.values())
        worst, mae, bias = max(abs(v) for v in e), statistics.mean(abs(v) for v in e), abs(statistics.mean(e))
        for name, got, lim in (("worst |error|", worst, tol[0]), ("MAE", mae, tol[1]), ("|bias|", bias, tol[2])):
            ok = got <= lim
            print("%s %s %.1f%% (<= %.0f%%)" % ("ok  " if ok else "FAIL", name, 100 * got, 100 * lim))
            if not ok:
                bad.append(name)
    stale = 0
    if mode and errs:
        print()
        stale = bands.bands([os.path.join(ROOT, "topologies", name) for name in HOPPER], "torchtitan",
                            "torchtitan", list(errs.values()), mode, "pytorch-native-check.py")
    return 1 if failed or bad or stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
