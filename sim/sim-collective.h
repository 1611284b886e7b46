/* sim-collective.h — NCCL-like collectives as flows over the network.
 *
 * A collective over a group of GPUs becomes, in the engine: a start delay
 * carrying the algorithm's latency, the flows that move its bytes (sharing
 * links with everything else running), and a zero-length join that
 * finishes when the last flow has.  Algorithms, as NCCL runs them:
 *
 *   ring   every rank sends to the next: all_reduce moves 2(n-1)/n*S bytes
 *          out of each rank, all_gather and reduce_scatter (n-1)/n*S,
 *          broadcast S.  Groups spanning nodes use one ring per GPU of a
 *          node (at most one per NIC), entering and leaving each node on
 *          the same rail, so a DGX's 8 NICs carry 8 rings in parallel.
 *   tree   all_reduce only: a chain inside each node and NCCL's double
 *          binary tree between nodes, each tree carrying half the data up
 *          (reduce) and down (broadcast).
 *   hier   (sim's, not NCCL's; never chosen by auto) all_reduce over
 *          several nodes in three phases: reduce_scatter
 *          inside each node, one all_reduce per local rank across nodes on
 *          1/m of the data (each on its own rail), all_gather inside each
 *          node; every phase a ring with its own latency.
 *   nvls   all_reduce inside one node whose NVSwitch reduces in-network
 *          (NVLink SHARP): each GPU sends S to the switch and receives S,
 *          at most at the switch's measured sharp-bandwidth (274 GB/s on
 *          NVLink 4 = 480 GB/s of bus bandwidth), after a measured 95.6 us
 *          (see below).
 *   nvlstree  all_reduce over several nodes whose NVSwitches reduce in-network
 *          (NCCL's NVLSTree, 2.18+): inside each node NVLS as above, and
 *          between nodes each GPU's 1/m shard (m GPUs a node) over its own
 *          rail in NCCL's double binary tree over the nodes, each tree
 *          carrying half of it up and down; all at once (NCCL pipelines the
 *          three parts by chunks).  Two nodes: each rail sends and receives
 *          one shard, the case NCCL's tuner gives twice the network
 *          bandwidth.  Latency: the one-node NVLS cost plus
 *          2 log2(nodes) network steps at hwLat NET NVLSTree Simple
 *          (20.9 us).
 *   all_to_all  NCCL has no algorithm for it: nccl-tests' alltoall_perf
 *          calls ncclSend/ncclRecv of count/n elements to and from every
 *          peer inside one ncclGroupStart/End, so all n(n-1) pieces of
 *          bytes/n move at once, each its own flow: intra-node over
 *          NVLink through the NVSwitch ports, inter-node over the NICs,
 *          at 0.913 of the rate a ring reaches on the same links
 *          (NCCL's send/recv path, measured on H100 and GB200:
 *          P2P_EFFICIENCY in sim-collective.c).
 *          bytes is what each rank sends in all (nccl-tests' size),
 *          busbw = algbw x (n-1)/n (nccl-tests doc/PERFORMANCE.md).  On a
 *          rail-optimised cluster (one NIC per GPU, rails in the topology)
 *          an inter-node piece goes over NVLink to the GPU of its own node
 *          on the destination's rail and leaves by that GPU's NIC: NCCL's
 *          PXN, on by default since NCCL 2.12 (NCCL_PXN_DISABLE, NCCL
 *          environment variables, docs.nvidia.com/deeplearning/nccl
 *          archives/nccl_2155).  Elsewhere a piece takes the plain route
 *          from its own GPU.  Latency: NCCL's device work batches hold at
 *          most 8 p2p operations (NCCL_MAX_DEV_WORK_P2P_PER_BATCH,
 *          src/include/device.h), so the n-1 peers cost ceil((n-1)/8)
 *          batches, counted intra-node peers first, each one p2p step as a
 *          send/recv is charged (hwLat ring Simple: 3.4 us NVLink, 14 us
 *          network when the batch holds a peer on another node).  Algorithm
 *          "ring" and protocol Simple only.  Not modelled: NCCL's LL for
 *          small p2p messages (NCCL_P2P_LL_THRESHOLD), its per-peer channel
 *          count (p2pnChannelsPerPeer) and chunking, the kernel launch
 *          (small all_to_alls are cheaper here than measured), uneven
 *          splits (alltoallv).
 *
 * Protocols (LL, LL128, Simple) and latencies follow NCCL's tuning model
 * (src/graph/tuning.cc at NVIDIA/nccl 5067397c, ncclTunerConstantsDefaults):
 *   latency = baseLat[algo][proto] + per-step hwLat[link class][algo][proto]
 *             x the algorithm's steps (ring: nsteps, inter-node steps at the
 *             network's hwLat, counted as NCCL 2.20 (b6475625) counts them:
 *             see latency_s; tree: 2 x (chain + log2 nodes))
 *   bandwidth: Simple at the link's achieved rate (a link's
 *   achieved-bandwidth: what NCCL's Simple protocol moves through it, e.g.
 *   370.8 of NVLink 4's 450 GB/s, NVIDIA/nccl-tests#212 and NCCL's
 *   18 x SM90_NVLINK_BW); LL128 with 120/128-byte lines (NCCL's 0.92); a
 *   ring's LL at half the link's rate (8-byte lines, half of them flags:
 *   busBw = min (llMaxBw, 0.5 busBw) since NCCL 2.21.5, 1/4 before), a
 *   tree's at 1/3.8 of it; LL's bus bandwidth at most llMaxBw: on one node
 *   87.7 GB/s (Ampere), 141 (Hopper), 282 (Blackwell); over two nodes 22.5
 *   and beyond 19.0 (NCCL's row for AMD hosts: the topology files do not
 *   state the CPU, and NCCL takes 39.0 and 20.4 on Intel hosts).  On the
 *   published 8 x H100 sweeps the ring's LL at half rate gives 512 KiB to
 *   2 MiB within 6 %, where 1/4 was 15-24 % slow
 *   (tests/test-validation-nccl.c, section 1).
 *   Two of the tuner's refinements (tuning.cc at NVIDIA/nccl 5067397c):
 *   a tree all_reduce's bandwidth times treeCorrectionFactor at medium
 *   sizes (0.4-1.0 by protocol and size, 64 B to 256 MiB), and a ring
 *   all_reduce over nodes with Simple its latency times 1.4 ("plateau
 *   effect of ring").
 * Per-channel ceilings (tuning.cc at NVIDIA/nccl 5067397c): NCCL caps a
 *   ring's LL128 bus bandwidth at its channels x perChMaxRingLL128Bw, a
 *   tree's at its channels x perChMaxTreeBw (LL128: also x perChMaxTree-
 *   LL128Bw), by GPU architecture (the topology file's NVLink generation:
 *   3 Ampere, 4 Hopper, 5 Blackwell) and node count.  The channels are
 *   those of NCCL's ring graph as its topology search (search.cc) finds
 *   them for the group (nccl_ring_channels in the .c file): inside a DGX
 *   H100 or A100 12, a DGX B200 16, across nodes one per NIC the group's
 *   GPUs use (8 on 8 x 400 Gb/s or 200 Gb/s NICs).  Across nodes this
 *   binds: a ring's LL128 moves at most 8 x 36.7 = 293.6 GB/s of bus
 *   bandwidth on two DGX H100, 8 x 20 = 160 on two DGX A100, 8 x 40 = 320
 *   on two DGX B200, where the NICs would give 368, 184 and 368.
 * The per-step latencies already include the links' own latencies, so
 * collective flows carry no path latency of their own.
 *
 * NVLS latency: NCCL's tuner charges 25 us (hwLat NVLink NVLS), but NCCL
 * runs NVLS with few channels at mid sizes and its bandwidth ramps up
 * slowly ("256M is too small to reach peak bandwidth", NVIDIA/nccl-tests
 * #212).  One fixed cost, 95.6 us, fits the published DGX H100 sweep
 * (tests/validation/data/nccl-tests/h100x8-allreduce-dgxc-benchmarking.txt)
 * from 64 MiB to 16 GiB within 4.7 % (NVLS_ONE_NODE_LAT_US in the .c file).
 *
 * `auto` simulates every candidate alone on an idle network and keeps the
 * fastest, as NCCL's tuner picks the minimum of its own model; NVLS and
 * NVLSTree are candidates wherever they are supported, hier (no NCCL
 * algorithm) only when asked for.  On 8 H100s that gives ring/LL up to
 * 64 KiB, tree and ring LL/LL128 to 32 MiB and NVLS from 64 MiB, as the
 * published sweeps show (their 64 MiB-16 GiB rows pass the 370 GB/s a
 * ring can reach, so they are NVLS).  NCCL's own cost model (tuning.cc at
 * 5067397c, with the ceilings above) would pick tree/LL128 for a two-node
 * all_reduce from 4 MiB to 8 or 16 MiB where this picks ring/LL128; the
 * held-out two-node sweeps do not bear that out against the tree here,
 * which crosses the nodes on two NICs where NCCL's trees use one per
 * channel: on two DGX A100 (a100x16-2node-crusoe-ib-allreduce-dstack.txt)
 * its bus bandwidth is 27-43 % below the measured at 4-16 MiB, the
 * ring's within 7 %.
 * Not modelled: NVLS for all_gather
 * and reduce_scatter (NCCL has it; no measurement to check it against),
 * SHARP in InfiniBand switches (CollNet), NCCL's fewer channels for small
 * messages (threadThresholds, enqueue.cc: below about 1 MiB).
 */
