#!/usr/bin/env python3
"""sim calibrate and sim validate --gemm/--hbm: calibration files are written,
load, and change what they should; committed measurement sets are checked
against the topologies with a stated tolerance."""
import os
import sys

sys.dont_write_bytecode = True
import cli

sim, src = cli.arguments("test-calibrate.py")
data = os.path.join(src, "tests", "validation", "data")
checks = cli.Checks()
check = checks.check


def run(*args):
    return cli.run(sim, *args, timeout=300)


def step(*extra):
    r = cli.run(sim, "--topology", "dgx8x4", "--tp", "8", "--pp", "4", "--dp", "2", "--global-batch", "64",
                "--json", "-", *extra, timeout=300, echo_stderr=True)
    return cli.json_of(r)["time"]


# every committed measurement set against its topology, 10 % mean absolute
# error: the GEMM sets are published tables (no GPU was lent), so mostly
# in-sample; the best-shape points are the out-of-sample part
for gpu, topo in (("h100-sxm", "dgx8x4"), ("a100-sxm", "dgx-a100")):
    r = run("validate", "--gemm", os.path.join(data, gpu, "gemm-published.csv"), "--topology", topo, "--max-error", "10")
    print(r.stdout)
    check(f"{gpu} GEMM set within 10 %", r.returncode, 0)
# the one rectangular A100 measurement (MAMF's best shape, 1024 x 10240 x 5120
# at 271.2 TFLOP/s) is not among the points tools/ampere-gemm-grid.py builds
# the A100 table from (the square curve and Hopper's shape factor): within
# 3 %, the +-8 TFLOP/s the square curve was read to, it checks that factor
r = run("validate", "--gemm", os.path.join(data, "a100-sxm", "gemm-published.csv"), "--topology", "dgx-a100")
row = [line.split() for line in r.stdout.splitlines() if line.split()[:3] == ["1024", "10240", "5120"]]
check("A100 rectangular shape, out of sample, within 3 %",
      len(row) == 1 and abs(float(row[0][4]) / float(row[0][3]) - 1) <= 0.03, True)
# the gate works: H100 rates against an A100 cluster are far off
r = run("validate", "--gemm", os.path.join(data, "h100-sxm", "gemm-published.csv"), "--topology", "dgx-a100", "--max-error", "10")
check("--max-error fails a wrong GPU", r.returncode, 1)

with cli.tempdir() as tmp:
    cal = os.path.join(tmp, "calib.xml")
    r = run("calibrate", "--gemm", os.path.join(data, "h100-sxm", "gemm-published.csv"),
            "--nccl", os.path.join(data, "nccl-tests", "h100x8-allreduce-dgxc-benchmarking.txt"),
            "--gpu", "H100 SXM", "-o", cal)
    check("calibrate exit status", r.returncode, 0)
    check("calibration written", os.path.exists(cal), True)
    check("a calibration from the topology's own sources changes nothing",
          step("--calibration", cal)["step_s"], step()["step_s"])

    # half the NVLink bandwidth: the tensor-parallel traffic takes about twice as long
    # (with the TP collectives exposed: --no-tp-comm-overlap)
    slow = os.path.join(tmp, "slow.xml")
    with open(slow, "w") as f:
        f.write('<?xml version="1.0"?>\n<calibration gpu="H100"><link kind="nvlink" achieved-bandwidth="225GB/s"/></calibration>\n')
    base, half = step("--no-tp-comm-overlap"), step("--no-tp-comm-overlap", "--calibration", slow)
    ratio = half["exposed_comm_s"]["tp"] / base["exposed_comm_s"]["tp"]
    # NVLink moves 370.8 GB/s with NCCL's Simple protocol (topologies/dgx8x4.xml):
    # 370.8 / 225 = 1.65x for the bandwidth term, less where latency counts
    check("225 GB/s NVLink: TP exposure 1.5-1.65x", 1.5 < ratio <= 1.65, True)
    base = step()

    # a measured HBM rate below the data sheet slows the memory-bound work
    hbm = os.path.join(tmp, "hbm.csv")
    with open(hbm, "w") as f:
        f.write("# sim-microbench/1\n# program: hbm\n# gpu: test\n"
                "kind,op,dtype,m,n,k,bytes,gpus,time_us,rate_per_s\n"
                "hbm,triad,bf16,,,,1073741824,1,1610.6,2.0e12\n"
                "hbm,copy,bf16,,,,1073741824,1,1150.0,1.8e12\n")
    cal2 = os.path.join(tmp, "hbm.xml")
    r = run("calibrate", "--hbm", hbm, "--gpu", "test", "-o", cal2)
    check("hbm calibration", r.returncode, 0)
    check("calibrate reports the highest rate", "hbm: 2000.0 GB/s sustained" in r.stdout, True)
    check("slower HBM, slower step", step("--calibration", cal2)["step_s"] > base["step_s"], True)
    r = run("validate", "--hbm", hbm, "--topology", "dgx8x4")
    # 3.35 TB/s data sheet against 2.0 measured: +67.5 %; 1.8: +86.1 %
    check("validate --hbm error", "+67.5%" in r.stdout and "+86.1%" in r.stdout, True)

    # latency: fitted on one published H100 x 8 measurement (dgxc), checked on
    # another machine's (AWS p5): the fit must lower the error out of sample
    # (the dgxc sizes to 64 KiB run 13-20 us against 15 us as NCCL is tuned)
    nccl = os.path.join(data, "nccl-tests")
    lat = os.path.join(tmp, "lat.xml")
    r = run("calibrate", "--nccl", os.path.join(nccl, "h100x8-allreduce-dgxc-benchmarking.txt"),
            "--topology", "dgx8x4", "--gpu", "H100 SXM", "-o", lat)
    print(r.stdout)
    check("latency fit exit status", r.returncode, 0)
    check("latency fit reported", "latency x " in r.stdout and "1.000 fitted" in r.stdout, True)

    def mean_error(*extra):
        r = run("validate", "--topology", "dgx8x4", "--op", "all_reduce", "--gpus", "8",
                "--nccl", os.path.join(nccl, "h100x8-p5-allreduce-awsbatch.txt"), *extra)
        last = r.stdout.strip().splitlines()[-1]
        print(last)
        return float(last.split("error ")[1].split(" %")[0])
    before, after = mean_error(), mean_error("--calibration", lat)
    check(f"out of sample, all sizes: {before:.1f} % -> {after:.1f} %", after < before, True)
    r = run("calibrate", "--nccl", os.path.join(nccl, "h100x8-p5-allreduce-awsbatch.txt"),
            "--topology", "dgx8x4", "--gpu", "H100 SXM", "-o", lat)
    check("a file without device lines needs --gpus", (r.returncode, "--gpus" in r.stderr), (2, True))

sys.exit(checks.finish())
