#!/usr/bin/env python3
"""The shape of the code, as docs/ARCHITECTURE.md and the project's limits
state it.

usage: test-architecture.py SOURCE_ROOT

- every source file of sim/, cli/ and viz/ is named in docs/ARCHITECTURE.md
  (by its name, with or without its extension);
- no source file there is over 2,000 lines;
- no function there is over 150 lines, counted from the line after its
  name to its closing brace (the style puts a definition's name at column 0,
  its opening brace alone on the next line and its closing brace at column
  0);
- the public interface is sim/sim-api.h alone: it is the one header
  sim/meson.build installs, and it includes no header of the project (the
  rest of sim/ is internal, free to change; test-python.py checks that
  libsim exports sim-api.h's functions and nothing else)."""
import glob
import os
import re
import sys

sys.dont_write_bytecode = True
import cli

src = cli.arguments("test-architecture.py", names=("SOURCE_ROOT",))
checks = cli.Checks()
MAX_FILE_LINES = 2000
MAX_FUNCTION_LINES = 150

files = sorted(f for d in ("sim", "cli", "viz") for f in glob.glob(os.path.join(src, d, "*.[ch]")))
checks.check("source files found", len(files) > 50, True)

with open(os.path.join(src, "docs", "ARCHITECTURE.md"), encoding="utf-8") as f:
    arch = f.read()
unnamed = []
for path in files:
    stem = os.path.splitext(os.path.basename(path))[0]
    if not re.search(r"(?<![\w-])" + re.escape(stem) + r"(?![\w-])", arch):
        unnamed.append(os.path.relpath(path, src))
checks.check("every source file named in docs/ARCHITECTURE.md", unnamed, [])


def functions(lines):
    """(name, first line, lines) of each definition: a name at column 0
    followed by '(' on a line not ending in ';', then a line '{' at column
    0, to the next line '}' at column 0."""
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r"([A-Za-z_]\w*) ?\(", lines[i])
        if m and not lines[i].rstrip().endswith(";") and (i == 0 or not lines[i - 1].startswith(" ")):
            j = i
            while j < len(lines) and not lines[j].startswith("{"):
                if lines[j].rstrip().endswith(";"):
                    break
                j += 1
            if j < len(lines) and lines[j].startswith("{"):
                k = j
                while k < len(lines) and not lines[k].startswith("}"):
                    k += 1
                out.append((m.group(1), i + 1, k - j + 1))
                i = k
        i += 1
    return out


long_files, long_functions, counted = [], [], 0
for path in files:
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    rel = os.path.relpath(path, src)
    if len(lines) - 1 > MAX_FILE_LINES:
        long_files.append(f"{rel}: {len(lines) - 1} lines")
    for name, line, n in functions(lines):
        counted += 1
        if n > MAX_FUNCTION_LINES:
            long_functions.append(f"{rel}:{line}: {name}, {n} lines")
checks.check(f"functions found ({counted})", counted > 1000, True)
checks.check(f"no source file over {MAX_FILE_LINES} lines", long_files, [])
checks.check(f"no function over {MAX_FUNCTION_LINES} lines", long_functions, [])

with open(os.path.join(src, "sim", "meson.build"), encoding="utf-8") as f:
    installed = re.findall(r"install_headers\(([^)]*)\)", f.read())
checks.check("the installed headers", [h for call in installed for h in re.findall(r"'([^']+\.h)'", call)],
             ["sim-api.h"])
with open(os.path.join(src, "sim", "sim-api.h"), encoding="utf-8") as f:
    includes = re.findall(r'^#\s*include\s*[<"]([^>"]+)[>"]', f.read(), re.M)
project_headers = {os.path.basename(h) for d in ("sim", "cli", "viz") for h in glob.glob(os.path.join(src, d, "*.h"))}
checks.check("sim-api.h includes no header of the project",
             [h for h in includes if os.path.basename(h) in project_headers], [])

sys.exit(checks.finish())
