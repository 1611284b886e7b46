#!/usr/bin/env python3
"""Hugging Face config.json as --model.

usage: test-hf-import.py SIM_BINARY SOURCE_ROOT

- each published config.json under tests/data/hf/ gives the parameter count
  its publisher states, within 0.5 % (the figures and their sources are in
  tests/data/hf/README.md);
- Llama-3-8B's config.json gives exactly the model of models/llama3-8b.xml
  (the same parameter count, layers, widths and sequence length);
- a config.json under another name is recognised by its first character;
- a head size other than hidden/heads (Gemma 2) is taken: the query width
  is heads x head_dim;
- configs sim cannot model exactly (experts in a dense family, a field
  it does not know, a sequence past a sliding window) and broken ones
  (missing or mistyped fields, bad JSON) exit 2 with one line on stderr,
  "sim: FILE:LINE: expected ...".
"""
import json
import os
import shutil
import sys

sys.dont_write_bytecode = True
import cli

sim, src = cli.arguments("test-hf-import.py")
hf = os.path.join(src, "tests", "data", "hf")
checks = cli.Checks()

# (fixture, published parameter count, where it is published)
PUBLISHED = [
    ("llama3-8b.json", 8_030_261_248, "models/llama3-8b.xml, tests/test-model.c"),
    ("llama3.1-8b.json", 8_030_261_248, "Llama-3-8B's architecture, tests/data/hf/README.md"),
    ("mistral-7b-v0.1.json", 7_241_732_096, "Hugging Face model page, 7.24B"),
    ("qwen2.5-7b.json", 7_610_000_000, "Qwen2.5-7B model card, 7.61B"),
    ("qwen3-8b.json", 8_200_000_000, "Qwen3-8B model card, 8.2B"),
    ("gemma-2b.json", 2_506_434_560, "Gemma 2024 Table 2, 524,550,144 + 1,981,884,416"),
    # Gemma 2 9B, head size 256 x 16 heads = 4096 against hidden 3584: Gemma
    # Team 2024 (Gemma 2 report) Table 2, 917,504,000 embedding + 8,324,201,984
    # other; sim leaves out the post-attention and post-feedforward norms
    # (42 layers x 2 x 3584 = 301,056), so it counts 9,241,404,928
    ("gemma-2-9b.json", 9_241_705_984, "Gemma 2 report Table 2, 917,504,000 + 8,324,201,984"),
    ("gpt-neox-20b.json", 20_556_201_984, "EleutherAI/gpt-neox-20b model card"),
    ("nemotron-4-340b.json", 340_000_000_000, "nvidia/Nemotron-4-340B-Base model card, 340B"),
]
TOLERANCE = 0.005


def model_of(*args):
    """sim's JSON report of a memory-only run (exit 0 fits, 1 does not)."""
    r = cli.run(sim, "--topology", "dgx8x4", "--memory-only", "--json", "-", *args)
    if r.returncode not in (0, 1):
        return r, None
    return r, cli.json_of(r)["model"]


for name, published, source in PUBLISHED:
    r, model = model_of("--model", os.path.join(hf, name))
    if model is None:
        checks.report(f"{name} loads", False, f"{cli.describe_status(r.returncode)}: {r.stderr.strip()}")
        continue
    error = model["params"] / published - 1
    checks.report(f"{name}: {model['params']:,} parameters against {published:,} ({source})",
                  abs(error) <= TOLERANCE, f"{100 * error:+.3f} %, tolerance {100 * TOLERANCE} %")

# the shipped XML and the published config.json are the same model
_, from_xml = model_of("--model", os.path.join(src, "models", "llama3-8b.xml"))
_, from_hf = model_of("--model", os.path.join(hf, "llama3-8b.json"))
if from_xml is not None and from_hf is not None:
    del from_xml["name"], from_hf["name"]
checks.check("llama3-8b: config.json and models/llama3-8b.xml give the same model", from_hf, from_xml)

