#!/usr/bin/env python3
"""The headline command, and an out-of-memory layout with its remedies, under
valgrind memcheck: no invalid read or write, no use of uninitialised values,
no leak (definite or indirect) outside fontconfig's process-lifetime caches
(tests/valgrind.supp says why those are suppressed).  Charts, JSON and the
trace are written so the drawing and writing code runs too.

usage: test-valgrind.py VALGRIND SIM SOURCE_ROOT"""
import os
import subprocess
import sys
import tempfile

valgrind, sim, root = sys.argv[1:4]
sim = os.path.abspath(sim)
supp = os.path.join(root, "tests", "valgrind.supp")
failed = 0

with tempfile.TemporaryDirectory() as tmp:
    cases = [
        ("headline", ["--topology", "dgx8x4.xml", "--tp", "8", "--pp", "4", "--dp", "2",
                      "--gantt", os.path.join(tmp, "g.png"),
                      "--memory-chart", os.path.join(tmp, "m.png"),
                      "--json", os.path.join(tmp, "r.json"),
                      "--trace", os.path.join(tmp, "t.json")]),
        ("out of memory, remedies", ["--topology", "dgx8x4.xml", "--tp", "8", "--pp", "4",
                                     "--dp", "2", "--micro-batch", "4",
                                     "--no-flash-attention", "--no-sequence-parallel",
                                     "--zero", "0"]),
    ]
    for name, args in cases:
        cmd = [valgrind, "--error-exitcode=99", "--leak-check=full",
               "--errors-for-leak-kinds=definite,indirect",
               "--show-leak-kinds=definite,indirect", "--suppressions=" + supp,
               sim] + args
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
        summary = [l.split("== ", 1)[-1] for l in r.stderr.splitlines()
                   if "ERROR SUMMARY" in l or "definitely lost:" in l
                   or "indirectly lost:" in l or "Invalid" in l]
        ok = r.returncode == 0 and "ERROR SUMMARY: 0 errors" in r.stderr
        print("%s %s (exit %d)" % ("ok" if ok else "FAIL", name, r.returncode))
        for line in summary:
            print("    " + line)
        if not ok:
            failed += 1
            sys.stderr.write(r.stderr[-6000:])

print("%d failed" % failed)
sys.exit(1 if failed else 0)
