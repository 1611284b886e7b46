#!/usr/bin/env python3
"""sim compare and sim sweep: ranking, the parallel sweep equals the serial
one byte for byte, and shards merged equal the whole sweep."""
import json, os, re
import sys

sys.dont_write_bytecode = True
import cli

sim, src = cli.arguments("test-sweep.py")
checks = cli.Checks()
check = checks.check


def run(*args):
    return cli.run(sim, *args, timeout=600, echo_stderr=True)


base = ["--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b", "--global-batch", "64", "--quiet"]

with cli.tempdir() as tmp:
    one = os.path.join(tmp, "one.json")
    two = os.path.join(tmp, "two.json")
    r1 = run("sweep", *base, "--threads", "1", "--json", one)
    r2 = run("sweep", *base, "--threads", "2", "--json", two)
    check("sweep exit status", (r1.returncode, r2.returncode), (0, 0))
    check("sweep on 2 threads = sweep on 1 thread, byte for byte",
          cli.read_bytes(one) == cli.read_bytes(two), True)
    doc = cli.load_json(one)
    rows = doc["rows"]
    simulated = [r for r in rows if r["pruned"] is None]
    check("some layouts simulated", len(simulated) > 0, True)
    check("every out-of-memory prune has its case",
          all(r["oom_case"] in ("A", "B", "C") for r in rows if (r["pruned"] or "").startswith("out of memory")), True)
    # ranking: tokens/s descending among the simulated
    table = run("sweep", *base, "--threads", "2", "--top", "5", "--wide").stdout.splitlines()
    ranks = [l for l in table if l[:4].strip().lstrip("~").isdigit() and len(l.split()) >= 12 and "tp=" in l.split()[1]]
    check("five ranked rows", len(ranks), 5)
    toks = [float(l.split()[4].replace(",", "")) for l in ranks]
    check("ranked by tokens/s", toks, sorted(toks, reverse=True))
    # ties by lower peak memory, then by enumeration order
    best = max(simulated, key=lambda r: (r["tokens_per_s"], -r["peak_bytes"], -r["index"]))
    check("the best row is the fastest layout", ranks[0].split()[1], best["plan"])

    # the table's units: GB (10^9 bytes) throughout, as the diagnosis under
    # it; a column of exposed CP time; no wall-time-like "wall" column
    header = next(l for l in table if l.startswith("rank"))
    check("sweep header", header.split()[2:], ["peak", "GB", "step", "s", "tokens/s", "MFU", "BF16", "MFU",
                                               "bubble", "TP", "s", "CP", "s", "PP", "s", "DP", "s", "EP", "s",
                                               "limit"])
    best_row = next(r for r in simulated if r["plan"] == ranks[0].split()[1])
    check("peak GB in the table = the row's peak bytes / 1e9",
          ranks[0].split()[2], f"{best_row['peak_bytes'] / 1e9:.1f}")
    check("the same GB in the diagnosis under it", f"peak {best_row['peak_bytes'] / 1e9:.1f} GB" in "\n".join(table), True)
    check("no layout listed twice", len({(r["plan"], r["nodes"]) for r in simulated}), len(simulated))

    # shards merged = the whole sweep
    s1 = os.path.join(tmp, "s1.json")
    s2 = os.path.join(tmp, "s2.json")
    check("shard 1/2", run("sweep", *base, "--shard", "1/2", "--json", s1).returncode, 0)
    check("shard 2/2", run("sweep", *base, "--shard", "2/2", "--json", s2).returncode, 0)
    merged = run("sweep", "--merge", s1, s2, "--top", "5").stdout.splitlines()
    mranks = [l for l in merged if l[:4].strip().lstrip("~").isdigit() and len(l.split()) >= 12 and "tp=" in l.split()[1]]
    check("merged top 5 = whole top 5", [l.split()[1] for l in mranks], [l.split()[1] for l in ranks])
    shard_rows = cli.load_json(s1)["rows"] + cli.load_json(s2)["rows"]
    check("shards cover every layout once", sorted(r["index"] for r in shard_rows), list(range(len(rows))))
    # each shard ranked its own top 10 exactly (the default --top): the
    # shard files say so, and a merge asking for more says what it may miss
    check("shards record how many they ranked for certain", cli.load_json(s1)["options"].get("exact-top") == 10,
          True)
    check("merge --top 5 of shards of --top 10: no note", any(l.startswith("note:") for l in merged), False)
    wider = run("sweep", "--merge", s1, s2, "--top", "12").stdout
    check("merge --top 12 of shards of --top 10: the note", "note: the shards simulated each GPU count's best 10"
          in wider and "--top 12 or --all" in wider, (True))

