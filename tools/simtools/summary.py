"""The one-line summary of a table's step-time errors (each a fraction,
sim's step time over the measured one less 1)."""
import statistics

# the columns of each table's summary, as summary() fills them in:
# rows, within 15 %, MAE, median, bias, worst (tools/heldout-check.py,
# fidelity.py, moe-check.py)
ROWS = ("%(rows)d rows: %(within)d within 15%%, MAE %(mae).1f%%, median %(median).1f%%, bias %(bias)+.1f%%, "
        "worst %(worst)+.1f%%")
# the calibration rows: no median (tools/fit-efficiency.py, fsdp-check.py,
# tests/test-training-calibration.py)
CALIBRATION = "%(rows)d rows: %(within)d within 15%%, MAE %(mae).1f%%, bias %(bias)+.1f%%, worst %(worst)+.1f%%"
# no count within 15 % (tools/blackwell-check.py)
NO_WITHIN = "%(rows)d rows: MAE %(mae).1f%%, median %(median).1f%%, bias %(bias)+.1f%%, worst %(worst)+.1f%%"
# the count within 15 % last (tools/a100-40gb-check.py)
WITHIN_LAST = "%(rows)d rows: MAE %(mae).1f%%, bias %(bias)+.1f%%, worst %(worst)+.1f%%, %(within)d within 15%%"
# a scaling series, its rows in order of GPUs: with the drift from the
# first to the last (tools/megascale-check.py)
SCALING = ("MAE %(mae).1f%%, bias %(bias)+.1f%%, worst %(worst)+.1f%%, %(within)d of %(rows)d within 15%%, "
           "drift %(drift)+.1f points")
# aligned columns, with the count within 20 % (tools/pytorch-native-check.py)
ALIGNED = ("%(rows)2d row%(s_colon)s MAE %(mae)5.1f%%, mean %(bias)+6.1f%%, within 15%% %(within)2d, "
           "within 20%% %(within20)2d, worst %(worst)+6.1f%%")


def error_stats(errs):
    """what a summary may print of errs (at least one): rows, within (|error|
    at most 15 %), within20, and in percent mae (mean |error|), median (of
    |error|), bias (mean error), worst (the error largest in size), drift
    (the last error less the first); s_colon, "s:" after "row" for more
    than one row, else ": " """
    a = [abs(e) for e in errs]
    return {"rows": len(errs), "within": sum(1 for x in a if x <= 0.15), "within20": sum(1 for x in a if x <= 0.20),
            "mae": 100 * statistics.mean(a), "median": 100 * statistics.median(a),
            "bias": 100 * statistics.mean(errs), "worst": 100 * max(errs, key=abs),
            "drift": 100 * (errs[-1] - errs[0]), "s_colon": "s:" if len(errs) > 1 else ": "}


def summary(errs, form=ROWS):
    """the summary line of errs: form (one of the forms above) filled in
    with error_stats(errs)"""
    return form % error_stats(errs)


def scale_drifts(series, min_ratio=1):
    """series: a label -> [(GPUs, error)] of runs with the same work per
    GPU.  Prints each with three or more GPU counts whose largest is at
    least min_ratio times its smallest: the error at the largest count less
    at the smallest, in points (negative where sim grows optimistic with
    scale); returns those drifts (tools/heldout-check.py,
    tools/fsdp-check.py)"""
    drifts = []
    for label in sorted(series):
        v = sorted(series[label])
        if len(set(n for n, _ in v)) < 3 or v[-1][0] < min_ratio * v[0][0]:
            continue
        drifts.append(100 * (v[-1][1] - v[0][1]))
        print("  %-38s %5d -> %5d GPUs: %+6.1f%% -> %+6.1f%%  drift %+5.1f"
              % (label, v[0][0], v[-1][0], 100 * v[0][1], 100 * v[-1][1], drifts[-1]))
    return drifts
