#!/usr/bin/env python3
"""Finding your way and fitting a terminal: what a new user
meets first.

usage: test-finding-your-way.py SIM SOURCE_ROOT

- every table and help text is at most 100 columns by default, and --wide
  gives back the wide layout (the report's GiB column, compare's TP/CP/PP/DP
  columns, the sweep's full plans);
- a number is never the last word of a wrapped line (it stays with its unit);
- sim list models|topologies|gpus name what ships, with sizes;
- -h is --help everywhere, and every subcommand has a usage line;
- --gpus N takes part of a cluster file: 1, 2, 4, 8 GPUs of one node or a
  multiple of a node;
- a NIC bandwidth written in bytes gets a warning and the exit status of the
  same run without it;
- a cluster file names a shipped GPU type (<gpu-type ref="..."/>) instead of
  copying its definition."""
import os
import re
import sys

sys.dont_write_bytecode = True
import cli

sim, src = cli.arguments("test-finding-your-way.py")
checks = cli.Checks()
WIDTH = 100


def widest(text):
    return max((len(l) for l in text.splitlines()), default=0)


UNIT = re.compile(r"^\s+(GB|GiB|Gb/s|GB/s|TFLOP/s|tokens/s|mb|s|%|B|M|GPUs?|nodes?)\b")


def number_ends_line(text):
    """a number whose unit went to the next line: a line that starts with a unit"""
    lines = text.splitlines()
    for a, b in zip(lines, lines[1:]):
        if UNIT.match(b) and re.search(r"[0-9]$", a):
            return a + " / " + b
    return None


