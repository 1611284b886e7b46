#!/usr/bin/env python3
"""Fit a GPU generation's training efficiency constants on published runs.

usage: tools/fit-efficiency.py SIM CSV --gpu h100|a100 [--lofo] [--write] [--jobs N] [--kernels-as-configured]

The constants are the five of a topology's <efficiency> element
(sim/sim-topology.h): sustained-clock, hbm, kernel-fixed, host-launch,
comm-slowdown.  Each is searched only inside its prior range (PRIORS below,
with the source of each range); nothing is fitted per row, per model or per
layout.  The objective is the mean absolute relative error of the step time
over the bf16 rows of CSV run on that GPU (the rows
tests/validation/data/README.md allows a fit to use), each predicted with
`SIM --efficiency ...` as a user would run it (the shipped cluster file of
the GPU, --nodes, the row's layout, ZeRO-3 and --framework fsdp for FSDP
rows, ZeRO-1 and --framework megatron otherwise: simtools/calibration.py,
which also holds the rows kept out, INCONSISTENT).

--lofo   also fit once without each model family and report the error on
         the family left out (the honest estimate of the error on new runs),
         then once without each published source (one table of one
         document, source_of below) and the error on the source left out:
         how the constants carry to a table, a cluster and a date no fit
         saw (a generation whose rows come from one table has none to
         leave out, and says so)
--write  replace the five constants of the <efficiency .../> element of every
         shipped topology of that GPU generation with the fitted values, and
         (with --lofo) store the leave-one-family-out error as their fitted
         band in topologies/bands.xml
--kernels-as-configured
         an experiment (not with --write): also pass each row the attention
         kernel its recipe configures (simtools/calibration.py KERNELS),
         which fidelity.py cannot pass; the shipped constants are fitted
         without it
"""
import os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from simtools import ROOT, bands
from simtools.calibration import INCONSISTENT, Runner, select_rows
from simtools.clusters import HOPPER
from simtools.rows import measured_s
from simtools.summary import CALIBRATION, summary

# name, low, high, unit scale for the command line, and why the range.
PRIORS = [
    # Sustained tensor-core clock in training relative to the clock of the
    # GEMM tables.  A100 at its 400 W limit drops from 1410 to ~1200 MHz
    # under FlashAttention-2 (0.85; liangan1/GPU_travel
    # performance/flash-attn/README.md @07d0469e); an 8192^3 cuBLAS GEMM on
    # random data reaches 257 of 288 TFLOP/s on predictable data (0.89;
    # H. He, "Strangely, matrix multiplications on GPUs run faster when
    # given predictable data", thonking.ai); NVIDIA's A100 HPL peak uses
    # the 1305 MHz it sustains (0.93, glennklockwood.com/garden/peak-FLOPS).
    # H100 SXM: the 989 TFLOP/s peak assumes 1830 of its 1980 MHz (0.92).
    # Range 0.75-1.0: below the lowest of these to none.
    ("sustained-clock", 0.75, 1.00, 1.0, ""),
    # Achievable / data-sheet HBM bandwidth: BabelStream Triad reaches
    # 84.6 % on A100-SXM4-80GB (ukri-bench/benchmark-BabelStream README),
    # 88.6 % on A100-SXM4-40GB (argonne-lcf/ALCFBeginnersGuide
    # polaris/02_profiling.md), 84.7 % on H100 NVL.  Range 0.80-0.92.
    ("hbm", 0.80, 0.92, 1.0, ""),
    # GPU time per kernel beyond its work (launch gap, ramp and tail wave).
    # No published A100/H100 figure was found; 1-10 us brackets the 4-6 us
    # host launch cost below, which a kernel's gap cannot much exceed
    # while the host runs ahead.
    ("kernel-fixed", 1e-6, 10e-6, 1e6, "us"),
    # Host CPU time to issue one kernel: 4-6 us through the CUDA runtime
    # (susun-blog.com/blog/pegainfer-3-cuda-graph) to ~20 us for a PyTorch
    # eager element-wise op (NVIDIA Nsight Systems guide, as quoted by
    # groundy.com).  Range 4-20 us.
    ("host-launch", 4e-6, 20e-6, 1e6, "us"),
    # Compute slow-down while NCCL kernels run beside it: 18.9 % on average,
    # 40 % at most, over GPT and Llama training on 4x A100 and 4x H100
    # (Lee et al. 2025, arXiv:2507.03114, abstract).  Range 0-0.40.
    ("comm-slowdown", 0.0, 0.40, 1.0, ""),
]


