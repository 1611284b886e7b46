/* sim-collective.c — see sim-collective.h for the model and its sources */
#include "sim-collective.h"

#include <math.h>
#include <string.h>

#include "sim-error.h"

/* ---- NCCL's tuning constants (ncclTunerConstantsDefaults, src/graph/
 * tuning.cc at NVIDIA/nccl 5067397c), microseconds ---- */

enum { A_TREE, A_RING, A_NVLS, N_A };
enum { P_LL, P_LL128, P_SIMPLE, N_P };
enum { HW_NVLINK, HW_PCI, HW_NET, N_HW };

static const double base_lat_us[N_A][N_P] = {
  { 6.8, 14.0, 8.4 }, /* tree */
  { 6.6, 14.0, 8.4 }, /* ring */
  { 0, 0, 0 },        /* nvls */
};

static const double hw_lat_us[N_HW][N_A][N_P] = {
  { { .6, 1.25, 4.0 }, { .6, 1.9, 3.4 }, { 0, 0, 25 } },  /* NVLink */
  { { 1.0, 1.9, 4.0 }, { 1.0, 2.5, 5.7 }, { 0, 0, 0 } },  /* PCI */
  { { 5.0, 8.5, 14 }, { 2.7, 4.0, 14.0 }, { 0, 0, 18 } }, /* network */
};

/* NVLS all_reduce in one node: the measured fixed cost.  NCCL's tuner
 * charges 25 us (hwLat NVLink NVLS above), but the published 8 x H100 sweep
 * follows t = 95.6 us + S / 274 GB/s (sharp-bandwidth of the topology) from
 * 64 MiB to 16 GiB within 4.7 %: the value minimises the largest relative
 * error over rows dgxc_h100x8_allreduce_67108864 .. _17179869184 of
 * tests/validation/data/nccl_collectives.csv (NCCL's NVLS ramp, "256M is too
 * small to reach peak bandwidth", NVIDIA/nccl-tests#212). */
#define NVLS_ONE_NODE_LAT_US 95.6

/* NVLSTree all_reduce over nodes: t = 95.6 us + 2 log2(nodes) x 55.4 us +
 * S / (0.935 x sharp-bandwidth).  The form is NCCL's tuner's (NVLS's cost
 * inside the node, 2 log2(nodes) network steps of the double binary tree:
 * tuning.cc at NVIDIA/nccl 5067397c, whose hwLat[NET][NVLS_TREE][Simple]
 * is 20.9 us); the two constants are measured: they minimise the largest
 * relative error (1.7 %) over the 64 MiB - 16 GiB rows of the published
 * 2 x 8 H200 sweep over Spectrum-X RoCE (nccl-tests 2.18.3, NCCL 2.30.4;
 * tests/validation/data/nccl-tests/
 * h200x16-2node-spectrumx-roce-allreduce-g8x2proc-ncclt2.18.txt), whose
 * 485 GB/s bus bandwidth at 16 GiB no ring over 8 x 400 Gb/s reaches.  The
 * 2 x 8 H100 EFA sweep (h100x16-2node-p5-efa-allreduce-awsome.txt), not
 * fitted, reaches the same rate: 259.8 GB/s of algorithm bandwidth at
 * 16 GiB against 259.0. */
#define NVLS_TREE_STEP_US 55.4
#define NVLS_TREE_EFFICIENCY 0.935

/* all_to_all: NCCL's device work batches hold at most 8 p2p operations
 * (NCCL_MAX_DEV_WORK_P2P_PER_BATCH, src/include/device.h, NCCL 2.19+) */
#define P2P_PER_BATCH 8

/* all_to_all moves its pieces at 0.913 of the rate the ring's Simple
 * protocol reaches on the same links: the measured all_to_all bus
 * bandwidth over what this model gives at the ring's rate, on two
 * generations inside one NVLink domain (tests/validation/data/nccl-tests):
 * 4 x H100 at 500 MiB, 334.90 and 337.99 GB/s out of and in place
 * (h100x4-alltoall-nccl2169.txt) against 369.61, 0.906 and 0.914; 8 x
 * GB200 over two trays at 8 and 16 GiB, 657.81, 658.30, 662.27 and 661.03
 * (gb200x8-2tray-alltoall-oci.txt) against 721.56 and 721.68, 0.912 to
 * 0.918; the mean of the six.  NCCL's send/recv runs its own channels per
 * peer and chunking (p2pnChannelsPerPeer, p2pChunkSize), not the ring's,
 * over NVLink and the network alike: across two GB200 racks, bound by the
 * NICs, it reached 0.896 to 0.906 of the line-rate model
 * (gb200x128-2rack-alltoall-oci.txt, 88.63-89.70 GB/s against 98.87-99.05),
 * so the factor applies to every piece. */
#define P2P_EFFICIENCY 0.913

/* NCCL's correction of its tree model at medium sizes ("Trees are not
 * perfectly sticking to the model for medium sizes"): the tree's bandwidth
 * times this factor, by protocol and log2(bytes / 64), 64 B to 256 MiB
 * (treeCorrectionFactor, tuning.cc at NVIDIA/nccl 5067397c) */
static const double tree_correction[N_P][23] = {
  { 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0 },
  { 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0 },
  { .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9 },
};

/* NCCL's ring all_reduce over nodes with Simple: its latency times 1.4
 * once each rank's piece of a channel holds 64 bytes ("Plateau effect of
 * ring", 1.9 before Ampere; tuning.cc at NVIDIA/nccl 5067397c), with
 * NCCL's largest channel count (MAXCHANNELS, 32) */
#define RING_PLATEAU_FACTOR 1.4
#define MAX_CHANNELS 32

/* a network send costs the CPU proxy ~1 us (Intel) per step, three times
 * that with Simple (getNetOverhead) */
#define NET_OVERHEAD_US 1.0

/* ---- NCCL's channels and its per-channel ceilings (NVIDIA/nccl 5067397c) ---- */

/* NCCL's compute-capability rows (NCCL_VOLTA_COMPCAP_IDX ..
 * NCCL_BLACKWELL_COMPCAP_IDX), told apart here by the NVLink generation of
 * the topology file: 2 Volta, 3 Ampere, 4 Hopper, 5 Blackwell */
enum { ARCH_VOLTA, ARCH_AMPERE, ARCH_HOPPER, ARCH_BLACKWELL, N_ARCH };

/* LL's ceiling in bus bandwidth, GB/s (llMaxBws): on one node by GPU
 * architecture, over 2 / more nodes by the hosts' CPU vendor (NCCL's
 * rows: Intel {39.0, 39.0, 20.4}, AMD {87.7, 22.5, 19.0}).  The topology
 * files do not state the CPU, so nodes read the AMD row, 22.5 over two
 * nodes and 19.0 beyond. */
