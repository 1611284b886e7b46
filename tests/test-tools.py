#!/usr/bin/env python3
"""tools/ as one package of helpers: the scripts share what
they share through tools/simtools, each helper written once.

usage: test-tools.py SOURCE_ROOT

- no function name is defined at the top level of two files of tools/
  (tools/*.py and tools/simtools/*.py; main, each script's entry point,
  excepted);
- no file under tools/, tests/ or bench/ loads a tools file by its path
  (importlib's spec_from_file_location or SourceFileLoader): a script, a
  test or a benchmark imports simtools from the tools/ folder instead.  A
  call counts as loading a tools file when it is in a file of tools/ or
  its arguments name tools or a script of tools/."""
import ast
import glob
import os
import re
import sys

sys.dont_write_bytecode = True
import cli

src = cli.arguments("test-tools.py", names=("SOURCE_ROOT",))
checks = cli.Checks()

tools = os.path.join(src, "tools")
files = sorted(glob.glob(os.path.join(tools, "*.py")) + glob.glob(os.path.join(tools, "simtools", "*.py")))
checks.check("tools files found", len(files) > 5, True)


def top_level_functions(path):
    """the names of the functions a Python file defines at its top level"""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


where = {}
for path in files:
    for name in top_level_functions(path):
        if name != "main":
            where.setdefault(name, []).append(os.path.relpath(path, src))
twice = sorted("%s: %s" % (name, ", ".join(paths)) for name, paths in where.items() if len(paths) > 1)
checks.check("functions found (%d)" % len(where), len(where) > 20, True)
checks.check("no function defined in two tools files", twice, [])


def calls(text, name):
    """the text of each call of name in text, from the name to its closing
    parenthesis"""
    out = []
    for m in re.finditer(r"\b%s\s*\(" % name, text):
        depth, i = 0, m.end() - 1
        while i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        out.append(text[m.start():i + 1])
    return out


scripts = [os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(tools, "*.py"))]
names = re.compile(r"\btools\b|" + "|".join(re.escape(s) for s in scripts)) if scripts else re.compile(r"\btools\b")
loads = []
me = os.path.abspath(__file__)
for d in ("tools", "tests", "bench"):
    for path in sorted(glob.glob(os.path.join(src, d, "**", "*.py"), recursive=True)):
        if os.path.abspath(path) == me:
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for call in calls(text, "spec_from_file_location") + calls(text, "SourceFileLoader"):
            if d == "tools" or names.search(call):
                loads.append("%s: %s" % (os.path.relpath(path, src), " ".join(call.split())[:120]))
checks.check("no tools file loaded by its path (import simtools)", loads, [])

sys.exit(checks.finish())
