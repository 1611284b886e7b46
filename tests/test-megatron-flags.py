#!/usr/bin/env python3
"""Megatron-LM's flag names as aliases of sim's plan options.

usage: test-megatron-flags.py SIM_BINARY SOURCE_ROOT

- the parallelism flags of a Megatron launch script, pasted (in both the
  "--flag value" and "--flag=value" forms), give the same plan, memory and
  step as sim's own flags;
- --num-layers-per-virtual-pipeline-stage N becomes virtual stages
  layers / (pp x N), and is refused when that does not divide;
- flags that describe the model, or features sim does not simulate, exit 2
  with one line saying why (never ignored in silence);
- a bare Megatron switch given a value is refused;
- --recompute-modules takes its modules as Megatron-LM does, one word each,
  and refuses one the model lacks.
"""
import sys

sys.dont_write_bytecode = True
import cli

sim, src = cli.arguments("test-megatron-flags.py")
checks = cli.Checks()
BASE = ["--topology", "dgx8x4", "--model", "llama3-8b", "--memory-only", "--json", "-"]


def doc_of(*flags):
    r = cli.run(sim, *BASE, *flags)
    return r, (cli.json_of(r) if r.returncode in (0, 1) else None)


def same(label, megatron, native):
    r1, a = doc_of(*megatron)
    r2, b = doc_of(*native)
    if a is None or b is None:
        checks.report(label, False, f"{r1.stderr.strip()!r} / {r2.stderr.strip()!r}")
        return
    checks.check(f"{label}: plan", a["plan"], b["plan"])
    checks.check(f"{label}: memory", a["memory"], b["memory"])


same("sizes, batch, sequence, recompute, distributed optimizer",
     ["--tensor-model-parallel-size", "8", "--pipeline-model-parallel-size", "4",
      "--context-parallel-size", "1", "--micro-batch-size", "2", "--global-batch-size", "512",
      "--seq-length", "4096", "--recompute-granularity", "full", "--recompute-method", "uniform",
      "--recompute-num-layers", "1", "--use-distributed-optimizer",
      "--sequence-parallel", "--overlap-grad-reduce", "--overlap-param-gather", "--tp-comm-overlap"],
     ["--tp", "8", "--pp", "4", "--cp", "1", "--micro-batch", "2", "--global-batch", "512",
      "--seq-len", "4096", "--recompute", "full", "--zero", "1", "--sequence-parallel",
      "--overlap-grad-reduce", "--overlap-param-gather", "--tp-comm-overlap"])
same("--flag=value as pasted from a launch script",
     ["--tensor-model-parallel-size=8", "--pipeline-model-parallel-size=2", "--micro-batch-size=1",
      "--global-batch-size=256", "--recompute-activations", "--use-flash-attn", "--bf16"],
     ["--tp", "8", "--pp", "2", "--micro-batch", "1", "--global-batch", "256",
      "--recompute", "selective", "--flash-attention", "--recipe", "bf16-adam"])
same("--recompute-modules as Megatron-LM takes it, one word per module",
     ["--recompute-granularity", "selective", "--recompute-modules", "core_attn", "mlp", "--tp", "8"],
     ["--recompute", "selective", "--recompute-modules", "core_attn,mlp", "--tp", "8"])
same("--cuda-graph-impl none is what sim does", ["--cuda-graph-impl", "none", "--tp", "8"], ["--tp", "8"])
same("--num-layers-per-virtual-pipeline-stage 2 on 32 layers and pp 4 is 4 virtual stages",
     ["--tp", "8", "--pp", "4", "--num-layers-per-virtual-pipeline-stage", "2"],
     ["--tp", "8", "--pp", "4", "--virtual-stages", "4"])
same("--virtual-pipeline-model-parallel-size is --virtual-stages",
     ["--tp", "8", "--pp", "4", "--virtual-pipeline-model-parallel-size", "2"],
     ["--tp", "8", "--pp", "4", "--virtual-stages", "2"])
