#!/usr/bin/env python3
"""Issue 16's figures as one table, measured on this machine:

  per estimate      median in-process time over every published run of
                    tests/validation (bench/validation-layouts.py, the
                    issue's measure), steady state; then over bench-
                    estimate's stress set (the GPT-3 175B dgxc layouts and
                    the README's): steady state (the default), every
                    micro-batch (--whole, as for charts) and the reference
                    (--exact: every micro-batch and every collective's
                    flows)
  sweep             Llama-3-70B on dgx8x4 (64 GPUs): every enumerated
                    layout, with 1 and 2 threads, the top 10 exact (the
                    default: layouts whose compute alone cannot reach the
                    top 10 are not simulated), and with --all (every layout
                    that fits simulated, as --csv and --chart do), 2
                    threads; layouts/s counts the enumerated ones (pruned
                    ones included) and the simulated ones; the 1- and
                    2-thread figures are each the fastest of three runs,
                    taken in turns with two one-thread sweeps at once (the
                    machine's own scaling, the most two threads can give)
  scale             16,384 GPUs with every replica simulated (--full-fidelity)
                    and 131,072 GPUs symmetric: wall time and peak RSS

usage: bench-table.py SIM BENCH_ESTIMATE SOURCE_ROOT"""
import os, re, subprocess, sys, tempfile, time

# absolute: meson passes the programs relative to the build directory, and
# the sweeps run from the source root
sim, bench, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]


def timed(cmd):
    """wall seconds, peak RSS in bytes and stdout of one run"""
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=root)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        code = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        if code not in (0, 1):
            sys.exit("%s: exit %d: %s" % (" ".join(cmd), code, err.read().strip()[-300:]))
        return wall, usage.ru_maxrss * 1024, out.read()  # ru_maxrss: KiB on Linux


def estimate(args):
    out = subprocess.run([bench, root] + args, capture_output=True, text=True, check=True).stdout
    m = re.search(r"(\d+) layouts.*?: ([0-9.]+) ms per estimate \(slowest ([0-9.]+) ms", out)
    return int(m.group(1)), float(m.group(2)), float(m.group(3))


rows = []
with tempfile.TemporaryDirectory() as tmp:
    subprocess.run([sys.executable, os.path.join(root, "bench", "validation-layouts.py"), root, tmp],
                   check=True, capture_output=True)
    n, med, worst = estimate(["--layouts", os.path.join(tmp, "layouts.tsv")])
    rows.append(("per estimate, %d published runs" % n, "%.2f ms median, %.0f ms slowest" % (med, worst), "2 ms"))
for mode in (None, "--whole", "--exact"):
    n, med, worst = estimate([mode] if mode else [])
    # the slowest published layouts (bench-estimate's own list), shown
    # beside the measure, not in its place
    rows.append(("per estimate, stress set, %s" % (mode or "steady"),
                 "%.1f ms median, %.1f ms slowest" % (med, worst), "-"))

sweep = [sim, "sweep", "--topology", "dgx8x4", "--model", "llama3-70b", "--quiet"]


def pair():
    """wall seconds of two one-thread sweeps run at once"""
    t0 = time.monotonic()
    ps = [subprocess.Popen(sweep + ["--threads", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=root)
          for _ in range(2)]
    for p in ps:
        p.wait()
    return time.monotonic() - t0


# the fastest of three, taken in turns so that each sees the machine as
# the others do: runs of one to three seconds on a shared 2-core machine
# vary by half from one to the next
runs = {1: [], 2: [], "pair": []}
for _ in range(3):
    for threads in (1, 2):
        runs[threads].append(timed(sweep + ["--threads", str(threads)]))
    runs["pair"].append(pair())
rate = {}
for threads in (1, 2):
    wall, _, out = min(runs[threads], key=lambda x: x[0])
    m = re.search(r"(\d+) layouts: (\d+) simulated", out)
    total, simulated = int(m.group(1)), int(m.group(2))
    rate[threads] = total / wall
    rows.append(("sweep llama3-70b dgx8x4, %d thread%s" % (threads, "" if threads == 1 else "s"),
                 "%.1f s: %.0f layouts/s (%.0f simulated/s)" % (wall, total / wall, simulated / wall),
                 "1,000 layouts/s"))
rows.append(("sweep scaling, 1 -> 2 threads", "%.2fx" % (rate[2] / rate[1]), "1.8x"))
# what the machine itself gives two processes: two one-thread sweeps at
# once against one alone (the most two threads could give here)
rows.append(("machine: 2 one-thread sweeps at once", "%.2fx the work of one in its time"
             % (2 * min(w for w, _, _ in runs[1]) / min(runs["pair"])), "-"))
wall, _, out = timed(sweep + ["--threads", "2", "--all"])
m = re.search(r"(\d+) layouts: (\d+) simulated", out)
rows.append(("sweep llama3-70b dgx8x4 --all, 2 threads",
             "%.1f s: %.0f layouts/s (%.0f simulated/s)" % (wall, int(m.group(1)) / wall, int(m.group(2)) / wall),
             "-"))

plan = ["--model", "llama3-70b", "--tp", "8", "--pp", "8"]
wall, rss, _ = timed([sim, "--topology", "dgx8x4", "--nodes", "2048"] + plan +
                     ["--dp", "256", "--global-batch", "2048", "--full-fidelity"])
rows.append(("16,384 GPUs, every replica", "%.2f s, %.2f GiB peak RSS (%.0f KiB per GPU)"
             % (wall, rss / 2**30, rss / 1024 / 16384), "10 s, 2 GiB"))
wall, rss, _ = timed([sim, "--topology", "dgx8x4", "--nodes", "16384"] + plan +
                     ["--dp", "2048", "--global-batch", "16384"])
rows.append(("131,072 GPUs, symmetric", "%.2f s, %.2f GiB peak RSS" % (wall, rss / 2**30), "1 s"))

print("%-40s %-48s %s" % ("figure", "measured", "target"))
for name, got, want in rows:
    print("%-40s %-48s %s" % (name, got, want))