static const double ll_max_bw_GBps[N_ARCH][3] = {
  { 39.0, 39.0, 20.4 }, { 87.7, 22.5, 19.0 }, { 141.0, 45.0, 35.0 }, { 2 * 141.0, 2 * 45.0, 2 * 35.0 },
};

/* an NVLink's bandwidth in NCCL's topology, GB/s: SM70_NVLINK_BW,
 * SM80_NVLINK_BW, SM90_NVLINK_BW, SM100_NVLINK_BW (src/graph/topo.h) */
static const double nvlink_link_GBps[N_ARCH] = { 20.0, 20.0, 20.6, 40.1 };

/* the bus bandwidth one channel may carry, GB/s, by node count 1 / 2 / more:
 * perChMaxRingLL128Bws, perChMaxTreeBws, perChMaxTreeLL128Bws
 * (ncclTunerConstantsDefaults, src/graph/tuning.cc) */
static const double per_ch_ring_ll128_GBps[N_ARCH][3] = {
  { 20.0, 20.0, 20.0 }, { 20.0, 20.0, 20.0 }, { 36.7, 36.7, 36.7 }, { 40.0, 40.0, 40.0 },
};
static const double per_ch_tree_GBps[N_ARCH][3] = {
  { 26.5, 18.5, 10.0 }, { 24.0, 23.6, 17.8 }, { 38.7, 41.4, 36.0 }, { 70.0, 42.8, 24.0 },
};
static const double per_ch_tree_ll128_GBps[N_ARCH][3] = {
  { 20.0, 20.0, 20.0 }, { 20.0, 20.0, 20.0 }, { 36.7, 36.7, 29.0 }, { 55.6, 31.67, 20.0 },
};

/* the speeds NCCL's topology search tries per channel, GB/s, fastest first,
 * inside one node and across nodes: speedArrayIntra / Inter (before SM90),
 * sm90SpeedArrayIntra / Inter, sm100SpeedArrayIntra / Inter
 * (src/graph/search.cc); 0 ends a row */
static const double search_speeds_GBps[3][2][21] = {
  { { 40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0 },
    { 48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.4,
      1.2, 0.24, 0.12 } },
  { { 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0 },
    { 48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2,
      0.24, 0.12 } },
  { { 90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0 },
    { 96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0,
      3.0, 2.4, 1.2, 0.24, 0.12 } },
};

/* a ring graph holds at most MAXCHANNELS / 2 channels (src/init.cc) */
#define RING_GRAPH_MAX_CHANNELS 32

/* ---- the group: which node each rank is on ---- */

typedef struct {
  int n;
  int n_nodes;
  int per_node;        /* GPUs of the group in each node, 0 if they differ */
  int *node_start;     /* n_nodes + 1 offsets into by_node */
  int *by_node;        /* gpus grouped by node, in group order */
  int hw_intra;
  double intra_scale;  /* calibrated latency scale of the intra-node links */
  double inter_scale;  /* and of the fabric */
  int arch;            /* ARCH_*, -1 where the topology does not tell */
  int channels;        /* NCCL's ring graph channels (nccl_ring_channels), 0 unknown */
} Group;

/* a calibrated latency scale, 1 where none was measured */
static double
latency_scale (const SimNetwork *net, SimLinkKind kind)
{
  double s = sim_network_latency_scale (net, kind);
  return s > 0 ? s : 1.0;
}

static void
group_clear (Group *g)
{
  g_free (g->node_start);
  g_free (g->by_node);
}

static int nccl_ring_channels (const SimTopology *t, const Group *g);

static void
group_init (Group *g, SimNetwork *net, const int *gpus, int n)
{
  const SimTopology *t = sim_network_topology (net);
  /* bucket the GPUs by node in one pass: nodes in the order they first
   * appear, GPUs in their order within a node; a small group's nodes are
   * found by scanning those seen (a hash table costs more below ~32) */
  g_autoptr (GHashTable) slot = n > 32 ? g_hash_table_new (g_direct_hash, g_direct_equal) : NULL;
  int seen[32];
  g_autofree int *bucket = g_new (int, MAX (n, 1));
  g_autofree int *next = NULL;

  memset (g, 0, sizeof *g);
  g->n = n;
  for (int i = 0; i < n; i++) {
    int node = sim_topology_gpu (t, gpus[i])->node, k = -1;
    if (slot == NULL) {
      for (int j = g->n_nodes - 1; j >= 0 && k < 0; j--)
        if (seen[j] == node)
          k = j;
      if (k < 0)
        seen[k = g->n_nodes++] = node;
    } else {
      gpointer v = g_hash_table_lookup (slot, GINT_TO_POINTER (node + 1));
      if (v == NULL) {
        v = GINT_TO_POINTER (g->n_nodes + 1);
        g_hash_table_insert (slot, GINT_TO_POINTER (node + 1), v);
        g->n_nodes++;
      }
      k = GPOINTER_TO_INT (v) - 1;
    }
    bucket[i] = k;
  }
  g->node_start = g_new0 (int, g->n_nodes + 1);
  g->by_node = g_new (int, MAX (n, 1));
  for (int i = 0; i < n; i++)
    g->node_start[bucket[i] + 1]++;
  for (int k = 0; k < g->n_nodes; k++)
    g->node_start[k + 1] += g->node_start[k];
  next = g_memdup2 (g->node_start, sizeof (int) * (gsize) (g->n_nodes + 1));
  for (int i = 0; i < n; i++)
    g->by_node[next[bucket[i]]++] = gpus[i];
  g->per_node = g->node_start[1] - g->node_start[0];
  for (int k = 1; k < g->n_nodes; k++)
    if (g->node_start[k + 1] - g->node_start[k] != g->per_node)
      g->per_node = 0;
  g->hw_intra = sim_network_gpu_switch (net, gpus[0]) != NULL ? HW_NVLINK : HW_PCI;
  g->intra_scale = latency_scale (net, g->hw_intra == HW_NVLINK ? SIM_LINK_NVLINK : SIM_LINK_PCIE);
  /* a cluster's fabric is InfiniBand or Ethernet: whichever was calibrated */
  g->inter_scale = sim_network_latency_scale (net, SIM_LINK_INFINIBAND) > 0
                       ? sim_network_latency_scale (net, SIM_LINK_INFINIBAND)
                       : latency_scale (net, SIM_LINK_ETHERNET);
  g->arch = t->cluster.nvlink_generation >= 2 ? MIN (t->cluster.nvlink_generation - 2, ARCH_BLACKWELL)
                                              : -1;
  g->channels = g->hw_intra == HW_NVLINK ? nccl_ring_channels (t, g) : 0;
}

