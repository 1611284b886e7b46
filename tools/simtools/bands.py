"""The error bands of the GPU generations' efficiency constants, which the
report prints under the step time: the band file, topologies/bands.xml
(format in topologies/README.md, schema topologies/bands.rng, read by
sim/sim-bands.c), which this module writes and nothing else does.

A cluster file's <efficiency bands="NAME"> names the set of the band file
that holds its bands, its <topology name> where it names none; the band
file is the one beside the cluster file.  Each band of a set has a kind,
and each kind its values (KINDS): error (mean |step-time error|), bias (mean
signed error), rows (the runs) and within (the runs within 15 %).
tools/moe-check.py (kind moe), fsdp-check.py (fsdp) and
pytorch-native-check.py (torchtitan) store all four; heldout-check.py
heldout's error, bias and rows; blackwell-check.py fitted's error, bias and
rows; fit-efficiency.py fitted's error and rows (SIGNED: the form of fitted
and heldout with a bias, which the report turns into the side sim errs
on)."""
import os
import statistics
import xml.etree.ElementTree as ET
from xml.sax.saxutils import quoteattr

# the values of a band of each kind, in the order of its tuple and its attributes
KINDS = {"fitted": ("error", "rows"), "heldout": ("error", "rows"), "moe": ("error", "bias", "rows", "within"),
         "fsdp": ("error", "bias", "rows", "within"), "torchtitan": ("error", "bias", "rows", "within")}
# the values of a fitted or heldout band that states its bias too
SIGNED = {"fitted": ("error", "bias", "rows"), "heldout": ("error", "bias", "rows")}
# how each value is read and written (three decimals: a band is stored as rounded)
FIELDS = {"error": (float, "%.3f"), "bias": (float, "%.3f"), "rows": (int, "%d"), "within": (int, "%d")}
FILE = "bands.xml"
# the band file's opening, above its sets ("--" may not appear in an XML comment)
HEADER = """<?xml version="1.0" encoding="UTF-8"?>
<!-- Error bands: how each GPU generation's efficiency constants predicted sets of published
     runs that set no constant (sim/sim-bands.h; format in topologies/README.md, schema
     topologies/bands.rng).  WRITTEN BY TOOLS, NOT EDITED BY HAND: each kind by the script
     that predicts its runs, run with its write option (its check-band option, which meson
     test runs, fails when a band here is stale):
       fitted      tools/fit-efficiency.py with the lofo option (the fitted generations) and
                   tools/blackwell-check.py (the Blackwell files)
       heldout     tools/heldout-check.py
       moe         tools/moe-check.py
       fsdp        tools/fsdp-check.py
       torchtitan  tools/pytorch-native-check.py
     A set is named as a cluster file's <efficiency bands="NAME"> names it, or by the
     cluster file's <topology name>.  error: mean |step-time error|; bias: mean signed error
     (negative: sim optimistic); rows: the runs; within: the runs within 15 %. -->
"""


def band_of(errs, kind, signed=False):
    """the band of kind that the errors errs give, a tuple of KINDS[kind]
    (with signed, of SIGNED[kind]) rounded as stored (three decimals)"""
    a = [abs(e) for e in errs]
    value = {"error": round(statistics.mean(a), 3), "bias": round(statistics.mean(errs), 3), "rows": len(errs),
             "within": sum(1 for x in a if x <= 0.15)}
    return tuple(value[f] for f in (SIGNED[kind] if signed else KINDS[kind]))


def fields_of(kind, band):
    """the names of the values of band, a tuple of kind: KINDS[kind], or
    SIGNED[kind] for a fitted or heldout band with its bias"""
    return KINDS[kind] if len(band) == len(KINDS[kind]) else SIGNED[kind]


def element_fields(kind, b):
    """the names of the values a <band> element b of kind holds"""
    return SIGNED[kind] if kind in SIGNED and b.get("bias") is not None else KINDS[kind]


def set_name(path):
    """the band file's set of the cluster file at path: its first
    <efficiency>'s bands, else its <topology name>"""
    root = ET.parse(path).getroot()
    eff = root.find("gpu-type/efficiency")
    return eff.get("bands") if eff is not None and eff.get("bands") else root.get("name")


def band_file(path):
    """the band file of the cluster file at path: the one beside it"""
    return os.path.join(os.path.dirname(path), FILE)


def read(file):
    """the sets of a band file, {set name: {kind: band}}; {} when there is
    no such file"""
    if not os.path.exists(file):
        return {}
    sets = {}
    for s in ET.parse(file).getroot().findall("set"):
        sets[s.get("name")] = {b.get("kind"): tuple(FIELDS[f][0](b.get(f)) for f in element_fields(b.get("kind"), b))
                               for b in s.findall("band")}
    return sets


def text(sets):
    """a band file of sets: the sets sorted by name, each one's bands by
    kind, one band a line, so that the same bands are the same bytes"""
    out = [HEADER, "<bands>\n"]
    for name in sorted(n for n in sets if sets[n]):
        out.append("  <set name=%s>\n" % quoteattr(name))
        for kind in sorted(sets[name]):
            out.append("    <band kind=\"%s\" %s/>\n" % (kind, " ".join(
                '%s="%s"' % (f, FIELDS[f][1] % v) for f, v in zip(fields_of(kind, sets[name][kind]),
                                                                 sets[name][kind]))))
        out.append("  </set>\n")
    out.append("</bands>\n")
    return "".join(out)


def write(file, sets):
    """write the band file of sets where it is not already that text"""
    new = text(sets)
    if not os.path.exists(file) or open(file).read() != new:
        open(file, "w").write(new)


def stored(path, kind):
    """the band of kind that the band file stores for the cluster file at
    path, or None where it states none"""
    return read(band_file(path)).get(set_name(path), {}).get(kind)


def store(path, kind, band):
    """store band as the band of kind of the cluster file at path (None:
    remove it) in its band file"""
    file = band_file(path)
    sets = read(file)
    bands = sets.setdefault(set_name(path), {})
    if band is None:
        bands.pop(kind, None)
    else:
        bands[kind] = band
    write(file, sets)


def settle(items, mode):
    """for each (path, kind, now, text) of items: print text and whether the
    band now (None: no rows) is the one stored for the cluster file at path,
    every band read before any is written (files may share a set); with mode
    --write store it where it is not.  The count of bands that are not the
    stored one under mode --check-band (stale), else 0"""
    have = [stored(path, kind) for path, kind, _, _ in items]
    stale = 0
    for (path, kind, now, line), old in zip(items, have):
        print(line + ("stored" if old == now else "STALE: stored %s" % (old,)))
        if mode == "--write" and now is not None and old != now:
            store(path, kind, now)
        elif mode == "--check-band" and old != now:
            stale += 1
    return stale


def bands(paths, kind, label, errs, mode, tool):
    """print the band of kind that errs give and whether each cluster file's
    set stores it, store it (mode --write) or count the stale files (mode
    --check-band); the count of stale files"""
    now = band_of(errs, kind)
    stale = settle([(path, kind, now, "%-16s %s band %4.1f%%, bias %+5.1f%%, %d rows, %d within 15%%: "
                     % (os.path.basename(path), label, 100 * now[0], 100 * now[1], now[2], now[3]))
                    for path in paths], mode)
    if stale:
        print("%d stale %s band(s): after a change that moves these rows, rerun tools/%s SIM --write "
              "and commit topologies/%s" % (stale, label, tool, FILE))
    return stale
