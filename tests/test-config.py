#!/usr/bin/env python3
"""A framework's own config gives the plan its flags give.

usage: test-config.py SIM SOURCE_ROOT

`sim --config FILE` reads torchtitan's TOML, NeMo's YAML and
Megatron-Bridge's YAML (tests/data/config/, each written from the
published file named in its header).  For each, the JSON of the config
equals the JSON of the equivalent flags, written out here by hand from the
file (all but plan.defaults_applied, which names the config's settings
first): torchtitan's data_parallel_shard_degree -1 is the rest of the GPUs
and its global batch the local batch on each of them; NeMo's
virtual_pipeline_model_parallel_size is the interleaved schedule;
Megatron-Bridge's bf16_with_fp8_current_scaling_mixed is FP8 hybrid with
current scaling.  A flag given beside the config wins; what the config
sets that sim does not model is listed in the report; a construct the
readers do not take is one line, exit status 2.
"""
import os
import sys
import tempfile

sys.dont_write_bytecode = True
import cli

sim, src = cli.arguments("test-config.py")
checks = cli.Checks()
check = checks.check
data = os.path.join(src, "tests", "data", "config")

CASES = [
    ("torchtitan Llama 3 70B (batch_size, compile)", ["--topology", "dgx-h100", "--nodes", "8"],
     "torchtitan-llama3-70b.toml",
     # 64 GPUs / tp 8 = dp 8 (shard -1); global batch 8 x 8
     "--model llama3-70b --framework torchtitan --tp 8 --cp 1 --pp 1 --dp 8 --zero 3 --micro-batch 8 "
     "--global-batch 64 --seq-len 8192 --no-torch-compile --recompute full"),
    ("torchtitan Llama 3 8B (local_batch_size, [compile], float8 rowwise, async TP)",
     ["--topology", "grand-teton-h100", "--gpus", "8"], "torchtitan-llama3-8b-float8.toml",
     # dp = shard 4; global batch 2 x 4; rowwise is sim's blockwise recipe
     "--model llama3-8b --framework torchtitan --tp 2 --cp 1 --pp 1 --dp 4 --zero 3 --micro-batch 2 "
     "--global-batch 8 --seq-len 8192 --tp-comm-overlap --torch-compile --recompute selective --fp8 hybrid "
     "--fp8-recipe blockwise --no-fp8-params"),
    ("NeMo GPT-3 175B", ["--topology", "dgx-h100", "--nodes", "16", "--model", "gpt3-175b"], "nemo-gpt3-175b.yaml",
     "--tp 4 --pp 8 --cp 1 --schedule interleaved --virtual-stages 12 --micro-batch 1 --global-batch 256 "
     "--sequence-parallel --seq-len 2048 --tp-comm-overlap --zero 1 --overlap-grad-reduce --overlap-param-gather"),
    ("Megatron-Bridge Llama 3 70B FP8", ["--topology", "dgx-h100", "--nodes", "16", "--model", "llama3-70b"],
     "bridge-llama3-70b.yaml",
     "--tp 4 --pp 4 --cp 2 --schedule interleaved --virtual-stages 5 --sequence-parallel --micro-batch 1 "
     "--global-batch 128 --seq-len 8192 --zero 1 --overlap-grad-reduce --overlap-param-gather --tp-comm-overlap "
     "--fp8 hybrid --fp8-recipe current --grad-reduce-in-fp32"),
]

for name, where, path, flags in CASES:
    f = os.path.join(data, path)
    a = cli.run(sim, *where, "--config", f, "--json", "-")
    b = cli.run(sim, *where, *flags.split(), "--json", "-")
    check(f"{name}: exit status", (a.returncode, b.returncode), (b.returncode, b.returncode))
    if a.returncode in (0, 1) and b.returncode in (0, 1):
        ja, jb = cli.json_of(a), cli.json_of(b)
        # the defaults line differs by what the config set: its own lines first
        da, db = ja["plan"].pop("defaults_applied"), jb["plan"].pop("defaults_applied")
        checks.report(f"{name}: the config's result is the flags' result", ja == jb,
                      f"step {ja['time']['step_s']!r} against {jb['time']['step_s']!r}; "
                      f"plan {ja['plan']} against {jb['plan']}")
        check(f"{name}: the defaults say the config, then the flags' defaults",
              (da[0].startswith("--config "), da[len(da) - len(db):]), (True, db))

# a flag beside the config wins
where = ["--topology", "dgx-h100", "--nodes", "8"]
j = cli.json_of(cli.run(sim, *where, "--config", os.path.join(data, "torchtitan-llama3-70b.toml"), "--tp", "4",
                        "--json", "-"))
check("a flag given beside the config wins (--tp 4)", (j["plan"]["tp"], j["plan"]["dp"]), (4, 16))

# what the config sets and sim does not model is listed, not dropped
text = " ".join(cli.run(sim, "--topology", "dgx-h100", "--nodes", "16", "--model", "llama3-70b", "--config",
                        os.path.join(data, "bridge-llama3-70b.yaml")).stdout.split())
check("Megatron-Bridge: the model's own fields are listed as --model's",
      "not modelled from the config (describes the model, which --model gives): model.num_layers = 80, "
      "model.hidden_size = 8192" in text, True)