# compare: the plans that fit first, by throughput; an impossible plan fails
c = run("compare", "--topology", "dgx8x4", "--model", "llama3-70b", "--plan", "tp=8,pp=8,dp=1",
        "--plan", "tp=8,pp=4,dp=2", "--plan", "tp=2,pp=4,dp=8,zero=0", "--json", "-")
check("compare exit status", c.returncode, 0)
cdoc = cli.json_of(c)
ctext = run("compare", "--topology", "dgx8x4", "--model", "llama3-70b", "--plan", "tp=8,pp=4,dp=2",
             "--plan", "tp=2,pp=4,dp=8,zero=0", "--wide").stdout.splitlines()
cheader = next(l for l in ctext if l.startswith("rank"))
check("compare header: units on every column, CP and EP exposed, limit, no E",
      cheader.split()[2:], ["fits", "peak", "GB", "step", "s", "tokens/s", "MFU", "BF16", "MFU", "bubble", "TP", "s", "CP",
                            "s", "PP", "s", "DP", "s", "EP", "s", "limit"])
check("compare: no MFU for the plan that does not fit",
      next(l for l in ctext if "zero=0" in l and "OOM" in l).split()[7], "-")
labels = [r["label"] for r in cdoc["runs"]]
check("compare ranks the fitting plans by tokens/s, OOM last",
      labels, ["tp=8,pp=4,dp=2", "tp=8,pp=8,dp=1", "tp=2,pp=4,dp=8,zero=0"])
check("compare OOM case", cdoc["runs"][2]["oom_case"], "A")
# exit status: 0 when at least one plan fits (above, with one OOM plan among
# them), 1 when none does (Llama 3 70B with ZeRO 0 at tp 2 or tp 1: case A)
none = run("compare", "--topology", "dgx8x4", "--plan", "tp=2,pp=4,dp=8,zero=0",
           "--plan", "tp=1,pp=8,dp=8,zero=0")
check("compare: exit 1 when no plan fits, the table still printed",
      (none.returncode, "OOM A" in none.stdout), (1, True))
none_json = run("compare", "--topology", "dgx8x4", "--plan", "tp=2,pp=4,dp=8,zero=0", "--json", "-")
check("compare --json -: exit 1 when no plan fits", (none_json.returncode, len(cli.json_of(none_json)["runs"])), (1, 1))
check("compare --help documents the exit status", "exit status: 0 at least one plan fits" in
      run("compare", "--help").stdout, True)
# sweep: Llama 3 405B on one node (8 GPUs) never fits; 1 when no layout fits
nofit = ["--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-405b", "--quiet"]
r = run("sweep", *nofit)
check("sweep: exit 1 when no layout fits", (r.returncode, "out of memory" in r.stdout), (1, True))
check("sweep: layouts that do not fit are said not to fit", "(no layout fits in GPU memory" in r.stdout, True)
# no layout to try at all: Llama 3 70B's published batch of 1024 on one 72-GPU
# rack with pp 1 and cp 1, where 72 = 2^3 x 3^2 puts a factor 3 in dp (1024 /
# dp fractional) or in tp, which the 64 heads refuse: the sweep enumerates no
# layout.  (With pp free, pp 3 or 9 runs the 80 layers in uneven stages.)
r = run("sweep", "--topology", "gb300-nvl72", "--racks", "1", "--model", "llama3-70b", "--quiet", "--pp", "1",
        "--cp", "1")
check("sweep: with no layout to try, exit 1 and say why, not 'does not fit'",
      (r.returncode, "(no layout to try: no split of the GPUs" in r.stdout, "0 layouts:" in r.stdout,
       "no layout fits in GPU memory" in r.stdout), (1, True, True, False))
with cli.tempdir() as tmp:
    r = run("sweep", *nofit, "--shard", "1/2", "--json", os.path.join(tmp, "s.json"))
    check("sweep --shard: exit 0 once the shard file is written", r.returncode, 0)
check("sweep --help documents the exit status", "exit status: 0 at least one layout fits" in
      run("sweep", "--help").stdout, True)
# A pipeline row gains the layout that evens its stages where one helps
# (sim-balance.h), after the rest of its plan: a plan without it, to match
# a layout's twins whose balanced layouts may differ (FP8 shortens the
# layers, not the output layer)
def unbalanced(plan):
    return re.sub(r",layout=[^,]*$", "", plan)

