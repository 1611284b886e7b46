#!/usr/bin/env python3
"""--html: one self-contained page per command.

usage: test-html.py SIM_BINARY SOURCE_ROOT

For sim, sim compare and sim sweep with --html FILE:
- the page exists only when the command succeeds (exit 0, or 1 for a plan
  that does not fit), and a bad name, a missing folder or another bad
  output leaves no page and an existing one unchanged (exit 2, one line);
- it is well-formed: every element opened is closed, in order;
- it holds what the text report says: the verdict, the Defaults line, the
  step time as the text report formats the JSON's step_s, the error band;
  compare and sweep: every row of the ranked table;
- one inline <svg> per chart, with ids unique in the page; sweep: the
  chart of --chart (the Pareto front) before the comparison chart;
- it needs nothing from outside: no http(s) reference other than the SVG
  namespaces, no script, no src, no external url();
- text from input files is escaped (a model named with <, &, >, quotes);
- two runs give the same bytes;
- --output-dir DIR writes DIR/report.html, the same page as --html, or
  nothing when another output is bad.
The browser check is tests/test-html-browser.py.
"""
import html
import html.parser
import os
import re
import sys

sys.dont_write_bytecode = True
import cli

sim, src = cli.arguments("test-html.py")
src = os.path.abspath(src)
checks = cli.Checks()
check, report = checks.check, checks.report

HEADLINE = ["--topology", "dgx8x4", "--model", "llama3-70b", "--tp", "8", "--pp", "4", "--dp", "2"]
SMALL = ["--topology", "dgx8x4", "--model", os.path.join(src, "models", "llama3-8b.xml"),
         "--tp", "8", "--pp", "4", "--dp", "2"]
