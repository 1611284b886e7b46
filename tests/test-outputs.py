#!/usr/bin/env python3
"""Output files: all or nothing, and never somewhere else.

usage: test-outputs.py SIM_BINARY SOURCE_ROOT

Each check runs sim in a scratch folder and looks at what it left there:
- a character device is written through, never replaced (/dev/zero), and a
  full one (/dev/full) is exit 2 with one line and no other file changed;
- a FIFO (a pipe, /dev/stdout) is written through when it has a reader
  and refused when it has none; a symbolic link stays a link and its file is replaced;
  an existing file keeps its mode, a new one gets 0666 & ~umask;
- the outputs of one command appear together or not at all: a bad
  extension, a missing folder or a full device for one of them leaves no
  other behind, and an existing target unchanged;
- a chart that cannot be written (PNG, SVG, PDF) is exit 2 and no file;
- no temporary file (.sim-tmp-PID-...) survives a run, a failure or a
  SIGTERM during rendering, and stale ones of dead processes are removed;
- two PDF runs are byte-identical (the creation date is not the clock).
"""
import os
import signal
import stat
import subprocess
import sys
import time

sys.dont_write_bytecode = True
import cli

sim, src = cli.arguments("test-outputs.py")
src = os.path.abspath(src)
checks = cli.Checks()
check, report = checks.check, checks.report

SMALL = ["--topology", os.path.join(src, "topologies", "dgx8x4.xml"),
         "--model", os.path.join(src, "models", "llama3-8b.xml"), "--tp", "8", "--pp", "4", "--dp", "2"]
# about a second of chart rendering: a window to send SIGTERM in
BIG = ["--topology", os.path.join(src, "topologies", "dgx-h100.xml"), "--nodes", "2048",
       "--model", os.path.join(src, "models", "llama3-405b.xml"), "--tp", "8", "--pp", "16", "--dp", "128",
       "--global-batch", "8192"]
TEMP = ".sim-tmp-"


def run(*args, cwd=None, env=None):
    full = dict(os.environ, **(env or {}))
    return subprocess.run([sim, *args], cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          errors="replace", timeout=120, env=full)


def listing(folder):
    found = []
    for root, dirs, files in os.walk(folder):
        for n in dirs + files:
            found.append(os.path.relpath(os.path.join(root, n), folder))
    return sorted(found)


def one_line_error(name, r, expect):
    """exit 2, nothing on stdout, one line on stderr containing expect"""
    lines = r.stderr.splitlines()
    report(f"{name}: exit status 2", r.returncode == 2, cli.describe_status(r.returncode))
    report(f"{name}: nothing on stdout", r.stdout == "", repr(r.stdout[:200]))
    report(f"{name}: one line on stderr with '{expect}'",
           len(lines) == 1 and lines[0].startswith("sim: ") and expect in lines[0], repr(r.stderr[:300]))


def no_temps(name, folder):
    left = [n for n in listing(folder) if os.path.basename(n).startswith(TEMP)]
    check(f"{name}: no temporary file left", left, [])


