#!/usr/bin/env python3
"""Golden files: the text that the headline, compare and sweep commands print,
compared byte for byte with tests/golden/*.txt.  A change to a report, a
table or a number shows up here as a diff that a reviewer reads.

usage: test-golden.py SIM SOURCE_ROOT            compare
       test-golden.py --update SIM SOURCE_ROOT   rewrite tests/golden/*.txt

After an intended change, regenerate with one command and review the diff:

    tools/update-golden.sh build/sim/sim
    git diff tests/golden

Each command runs in an empty scratch folder, as a new user would, and must
exit 0.  The outputs are deterministic: the sweep writes its thread count
and wall-clock seconds to stderr, not to stdout."""
import difflib
import os
import sys

sys.dont_write_bytecode = True
import cli

GOLDEN = [
    # the headline: Llama 3 70B, tp 8 x pp 4 x dp 2 on 64 H100s
    ("headline.txt", ["--topology", "dgx8x4.xml", "--tp", "8", "--pp", "4", "--dp", "2"]),
    # two layouts that fit, ranked, and one out of memory with its remedies
    ("compare.txt", ["compare", "--topology", "dgx8x4", "--plan", "tp=8,pp=8,dp=1",
                     "--plan", "tp=8,pp=4,dp=2", "--plan", "tp=2,pp=4,dp=8,zero=0"]),
    # Llama 3 8B on one DGX H100 node: 1,200 layouts in a few seconds
    ("sweep.txt", ["sweep", "--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b",
                   "--global-batch", "64", "--threads", "2", "--quiet"]),
]


def output(sim, args):
    """sim's stdout for args, run from an empty folder; None if it failed."""
    with cli.tempdir() as tmp:
        r = cli.run(sim, *args, cwd=tmp, timeout=300)
    if r.returncode != 0:
        print(f"sim {' '.join(args)}: {cli.describe_status(r.returncode)}\n{r.stderr}", end="")
        return None
    return r.stdout


def update(sim, golden_dir):
    os.makedirs(golden_dir, exist_ok=True)
    failed = 0
    for name, args in GOLDEN:
        text = output(sim, args)
        if text is None:
            failed += 1
            continue
        with open(os.path.join(golden_dir, name), "w", encoding="utf-8", newline="") as f:
            f.write(text)
        print(f"wrote {os.path.join(golden_dir, name)}")
    return 1 if failed else 0


def compare(sim, src, golden_dir):
    checks = cli.Checks()
    for name, args in GOLDEN:
        path = os.path.join(golden_dir, name)
        got = output(sim, args)
        if got is None:
            checks.report(name, False, "sim failed")
            continue
        try:
            with open(path, encoding="utf-8", newline="") as f:
                want = f.read()
        except FileNotFoundError:
            want = ""
            print(f"tests/golden/{name} is missing")
        if got == want:
            checks.report(name, True, f"sim {' '.join(args)}")
            continue
        checks.report(name, False, f"sim {' '.join(args)} differs from tests/golden/{name}")
        sys.stdout.writelines(difflib.unified_diff(
            want.splitlines(keepends=True), got.splitlines(keepends=True),
            fromfile=f"tests/golden/{name} (expected)", tofile="sim output (actual)"))
        print(f"if the change is intended, regenerate and review:\n"
              f"    {os.path.join(src, 'tools', 'update-golden.sh')} {sim}\n"
              f"    git -C {src} diff tests/golden")
    return checks.finish()


def main():
    argv = sys.argv[1:]
    updating = bool(argv) and argv[0] == "--update"
    if updating:
        sys.argv.pop(1)
    sim, src = cli.arguments("test-golden.py [--update]")
    golden_dir = os.path.join(src, "tests", "golden")
    return update(sim, golden_dir) if updating else compare(sim, src, golden_dir)


if __name__ == "__main__":
    sys.exit(main())
