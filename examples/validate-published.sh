#!/bin/sh
# validate-published.sh — simulate every published training run in
# tests/validation/data/published_runs.csv and print measured vs simulated.
#
#   examples/validate-published.sh [path/to/sim]
#
# Each row ran on a DGX A100 or DGX H100 cluster with the layout given in the
# file; the metric is HFU (Narayanan et al. 2021), MFU (Megatron-Core H100) or
# iteration time (Korthikanti et al. 2022).  Tolerance 15 %; rows marked xfail
# say why the simulator does not meet them.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
sim=${1:-sim}
command -v "$sim" >/dev/null 2>&1 || sim="$here/build/sim/sim"
exec python3 - "$sim" "$here" <<'PY'
import csv, json, subprocess, sys
sim, root = sys.argv[1], sys.argv[2]
rows = [l for l in open(f"{root}/tests/validation/data/published_runs.csv") if l.strip() and not l.startswith("#")]
print(f"{'row':30} {'metric':12} {'published':>10} {'simulated':>10} {'error':>8}  status")
errs = []
for line in rows:
    rid, topo, nodes, model, flags, metric, published, status = line.rstrip("\n").split(",", 7)
    out = subprocess.run([sim, "--topology", topo, "--nodes", nodes, "--model", model, *flags.split(),
                          "--json", "-"], capture_output=True, text=True, check=True)
    t = json.loads(out.stdout)["time"]
    got = {"hfu_pct": 100 * t["hfu"], "mfu_pct": 100 * t["mfu"], "iter_time_s": t["step_s"]}[metric]
    pub = float(published)
    err = (got - pub) / pub * 100
    errs.append(abs(err))
    ok = abs(err) <= 15
    print(f"{rid:30} {metric:12} {pub:10.2f} {got:10.2f} {err:+7.1f}%  {'ok' if ok else 'out of tolerance'}"
          + (f" ({status[7:].split(';')[0][:70]}...)" if status.startswith("xfail") else ""))
print(f"mean absolute error {sum(errs) / len(errs):.1f} % over {len(errs)} runs")
PY