# 1. devices are written through, never replaced; full devices fail
with cli.tempdir() as tmp:
    r = run(*SMALL, "--json", "/dev/zero", cwd=tmp)
    check("--json /dev/zero: exit status", r.returncode, 0)
    check("/dev/zero is still a character device", stat.S_ISCHR(os.stat("/dev/zero").st_mode), True)
    r = run(*SMALL, "--json", "/dev/full", cwd=tmp)
    one_line_error("--json /dev/full", r, "/dev/full: cannot write: No space left on device")
    check("/dev/full is still a character device", stat.S_ISCHR(os.stat("/dev/full").st_mode), True)
    check("--json /dev/full: nothing written in the working folder", listing(tmp), [])

    # a FIFO is written through when it has a reader, refused with one
    # line when it has none (opening it would block the run)
    fifo = os.path.join(tmp, "fifo.json")
    os.mkfifo(fifo)
    r = run(*SMALL, "--json", fifo, cwd=tmp)
    one_line_error("--json FIFO without a reader", r, "fifo.json: cannot write: a FIFO with no reader")
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    r = run(*SMALL, "--json", fifo, cwd=tmp)
    check("--json FIFO with a reader: exit status", r.returncode, 0)
    got = b""
    while True:
        try:
            chunk = os.read(reader, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        got += chunk
    os.close(reader)
    check("--json FIFO with a reader: the reader gets the JSON", b'"sim-result' in got, True)
    check("the FIFO is still a FIFO", stat.S_ISFIFO(os.lstat(fifo).st_mode), True)
    os.unlink(fifo)
    r = run(*SMALL, "--json", "/dev/stdout", cwd=tmp)
    check("--json /dev/stdout into a pipe: exit status", r.returncode, 0)
    check("--json /dev/stdout into a pipe: the JSON on stdout", '"sim-result' in r.stdout, True)
    check("--json /dev/stdout: nothing written in the working folder", listing(tmp), [])

# 2. links are followed, modes kept
with cli.tempdir() as tmp:
    real = os.path.join(tmp, "real.json")
    link = os.path.join(tmp, "link.json")
    with open(real, "w") as f:
        f.write("old")
    os.chmod(real, 0o600)
    os.symlink("real.json", link)
    r = run(*SMALL, "--json", link, cwd=tmp)
    check("--json LINK: exit status", r.returncode, 0)
    check("the link is still a link", os.path.islink(link), True)
    check("the link's file holds the JSON", cli.load_json(real).get("schema", "?")[:10], "sim-result")
    check("an existing file keeps its mode", oct(stat.S_IMODE(os.stat(real).st_mode)), oct(0o600))
    dangling = os.path.join(tmp, "dangling.json")
    os.symlink("made-by-sim.json", dangling)
    r = run(*SMALL, "--json", dangling, cwd=tmp)
    check("--json DANGLING-LINK: exit status", r.returncode, 0)
    check("a dangling link's file is created", os.path.isfile(os.path.join(tmp, "made-by-sim.json")), True)
    check("the dangling link is still a link", os.path.islink(dangling), True)

    old = os.umask(0o027)
    try:
        r = run(*SMALL, "--json", "new.json", "--gantt", "new.png", cwd=tmp)
    finally:
        os.umask(old)
    check("umask 027: exit status", r.returncode, 0)
    for n in ("new.json", "new.png"):
        check(f"a new file gets 0666 & ~umask ({n})",
              oct(stat.S_IMODE(os.stat(os.path.join(tmp, n)).st_mode)), oct(0o640))
    no_temps("links and modes", tmp)

# 3. the outputs of one command: all or nothing, checked before simulating
with cli.tempdir() as tmp:
    cases = [
        ("bad chart extension", ["--json", "ok.json", "--gantt", "g.jpg"],
         "g.jpg: expected a file name ending in .png, .svg or .pdf"),
        ("chart in a missing folder", ["--json", "ok.json", "--gantt", "/nonexistent-dir/g.png"],
         "/nonexistent-dir/g.png: cannot write: No such file or directory"),
        ("JSON in a missing folder", ["--gantt", "g.png", "--json", "no-dir/ok.json"],
         "no-dir/ok.json: cannot write"),
        ("--ranks out of range", ["--json", "ok.json", "--gantt", "g.png", "--ranks", "0,64"],
         "--ranks: expected GPU numbers from 0 to 63"),
        ("a full device among the outputs", ["--json", "ok.json", "--trace", "/dev/full", "--csv", "csv"],
         "/dev/full: cannot write: No space left on device"),
        ("--output-dir and a full device", ["--output-dir", "od/sub", "--json", "/dev/full"],
         "/dev/full: cannot write: No space left on device"),
        ("the same file twice", ["--json", "same.json", "--trace", "./same.json"], "names the same file"),
    ]
    for name, args, expect in cases:
        r = run(*SMALL, *args, cwd=tmp)
        one_line_error(name, r, expect)
        check(f"{name}: no file left", listing(tmp), [])

    # an existing target is left as it was when another output fails
    with open(os.path.join(tmp, "ok.json"), "w") as f:
        f.write("before")
    os.symlink("/dev/full", os.path.join(tmp, "full.png"))
    r = run(*SMALL, "--json", "ok.json", "--gantt", "full.png", cwd=tmp)
    one_line_error("PNG chart to a full device", r, "No space left on device")
    check("PNG chart to a full device: the JSON target unchanged",
          cli.read_bytes(os.path.join(tmp, "ok.json")), b"before")
    for ext in ("svg", "pdf"):
        os.symlink("/dev/full", os.path.join(tmp, f"full.{ext}"))
        r = run(*SMALL, "--memory-chart", f"full.{ext}", "--json", "ok.json", cwd=tmp)
        one_line_error(f"{ext.upper()} chart to a full device", r, "No space left on device")
        check(f"{ext.upper()} chart to a full device: the JSON target unchanged",
              cli.read_bytes(os.path.join(tmp, "ok.json")), b"before")
    check("the full-device links are still links", all(os.path.islink(os.path.join(tmp, f"full.{e}"))
                                                     for e in ("png", "svg", "pdf")), True)
    no_temps("failed sets", tmp)

    # compare: --chart and --json together or not at all
    r = run("compare", *SMALL[:4], "--plan", "tp=8,pp=4,dp=2", "--json", "c.json", "--chart", "c.jpg", cwd=tmp)
    one_line_error("compare with a bad chart name", r, "c.jpg: expected a file name ending in")
    check("compare with a bad chart name: no c.json", os.path.exists(os.path.join(tmp, "c.json")), False)
    r = run("compare", *SMALL[:4], "--plan", "tp=8,pp=4,dp=2", "--json", "c.json", "--chart", "full.pdf",
            cwd=tmp)
    one_line_error("compare with a chart on a full device", r, "No space left on device")
    check("compare with a chart on a full device: no c.json", os.path.exists(os.path.join(tmp, "c.json")), False)

    # sweep: a --json that cannot be written fails before the sweep
    r = run("sweep", *SMALL[:4], "--quiet", "--json", "/nonexistent-dir/s.json", cwd=tmp)
    one_line_error("sweep --json in a missing folder", r, "--json: /nonexistent-dir/s.json: cannot write")

# 4. temporary files: none after a SIGTERM during rendering; stale ones removed
with cli.tempdir() as tmp:
    caught = False
    for attempt in range(5):
        p = subprocess.Popen([sim, *BIG, "--gantt", "big.svg"], cwd=tmp, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while p.poll() is None and time.monotonic() < deadline:
            if any(n.startswith(TEMP) for n in os.listdir(tmp)):
                p.send_signal(signal.SIGTERM)
                caught = True
                break
            time.sleep(0.002)
        rc = p.wait(timeout=60)
        if caught and rc == 0:
            # on a loaded machine the run can finish between seeing the
            # temporary file and the signal arriving: not a failure, try again
            caught = False
        elif caught:
            check("SIGTERM while rendering: killed by SIGTERM", cli.describe_status(rc),
                  cli.describe_status(-signal.SIGTERM))
            break
        for n in os.listdir(tmp):
            os.unlink(os.path.join(tmp, n))
    report("SIGTERM while rendering: the temporary file was seen", caught)
    check("SIGTERM while rendering: nothing left", listing(tmp), [])

    # a temporary file of a dead process goes, one of a live process stays
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = os.path.join(tmp, f"{TEMP}{dead.pid}-abcdef")
    live = os.path.join(tmp, f"{TEMP}{os.getpid()}-abcdef")
    for n in (stale, live):
        with open(n, "w") as f:
            f.write("x")
    r = run(*SMALL, "--json", "ok.json", cwd=tmp)
    check("stale temporaries: exit status", r.returncode, 0)
    check("a dead process's temporary file is removed", os.path.exists(stale), False)
    check("a live process's temporary file is kept", os.path.exists(live), True)

# 5. PDFs are reproducible
with cli.tempdir() as tmp:
    for n in ("a.pdf", "b.pdf"):
        r = run(*SMALL, "--gantt", n, cwd=tmp)
        check(f"PDF {n}: exit status", r.returncode, 0)
        time.sleep(1.1)
    a, b = cli.read_bytes(os.path.join(tmp, "a.pdf")), cli.read_bytes(os.path.join(tmp, "b.pdf"))
    check("two PDF runs are byte-identical", a == b, True)
    r = run(*SMALL, "--gantt", "c.pdf", cwd=tmp, env={"SOURCE_DATE_EPOCH": "1700000000"})
    check("PDF with SOURCE_DATE_EPOCH: exit status", r.returncode, 0)
    check("the PDF's creation date is SOURCE_DATE_EPOCH",
          b"20231114221320" in cli.read_bytes(os.path.join(tmp, "c.pdf")), True)
    no_temps("PDF runs", tmp)

sys.exit(checks.finish())