# the seq-len is max_position_embeddings (the pre-training length under RoPE
# scaling), or the sliding window when one is on
# Gemma 2 9B's model FLOPs follow its query width, heads x head_dim = 16 x
# 256 = 4096, not hidden 3584: per token forward 2 (h (qd + 2 kvd) + qd h +
# 3 h f) L + 4 S qd L + 2 h V with h 3584, qd 4096, kvd 8 x 256 = 2048, f
# 14336, L 42, S 4096, V 256000, times 3 (forward and backward) and B S
h, qd, kvd, f, L, S, V, B = 3584, 4096, 2048, 14336, 42, 4096, 256000, 64
want = 3 * (2 * (h * (qd + 2 * kvd) + qd * h + 3 * h * f) * L + 4 * S * qd * L + 2 * h * V) * B * S
r = cli.run(sim, "--topology", "dgx8x4", "--model", os.path.join(hf, "gemma-2-9b.json"), "--tp", "8", "--dp", "8",
            "--global-batch", "64", "--json", "-")
if r.returncode in (0, 1):
    t = cli.json_of(r)["time"]
    got = t["model_tflops_per_gpu"] * 1e12 * t["step_s"] * 64
    checks.report("gemma-2-9b: model FLOPs with the 4096-wide queries", abs(got / want - 1) < 1e-9,
                  f"{got:.6e} against {want:.6e}")
else:
    checks.report("gemma-2-9b: simulated", False, r.stderr.strip())

_, m = model_of("--model", os.path.join(hf, "mistral-7b-v0.1.json"))
checks.check("mistral-7b-v0.1: seq-len is the 4096-token sliding window",
             m["seq_len"] if m else None, 4096)
_, m = model_of("--model", os.path.join(hf, "qwen2.5-7b.json"))
checks.check("qwen2.5-7b: use_sliding_window false, seq-len is max_position_embeddings",
             m["seq_len"] if m else None, 131072)
# Llama 3.1 extends its context by RoPE scaling: max_position_embeddings
# 131072, pre-trained at rope_scaling.original_max_position_embeddings 8192,
# which sim takes and lists under Defaults (a guess the user should see)
r = cli.run(sim, "--topology", "dgx8x4", "--memory-only", "--model", os.path.join(hf, "llama3.1-8b.json"))
checks.check("llama3.1-8b: seq-len is rope_scaling.original_max_position_embeddings, 8192",
             "seq 8192," in r.stdout, True)
checks.check("llama3.1-8b: the seq-len is listed under Defaults with its field",
             "--seq-len 8192 (the config's rope_scaling.original_max_position_embeddings" in r.stdout, True)
_, m = model_of("--model", os.path.join(hf, "deepseek-v3.json"))
checks.check("deepseek-v3: seq-len is its YaRN original_max_position_embeddings, 4096",
             m["seq_len"] if m else None, 4096)
# a mixture of experts' model line names its experts, their width, the
# routing and the active parameters: Qwen3-30B-A3B's
# config.json has num_experts 128, moe_intermediate_size 768,
# num_experts_per_tok 8; its model card says 3.3B activated
r = cli.run(sim, "--topology", "dgx8x4", "--memory-only", "--model", os.path.join(hf, "qwen3-30b-a3b.json"),
            "--ep", "8")
model_line = " ".join(r.stdout.split("Plan ")[0].split())
checks.check("qwen3-30b-a3b: the model line gives 128 experts of ffn 768, top-8, active 3.35 B",
             ("128 experts of ffn 768 swiglu, top-8" in model_line, "active 3.35 B" in model_line),
             (True, True))
# a length read from a config may not be the run's: out of memory, the
# remedies try half of it, naming the field (Qwen2.5-7B: 131072 from
# max_position_embeddings, tp 4 on dgx8x4 does not fit)
r = cli.run(sim, "--topology", "dgx8x4", "--model", os.path.join(hf, "qwen2.5-7b.json"), "--tp", "4",
            "--dp", "16")
checks.check("qwen2.5-7b out of memory: --seq-len 65536 offered as a remedy, with its field",
             r.returncode == 1 and "--seq-len 65536" in r.stdout and "config's max_position_embeddings" in r.stdout,
             True)
r = cli.run(sim, "--topology", "dgx8x4", "--memory-only", "--model", os.path.join(hf, "llama3-8b.json"),
            "--seq-len", "4096")
checks.check("--seq-len 4096 overrides max_position_embeddings 8192 (the plan line)",
             "seq 4096," in r.stdout, True)


