#!/usr/bin/env python3
"""Run sim on every bad input in tests/data/bad/MANIFEST and check its error.

usage: run-bad-inputs.py SIM_BINARY SOURCE_ROOT

Each case must: exit with the expected status; print nothing on stdout; print
exactly one line on stderr, starting with "sim: " and containing the expected
substring; and leave no file behind in its scratch folder (@OUT@), which is
also its working directory.  See the MANIFEST header for the format.
"""
import os
import shlex
import subprocess
import sys

sys.dont_write_bytecode = True
import cli

TIMEOUT_S = 20


def parse_manifest(path):
    cases = []
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) != 4:
                raise ValueError(f"{path}:{lineno}: expected 4 tab-separated fields, got {len(fields)}")
            name, args, status, expect = fields
            try:
                status = int(status)
            except ValueError:
                raise ValueError(f"{path}:{lineno}: expected an exit status, got {status!r}") from None
            if not expect:
                raise ValueError(f"{path}:{lineno}: expected a non-empty stderr substring")
            cases.append((lineno, name, args, status, expect))
    return cases


def substitute(text, subs):
    for key, value in subs.items():
        text = text.replace(key, value)
    return text


def files_under(folder):
    found = []
    for root, dirs, files in os.walk(folder):
        for n in dirs + files:
            found.append(os.path.relpath(os.path.join(root, n), folder))
    return sorted(found)


def short(text, limit=300):
    return text if len(text) <= limit else text[:limit] + "..."


def run_case(sim, data, src, name, args, status, expect):
    with cli.tempdir(prefix="sim-bad-") as out:
        subs = {"@DATA@": data, "@SRC@": src, "@OUT@": out}
        argv = [substitute(a, subs) for a in shlex.split(args)]
        expect = substitute(expect, subs)
        problems = []
        try:
            p = cli.run(sim, *argv, cwd=out, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return [f"timed out after {TIMEOUT_S} s (a hang)"]
        stdout, stderr = p.stdout, p.stderr
        if p.returncode != status:
            problems.append(f"{cli.describe_status(p.returncode)}, expected {status}")
        if stdout:
            problems.append(f"{len(stdout)} characters on stdout: {short(stdout, 120)!r}")
        if status != 0:
            lines = stderr.split("\n")
            if not stderr:
                problems.append("nothing on stderr")
            elif not (len(lines) == 2 and lines[1] == ""):
                problems.append(f"stderr is not exactly one line: {short(stderr)!r}")
            elif not stderr.startswith("sim: "):
                problems.append(f"stderr does not start with 'sim: ': {short(stderr)!r}")
            if stderr and expect not in stderr:
                shown = "" if problems and "stderr" in problems[-1] else \
                    f"; got {short(stderr.rstrip(chr(10)))!r}"
                problems.append(f"stderr lacks {expect!r}{shown}")
        left = files_under(out)
        if left:
            problems.append("left behind under @OUT@: " + ", ".join(left))
        return problems


def main():
    sim, src = cli.arguments("run-bad-inputs.py", ("SIM_BINARY", "SOURCE_ROOT"))
    src = os.path.abspath(src)
    data = os.path.join(src, "tests", "data", "bad")
    manifest = os.path.join(data, "MANIFEST")
    try:
        cases = parse_manifest(manifest)
    except (OSError, ValueError) as e:
        print(f"run-bad-inputs: {e}", file=sys.stderr)
        return 2

    checks = cli.Checks()
    seen = set()
    used_text = ""
    for lineno, name, args, status, expect in cases:
        used_text += " " + args
        if name in seen:
            checks.report(name, False, f"MANIFEST line {lineno} repeats the name")
            continue
        seen.add(name)
        problems = run_case(sim, data, src, name, args, status, expect)
        checks.report(name, not problems, "; ".join(problems))

    total = len(cases)
    # every data file should be exercised by some case
    for f in sorted(os.listdir(data)):
        if f != "MANIFEST" and f"@DATA@/{f}" not in used_text:
            checks.report("MANIFEST", False, f"data file {f} is used by no case")
            total += 1

    return checks.finish(total)


if __name__ == "__main__":
    sys.exit(main())
