#!/usr/bin/env python3
"""One plan, one answer: sim, sim compare and sim sweep agree.

usage: test-one-answer.py SIM SOURCE_ROOT

For each case a small sweep is run (its layout lists narrowed to the case)
and its best row's plan string is run again through sim (as flags) and
sim compare (as --plan).  Every figure the three show of that plan must be
the same number: step, tokens/s, MFU (of the BF16 peak and of the peak of
the precision the linear layers run at), bubble, compute, the exposed
TP/CP/PP/DP/EP communication (the mean of the pipeline stages: the report's
stage table's mean row), peak bytes and the verdict.  The text tables show
them rounded as the JSON's values round.
"""
import os
import sys

sys.dont_write_bytecode = True
import cli

sim, src = cli.arguments("test-one-answer.py")
checks = cli.Checks()
check = checks.check

# plan-string keys that sim spells otherwise as a flag
LONG = {"mb": "micro-batch", "gb": "global-batch", "v": "virtual-stages", "sp": "sequence-parallel",
        "seq": "seq-len"}

CASES = [
    # name, cluster and model, sweep narrowing
    ("dense, tp 2 x pp 2", ["--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b"],
     ["--tp", "2", "--pp", "2", "--cp", "1", "--seq-len", "4096"]),
    ("dense, context parallel 2", ["--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b"],
     ["--tp", "1", "--pp", "1", "--cp", "2", "--seq-len", "8192"]),
    ("dense FP8", ["--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b"],
     ["--tp", "2", "--pp", "1", "--cp", "1", "--fp8", "hybrid", "--seq-len", "4096"]),
    ("mixture of experts, pp 2", ["--topology", "dgx-h100", "--nodes", "2", "--model", "mixtral-8x7b"],
     ["--tp", "1", "--pp", "2", "--cp", "1", "--ep", "8", "--seq-len", "4096"]),
    # 32 layers on 3 stages: uneven, as plain sim resolves them (the sweep
    # once tried only pp dividing the layers)
    ("uneven pipeline, 32 layers on pp 3", ["--topology", "dgx8x4", "--gpus", "24", "--model", "llama3-8b"],
     ["--tp", "2", "--pp", "3", "--cp", "1", "--seq-len", "4096"]),
    ("70B on 4 nodes, pp 4", ["--topology", "dgx8x4", "--nodes", "4", "--model", "llama3-70b"],
     ["--tp", "8", "--pp", "4", "--cp", "1", "--seq-len", "4096"]),
]


def flags(plan):
    """a plan string as sim's flags"""
    out = []
    for kv in plan.split(","):
        k, eq, v = kv.partition("=")
        out += [f"--{LONG.get(k, k)}"] + ([v] if eq else [])
    return out


def close(a, b):
    return a == b or (a is not None and b is not None and abs(a - b) <= 1e-12 * max(abs(a), abs(b)))


def status(mem):
    return "oom" if not mem["fits"] else "tight" if mem.get("tight") else "fits"


for name, where, narrow in CASES:
    r = cli.run(sim, "sweep", *where, *narrow, "--top", "1", "--json", "-", timeout=600)
    check(f"{name}: sweep exit status", r.returncode, 0)
    if r.returncode != 0:
        continue
    row = next(x for x in cli.json_of(r)["rows"] if x["rank"] == 1)
    plan = row["plan"]
    s = cli.run(sim, *where, *flags(plan), "--json", "-")
    c = cli.run(sim, "compare", *where, "--plan", plan, "--json", "-")
    check(f"{name}: sim and compare exit status ({plan})", (s.returncode, c.returncode), (0, 0))
    if s.returncode != 0 or c.returncode != 0:
        continue
    doc = cli.json_of(s)
    t, mem = doc["time"], doc["memory"]
    run = cli.json_of(c)["runs"][0]
    report = {"step_s": t["step_s"], "tokens_per_s": t["tokens_per_s"], "mfu": t["mfu"],
              "mfu_gemm_peak": t["mfu_gemm_peak"], "gemm_precision": t["gemm_precision"],
              "bubble_fraction": t["bubble_fraction"], "compute_s": t["compute_s"],
              "peak_bytes": mem["peak_bytes"], "status": status(mem)}
    report.update({f"exposed_{k}_s": v for k, v in t["exposed_comm_s"].items()})
    for key, want in report.items():
        got = (row.get(key), run.get(key))
        ok = all(close(g, want) if isinstance(want, float) else g == want for g in got)
        checks.report(f"{name}: {key} the same in sim, sweep and compare", ok,
                      f"sim {want!r}, sweep {got[0]!r}, compare {got[1]!r}")
    # the text: the stage table's mean row (with more than one stage) and
    # the compare table's step, as the JSON's values round
    text = cli.run(sim, *where, *flags(plan)).stdout
    lines = text.splitlines()
    header = next((line.split() for line in lines if line.strip().startswith("stage ") and "forward" in line), [])
    kinds = [w for w in header if w in ("TP", "CP", "PP", "DP", "EP")]
    mean = next((line.split() for line in lines if line.strip().startswith("mean ")), None)
    if len(t["stages"]) > 1:
        ex = t["exposed_comm_s"]
        check(f"{name}: the stage table's mean row is the JSON's exposed communication",
              mean[5:5 + len(kinds)] if mean else None, [f"{ex[k.lower()]:.3f}" for k in kinds])
    ctext = cli.run(sim, "compare", *where, "--plan", plan).stdout
    check(f"{name}: the compare table's step", f" {t['step_s']:.3f} " in ctext, True)
    # MFU of the peak the linear layers run at, labelled when not BF16, in
    # the report, the compare table and the sweep table alike
    cell = f"{100 * t['mfu_gemm_peak']:.1f}%" + ("" if t["gemm_precision"] == "bf16" else
                                                 f" {t['gemm_precision'].upper()}")
    stext = cli.run(sim, "sweep", *where, *narrow, "--top", "1").stdout
    check(f"{name}: MFU {cell} in the compare and sweep tables", (f" {cell} " in ctext, f" {cell} " in stext),
          (True, True))
    check(f"{name}: the report's MFU", f"MFU {100 * t['mfu_gemm_peak']:.1f}%" in text, True)

