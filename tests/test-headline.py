#!/usr/bin/env python3
"""The headline command, run as a new user would: from another directory,
by name.  Checks the JSON document against hand-derived values.

Llama-3-70B, tp 8 x pp 4 x dp 2 on dgx8x4 (64 H100s), 1F1B, flash
attention, sequence parallel, ZeRO-1, bf16-adam:
  per GPU, stage 1/2: 20 layers x ((855,654,400 - 16,384 norms) / 8 + 16,384)
      = 20 x 106,971,136 = 2,139,422,720 params (RMSNorm weights are replicated)
  stage 0 adds the vocab shard 128,256 x 8192 / 8 = 131,334,144
  bf16 params 2 B, grads 2 B; master 4 B and m, v 8 B sharded over dp 2
  activations per layer 33.5 sbh / 8 = 281,018,368 B (s = h = 8192; norm and
  GEMM inputs 8, Q 2, K and V 0.25 each, attention output 2, SwiGLU 14 + 7)
  stage 0 holds 4 micro-batches x 20 layers of them at its peak.
"""
import os
import re
import sys

sys.dont_write_bytecode = True
import cli

sim, src = cli.arguments("test-headline.py")
checks = cli.Checks()
check = checks.check


with cli.tempdir() as tmp:
    args = ["--topology", "dgx8x4.xml", "--tp", "8", "--pp", "4", "--dp", "2"]
    text = cli.run(sim, *args, cwd=tmp, timeout=60)
    check("text exit status", text.returncode, 0)
    check("text stderr", text.stderr, "")
    check("verdict line", any(l.startswith("Verdict   fits") for l in text.stdout.splitlines()), True)
    check("memory table header", "acts peak GB" in text.stdout, True)

    out = cli.run(sim, *args, "--json", "-", cwd=tmp, timeout=60)
    check("json exit status", out.returncode, 0)
    doc = cli.json_of(out)
    again = cli.run(sim, *args, "--json", "-", cwd=tmp, timeout=60)
    check("same inputs, same bytes", again.stdout == out.stdout, True)
    path = os.path.join(tmp, "r.json")
    written = cli.run(sim, *args, "--json", path, cwd=tmp, timeout=60)
    check("--json FILE exit status", written.returncode, 0)
    with open(path) as f:
        check("--json FILE equals --json -", f.read() == out.stdout, True)
    check("--json FILE keeps the text report on stdout", "Verdict" in written.stdout, True)

check("schema", doc["schema"], "sim-result/1")
check("topology", {k: doc["topology"][k] for k in ("name", "gpus", "nodes")},
      {"name": "dgx8x4", "gpus": 64, "nodes": 8})
check("gpu", doc["topology"]["gpu"].startswith("NVIDIA H100"), True)
check("model", {k: doc["model"][k] for k in ("name", "params", "layers", "hidden", "heads", "seq_len")},
      {"name": "llama3-70b", "params": 70553706496, "layers": 80, "hidden": 8192, "heads": 64,
       "seq_len": 8192})
plan = doc["plan"]
check("plan", {k: plan[k] for k in ("tp", "cp", "pp", "dp", "micro_batch", "global_batch",
                                    "micro_batches", "schedule", "virtual_stages", "recompute",
                                    "sequence_parallel", "zero", "recipe")},
      {"tp": 8, "cp": 1, "pp": 4, "dp": 2, "micro_batch": 1, "global_batch": 1024,
       "micro_batches": 512, "schedule": "1f1b", "virtual_stages": 1, "recompute": "none",
       "sequence_parallel": True, "zero": 1, "recipe": "bf16-adam"})
tm = doc["time"]
check("time keys", all(k in tm for k in ("step_s", "tokens_per_s", "model_tflops_per_gpu",
                                          "hardware_tflops_per_gpu", "mfu", "hfu", "bubble_fraction",
                                          "exposed_comm_s", "compute_s")), True)
