#!/usr/bin/env python3
"""The MoE band under the step time: how the published mixture-of-experts
runs of the cluster's GPU generation were predicted (the moe band of the
cluster file's set in topologies/bands.xml, which tools/moe-check.py
--write stores and validation-moe keeps current).

usage: test-moe-band.py SIM SOURCE_ROOT

Each case runs Mixtral 8x7B (tp 2, ep 8, pp 2, full recomputation, which
fits) on a copy of dgx8x4.xml beside a band file whose MoE band is set by
hand, and reads the sentence the report prints for it:
- error 0.300, bias -0.200, 8 rows, 3 within: "off by 30.0% on average, 3 of
  them within 15%, mostly optimistic (mean -20.0%): expect a longer step"
  (-0.200 is beyond half the mean |error|, -0.150);
- error 0.120, bias +0.110, 7 rows, 6 within: mostly pessimistic, "expect a
  shorter step";
- error 0.100, bias +0.020: "on both sides (mean +2.0%)", no expectation;
- no band: "no published MoE run of this GPU generation has been predicted";
- a dense model (Llama-3-8B, tp 8 pp 4) gets no MoE sentence;
- a cluster file written before the band file, whose moe-error, moe-bias,
  moe-rows and moe-within attributes of <efficiency> no band file's set
  replaces, prints the band they hold;
- the shipped dgx8x4.xml prints the band its set holds, and the JSON
  gives it as numbers under time.error_band.moe (null without a band, absent
  for a dense model);
- sim compare and the report print the MoE band in place of the dense one
  for a MoE model (the dense band and the caveat where the file has none);
- a band with more rows within 15 % than rows, or without its bias, is
  refused with the file, its line and what was expected (exit status 2),
  in the band file and as attributes.
"""
import os
import sys

sys.dont_write_bytecode = True
import cli

sim, src = cli.arguments("test-moe-band.py")
checks = cli.Checks()
SHIPPED = os.path.join(src, "topologies", "dgx8x4.xml")


def with_band(tmp, name, band):
    """dgx8x4.xml beside a band file whose MoE band is `band`; the path"""
    return cli.with_band(SHIPPED, tmp, name, "moe", band)


# Mixtral on the 32 GPUs with full recomputation (it fits: exit 0)
PLAN = ["--tp", "2", "--ep", "8", "--pp", "2", "--recompute", "full"]


def report(topology, model="mixtral-8x7b"):
    plan = PLAN if model == "mixtral-8x7b" else ["--tp", "8", "--pp", "4"]
    r = cli.run(sim, "--topology", topology, "--model", model, *plan)
    return r.returncode, " ".join(r.stdout.split()), r.stderr.strip()