# --fp8 both: every BF16 layout also appears in FP8, ranked together;
# FP8 linear layers are faster, so the best layout is an FP8 one
with cli.tempdir() as tmp:
    both = os.path.join(tmp, "both.json")
    r = run("sweep", *base, "--fp8", "both", "--json", both)
    rows = [dict(x, plan=unbalanced(x["plan"])) for x in json.load(open(both))["rows"] if "plan" in x]
    fp8 = {x["plan"].replace(",fp8=hybrid", "") for x in rows if x["plan"].endswith(",fp8=hybrid")}
    bf16 = {x["plan"] for x in rows if "fp8=" not in x["plan"] and "zero=" in x["plan"]}
    check("sweep --fp8 both: each BF16 layout has its FP8 twin", (r.returncode, bf16 == fp8), (0, True))
    r = run("sweep", *base, "--fp8", "both", "--top", "1", "--wide")
    check("sweep --fp8 both: the fastest is FP8", "fp8=hybrid" in r.stdout.split("rank")[1].splitlines()[1], True)
r = run("sweep", "--topology", "dgx-a100", "--nodes", "1", "--model", "llama3-8b", "--fp8", "both")
check("sweep --fp8 on A100: exit 2, no FP8 tensor cores", (r.returncode, "no FP8 tensor cores" in r.stderr), (2, True))
# --fp4 (NVFP4 on Blackwell): with --fp8 both, every BF16 layout also appears
# in FP8 and in FP4, ranked together; e2m1 alone enumerates only FP4 layouts;
# refused where the cluster file has no FP4 peak and with --fp8 for e2m1 alone
b200 = ["--topology", "dgx-b200", "--nodes", "1", "--model", "llama3-8b", "--quiet"]
with cli.tempdir() as tmp:
    three = os.path.join(tmp, "three.json")
    r = run("sweep", *b200, "--fp8", "both", "--fp4", "both", "--json", three)
    rows = [dict(x, plan=unbalanced(x["plan"])) for x in json.load(open(three))["rows"]
            if "plan" in x and "zero=" in x["plan"]]
    fp4 = {x["plan"].replace(",fp4=e2m1", "") for x in rows if x["plan"].endswith(",fp4=e2m1")}
    fp8 = {x["plan"].replace(",fp8=hybrid", "") for x in rows if x["plan"].endswith(",fp8=hybrid")}
    bf16 = {x["plan"] for x in rows if "fp8=" not in x["plan"] and "fp4=" not in x["plan"]}
    check("sweep --fp8 both --fp4 both: each BF16 layout has its FP8 and FP4 twins",
          (r.returncode, len(bf16) > 0, bf16 == fp8, bf16 == fp4), (0, True, True, True))
    alone = os.path.join(tmp, "alone.json")
    r = run("sweep", *b200, "--fp4", "e2m1", "--json", alone)
    plans = [unbalanced(x["plan"]) for x in json.load(open(alone))["rows"] if "plan" in x and "zero=" in x["plan"]]
    check("sweep --fp4 e2m1: FP4 layouts alone", (r.returncode, len(plans) > 0, all(p.endswith(",fp4=e2m1") for p in plans)),
          (0, True, True))
r = run("sweep", "--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b", "--fp4", "both")
check("sweep --fp4 on H100: exit 2, no FP4 tensor cores", (r.returncode, "no FP4 tensor cores" in r.stderr), (2, True))
r = run("sweep", *b200, "--fp8", "hybrid", "--fp4", "e2m1")
check("sweep --fp4 e2m1 with --fp8 hybrid: exit 2", (r.returncode, "expected --fp8 off" in r.stderr), (2, True))
# --train-tokens: the best layout's time to train, 1 T tokens at its tokens/s
# on 8 GPUs: days = 1e12 / tokens/s / 86,400 (read off the same sweep's JSON)
with cli.tempdir() as tmp:
    bj = os.path.join(tmp, "b.json")
    r = run("sweep", *base, "--train-tokens", "1T", "--json", bj)
    best = max((x for x in json.load(open(bj))["rows"] if x.get("tokens_per_s")), key=lambda x: x["tokens_per_s"])
    r = run("sweep", *base, "--train-tokens", "1T", "--top", "1")
    line = next((l for l in r.stdout.splitlines() if "training: 1 T tokens in" in l), "")
    days = float(line.split(" in ")[1].split()[0]) if line else -1
    check("sweep --train-tokens: the best layout's days", abs(days - 1e12 / best["tokens_per_s"] / 86400) < 0.06, True)
