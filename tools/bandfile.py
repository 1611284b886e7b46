"""A band of published runs as the cluster files store it: the NAME-error,
NAME-bias, NAME-rows and NAME-within attributes of <efficiency> (mean
|step-time error|, mean signed error, runs, runs within 15 %), which the
report prints under the step time.  Shared by tools/moe-check.py (NAME moe),
tools/fsdp-check.py (NAME fsdp) and tools/pytorch-native-check.py (NAME
torchtitan)."""
import re
import statistics


def band_of(errs):
    """(mean |error|, mean error, rows, rows within 15 %), rounded as stored"""
    a = [abs(e) for e in errs]
    return (round(statistics.mean(a), 3), round(statistics.mean(errs), 3), len(errs), sum(1 for x in a if x <= 0.15))


def stored(path, name):
    """the band NAME of a cluster file, or None where it states none"""
    m = re.search(r'<efficiency [^>]*%s-error="([0-9.]+)" %s-bias="([-0-9.]+)" %s-rows="([0-9]+)" '
                  r'%s-within="([0-9]+)"' % ((name,) * 4), open(path).read())
    return (float(m.group(1)), float(m.group(2)), int(m.group(3)), int(m.group(4))) if m else None


def store(path, name, band):
    """rewrite the cluster file's band NAME as `band` (at the end of <efficiency>)"""
    src = open(path).read()
    m = re.search(r"<efficiency [^>]*?(\s*/>)", src)
    el = re.sub(r' %s-error="[^"]*" %s-bias="[^"]*" %s-rows="[^"]*" %s-within="[^"]*"' % ((name,) * 4), "",
                m.group(0)[:-len(m.group(1))])
    el += ' %s-error="%.3f" %s-bias="%.3f" %s-rows="%d" %s-within="%d"' % (
        name, band[0], name, band[1], name, band[2], name, band[3]) + m.group(1)
    open(path, "w").write(src[:m.start()] + el + src[m.end():])


def bands(paths, name, label, now, mode, tool):
    """print the band of each file, store it (mode --write) or count the
    stale ones (mode --check-band); the count of stale files"""
    stale = 0
    for path in paths:
        have = stored(path, name)
        print("%-16s %s band %4.1f%%, bias %+5.1f%%, %d rows, %d within 15%%: %s"
              % (path.rsplit("/", 1)[-1], label, 100 * now[0], 100 * now[1], now[2], now[3],
                 "stored" if have == now else "STALE: stored %s" % (have,)))
        if mode == "--write" and have != now:
            store(path, name, now)
        elif mode == "--check-band" and have != now:
            stale += 1
    if stale:
        print("%d stale %s band(s): after a change that moves these rows, rerun tools/%s SIM --write "
              "and commit the cluster files" % (stale, label, tool))
    return stale
