#!/usr/bin/env python3
"""Every JSON document sim writes follows its schema in docs/schema.

usage: test-schema.py SIM SOURCE_ROOT

The schemas are JSON Schema (draft 2020-12) with every object closed
(additionalProperties false), so a field added to the output without its
description fails here.  The documents checked: the golden commands'
(tests/test-golden.py: the headline, the compare and the sweep) and more
plans that reach the other fields (out of memory with remedies and the
fastest layout that fits, or none that fits, FP8 with a
slow GPU, a mixture of experts, FSDP, --memory-only, --train-tokens, a
sweep shard and a scaling sweep, the collective table).  The subset of JSON
Schema the files use (type, const, enum, properties, required,
additionalProperties, items) is checked by the small validator below; where
the jsonschema package is installed it checks them too.  Every number a
schema describes as a time, size or rate says its unit.
"""
import json
import os
import sys

sys.dont_write_bytecode = True
import cli

sim, src = cli.arguments("test-schema.py")
checks = cli.Checks()
check = checks.check

TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def is_type(v, t):
    if t == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if t == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    return isinstance(v, TYPES[t])


def errors(v, s, path="$"):
    """the places where v breaks schema s"""
    out = []
    if "const" in s and v != s["const"]:
        out.append(f"{path}: {v!r} is not {s['const']!r}")
    if "enum" in s and v not in s["enum"]:
        out.append(f"{path}: {v!r} not one of {s['enum']}")
    if "type" in s:
        ts = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(is_type(v, t) for t in ts):
            return out + [f"{path}: {type(v).__name__} is not {ts}"]
    if isinstance(v, dict):
        props = s.get("properties", {})
        out += [f"{path}: no {k!r}" for k in s.get("required", []) if k not in v]
        for k, x in v.items():
            if k in props:
                out += errors(x, props[k], f"{path}.{k}")
            elif s.get("additionalProperties") is False:
                out.append(f"{path}: {k!r} is not in the schema")
    if isinstance(v, list) and "items" in s:
        for i, x in enumerate(v):
            out += errors(x, s["items"], f"{path}[{i}]")
    return out


def units_stated(s, path="$"):
    """the numeric properties named as a time, size or rate whose description gives no unit"""
    out = []
    for k, x in s.get("properties", {}).items():
        ts = x.get("type", [])
        ts = ts if isinstance(ts, list) else [ts]
        named = k.endswith(("_s", "_bytes", "_us", "_GBps", "_per_gpu")) or k.startswith(("days", "gpu_hours", "cost"))
        if named and ({"number", "integer"} & set(ts)) and "unit:" not in x.get("description", ""):
            out.append(f"{path}.{k}")
        out += units_stated(x, f"{path}.{k}")
    if "items" in s:
        out += units_stated(s["items"], path + "[]")
    return out


schemas = {}
for name in ("sim-result-1", "sim-runs-2", "sim-sweep-3", "sim-collective-1"):
    with open(os.path.join(src, "docs", "schema", f"{name}.schema.json"), encoding="utf-8") as f:
        schemas[name.rsplit("-", 1)[0] + "/" + name.rsplit("-", 1)[1]] = json.load(f)
for name, s in schemas.items():
    check(f"{name}: every time, size and rate says its unit", units_stated(s), [])

try:
    import jsonschema
except ImportError:
    jsonschema = None
    print("# the jsonschema package is not installed: the small validator alone")

DOCS = [
    # the golden commands (tests/test-golden.py)
    ["--topology", "dgx8x4.xml", "--tp", "8", "--pp", "4", "--dp", "2"],
    ["compare", "--topology", "dgx8x4", "--plan", "tp=8,pp=8,dp=1", "--plan", "tp=8,pp=4,dp=2",
     "--plan", "tp=2,pp=4,dp=8,zero=0"],
    ["sweep", "--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b", "--global-batch", "64", "--threads",
     "2", "--quiet"],
    # the other fields
    ["--topology", "dgx8x4", "--tp", "4", "--pp", "4", "--dp", "4", "--micro-batch", "2", "--train-tokens", "1T"],
    ["--topology", "dgx8x4", "--tp", "8", "--pp", "4", "--dp", "2", "--fp8", "hybrid", "--slow-gpu", "3:1.2",
     "--train-tokens", "15T", "--gpu-hour-price", "2"],
    ["--topology", "dgx-h100", "--nodes", "2", "--model", "mixtral-8x7b", "--tp", "1", "--pp", "2", "--ep", "8",
     "--dp", "8", "--seq-len", "4096"],
    ["--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b", "--framework", "fsdp", "--dp", "8", "--zero", "3"],
    ["--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b", "--tp", "2", "--pp", "2", "--dp", "2",
     "--memory-only"],
    ["compare", "--topology", "dgx-h100", "--nodes", "2", "--model", "mixtral-8x7b",
     "--plan", "tp=1,pp=2,ep=8,dp=8,seq=4096", "--plan", "tp=2,pp=1,ep=8,dp=8,seq=4096,fp8=hybrid",
     "--train-tokens", "15T", "--gpu-hour-price", "2"],
    ["sweep", "--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b", "--global-batch", "64", "--quiet",
     "--shard", "1/2"],
    ["sweep", "--topology", "dgx8x4", "--model", "llama3-8b", "--global-batch", "64", "--quiet", "--scale",
     "--max-nodes", "2", "--tp", "8"],
    ["--topology", "grand-teton-h100", "--gpus", "8", "--model", "llama3-8b", "--framework", "torchtitan", "--dp",
     "8", "--zero", "3", "--seq-len", "8192"],
    ["collective", "--topology", "dgx8x4", "--op", "all_reduce", "--gpus", "16"],
    # out of memory, with the fastest layout that fits, and with none that fits
    ["--topology", "dgx8x4", "--model", "llama3-70b", "--tp", "2", "--pp", "2", "--dp", "16"],
    ["--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-405b", "--tp", "8"],
]

# the validator finds what it is for: an undocumented field, a wrong type,
# a value outside its enumeration
probe = {"schema": "x", "step_s": "1", "status": "maybe", "extra": 1}
probe_schema = {"type": "object", "additionalProperties": False, "required": ["schema", "peak_bytes"],
                "properties": {"schema": {"const": "y"}, "step_s": {"type": "number"},
                               "status": {"enum": ["fits", "tight", "oom"]}}}
check("the validator finds each fault", len(errors(probe, probe_schema)), 5)

for args in DOCS:
    r = cli.run(sim, *args, "--json", "-", timeout=300)
    name = " ".join(args[:6]) + (" ..." if len(args) > 6 else "")
    if r.returncode not in (0, 1):
        checks.report(f"{name}: exit status", False, r.stderr)
        continue
    doc = cli.json_of(r)
    schema = schemas.get(doc.get("schema"))
    if schema is None:
        checks.report(f"{name}: a schema for {doc.get('schema')!r}", False, "")
        continue
    bad = errors(doc, schema)
    checks.report(f"{name}: follows {doc['schema']}", not bad, "; ".join(bad[:5]))
    if jsonschema is not None:
        v = jsonschema.Draft202012Validator(schema)
        found = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in v.iter_errors(doc)]
        checks.report(f"{name}: jsonschema agrees", not found, "; ".join(found[:5]))

sys.exit(checks.finish())
