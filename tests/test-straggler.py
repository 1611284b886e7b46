#!/usr/bin/env python3
"""The spread of GPU speeds and the straggler what-if on the command line.

usage: test-straggler.py SIM SOURCE_ROOT

- every step waits for the slowest GPU: at 64 GPUs with the default spread
  of 1.5 % (sim-variability.h), the expected slowest of 64 standard
  normals is 2.34373 (Teichroew 1956's table), so the compute is 1 +
  0.015 x 2.34373 = 1.035156 of nominal; the report says what that adds
  and the JSON carries the same numbers;
- --gpu-variation 0 is a uniform cluster: nothing added, a shorter step;
  on 8 GPUs of one node (pp 8), where no collective runs beside the
  compute, every stage's forward is exactly 1 + 0.015 x 1.42360 of the
  uniform one's, and a --slow-gpu at 1.25x exactly 1.25x on its stage;
- --slow-gpu 60:1.3 (rank 60 of tp 8 x pp 4 x dp 2, placed tp-cp-dp-pp:
  60 = 4 + 8 x (1 + 2 x 3), so tp rank 4, dp 1, stage 3) slows stage 3;
  the JSON's step with none slow is the plan's own step without the flag,
  and the report names the stage and replica;
- sim compare takes the same as plan strings, and sim sweep takes
  --gpu-variation: its best layout's step is compare's for that plan;
- --slow-link nic:17:4 on tp 8 x dp 8 over the 8 nodes, the gradient
  reduction not overlapped (so it is all exposed): each data-parallel group
  is one GPU per node on one rail, a ring whose bandwidth term is set by
  its slowest link; GPU 17's NIC port at a quarter makes that term 4x
  (the latency terms, a few hundred microseconds a step, stay), so the
  exposed DP time grows by a factor just under 4; the same on the port of
  any GPU of any replica (the link stands at replica 0's TP rank 0 of its
  stage, sim_plan_slow_link_gpu); factor 1 changes nothing; the report,
  the diagnosis and the JSON say what it exposes;
- --slow-link nvlink:3:2 on tp 8: GPU 3's NVLink at half slows its TP
  group's collectives, so the step is longer with more TP exposed;
- bad values: one line, exit status 2.
"""
import sys

sys.dont_write_bytecode = True
import cli  # noqa: E402

sim, src = cli.arguments("test-straggler.py")
checks = cli.Checks()
plan = ["--topology", "dgx8x4", "--tp", "8", "--pp", "4", "--dp", "2"]


def result(*extra):
    r = cli.run(sim, *plan, *extra, "--json", "-", echo_stderr=True)
    checks.check("exit status of %s" % " ".join(extra or ("the plan",)), r.returncode, 0)
    return cli.json_of(r)


base = result()
v = base["time"]["variability"]
checks.check("gpus", v["gpus"], 64)
checks.check("spread", v["gpu_variation"], 0.015)
checks.report("slowdown 0.015 x 2.34373", abs(v["compute_slowdown"] - 0.015 * 2.3437335) < 1e-7,
              "%.9f" % v["compute_slowdown"])
cpath = base["time"]["critical_path_s"]
compute = cpath["forward"] + cpath["backward"] + cpath["recompute"] + cpath["optimizer"]
want = compute * v["compute_slowdown"] / (1 + v["compute_slowdown"])
checks.report("added seconds: critical compute x s / (1 + s)", abs(v["added_s"] - want) < 1e-9 * want,
              "%.6f s against %.6f s" % (v["added_s"], want))
checks.check("plan.gpu_variation", base["plan"]["gpu_variation"], 0.015)
checks.check("no straggler block without --slow-gpu", "straggler" in base["time"], False)

text = cli.run(sim, *plan).stdout
line = "variability: +%.3f s (+%.1f%%) at 64 GPUs" % (
    v["added_s"], 100 * v["added_s"] / (base["time"]["step_s"] - v["added_s"]))
checks.report("report: " + line, line in text.replace("\n          ", " "))

uniform = result("--gpu-variation", "0")
checks.check("uniform: slowdown", uniform["time"]["variability"]["compute_slowdown"], 0.0)
checks.report("uniform: a shorter step", uniform["time"]["step_s"] < base["time"]["step_s"],
              "%.3f s against %.3f s" % (uniform["time"]["step_s"], base["time"]["step_s"]))
# every stage's forward is the nominal one stretched by exactly 1 + 0.015
# x E[max of 8] = 1 + 0.015 x 1.42360 = 1.021354 where no collective runs
# beside the compute to slow it (one node, pp 8: the sends are not beside
# it): Llama 3 8B over 8 stages
pp8 = ["--nodes", "1", "--model", "llama3-8b", "--tp", "1", "--pp", "8", "--dp", "1"]
a = result(*pp8)
b = result(*pp8, "--gpu-variation", "0")
for x, y in zip(a["time"]["stages"], b["time"]["stages"]):
    ratio = x["forward_s"] / y["forward_s"]
    checks.report("pp 8: stage %d forward x 1.021354" % x["stage"], abs(ratio - (1 + 0.015 * 1.4236003)) < 1e-7,
                  "%.9f" % ratio)