/* the channels of speed_GBps that fit: inside a node each channel crosses
 * every GPU's NVLink into the NVSwitch once each way; across nodes it
 * enters and leaves the node by one NIC, whose PCIe path and port carry
 * it, and crosses m - 1 of the m GPUs' NVLinks */
static int
channels_at (double speed_GBps, gboolean inter, int m, int nets, double nvl_GBps,
             double path_GBps)
{
  int ch = (int) floor (nvl_GBps / speed_GBps + 1e-6);
  if (inter) {
    ch = nets * (int) floor (path_GBps / speed_GBps + 1e-6);
    if (m > 1)
      ch = MIN (ch, (int) floor (nvl_GBps * m / ((m - 1) * speed_GBps) + 1e-6));
  }
  return MIN (ch, RING_GRAPH_MAX_CHANNELS);
}

/* The channels of NCCL's ring graph for the group, as its topology search
 * finds them (ncclTopoCompute, src/graph/search.cc at NVIDIA/nccl
 * 5067397c).  Pass one starts at the fastest speed the GPU's path allows
 * (maxBw: its NVLink inside a node, its NIC's PCIe path and port across
 * nodes) and keeps the most bandwidth, channels x speed, going down the
 * speeds until the channels are MAXCHANNELS / 2, or carry the GPU's total
 * (totalBw, the larger of its NVLink and PCIe), or the next speed is below
 * 0.49 of the best; ncclTopoDupChannels then doubles the channels at half
 * the speed where the speed is 25 GB/s or more, but not past Ampere below
 * 50 GB/s with more than 4 channels; pass two raises the speed while at
 * least as many channels fit.  NCCL's own figures for the links: the
 * NVLinks x SMxx_NVLINK_BW, a x16 PCIe link 16 lanes x kvDictPciGen's
 * 15 x 2^(generation - 1) x 100 Mb/s (src/graph/topo.cc), a NIC its line
 * rate.  0 where the topology does not give them. */
static int
nccl_ring_channels (const SimTopology *t, const Group *g)
{
  const SimClusterInfo *c = &t->cluster;
  gboolean inter = g->n_nodes > 1;
  int m = inter ? g->per_node : g->n, nets = 0, n_speeds = 0, i = 0, best_ch = 0;
  const double *speeds;
  double nvl, pci, path = 0, max_bw, total_bw, best_bw = 0;

  if (g->arch < 0 || m < 1 || !c->present || c->nvlink_links <= 0 || c->pcie_generation < 1 ||
      (inter && c->nics_per_node < 1))
    return 0;
  speeds = search_speeds_GBps[g->arch <= ARCH_AMPERE ? 0 : g->arch == ARCH_HOPPER ? 1 : 2][inter];
  while (n_speeds < (int) G_N_ELEMENTS (search_speeds_GBps[0][0]) && speeds[n_speeds] > 0)
    n_speeds++;
  nvl = c->nvlink_links * nvlink_link_GBps[g->arch];
  pci = 16.0 * 15.0 * (double) (1 << MIN (c->pcie_generation - 1, 8)) / 80.0;
  if (inter) {
    nets = MIN (m, c->nics_per_node);
    path = MIN (pci, c->nic_bw_bytes_per_s / 1e9);
  }
  max_bw = inter ? path : nvl;
  total_bw = MAX (nvl, pci);
  while (i + 1 < n_speeds && (speeds[i] > max_bw || speeds[i] > total_bw))
    i++;
  for (;;) {
    int ch = channels_at (speeds[i], inter, m, nets, nvl, path);
    if (ch * speeds[i] > best_ch * best_bw)
      best_ch = ch, best_bw = speeds[i];
    if (best_ch == RING_GRAPH_MAX_CHANNELS || best_ch * best_bw >= total_bw || i + 1 >= n_speeds ||
        (best_ch > 0 && speeds[i + 1] / best_bw <= .49))
      break;
    i++;
  }
  if (best_ch == 0)
    return 0;
  if (best_bw >= 25.0 && !(g->arch >= ARCH_HOPPER && best_bw < 50.0 && best_ch > 4)) {
    int dup = MIN (2 * best_ch, RING_GRAPH_MAX_CHANNELS);
    best_bw /= (dup + best_ch - 1) / best_ch;
    best_ch = dup;
  }
  for (i = n_speeds - 1; i >= 0; i--) {
    int ch = speeds[i] > best_bw ? channels_at (speeds[i], inter, m, nets, nvl, path) : 0;
    if (ch >= best_ch && ch * speeds[i] > best_ch * best_bw)
      best_ch = ch, best_bw = speeds[i];
  }
  return best_ch;
}

static int
log2i (int x)
{
  int l = 0;
  while (x > 1) {
    x >>= 1;
    l++;
  }
  return l;
}

/* all_to_all: the n-1 peers in batches of P2P_PER_BATCH, intra-node peers
 * first; a batch costs one p2p step as a send/recv does (hwLat, ring,
 * Simple), the network's when it holds a peer on another node */
static double
alltoall_latency_s (const Group *g)
{
  int peers = g->n - 1;
  /* the local peers of the largest node (every node, when all are equal) */
  int local = 0, batches, local_batches;
  double intra = hw_lat_us[g->hw_intra][A_RING][P_SIMPLE] * g->intra_scale;
  double inter = hw_lat_us[HW_NET][A_RING][P_SIMPLE] * g->inter_scale;

  for (int k = 0; k < g->n_nodes; k++)
    local = MAX (local, g->node_start[k + 1] - g->node_start[k] - 1);
  batches = (peers + P2P_PER_BATCH - 1) / P2P_PER_BATCH;
  local_batches = g->n_nodes > 1 ? local / P2P_PER_BATCH : batches;
  return (local_batches * intra + (batches - local_batches) * inter) * 1e-6;
}

static int
algo_index_of (SimAlgo a)
{
  return a == SIM_ALGO_TREE ? A_TREE : a == SIM_ALGO_NVLS ? A_NVLS : A_RING;
}

static int
proto_index (SimProto p)
{
  return p == SIM_PROTO_LL ? P_LL : p == SIM_PROTO_LL128 ? P_LL128 : P_SIMPLE;
}