NAMESPACES = ["http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"]
# elements that have no end tag in HTML
VOID = {"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "embed", "source", "track", "wbr"}


def run(*args, cwd=None):
    return cli.run(sim, *args, cwd=cwd, timeout=300)


class Structure(html.parser.HTMLParser):
    """the open elements as a stack: problems, the text, every id"""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.problems, self.text, self.ids, self.tags = [], [], [], [], []
        self.doctype = None

    def handle_decl(self, decl):
        self.doctype = decl

    def attrs_of(self, tag, attrs):
        self.tags.append(tag)
        self.ids += [v for k, v in attrs if k == "id"]

    def handle_starttag(self, tag, attrs):
        self.attrs_of(tag, attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.attrs_of(tag, attrs)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(name, page):
    """the page parsed, with its structure checked"""
    p = Structure()
    p.feed(page)
    p.close()
    report(f"{name}: doctype html", (p.doctype or "").lower() == "doctype html", repr(p.doctype))
    report(f"{name}: every element closed in order", not p.problems and not p.stack,
           "; ".join(p.problems[:3]) + (f" left open: {p.stack}" if p.stack else ""))
    report(f"{name}: ids unique in the page", len(p.ids) == len(set(p.ids)),
           f"{len(p.ids) - len(set(p.ids))} repeated")
    return p


def self_contained(name, page):
    rest = page
    for ns in NAMESPACES:
        rest = rest.replace(f'"{ns}"', '""')
    refs = re.findall(r"https?://[^\s\"'<>)]*", rest)
    report(f"{name}: no http(s) reference but the SVG namespaces", not refs, ", ".join(refs[:3]))
    report(f"{name}: no script", "<script" not in page.lower())
    report(f"{name}: no src attribute", re.search(r"\ssrc\s*=", page) is None)
    external = [u for u in re.findall(r"url\(([^)]*)\)", page) if not u.startswith("#")]
    report(f"{name}: no url() but the page's own ids", not external, ", ".join(external[:3]))


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def one_line_error(name, r, want):
    lines = r.stderr.splitlines()
    report(f"{name}: exit 2 and one line naming the problem",
           r.returncode == 2 and len(lines) == 1 and want in lines[0] and r.stdout == "",
           f"{cli.describe_status(r.returncode)}, stderr {r.stderr!r}")


def escaped(text):
    return html.escape(text, quote=True).replace("&#x27;", "&#39;")


def line_starting(text, label):
    for line in text.splitlines():
        if line.startswith(label):
            return line[len(label):].strip()
    return None


def table_page(name, r, path, n_rows):
    """the page of compare or sweep, checked, and the rows of the table it
    printed (rank or '-', then the plan) found in it"""
    page = read(path) if os.path.exists(path) else ""
    p = parse(name, page)
    self_contained(name, page)
    shown = "".join(p.text)
    rows = [l for l in r.stdout.splitlines() if re.match(r"^\s+(~?\d+|-)\s+tp=", l)]
    check(f"{name}: the table printed has {n_rows} rows", len(rows), n_rows)
    report(f"{name}: every row of the printed table", rows and all(row in shown for row in rows),
           repr([row for row in rows if row not in shown]))
    return page, p, shown


with cli.tempdir() as tmp:
    # ---- the report page of the headline command ----
    page_path = os.path.join(tmp, "r.html")
    r = run(*HEADLINE, "--html", page_path)
    check("report: exit status", r.returncode, 0)
    # --html draws the charts, so it simulates every micro-batch, as --csv
    # (which needs the timeline too) does
    text = run(*HEADLINE, "--csv", os.path.join(tmp, "csv")).stdout
    doc = cli.json_of(run(*HEADLINE, "--csv", os.path.join(tmp, "csv"), "--json", "-"))
    page = read(page_path) if os.path.exists(page_path) else ""
    report("report: the page is written", page != "")
    report("report: stdout is the text report, as with --csv and without --html", r.stdout == text)
    p = parse("report", page)
    self_contained("report", page)
    shown = "".join(p.text)
    verdict = line_starting(text, "Verdict")
    report("report: the verdict of the text report", verdict is not None and verdict in shown, repr(verdict))
    report("report: the verdict comes before the step time",
           verdict is not None and shown.find(verdict) < shown.find("step "))
    defaults = line_starting(text, "Defaults")
    report("report: the Defaults line", defaults is not None and defaults in shown, repr(defaults))
    step = f"step {doc['time']['step_s']:.3f} s"
    report("report: the step time of --json, as the text report formats it", step in text and step in shown, step)
    band = [l.strip() for l in text.splitlines() if "error band" in l]
    report("report: the error band of the text report", len(band) == 1 and band[0] in shown, repr(band))
    report("report: the time table", "seconds per step, by pipeline stage" in shown)
    report("report: the memory table", "Memory per GPU by pipeline stage" in shown and "<- peak" in shown)
    report("report: the diagnosis", (line_starting(text, "Diagnosis") or "?") in shown)
    check("report: one <svg> per chart (Gantt, memory)", p.tags.count("svg"), 2)
    report("report: the page has the report's title",
           re.search(r"<title>sim [^<]*: llama3-70b on dgx8x4</title>", page) is not None)

    again = os.path.join(tmp, "again.html")
    run(*HEADLINE, "--html", again)
    report("report: two runs give the same bytes", os.path.exists(again) and read(again) == page)

    # ---- a plan that does not fit: exit 1, the page still written ----
    oom = os.path.join(tmp, "oom.html")
    r = run("--topology", "dgx8x4", "--model", "llama3-405b", "--tp", "8", "--pp", "8", "--html", oom)
    check("out of memory: exit status", r.returncode, 1)
    page = read(oom) if os.path.exists(oom) else ""
    report("out of memory: the page is written, verdict first",
           "OUT OF MEMORY" in page and page.find("OUT OF MEMORY") < page.find("IF MEMORY ALLOWED"))
    report("out of memory: the verdict box is marked", 'class="verdict-oom"' in page)
    parse("out of memory", page)

    # ---- the memory ledger alone: one chart ----
    mem = os.path.join(tmp, "mem.html")
    r = run(*SMALL, "--memory-only", "--html", mem)
    check("memory only: exit status", r.returncode, 0)
    page = read(mem) if os.path.exists(mem) else ""
    check("memory only: one <svg> (memory)", parse("memory only", page).tags.count("svg"), 1)
    report("memory only: no step time", "step time" not in page.lower() and "error band" not in page)

    # ---- text from input files is escaped ----
    evil_name = 'mine <&> "quoted" \'x\''
    model = read(os.path.join(src, "models", "llama3-8b.xml")).replace(
        'name="llama3-8b"', 'name="' + escaped(evil_name).replace("&#39;", "&apos;") + '"')
    evil = os.path.join(tmp, "evil.xml")
    with open(evil, "w", encoding="utf-8") as f:
        f.write(model)
    evil_page = os.path.join(tmp, "evil.html")
    r = run("--topology", "dgx8x4", "--model", evil, "--tp", "8", "--pp", "4", "--dp", "2", "--html", evil_page)
    check("escaping: exit status", r.returncode, 0)
    page = read(evil_page) if os.path.exists(evil_page) else ""
    report("escaping: the model name appears escaped", escaped(evil_name) in page)
    report("escaping: never raw", evil_name not in page and "<&>" not in page)
    p = parse("escaping", page)
    report("escaping: the parsed text holds the name as written", evil_name in "".join(p.text))

    # ---- compare: the ranked table and its chart ----
    PLANS = ["--plan", "tp=8,pp=8,dp=1", "--plan", "tp=8,pp=4,dp=2", "--plan", "tp=2,pp=4,dp=8,zero=0"]
    cpage = os.path.join(tmp, "c.html")
    r = run("compare", "--topology", "dgx8x4", *PLANS, "--html", cpage)
    check("compare: exit status", r.returncode, 0)
    page, p, shown = table_page("compare", r, cpage, 3)
    report("compare: the title line", r.stdout.splitlines()[0] in shown)
    report("compare: the diagnosis of the plan that does not fit", "remedy: --zero 1" in shown)
    check("compare: one <svg> (the comparison chart)", p.tags.count("svg"), 1)
    again = os.path.join(tmp, "c2.html")
    run("compare", "--topology", "dgx8x4", *PLANS, "--html", again)
    report("compare: two runs give the same bytes", os.path.exists(again) and read(again) == page)
    r = run("compare", "--topology", "dgx8x4", *PLANS, "--html", os.path.join(tmp, "c3.html"),
            "--chart", os.path.join(tmp, "c.txt"))
    one_line_error("compare: a bad --chart", r, "--chart")
    report("compare: a bad --chart: no page", not os.path.exists(os.path.join(tmp, "c3.html")))

    # ---- sweep: the ranked table and its chart ----
    SWEEP = ["sweep", "--topology", "dgx8x4", "--nodes", "1", "--model", "llama3-8b", "--global-batch", "64",
             "--threads", "4", "--quiet", "--top", "5"]
    spage = os.path.join(tmp, "s.html")
    sjson = os.path.join(tmp, "s.json")
    schart = os.path.join(tmp, "s.svg")
    r = run(*SWEEP, "--html", spage, "--json", sjson, "--chart", schart)
    check("sweep: exit status", r.returncode, 0)
    page, p, shown = table_page("sweep", r, spage, 5)
    report("sweep: the counts and the best layout", "layouts:" in shown and "best: " in shown)
    check("sweep: two <svg> (the sweep chart, the comparison chart)", p.tags.count("svg"), 2)
    report("sweep: --json written with it", os.path.exists(sjson))
    # the sweep chart is the one --chart draws: the same SVG but for the
    # page's prefix on its ids and Cairo's count of surfaces drawn so far
    # in the process, before the comparison chart
    def same_svg(svg):
        return re.sub(r"surface\d+", "surface", svg.replace("chart1-", ""))
    svgs = re.findall(r"<svg.*?</svg>", page, re.S)
    drawn = read(schart) if os.path.exists(schart) else ""
    drawn = drawn[drawn.find("<svg"):].strip()
    report("sweep: the first chart is the --chart SVG, ids prefixed chart1-",
           len(svgs) == 2 and drawn != "" and same_svg(svgs[0]) == same_svg(drawn),
           f"{len(svgs)} charts, --chart {len(drawn)} bytes")
    report("sweep: the sweep chart under its heading, with the Pareto front in its caption",
           shown.find("Step time against memory, every layout that fits") < shown.find("Pareto front")
           < shown.find("Where each step's time goes") and "Pareto front" in shown)
    r = run(*SWEEP, "--html", os.path.join(tmp, "s.htm"))
    one_line_error("sweep: a bad name", r, "--html")
    r = run(*SWEEP, "--html", os.path.join(tmp, "s2.html"), "--json", "-")
    check("sweep: --json - with --html: exit status", r.returncode, 0)
    report("sweep: --json - with --html: JSON on stdout, and the page",
           r.stdout.lstrip().startswith("{") and os.path.exists(os.path.join(tmp, "s2.html")))

    # ---- --output-dir: report.html, the page --html writes ----
    od = os.path.join(tmp, "od")
    both = os.path.join(tmp, "both.html")
    r = run(*SMALL, "--output-dir", od, "--html", both)
    check("--output-dir: exit status", r.returncode, 0)
    in_dir = os.path.join(od, "report.html")
    page = read(in_dir) if os.path.exists(in_dir) else ""
    report("--output-dir: report.html written", page != "")
    # the same page but for Cairo's count of surfaces drawn so far in the process
    report("--output-dir: report.html is the --html page", os.path.exists(both)
           and re.sub(r"surface\d+", "surface", read(both)) == re.sub(r"surface\d+", "surface", page))
    p = parse("--output-dir report.html", page)
    self_contained("--output-dir report.html", page)
    check("--output-dir report.html: one <svg> per chart (Gantt, memory)", p.tags.count("svg"), 2)
    report("--output-dir report.html: the whole page, to its end", page.rstrip().endswith("</html>")
           and "Verdict" in "".join(p.text) and "Memory per GPU by pipeline stage" in "".join(p.text))
    bad = os.path.join(tmp, "od-bad")
    r = run(*SMALL, "--output-dir", bad, "--json", os.path.join(tmp, "no", "r.json"))
    one_line_error("--output-dir with a bad --json", r, "--json")
    report("--output-dir with a bad --json: no folder, no page", not os.path.exists(bad))

    # ---- all or nothing ----
    one_line_error("bad name", run(*SMALL, "--html", os.path.join(tmp, "x.htm")), "expected a file name ending in .html")
    report("bad name: no file", not os.path.exists(os.path.join(tmp, "x.htm")))
    one_line_error("missing folder", run(*SMALL, "--html", os.path.join(tmp, "no", "x.html")), "--html:")
    with open(os.path.join(tmp, "keep.html"), "w") as f:
        f.write("old")
    r = run(*SMALL, "--html", os.path.join(tmp, "keep.html"), "--gantt", os.path.join(tmp, "g.txt"))
    one_line_error("another output is bad", r, "--gantt")
    check("another output is bad: the old page unchanged", read(os.path.join(tmp, "keep.html")), "old")
    r = run(*SMALL, "--html", os.path.join(tmp, "new.html"), "--json", os.path.join(tmp, "no", "r.json"))
    one_line_error("--json cannot be written", r, "--json")
    report("--json cannot be written: no page", not os.path.exists(os.path.join(tmp, "new.html")))
    report("no temporary file left",
           not [n for n in os.listdir(tmp) if n.startswith(".sim-tmp-")], str(os.listdir(tmp)))

sys.exit(checks.finish())
