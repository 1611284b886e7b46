#!/usr/bin/env python3
"""How step time and cost change with the cluster size, from Python.

usage: python3 examples/python-cluster-sizes.py [MODEL] [OUT.png]

For Llama 3 70B (or MODEL) on 1, 2, 4, 8 and 16 DGX H100 nodes,
simtrain.sweep() ranks every layout of the job on each size (as `sim sweep
--top 1`, the model's global batch) and the fastest that fits is kept; the
time and cost to train 1T tokens at $2 per GPU-hour are printed and plotted
with matplotlib.  Each figure is the one `sim sweep` prints for the same
job; the shaded band is the step's error band, as the report gives it.

Needs the binding (./quickstart.sh python, or PYTHONPATH=python with
SIM_LIBRARY=build/sim/libsim.so.1 from a checkout) and matplotlib.
"""
import sys

import simtrain

MODEL = sys.argv[1] if len(sys.argv) > 1 else "llama3-70b"
OUT = sys.argv[2] if len(sys.argv) > 2 else "cluster-sizes.png"
TOKENS = 1e12
PRICE = 2.0  # $ per GPU-hour


rows = []
for nodes in (1, 2, 4, 8, 16):
    gpus = 8 * nodes
    with simtrain.Session("dgx-h100", MODEL, nodes=nodes) as s:
        ranked = s.sweep(top=1)["rows"]
    best = next((r for r in ranked if r["rank"] == 1 and r["status"] == "fits"), None)
    if best is None:
        print("%3d GPUs: no layout fits" % gpus)
        continue
    # the plan as the sweep's table shows it: less the global batch and defaults
    label = ",".join(kv for kv in best["plan"].split(",")
                     if not kv.startswith("gb=") and kv not in ("cp=1", "schedule=1f1b", "recompute=none"))
    days = TOKENS / best["tokens_per_s"] / 86400
    cost = days * 24 * gpus * PRICE
    rows.append((gpus, label, best["step_s"], best["error_band"], days, cost))
    print("%3d GPUs  %-58s step %8.3f s (+/-%.1f%%)  %6.1f days  $%.2fM for 1T tokens"
          % (gpus, label, best["step_s"], 100 * best["error_band"], days, cost / 1e6))

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: the table above is the result")
    sys.exit(0)

g = [r[0] for r in rows]
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.6))
ax1.plot(g, [r[2] for r in rows], "o-", color="#1f77b4")
ax1.fill_between(g, [r[2] * (1 - r[3]) for r in rows], [r[2] * (1 + r[3]) for r in rows],
                 color="#1f77b4", alpha=0.2, label="error band")
ax1.set_xscale("log", base=2)
ax1.set_xticks(g, [str(x) for x in g])
ax1.set_xlabel("GPUs (DGX H100)")
ax1.set_ylabel("step time (s)")
ax1.set_title("%s: the best layout's step" % MODEL)
ax1.set_xlim(g[0] / 1.4, g[-1] * 2.2)
ax1.set_ylim(bottom=0)
ax1.legend(loc="upper right")
for x, r in zip(g, rows):
    ax1.annotate(r[1].replace("recompute=", "rc=").replace(",schedule=interleaved", ",interleaved")
                 .replace(",", ", ").replace(", mb", "\nmb"), (x, r[2]),
                 textcoords="offset points", xytext=(6, 4), ha="left", fontsize=7)
ax2.plot(g, [r[4] for r in rows], "o-", color="#d62728", label="days for 1T tokens")
ax2.set_xscale("log", base=2)
ax2.set_xticks(g, [str(x) for x in g])
ax2.set_xlabel("GPUs (DGX H100)")
ax2.set_ylabel("days to train 1T tokens", color="#d62728")
ax2.set_ylim(bottom=0)
ax3 = ax2.twinx()
ax3.plot(g, [r[5] / 1e6 for r in rows], "s--", color="#2ca02c")
ax3.set_ylabel(r"cost at \$%.0f per GPU-hour (\$M)" % PRICE, color="#2ca02c")
ax2.set_title("time and cost to train")
fig.tight_layout()
fig.savefig(OUT, dpi=110)
print("wrote", OUT)
