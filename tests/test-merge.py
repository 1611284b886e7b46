#!/usr/bin/env python3
"""sim sweep --merge is a trust boundary.

    test-merge.py SIM SOURCE_ROOT

Two real shards of a sweep merge; then corrupted copies of them, shards of
other sweeps, missing or repeated shards, and files that are not regular
files are each refused: exit status 2, nothing on stdout, exactly one line
on stderr, "sim: FILE: expected ..." or "sim: FILE:LINE: expected ...", of
bounded length, naming the line of the offending value where there is one.
Prints "ok - CASE" or "not ok - CASE: why" per case; exits 1 on a failure."""
import copy
import json
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
import cli

sim, src = cli.arguments("test-merge.py")
failures = []


def report(name, ok, why=""):
    print(f"ok - {name}" if ok else f"not ok - {name}: {why}")
    sys.stdout.flush()
    if not ok:
        failures.append(name)


def merge(*paths, timeout=60):
    try:
        return cli.run(sim, "sweep", "--merge", *paths, "--top", "5", timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def refused(name, paths, line=None, want=None):
    """sim sweep --merge PATHS fails in one line naming paths[-1] or
    paths[0] (and line, when given), saying what was expected (want: a
    piece of that line)."""
    r = merge(*paths)
    if r is None:
        return report(name, False, "hung (killed after 60 s)")
    lines = r.stderr.splitlines()
    err = lines[0] if lines else ""
    m = re.match(r"sim: (.*?)(?::(\d+))?: (?:expected|cannot read:) ", err)
    why = None
    if r.returncode != 2:
        why = f"{cli.describe_status(r.returncode)}, stderr {r.stderr[:300]!r}"
    elif r.stdout != "":
        why = f"stdout not empty: {r.stdout[:200]!r}"
    elif len(lines) != 1:
        why = f"{len(lines)} lines on stderr: {r.stderr[:300]!r}"
    elif len(err) > 400:
        why = f"a line of {len(err)} characters"
    elif m is None or m.group(1) not in paths:
        why = f"not 'sim: FILE[:LINE]: expected ...': {err!r}"
    elif line is not None and m.group(2) != str(line):
        why = f"expected line {line}: {err!r}"
    elif want is not None and want not in err:
        why = f"expected {want!r} in {err!r}"
    report(name, why is None, why or "")


def line_of(path, needle):
    """The line number of the first line holding needle."""
    with open(path, encoding="utf-8") as f:
        for n, text in enumerate(f, 1):
            if needle in text:
                return n
    raise AssertionError(f"{needle!r} not in {path}")


MARK = "@@here@@"


def line_at(doc, row, key=None):
    """The line where doc (written as sim writes it) holds rows[row], or
    rows[row][key]: where a value replacing it starts."""
    d = copy.deepcopy(doc)
    if key is None:
        d["rows"][row] = MARK
    else:
        d["rows"][row][key] = MARK
    text = json.dumps(d, indent=2)
    return text[:text.index(MARK)].count("\n") + 1


base = ["--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b", "--global-batch", "64", "--quiet"]

with cli.tempdir() as tmp:
    s1, s2 = os.path.join(tmp, "s1.json"), os.path.join(tmp, "s2.json")
    for i, s in ((1, s1), (2, s2)):
        r = cli.run(sim, "sweep", *base, "--shard", f"{i}/2", "--json", s, timeout=600, echo_stderr=True)
        if r.returncode != 0:
            report(f"shard {i}/2 written", False, cli.describe_status(r.returncode))
            sys.exit(1)
    doc1, doc2 = cli.load_json(s1), cli.load_json(s2)

    def variant(name, doc=None, text=None):
        """a corrupted copy of shard 1: doc written as sim writes it, or text"""
        path = os.path.join(tmp, name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text if text is not None else json.dumps(doc, indent=2) + "\n")
        return path

    # the real shards merge, in either order, to the same table
    a, b = merge(s1, s2), merge(s2, s1)
    report("shards 1 and 2 merge", a.returncode == 0 and "2156 layouts" in a.stdout, a.stderr[:300])
    report("in either order, the same table", a.stdout == b.stdout)
    report("the header names model and topology", a.stdout.startswith("sim sweep --merge: llama3-8b on dgx8x4, 2 shard files"),
           a.stdout[:100])

    # 1. rows that are not what sim writes (the reproducers segfaulted)
    old = '{"schema":"sim-sweep/1","topology":"t","model":"m","shard":1,"shards":1,"rows":%s}'
    for rows in ('[{"plan":null}]', "[1]", "[{}]", "[null]"):
        refused(f"sim-sweep/1 file with rows {rows}", [variant("old", text=old % rows)], line=1, want="sim-sweep/3")
    for name, row in (("plan null", None), ("a number", 1), ("an empty object", {}), ("null", None)):
        d = copy.deepcopy(doc1)
        if name == "plan null":
            d["rows"][3]["plan"] = None
        else:
            d["rows"][3] = row
        want_line = line_at(d, 3, "plan") if name == "plan null" else line_at(d, 3)
        refused(f"row 3 {name}", [variant("row", d), s2], line=want_line)

    # every member of a pruned row and of a simulated one, of the wrong type
    pruned = next(i for i, r in enumerate(doc1["rows"]) if r["pruned"] is not None)
    timed = next(i for i, r in enumerate(doc1["rows"]) if r["pruned"] is None)
    for i in (pruned, timed):
        for key, value in doc1["rows"][i].items():
            for bad in (["x"], "x" if not isinstance(value, str) else 7, None if value is not None else 7):
                if key in ("scaling_efficiency", "oom_case") and bad is None:
                    continue  # null is a value these may have
                d = copy.deepcopy(doc1)
                d["rows"][i][key] = bad
                p = variant("typed", d)
                kind = "pruned" if i == pruned else "simulated"
                # "pruned" null or a string: the row is then neither or both
                consistent = key == "pruned" and (bad is None or isinstance(bad, str))
                line, want = (line_at(d, i), "either pruned") if consistent else (line_at(d, i, key), f'"{key}"')
                refused(f"{kind} row: {key} = {json.dumps(bad)}", [p, s2], line=line, want=want)
        # a member missing
        for key in doc1["rows"][i]:
            d = copy.deepcopy(doc1)
            del d["rows"][i][key]
            refused(f"{'pruned' if i == pruned else 'simulated'} row without {key}", [variant("missing", d), s2],
                    line=line_at(d, i), want=None if key in ("pruned", "step_s") else f'"{key}"')
    # every member of the header, of the wrong type
    for key, value in doc1.items():
        if key == "rows":
            continue
        d = copy.deepcopy(doc1)
        d[key] = None if value is not None else 7
        refused(f"header: {key} = {json.dumps(d[key])}", [variant("header", d), s2], want=f'"{key}"' if key != "schema" else None)
    d = copy.deepcopy(doc1)
    d["rows"] = {"0": d["rows"][0]}
    refused("rows an object", [variant("rows", d), s2], want='"rows"')

    # 2. shards of one sweep, each once, every row once, plans that parse,
    # numbers finite and non-negative
    refused("shard 2 missing", [s1], want="shard 2 is missing")
    refused("shard 1 missing", [s2], want="shard 1 is missing")
    refused("shard 1 twice", [s1, s1, s2], want="each shard once")
    cp = variant("copy-of-s1", doc1)
    refused("shard 1 twice, in two files", [s1, cp, s2], want="each shard once")
    for shard in (0, -5, 2 ** 40, 3, 1.5, "1"):
        d = copy.deepcopy(doc1)
        d["shard"] = shard
        p = variant("shard", d)
        refused(f"shard {json.dumps(shard)}", [p, s2], line=line_of(p, '"shard":'), want='"shard"')
    for shards in (0, -5, 2 ** 40):
        d = copy.deepcopy(doc1)
        d["shards"] = shards
        refused(f"shards {shards}", [variant("shards", d), s2], want='"shard')
    for key, value in (("topology", "dgx-h100"), ("model", "llama3-70b"), ("options", {"nodes": 2, "global-batch": 64}),
                       ("layouts", 1202), ("shards", 3), ("schema", "sim-sweep/2")):
        d = copy.deepcopy(doc2)
        d[key] = value
        refused(f"shard 2 of another sweep ({key} {value})", [s1, variant("other", d)])
    # a shard of a sweep with other options, as sim writes it
    other = os.path.join(tmp, "other.json")
    r = cli.run(sim, "sweep", *base[:-3], "--global-batch", "32", "--quiet", "--shard", "2/2", "--json", other, timeout=600)
    refused("shard 2 of a sweep with another global batch", [s1, other], want="options")

    d = copy.deepcopy(doc1)
    d["rows"].append(copy.deepcopy(d["rows"][0]))
    refused("a row twice", [variant("dup", d), s2], want="each layout once")
    d = copy.deepcopy(doc1)
    d["rows"][1]["plan"] = d["rows"][0]["plan"]
    refused("a layout twice under two indices", [variant("dup-plan", d), s2], want="each layout once")
    d = copy.deepcopy(doc1)
    del d["rows"][5]
    refused("a row missing", [variant("short", d), s2], want="layouts")
    d = copy.deepcopy(doc1)
    d["rows"][5]["index"] = doc2["rows"][5]["index"]
    refused("a row of shard 2 in shard 1", [variant("moved", d), s2], want='"index"')
    for plan in ("tp=999,zz", "", "tp=", "tp=8,tp", "x" * 5000, "tp=1\nsim: forged"):
        d = copy.deepcopy(doc1)
        d["rows"][timed]["plan"] = plan
        p = variant("plan", d)
        refused(f"plan {plan[:20]!r}", [p, s2], want='"plan"')
    for key, value in (("step_s", -1.0), ("tokens_per_s", -5), ("mfu", -0.5), ("exposed_dp_s", -1e-9), ("step_s", 0),
                       ("tokens_per_s", 0), ("peak_bytes", -1), ("peak_bytes", 1.5), ("peak_bytes", 1e30),
                       ("nodes", 0), ("gpus", -8), ("index", 2.5), ("oom_case", "Z")):
        d = copy.deepcopy(doc1)
        d["rows"][timed][key] = value
        refused(f"simulated row: {key} {value}", [variant("num", d), s2], want=f'"{key}"' if value != 0 else None)
    for number in ("1e999", "-1e999", "NaN", "Infinity", "0x10", "01", "1.", ".5", "-"):
        text = json.dumps(doc1, indent=2).replace('"step_s": %r' % doc1["rows"][timed]["step_s"], '"step_s": ' + number, 1)
        p = variant("number", text=text)
        refused(f"step_s {number}", [p, s2], line=line_of(p, '"step_s": ' + number))
    d = copy.deepcopy(doc1)
    d["model"] = None
    refused("model null (printed '(null)')", [variant("null-model", d), s2], want='"model"')
    refused("a member twice", [variant("twice", text=json.dumps(doc1)[:-1] + ', "model": "x"}'), s2],
            want="each member name once")
    refused("pruned and simulated at once", [variant("both", text=json.dumps(doc1, indent=2).replace('"pruned": null', '"pruned": "x"', 1)), s2],
            want="either pruned")
    refused("a NUL byte", [variant("nul", text=json.dumps(doc1).replace('"t', '\u0000"t', 1)), s2])
    refused("\\u0000 in a string", [variant("u0", text=json.dumps(doc1).replace('"dgx8x4"', '"dgx\\u00008x4"', 1)), s2])
    refused("a lone surrogate", [variant("sur", text=json.dumps(doc1).replace('"dgx8x4"', '"dgx\\ud8008x4"', 1)), s2])
    refused("truncated", [variant("trunc", text=json.dumps(doc1, indent=2)[:5000]), s2])
    refused("not JSON", [variant("text", text="rank plan GPUs\n"), s2], line=1)
    refused("empty", [variant("empty", text=""), s2], line=1)
    refused("nested 100 deep", [variant("deep", text="[" * 100 + "]" * 100), s2])
    long_topo = copy.deepcopy(doc2)
    long_topo["topology"] = "\u2028y\n" * 3000
    refused("another topology of 9000 characters and newlines", [s1, variant("long", long_topo)])

    # 3. only regular files, of bounded size, never blocking
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    refused("a FIFO (nothing writes to it)", [fifo], want="regular file")
    refused("/dev/zero", ["/dev/zero"], want="regular file")
    refused("a directory", [tmp])
    refused("a file that does not exist", [os.path.join(tmp, "none.json")])
    huge = os.path.join(tmp, "huge.json")
    with open(huge, "wb") as f:
        f.truncate(65 << 20)  # sparse: 65 MiB of NULs, over the 64 MiB cap
    refused("a file over the size cap", [huge], want="MiB")
    r = cli.run(sim, "sweep", "--merge", timeout=60)
    report("--merge without files: exit 2, one line", r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr)

print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
