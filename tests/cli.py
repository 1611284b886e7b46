"""Helpers shared by the python tests of the sim command line.

A test script imports it from its own folder (the folder of the script is
on sys.path) after turning off bytecode, so the source tree stays clean:

    import sys
    sys.dont_write_bytecode = True
    import cli

    sim, src = cli.arguments("test-foo.py")     # argv: SIM SOURCE_ROOT
    checks = cli.Checks()
    r = cli.run(sim, "--topology", "dgx8x4", "--json", "-")
    checks.check("exit status", r.returncode, 0)
    doc = cli.json_of(r)
    sys.exit(checks.finish())

Each check prints one line, "ok   NAME ..." or "FAIL NAME ...", so the
meson log reads as a list; finish() prints "N failed" and returns the exit
status (1 if anything failed)."""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile


def arguments(usage, names=("SIM", "SOURCE_ROOT")):
    """The script's arguments, in the order of names; a name starting with
    SIM is made absolute, since tests run sim from other folders."""
    if len(sys.argv) != len(names) + 1:
        print(f"usage: {usage} {' '.join(names)}", file=sys.stderr)
        sys.exit(2)
    values = [os.path.abspath(v) if n.startswith("SIM") else v for n, v in zip(names, sys.argv[1:])]
    return values[0] if len(values) == 1 else tuple(values)


def run(program, *args, cwd=None, timeout=300, echo_stderr=False):
    """PROGRAM ARGS... (sim, or a wrapper such as valgrind with sim among its
    arguments) with text output captured; a CompletedProcess.  Nothing on
    stdin, and bytes that are not UTF-8 replaced rather than raised, so a bad
    input cannot hang or crash the test.  With echo_stderr, stderr is printed
    when sim fails, so the log says why.  Raises subprocess.TimeoutExpired."""
    r = subprocess.run([program, *args], cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       errors="replace", timeout=timeout)
    if echo_stderr and r.returncode != 0 and r.stderr:
        print(r.stderr, end="" if r.stderr.endswith("\n") else "\n")
    return r


def json_of(result):
    """The JSON document sim wrote on stdout."""
    return json.loads(result.stdout)


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def with_band(shipped, tmp, name, prefix, band):
    """a copy of the cluster file `shipped` under tmp/NAME.xml whose band of
    published runs PREFIX (the PREFIX-error, -bias, -rows and -within
    attributes of <efficiency>) is replaced by `band` (attribute text, or ''
    for none); the path"""
    pattern = re.compile(r' %s-error="[^"]*" %s-bias="[^"]*" %s-rows="[^"]*" %s-within="[^"]*"' % ((prefix,) * 4))
    text = open(shipped, encoding="utf-8").read()
    assert pattern.search(text), "%s carries no %s band" % (os.path.basename(shipped), prefix)
    path = os.path.join(tmp, name + ".xml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(pattern.sub(band, text))
    return path


def tempdir(prefix="sim-test-"):
    """A scratch folder removed on exit: `with cli.tempdir() as tmp:`."""
    return tempfile.TemporaryDirectory(prefix=prefix)


def describe_status(rc):
    """An exit status as words: 'exit status 2', 'killed by SIGSEGV'."""
    if rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit status {rc}"


class Checks:
    """Named checks, each printed as it is made, and the final summary."""

    def __init__(self):
        self.failures = []
        self.count = 0

    def report(self, name, ok, detail=""):
        """Records one check that passed or not; detail follows the name."""
        self.count += 1
        print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}")
        sys.stdout.flush()
        if not ok:
            self.failures.append(name)
        return ok

    def check(self, name, got, want):
        """got == want, both shown."""
        return self.report(name, got == want, f"expected {want!r}, got {got!r}")

    def finish(self, total=None):
        """Prints the summary; returns the exit status for sys.exit.  With
        total, the summary counts cases: 'N cases, M failed'."""
        prefix = f"{total} cases, " if total is not None else ""
        print(f"{prefix}{len(self.failures)} failed")
        return 1 if self.failures else 0