same("--decoder-first/last-pipeline-num-layers are --first-stage-layers/--last-stage-layers",
     ["--tp", "8", "--pp", "4", "--decoder-first-pipeline-num-layers", "6",
      "--decoder-last-pipeline-num-layers", "10"],
     ["--tp", "8", "--pp", "4", "--first-stage-layers", "6", "--last-stage-layers", "10"])
# llama3-8b's 32 layers on pp 4: first 6, last 10, the middle two 16 / 2 = 8
# each; with the embedding and the loss counted, 34 layers do not divide
# over 4 stages (refused), and on pp 2 they make 17 each: 16 and 16
_, d = doc_of("--tp", "8", "--pp", "4", "--decoder-first-pipeline-num-layers", "6",
              "--decoder-last-pipeline-num-layers", "10")
checks.check("first 6, middle 8 and 8, last 10 layers",
             [s["layers"] for s in d["memory"]["stages"]] if d else None, [6, 8, 8, 10])
r, d = doc_of("--tp", "8", "--pp", "4", "--account-for-embedding-in-pipeline-split",
              "--account-for-loss-in-pipeline-split")
checks.check("34 counted layers on pp 4 refused, exit 2", r.returncode, 2)
_, d = doc_of("--tp", "4", "--pp", "2", "--account-for-embedding-in-pipeline-split",
              "--account-for-loss-in-pipeline-split")
checks.check("32 layers with the embedding and the loss on pp 2: 16 and 16",
             [s["layers"] for s in d["memory"]["stages"]] if d else None, [16, 16])
_, d = doc_of("--tp", "8", "--pp", "4", "--num-layers-per-virtual-pipeline-stage", "2")
checks.check("interleaved schedule with 4 virtual stages",
             (d["plan"]["schedule"], d["plan"]["virtual_stages"]) if d else None, ("interleaved", 4))

# FP8 needs FP8 tensor cores: H100
r1, a = doc_of("--tp", "8", "--fp8-format", "hybrid", "--fp8-param-gather")
r2, b = doc_of("--tp", "8", "--fp8", "hybrid", "--fp8-params")
checks.check("--fp8-format hybrid --fp8-param-gather is --fp8 hybrid --fp8-params",
             a["plan"] if a else r1.stderr, b["plan"] if b else r2.stderr)

# FP4 needs FP4 tensor cores: one B200 node
B200 = ["--topology", "dgx-b200", "--nodes", "1", "--model", "llama3-8b", "--memory-only", "--json", "-"]
r1 = cli.run(sim, *B200, "--tp", "8", "--fp4-format", "e2m1", "--fp4-recipe", "nvfp4")
r2 = cli.run(sim, *B200, "--tp", "8", "--fp4", "e2m1")
a = cli.json_of(r1) if r1.returncode in (0, 1) else None
b = cli.json_of(r2) if r2.returncode in (0, 1) else None
checks.check("--fp4-format e2m1 --fp4-recipe nvfp4 is --fp4 e2m1",
             a["plan"]["fp4"] if a else r1.stderr, "e2m1")
# the same plan (the recipe given is no default applied) and memory
def fp4_plan(d):
    return ({k: v for k, v in d["plan"].items() if k != "defaults_applied"}, d["memory"])


checks.check("... with the same plan and memory", fp4_plan(a) if a else r1.stderr,
             fp4_plan(b) if b else r2.stderr)


def refused(label, flags, expect):
    r = cli.run(sim, "--topology", "dgx8x4", "--model", "llama3-8b", "--memory-only", *flags)
    lines = r.stderr.splitlines()
    ok = r.returncode == 2 and len(lines) == 1 and lines[0].startswith("sim: ") and expect in lines[0]
    checks.report(f"refused: {label}", ok, f"expected exit 2 and one line with {expect!r}, got "
                  f"{cli.describe_status(r.returncode)} and {r.stderr.strip()!r}")