def refused(label, path, expect, *extra):
    """exit 2, one stderr line, starting 'sim: ' and containing expect."""
    r = cli.run(sim, "--topology", "dgx8x4", "--memory-only", "--model", path, *extra)
    lines = r.stderr.splitlines()
    ok = r.returncode == 2 and len(lines) == 1 and lines[0].startswith("sim: ") and expect in lines[0]
    checks.report(f"refused: {label}", ok,
                  f"expected exit 2 and one line with {expect!r}, got "
                  f"{cli.describe_status(r.returncode)} and {r.stderr.strip()!r}")


with open(os.path.join(hf, "llama3-8b.json"), encoding="utf-8") as f:
    llama = json.load(f)


def variant(tmp, name, change):
    """llama3-8b.json with change applied, written (indented, one member a
    line, as transformers writes) to tmp/name."""
    doc = dict(llama)
    change(doc)
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
    return path


def line_of(path, key):
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if f'"{key}"' in line:
                return n
    return 0


with cli.tempdir() as tmp:
    p = variant(tmp, "moe.json", lambda d: d.update(num_local_experts=8, num_experts_per_tok=2))
    refused("mixture of experts", p, f"moe.json:{line_of(p, 'num_local_experts')}: expected a dense "
            'transformer, got field "num_local_experts"')
    p = variant(tmp, "no-layers.json", lambda d: d.pop("num_hidden_layers"))
    refused("missing num_hidden_layers", p, 'no-layers.json:1: expected field "num_hidden_layers"')
    p = variant(tmp, "string-hidden.json", lambda d: d.update(hidden_size="4096"))
    refused("hidden_size as a string", p,
            f"string-hidden.json:{line_of(p, 'hidden_size')}: expected \"hidden_size\" to be a whole number")
    p = variant(tmp, "fraction-heads.json", lambda d: d.update(num_attention_heads=32.5))
    refused("a fractional head count", p, f"fraction-heads.json:{line_of(p, 'num_attention_heads')}: expected")
    p = variant(tmp, "tied-string.json", lambda d: d.update(tie_word_embeddings="no"))
    refused("tie_word_embeddings as a string", p, "expected \"tie_word_embeddings\" to be true or false")
    p = variant(tmp, "unknown.json", lambda d: d.update(mystery_width=5))
    refused("an unknown field", p, f"unknown.json:{line_of(p, 'mystery_width')}: expected a config.json "
            'field that sim maps or ignores (README, "Bring your own config"), got field "mystery_width"')
    p = variant(tmp, "family.json", lambda d: d.update(model_type="falcon"))
    refused("an unsupported family", p, 'expected "model_type" to be one of llama, mistral')
    p = variant(tmp, "arch.json", lambda d: d.update(architectures=["MistralForCausalLM"]))
    refused("architectures that contradict model_type", p,
            'expected "architectures" to be ["LlamaForCausalLM"] for model_type llama')
    p = variant(tmp, "act.json", lambda d: d.update(hidden_act="relu2"))
    refused("an activation the family's MLP does not have", p, 'expected "hidden_act" for llama')
    p = variant(tmp, "window.json", lambda d: d.update(layer_types=["sliding_attention"] * 32))
    refused("layer_types with sliding layers", p, 'every entry of "layer_types" to be "full_attention"')
    refused("a sequence past the sliding window", os.path.join(hf, "mistral-7b-v0.1.json"),
            "--seq-len 8192 is longer than the 4096-token sliding attention window", "--seq-len", "8192")
    bad = os.path.join(tmp, "broken.json")
    with open(bad, "w", encoding="utf-8") as f:
        f.write('{\n  "num_hidden_layers": 32,\n  "hidden_size": 4096\n  "vocab_size": 1\n}\n')
    refused("bad JSON", bad, "broken.json:4: expected")
    p = variant(tmp, "params.json", lambda d: None)
    renamed = os.path.join(tmp, "Meta-Llama-3-8B.config")
    shutil.copy(p, renamed)
    r, m = model_of("--model", renamed)
    checks.check("a config.json under another name is read as one",
                 m["params"] if m else r.stderr.strip(), 8_030_261_248)

sys.exit(checks.finish())
