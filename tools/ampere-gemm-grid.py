#!/usr/bin/env python3
"""Write the A100's GEMM table: its measured size curve, shaped by Hopper's
measured loss on thin GEMMs.

usage: ampere-gemm-grid.py [SOURCE_ROOT] [--check]

What is published for the A100 (tests/validation/data/a100-sxm/
gemm-published.csv) is a curve of square GEMMs, m = n = k from 256 to 8192
(NVIDIA's "CUDA 11 Features Revealed" blog, read off its figure), and one
best shape (Stas Bekman's MAMF finder, 1024 x 10240 x 5120 at 271.2
TFLOP/s).  A training step's GEMMs are rarely square: a model of hidden 768
multiplies 50,000 tokens by a 768 x 2304 weight, and a square of the same
FLOPs overstates its rate.  Read at the cube root of m n k alone, the curve
gave a small model's GEMMs the rate of a cube.

Hopper's table (tests/validation/data/h100-sxm/gemm-published.csv, XLA's
sm_90 grid of 125 shapes, 256 to 4096 per side) measures how far a shape
falls from a cube of the same FLOPs.  No rectangular A100 measurement is in
the tree, so the A100's table takes that factor from Hopper:

    rate(m, n, k) = curve(cbrt(m n k)) x H(m', n', k') / D(cbrt(m' n' k'))

where curve is the A100's square curve (interpolated in log2 of the side,
held at its ends), H the Hopper grid, D its diagonal (the cubes 256^3 ...
4096^3, interpolated in log2), and m', n', k' the sides clamped to the
Hopper grid (4096).  A cube keeps the curve's rate (the factor is 1 on the
grid's diagonal).  The grid's sides are 256 ... 8192, powers of two; sim
interpolates between them in log2 and holds beyond.  Checked against the one
rectangular A100 measurement, which the grid is not built from: MAMF's
1024 x 10240 x 5120 (sim validate --gemm, tests/test-calibrate.py).

Rewrites the <gemm dtype="bf16"> table of every topology that runs the A100
SXM (dgx-a100.xml, dgx-a100-40gb.xml, dgx-a800.xml); with --check, writes
nothing and exits 1 when a file's table differs from what it would write.
"""
import csv, math, os, re, sys

FILES = ["dgx-a100.xml", "dgx-a100-40gb.xml", "dgx-a800.xml"]
SIDES = [256, 512, 1024, 2048, 4096, 8192]
HOPPER_EDGE = 4096


def gemm_rows(path):
    """(m, n, k) -> FLOP/s of the gemm rows of a sim-microbench/1 CSV"""
    rows = csv.DictReader(line for line in open(path) if not line.startswith("#"))
    return {(int(r["m"]), int(r["n"]), int(r["k"])): float(r["rate_per_s"])
            for r in rows if r["kind"] == "gemm" and r["dtype"] == "bf16"}


def log_interp(points, x):
    """points sorted by side, linear in log2 of the side, held at the ends"""
    if x <= points[0][0]:
        return points[0][1]
    if x >= points[-1][0]:
        return points[-1][1]
    for (a, ra), (b, rb) in zip(points, points[1:]):
        if a <= x <= b:
            return ra + (rb - ra) * (math.log2(x) - math.log2(a)) / (math.log2(b) - math.log2(a))
    return points[-1][1]


def table(root):
    data = os.path.join(root, "tests", "validation", "data")
    ampere = gemm_rows(os.path.join(data, "a100-sxm", "gemm-published.csv"))
    hopper = gemm_rows(os.path.join(data, "h100-sxm", "gemm-published.csv"))
    curve = sorted((m, r) for (m, n, k), r in ampere.items() if m == n == k)
    diagonal = sorted((m, r) for (m, n, k), r in hopper.items() if m == n == k)
    lines = []
    for m in SIDES:
        for n in SIDES:
            for k in SIDES:
                c = [min(x, HOPPER_EDGE) for x in (m, n, k)]
                shape = hopper[tuple(c)] / log_interp(diagonal, (c[0] * c[1] * c[2]) ** (1 / 3))
                rate = log_interp(curve, (m * n * k) ** (1 / 3)) * shape
                lines.append('      <point m="%d" n="%d" k="%d" rate="%.3fTFLOP/s"/>' % (m, n, k, rate / 1e12))
    return "\n".join(lines) + "\n"


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    points = table(root)
    stale = 0
    for name in FILES:
        path = os.path.join(root, "topologies", name)
        text = open(path).read()
        m = re.search(r'(    <gemm dtype="bf16">\n)(.*?)(    </gemm>)', text, re.S)
        if m is None:
            raise SystemExit("%s: expected a <gemm dtype=\"bf16\"> table" % path)
        if m.group(2) == points:
            continue
        if check:
            print("%s: its GEMM table is not what tools/ampere-gemm-grid.py writes" % path)
            stale += 1
            continue
        open(path, "w").write(text[:m.start(2)] + points + text[m.end(2):])
        print("wrote", path)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
