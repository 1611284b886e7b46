"""The error bands the cluster files store as attributes of <efficiency>,
which the report prints under the step time.  A band is a tuple of
attributes, each named for its kind by its last word: error (mean |step-time
error|), bias (mean signed error), rows (the runs) and within (the runs
within 15 %).  tools/moe-check.py (NAME moe), fsdp-check.py (NAME fsdp) and
pytorch-native-check.py (NAME torchtitan) store the four of named(NAME);
heldout-check.py heldout-error and heldout-rows; blackwell-check.py error
and error-rows."""
import re
import statistics

# how an attribute of each kind is matched, read and written
KINDS = {"error": (r"[0-9.]+", float, "%.3f"), "bias": (r"[-0-9.]+", float, "%.3f"),
         "rows": (r"[0-9]+", int, "%d"), "within": (r"[0-9]+", int, "%d")}


def kind(attr):
    """the KINDS key of a band attribute: the last word of its name"""
    return attr.rsplit("-", 1)[-1]


def named(name):
    """the attributes of band NAME: NAME-error, NAME-bias, NAME-rows,
    NAME-within"""
    return tuple("%s-%s" % (name, k) for k in ("error", "bias", "rows", "within"))


def band_of(errs, attrs):
    """the values of the band attrs that the errors errs give, rounded as
    stored (three decimals)"""
    a = [abs(e) for e in errs]
    value = {"error": round(statistics.mean(a), 3), "bias": round(statistics.mean(errs), 3), "rows": len(errs),
             "within": sum(1 for x in a if x <= 0.15)}
    return tuple(value[kind(x)] for x in attrs)


def stored(path, attrs):
    """the values of the band attrs a cluster file stores, or None where it
    states none"""
    m = re.search(r"<efficiency [^>]*" + " ".join('%s="(%s)"' % (a, KINDS[kind(a)][0]) for a in attrs),
                  open(path).read())
    return tuple(KINDS[kind(a)][1](v) for a, v in zip(attrs, m.groups())) if m else None


def store(path, attrs, band):
    """rewrite the cluster file's band attrs as the values band (at the end
    of <efficiency>)"""
    src = open(path).read()
    m = re.search(r"<efficiency [^>]*?(\s*/>)", src)
    el = re.sub(" " + " ".join('%s="[^"]*"' % a for a in attrs), "", m.group(0)[:-len(m.group(1))])
    el += "".join(' %s="%s"' % (a, KINDS[kind(a)][2] % v) for a, v in zip(attrs, band)) + m.group(1)
    open(path, "w").write(src[:m.start()] + el + src[m.end():])


def settle(path, attrs, now, mode, text):
    """print text and whether the band now (the values of attrs; None: no
    rows) is the one the file at path stores; with mode --write store it
    where it is not; 1 when it is not under mode --check-band (stale),
    else 0"""
    have = stored(path, attrs)
    print(text + ("stored" if have == now else "STALE: stored %s" % (have,)))
    if mode == "--write" and now is not None and have != now:
        store(path, attrs, now)
    elif mode == "--check-band" and have != now:
        return 1
    return 0


def bands(paths, name, label, errs, mode, tool):
    """print the band NAME that errs give and whether each file stores it,
    store it (mode --write) or count the stale files (mode --check-band);
    the count of stale files"""
    attrs = named(name)
    now = band_of(errs, attrs)
    stale = 0
    for path in paths:
        stale += settle(path, attrs, now, mode, "%-16s %s band %4.1f%%, bias %+5.1f%%, %d rows, %d within 15%%: "
                        % (path.rsplit("/", 1)[-1], label, 100 * now[0], 100 * now[1], now[2], now[3]))
    if stale:
        print("%d stale %s band(s): after a change that moves these rows, rerun tools/%s SIM --write "
              "and commit the cluster files" % (stale, label, tool))
    return stale