# constraints: --tp/--pp/--cp restrict the enumeration, --min-headroom
# prunes the layouts that fit with too little free, --jobs is --threads
with cli.tempdir() as tmp:
    cj = os.path.join(tmp, "c.json")
    r = run("sweep", *base, "--tp", "4,1", "--pp", "1,2", "--cp", "1", "--json", cj)
    crows = cli.load_json(cj)["rows"]
    plans = [dict(kv.split("=") for kv in x["plan"].split(",") if "=" in kv) for x in crows]
    check("sweep --tp 4,1 --pp 1,2 --cp 1: rows, and only those sizes",
          (r.returncode, len(crows) > 0, {p["tp"] for p in plans}, {p["pp"] for p in plans},
           {p["cp"] for p in plans}), (0, True, {"1", "4"}, {"1", "2"}, {"1"}))
    check("sweep constraints: in the shard file's options, so shards of other sweeps do not merge",
          {k: cli.load_json(cj)["options"].get(k) for k in ("tp", "cp", "pp")}, {"tp": "1/4", "cp": 1, "pp": "1/2"})
    hj = os.path.join(tmp, "h.json")
    r = run("sweep", *base, "--min-headroom", "50%", "--json", hj)
    hrows = cli.load_json(hj)["rows"]
    free = lambda x: (x["usable_bytes"] - x["peak_bytes"]) / x["usable_bytes"]
    kept = [x for x in hrows if x["pruned"] is None]
    cut = [x for x in hrows if "--min-headroom" in (x["pruned"] or "")]
    check("sweep --min-headroom 50%: every layout kept leaves half its usable memory free",
          (r.returncode, len(kept) > 0, all(free(x) >= 0.5 for x in kept)), (0, True, True))
    check("sweep --min-headroom 50%: every layout it prunes fits with less free",
          (len(cut) > 0, all(x["status"] == "oom" and free(x) < 0.5 for x in cut)), (True, True))
    check("sweep with constraints: the title says them",
          "global batch 64; tp 1, 2; min headroom 50%;" in
          run("sweep", *base, "--tp", "2,1", "--min-headroom", "50%", "--top", "1", "--wide").stdout, True)
    check("sweep --min-headroom: the prune counted with its reason",
          "fits with less than 50% of usable memory free (--min-headroom)" in
          run("sweep", *base, "--min-headroom", "50%", "--top", "1").stdout, True)
    jj, tj = os.path.join(tmp, "j.json"), os.path.join(tmp, "t.json")
    rj = run("sweep", *base, "--tp", "2", "--jobs", "3", "--json", jj)
    rt = run("sweep", *base, "--tp", "2", "--threads", "3", "--json", tj)
    check("sweep --jobs 3 = --threads 3, byte for byte",
          (rj.returncode, rt.returncode, cli.read_bytes(jj) == cli.read_bytes(tj)), (0, 0, True))