check("Megatron-Bridge: grad_reduce_in_fp32 is read, not listed as not modelled",
      ("--grad-reduce-in-fp32" in text, "ddp.grad_reduce_in_fp32 = true" in text), (True, False))
check("the keys read with no effect on the step are named", "read from the config, no effect on the step:" in text,
      True)

with tempfile.TemporaryDirectory() as tmp:
    def write(name, body):
        p = os.path.join(tmp, name)
        with open(p, "w") as out:
            out.write(body)
        return p
    hsdp = write("hsdp.toml", '[model]\nname = "llama3"\nflavor = "8B"\n[parallelism]\n'
                              'data_parallel_replicate_degree = 2\ndata_parallel_shard_degree = 4\n')
    text = " ".join(cli.run(sim, "--topology", "dgx-h100", "--nodes", "1", "--config", hsdp).stdout.split())
    check("torchtitan HSDP (replicate 2 x shard 4) is listed as not modelled",
          "parallelism.data_parallel_replicate_degree = 2" in text and "--dp 8" in text, True)
    # which layers full recomputation takes: torchtitan's every k-th block,
    # Megatron-Core's block method (read only under granularity full)
    for name, where, body, flags in [
        ("torchtitan selective_ac_option 2 (every 2nd block)", ["--topology", "dgx-h100", "--nodes", "1"],
         write("every.toml", '[model]\nname = "llama3"\nflavor = "8B"\n[parallelism]\n'
                             'data_parallel_shard_degree = -1\n[activation_checkpoint]\nmode = "selective"\n'
                             'selective_ac_option = "2"\n'),
         "--model llama3-8b --framework torchtitan --dp 8 --zero 3 --recompute full --recompute-method every "
         "--recompute-num-layers 2"),
        ("Megatron-Bridge recompute_method block", ["--topology", "dgx-h100", "--nodes", "1", "--model", "llama3-8b"],
         write("block.yaml", "model:\n  tensor_model_parallel_size: 2\n  pipeline_model_parallel_size: 2\n"
                             "  recompute_granularity: full\n  recompute_method: block\n"
                             "  recompute_num_layers: 3\ntrain:\n  micro_batch_size: 1\n"),
         "--tp 2 --pp 2 --micro-batch 1 --recompute full --recompute-method block --recompute-num-layers 3"),
    ]:
        a = cli.run(sim, *where, "--config", body, "--json", "-")
        b = cli.run(sim, *where, *flags.split(), "--json", "-")
        ja, jb = cli.json_of(a), cli.json_of(b)
        ja["plan"].pop("defaults_applied"), jb["plan"].pop("defaults_applied")
        check(f"{name}: the config's method and count", (ja["plan"]["recompute_method"],
                                                       ja["plan"]["recompute_num_layers"], ja == jb),
              (jb["plan"]["recompute_method"], jb["plan"]["recompute_num_layers"], True))
    # torchtitan's V-shaped pipeline schedules (ScheduleZBVZeroBubble,
    # ScheduleDualPipeV) are sim's zb-v and dualpipe-v
    for sched, flag in (("ZBVZeroBubble", "zb-v"), ("DualPipeV", "dualpipe-v")):
        body = write(f"{flag}.toml", '[model]\nname = "llama3"\nflavor = "8B"\n[parallelism]\n'
                                     'data_parallel_shard_degree = 4\npipeline_parallel_degree = 2\n'
                                     f'pipeline_parallel_schedule = "{sched}"\n'
                                     '[training]\nlocal_batch_size = 8\nglobal_batch_size = 32\n')
        j = cli.json_of(cli.run(sim, "--topology", "dgx-h100", "--nodes", "1", "--config", body, "--json", "-"))
        check(f"torchtitan {sched}: --schedule {flag}, two chunks per rank",
              (j["plan"]["schedule"], j["plan"]["virtual_stages"]), (flag, 2))
    bad = [
        ("an array of tables", write("bad1.toml", "[job]\n[[a]]\nx = 1\n"), "bad1.toml:2: expected a [section]"),
        ("an unterminated string", write("bad2.toml", '[model]\nname = "llama3\n'), "bad2.toml:2: expected a closing quote"),
        ("a model sim does not ship", write("bad3.toml", '[model]\nname = "llama4"\nflavor = "17bx16e"\n'),
         "model llama4 17bx16e: expected llama3 8B, 70B or 405B"),
        ("a YAML anchor", write("bad4.yaml", "model: &m\n  tensor_model_parallel_size: 2\ntrain:\n  x: 1\n"),
         "bad4.yaml:1: expected plain mappings and lists"),
        ("a YAML of neither framework", write("bad5.yaml", "foo:\n  bar: 1\n"), "expected a torchtitan TOML"),
        ("a value sim refuses", write("bad6.toml", "[parallelism]\ntensor_parallel_degree = 0\n"), "--tp: expected"),
    ]
    for name, path, want in bad:
        r = cli.run(sim, "--topology", "dgx-h100", "--nodes", "1", "--config", path)
        lines = r.stderr.strip().splitlines()
        check(f"bad config, {name}: one line, exit 2", (r.returncode, len(lines), bool(lines) and want in lines[0]),
              (2, 1, True))

sys.exit(checks.finish())
