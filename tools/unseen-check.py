#!/usr/bin/env python3
"""Predict the published dense runs in tests/validation/data that no fit saw,
as a user types them, and print the error by source and by scale.

usage: unseen-check.py SIM [SOURCE_ROOT] [--extra "OPTIONS"] [--rows] [--tolerance MAE,BIAS]

The runs are those whose sets have the columns of training_calibration.csv
(h100_dense_heldout.csv, training_throughput.csv, megascale_scaling.csv),
each run as tools/fidelity.py runs it: the cluster file by GPU, --zero 3
and --framework fsdp where the framework says FSDP, --sequence-parallel
with TP, the interleaved schedule with virtual stages, --fp8 hybrid; and
torchtitan's published runs of pytorch_native.csv, as
tools/pytorch-native-check.py --as-fsdp runs them (--framework fsdp with
the layout, batch and recomputation: what a user who names only PyTorch
FSDP types).  Nothing a set's own check adds from the run's recipe is
passed, so the table is what a user sees who knows the layout alone.

Rows that a set's own check keeps out with evidence from their own table
(simtools/heldout.py INCONSISTENT; the MaxText rows, which shard as no sim
framework does; torchtitan's kept_out column) are printed and marked K and
summed apart.  A row sim cannot run is listed with sim's reason.

Prints, for all rows and for the rows not kept out: the summary of each
source (the row id's first word: dgxc2504, mbridge2511, megascale,
korthikanti, tt2412 ...), of each GPU count (8, 16-64, 128-512,
1,024-4,096, over 4,096) and of the whole.  --rows prints each row.
Error: sim's step time over the measured one, less 1 (negative: sim too
fast).  --tolerance fails (exit status 1) when the mean |error| or the
|mean error| of the rows not kept out exceeds the fraction given (meson test
validation-unseen holds the level sim reaches today, so that a change
that loses ground on what a user who knows only the layout sees is seen).
Exit status 0, 1 past a tolerance, or 2 on bad usage.
"""
import os, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from simtools import ROOT, models, options, runs
from simtools.commands import fidelity_command
from simtools.heldout import INCONSISTENT
from simtools.rows import measured_s, read_rows
from simtools.summary import ALIGNED, summary
from simtools.titan import DATA, model_layers, titan_command

SETS = ("h100_dense_heldout.csv", "training_throughput.csv", "megascale_scaling.csv")
SCALES = ((8, "8 GPUs or fewer"), (64, "16-64 GPUs"), (512, "128-512 GPUs"), (4096, "1,024-4,096 GPUs"),
          (10 ** 9, "over 4,096 GPUs"))


def scale(gpus):
    return next(label for top, label in SCALES if gpus <= top)


def calibration_rows(sim, root, tmp, extra):
    """(row id, GPUs, error or None, kept-out reason or '', sim's message)
    of every row of SETS, run as tools/fidelity.py runs it"""
    help_text = subprocess.run([sim, "--help"], capture_output=True, text=True).stdout
    topologies = subprocess.run([sim, "list", "topologies"], capture_output=True, text=True).stdout
    out = []
    for name in SETS:
        for r in read_rows(os.path.join(root, "tests", "validation", "data", name)):
            rid = r["row_id"]
            want = measured_s(r)
            kept = INCONSISTENT.get(rid, "") or ("MaxText (JAX) shards as no sim framework preset does"
                                                 if "maxtext" in rid else "")
            if want is None or not r["pp"] or not r["global_batch"] or not r["layers"]:
                out.append((rid, int(r["num_gpus"] or 0), None, kept, "the row lacks its layout, batch or time"))
                continue
            mx = os.path.join(tmp, rid + ".xml")
            models.model_xml(r, mx)
            j, p = runs.run_json(fidelity_command(sim, r, mx, help_text, topologies) + extra)
            if j is None:
                out.append((rid, int(r["num_gpus"]), None, kept, runs.last_error(p)[:100]))
                continue
            out.append((rid, int(r["num_gpus"]), j["time"]["step_s"] / want - 1, kept, ""))
    return out


def titan_rows(sim, root, extra):
    """the same for torchtitan's runs, as pytorch-native-check.py --as-fsdp"""
    layers = model_layers(sim)
    out = []
    for r in read_rows(os.path.join(root, DATA)):
        cmd, why = titan_command(sim, r, layers, as_fsdp=True)
        if cmd is None:
            out.append((r["row_id"], int(r["num_gpus"]), None, r.get("kept_out", ""), why))
            continue
        j, p = runs.run_json(cmd + extra)
        if j is None or p.returncode not in (0, 1):
            out.append((r["row_id"], int(r["num_gpus"]), None, r.get("kept_out", ""), runs.last_error(p)[:100]))
            continue
        got = j["time"]["tokens_per_s"] / j["plan"]["gpus"]
        out.append((r["row_id"], int(r["num_gpus"]), float(r["tokens_per_s_per_gpu"]) / got - 1,
                    r.get("kept_out", ""), ""))
    return out


def tables(rows, title):
    """the summaries by source, by scale and in all of rows"""
    print("\n%s" % title)
    for key, name in ((lambda r: r[0].split("_")[0], "by source"), (lambda r: scale(r[1]), "by GPU count")):
        print("  %s" % name)
        groups = {}
        for r in rows:
            groups.setdefault(key(r), []).append(r[2])
        order = sorted(groups) if name == "by source" else [l for _, l in SCALES if l in groups]
        for g in order:
            print("    %-22s %s" % (g, summary(groups[g], ALIGNED)))
    print("  %-24s %s" % ("all", summary([r[2] for r in rows], ALIGNED)))


def main(argv):
    show = "--rows" in argv
    argv = [a for a in argv if a != "--rows"]
    tol = options.take_fractions(argv, "--tolerance", 2)
    if tol == ():
        print("--tolerance: expected MAE,BIAS (fractions)")
        return 2
    extra = options.take_extra(argv)
    if extra is None:
        return 2
    if not argv or argv[0].startswith("-"):
        print(__doc__.strip().splitlines()[3])
        return 2
    sim = argv[0]
    root = argv[1] if len(argv) > 1 else ROOT
    with tempfile.TemporaryDirectory() as tmp:
        rows = calibration_rows(sim, root, tmp, extra) + titan_rows(sim, root, extra)
    print("published dense runs no fit saw, as a user types them (tools/fidelity.py's mapping; torchtitan's as "
          "--framework fsdp)")
    if extra:
        print("--extra on every row: %s" % " ".join(extra))
    done = [r for r in rows if r[2] is not None]
    if show:
        for rid, gpus, e, kept, _ in done:
            print("  %-46s %6d GPUs  %+6.1f%%%s" % (rid, gpus, 100 * e, "  K" if kept else ""))
    failed = [r for r in rows if r[2] is None]
    print("%d rows predicted, %d kept out with evidence (K), %d not run" % (len(done), sum(1 for r in done if r[3]),
                                                                          len(failed)))
    for rid, _, _, _, why in failed:
        print("  not run: %-40s %s" % (rid, why))
    tables([r for r in done if not r[3]], "rows not kept out")
    tables(done, "all rows, the kept-out ones (K) too")
    bad = 0
    if tol:
        e = [r[2] for r in done if not r[3]]
        for name, got, lim in (("MAE", statistics.mean(abs(v) for v in e), tol[0]),
                               ("|bias|", abs(statistics.mean(e)), tol[1])):
            print("%s %s %.1f%% (<= %.1f%%)" % ("ok  " if got <= lim else "FAIL", name, 100 * got, 100 * lim))
            bad += got > lim
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
