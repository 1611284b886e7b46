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
import signal
import subprocess
import sys
import tempfile

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


def describe_status(rc):
    if rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit status {rc}"


def short(text, limit=300):
    return text if len(text) <= limit else text[:limit] + "..."


def run_case(sim, data, src, name, args, status, expect):
    with tempfile.TemporaryDirectory(prefix="sim-bad-") as out:
        subs = {"@DATA@": data, "@SRC@": src, "@OUT@": out}
        argv = [sim] + [substitute(a, subs) for a in shlex.split(args)]
        expect = substitute(expect, subs)
        problems = []
        try:
            p = subprocess.run(argv, cwd=out, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return [f"timed out after {TIMEOUT_S} s (a hang)"]
        stdout = p.stdout.decode("utf-8", "replace")
        stderr = p.stderr.decode("utf-8", "replace")
        if p.returncode != status:
            problems.append(f"{describe_status(p.returncode)}, expected {status}")
        if stdout:
            problems.append(f"{len(p.stdout)} bytes on stdout: {short(stdout, 120)!r}")
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


def main(argv):
    if len(argv) != 3:
        print("usage: run-bad-inputs.py SIM_BINARY SOURCE_ROOT", file=sys.stderr)
        return 2
    sim = os.path.abspath(argv[1])
    src = os.path.abspath(argv[2])
    data = os.path.join(src, "tests", "data", "bad")
    manifest = os.path.join(data, "MANIFEST")
    try:
        cases = parse_manifest(manifest)
    except (OSError, ValueError) as e:
        print(f"run-bad-inputs: {e}", file=sys.stderr)
        return 2

    failed = 0
    seen = set()
    used_text = ""
    for lineno, name, args, status, expect in cases:
        used_text += " " + args
        if name in seen:
            print(f"FAIL {name}: MANIFEST line {lineno} repeats the name")
            failed += 1
            continue
        seen.add(name)
        problems = run_case(sim, data, src, name, args, status, expect)
        if problems:
            print(f"FAIL {name}: " + "; ".join(problems))
            failed += 1
        else:
            print(f"ok   {name}")
        sys.stdout.flush()

    total = len(cases)
    # every data file should be exercised by some case
    for f in sorted(os.listdir(data)):
        if f != "MANIFEST" and f"@DATA@/{f}" not in used_text:
            print(f"FAIL MANIFEST: data file {f} is used by no case")
            failed += 1
            total += 1

    print(f"{total} cases, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