#pragma once

#include <glib.h>

#include "sim-collop.h"
#include "sim-network.h"

G_BEGIN_DECLS

typedef enum {
  SIM_ALGO_AUTO,
  SIM_ALGO_RING,
  SIM_ALGO_TREE,
  SIM_ALGO_NVLS,
  SIM_ALGO_HIER,
  SIM_ALGO_NVLS_TREE
} SimAlgo;
typedef enum { SIM_PROTO_AUTO, SIM_PROTO_LL, SIM_PROTO_LL128, SIM_PROTO_SIMPLE } SimProto;

typedef struct {
  SimAlgo algo;
  SimProto proto;
  double latency_s;
  double predicted_s;  /* alone on an idle network */
  SimTime alone_t;     /* the same, exactly (SIM_TIME_MAX: not simulated) */
} SimCollChoice;

/* Is algo usable for op on this group?  (tree: all_reduce; nvls: all_reduce
 * in one node with a SHARP switch whose bandwidth is known; all_to_all:
 * ring with Simple only)  Never fails.
 * Like everything below that takes a SimNetwork: one thread per network
 * (routes are cached in it); separate networks may run in parallel. */
gboolean sim_collective_supported (SimNetwork *net, SimCollOp op, const int *gpus, int n,
                                   SimAlgo algo, SimProto proto);

