"""The published-run tables of tests/validation/data: reading them and a
row's measured step time."""
import csv
import os


def data_path(root, *name):
    """the path of a file of tests/validation/data under the source root"""
    return os.path.join(root, "tests", "validation", "data", *name)


def read_rows(path, fieldnames=None):
    """the rows of a CSV file as dicts, its comment lines (starting with #)
    left out; fieldnames as csv.DictReader takes them (None: the header)"""
    return list(csv.DictReader((line for line in open(path) if not line.startswith("#")), fieldnames=fieldnames))


def measured_s(r):
    """the row's measured step time in seconds: iter_time_s, or global batch
    x sequence / tokens_per_s; None where the row gives neither"""
    if r["iter_time_s"]:
        return float(r["iter_time_s"])
    if r["tokens_per_s"] and r["global_batch"]:
        return int(r["global_batch"]) * int(r["seq_len"]) / float(r["tokens_per_s"])
    return None