# and a slow GPU 5 at 1.25x on the uniform cluster: stage 5's forward
# x 1.25, the others' as before
c = result(*pp8, "--gpu-variation", "0", "--slow-gpu", "5:1.25")
for x, y in zip(c["time"]["stages"], b["time"]["stages"]):
    want = 1.25 if x["stage"] == 5 else 1.0
    checks.report("pp 8, GPU 5 at 1.25x: stage %d forward x %g" % (x["stage"], want),
                  abs(x["forward_s"] / y["forward_s"] - want) < 1e-9, "%.9f" % (x["forward_s"] / y["forward_s"]))
checks.report("percent form", result("--gpu-variation", "1.5%")["time"]["step_s"] == base["time"]["step_s"])

slow = result("--slow-gpu", "60:1.3")
x = slow["time"]["straggler"]
checks.check("straggler: none-slow step is the plan's own", x["step_s_none_slow"], base["time"]["step_s"])
checks.check("straggler: what was slowed", x["slow"], [{"kind": "gpu", "index": 60, "factor": 1.3}])
checks.report("straggler: a longer step", slow["time"]["step_s"] > base["time"]["step_s"] * 1.2,
              "%.3f s against %.3f s" % (slow["time"]["step_s"], base["time"]["step_s"]))
checks.report("straggler: stage 3 computes longer",
              slow["time"]["stages"][3]["forward_s"] > base["time"]["stages"][3]["forward_s"] * 1.2)
for s in (0, 1, 2):
    checks.check("straggler: stage %d computes as before" % s, slow["time"]["stages"][s]["forward_s"],
                 base["time"]["stages"][s]["forward_s"])
text = cli.run(sim, *plan, "--slow-gpu", "60:1.3").stdout.replace("\n          ", " ")
checks.report("report names the stage and replica", "GPU 60 (stage 3, replica 1) computes 1.30x" in text)
checks.report("diagnosis: the bubble is the wait", "the other stages waiting for it" in text)

node = result("--slow-node", "7:1.3")
checks.check("a slow node is its GPUs' stage: node 7 = ranks 56-63 = stage 3 of replica 1",
             node["time"]["step_s"], slow["time"]["step_s"])

r = cli.run(sim, "compare", "--topology", "dgx8x4", "--plan", "tp=8,pp=4,dp=2",
            "--plan", "tp=8,pp=4,dp=2,slow-gpu=60:1.3", "--json", "-", echo_stderr=True)
checks.check("compare: exit status", r.returncode, 0)
if r.returncode == 0:
    # (to 12 digits: the table's JSON writes 15 significant digits)
    steps = {run["label"]: round(run["step_s"], 9) for run in cli.json_of(r)["runs"]}
    checks.check("compare: the same steps as sim", steps,
                 {"tp=8,pp=4,dp=2": round(base["time"]["step_s"], 9),
                  "tp=8,pp=4,dp=2,slow-gpu=60:1.3": round(slow["time"]["step_s"], 9)})

# sim sweep takes the spread too: its best layout's step is the one sim
# compare gives the same plan string (a number seen in two places)
r = cli.run(sim, "sweep", "--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b", "--top", "1",
            "--seq-len", "4096", "--gpu-variation", "0", "--json", "-", echo_stderr=True)
checks.check("sweep --gpu-variation 0: exit status", r.returncode, 0)
if r.returncode == 0:
    rows = [x for x in cli.json_of(r)["rows"] if x.get("status") == "fits" and x.get("step_s")]
    best = min(rows, key=lambda x: x["step_s"])
    checks.report("sweep: plans carry gpu-variation=0", ",gpu-variation=0," in best["plan"], best["plan"])
    c = cli.run(sim, "compare", "--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b",
                "--plan", best["plan"], "--json", "-", echo_stderr=True)
    checks.check("sweep's best, compared: the same step", round(cli.json_of(c)["runs"][0]["step_s"], 9),
                 round(best["step_s"], 9))
r = cli.run(sim, "sweep", "--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b", "--gpu-variation", "50%")
checks.check("sweep --gpu-variation 50%: exit status", r.returncode, 2)
checks.report("sweep --gpu-variation 50%: one line", r.stderr.count("\n") == 1, r.stderr.strip())

# a slow NIC port: tp 8 x dp 8, the reduction not overlapped
dp8 = ["--topology", "dgx8x4", "--model", "llama3-8b", "--tp", "8", "--pp", "1", "--dp", "8",
       "--no-overlap-grad-reduce", "--no-overlap-param-gather", "--gpu-variation", "0"]


def result_of(args):
    r = cli.run(sim, *args, "--json", "-", echo_stderr=True)
    checks.check("exit status of %s" % " ".join(args[-2:]), r.returncode, 0)
    return cli.json_of(r)


