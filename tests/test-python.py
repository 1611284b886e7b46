#!/usr/bin/env python3
"""The Python binding (python/simtrain) answers as the command line does.

usage: test-python.py SIM SOURCE_ROOT LIBSIM

Imports simtrain from SOURCE_ROOT/python with SIM_LIBRARY=LIBSIM (the
libsim.so.1 just built) and checks: estimate() returns the JSON `sim
--json -` prints for the same flags, byte for byte once parsed, for the
headline, an out-of-memory plan (its remedies and the fastest layout that
fits), a mixture of experts and an FP8 plan; compare() returns `sim compare
--json -`'s; a plan sim refuses raises SimError with sim's own line (less
its "sim: "); every plan option of sim is a keyword of estimate(), typed;
libsim exports sim-api.h's functions and nothing else; one session answers
from several threads at once, each the same.  It prints the time per
estimate through the binding (a figure, not a check).
"""
import concurrent.futures
import inspect
import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True
import cli

sim, src, lib = cli.arguments("test-python.py", ("SIM", "SOURCE_ROOT", "LIBSIM"))
lib = os.path.abspath(lib)
os.environ["SIM_LIBRARY"] = lib
sys.path.insert(0, os.path.join(src, "python"))
import simtrain

checks = cli.Checks()
check = checks.check

CASES = [
    ("the headline", "dgx8x4", None, 0, 0, dict(tp=8, pp=4, dp=2)),
    ("out of memory, with the fastest layout that fits", "dgx8x4", "llama3-70b", 0, 0, dict(tp=2, pp=2, dp=16)),
    ("mixture of experts", "dgx-h100", "mixtral-8x7b", 2, 0, dict(tp=1, pp=2, ep=8, dp=8, seq_len=4096)),
    ("FP8 on 8 GPUs", "dgx8x4", "llama3-8b", 0, 8, dict(tp=2, dp=4, fp8="hybrid", micro_batch=2)),
]


def flags(options):
    out = []
    for k, v in options.items():
        out += ["--" + k.replace("_", "-"), str(v)]
    return out


def where(topology, model, nodes, gpus):
    return (["--topology", topology] + (["--model", model] if model else []) +
            (["--nodes", str(nodes)] if nodes else []) + (["--gpus", str(gpus)] if gpus else []))


for name, topology, model, nodes, gpus, options in CASES:
    r = cli.run(sim, *where(topology, model, nodes, gpus), *flags(options), "--json", "-")
    got = simtrain.estimate(topology=topology, model=model, nodes=nodes, gpus=gpus, **options)
    checks.report(f"estimate, {name}: the document sim --json - prints", got == cli.json_of(r),
                  f"step {got.get('time', {}).get('step_s')!r} against sim's "
                  f"{cli.json_of(r).get('time', {}).get('step_s')!r}")
    if name.startswith("out of memory"):
        check("estimate, out of memory: the fastest layout that fits is there",
              got["memory"].get("fastest_fit", {}).get("found"), True)

plans = ["tp=8,pp=4,dp=2", "tp=8,pp=8,dp=1", "tp=2,pp=4,dp=8,zero=0"]
r = cli.run(sim, "compare", "--topology", "dgx8x4", *[a for p in plans for a in ("--plan", p)], "--json", "-")
got = simtrain.compare("dgx8x4", [plans[0], {"tp": 8, "pp": 8, "dp": 1}, plans[2]])
check("compare: the document sim compare --json - prints", got == cli.json_of(r), True)
check("compare: ranked as sim ranks them", [x["label"] for x in got["runs"]],
      [x["label"] for x in cli.json_of(r)["runs"]])

r = cli.run(sim, "--topology", "dgx8x4", "--tp", "3")
try:
    simtrain.estimate(topology="dgx8x4", tp=3)
    said = None
except simtrain.SimError as e:
    said = str(e)
check("a plan sim refuses: SimError with sim's line", said, r.stderr.strip().removeprefix("sim: "))
try:
    simtrain.Session("no-such-cluster")
    said = None
except simtrain.SimError as e:
    said = str(e)
r = cli.run(sim, "--topology", "no-such-cluster")
check("a cluster sim cannot find: SimError with sim's line", said, r.stderr.strip().removeprefix("sim: "))
try:
    simtrain.plan_string(tensor_parallel=8)
    said = None
except simtrain.SimError as e:
    said = str(e)
check("an option sim does not have: SimError", said, "unknown plan option 'tensor_parallel'")