# --csv: every row, ranked ones first, its numbers those of the JSON
with cli.tempdir() as tmp:
    import csv as csvmod
    vj, vc = os.path.join(tmp, "v.json"), os.path.join(tmp, "v.csv")
    r = run("sweep", *base, "--tp", "1,2", "--json", vj, "--csv", vc)
    jrows = {x["index"]: x for x in cli.load_json(vj)["rows"]}
    text = open(vc, newline="").read()
    lines = list(csvmod.DictReader(text.splitlines()))
    check("sweep --csv: a header, then one line per row", (r.returncode, len(text.splitlines()), len(lines)),
          (0, len(jrows) + 1, len(jrows)))
    check("sweep --csv: the header names the units",
          {"plan", "gpus", "status", "peak_bytes", "step_s", "tokens_per_s", "mfu", "bubble_fraction",
           "exposed_tp_s", "exposed_cp_s", "exposed_pp_s", "exposed_dp_s", "exposed_ep_s", "pruned"} <= set(lines[0]),
          True)
    keys = ("step_s", "tokens_per_s", "mfu", "bubble_fraction", "exposed_tp_s", "exposed_cp_s", "exposed_pp_s",
            "exposed_dp_s", "exposed_ep_s")
    def same(c):
        j = jrows[int(c["index"])]
        ok = (c["plan"] == j["plan"] and int(c["gpus"]) == j["gpus"] and int(c["peak_bytes"]) == j["peak_bytes"]
              and c["status"] == j["status"] and (c["pruned"] or None) == j["pruned"])
        return ok and all((c[k] == "" and k not in j) or (k in j and float(c[k]) == j[k]) for k in keys)
    check("sweep --csv: every line's numbers equal its JSON row's", all(same(c) for c in lines), True)
    ranked = [c for c in lines if c["rank"]]
    # ranked: the layouts that fit with the fragmentation allowance by
    # tokens/s, then the tight ones (peak over usable) by tokens/s
    order = [(int(c["peak_bytes"]) > int(c["usable_bytes"]), -float(c["tokens_per_s"])) for c in ranked]
    check("sweep --csv: the ranked rows first, tight ones last, each by tokens/s",
          ([int(c["rank"]) for c in ranked] == list(range(1, len(ranked) + 1)),
           lines[:len(ranked)] == ranked, order == sorted(order)), (True, True, True))
    # --csv alone does not simulate every layout (simulating all of them took 89 s against 2 s):
    # the rows past the top 10's bound are listed with why; --all simulates them
    bound = "its compute alone is slower than the top"
    ac = os.path.join(tmp, "all.csv")
    run("sweep", *base, "--tp", "1,2", "--csv", ac, "--all")
    every = list(csvmod.DictReader(open(ac, newline="").read().splitlines()))
    check("sweep --csv: the layouts past the bound listed unsimulated; with --all, none",
          (any(bound in c["pruned"] and c["step_s"] == "" for c in lines),
           any(bound in c["pruned"] for c in every), sum(1 for c in every if c["rank"]) > len(ranked)),
          (True, False, True))
    r = run("sweep", *base, "--tp", "1,2", "--csv", os.path.join(tmp, "no-such-dir", "x.csv"))
    check("sweep --csv into a missing folder: exit 2 before the sweep",
          (r.returncode, r.stderr.startswith("sim: --csv: ")), (2, True))
# --chart: step time against peak memory (the Pareto front labelled), or with
# --scale tokens/s against nodes; PNG, SVG or PDF by the name
with cli.tempdir() as tmp:
    png, svg = os.path.join(tmp, "s.png"), os.path.join(tmp, "s.svg")
    r = run("sweep", *base, "--tp", "1,2", "--chart", png, "--csv", os.path.join(tmp, "s.csv"))
    data = cli.read_bytes(png) if os.path.exists(png) else b""
    check("sweep --chart s.png: a PNG of a plausible size",
          (r.returncode, data[:8] == b"\x89PNG\r\n\x1a\n", 20000 < len(data) < 5000000), (0, True, True))
    w, h = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    check("sweep --chart: a chart's size (1400 x 820)", (w, h), (1400, 820))
    r = run("sweep", "--topology", "dgx8x4", "--model", "llama3-8b", "--global-batch", "64", "--quiet",
            "--scale", "--max-nodes", "2", "--tp", "8", "--chart", svg)
    text = open(svg).read() if os.path.exists(svg) else ""
    check("sweep --scale --chart s.svg: an SVG", (r.returncode, text.startswith("<?xml") and "<svg" in text),
          (0, True))
    r = run("sweep", *base, "--chart", os.path.join(tmp, "s.gif"))
    check("sweep --chart s.gif: exit 2 before the sweep, one line",
          (r.returncode, len(r.stderr.strip().splitlines()), "--chart: " in r.stderr, ".png, .svg or .pdf" in r.stderr),
          (2, 1, True, True))
    check("sweep --chart s.gif: nothing written", sorted(os.listdir(tmp)), ["s.csv", "s.png", "s.svg"])
# --max-nodes: with --scale, the largest node count tried; without, the cluster capped
with cli.tempdir() as tmp:
    mj = os.path.join(tmp, "m.json")
    r = run("sweep", "--topology", "dgx8x4", "--model", "llama3-8b", "--global-batch", "64", "--quiet",
            "--scale", "--max-nodes", "2", "--tp", "8", "--json", mj)
    check("sweep --scale --max-nodes 2: 1 and 2 nodes tried",
          (r.returncode, sorted({x["nodes"] for x in cli.load_json(mj)["rows"]})), (0, [1, 2]))
    r = run("sweep", "--topology", "dgx8x4", "--model", "llama3-8b", "--global-batch", "64", "--quiet",
            "--max-nodes", "2", "--tp", "8", "--json", mj)
    check("sweep --max-nodes 2 on 4 nodes: the sweep on 2",
          (r.returncode, sorted({x["nodes"] for x in cli.load_json(mj)["rows"]})), (0, [2]))
