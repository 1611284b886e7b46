#!/usr/bin/env python3
"""--html pages in a real browser: headless Chromium.

usage: test-html-browser.py SIM_BINARY SOURCE_ROOT

The pages of sim (a plan that fits and one that does not), sim compare and
sim sweep are loaded from file:// in headless Chromium, with the network
off, and:
- the browser logs no console message (a blocked resource, a script, a
  Content-Security-Policy violation, a parse error would each log one);
- the DOM the browser built has the page's charts (inline <svg>) and
  verdict: the page parsed as intended;
- a screenshot of the whole page is a real picture (a PNG of the page's
  width, mostly not blank, many colours: the charts were drawn).
The screenshots are kept in $SIM_SCREENSHOT_DIR when that is set.

Chromium is Debian's `chromium` package (./quickstart.sh test installs
it); without it the test exits 77, which meson reports as SKIP.
"""
import os
import shutil
import struct
import subprocess
import sys
import zlib

sys.dont_write_bytecode = True
import cli

sim, src = cli.arguments("test-html-browser.py")
browser = os.environ.get("CHROMIUM") or next(
    (b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
if browser is None:
    print("SKIP: no chromium on the PATH (Debian: apt-get install chromium; or set CHROMIUM)")
    sys.exit(77)

checks = cli.Checks()
check, report = checks.check, checks.report
WIDTH = 1700


def chromium(tmp, *args):
    """headless Chromium on its own profile (tests run in parallel), no
    network; its stderr"""
    cmd = [browser, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
           "--disable-extensions", "--disable-background-networking", "--proxy-server=127.0.0.1:9",
           f"--user-data-dir={os.path.join(tmp, 'profile')}", "--enable-logging=stderr", "--v=0",
           "--hide-scrollbars", *args]
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
                          timeout=180)


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA PNG"""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                raise ValueError(f"PNG depth {depth} colour type {colour}")
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(0, width, 4)])
        prev = line
    return width, height, rows


def console_lines(stderr):
    return [l for l in stderr.splitlines() if "CONSOLE" in l]


def load(name, page, tmp, svgs, must_show):
    """the page in the browser: console, DOM, screenshot"""
    url = "file://" + os.path.abspath(page)
    r = chromium(tmp, "--dump-dom", url)
    report(f"{name}: the browser loads the page", r.returncode == 0, cli.describe_status(r.returncode))
    bad = console_lines(r.stderr)
    report(f"{name}: no console message", not bad, "; ".join(bad[:3]))
    dom = r.stdout
    check(f"{name}: inline charts in the DOM", dom.count("<svg"), svgs)
    report(f"{name}: the DOM shows {must_show!r}", must_show in dom)

    shot = os.path.join(tmp, name.replace(" ", "-") + ".png")
    r = chromium(tmp, f"--screenshot={shot}", f"--window-size={WIDTH},3600", url)
    bad = console_lines(r.stderr)
    report(f"{name}: screenshot taken without console messages", r.returncode == 0 and os.path.exists(shot)
           and not bad, f"{cli.describe_status(r.returncode)} {'; '.join(bad[:3])}")
    if not os.path.exists(shot):
        return
    keep = os.environ.get("SIM_SCREENSHOT_DIR")
    if keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copy(shot, keep)
    try:
        width, height, rows = png_pixels(shot)
    except (ValueError, zlib.error) as e:
        report(f"{name}: the screenshot is a PNG", False, str(e))
        return
    check(f"{name}: the screenshot is the window's width", width, WIDTH)
    pixels = [p for row in rows for p in row]
    inked = sum(1 for p in pixels if p != (255, 255, 255)) / len(pixels)
    colours = len(set(pixels))
    report(f"{name}: the screenshot is not blank", inked > 0.05, f"{100 * inked:.1f}% not white")
    report(f"{name}: the charts are drawn (many colours)", colours > 40, f"{colours} colours")


with cli.tempdir() as tmp:
    pages = os.path.join(tmp, "pages")
    os.mkdir(pages)
    fits = os.path.join(pages, "report.html")
    r = cli.run(sim, "--topology", "dgx8x4", "--model", "llama3-70b", "--tp", "8", "--pp", "4", "--dp", "2",
                "--html", fits)
    check("report: sim exit status", r.returncode, 0)
    load("report", fits, tmp, 2, "Verdict   fits")

    oom = os.path.join(pages, "oom.html")
    r = cli.run(sim, "--topology", "dgx8x4", "--model", "llama3-405b", "--tp", "8", "--pp", "8", "--html", oom)
    check("out of memory: sim exit status", r.returncode, 1)
    load("out of memory", oom, tmp, 2, "OUT OF MEMORY")

    compare = os.path.join(pages, "compare.html")
    r = cli.run(sim, "compare", "--topology", "dgx8x4", "--plan", "tp=8,pp=8,dp=1", "--plan", "tp=8,pp=4,dp=2",
                "--plan", "tp=2,pp=4,dp=8,zero=0", "--html", compare)
    check("compare: sim exit status", r.returncode, 0)
    load("compare", compare, tmp, 1, "tp=8,pp=4,dp=2")

    sweep = os.path.join(pages, "sweep.html")
    r = cli.run(sim, "sweep", "--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b", "--global-batch",
                "64", "--threads", "4", "--quiet", "--top", "5", "--html", sweep)
    check("sweep: sim exit status", r.returncode, 0)
    load("sweep", sweep, tmp, 2, "best: ")

sys.exit(checks.finish())