refused("layers per chunk that do not divide", ["--tp", "8", "--pp", "4",
        "--num-layers-per-virtual-pipeline-stage", "3"],
        "pp 4 x 3 layers per chunk must divide the 32 layers of llama3-8b")
refused("layers per chunk that contradict --virtual-stages", ["--tp", "8", "--pp", "4",
        "--num-layers-per-virtual-pipeline-stage", "2", "--virtual-stages", "2"],
        "gives 4 virtual stages (32 layers / (pp 4 x 2)), but --virtual-stages is 2")
for flag in (["--num-layers", "32"], ["--hidden-size=4096"], ["--num-attention-heads", "32"],
             ["--ffn-hidden-size", "14336"], ["--swiglu"], ["--untie-embeddings-and-output-weights"]):
    name = flag[0].split("=")[0]
    refused(f"{name} describes the model", flag,
            f"{name} describes the model: give the model with --model")
refused("--num-experts", ["--num-experts", "8"], "--num-experts is for mixture-of-experts layers")
refused("--fp16", ["--fp16"], "--fp16 trains in fp16 with loss scaling")
# Megatron-Core reads recompute_method only with recompute_granularity full
refused("--recompute-method block beside selective recomputation",
        ["--recompute-granularity", "selective", "--recompute-method", "block"],
        "--recompute-method: expected --recompute full, got --recompute selective")
refused("--recompute-num-layers 0", ["--recompute-num-layers", "0"],
        "--recompute-num-layers: expected a whole number from 1")
refused("--recompute-modules names a module the model lacks", ["--recompute-granularity", "selective",
        "--recompute-modules", "core_attn", "mla_up_proj"],
        "--recompute-modules mla_up_proj: expected a model with latent attention (MLA)")
refused("--recompute-modules names an unknown module", ["--recompute-modules", "core_attn", "attn"],
        "--recompute-modules: expected core_attn, moe_act, layernorm, mla_up_proj, mlp, moe or "
        "shared_experts joined by , or +, got 'attn'")
same("--cuda-graph-scope as Megatron-LM takes it, one word per scope",
     ["--cuda-graph-impl", "transformer_engine", "--cuda-graph-scope", "attn", "mlp", "--tp", "8"],
     ["--cuda-graph-impl", "transformer_engine", "--cuda-graph-scope", "attn,mlp", "--tp", "8"])
same("--enable-cuda-graph is the local implementation", ["--enable-cuda-graph", "--tp", "8"],
     ["--cuda-graph-impl", "local", "--tp", "8"])
same("--cuda-graph-scope full on a dense model is attn and mlp",
     ["--cuda-graph-scope", "full", "--tp", "8"], ["--cuda-graph-scope", "attn+mlp", "--tp", "8"])
refused("a CUDA graph scope for MoE layers on a dense model", ["--cuda-graph-scope", "attn", "moe_router"],
        "--cuda-graph-scope attn,moe_router: moe_router and moe_preprocess are for mixture-of-experts "
        "layers, and the model has none")
refused("an unknown CUDA graph scope", ["--cuda-graph-scope", "attention"],
        "--cuda-graph-scope: expected attn, mlp, moe, moe_router, moe_preprocess or full joined by , "
        "or +, got 'attention'")
refused("CUDA graphs with full recomputation", ["--cuda-graph-impl", "local", "--recompute", "full"],
        "--cuda-graph-scope attn,mlp: sim does not model CUDA graphs with --recompute full")
refused("a value on a bare switch", ["--use-distributed-optimizer=true"],
        "--use-distributed-optimizer: expected no value (it sets --zero 1)")
refused("a bad value names the Megatron flag", ["--tensor-model-parallel-size", "x"],
        "--tensor-model-parallel-size: expected a whole number")
refused("a bad choice names the Megatron flag", ["--recompute-granularity", "partial"],
        "--recompute-granularity: expected one of none,selective,full, got 'partial'")

sys.exit(checks.finish())