static double
latency_s (const Group *g, SimCollOp op, SimAlgo algo, SimProto proto, double bytes)
{
  int a = algo_index_of (algo), p = proto_index (proto);
  int n = g->n, nn = g->n_nodes;
  double intra = hw_lat_us[g->hw_intra][a][p] * g->intra_scale;
  double inter = hw_lat_us[HW_NET][a][p] * g->inter_scale;
  double lat = base_lat_us[a][p];

  if (op == SIM_OP_ALLTOALL)
    return alltoall_latency_s (g);
  if (op == SIM_OP_SENDRECV)
    return (nn > 1 ? hw_lat_us[HW_NET][A_RING][P_SIMPLE] * g->inter_scale
                   : hw_lat_us[g->hw_intra][A_RING][P_SIMPLE] * g->intra_scale) * 1e-6;
  switch (algo) {
  case SIM_ALGO_HIER:
    return 0.0; /* each phase carries its own */
  case SIM_ALGO_TREE:
    lat += 2.0 * ((n / nn - 1) * intra + log2i (nn) * inter);
    break;
  case SIM_ALGO_NVLS:
    lat = nn > 1 ? intra + inter : NVLS_ONE_NODE_LAT_US;
    break;
  case SIM_ALGO_NVLS_TREE:
    lat = NVLS_ONE_NODE_LAT_US + 2.0 * log2i (nn) * NVLS_TREE_STEP_US * g->inter_scale;
    break;
  default: {
    int nsteps = op == SIM_OP_ALL_REDUCE ? 2 * (n - 1) : n - 1;
    /* NCCL 2.20 (b6475625) counts 2 x nodes network steps for an
     * all_reduce, nodes - 1 otherwise; with one GPU per node that exceeds
     * the 2(n-1) steps there are.  5067397c counts 2 (nodes - 1): that
     * takes the held-out two-node sweeps' 4-64 MiB rows further from the
     * measured (section 5 of tests/test-validation-nccl.c: H100 8.0 to
     * 9.9 %, B200 8.5 to 10.4 %, all too fast), so the older count stays */
    int ninter = MIN (nsteps, op == SIM_OP_ALL_REDUCE ? (nn > 1 ? 2 * nn : 0) : nn - 1);
    if (nn > 1)
      intra = MAX (intra, NET_OVERHEAD_US * (p == P_SIMPLE ? 3.0 : 1.0));
    lat += (nsteps - ninter) * intra + ninter * inter;
    if (op == SIM_OP_ALL_REDUCE && p == P_SIMPLE && nn > 1 && bytes / (MAX_CHANNELS * n) >= 64)
      lat *= RING_PLATEAU_FACTOR;
    break;
  }
  }
  return lat * 1e-6;
}

/* LL's ceiling for the group (ll_max_bw_GBps) */
static double
ll_max_bw_bytes_per_s (const Group *g)
{
  int nn_index = g->n_nodes <= 2 ? g->n_nodes - 1 : 2;
  int row = g->n_nodes == 1 && g->arch >= 0 ? g->arch : ARCH_AMPERE;
  return ll_max_bw_GBps[row][nn_index] * 1e9;
}

