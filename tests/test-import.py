#!/usr/bin/env python3
"""sim topology import: a cluster file from NCCL's topology dump, nvidia-smi
topo -m and ibstat.

usage: test-import.py SIM SOURCE_ROOT

tests/data/import/ holds one DGX H100 node as the three tools print it
(each file's header says what it was written from).  Imported from them,
the node's links are the shipped dgx-h100.xml node's: 8 GPUs, NVLink 4 x
18 links (450 GB/s per direction, 370.8 GB/s achieved), 4 NVSwitch chips
with SHARP, PCIe Gen5 x16 (32 GT/s x 16 x 128/130 / 8 = 63.0 GB/s), 8
ConnectX-7 at 400 Gb/s; a plan simulated on the imported file takes the
step it takes on the shipped one.  Each format alone gives its part (and
the rest is listed as taken from the shipped file); inputs that disagree,
an unreadable input and a GPU no shipped file describes are one line,
exit status 2.
"""
import os
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True
import cli

sim, src = cli.arguments("test-import.py")
checks = cli.Checks()
check = checks.check
data = os.path.join(src, "tests", "data", "import")
NCCL, TOPO_M, IBSTAT = (os.path.join(data, f) for f in ("dgx-h100-nccl-topo.xml", "dgx-h100-topo-m.txt",
                                                         "dgx-h100-ibstat.txt"))


def node_of(path):
    """the node's link attributes of a cluster file"""
    n = ET.parse(path).getroot().find("cluster/node")
    out = {"gpus": n.get("gpus")}
    for tag, keys in (("nvlink", ("generation", "links", "bandwidth", "achieved-bandwidth")),
                      ("nvswitch", ("chips", "sharp")), ("pcie", ("generation", "bandwidth")),
                      ("nic", ("count", "bandwidth"))):
        e = n.find(tag)
        for k in keys:
            out[f"{tag}.{k}"] = e.get(k) if e is not None else None
    return out


shipped = node_of(os.path.join(src, "topologies", "dgx-h100.xml"))
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "imported.xml")
    r = cli.run(sim, "topology", "import", "--nccl-topo", NCCL, "--topo-m", TOPO_M, "--ibstat", IBSTAT, "--nodes",
                "4", "-o", out)
    check("all three: exit status, nothing on stdout", (r.returncode, r.stdout), (0, ""))
    got = node_of(out)
    # 63.0 GB/s written for PCIe Gen5 x16; the shipped file writes 63GB/s
    got["pcie.bandwidth"] = got["pcie.bandwidth"].replace(".0GB/s", "GB/s")
    check("all three: the node's links are the shipped DGX H100 node's", got, shipped)
    with open(out) as f:
        text = f.read()
    check("all three: the file lists what it took from dgx-h100.xml",
          "Taken from the shipped file of the GPU or assumed" in text and "NIC latency 730ns, as dgx-h100" in text, True)
    plan = ["--tp", "8", "--pp", "4", "--dp", "1", "--json", "-"]
    a = cli.json_of(cli.run(sim, "--topology", out, *plan))
    b = cli.json_of(cli.run(sim, "--topology", "dgx-h100", "--nodes", "4", *plan))
    check("a plan on the imported file takes the step it takes on dgx-h100 (4 nodes)",
          round(a["time"]["step_s"], 9), round(b["time"]["step_s"], 9))

    # each format alone
    r = cli.run(sim, "topology", "import", "--nccl-topo", NCCL)
    n = ET.fromstring(r.stdout[r.stdout.index("<topology"):]).find("cluster/node")
    check("the NCCL dump alone: GPUs, links, switches, PCIe and NICs from it",
          (n.get("gpus"), n.find("nvlink").get("links"), n.find("nvswitch").get("chips"),
           n.find("pcie").get("generation"), n.find("nic").get("count"), n.find("nic").get("bandwidth")),
          ("8", "18", "4", "5", "8", "400Gb/s"))
    r = cli.run(sim, "topology", "import", "--topo-m", TOPO_M, "--gpu-type", "dgx-h100")
    check("nvidia-smi topo -m alone (with --gpu-type): 8 GPUs, NV18; the NICs listed as taken",
          (r.returncode, 'gpus="8"' in r.stdout, 'links="18"' in r.stdout,
           "8 compute NICs of 400Gb/s, as dgx-h100 (neither an NCCL dump nor ibstat gives them)" in r.stdout),
          (0, True, True, True))
    r = cli.run(sim, "topology", "import", "--ibstat", IBSTAT, "--gpu-type", "dgx-h100")
    check("ibstat alone: the 8 active InfiniBand ports (not the Ethernet bond), ConnectX-7 from MT4129",
          (r.returncode, '<nic name="ConnectX-7" count="8" bandwidth="400Gb/s"' in r.stdout), (0, True))

    # two ports of one HCA, and a text that ends without a newline: every
    # port ends where the next begins or the text does
    two = os.path.join(tmp, "ib2.txt")
    with open(two, "w") as f:
        f.write("CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Active\n\t\tRate: 400\n"
                "\t\tLink layer: InfiniBand\n\tPort 2:\n\t\tState: Active\n\t\tRate: 400\n"
                "\t\tLink layer: InfiniBand")
    r = cli.run(sim, "topology", "import", "--ibstat", two, "--gpu-type", "dgx-h100")
    check("ibstat: both ports of a two-port HCA, the last line read",
          '<nic name="ConnectX-7" count="2" bandwidth="400Gb/s"' in r.stdout, True)

    def write(name, body):
        p = os.path.join(tmp, name)
        with open(p, "w") as f:
            f.write(body)
        return p
    with open(NCCL) as f:
        dump = f.read()
    bad = [
        ("no input", [], "expected at least one of"),
        ("topo -m alone without --gpu-type", ["--topo-m", TOPO_M], "expected the GPU"),
        ("malformed XML", ["--nccl-topo", write("bad.xml", "<system>\n  <gpu dev=\"0\"\n</system>\n")],
         "bad.xml:"),
        ("not a dump", ["--nccl-topo", write("other.xml", "<topology/>\n")], "expected <system>"),
        ("a GPU no shipped file describes", ["--nccl-topo", write("t4.xml", dump.replace("0x2330", "0x1eb8"))],
         "10de:1eb8"),
        ("a dump and a matrix that disagree", ["--nccl-topo", NCCL, "--topo-m",
                                               write("m.txt", open(TOPO_M).read().replace("NV18", "NV12"))],
         "expected NV# equal to the NVLink links per GPU of the NCCL dump"),
        ("ibstat of no HCA", ["--ibstat", write("ib.txt", "nothing here\n"), "--gpu-type", "dgx-h100"],
         "expected ibstat's output"),
    ]
    for name, args, want in bad:
        r = cli.run(sim, "topology", "import", *args)
        lines = r.stderr.strip().splitlines()
        check(f"bad input, {name}: one line, exit 2", (r.returncode, len(lines), bool(lines) and want in lines[0]),
              (2, 1, True))

sys.exit(checks.finish())
