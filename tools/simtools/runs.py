"""Running sim on a row and reading its JSON."""
import json
import subprocess


def run_json(cmd, timeout=600):
    """run a sim command line with --json - added: (the JSON document it
    wrote, or None where it wrote none; the finished process)"""
    p = subprocess.run(cmd + ["--json", "-"], capture_output=True, text=True, timeout=timeout)
    try:
        return json.loads(p.stdout[p.stdout.index("{"):]), p
    except ValueError:
        return None, p


def last_error(p):
    """the last line a finished sim wrote on stderr, or "no output" """
    return (p.stderr.strip().splitlines() or ["no output"])[-1]


def step(cmd):
    """(step seconds, fits, the memory result) of one run, or None when sim
    gave no result"""
    j, _ = run_json(cmd)
    if j is None:
        return None
    return j["time"]["step_s"], j["memory"]["fits"], j["memory"]


def memory(cmd):
    """the memory result of a run (--memory-only)"""
    return run_json(cmd + ["--memory-only"])[0]["memory"]