/* bytes on the wire per payload byte, and the payload ceiling per GPU */
static void
protocol_costs (const Group *g, SimCollOp op, SimAlgo algo, SimProto proto, double bytes,
                double *wire, double *cap_bytes_per_s)
{
  int nn_index = g->n_nodes <= 2 ? g->n_nodes - 1 : 2;
  double ppn = (double) g->n / g->n_nodes;
  *wire = 1.0;
  *cap_bytes_per_s = 0.0;
  if (algo == SIM_ALGO_RING) {
    if (proto == SIM_PROTO_LL) {
      *wire = 2.0;
      *cap_bytes_per_s = ll_max_bw_bytes_per_s (g);
    } else if (proto == SIM_PROTO_LL128) {
      *wire = 1.0 / (ppn < 2 ? 0.7 : 0.92);
      /* NCCL's busBw = min (busBw x 0.92, nChannels x perChMaxRingLL128Bw) */
      if (g->channels > 0)
        *cap_bytes_per_s = g->channels * per_ch_ring_ll128_GBps[g->arch][nn_index] * 1e9;
    }
  } else if (algo == SIM_ALGO_TREE) {
    double correction = 1.0;
    *wire = 1.0 / 0.92;
    if (proto == SIM_PROTO_LL) {
      *wire *= 3.8;
    } else if (proto == SIM_PROTO_LL128) {
      *wire *= g->n_nodes == 1 ? 9.0 / 7.0 : 128.0 / 120.0;
    }
    if (op == SIM_OP_ALL_REDUCE && bytes >= 64) {
      int log_size = 0;
      for (double x = bytes / 64; x >= 2; x /= 2)
        log_size++;
      if (log_size < (int) G_N_ELEMENTS (tree_correction[0]))
        correction = tree_correction[proto_index (proto)][log_size];
    }
    *wire /= correction;
    /* NCCL's tree busBw = min (busBw x 0.92, nChannels x perChMaxTreeBw),
     * with LL128 then min (that x 7/9 in a node or 120/128 across nodes,
     * nChannels x perChMaxTreeLL128Bw); half of it is the algorithm
     * bandwidth, and treeCorrectionFactor scales it */
    if (proto == SIM_PROTO_LL) {
      *cap_bytes_per_s = 0.5 * ll_max_bw_bytes_per_s (g) * correction;
    } else if (g->channels > 0) {
      double bus = g->channels * per_ch_tree_GBps[g->arch][nn_index];
      if (proto == SIM_PROTO_LL128)
        bus = MIN (bus * (g->n_nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                   g->channels * per_ch_tree_ll128_GBps[g->arch][nn_index]);
      *cap_bytes_per_s = 0.5 * bus * correction * 1e9;
    }
  }
}

/* sim_collective_supported on g, the group of gpus (group_init) */
static gboolean
supported (SimNetwork *net, const Group *g, SimCollOp op, const int *gpus, SimAlgo algo,
           SimProto proto)
{
  gboolean ok = TRUE;
  if (proto == SIM_PROTO_LL128 && g->hw_intra != HW_NVLINK)
    ok = FALSE; /* NCCL enables LL128 only over NVLink */
  /* LL and LL128 store a flag with every 8 or 128 bytes of data and the
   * receiver polls it, which is only sound where the network delivers a
   * message's bytes in order: over AWS EFA, whose SRD transport does not
   * promise it, the OFI plugin sets NCCL_PROTO=simple ("When byte delivery
   * ordering is not guaranteed, force the simple protocol as the LL/LL128
   * protocols can lead to data corruption", src/platform-aws.cpp at
   * aws/aws-ofi-nccl 2daf7d30; doc/efa-env-var.md there gives
   * NCCL_PROTO=simple for p4 and p5 with plugin versions to 1.5.0) */
  if (proto != SIM_PROTO_SIMPLE && g->n_nodes > 1 &&
      sim_network_topology (net)->cluster.nic_out_of_order)
    ok = FALSE;
  switch (algo) {
  case SIM_ALGO_RING:
    ok = ok && op != SIM_OP_SENDRECV;
    break;
  case SIM_ALGO_TREE:
    ok = ok && op == SIM_OP_ALL_REDUCE;
    break;
  case SIM_ALGO_HIER:
    ok = ok && op == SIM_OP_ALL_REDUCE && g->n_nodes > 1 && g->per_node > 1;
    break;
  case SIM_ALGO_NVLS: {
    const SimVertex *sw = sim_network_gpu_switch (net, gpus[0]);
    ok = ok && op == SIM_OP_ALL_REDUCE && proto == SIM_PROTO_SIMPLE && g->n_nodes == 1 &&
         sw != NULL && sw->sharp && sw->sharp_bw_bytes_per_s > 0;
    break;
  }
  case SIM_ALGO_NVLS_TREE:
    /* every node's switch reduces, and the nodes hold the group alike */
    ok = ok && op == SIM_OP_ALL_REDUCE && proto == SIM_PROTO_SIMPLE && g->n_nodes > 1 &&
         g->per_node > 1;
    for (int k = 0; ok && k < g->n_nodes; k++) {
      const SimVertex *sw = sim_network_gpu_switch (net, g->by_node[g->node_start[k]]);
      ok = sw != NULL && sw->sharp && sw->sharp_bw_bytes_per_s > 0;
    }
    break;
  case SIM_ALGO_AUTO:
    ok = FALSE;
    break;
  }
  return ok;
}

gboolean
sim_collective_supported (SimNetwork *net, SimCollOp op, const int *gpus, int n, SimAlgo algo,
                          SimProto proto)
{
  Group g;
  gboolean ok;

  if (n < 1 || (op == SIM_OP_SENDRECV && n != 2))
    return FALSE;
  /* NCCL's alltoall is grouped send/recv: one way to run it */
  if (op == SIM_OP_ALLTOALL)
    return algo == SIM_ALGO_RING && proto == SIM_PROTO_SIMPLE;
  group_init (&g, net, gpus, n);
  ok = supported (net, &g, op, gpus, algo, proto);
  group_clear (&g);
  return ok;
}

/* ---- building the flows ---- */

typedef struct {
  SimNetwork *net;
  SimEngine *e;
  SimActivityId start;
  GArray *flows; /* SimActivityId */
  guint32 tag;
} Builder;

static void
add_flow (Builder *b, int src, int dst, double bytes, double cap)
{
  const int *links = NULL;
  int hops = sim_network_route (b->net, src, dst, &links, NULL);
  SimActivityId f;
  if (hops < 0 || bytes <= 0)
    return;
  f = sim_engine_add_flow (b->e, links, hops, bytes, cap, 0, b->tag);
  sim_engine_add_dep (b->e, f, b->start);
  g_array_append_val (b->flows, f);
}

static void
add_switch_flow (Builder *b, int link, double bytes, double cap)
{
  SimActivityId f;
  if (link < 0)
    return;
  f = sim_engine_add_flow (b->e, &link, 1, bytes, cap, 0, b->tag);
  sim_engine_add_dep (b->e, f, b->start);
  g_array_append_val (b->flows, f);
}

/* the i-th GPU of the c-th ring within node k: rings enter each node on the
 * rail they leave the previous one by, so node k starts at local (c - k) */
static int
ring_gpu (const Group *g, int c, int k, int i)
{
  int m = g->per_node;
  int s = (((c - k) % m) + m) % m;
  return g->by_node[g->node_start[k] + (s + i) % m];
}

static void
build_ring (Builder *b, const Group *g, const int *gpus, SimCollOp op, double bytes,
            double wire, double cap)
{
  int n = g->n;
  double per_rank = op == SIM_OP_ALL_REDUCE ? 2.0 * (n - 1) / n * bytes
                    : op == SIM_OP_BROADCAST ? bytes
                                             : (double) (n - 1) / n * bytes;
  int rings = 1;

  if (g->n_nodes > 1 && g->per_node > 0) {
    const SimTopology *t = sim_network_topology (b->net);
    int nics = t->cluster.present ? t->cluster.nics_per_node : g->per_node;
    rings = MAX (1, MIN (g->per_node, nics));
  }
  if (op == SIM_OP_BROADCAST) {
    /* a pipeline from the root along the ring, no wrap-around */
    for (int i = 0; i + 1 < n; i++)
      add_flow (b, gpus[i], gpus[i + 1], per_rank * wire, cap > 0 ? cap * wire : 0);
    return;
  }
  if (g->n_nodes == 1 || g->per_node == 0) {
    for (int i = 0; i < n; i++)
      add_flow (b, gpus[i], gpus[(i + 1) % n], per_rank * wire, cap > 0 ? cap * wire : 0);
    return;
  }
  for (int c = 0; c < rings; c++)
    for (int k = 0; k < g->n_nodes; k++)
      for (int i = 0; i < g->per_node; i++) {
        int from = ring_gpu (g, c, k, i);
        int to = i + 1 < g->per_node ? ring_gpu (g, c, k, i + 1)
                                     : ring_gpu (g, c, (k + 1) % g->n_nodes, 0);
        add_flow (b, from, to, per_rank * wire / rings, cap > 0 ? cap * wire / rings : 0);
      }
}

static void
build_tree (Builder *b, const Group *g, double bytes, double wire, double cap)
{
  int nn = g->n_nodes;
  double d = bytes / 2.0 * wire; /* each of the two trees carries half */
  double fc = cap > 0 ? cap * wire / 2.0 : 0;
  for (int t = 0; t < 2; t++) {
    for (int k = 0; k < nn; k++) {
      int m = g->node_start[k + 1] - g->node_start[k];
      int rot = t * m / 2;
      for (int j = 1; j < m; j++) {
        int up = g->by_node[g->node_start[k] + (rot + j) % m];
        int down = g->by_node[g->node_start[k] + (rot + j - 1) % m];
        add_flow (b, up, down, d, fc);
        add_flow (b, down, up, d, fc);
      }
    }
    /* double binary tree over nodes: tree 1 is tree 0 mirrored */
    for (int k = 1; k < nn; k++) {
      int child = t == 0 ? k : nn - 1 - k;
      int parent = t == 0 ? (k - 1) / 2 : nn - 1 - (k - 1) / 2;
      int mc = g->node_start[child + 1] - g->node_start[child];
      int mp = g->node_start[parent + 1] - g->node_start[parent];
      int lc = g->by_node[g->node_start[child] + (t * mc / 2) % mc];
      int lp = g->by_node[g->node_start[parent] + (t * mp / 2) % mp];
      add_flow (b, lc, lp, d, fc);
      add_flow (b, lp, lc, d, fc);
    }
  }
}

/* each GPU sends bytes into its switch and receives bytes, at most at
 * `efficiency` of the switch's in-network reduction rate */
static void
build_nvls (Builder *b, const Group *g, double bytes, double efficiency)
{
  for (int i = 0; i < g->n; i++) {
    const SimVertex *sw = sim_network_gpu_switch (b->net, g->by_node[i]);
    double cap = sw->sharp_bw_bytes_per_s * efficiency;
    add_switch_flow (b, sim_network_gpu_to_switch (b->net, g->by_node[i]), bytes, cap);
    add_switch_flow (b, sim_network_switch_to_gpu (b->net, g->by_node[i]), bytes, cap);
  }
}

/* NVLS inside every node, and on each rail r the nodes' r-th GPUs in a
 * double binary tree (tree 1 is tree 0 mirrored, as build_tree), each tree
 * carrying half of the GPU's 1/m shard up and down */
static void
build_nvls_tree (Builder *b, const Group *g, double bytes)
{
  int m = g->per_node, nn = g->n_nodes;
  double half = bytes / m / 2.0;
  build_nvls (b, g, bytes, NVLS_TREE_EFFICIENCY);
  for (int r = 0; r < m; r++)
    for (int t = 0; t < 2; t++)
      for (int k = 1; k < nn; k++) {
        int child = t == 0 ? k : nn - 1 - k;
        int parent = t == 0 ? (k - 1) / 2 : nn - 1 - (k - 1) / 2;
        int c = g->by_node[g->node_start[child] + r], p = g->by_node[g->node_start[parent] + r];
        add_flow (b, c, p, half, 0);
        add_flow (b, p, c, half, 0);
      }
}

/* the GPU of src's node on dst's rail: NCCL's PXN sends inter-node data
 * over NVLink to that GPU, whose NIC is on the destination's rail; -1 when
 * the topology does not describe rails (one NIC per GPU, rail-optimised) */
static int
pxn_peer (Builder *b, int src, int dst)
{
  const SimTopology *t = sim_network_topology (b->net);
  int m = t->gpus_per_node, peer;
  if (!t->cluster.present || !t->cluster.rail_optimized || m <= 0 ||
      t->cluster.nics_per_node != m)
    return -1;
  peer = src / m * m + dst % m;
  if (peer == src || peer >= sim_topology_n_gpus (t) ||
      sim_topology_gpu (t, peer)->node != sim_topology_gpu (t, src)->node)
    return -1;
  return peer;
}

/* one flow from src over NVLink to its PXN peer, then on to dst */
static void
add_pxn_flow (Builder *b, int src, int peer, int dst, double bytes)
{
  const int *links = NULL;
  int first = sim_network_route (b->net, src, peer, &links, NULL);
  g_autofree int *path = NULL;
  int second;
  SimActivityId f;

  if (first < 0)
    return;
  /* copy before the second route, which may move the route table */
  path = g_new (int, first);
  memcpy (path, links, sizeof (int) * (gsize) first);
  second = sim_network_route (b->net, peer, dst, &links, NULL);
  if (second < 0)
    return;
  path = g_renew (int, path, first + second);
  memcpy (path + first, links, sizeof (int) * (gsize) second);
  f = sim_engine_add_flow (b->e, path, first + second, bytes, 0, 0, b->tag);
  sim_engine_add_dep (b->e, f, b->start);
  g_array_append_val (b->flows, f);
}

/* every rank sends bytes/n to every other at once, as NCCL's grouped
 * ncclSend/ncclRecv; inter-node pieces through the PXN peer where rails
 * are known */
static void
build_alltoall (Builder *b, const int *gpus, int n, double bytes)
{
  const SimTopology *t = sim_network_topology (b->net);
  double piece = bytes / n; /* on the wire: piece / P2P_EFFICIENCY */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      int peer;
      if (i == j)
        continue;
      peer = sim_topology_gpu (t, gpus[i])->node != sim_topology_gpu (t, gpus[j])->node
                 ? pxn_peer (b, gpus[i], gpus[j])
                 : -1;
      if (peer >= 0)
        add_pxn_flow (b, gpus[i], peer, gpus[j], piece / P2P_EFFICIENCY);
      else
        add_flow (b, gpus[i], gpus[j], piece / P2P_EFFICIENCY, 0);
    }
}

