"""The cluster files of a published row: the Hopper files that share one
fit and the Blackwell files, whose NVL72 racks a run may use in part."""
import os

# the shipped cluster files whose <efficiency> is the H100 fit
# (tools/fit-efficiency.py SHIPPED["h100"]): they share one set of the
# band file, the Hopper bands (simtools/bands.py)
HOPPER = ("dgx-h100.xml", "dgx8x4.xml", "dgx-h200.xml", "dgx-h800.xml", "grand-teton-h100.xml", "aws-p5.xml")
# the cluster file each Blackwell GPU's rows validate, as blackwell_cluster()
# picks it
BLACKWELL = {"B200": "dgx-b200.xml", "GB200": "gb200-nvl72.xml", "GB300": "gb300-nvl72.xml"}


def gpu_key(r):
    """the BLACKWELL key of a row's gpu column, or None"""
    g = r["gpu"].upper()
    for k in ("GB300", "GB200", "B200"):
        if g.startswith(k):
            return k
    return None


def rack_topology(root, gpus_per_rack, tmp, name="gb200-nvl72"):
    """name.xml (a file of NVL72 racks) with gpus_per_rack GPUs (and NICs) in
    each rack, written under tmp; its path"""
    src = open(os.path.join(root, "topologies", name + ".xml")).read()
    out = src.replace('gpus="72"', 'gpus="%d"' % gpus_per_rack).replace('count="72"', 'count="%d"' % gpus_per_rack)
    path = os.path.join(tmp, "%s-%d.xml" % (name, gpus_per_rack))
    open(path, "w").write(out)
    return path


def blackwell_cluster(root, r, tmp):
    """(cluster file, nodes, what the table prints of it) of a Blackwell row:
    dgx-b200 with GPUs/8 nodes; for GB200 and GB300 a copy of the rack file
    (rack_topology) whose rack holds all the run's GPUs where they fit in
    one, else 64 GPUs per rack; (None, 0, the reason) for another GPU"""
    gpus = int(r["num_gpus"])
    g = gpu_key(r)
    if g in ("GB200", "GB300"):
        name = BLACKWELL[g][:-4]
        per = gpus if gpus <= 72 else 64
        return rack_topology(root, per, tmp, name), gpus // per, "%s (%d racks x %d GPUs)" % (name, gpus // per, per)
    if g == "B200":
        return os.path.join(root, "topologies", "dgx-b200.xml"), max(1, gpus // 8), "dgx-b200 (%d nodes)" % max(1, gpus // 8)
    return None, 0, "no Blackwell cluster file for gpu %r" % r["gpu"]