# a remedy's time is the time of the plan it names: Llama 3 70B at tp 4 x
# pp 4 x dp 4 with micro-batch 2 does not fit on dgx8x4; each remedy that
# fits was simulated, and its step is sim's step of the plan with its flags
where = ["--topology", "dgx8x4", "--model", "llama3-70b"]
oom = ["--tp", "4", "--pp", "4", "--dp", "4", "--micro-batch", "2"]
r = cli.run(sim, *where, *oom, "--json", "-")
doc = cli.json_of(r)
timed = [x for x in doc["memory"]["remedies"] if x["step_s"] is not None]
check("an out-of-memory plan: exit 1, remedies that fit timed, those that do not untimed",
      (r.returncode, len(timed) > 0, all(x["fits"] for x in timed),
       all(x["step_s"] is None for x in doc["memory"]["remedies"] if not x["fits"])), (1, True, True, True))
for x in timed:
    fl = x["flags"].split()
    s = cli.run(sim, *where, *oom, *fl, "--json", "-")
    got = cli.json_of(s)["time"]["step_s"] if s.returncode in (0, 1) else None
    checks.report(f"remedy {x['flags']}: its step is sim's with those flags", close(got, x["step_s"]),
                  f"remedy {x['step_s']!r}, sim {got!r}")
    check(f"remedy {x['flags']}: days to train against the plan's if memory allowed",
          round(x["time_change"], 12), round(doc["time"]["tokens_per_s"] / x["tokens_per_s"] - 1, 12))

# the fastest layout that fits, offered for a plan that does not: Llama 3 70B at tp 2 x pp 2 x dp 16 on dgx8x4 (8 nodes) fits with
# none of its remedies.  The offer is sim sweep --top 1's best on the same
# job, its step is sim's step of the plan with the offered flags, and its
# days to train are against the plan's if memory allowed.
oom = ["--tp", "2", "--pp", "2", "--dp", "16"]
r = cli.run(sim, *where, *oom, "--json", "-")
doc = cli.json_of(r)
ff = doc["memory"].get("fastest_fit")
best = next(x for x in cli.json_of(cli.run(sim, "sweep", *where, "--top", "1", "--json", "-"))["rows"]
            if x["rank"] == 1)
check("fastest fit: offered, and it is the sweep's best of the job",
      (r.returncode, ff is not None and ff["found"], ff and ff["plan"], all(not x["fits"] for x in doc["memory"]["remedies"])),
      (1, True, best["plan"], True))
if ff and ff["found"]:
    s = cli.json_of(cli.run(sim, *where, *ff["flags"].split(), "--json", "-"))
    checks.report("fastest fit: its step and peak are sim's with its flags, and the sweep's",
                  close(ff["step_s"], s["time"]["step_s"]) and close(ff["step_s"], best["step_s"]) and
                  ff["peak_bytes"] == s["memory"]["peak_bytes"] == best["peak_bytes"] and s["memory"]["fits"],
                  f"offer {ff['step_s']!r} {ff['peak_bytes']}, sim {s['time']['step_s']!r} {s['memory']['peak_bytes']}, "
                  f"sweep {best['step_s']!r} {best['peak_bytes']}")
    check("fastest fit: days to train against the plan's if memory allowed",
          round(ff["time_change"], 12), round(doc["time"]["tokens_per_s"] / ff["tokens_per_s"] - 1, 12))
    text = cli.run(sim, *where, *oom).stdout
    check("fastest fit: the report's Instead line gives its step",
          any(line.startswith("Instead ") for line in text.splitlines()) and f"step {ff['step_s']:.3f} s" in
          " ".join(text.split()), True)
check("fastest fit: not searched with --no-search, with --memory-only, nor for another framework's plan",
      ["fastest_fit" in cli.json_of(cli.run(sim, *where, *oom, *extra, "--json", "-"))["memory"]
       for extra in (["--no-search"], ["--memory-only"], ["--framework", "fsdp"])], [False, False, False])