static SimActivityId add_phase (SimNetwork *net, SimCollOp op, const int *gpus, int n,
                                double bytes, SimProto proto, guint32 tag, SimActivityId after);

/* reduce_scatter in each node, all_reduce across nodes per local rank on
 * 1/m of the data, all_gather in each node: phases joined by their ends */
static void
build_hier (Builder *b, const Group *g, double bytes, SimProto proto)
{
  int m = g->per_node, nn = g->n_nodes;
  g_autofree int *rail = g_new (int, nn);
  SimActivityId rs_join = sim_engine_add_delay (b->e, 0, b->tag);
  SimActivityId ar_join = sim_engine_add_delay (b->e, 0, b->tag);

  for (int k = 0; k < nn; k++) {
    SimActivityId end = add_phase (b->net, SIM_OP_REDUCE_SCATTER, g->by_node + g->node_start[k], m,
                                   bytes, proto, b->tag, b->start);
    sim_engine_add_dep (b->e, rs_join, end);
  }
  for (int r = 0; r < m; r++) {
    SimActivityId end;
    for (int k = 0; k < nn; k++)
      rail[k] = g->by_node[g->node_start[k] + r];
    end = add_phase (b->net, SIM_OP_ALL_REDUCE, rail, nn, bytes / m, proto, b->tag, rs_join);
    sim_engine_add_dep (b->e, ar_join, end);
  }
  for (int k = 0; k < nn; k++) {
    SimActivityId end = add_phase (b->net, SIM_OP_ALL_GATHER, g->by_node + g->node_start[k], m,
                                   bytes, proto, b->tag, ar_join);
    g_array_append_val (b->flows, end);
  }
}

/* sim_collective_add, with the group of gpus when the caller has it
 * (group_init on any network of the same topology; NULL: made here) */