# the shipped cluster files of each GPU generation, which --write rewrites
SHIPPED = {"h100": HOPPER, "a100": ("dgx-a100.xml", "dgx-a800.xml", "dgx-a100-40gb.xml")}


def model_family(rid):
    """the family a row is left out with (--lofo): the NeMo model, or an MPT
    size third"""
    if rid.startswith("dgxc_"):
        return "_".join(rid.split("_")[1:3])          # gpt3_175b, nemotron4_15b, ...
    # the MPT runs are one model family in nine sizes: left out by thirds
    # (125m-760m, 1b-7b, 13b-70b) so that each fit is tested on sizes it
    # has not seen
    m = re.match(r"mosaic_a100_\d+gb_(?:amp_)?bf16_([0-9a-z]+)_", rid)
    if m is None:
        return rid
    size = m.group(1)
    scale = float(size[:-1]) * (1e-3 if size.endswith("m") else 1)
    return "mpt_125m-760m" if scale < 1 else "mpt_1b-7b" if scale < 10 else "mpt_13b-70b"


def source_of(r):
    """the published table a row was copied from: its source_locator's
    document, and the section or row header inside it, without the
    precision (a table's BF16 and FP8 rows come from one benchmark run of
    one cluster); the locators name them as 'github OWNER/REPO PATH @COMMIT
    ..., section "NAME"' or '; row header "NAME"'"""
    loc = r["source_locator"]
    doc = loc.split(" @")[0]
    m = re.search(r'(?:section|row header) "([^"]*)"', loc)
    if m is None:
        return doc
    # the row header's precision and layout: "Nemotron4 15b 24.11 BF16 (TP=4, ...)"
    section = re.sub(r"\s+(?:BF16|FP8)\b.*$", "", m.group(1))
    return "%s, %s" % (doc, section)


def left_out(runner, rows, u, key, label):
    """fit once without each group of rows (key of a row) and print the error
    on the group left out; the errors, every row's once"""
    groups = sorted({key(r) for r in rows})
    held = []
    if len(groups) < 2:
        print("leave-one-%s-out: the rows come from one %s (%s): none to leave out" % (label, label, groups[0]))
        return held
    for g in groups:
        train = [r for r in rows if key(r) != g]
        test = [r for r in rows if key(r) == g]
        ug, _ = fit(runner, train, u0=u, iters=40)
        e = list(runner.errors(to_x(ug), test).values())
        held += e
        if len(g) > 16:
            print("left out %s\n         %-16s %s" % (g, "", summary(e, CALIBRATION)))
        else:
            print("left out %-16s %s" % (g, summary(e, CALIBRATION)))
    print("leave-one-%s-out: %s" % (label, summary(held, CALIBRATION)))
    return held


def eff_arg(x):
    return ",".join("%s=%.6g%s" % (n, v * scale, unit) for (n, lo, hi, scale, unit), v in zip(PRIORS, x))


def clip(u):
    return [min(1.0, max(0.0, v)) for v in u]


def to_x(u):
    return [lo + v * (hi - lo) for (n, lo, hi, s, un), v in zip(PRIORS, u)]