# bad values: exit 2, one line on stderr naming the option and what it expects
for args, want in ((["--tp", "x"], "--tp: expected a comma-separated list of"),
                   (["--pp", "1,,2"], "--pp: expected a comma-separated list of"),
                   (["--cp", "0"], "--cp: expected a comma-separated list of"),
                   (["--min-headroom", "120%"], "--min-headroom: expected a percentage"),
                   (["--min-headroom", "ten"], "--min-headroom: expected a percentage"),
                   (["--max-nodes", "0"], "--max-nodes: expected a whole number"),
                   (["--jobs", "0"], "--jobs: expected a whole number"),
                   (["--jobs", "2", "--threads", "2"], "--jobs is another name for --threads")):
    r = run("sweep", *base, *args)
    check(f"sweep {' '.join(args)}: exit 2, one line",
          (r.returncode, len(r.stderr.strip().splitlines()), want in r.stderr, r.stdout), (2, 1, True, ""))
# a mixture-of-experts model: the sweep enumerates ep and etp (each row's plan
# names them), never ZeRO-2/3 (sim refuses them with experts); the best row
# fits and splits the experts; a screened row's step (steady state of
# shorter runs) is the full simulation's within a millionth
with cli.tempdir() as tmp:
    mj, mc = os.path.join(tmp, "moe.json"), os.path.join(tmp, "moe.csv")
    # 4096 sequences: enough micro-batches per replica that the steady
    # state costs less than the whole step (sim_iteration_run_steady)
    moe = ["--topology", "dgx8x4", "--model", "mixtral-8x7b", "--seq-len", "4096", "--global-batch", "4096",
           "--quiet"]
    r = run("sweep", *moe, "--tp", "1,2", "--pp", "2,4", "--cp", "1", "--top", "3", "--json", mj, "--csv", mc)
    mrows = cli.load_json(mj)["rows"] if os.path.exists(mj) else []
    items = [dict(kv.split("=", 1) for kv in x["plan"].split(",") if "=" in kv) for x in mrows]
    layouts = [i for i, x in zip(items, mrows) if "schedule" in i and "gpipe" != i["schedule"]]
    check("moe sweep: exit 0, rows", (r.returncode, len(layouts) > 0), (0, True))
    check("moe sweep: every layout names ep and etp, seq 4096",
          all("ep" in i and "etp" in i and i["seq"] == "4096" for i in layouts), True)
    check("moe sweep: ep 1, 2, 4, 8 and etp 1, 2 tried",
          (sorted({int(i["ep"]) for i in layouts}), sorted({int(i["etp"]) for i in layouts})), ([1, 2, 4, 8], [1, 2]))
    check("moe sweep: etp x ep divides tp x cp x dp",
          all((int(i["tp"]) * int(i["cp"]) * int(i["dp"])) % (int(i["ep"]) * int(i["etp"])) == 0 for i in layouts),
          True)
    check("moe sweep: ZeRO 0 to 3", sorted({i["zero"] for i in layouts}), ["0", "1", "2", "3"])
    # ranked as sim ranks: the tight ones (peak over usable) after the rest
    mranked = sorted((x for x in mrows if x.get("step_s") is not None),
                     key=lambda x: (x["peak_bytes"] > x["usable_bytes"], -x["tokens_per_s"], x["peak_bytes"],
                                    x["index"]))
    top = mranked[0] if mranked else {"plan": "", "status": "oom"}
    check("moe sweep: the best row fits and has ep > 1",
          (top["status"] == "fits", int(dict(kv.split("=", 1) for kv in top["plan"].split(",") if "=" in kv).get("ep", 0)) > 1),
          (True, True))
    check("moe sweep --csv: the header, the best plan first",
          open(mc).read().splitlines()[1].split('"')[1] if os.path.exists(mc) else "", top["plan"])
    screened = [x for x in mranked if x["screened"]][:3]
    check("moe sweep: rows screened from shorter runs", len(screened), 3)
    for x in screened:
        flags = [a for kv in x["plan"].split(",") for a in ("--" + kv).split("=", 1)]
        full = run("--topology", "dgx8x4", "--model", "mixtral-8x7b", *flags, "--exact", "--json", "-")
        step = cli.json_of(full)["time"]["step_s"] if full.returncode == 0 else float("nan")
        check(f"moe sweep: {x['plan']} screened = sim --exact within 1e-6",
              abs(x["step_s"] - step) <= 1e-6 * step, True)