static SimActivityId
collective_add (SimNetwork *net, SimCollOp op, const int *gpus, int n, double bytes,
                const SimCollChoice *choice, guint32 tag, SimActivityId *start, const Group *given)
{
  SimEngine *e = sim_network_engine (net);
  Builder b = { net, e, 0, g_array_new (FALSE, FALSE, sizeof (SimActivityId)), tag };
  SimActivityId join;
  double wire = 1.0, cap = 0.0;
  Group g;

  b.start = sim_engine_add_delay (e, sim_time_from_s (choice->latency_s), tag);
  if (op == SIM_OP_SENDRECV) {
    /* one flow per pair at the links' rate: no group, no protocol
     * overhead */
    for (int i = 0; i + 1 < n; i += 2)
      add_flow (&b, gpus[i], gpus[i + 1], bytes, 0);
  } else if (op == SIM_OP_ALLTOALL) {
    build_alltoall (&b, gpus, n, bytes);
  } else if (n > 1) {
    const Group *gp = given;
    if (gp == NULL) {
      group_init (&g, net, gpus, n);
      gp = &g;
    }
    protocol_costs (gp, op, choice->algo, choice->proto, bytes, &wire, &cap);
    if (choice->algo == SIM_ALGO_TREE)
      build_tree (&b, gp, bytes, wire, cap);
    else if (choice->algo == SIM_ALGO_NVLS)
      build_nvls (&b, gp, bytes, 1.0);
    else if (choice->algo == SIM_ALGO_NVLS_TREE)
      build_nvls_tree (&b, gp, bytes);
    else if (choice->algo == SIM_ALGO_HIER)
      build_hier (&b, gp, bytes, choice->proto);
    else
      build_ring (&b, gp, gpus, op, bytes, wire, cap);
    if (given == NULL)
      group_clear (&g);
  }
  join = sim_engine_add_delay (e, 0, tag);
  sim_engine_add_dep (e, join, b.start);
  for (guint i = 0; i < b.flows->len; i++)
    sim_engine_add_dep (e, join, g_array_index (b.flows, SimActivityId, i));
  g_array_unref (b.flows);
  if (start != NULL)
    *start = b.start;
  return join;
}

SimActivityId
sim_collective_add (SimNetwork *net, SimCollOp op, const int *gpus, int n, double bytes,
                    const SimCollChoice *choice, guint32 tag, SimActivityId *start)
{
  return collective_add (net, op, gpus, n, bytes, choice, tag, start, NULL);
}

/* one ring phase of a composite algorithm, after `after` */
static SimActivityId
add_phase (SimNetwork *net, SimCollOp op, const int *gpus, int n, double bytes, SimProto proto,
           guint32 tag, SimActivityId after)
{
  Group g;
  SimCollChoice c = { SIM_ALGO_RING, proto, 0, 0, SIM_TIME_MAX };
  SimActivityId start, end;
  group_init (&g, net, gpus, n);
  c.latency_s = latency_s (&g, op, SIM_ALGO_RING, proto, bytes);
  group_clear (&g);
  end = sim_collective_add (net, op, gpus, n, bytes, &c, tag, &start);
  sim_engine_add_dep (sim_network_engine (net), start, after);
  return end;
}

static int
int_cmp (gconstpointer pa, gconstpointer pb)
{
  int x = *(const int *) pa, y = *(const int *) pb;
  return (x > y) - (x < y);
}

/* sim_collective_alone with the group when the caller has it */
static SimTime
alone_on (SimNetwork *net, SimCollOp op, const int *gpus, int n, double bytes,
          const SimCollChoice *choice, GArray *links, const Group *g, guint32 *activities,
          SimTime known)
{
  SimNetwork *idle = sim_network_idle (net);
  SimEngine *e = sim_network_engine (idle);
  SimActivityId end = collective_add (idle, op, gpus, n, bytes, choice, 0, NULL, g);
  if (activities != NULL)
    *activities = sim_engine_n_activities (e);
  /* the links of its flows, from the flows (the network may have many
   * more links than a collective crosses), with the group's, sorted and
   * each once */
  if (links != NULL) {
    sim_engine_flow_links (e, links);
    g_array_sort (links, int_cmp);
    if (links->len > 1) {
      int *l = (int *) (void *) links->data;
      guint kept = 1;
      for (guint i = 1; i < links->len; i++)
        if (l[i] != l[kept - 1])
          l[kept++] = l[i];
      g_array_set_size (links, kept);
    }
  }
  if (known != SIM_TIME_MAX)
    return known;
  if (!sim_engine_run (e, NULL))
    return SIM_TIME_MAX;
  return sim_engine_end (e, end);
}

SimTime
sim_collective_alone (SimNetwork *net, SimCollOp op, const int *gpus, int n, double bytes,
                      const SimCollChoice *choice, GArray *links)
{
  return alone_on (net, op, gpus, n, bytes, choice, links, NULL, NULL, SIM_TIME_MAX);
}

SimTime
sim_collective_alone_counted (SimNetwork *net, SimCollOp op, const int *gpus, int n, double bytes,
                              const SimCollChoice *choice, GArray *links, guint32 *activities)
{
  return alone_on (net, op, gpus, n, bytes, choice, links, NULL, activities, SIM_TIME_MAX);
}

SimTime
sim_collective_alone_chosen (SimNetwork *net, SimCollOp op, const int *gpus, int n, double bytes,
                             const SimCollChoice *choice, GArray *links, guint32 *activities)
{
  g_return_val_if_fail (choice->alone_t != SIM_TIME_MAX, SIM_TIME_MAX);
  return alone_on (net, op, gpus, n, bytes, choice, links, NULL, activities, choice->alone_t);
}

/* the collective alone on an idle copy of the network, into
 * choice->alone_t and (seconds) ->predicted_s */
static void
simulate_alone (SimNetwork *net, SimCollOp op, const int *gpus, int n, double bytes,
                SimCollChoice *choice, const Group *g)
{
  SimTime t = alone_on (net, op, gpus, n, bytes, choice, NULL, g, NULL, SIM_TIME_MAX);
  choice->alone_t = t;
  choice->predicted_s = t == SIM_TIME_MAX ? G_MAXDOUBLE : sim_time_to_s (t);
}

/* A lower bound on the time of a candidate with LL, whose every flow is
 * capped (protocol_costs): a ring's flows each carry per_rank x wire bytes
 * (over `rings`) at most at cap x wire (over `rings`), a tree's bytes / 2 x
 * wire at most at cap x wire / 2, so none ends before per_rank / cap
 * (bytes / cap for a tree) after the start; 0 where no bound is known */