check("exposed_comm_s keys", all(k in tm["exposed_comm_s"] for k in ("tp", "pp", "dp")), True)
check("0 < mfu <= hfu < 1", 0 < tm["mfu"] <= tm["hfu"] < 1, True)
check("tokens/s = global batch x seq / step",
      abs(tm["tokens_per_s"] - 1024 * 8192 / tm["step_s"]) / tm["tokens_per_s"] < 1e-9, True)
# 1F1B with m = 512 and p = 4: the pipeline fill alone is (p-1)/(m+p-1) = 0.6 %;
# the last stage's output layer adds imbalance, but the bubble stays small
check("bubble fraction small", 0.005 < tm["bubble_fraction"] < 0.1, True)
for st in tm["stages"]:
    total = sum(st[k] for k in ("forward_s", "backward_s", "recompute_s", "optimizer_s", "exposed_tp_s",
                                "exposed_cp_s", "exposed_pp_s", "exposed_dp_s", "bubble_s"))
    check(f"stage {st['stage']} time adds up to the step", abs(total - tm["step_s"]) < 1e-6 * tm["step_s"], True)
mem = doc["memory"]
check("capacity_bytes (81559 MiB)", mem["capacity_bytes"], 81559 * 2**20)
check("fits", mem["fits"], True)
check("oom_case", mem["oom_case"], None)
check("stages", len(mem["stages"]), 4)
s0, s1 = mem["stages"][0], mem["stages"][1]
p1 = 2139422720
p0 = p1 + 131334144
check("stage 1 params_bytes", s1["params_bytes"], 2 * p1)
check("stage 1 grads_bytes", s1["grads_bytes"], 2 * p1)
check("stage 1 master_bytes (ZeRO-1 over dp 2)", s1["master_bytes"], 4 * p1 // 2)
check("stage 1 optimizer_bytes", s1["optimizer_bytes"], 8 * p1 // 2)
check("stage 0 params_bytes", s0["params_bytes"], 2 * p0)
check("activation_bytes_per_layer", s0["activation_bytes_per_layer"], 281018368)
check("stage 0 in flight", s0["in_flight_micro_batches"], 4)
check("stage 3 in flight", mem["stages"][3]["in_flight_micro_batches"], 1)
check("stage 0 activations", s0["activations_peak_bytes"], 4 * 20 * 281018368)
check("peak is the largest stage", mem["peak_bytes"], max(s["peak_bytes"] for s in mem["stages"]))
check("peak <= usable", mem["peak_bytes"] <= mem["usable_bytes"], True)
for s in mem["stages"]:
    parts = (s["params_bytes"] + s["grads_bytes"] + s["master_bytes"] + s["optimizer_bytes"]
             + s["grad_accum_bytes"] + s["buffer_bytes"] + s["activations_peak_bytes"])
    check(f"stage {s['stage']} peak is the sum of its parts", s["peak_bytes"], parts)

# Exit status as grep and diff: 0 the plan fits, 1 it does not (out of
# memory), 2 bad input.  Llama 3 405B at tp 8 x pp 8 on 64 H100s holds 16
# B/param / 64 = about 100 GB of model states per GPU: case A.
oom = ["--topology", "dgx8x4", "--model", "llama3-405b", "--tp", "8", "--pp", "8"]
fit = ["--topology", "dgx8x4", "--tp", "8", "--pp", "4", "--dp", "2"]
with cli.tempdir() as tmp:
    chart = os.path.join(tmp, "fit.png")
    r = cli.run(sim, *fit, "--memory-only", "--memory-chart", chart, cwd=tmp, timeout=60)
    check("exit 0: a plan that fits (--memory-only)", r.returncode, 0)
    # without a simulated step the chart is the ledger per stage (stacked
    # bars), not a timeline
    check("--memory-only --memory-chart: a PNG", cli.read_bytes(chart)[:8], b"\x89PNG\r\n\x1a\n")
    r = cli.run(sim, *oom, "--memory-only", cwd=tmp, timeout=60)
    check("exit 1: out of memory (--memory-only)", r.returncode, 1)
    check("exit 1: the report on stdout, nothing on stderr",
          ("OUT OF MEMORY" in r.stdout, r.stderr), (True, ""))
    r = cli.run(sim, *oom, "--memory-only", "--json", "-", cwd=tmp, timeout=60)
    check("exit 1 with --json -, the document still printed",
          (r.returncode, cli.json_of(r)["memory"]["fits"]), (1, False))
    # the text says "no MFU is given for a plan that cannot run"; so does
    # the JSON: mfu and hfu null beside the step time
    r = cli.run(sim, *oom, "--json", "-", cwd=tmp, timeout=60)
    t = cli.json_of(r)["time"]
    check("out of memory: time.mfu and time.hfu null, the step time given",
          (t["mfu"], t["hfu"], t["step_s"] > 0), (None, None, True))
    path = os.path.join(tmp, "oom.json")
    r = cli.run(sim, *oom, "--memory-only", "--json", path, "--memory-chart",
                os.path.join(tmp, "oom.png"), cwd=tmp, timeout=60)
    check("exit 1 with --json FILE, the files still written",
          (r.returncode, cli.load_json(path)["memory"]["oom_case"], os.path.exists(os.path.join(tmp, "oom.png"))),
          (1, "A", True))
    r = cli.run(sim, *fit, "--bogus-flag", cwd=tmp, timeout=60)
    check("exit 2: an unknown flag, one line on stderr",
          (r.returncode, r.stdout, len(r.stderr.splitlines())), (2, "", 1))
    r = cli.run(sim, *fit, "--tp", "3", cwd=tmp, timeout=60)
    check("exit 2: a plan that does not divide the cluster", r.returncode, 2)
    r = cli.run(sim, "--help", cwd=tmp, timeout=60)
    check("sim --help documents the exit status",
          (r.returncode, "exit status: 0 the plan fits" in r.stdout), (0, True))
    # the verdict comes before the time; the time of a plan that does not fit
    # is labelled as such and gives no MFU (Llama 3 70B with ZeRO 0 at tp 2:
    # case A, simulated in a fraction of a second)
    r = cli.run(sim, "--topology", "dgx8x4", "--tp", "2", "--pp", "4", "--dp", "8", "--zero", "0",
                cwd=tmp, timeout=120)
    lines = r.stdout.splitlines()
    verdict = next((i for i, l in enumerate(lines) if l.startswith("Verdict")), None)
    time = next((i for i, l in enumerate(lines) if l.startswith("Time")), None)
    check("exit 1: out of memory with the time simulated", r.returncode, 1)
    check("OOM: the verdict before the time", verdict is not None and time is not None and verdict < time, True)
    check("OOM: the time is labelled as if memory allowed", time is not None and "IF MEMORY ALLOWED" in lines[time], True)
    check("OOM: no MFU figure in the time section", any(re.search(r"MFU \d", l) for l in lines[time or 0:]), False)
    r = cli.run(sim, *fit, cwd=tmp, timeout=120)
    lines = r.stdout.splitlines()
    verdict = next((i for i, l in enumerate(lines) if l.startswith("Verdict")), None)
    time = next((i for i, l in enumerate(lines) if l.startswith("Time")), None)
    check("fits: the verdict before the time, with its MFU",
          (verdict is not None and time is not None and verdict < time, "MFU" in lines[time or 0]), (True, True))

# sim collective --json: nccl-tests' factors and the documented keys.
# ring all_reduce of 1 GiB on 8 H100s: 1.75 x 2^30 / 370.8 GB/s + 56 us (NVLink 4
# as NCCL's Simple protocol moves it: 18 links x 20.6 GB/s, topologies/dgx8x4.xml)
col = cli.run(sim, "collective", "--topology", "dgx8x4", "--nodes", "1", "--op", "all_reduce",
              "--gpus", "8", "--min-bytes", "1GiB", "--max-bytes", "1GiB", "--algo", "ring",
              "--json", "-", timeout=60)
check("collective exit status", col.returncode, 0)
cdoc = cli.json_of(col)
check("collective keys", sorted(cdoc.keys()), ["gpus", "op", "rows", "schema", "topology"])
row = cdoc["rows"][0]
want_us = (1.75 * 2**30 / 370.8e9 + 56e-6) * 1e6
check("collective time_us (ring formula)", abs(row["time_us"] - want_us) < 0.01, True)
check("collective busbw = algbw x 2(n-1)/n", abs(row["busbw_GBps"] - row["algbw_GBps"] * 1.75) < 1e-9, True)
check("collective algo", row["algo"], "ring/Simple")

# sim collective --nccl-log: the table's choice of each size, as NCCL's tuner logs it
# (NVLSTree for 1 GiB over 2 DGX H100 nodes, tests/test-collective.c /collective/nvls-tree)
col = cli.run(sim, "collective", "--topology", "dgx8x4", "--nodes", "2", "--op", "all_reduce",
              "--gpus", "16", "--min-bytes", "1GiB", "--max-bytes", "1GiB", "--nccl-log", timeout=60)
check("collective --nccl-log exit status", col.returncode, 0)
check("collective --nccl-log line",
      [l for l in col.stdout.splitlines() if l.startswith("NCCL INFO")],
      ["NCCL INFO AllReduce: 1073741824 Bytes -> Algo NVLS_TREE proto SIMPLE"])
check("collective table names the same choice", "nvlstree/Simple" in col.stdout, True)

# sim validate is a gate with --max-error: exit 1 above it, 0 below
data = os.path.join(src, "tests", "validation", "data", "nccl-tests", "h100x8-allreduce-dgxc-benchmarking.txt")
base = ["validate", "--nccl", data, "--topology", "dgx8x4", "--nodes", "1", "--op", "all_reduce"]
gate_low = cli.run(sim, *base, "--max-error", "1", timeout=60)
check("validate --max-error 1 fails", gate_low.returncode, 1)
gate_high = cli.run(sim, *base, "--max-error", "500", timeout=60)
check("validate --max-error 500 passes", gate_high.returncode, 0)
check("validate prints one row per size", sum(1 for l in gate_high.stdout.splitlines() if not l.startswith("#")), 32)

# --output-dir: every file, the same bytes on a second run, a well-formed trace
with cli.tempdir() as tmp:
    outs = []
    for k in range(2):
        d = os.path.join(tmp, f"out{k}")
        r = cli.run(sim, "--topology", "dgx8x4.xml", "--tp", "8", "--pp", "4", "--dp", "2",
                    "--global-batch", "64", "--output-dir", d, timeout=120)
        check(f"--output-dir run {k} exit status", r.returncode, 0)
        outs.append(d)
    names = sorted(os.listdir(outs[0]))
    check("--output-dir files", names, ["gantt.png", "memory.csv", "memory.png", "report.html", "report.txt",
                                       "result.json", "spans.csv", "trace.json"])
    for n in names:
        check(f"{n} identical on a second run",
              cli.read_bytes(os.path.join(outs[0], n)) == cli.read_bytes(os.path.join(outs[1], n)), True)
    trace = cli.load_json(os.path.join(outs[0], "trace.json"))
    events = trace["traceEvents"]
    check("trace has complete events", any(e["ph"] == "X" for e in events), True)
    check("trace has memory counters", any(e["ph"] == "C" for e in events), True)
    check("trace events well-formed", all(("ts" in e and "dur" in e and e["dur"] >= 0) for e in events if e["ph"] == "X"), True)
    check("trace names its processes", any(e["ph"] == "M" and e["name"] == "process_name" for e in events), True)
    check("gantt.png is a PNG", cli.read_bytes(os.path.join(outs[0], "gantt.png"))[:8], b"\x89PNG\r\n\x1a\n")
    svg = os.path.join(tmp, "g.svg")
    r = cli.run(sim, "--topology", "dgx8x4.xml", "--tp", "8", "--pp", "4", "--dp", "2", "--global-batch", "64",
                "--gantt", svg, "--memory-chart", os.path.join(tmp, "m.pdf"), timeout=120)
    check("svg and pdf by extension", r.returncode == 0 and os.path.getsize(svg) > 0, True)
    check("memory chart as PDF", cli.read_bytes(os.path.join(tmp, "m.pdf"))[:5], b"%PDF-")

# Scale: 16,384 GPUs (2,048 DGX H100 nodes), Llama 3 405B at tp 8, pp 16,
# dp 128, global batch 2,048 (16 micro-batches per replica), in the
# symmetry-reduced mode.  126 layers on 16 stages: 14 x 8 + 2 x 7 (Llama 3's
# first and last stages give one up).  1F1B's bubble is (p - 1) / (m + p - 1)
# = 15 / 31 = 48.4 % of the step with equal passes.  With --overlap-grad-
# reduce and --overlap-param-gather the first forward and the last backward
# of each stage run beside the data-parallel collectives, which slow them by
# at most comm-slowdown = 18.2 % (dgx-h100.xml): the p = 16 slowed pairs on
# the warm-up and cool-down path add at most 0.182 x 16/31 of the ideal
# step, so the bubble lies between 15/31 and (15/31 + 0.094) / 1.094 = 52.8 %.
r = cli.run(sim, "--topology", "dgx-h100", "--nodes", "2048", "--model", "llama3-405b",
            "--tp", "8", "--pp", "16", "--dp", "128", "--global-batch", "2048", "--json", "-", timeout=120)
check("16,384 GPUs: exit status", r.returncode, 0)
if r.returncode == 0:
    big = cli.json_of(r)
    check("16,384 GPUs loaded", big["topology"]["gpus"], 16384)
    layers = [s["layers"] for s in big["memory"]["stages"]]
    check("126 layers on 16 stages", (sum(layers), layers.count(7), layers[0], layers[-1]), (126, 2, 7, 7))
    check("symmetry-reduced", big["time"]["symmetric"], True)
    extra = 0.182 * 16 / 31
    check("1F1B bubble between 15/31 and (15/31 + extra) / (1 + extra)",
          15 / 31 - 0.005 <= big["time"]["bubble_fraction"] <= (15 / 31 + extra) / (1 + extra) + 0.005, True)

# --train-tokens: days = tokens / (tokens/s) / 86,400; GPU-hours =
# days x 24 x GPUs; cost = GPU-hours x price.  Checked against the run's
# own tokens/s, not against sim's arithmetic.
r = cli.run(sim, "--topology", "dgx8x4", "--model", "llama3-70b", "--tp", "8", "--pp", "4", "--dp", "2",
            "--train-tokens", "15T", "--gpu-hour-price", "2.50", "--json", "-", timeout=120)
check("--train-tokens: exit status", r.returncode, 0)
if r.returncode == 0:
    j = cli.json_of(r)
    days = 15e12 / j["time"]["tokens_per_s"] / 86400
    check("--train-tokens: days", abs(j["train"]["days"] / days - 1) < 1e-9, True)
    check("--train-tokens: GPU-hours = days x 24 x 64", abs(j["train"]["gpu_hours"] / (days * 24 * 64) - 1) < 1e-9, True)
    check("--gpu-hour-price: cost = GPU-hours x 2.50", abs(j["train"]["cost"] / (days * 24 * 64 * 2.5) - 1) < 1e-9, True)
r = cli.run(sim, "--topology", "dgx8x4", "--model", "llama3-70b", "--tp", "8", "--pp", "4", "--dp", "2",
            "--train-tokens", "15T", timeout=120)
check("--train-tokens: the report's Training line", any(l.startswith("Training  15 T tokens in ") for l in r.stdout.splitlines()), True)

r = cli.run(sim, "compare", "--topology", "dgx8x4", "--model", "llama3-70b", "--plan", "tp=8,pp=4,dp=2",
            "--train-tokens", "15T", "--gpu-hour-price", "2.50", "--json", "-", timeout=120)
if r.returncode == 0:
    run = cli.json_of(r)["runs"][0]
    check("compare --train-tokens: days in the JSON", abs(run["train"]["days"] / (15e12 / run["tokens_per_s"] / 86400) - 1) < 1e-9, True)
else:
    check("compare --train-tokens: exit status", r.returncode, 0)

sys.exit(checks.finish())
