#!/usr/bin/env python3
"""The headline command, and an out-of-memory layout with its remedies, under
valgrind memcheck: no invalid read or write, no use of uninitialised values,
no leak (definite or indirect) outside fontconfig's process-lifetime caches
(tests/valgrind.supp says why those are suppressed).  Charts, JSON and the
trace are written so the drawing and writing code runs too.

usage: test-valgrind.py VALGRIND SIM SOURCE_ROOT"""
import os
import sys

sys.dont_write_bytecode = True
import cli

valgrind, sim, root = cli.arguments("test-valgrind.py", ("VALGRIND", "SIM", "SOURCE_ROOT"))
supp = os.path.join(root, "tests", "valgrind.supp")
checks = cli.Checks()

with cli.tempdir() as tmp:
    cases = [
        ("headline", ["--topology", "dgx8x4.xml", "--tp", "8", "--pp", "4", "--dp", "2",
                      "--gantt", os.path.join(tmp, "g.png"),
                      "--memory-chart", os.path.join(tmp, "m.png"),
                      "--json", os.path.join(tmp, "r.json"),
                      "--trace", os.path.join(tmp, "t.json")], 0),
        ("out of memory, remedies", ["--topology", "dgx8x4.xml", "--tp", "8", "--pp", "4",
                                     "--dp", "2", "--micro-batch", "4",
                                     "--no-flash-attention", "--no-sequence-parallel",
                                     "--zero", "0"], 1),
    ]
    # the exit status of each (1: out of memory, as grep's "no match")
    for name, args, status in cases:
        r = cli.run(valgrind, "--error-exitcode=99", "--leak-check=full",
                    "--errors-for-leak-kinds=definite,indirect",
                    "--show-leak-kinds=definite,indirect", "--suppressions=" + supp,
                    sim, *args, cwd=tmp, timeout=None)
        summary = [l.split("== ", 1)[-1] for l in r.stderr.splitlines()
                   if "ERROR SUMMARY" in l or "definitely lost:" in l
                   or "indirectly lost:" in l or "Invalid" in l]
        ok = r.returncode == status and "ERROR SUMMARY: 0 errors" in r.stderr
        checks.report(name, ok, f"exit {r.returncode}")
        for line in summary:
            print("    " + line)
        if not ok:
            sys.stderr.write(r.stderr[-6000:])

sys.exit(checks.finish())