def nelder_mead(f, u0, step=0.25, iters=80):
    """Nelder-Mead in the unit cube of the priors (points clipped into it)."""
    n = len(u0)
    pts = [clip(u0)] + [clip([u0[j] + (step if j == i else 0) for j in range(n)]) for i in range(n)]
    vals = [f(p) for p in pts]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        if vals[-1] - vals[0] < 1e-5:
            break
        c = [sum(p[j] for p in pts[:-1]) / n for j in range(n)]
        refl = clip([c[j] + (c[j] - pts[-1][j]) for j in range(n)])
        fr = f(refl)
        if fr < vals[0]:
            exp = clip([c[j] + 2 * (c[j] - pts[-1][j]) for j in range(n)])
            fe = f(exp)
            pts[-1], vals[-1] = (exp, fe) if fe < fr else (refl, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = refl, fr
        else:
            con = clip([c[j] + 0.5 * (pts[-1][j] - c[j]) for j in range(n)])
            fc = f(con)
            if fc < vals[-1]:
                pts[-1], vals[-1] = con, fc
            else:
                pts = [pts[0]] + [clip([pts[0][j] + 0.5 * (p[j] - pts[0][j]) for j in range(n)]) for p in pts[1:]]
                vals = [vals[0]] + [f(p) for p in pts[1:]]
    i = min(range(n + 1), key=lambda k: vals[k])
    return pts[i], vals[i]


def fit(runner, rows, u0=None, iters=80):
    u0 = u0 or [0.5] * len(PRIORS)
    return nelder_mead(lambda u: runner.mae(to_x(u), rows), u0, iters=iters)


def write_topologies(gpu, x, held=None):
    """rewrite the five constants of the <efficiency> element of every
    shipped cluster file of the generation (its other attributes, bands=
    among them, stay) and store the leave-one-family-out error (held) as
    the fitted band of their set of the band file (simtools/bands.py), or
    remove that band when there is none (it would be of other constants);
    the held-out, MoE, FSDP and torchtitan bands stay: their tests say when
    the new constants leave them stale"""
    values = ("%.3f" % x[0], "%.3f" % x[1], "%.2fus" % (x[2] * 1e6), "%.2fus" % (x[3] * 1e6), "%.3f" % x[4])
    band = bands.band_of(held, "fitted") if held else None
    written = []
    for name in SHIPPED[gpu]:
        path = os.path.join(ROOT, "topologies", name)
        text = open(path).read()
        found = list(re.finditer(r"<efficiency [^>]*/>", text))
        if len(found) != 1:
            raise SystemExit("%s: expected one <efficiency .../> element, found %d" % (path, len(found)))
        el = found[0].group(0)
        for (attr, _, _, _, _), v in zip(PRIORS, values):
            el, n = re.subn(r'(\s%s=")[^"]*"' % attr, lambda m, v=v: m.group(1) + v + '"', el)
            if n != 1:
                raise SystemExit("%s: expected one %s attribute of <efficiency>, found %d" % (path, attr, n))
        open(path, "w").write(text[:found[0].start()] + el + text[found[0].end():])
        print("wrote", path)
        bands.store(path, "fitted", band)
        if bands.band_file(path) not in written:
            written.append(bands.band_file(path))
    for file in written:
        print("wrote", file)


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    opts = {a.split("=")[0]: (a.split("=", 1)[1] if "=" in a else True) for a in argv if a.startswith("--")}
    if "--gpu" in argv:
        gpu = argv[argv.index("--gpu") + 1]
        args.remove(gpu)
    else:
        gpu = opts.get("--gpu")
    if len(args) != 2 or gpu not in SHIPPED:
        print(__doc__.strip().splitlines()[2])
        return 2
    jobs = int(opts.get("--jobs", os.cpu_count() or 2))
    configured = "--kernels-as-configured" in opts
    if configured and "--write" in opts:
        print("--kernels-as-configured: an experiment, not with --write")
        return 2
    sim, data = args
    rows = select_rows(data, gpu)
    runner = Runner(sim, rows, jobs, configured, eff_arg)
    u, val = fit(runner, rows)
    x = to_x(u)
    print("fitted on %d %s bf16 rows of %s: in-sample MAE %.2f%%" % (len(rows), gpu, data, 100 * val))
    print("%-16s %10s   %s" % ("constant", "value", "prior range"))
    for (n, lo, hi, scale, unit), v in zip(PRIORS, x):
        print("%-16s %10.4g   %g-%g %s" % (n, v * scale, lo * scale, hi * scale, unit))
    print("--efficiency " + eff_arg(x))
    errs = runner.errors(x, rows)
    for r in rows:
        print("  %-46s measured %9.3f s  %+6.1f%%" % (r["row_id"], measured_s(r), 100 * errs[r["row_id"]]))
    print("in-sample: " + summary(list(errs.values()), CALIBRATION))
    out = select_rows(data, gpu, inconsistent=True)
    if out:
        errs = Runner(sim, out, jobs, configured, eff_arg).errors(x, out)
        for r in out:
            print("  kept out %-37s measured %9.3f s  %+6.1f%%: %s"
                  % (r["row_id"], measured_s(r), 100 * errs[r["row_id"]], INCONSISTENT[r["row_id"]]))
    held = []
    if "--lofo" in opts:
        held = left_out(runner, rows, u, lambda r: model_family(r["row_id"]), "family")
        left_out(runner, rows, u, source_of, "source")
    if "--write" in opts:
        write_topologies(gpu, x, held)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
