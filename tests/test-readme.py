#!/usr/bin/env python3
"""The documents' examples are what sim prints: every fenced block of
README.md and examples/README.md that starts with a `$ sim ...` command (its
continuation lines ending in a backslash) is run from a scratch folder that
holds a link to the source tree's tests/ (the examples name files under
tests/validation/data), exits 0 or 1 (1: the plan does not fit), and every line the block shows after the command
must be a line of sim's output; a line that starts with "..." stands for
lines left out.  The headline block under "The headline run" must be
tests/golden/headline.txt, the golden file of that command, byte for byte.

A number a user reads in the README is then the number sim gives: after a
change that moves one, rerun the command and paste what it prints.

usage: test-readme.py SIM SOURCE_ROOT"""
import os
import re
import shlex
import sys

sys.dont_write_bytecode = True
import cli

DOCS = ["README.md", os.path.join("examples", "README.md")]
HEADLINE = "The headline run ("


def blocks(text):
    """(command, shown lines) of every fenced block that starts with
    `$ sim`"""
    for body in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        lines = body.split("\n")
        if not lines[0].startswith("$ sim"):
            continue
        cmd, i = "", 0
        while True:
            line = lines[i][2:] if i == 0 else lines[i]
            i += 1
            if line.endswith("\\"):
                cmd += line[:-1] + " "
            else:
                cmd += line
                break
        yield cmd, [l for l in lines[i:] if l.strip()]


def main():
    sim, src = cli.arguments("test-readme.py")
    checks = cli.Checks()
    ran = 0
    with cli.tempdir() as tmp:
        os.symlink(os.path.join(os.path.abspath(src), "tests"), os.path.join(tmp, "tests"))
        for doc in DOCS:
            with open(os.path.join(src, doc), encoding="utf-8") as f:
                text = f.read()
            for cmd, shown in blocks(text):
                args = shlex.split(cmd)[1:]
                r = cli.run(sim, *args, cwd=tmp, timeout=600)
                ran += 1
                name = "%s: %s" % (doc, cmd if len(cmd) < 90 else cmd[:87] + "...")
                # 1: the plan does not fit (the verdict's OUT OF MEMORY)
                if not checks.report(name + ": exit status 0 or 1", r.returncode in (0, 1),
                                     cli.describe_status(r.returncode) + " " + r.stderr.strip()[:200]):
                    continue
                out = set(l.rstrip() for l in r.stdout.split("\n"))
                missing = [l for l in shown if not l.strip().startswith("...") and l.rstrip() not in out]
                checks.report(name + ": every line shown is printed", not missing,
                              "not printed: " + " | ".join(missing[:3]) if missing else "")
    with open(os.path.join(src, "README.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.index("```\n", text.index(HEADLINE)) + 4
    block = text[start:text.index("```", start)]
    with open(os.path.join(src, "tests", "golden", "headline.txt"), encoding="utf-8") as f:
        golden = f.read()
    checks.report("README.md: the headline block is tests/golden/headline.txt", block == golden)
    checks.report("the documents hold examples to run (%d)" % ran, ran >= 15)
    sys.exit(checks.finish())


main()