/* Pick algorithm and protocol (either may be AUTO) for bytes on gpus[0..n).
 * bytes follows nccl-tests: the whole buffer (all_gather: all ranks'
 * pieces; reduce_scatter: the input; all_to_all: what one rank sends to
 * all, bytes/n to each).  send/recv and all_to_all run Simple whatever
 * proto asks.  Each candidate runs alone on a
 * private engine; net's own engine is untouched.  FALSE with
 * SIM_ERROR_USAGE when no candidate suits the group (the message names the
 * algorithm, never a command-line flag). */
gboolean sim_collective_choose (SimNetwork *net, SimCollOp op, const int *gpus, int n,
                                double bytes, SimAlgo algo, SimProto proto, SimCollChoice *out,
                                GError **error);

/* Add the collective to the network's engine.  *start is the activity that
 * must depend on whatever precedes the collective; the return value is the
 * activity that finishes with it.  tag is given to every activity.  choice
 * comes from sim_collective_choose; never fails.
 * SIM_OP_SENDRECV takes gpus as n / 2 (source, destination) pairs, each
 * sending `bytes`, all after the one latency of choice (chosen for the
 * first pair) and joined at the end: the same times as a send/recv per
 * pair with that choice, all started by the same activity, in 2 + n / 2
 * activities instead of 3 n / 2. */
SimActivityId sim_collective_add (SimNetwork *net, SimCollOp op, const int *gpus, int n,
                                  double bytes, const SimCollChoice *choice, guint32 tag,
                                  SimActivityId *start);

/* How long the collective (as sim_collective_add would add it, choice's
 * latency included) takes alone on an idle copy of the network: exactly
 * what it takes in a run where nothing shares its links, the same
 * picoseconds; with `links` non-NULL, the links its flows cross are
 * added to it, which is kept sorted and without repeats.  net's own engine is
 * untouched; SIM_TIME_MAX if it cannot finish (never, for a choice from
 * sim_collective_choose). */
SimTime sim_collective_alone (SimNetwork *net, SimCollOp op, const int *gpus, int n, double bytes,
                              const SimCollChoice *choice, GArray *links);
/* the same, and into *activities how many activities sim_collective_add
 * adds for it (its flows, their start and end) */
SimTime sim_collective_alone_counted (SimNetwork *net, SimCollOp op, const int *gpus, int n,
                                      double bytes, const SimCollChoice *choice, GArray *links,
                                      guint32 *activities);
/* the same for the choice sim_collective_choose made for these very gpus
 * and bytes: its time is the choice's alone_t, exactly what the run would
 * give, so the collective is built on the idle copy (for its links and
 * activities) but not run */
SimTime sim_collective_alone_chosen (SimNetwork *net, SimCollOp op, const int *gpus, int n,
                                     double bytes, const SimCollChoice *choice, GArray *links,
                                     guint32 *activities);

/* The line NCCL logs for this choice on rank 0 under NCCL_DEBUG=INFO
 * NCCL_DEBUG_SUBSYS=TUNING (enqueue.cc at NVIDIA/nccl 5067397c), less its
 * channel range, which sim does not model:
 *   "AllReduce: 1073741824 Bytes -> Algo NVLS_TREE proto SIMPLE"
 * bytes as sim_collective_choose takes them (NCCL logs the API's count:
 * all_gather and reduce_scatter a rank's piece, bytes / n).  NULL where
 * NCCL logs no such line: send/recv and all_to_all (grouped point-to-point
 * operations) and hier (sim's three phases, no NCCL algorithm).  Free with
 * g_free. */
char *sim_collective_nccl_log_line (SimCollOp op, int n, double bytes, const SimCollChoice *choice);

/* names are static strings; a parser returns FALSE for an unknown name and
 * leaves *out untouched; any thread */
const char *sim_algo_name (SimAlgo a);
gboolean sim_algo_parse (const char *name, SimAlgo *out);
const char *sim_proto_name (SimProto p);

G_END_DECLS
