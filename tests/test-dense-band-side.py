#!/usr/bin/env python3
"""Which way the dense error band errs: a fitted or heldout band of the band
file may state its mean signed error (bias, written by tools/heldout-check.py
and tools/blackwell-check.py), and the report then says the side sim errs
on, as it does for the MoE and FSDP bands: "mostly" when the bias is beyond
half the mean |error| (the rows on that side outweigh the others three to
one or more).

usage: test-dense-band-side.py SIM SOURCE_ROOT

Each case runs the headline plan (Llama-3-70B, tp 8, pp 4, dp 2) on a copy
of dgx8x4.xml beside a band file whose heldout band is set by hand, and
reads the sentence under the step time:
- error 0.050, bias +0.042, 153 rows: "that no fit saw, mostly pessimistic
  (mean +4.2%): expect a shorter step" (+0.042 is beyond 0.025);
- error 0.050, bias -0.030: "mostly optimistic (mean -3.0%): expect a
  longer step" (-0.030 is beyond -0.025);
- error 0.050, bias +0.020 (within 0.025): no side, the sentence as without
  a bias;
- no bias: no side; the JSON's time.error_band.heldout has no mean_error;
- with the bias, the JSON gives mean_error 0.042 beside mean_abs_error 0.05;
- a bias outside -10..10 is refused with the file and its line (exit 2);
and Llama-3-70B NVFP4 at tp 8 on one rack of a copy of gb300-nvl72.xml
whose fitted band (its only dense band)
states error 0.185, bias +0.185 on 28 runs: "each predicted with constants
that were not fitted to it, mostly pessimistic (mean +18.5%): expect a
shorter step".
"""
import json
import os
import sys

sys.dont_write_bytecode = True
import cli

sim, src = cli.arguments("test-dense-band-side.py")
checks = cli.Checks()
HOPPER = os.path.join(src, "topologies", "dgx8x4.xml")
GB300 = os.path.join(src, "topologies", "gb300-nvl72.xml")
PLAN = ["--model", "llama3-70b", "--tp", "8", "--pp", "4", "--dp", "2"]
NO_FIT = "mean step-time error on 153 published runs of this GPU generation that no fit saw"


def band_text(out):
    """the error band sentence of a report's text, for the check's line"""
    i = out.find("error band")
    return out[i:i + 300]


def report(topology, *extra):
    r = cli.run(sim, "--topology", topology, *PLAN, *extra)
    return r.returncode, " ".join(r.stdout.split()), r.stderr.strip()


with cli.tempdir() as tmp:
    rc, out, err = report(cli.with_band(HOPPER, tmp, "pessimistic", "heldout",
                                        ' error="0.050" bias="0.042" rows="153"'))
    checks.report("pessimistic: exit 0", rc == 0, err)
    checks.report("pessimistic: the side after the runs",
                  NO_FIT + ", mostly pessimistic (mean +4.2%): expect a shorter step (+/-" in out, band_text(out))

    rc, out, err = report(cli.with_band(HOPPER, tmp, "optimistic", "heldout",
                                        ' error="0.050" bias="-0.030" rows="153"'))
    checks.report("optimistic: the side",
                  NO_FIT + ", mostly optimistic (mean -3.0%): expect a longer step (+/-" in out, band_text(out))

    rc, out, err = report(cli.with_band(HOPPER, tmp, "both", "heldout",
                                        ' error="0.050" bias="0.020" rows="153"'))
    checks.report("on both sides: no side named", NO_FIT + " (+/-" in out and "mostly" not in band_text(out), band_text(out))

    path = cli.with_band(HOPPER, tmp, "unsigned", "heldout", ' error="0.050" rows="153"')
    rc, out, err = report(path)
    checks.report("no bias: no side named", NO_FIT + " (+/-" in out, band_text(out))
    r = cli.run(sim, "--topology", path, *PLAN, "--json", "-")
    band = json.loads(r.stdout)["time"]["error_band"]["heldout"]
    checks.report("no bias: the JSON's heldout band has no mean_error", band == {"mean_abs_error": 0.05, "runs": 153},
                  str(band))

    path = cli.with_band(HOPPER, tmp, "json", "heldout", ' error="0.050" bias="0.042" rows="153"')
    r = cli.run(sim, "--topology", path, *PLAN, "--json", "-")
    band = json.loads(r.stdout)["time"]["error_band"]["heldout"]
    checks.report("bias: the JSON gives it as mean_error",
                  band == {"mean_abs_error": 0.05, "mean_error": 0.042, "runs": 153}, str(band))

    path = cli.with_band(HOPPER, tmp, "refused", "heldout", ' error="0.050" bias="12" rows="153"')
    r = cli.run(sim, "--topology", path, *PLAN)
    cli.refused_naming(checks, "bias outside -10..10", r, os.path.join(os.path.dirname(path), "bands.xml"), "bias")

    r = cli.run(sim, "--topology", cli.with_band(GB300, tmp, "gb300", "fitted", ' error="0.185" bias="0.185" rows="28"'),
                "--racks", "1", "--model", "llama3-70b", "--tp", "8", "--fp4", "e2m1")
    rc, out, err = r.returncode, " ".join(r.stdout.split()), r.stderr.strip()
    checks.report("gb300 fitted band: exit 0", rc == 0, err)
    checks.report("gb300 fitted band: the side after the runs",
                  "mean step-time error on 28 published runs of this GPU generation, each predicted with constants "
                  "that were not fitted to it, mostly pessimistic (mean +18.5%): expect a shorter step" in out,
                  band_text(out))

sys.exit(checks.finish())