# beyond 256 GPUs the search is asked for, not run unasked: Llama 3.1 405B
# at tp 8 x dp 64 on 512 H100s does not fit
big = ["--topology", "dgx-h100", "--nodes", "64", "--model", "llama3-405b", "--tp", "8", "--dp", "64"]
text = " ".join(cli.run(sim, *big).stdout.split())
check("fastest fit: on 512 GPUs not searched unasked, and the report says --search",
      ("fastest_fit" in cli.json_of(cli.run(sim, *big, "--json", "-"))["memory"],
       "Instead not searched:" in text and "--search finds it" in text), (False, True))
none = cli.json_of(cli.run(sim, "--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-405b", "--tp", "8",
                           "--json", "-"))["memory"].get("fastest_fit")
check("fastest fit: Llama 3.1 405B on 8 GPUs: searched, no layout fits",
      (none is not None and none["found"], none and none["simulated"], none and "plan" in none), (False, 0, False))

# ranges and ties from the error band: Llama 3 70B on dgx8x4, four layouts.
# A row that fits is a tie when (best - its tokens/s) / best <= the best's
# band; the table marks it "~"; days and GPU-hours read x (1 -/+ band).
plans = ["tp=8,pp=4,dp=2", "tp=8,pp=2,dp=4", "tp=8,pp=8,dp=1", "tp=4,pp=4,dp=4"]
args = ["compare", "--topology", "dgx8x4"] + [a for p in plans for a in ("--plan", p)] + ["--train-tokens", "15T"]
doc = cli.json_of(cli.run(sim, *args, "--json", "-"))
text = cli.run(sim, *args).stdout
runs = [x for x in doc["runs"] if x["status"] != "oom"]
best = runs[0]
want = [False] + [(best["tokens_per_s"] - x["tokens_per_s"]) <= best["error_band"] * best["tokens_per_s"]
                  for x in runs[1:]]
check("compare: ties are the rows within the best's error band", [x["tie"] for x in runs], want)
check("compare: the table marks the ties with ~",
      [any(line.split()[:2] == [("~" if t else "") + str(x["rank"]), x["label"]] for line in text.splitlines())
       for x, t in zip(runs, want)], [True] * len(runs))
check("compare: some rows are ties and some are not (the case tests both)", (any(want), not all(want[1:])),
      (True, True))
for x in runs:
    b, tr = x["error_band"], x["train"]
    check(f"{x['label']}: days and GPU-hours x (1 -/+ band)",
          [round(v, 9) for v in (tr["days_lo"], tr["days_hi"], tr["gpu_hours_lo"], tr["gpu_hours_hi"])],
          [round(v, 9) for v in (tr["days"] * (1 - b), tr["days"] * (1 + b), tr["gpu_hours"] * (1 - b),
                                 tr["gpu_hours"] * (1 + b))])
one = cli.json_of(cli.run(sim, "--topology", "dgx8x4", "--tp", "8", "--pp", "4", "--dp", "2", "--json", "-"))
ap = one["time"]["error_band"]["applied"]
check("sim: the band applied is the held-out one, and the compare rows carry it",
      (ap["basis"], ap["error"], round(ap["step_lo_s"], 9)),
      ("heldout", one["time"]["error_band"]["heldout"]["mean_abs_error"],
       round(one["time"]["step_s"] * (1 - ap["error"]), 9)))
check("compare rows carry the same band", {x["error_band"] for x in runs}, {ap["error"]})
# a --framework torchtitan plan carries the band of torchtitan's published
# runs (tools/pytorch-native-check.py --write stores it in the Hopper files'
# set of topologies/bands.xml)
stored = float(cli.stored_band(os.path.join(src, "topologies", "grand-teton-h100.xml"), "torchtitan")["error"])
tt = cli.json_of(cli.run(sim, "--topology", "grand-teton-h100", "--gpus", "8", "--model", "llama3-8b",
                         "--framework", "torchtitan", "--dp", "8", "--zero", "3", "--json", "-"))
check("torchtitan: the band applied is the stored torchtitan band",
      (tt["time"]["error_band"]["applied"]["basis"], tt["time"]["error_band"]["applied"]["error"],
       tt["time"]["error_band"]["torchtitan"]["mean_abs_error"]), ("torchtitan", stored, stored))

# a global batch a layout rounds up is said where the steps are compared:
# 1024 sequences over dp 9 at micro-batch 1 round up to 1026 = 114 x 9
args = ["compare", "--topology", "gb200-nvl72", "--racks", "1", "--plan", "tp=4,pp=2,dp=9", "--plan", "tp=8,pp=9,dp=1"]
text = cli.run(sim, *args).stdout
gbs = {x["label"]: x["plan"]["global_batch"] for x in cli.json_of(cli.run(sim, *args, "--json", "-"))["runs"]}
check("compare: the rounded global batch in the JSON, and said under the table",
      (gbs, "tp=4,pp=2,dp=9: --global-batch 1026" in text, "tp=8,pp=9,dp=1: --global-batch" in text),
      ({"tp=4,pp=2,dp=9": 1026, "tp=8,pp=9,dp=1": 1024}, True, False))

sys.exit(checks.finish())