with cli.tempdir() as tmp:
    def run(*args):
        return cli.run(sim, *args, cwd=tmp, timeout=300)

    cases = {
        "report": ["--topology", "dgx8x4", "--tp", "8", "--pp", "4", "--dp", "2"],
        "report out of memory": ["--topology", "dgx8x4", "--model", "llama3-405b", "--tp", "8", "--pp", "8"],
        "compare": ["compare", "--topology", "dgx8x4", "--plan", "tp=8,pp=4,dp=2", "--plan", "tp=2,pp=4,dp=8,zero=0"],
        "sweep": ["sweep", "--topology", "dgx8x4", "--gpus", "8", "--model", "llama3-8b", "--global-batch", "64",
                  "--threads", "2", "--quiet", "--top", "5"],
        "help": ["--help"],
        "kernels": ["kernels", "--topology", "dgx8x4", "--model", "mixtral-8x7b", "--tp", "2", "--ep", "8",
                    "--pp", "4"],
        # a mixture-of-experts plan with context parallelism: the stage table's
        # CP and EP columns, the experts' defaults, the critical path with ep
        "report MoE with cp": ["--topology", "dgx8x4", "--model", "mixtral-8x7b", "--seq-len", "8192",
                               "--ep", "8", "--pp", "4", "--cp", "2", "--recompute", "full"],
    }
    for c in ["compare", "sweep", "collective", "validate", "calibrate", "shapes", "kernels", "list"]:
        cases[f"{c} --help"] = [c, "--help"]
    for k in ["models", "topologies", "gpus"]:
        cases[f"list {k}"] = ["list", k]
    outputs = {}
    for name, args in cases.items():
        r = run(*args)
        outputs[name] = r.stdout
        checks.check(f"{name}: exit status", r.returncode, 1 if name == "report out of memory" else 0)
        checks.report(f"{name}: at most {WIDTH} columns", widest(r.stdout) <= WIDTH, f"widest {widest(r.stdout)}")
        checks.check(f"{name}: no number wrapped away from its unit", number_ends_line(r.stdout), None)

    # sim kernels --csv -: the CSV alone, one row per kernel, whose seconds
    # add up to the table's forward total (Llama-3-8B at tp 1: 12 kernels)
    r = run("kernels", "--topology", "dgx-h100", "--gpus", "8", "--model", "llama3-8b", "--tp", "1", "--dp", "8",
            "--csv", "-")
    lines = r.stdout.splitlines()
    checks.check("kernels --csv -: header", lines[0] if lines else "",
                 "pass,name,role,kind,m,n,k,batch,kernels,bytes,flop,seconds")
    fwd = [l.split(",") for l in lines[1:] if l.startswith("forward,")]
    checks.check("kernels --csv -: forward kernels", sum(int(f[8]) for f in fwd), 12)
    table = run("kernels", "--topology", "dgx-h100", "--gpus", "8", "--model", "llama3-8b", "--tp", "1", "--dp", "8")
    m = re.search(r"^forward .*?\n  total +\S+ +([0-9.]+)", table.stdout, re.S | re.M)
    checks.check("kernels --csv -: forward seconds sum to the table's total",
                 m is not None and abs(sum(float(f[11]) for f in fwd) * 1e3 - float(m.group(1))) < 0.0005, True)

    # --wide gives the wide layout back
    wide = run(*cases["report"], "--wide").stdout
    checks.check("report --wide: the peak GiB column", "peak GB  peak GiB" in wide, True)
    checks.report("report --wide: wider than 100", widest(wide) > WIDTH, f"widest {widest(wide)}")
    wide = run(*cases["compare"], "--wide").stdout
    checks.check("compare --wide: TP s ... DP s columns", all(c in wide for c in ("TP s", "CP s", "PP s", "DP s")), True)
    wide = run(*cases["sweep"], "--wide").stdout
    checks.check("sweep --wide: full plans", "gb=64,schedule=1f1b" in wide, True)
    checks.check("sweep: plans without the fixed global batch", "gb=" in outputs["sweep"].split("best:")[0], False)
    checks.check("help: the --calibration sentence is whole", "over the\n                                     topology's own" in outputs["help"], True)

    # -h and usage lines
    for c in ["", "compare", "sweep", "collective", "validate", "calibrate", "shapes", "kernels", "list"]:
        args = [c, "-h"] if c else ["-h"]
        r = run(*args)
        checks.check(f"sim {c} -h: usage", (r.returncode, r.stdout.startswith("usage: sim")), (0, True))

    # list
    checks.report("list topologies: dgx8x4 with 64 GPUs, 8 x 8", re.search(r"^dgx8x4\s+64\s+8 x 8\b", outputs["list topologies"], re.M) is not None)
    checks.report("list models: llama3-70b with 70.55 B", re.search(r"^llama3-70b\s+70\.55 B\s+80\s+8192", outputs["list models"], re.M) is not None)
    checks.report("list gpus: H100 with 80 GiB and 989 TFLOP/s", re.search(r"^h100-sxm5-80gb .* 80\.00 GiB\s+989 TFLOP/s", outputs["list gpus"], re.M) is not None)

    # --gpus
    for g, want in [("1", "1 GPU: 1 node x 1 "), ("2", "2 GPUs: 1 node x 2 "), ("4", "4 GPUs: 1 node x 4 "),
                    ("8", "8 GPUs: 1 node x 8 "), ("16", "16 GPUs: 2 nodes x 8 ")]:
        r = run("--topology", "dgx8x4", "--model", "llama3-8b", "--gpus", g, "--tp", "1", "--memory-only")
        # whether it fits is not the point (1 GPU of llama3-8b does not)
        checks.check(f"--gpus {g}", (r.returncode in (0, 1), want in r.stdout), (True, True))
    r = run("--topology", "dgx8x4", "--model", "llama3-8b", "--gpus", "4", "--tp", "2", "--pp", "2")
    checks.check("--gpus 4: a timed run on part of a node", (r.returncode, "Time      step" in r.stdout), (0, True))

    # a NIC in GB/s: a warning on stderr, the same exit status
    with open(os.path.join(src, "topologies", "dgx8x4.xml"), encoding="utf-8") as f:
        xml = f.read()
    bad = os.path.join(tmp, "nic-bytes.xml")
    with open(bad, "w", encoding="utf-8") as f:
        f.write(xml.replace('bandwidth="400Gb/s"', 'bandwidth="400GB/s"'))
    checks.check("test file has a NIC in GB/s", "400GB/s" in open(bad, encoding="utf-8").read(), True)
    good = run("--topology", "dgx8x4", "--model", "llama3-8b", "--tp", "8", "--memory-only")
    r = run("--topology", bad, "--model", "llama3-8b", "--tp", "8", "--memory-only")
    checks.check("NIC in GB/s: exit status unchanged", r.returncode, good.returncode)
    checks.report("NIC in GB/s: one warning naming 400Gb/s",
                  r.stderr.count("sim: warning:") == 1 and "did you mean 400Gb/s" in r.stderr, r.stderr.strip())
    checks.check("NIC in Gb/s: no warning", good.stderr, "")

    # <gpu-type ref="..."/>: dgx-h100.xml with its 160-line H100 definition
    # replaced by a reference to the shipped one predicts the same step,
    # byte for byte, as the file itself (the reference reads dgx-h100.xml's
    # definition: the first shipped file in name order that has the id)
    with open(os.path.join(src, "topologies", "dgx-h100.xml"), encoding="utf-8") as f:
        xml = f.read()
    short = re.sub(r'<gpu-type id="h100-sxm5-80gb".*?</gpu-type>', '<gpu-type ref="h100-sxm5-80gb"/>', xml,
                   flags=re.S)
    checks.check("ref: the definition was replaced", short.count("<gpu-type") == 1 and len(short) < len(xml), True)
    ref = os.path.join(tmp, "by-ref.xml")
    with open(ref, "w", encoding="utf-8") as f:
        f.write(short)
    layout = ["--nodes", "2", "--model", "llama3-8b", "--tp", "8", "--dp", "2", "--json", "-"]
    whole = run("--topology", "dgx-h100", *layout)
    byref = run("--topology", ref, *layout)
    checks.check("ref: same exit status", byref.returncode, whole.returncode)
    checks.check("ref: the same JSON result but the file's path",
                 byref.stdout.replace(ref, "PATH"), whole.stdout.replace(os.path.join(src, "topologies", "dgx-h100.xml"), "PATH"))
    renamed = os.path.join(tmp, "renamed.xml")
    with open(renamed, "w", encoding="utf-8") as f:
        f.write(short.replace('<gpu-type ref="h100-sxm5-80gb"/>', '<gpu-type ref="h100-sxm5-80gb" id="ours"/>')
                .replace('gpu-type="h100-sxm5-80gb"', 'gpu-type="ours"'))
    r = run("--topology", renamed, *layout)
    checks.check("ref with an id of its own: runs", r.returncode, whole.returncode)
    typo = os.path.join(tmp, "typo.xml")
    with open(typo, "w", encoding="utf-8") as f:
        f.write(short.replace('ref="h100-sxm5-80gb"', 'ref="h100-sxm-80gb"'))
    r = run("--topology", typo, *layout)
    checks.report("ref to no shipped type: exit 2, one line naming the shipped ids and the likely one",
                  r.returncode == 2 and r.stderr.count("\n") == 1 and "a100-sxm4-80gb" in r.stderr
                  and "did you mean 'h100-sxm5-80gb'" in r.stderr and typo + ":" in r.stderr, r.stderr.strip())

sys.exit(checks.finish())