nominal = result_of(dp8)
nic = result_of(dp8 + ["--slow-link", "nic:17:4"])
ratio = nic["time"]["exposed_comm_s"]["dp"] / nominal["time"]["exposed_comm_s"]["dp"]
checks.report("slow NIC at 1/4: exposed DP x just under 4", 3.8 < ratio <= 4.0,
              "%.4f (%.3f s against %.3f s)" % (ratio, nic["time"]["exposed_comm_s"]["dp"], nominal["time"]["exposed_comm_s"]["dp"]))
checks.report("slow NIC: a longer step", nic["time"]["step_s"] > nominal["time"]["step_s"])
x = nic["time"]["straggler"]
checks.check("slow NIC: the step with none slow is the plan's own", x["step_s_none_slow"], nominal["time"]["step_s"])
checks.check("slow NIC: its exposed DP with none slow", x["exposed_comm_s_none_slow"]["dp"], nominal["time"]["exposed_comm_s"]["dp"])
checks.check("slow NIC: what was slowed", x["slow"], [{"kind": "nic", "index": 17, "factor": 4}])
for other in ("nic:0:4", "nic:63:4"):
    checks.check("slow NIC %s: the same step (any GPU's port)" % other,
                 result_of(dp8 + ["--slow-link", other])["time"]["step_s"], nic["time"]["step_s"])
checks.check("slow NIC at factor 1: the plan's own step",
             result_of(dp8 + ["--slow-link", "nic:17:1"])["time"]["step_s"], nominal["time"]["step_s"])
text = cli.run(sim, *dp8, "--slow-link", "nic:17:4").stdout.replace("\n          ", " ")
checks.report("report: the link, its stage and replica",
              "GPU 17's NIC (stage 0, replica 2) carries 1/4.00 of its bandwidth" in text)
added = "DP %+.3f s" % (nic["time"]["exposed_comm_s"]["dp"] - nominal["time"]["exposed_comm_s"]["dp"])
checks.report("report: the DP it exposes beyond none slow", "exposed communication beyond none slow: " + added in text,
              added)
checks.report("diagnosis: slow link", "slow link: the step is" in text)
nv = result_of(["--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b", "--tp", "8", "--pp", "1",
                "--dp", "1", "--gpu-variation", "0", "--slow-link", "nvlink:3:2"])
nv0 = result_of(["--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b", "--tp", "8", "--pp", "1",
                 "--dp", "1", "--gpu-variation", "0"])
checks.report("slow NVLink: a longer step, more TP exposed",
              nv["time"]["step_s"] > nv0["time"]["step_s"] and nv["time"]["exposed_comm_s"]["tp"] > nv0["time"]["exposed_comm_s"]["tp"],
              "%.3f s, TP %.3f s against %.3f s, TP %.3f s" % (nv["time"]["step_s"], nv["time"]["exposed_comm_s"]["tp"],
                                                             nv0["time"]["step_s"], nv0["time"]["exposed_comm_s"]["tp"]))
r = cli.run(sim, "compare", "--topology", "dgx8x4", "--model", "llama3-8b",
            "--plan", "tp=8,pp=1,dp=8,overlap-grad-reduce=false,overlap-param-gather=false,gpu-variation=0,"
            "slow-link=nic:17:4", "--json", "-", echo_stderr=True)
checks.check("compare --plan ...slow-link=nic:17:4: exit status", r.returncode, 0)
if r.returncode == 0:
    checks.check("compare: the same step as sim", round(cli.json_of(r)["runs"][0]["step_s"], 9),
                 round(nic["time"]["step_s"], 9))

for bad, msg in ((["--slow-link", "nic:64:2"], "--slow-link nic:64:2: expected a rank below 64"),
                 (["--slow-link", "disk:3:2"], "--slow-link: expected nic:RANK:FACTOR or nvlink:RANK:FACTOR"),
                 (["--slow-link", "nic:3:0.5"], "--slow-link: expected nic:RANK:FACTOR or nvlink:RANK:FACTOR"),
                 (["--slow-gpu", "64:1.3"], "--slow-gpu 64:1.3: expected a rank below 64"),
                 (["--slow-gpu", "3:0.5"], "--slow-gpu: expected RANK:FACTOR"),
                 (["--slow-gpu", "3"], "--slow-gpu: expected RANK:FACTOR"),
                 (["--slow-node", "8:1.2"], "--slow-node 8:1.2: expected a node below 8"),
                 (["--gpu-variation", "30%"], "--gpu-variation: expected a fraction from 0 to 0.2")):
    r = cli.run(sim, *plan, *bad)
    checks.check("%s: exit status" % " ".join(bad), r.returncode, 2)
    checks.report("%s: one line" % " ".join(bad), r.stderr.count("\n") == 1 and msg in r.stderr,
                  r.stderr.strip())
    checks.check("%s: nothing on stdout" % " ".join(bad), r.stdout, "")

sys.exit(checks.finish())