# sweep: the document sim sweep --json - prints (the whole sweep's rows)
r = cli.run(sim, "sweep", "--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b", "--global-batch", "64",
            "--top", "3", "--tp", "1,2", "--json", "-", timeout=600)
got = simtrain.sweep("dgx8x4", model="llama3-8b", nodes=1, global_batch=64, top=3, tp=[1, 2])
check("sweep: the document sim sweep --json - prints", got == cli.json_of(r), True)
# a schedule list, as sim sweep --schedule's
rs = cli.run(sim, "sweep", "--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b", "--global-batch", "64",
             "--top", "3", "--schedule", "zb-v,dualpipe", "--json", "-", timeout=600)
got_s = simtrain.sweep("dgx8x4", model="llama3-8b", nodes=1, global_batch=64, top=3, schedule=["zb-v", "dualpipe"])
check("sweep: schedule=[...] is sim sweep --schedule's document", got_s == cli.json_of(rs), True)
check("sweep: its best", next(x["plan"] for x in got["rows"] if x["rank"] == 1),
      next(x["plan"] for x in cli.json_of(r)["rows"] if x["rank"] == 1))
# the experts' routing of every layout, as sim sweep's flags of those names
rm = cli.run(sim, "sweep", "--topology", "dgx-h100", "--nodes", "1", "--model", "qwen3-30b-a3b", "--tp", "1",
             "--pp", "1", "--top", "2", "--moe-expert-capacity-factor", "1", "--moe-pad-expert-input-to-capacity",
             "--json", "-", timeout=600)
got_m = simtrain.sweep("dgx-h100", model="qwen3-30b-a3b", nodes=1, tp=[1], pp=[1], top=2,
                       moe_expert_capacity_factor=1, moe_pad_expert_input_to_capacity=True)
check("sweep: moe_expert_capacity_factor and padding are sim sweep's flags' document",
      got_m == cli.json_of(rm), True)
try:
    simtrain.sweep("dgx8x4", nodes=1, model="llama3-8b", fp8="fast")
    said = None
except simtrain.SimError as e:
    said = str(e)
r = cli.run(sim, "sweep", "--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b", "--fp8", "fast")
check("sweep: an option sim refuses, sim's line", said, r.stderr.strip().removeprefix("sim: "))

# every plan option of sim (sim/sim-plan-request.c's table) is a typed keyword
with open(os.path.join(src, "sim", "sim-plan-request.c"), encoding="utf-8") as f:
    names = [n.replace("-", "_") for n in re.findall(r'\{ "([a-z0-9-]+)", (?:NULL|"[a-z0-9-]+"), KEY_', f.read())]
params = inspect.signature(simtrain.estimate).parameters
check("every plan option of sim is a keyword of estimate()", [n for n in names if n not in params], [])
check("... in PLAN_OPTIONS, in sim's order", list(simtrain.PLAN_OPTIONS), names)
check("... each annotated", [n for n in names if params[n].annotation is inspect.Parameter.empty], [])

# libsim exports sim-api.h's functions alone
try:
    nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True).stdout
    exported = sorted({line.split()[-1].split("@")[0] for line in nm.splitlines() if " T " in line})
    check("libsim exports sim_api_* alone", [s for s in exported if not s.startswith("sim_api_")], [])
    check("... all seven of sim-api.h", exported, sorted(["sim_api_version", "sim_api_session_new",
                                                         "sim_api_session_free", "sim_api_estimate",
                                                         "sim_api_compare", "sim_api_sweep", "sim_api_free"]))
except OSError:
    print("# nm is not installed: the exports are not checked")

# one session, several threads at once: each the same answer
s = simtrain.Session("dgx8x4", "llama3-8b", gpus=8)
plans = ["tp=2,dp=4", "tp=1,dp=8,zero=3", "tp=8", "tp=4,pp=2"] * 2
alone = [s.estimate(p) for p in plans]
with concurrent.futures.ThreadPoolExecutor(4) as pool:
    together = list(pool.map(s.estimate, plans))
check("one session from 4 threads: the answers of one thread", together == alone, True)

# the figure for the closing note: per estimate through the binding
t = time.perf_counter()
n = 20
for _ in range(n):
    s.estimate("tp=2,dp=4")
print("# per estimate through simtrain (llama3-8b, tp 2 x dp 4 on 8 H100s): %.2f ms"
      % (1000 * (time.perf_counter() - t) / n))
s.close()
sys.exit(checks.finish())