for args, want in ((["--ep", "3"], "--ep 3 must divide the 8 routed experts of mixtral-8x7b"),
                   (["--etp", "5"], "--etp 5 must divide the expert width 14336 of mixtral-8x7b")):
    r = run("sweep", "--topology", "dgx8x4", "--model", "mixtral-8x7b", *args)
    check(f"moe sweep {' '.join(args)}: exit 2, one line",
          (r.returncode, len(r.stderr.strip().splitlines()), want in r.stderr, r.stdout), (2, 1, True, ""))
# a model that publishes no global batch: the sweep gives every layout the
# same one, 8 sequences per GPU (8 x 16 = 128 here), so that their step
# times compare; the title says so, and the table leaves the shared gb out
r = run("sweep", "--topology", "dgx8x4", "--nodes", "2", "--model", "mixtral-8x7b", "--seq-len", "4096",
        "--tp", "1,2", "--cp", "1", "--pp", "1,2", "--top", "5", "--quiet")
j = run("sweep", "--topology", "dgx8x4", "--nodes", "2", "--model", "mixtral-8x7b", "--seq-len", "4096",
        "--tp", "1,2", "--cp", "1", "--pp", "1,2", "--json", "-")
fit = [x for x in cli.json_of(j)["rows"] if x.get("step_s") is not None] if j.returncode == 0 else []
gbs = {dict(kv.split("=", 1) for kv in x["plan"].split(",") if "=" in kv)["gb"] for x in fit}
check("sweep without a global batch: the title gives 8 per GPU",
      "global batch 128, 8 sequences per GPU" in r.stdout, True)
check("sweep without a global batch: every layout that fits runs 128", (len(fit) > 0, gbs), (True, {"128"}))
table = r.stdout.split("rank  plan", 1)[-1].split("\n\n", 1)[0]
check("sweep without a global batch: the table leaves the shared gb out, the best plan gives it",
      ("gb=" in table, "gb=128," in r.stdout.split("best: ", 1)[-1]), (False, True))
# the 100-column promise on a MoE sweep: its summary
# and its best plan's string, which has no spaces and wraps after a comma
r = run("sweep", "--topology", "dgx-h100", "--nodes", "2", "--model", "mixtral-8x7b", "--top", "3")
wide = [line for line in r.stdout.splitlines() if len(line) > 100]
best = re.split(r"\n  (?=\S)", r.stdout.split("best: ", 1)[-1], maxsplit=1)[0]
check("MoE sweep: no line over 100 columns", wide, [])
check("MoE sweep: the best plan wraps after its commas and reads back whole",
      ("\n      " in best, "," in best and " " not in best.replace("\n      ", "")), (True, True))
# sim compare does the same: two Mixtral plans that give no global batch
# both run 8 x 64 = 512 (each plan's own default, 8 micro-batches per
# stage, would be 1 x 16 x 8 x 4 = 512 and 1 x 16 x 8 x 2 = 256), and the
# title says so; a plan that gives one keeps it
c = run("compare", "--topology", "dgx8x4", "--model", "mixtral-8x7b", "--plan", "pp=4,ep=8,seq=4096",
        "--plan", "pp=2,ep=8,tp=2,seq=4096", "--plan", "pp=2,ep=8,tp=2,seq=4096,gb=128", "--json", "-")
ct = run("compare", "--topology", "dgx8x4", "--model", "mixtral-8x7b", "--plan", "pp=4,ep=8,seq=4096",
         "--plan", "pp=2,ep=8,tp=2,seq=4096")
check("compare without a global batch: the plans that give none share 512, the other keeps 128",
      sorted(x["plan"]["global_batch"] for x in cli.json_of(c)["runs"]) if c.returncode == 0 else None,
      [128, 512, 512])
check("compare without a global batch: the title says so",
      "global batch 512, 8 sequences per GPU" in " ".join(ct.stdout.split()), True)
# --schedule LIST: only those schedules in the rows; the schedules
# enumerated otherwise include the zero-bubble ones and DualPipe's
sj = run("sweep", "--topology", "dgx8x4", "--nodes", "4", "--model", "llama3-70b", "--schedule", "zb-v,dualpipe",
         "--top", "3", "--json", "-")
# (the dominated choices, GPipe and selective recomputation, are counted
# whatever the schedules asked)
dominated = ("GPipe", "selective recomputation", "no sequence parallelism")
srows = [x for x in cli.json_of(sj)["rows"] if not str(x.get("pruned")).startswith(dominated)] \
    if sj.returncode == 0 else []