static double
ll_floor_s (const Group *g, SimCollOp op, SimAlgo algo, SimProto proto, int n, double bytes)
{
  double wire, cap;
  if (proto != SIM_PROTO_LL || n < 2 || bytes <= 0)
    return 0;
  protocol_costs (g, op, algo, proto, bytes, &wire, &cap);
  if (cap <= 0)
    return 0;
  if (algo == SIM_ALGO_TREE)
    return bytes / cap;
  if (algo != SIM_ALGO_RING)
    return 0;
  return (op == SIM_OP_ALL_REDUCE ? 2.0 * (n - 1) / n * bytes
          : op == SIM_OP_BROADCAST ? bytes
                                   : (double) (n - 1) / n * bytes) / cap;
}

gboolean
sim_collective_choose (SimNetwork *net, SimCollOp op, const int *gpus, int n, double bytes,
                       SimAlgo algo, SimProto proto, SimCollChoice *out, GError **error)
{
  static const SimAlgo algos[] = { SIM_ALGO_RING, SIM_ALGO_TREE, SIM_ALGO_HIER, SIM_ALGO_NVLS,
                                   SIM_ALGO_NVLS_TREE };
  static const SimProto protos[] = { SIM_PROTO_LL, SIM_PROTO_LL128, SIM_PROTO_SIMPLE };
  SimCollChoice cand[G_N_ELEMENTS (algos) * G_N_ELEMENTS (protos)];
  double floor_s[G_N_ELEMENTS (cand)];
  gboolean found = FALSE;
  double best = G_MAXDOUBLE;
  int nc = 0;
  Group g;

  group_init (&g, net, gpus, n);
  for (guint i = 0; i < G_N_ELEMENTS (algos); i++) {
    if (algo != SIM_ALGO_AUTO && algo != algos[i])
      continue;
    /* NCCL's tuner chooses among its own algorithms: hier (sim's three
     * phases) only when asked for */
    if (algo == SIM_ALGO_AUTO && algos[i] == SIM_ALGO_HIER)
      continue;
    for (guint j = 0; j < G_N_ELEMENTS (protos); j++) {
      SimCollChoice c = { algos[i], protos[j], 0, 0, SIM_TIME_MAX };
      /* point-to-point operations run Simple whatever was asked */
      SimProto want = op == SIM_OP_SENDRECV || op == SIM_OP_ALLTOALL ? SIM_PROTO_SIMPLE : proto;
      if (want != SIM_PROTO_AUTO && want != protos[j])
        continue;
      if (op == SIM_OP_SENDRECV ? algos[i] != SIM_ALGO_RING
          : op == SIM_OP_ALLTOALL   ? algos[i] != SIM_ALGO_RING || protos[j] != SIM_PROTO_SIMPLE
          : n < 1                   ? TRUE
                                    : !supported (net, &g, op, gpus, algos[i], protos[j]))
        continue;
      c.latency_s = latency_s (&g, op, c.algo, c.proto, bytes);
      floor_s[nc] = c.latency_s + ll_floor_s (&g, op, c.algo, c.proto, n, bytes);
      cand[nc++] = c;
    }
  }
  /* every candidate simulated alone, but those whose floor is above the
   * fastest of the others (LL on large messages): simulated last, and
   * skipped where they could not be the fastest, nor tie with it (a
   * relative margin of 1e-9 for the picoseconds the engine rounds to) */
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < nc; i++) {
      gboolean floored = floor_s[i] > cand[i].latency_s;
      if (floored != (pass == 1))
        continue;
      if (floored && floor_s[i] * (1.0 - 1e-9) > best) {
        cand[i].predicted_s = G_MAXDOUBLE;
        continue;
      }
      simulate_alone (net, op, gpus, n, bytes, &cand[i], &g);
      best = MIN (best, cand[i].predicted_s);
    }
  /* the fastest, the first of equals in the order above */
  for (int i = 0; i < nc; i++)
    if (!found || cand[i].predicted_s < out->predicted_s) {
      *out = cand[i];
      found = TRUE;
    }
  group_clear (&g);
  if (!found) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "algorithm %s%s%s: expected one this group supports (%s over %d GPU%s; tree is all_reduce only, hier all_reduce over several nodes, nvls needs one node with an NVLink SHARP switch, nvlstree several such nodes)",
                 sim_algo_name (algo), proto != SIM_PROTO_AUTO ? "/" : "",
                 proto != SIM_PROTO_AUTO ? sim_proto_name (proto) : "", sim_coll_op_name (op), n,
                 n == 1 ? "" : "s");
    return FALSE;
  }
  return TRUE;
}

/* the index of name in names[0..n), or -1 */
static int
name_index (const char *const *names, guint n, const char *name)
{
  for (guint i = 0; i < n; i++)
    if (g_str_equal (name, names[i]))
      return (int) i;
  return -1;
}

static const char *algo_names[] = { "auto", "ring", "tree", "nvls", "hier", "nvlstree" };

const char *
sim_algo_name (SimAlgo a)
{
  return algo_names[a];
}

gboolean
sim_algo_parse (const char *name, SimAlgo *out)
{
  int i = name_index (algo_names, G_N_ELEMENTS (algo_names), name);
  if (i >= 0)
    *out = (SimAlgo) i;
  return i >= 0;
}

const char *
sim_proto_name (SimProto p)
{
  static const char *names[] = { "auto", "LL", "LL128", "Simple" };
  return names[p];
}

char *
sim_collective_nccl_log_line (SimCollOp op, int n, double bytes, const SimCollChoice *choice)
{
  /* ncclFuncToString, ncclAlgoToString, ncclProtoToString (collectives.cc) */
  static const char *algos[] = { NULL, "RING", "TREE", "NVLS", NULL, "NVLS_TREE" };
  static const char *protos[] = { NULL, "LL", "LL128", "SIMPLE" };
  const char *func = op == SIM_OP_ALL_REDUCE       ? "AllReduce"
                     : op == SIM_OP_ALL_GATHER     ? "AllGather"
                     : op == SIM_OP_REDUCE_SCATTER ? "ReduceScatter"
                     : op == SIM_OP_BROADCAST      ? "Broadcast"
                                                   : NULL;
  double count_bytes = op == SIM_OP_ALL_GATHER || op == SIM_OP_REDUCE_SCATTER ? bytes / MAX (n, 1) : bytes;
  if (func == NULL || algos[choice->algo] == NULL || protos[choice->proto] == NULL)
    return NULL;
  return g_strdup_printf ("%s: %.0f Bytes -> Algo %s proto %s", func, count_bytes, algos[choice->algo],
                          protos[choice->proto]);
}