with cli.tempdir() as tmp:
    rc, out, err = report(with_band(tmp, "optimistic",
                                    ' error="0.300" bias="-0.200" rows="8" within="3"'))
    checks.report("optimistic band: exit 0", rc == 0, err)
    checks.report("optimistic band: the sentence",
                  "mixture-of-experts layers: on 8 published MoE runs of this GPU generation the step time "
                  "was off by 30.0% on average, 3 of them within 15%, mostly optimistic (mean -20.0%): expect a "
                  "longer step" in out, out[out.find("mixture-of-experts layers"):][:300])

    rc, out, err = report(with_band(tmp, "pessimistic",
                                    ' error="0.120" bias="0.110" rows="7" within="6"'))
    checks.report("pessimistic band: the sentence",
                  "on 7 published MoE runs of this GPU generation the step time was off by 12.0% on average, "
                  "6 of them within 15%, mostly pessimistic (mean +11.0%): expect a shorter step" in out,
                  out[out.find("mixture-of-experts layers"):][:300])

    rc, out, err = report(with_band(tmp, "both", ' error="0.100" bias="0.020" rows="5" within="5"'))
    checks.report("two-sided band: the sentence",
                  "off by 10.0% on average, 5 of them within 15%, on both sides (mean +2.0%) (meson test "
                  "validation-moe prints the table)" in out, out[out.find("mixture-of-experts layers"):][:300])

    rc, out, err = report(cli.with_band_attributes(SHIPPED, tmp, "written-before",
                                                   ' moe-error="0.100" moe-bias="0.020" moe-rows="5" moe-within="5"'))
    checks.report("attributes of a file written before the band file: the sentence",
                  "off by 10.0% on average, 5 of them within 15%, on both sides (mean +2.0%) (meson test "
                  "validation-moe prints the table)" in out, out[out.find("mixture-of-experts layers"):][:300])

    rc, out, err = report(with_band(tmp, "none", ""))
    checks.report("no band: exit 0", rc == 0, err)
    checks.report("no band: says no MoE run was predicted",
                  "mixture-of-experts layers: the band is of dense runs, and no published MoE run of this GPU "
                  "generation has been predicted: read this step time as an estimate" in out,
                  out[out.find("mixture-of-experts layers"):][:300])

    rc, out, err = report(SHIPPED, model="llama3-8b")
    checks.report("dense model: exit 0", rc == 0, err)
    checks.report("dense model: no MoE sentence", "mixture-of-experts layers" not in out)

    m = cli.stored_band(SHIPPED, "moe")
    rc, out, err = report(SHIPPED)
    want = "on %s published MoE runs of this GPU generation the step time was off by %.1f%% on average, " \
           "%s of them within 15%%" % (m["rows"], 100 * float(m["error"]), m["within"])
    checks.report("shipped dgx8x4.xml: its stored band", want in out, want)

    # the JSON carries the same band under time.error_band: the shipped
    # file's set's band as numbers, null where the file states none, and no
    # "moe" key for a dense model
    r = cli.run(sim, "--topology", SHIPPED, "--model", "mixtral-8x7b", *PLAN, "--json", "-")
    band = cli.json_of(r)["time"]["error_band"]
    checks.check("JSON: the shipped file's MoE band", band["moe"],
                 {"mean_abs_error": float(m["error"]), "mean_error": float(m["bias"]),
                  "runs": int(m["rows"]), "runs_within_15_percent": int(m["within"])})
    checks.report("JSON: the dense bands beside it", band["fitted"]["runs"] > 0 and band["heldout"]["runs"] > 0,
                  repr(band))
    r = cli.run(sim, "--topology", with_band(tmp, "none2", ""), "--model", "mixtral-8x7b", *PLAN, "--json", "-")
    checks.check("JSON: no band, null", cli.json_of(r)["time"]["error_band"]["moe"], None)
    r = cli.run(sim, "--topology", SHIPPED, "--model", "llama3-8b", "--tp", "8", "--pp", "4", "--json", "-")
    checks.report("JSON: a dense model has no moe band", "moe" not in cli.json_of(r)["time"]["error_band"])

    # sim compare prints the same sentences under its table: for a MoE
    # model the MoE band after "step times:", in place of the dense band
    # (a +/-5 % dense band before the MoE caveat read as the MoE plan's); the report likewise; where no MoE run was predicted, the
    # dense band and that caveat
    r = cli.run(sim, "compare", "--topology", SHIPPED, "--model", "mixtral-8x7b",
                "--plan", ",".join(["tp=2", "ep=8", "pp=2", "recompute=full"]))
    flat = " ".join(r.stdout.split())
    checks.report("compare (MoE): the MoE band in place of the dense band",
                  "step times: mixture-of-experts layers: " + want in flat and "step times: error band" not in flat,
                  flat[flat.find("step times"):][:200])
    rc, out, err = report(SHIPPED)
    checks.report("report (MoE): the MoE band, not the dense band", want in out and "error band +/-" not in out,
                  out[out.find("Time"):][:400])
    rc, out, err = report(with_band(tmp, "none3", ""))
    checks.report("report (MoE, no MoE band): the dense band and the caveat",
                  "error band +/-" in out and "no published MoE run of this GPU generation" in out,
                  out[out.find("Time"):][:400])
    r = cli.run(sim, "compare", "--topology", SHIPPED, "--model", "llama3-8b", "--plan", "tp=8,pp=4")
    flat = " ".join(r.stdout.split())
    checks.report("compare (dense): the dense band, no MoE band",
                  "step times: error band" in flat and "mixture-of-experts layers" not in flat)

    for name, band, what in (
            ("within", ' error="0.100" bias="0.020" rows="5" within="6"', "attribute within of <band>"),
            ("nobias", ' error="0.100" rows="5" within="5"', "attribute bias of <band>")):
        topology = with_band(tmp, name, band)
        r = cli.run(sim, "--topology", topology, "--model", "mixtral-8x7b", *PLAN)
        cli.refused_naming(checks, name, r, os.path.join(os.path.dirname(topology), "bands.xml"), what)
    for name, band, what in (
            ("within-attr", ' moe-error="0.100" moe-bias="0.020" moe-rows="5" moe-within="6"', "moe-within"),
            ("nobias-attr", ' moe-error="0.100" moe-rows="5" moe-within="5"', "moe-bias")):
        path = cli.with_band_attributes(SHIPPED, tmp, name, band)
        cli.refused_naming(checks, name, cli.run(sim, "--topology", path, "--model", "mixtral-8x7b", *PLAN), path,
                           what)

sys.exit(checks.finish())