scheds = {dict(kv.split("=", 1) for kv in x["plan"].split(",") if "=" in kv).get("schedule") for x in srows}
check("sweep --schedule zb-v,dualpipe: only those", scheds, {"zb-v", "dualpipe"})
aj = run("sweep", "--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b", "--global-batch", "64", "--json", "-")
arows = cli.json_of(aj)["rows"] if aj.returncode == 0 else []
check("sweep: every schedule tried on 8 GPUs",
      {"1f1b", "interleaved", "zb-h1", "zb-v", "dualpipe-v", "dualpipe"} <=
      {dict(kv.split("=", 1) for kv in x["plan"].split(",") if "=" in kv).get("schedule") for x in arows}, True)
bs = run("sweep", "--topology", "dgx8x4", "--model", "llama3-70b", "--schedule", "pipedream")
check("sweep --schedule pipedream: exit 2, one line",
      (bs.returncode, len(bs.stderr.strip().splitlines()), "--schedule: expected" in bs.stderr), (2, 1, True))
# the experts' routing for every layout (token dropping with padding to
# capacity 1, a busiest GPU 1.2x the mean): every row's plan carries it, the
# title says it, the table leaves it out; the best row's step is sim
# compare's for its plan, and the sweep's shards carry it in their options
# (a shard of another routing does not merge with them)
route = ["--topology", "dgx-h100", "--nodes", "1", "--model", "qwen3-30b-a3b", "--tp", "1,2", "--pp", "1",
         "--quiet", "--moe-imbalance", "1.2", "--moe-expert-capacity-factor", "1",
         "--moe-pad-expert-input-to-capacity"]
items = "moe-imbalance=1.2,moe-expert-capacity-factor=1,moe-pad-expert-input-to-capacity=true"
with cli.tempdir() as tmp:
    rj = run("sweep", *route, "--top", "2", "--json", "-")
    rt = run("sweep", *route, "--top", "2")
    rrows = [x for x in cli.json_of(rj)["rows"] if x.get("step_s") is not None] if rj.returncode == 0 else []
    check("routed sweep: every layout simulated carries the routing",
          (len(rrows) > 0, all(items in x["plan"] for x in rrows)), (True, True))
    check("routed sweep: the title says it, the table does not repeat it",
          ("experts routed with the busiest GPU's experts 1.2x the mean, capacity factor 1 (tokens beyond it "
           "dropped), padded to capacity" in " ".join(rt.stdout.split()),
           "moe-imbalance" in rt.stdout.split("rank  plan", 1)[-1].split("\n\n", 1)[0]), (True, False))
    first = min(rrows, key=lambda x: x["rank"]) if rrows else {"plan": "", "step_s": None}
    rc = run("compare", "--topology", "dgx-h100", "--nodes", "1", "--model", "qwen3-30b-a3b", "--plan",
             first["plan"], "--json", "-")
    check("routed sweep: the best row's step is sim compare's",
          cli.json_of(rc)["runs"][0]["step_s"] if rc.returncode == 0 else None, first["step_s"])
    dropless = run("compare", "--topology", "dgx-h100", "--nodes", "1", "--model", "qwen3-30b-a3b", "--plan",
                   first["plan"].replace("," + items, ""), "--json", "-")
    check("routed sweep: and not the dropless plan's",
          cli.json_of(dropless)["runs"][0]["step_s"] != first["step_s"] if dropless.returncode == 0
          else None, True)
    a, b = os.path.join(tmp, "r1.json"), os.path.join(tmp, "r2.json")
    run("sweep", *route, "--shard", "1/2", "--json", a)
    run("sweep", *route[:-5], "--shard", "2/2", "--json", b)
    opts = cli.load_json(a)["options"] if os.path.exists(a) else {}
    check("routed sweep: its shard records the routing",
          (opts.get("moe-imbalance"), opts.get("moe-expert-capacity-factor"),
           opts.get("moe-pad-expert-input-to-capacity")), ("1.2", 1, "true"))
    m = run("sweep", "--merge", a, b)
    check("routed sweep: a shard routed otherwise does not merge with it",
          (m.returncode, "options" in m.stderr), (2, True))
bad = run("compare", "--topology", "dgx8x4", "--plan", "tp=8,pp=4,dp=3")
check("compare with an impossible plan exits 2", bad.returncode, 2)
check("and names the plan", "--plan tp=8,pp=4,dp=3:" in bad.stderr, True)

sys.exit(checks.finish())
