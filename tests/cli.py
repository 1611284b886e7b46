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
import shutil
import signal
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


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


def band_set(cluster):
    """the set of the band file (topologies/bands.xml, sim/sim-bands.h) that
    the cluster file at path `cluster` names: its <efficiency bands>, else
    its <topology name>"""
    root = ET.parse(cluster).getroot()
    eff = root.find("gpu-type/efficiency")
    return eff.get("bands") if eff is not None and eff.get("bands") else root.get("name")


def stored_band(cluster, kind):
    """the band of `kind` that the band file beside the cluster file at path
    `cluster` holds for it, its attributes as a dict of strings; None where
    it holds none"""
    bands = ET.parse(os.path.join(os.path.dirname(cluster), "bands.xml")).getroot()
    for s in bands.findall("set"):
        for b in s.findall("band") if s.get("name") == band_set(cluster) else ():
            if b.get("kind") == kind:
                return dict(b.attrib)
    return None


def with_band(shipped, tmp, name, kind, band):
    """a copy of the cluster file `shipped` in the folder tmp/NAME, beside a
    copy of its band file whose band of `kind` in the file's set is replaced
    by `band` (the attributes after kind, ' error="0.1" ...', or '' for
    none); the copy's path"""
    folder = os.path.join(tmp, name)
    os.makedirs(folder)
    path = os.path.join(folder, os.path.basename(shipped))
    shutil.copyfile(shipped, path)
    text = open(os.path.join(os.path.dirname(shipped), "bands.xml"), encoding="utf-8").read()
    head = '<set name="%s">\n' % band_set(shipped)
    start = text.index(head) + len(head)
    end = text.index("  </set>", start)
    lines = [l for l in text[start:end].splitlines(keepends=True) if 'kind="%s"' % kind not in l]
    assert len(lines) < text[start:end].count("\n"), "%s carries no %s band" % (os.path.basename(shipped), kind)
    if band:
        lines.append('    <band kind="%s"%s/>\n' % (kind, band))
    with open(os.path.join(folder, "bands.xml"), "w", encoding="utf-8") as f:
        f.write(text[:start] + "".join(lines) + text[end:])
    return path


def with_band_attributes(shipped, tmp, name, band):
    """a cluster file written before the band file: a copy of `shipped` under
    tmp/NAME.xml named NAME (a set no band file holds), its <efficiency>
    without bands= and carrying the attributes `band` (' moe-error="0.1"
    ...'); the path"""
    text = open(shipped, encoding="utf-8").read()
    text = re.sub(r'<topology name="[^"]*"', '<topology name="%s"' % name, text, count=1)
    text, n = re.subn(r'(<efficiency [^>]*?)(?: bands="[^"]*")?(\s*/>)', lambda m: m.group(1) + band + m.group(2),
                      text, count=1)
    assert n == 1, "%s has no <efficiency>" % os.path.basename(shipped)
    path = os.path.join(tmp, name + ".xml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def refused_naming(checks, label, r, path, named):
    """report whether the run r was refused as a bad input is: exit status 2
    and one line on stderr, "sim: PATH:LINE: ..." naming `named`"""
    lines = r.stderr.strip().splitlines()
    checks.report("refused (%s): exit 2, one line naming %s and the file" % (label, named),
                  r.returncode == 2 and len(lines) == 1 and named in lines[0] and
                  re.match("sim: " + re.escape(path) + r":[0-9]+: ", lines[0]) is not None,
                  "exit %d: %r" % (r.returncode, r.stderr))


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
