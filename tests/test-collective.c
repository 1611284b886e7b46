/* tests for sim-collective: hand-derived ring, contention, rails, NVLS */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "sim-collective.h"
#include "sim-error.h"
#include "test-util.h"

/* one collective on an idle network, or two at once */
static double
run (const SimTopology *t, SimCollOp op, const int *gpus, int n, double bytes, SimAlgo algo,
     SimProto proto, int copies)
{
  g_autoptr (SimEngine) e = sim_engine_new ();
  g_autoptr (SimNetwork) net = sim_network_new (t, e);
  g_autoptr (GError) error = NULL;
  SimCollChoice c;
  SimActivityId end = 0;
  g_assert_true (sim_collective_choose (net, op, gpus, n, bytes, algo, proto, &c, &error));
  g_assert_no_error (error);
  for (int k = 0; k < copies; k++)
    end = sim_collective_add (net, op, gpus, n, bytes, &c, 0, NULL);
  g_assert_true (sim_engine_run (e, &error));
  return sim_time_to_s (sim_engine_end (e, end));
}

/* routes: breadth-first shortest paths where GPUs do not forward.  On
 * example-graph.xml, GPU 0 to GPU 1 of node 0 is gpu -> NVSwitch -> gpu
 * (2 hops); GPU 0 of node 0 to GPU 0 of node 1 is gpu -> NIC -> leaf ->
 * NIC -> gpu (4 hops, the rail); with a direct link added after the others
 * in the file, GPU 0 to GPU 1 takes it (1 hop) although the NVSwitch comes
 * first in GPU 0's links, which the routing's early stop must not take. */
static void
test_routes (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("example-graph.xml", 0);
  g_autoptr (SimEngine) e = sim_engine_new ();
  g_autoptr (SimNetwork) net = sim_network_new (t, e);
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree char *path = NULL;
  g_autofree char *dir = g_dir_make_tmp ("sim-route-XXXXXX", &error);
  const char *last;
  g_assert_no_error (error);
  g_assert_cmpint (sim_network_route (net, 0, 1, NULL, NULL), ==, 2);
  g_assert_cmpint (sim_network_route (net, 0, 2, NULL, NULL), ==, 4);

  g_assert_true (g_file_get_contents (SIM_SOURCE_DIR "/topologies/example-graph.xml", &text, NULL, &error));
  last = g_strrstr (text, "<link ");
  g_assert_nonnull (last);
  last = strchr (last, '\n');
  {
    g_autofree char *head = g_strndup (text, (gsize) (last + 1 - text));
    g_autofree char *direct = g_strconcat (head, "    <link a=\"n0-gpu0\" b=\"n0-gpu1\" kind=\"nvlink\" "
                                                "bandwidth=\"100GB/s\" latency=\"100ns\"/>\n", last + 1, NULL);
    path = g_build_filename (dir, "direct.xml", NULL);
    g_assert_true (g_file_set_contents (path, direct, -1, &error));
  }
  {
    g_autoptr (SimTopology) td = sim_topology_load (path, 0, &error);
    g_autoptr (SimEngine) ed = sim_engine_new ();
    g_autoptr (SimNetwork) nd = NULL;
    g_assert_no_error (error);
    nd = sim_network_new (td, ed);
    g_assert_cmpint (sim_network_route (nd, 0, 1, NULL, NULL), ==, 1);
    g_assert_cmpint (sim_network_route (nd, 1, 0, NULL, NULL), ==, 1);
    g_assert_cmpint (sim_network_route (nd, 0, 2, NULL, NULL), ==, 4);
  }
  g_unlink (path);
  g_rmdir (dir);

  /* dgx8x4's rail-optimised fat tree, the search's chain (gpu -> its NIC ->
   * its leaf) and its early stop at the first spine: GPU 0 to GPU 8 (node
   * 1, the same rail) is gpu -> NIC -> leaf -> NIC -> gpu, 4 hops; GPU 0 to
   * GPU 9 (node 1, another rail) goes up to a spine, 6 hops; both ways the
   * same length */
  {
    g_autoptr (SimTopology) tf = test_load_topology ("dgx8x4.xml", 4);
    g_autoptr (SimEngine) ef = sim_engine_new ();
    g_autoptr (SimNetwork) nf = sim_network_new (tf, ef);
    g_assert_cmpint (sim_network_route (nf, 0, 8, NULL, NULL), ==, 4);
    g_assert_cmpint (sim_network_route (nf, 8, 0, NULL, NULL), ==, 4);
    g_assert_cmpint (sim_network_route (nf, 0, 9, NULL, NULL), ==, 6);
    g_assert_cmpint (sim_network_route (nf, 9, 0, NULL, NULL), ==, 6);
    g_assert_cmpint (sim_network_route (nf, 0, 1, NULL, NULL), ==, 2);
  }
}

/* ring all_reduce of S on 8 GPUs behind one NVSwitch, whose links move
 * 370.8 GB/s per direction with NCCL's Simple protocol (dgx8x4.xml
 * achieved-bandwidth): every rank sends 2(n-1)/n * S = 1.75 S through its
 * own link, so t = 1.75 S / 370.8 GB/s + latency, with NCCL's Simple ring
 * latency 8.4 + 14 steps x 3.4 = 56 us.  S = 1 GiB: 5067.4 us + 56 us. */
static void
test_ring_formula (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  int g[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  double s = 1073741824.0;
  double want = 1.75 * s / 370.8e9 + 56e-6;
  double got = run (t, SIM_OP_ALL_REDUCE, g, 8, s, SIM_ALGO_RING, SIM_PROTO_SIMPLE, 1);
  g_assert_cmpfloat_with_epsilon (got, want, 1e-9);
  /* all_gather moves (n-1)/n S with n - 1 = 7 steps: 8.4 + 7 x 3.4 = 32.2 us */
  got = run (t, SIM_OP_ALL_GATHER, g, 8, s, SIM_ALGO_RING, SIM_PROTO_SIMPLE, 1);
  g_assert_cmpfloat_with_epsilon (got, 0.875 * s / 370.8e9 + 32.2e-6, 1e-9);
}

/* two all_reduces at once on the same GPUs share every link: each sees
 * half the bandwidth, so the transfer takes twice as long */
static void
test_contention (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  int g[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  double s = 1073741824.0;
  double got = run (t, SIM_OP_ALL_REDUCE, g, 8, s, SIM_ALGO_RING, SIM_PROTO_SIMPLE, 2);
  g_assert_cmpfloat_with_epsilon (got, 2 * 1.75 * s / 370.8e9 + 56e-6, 1e-9);
}

/* 16 GPUs on 2 DGX H100 nodes: 8 rings, one per rail, so each NIC carries
 * 1/8 of the 2(n-1)/n S every rank sends; 400 Gb/s = 50 GB/s per NIC is
 * the bottleneck (NVLink, 7/8 of it at 370.8 GB/s, and PCIe are faster), so the bus bandwidth is
 * 8 x 50 = 400 GB/s, not one NIC's 50.  Latency: (8.4 + (30 - 4) x
 * max(3.4, 3 x 1.0) + 4 x 14.0) x 1.4 = 213.92 us (ring, Simple, 2 nodes;
 * x 1.4 NCCL's ring plateau: 4 GiB / (32 channels x 16 ranks) >= 64 B). */
static void
test_rails (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 2);
  int g[16];
  double s = 4294967296.0;
  double got = 0, busbw = 0;
  for (int i = 0; i < 16; i++)
    g[i] = i;
  got = run (t, SIM_OP_ALL_REDUCE, g, 16, s, SIM_ALGO_RING, SIM_PROTO_SIMPLE, 1);
  g_assert_cmpfloat_with_epsilon (got, 2.0 * 15 / 16 * s / 400e9 + 213.92e-6, 1e-9);
  busbw = s * 2.0 * 15 / 16 / (got - 213.92e-6) / 1e9;
  g_assert_cmpfloat_with_epsilon (busbw, 400.0, 0.01);
}

/* hier on 2 nodes x 8: reduce_scatter in each node (7/8 S at 370.8 GB/s,
 * 8.4 + 7 x 3.4 = 32.2 us), all_reduce of S/8 between the 2 nodes on each
 * rail (2(2-1)/2 x S/8 through one 50 GB/s NIC, (8.4 + 2 x 14) x 1.4 =
 * 50.96 us with NCCL's ring plateau),
 * all_gather in each node (as the reduce_scatter), one after the other */
static void
test_hier (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 2);
  int g[16];
  double s = 1073741824.0, want = 0;
  for (int i = 0; i < 16; i++)
    g[i] = i;
  want = 2 * (0.875 * s / 370.8e9 + 32.2e-6) + s / 8 / 50e9 + 50.96e-6;
  g_assert_cmpfloat_with_epsilon (run (t, SIM_OP_ALL_REDUCE, g, 16, s, SIM_ALGO_HIER, SIM_PROTO_SIMPLE, 1),
                                  want, 1e-9);
}

/* NVLS: each GPU sends S to the switch and gets S back, at most at the
 * switch's 274 GB/s (dgx8x4.xml, from NVIDIA's 480 GB/s busbw), after the
 * measured 95.6 us (NVLS_ONE_NODE_LAT_US); auto takes it for a 1 GiB
 * all_reduce: ring Simple would need 56 + 5067.4 us, NVLS 95.6 + 3918.7 */
static void
test_nvls (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  int g[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  double s = 1073741824.0;
  double got = run (t, SIM_OP_ALL_REDUCE, g, 8, s, SIM_ALGO_NVLS, SIM_PROTO_AUTO, 1);
  g_assert_cmpfloat_with_epsilon (got, s / 274e9 + 95.6e-6, 1e-9);
  got = run (t, SIM_OP_ALL_REDUCE, g, 8, s, SIM_ALGO_AUTO, SIM_PROTO_AUTO, 1);
  g_assert_cmpfloat_with_epsilon (got, s / 274e9 + 95.6e-6, 1e-9);
}

/* NVLSTree on 2 DGX H100 nodes (dgx8x4.xml), 1 GiB: NVLS in each node at
 * 0.935 x 274 GB/s = 256.19 GB/s (4.1912 ms for S), and each GPU's S/8 =
 * 134.2 MB to the other node's GPU of its rail over a 50 GB/s NIC and back
 * (2.68 ms each way, at once): the switch binds.  Latency 95.6 + 2 x
 * log2(2) x 55.4 = 206.4 us.  auto takes it: the ring needs 213.92 us +
 * 2 x 15/16 x S / 400 GB/s = 5.25 ms.  On 4 nodes the double binary tree
 * has two levels: 95.6 + 4 x 55.4 = 317.2 us, and node 0's NIC carries
 * three halves of a shard each way (down to nodes 1 and 2 in tree 0, up to
 * node 2 in tree 1): 1.5 x 134.2 MB / 50 GB/s = 4.027 ms, still below the
 * switch's 4.1912 ms.  At 4 GiB on 4 nodes the NIC's 16.106 ms is still
 * under the switch's 16.765 ms: the time is the switch's, exactly 4 times
 * 1 GiB's bandwidth part. */
static void
test_nvls_tree (void)
{
  g_autoptr (SimTopology) t2 = test_load_topology ("dgx8x4.xml", 2);
  g_autoptr (SimTopology) t4 = test_load_topology ("dgx8x4.xml", 4);
  int g[32];
  double s = 1073741824.0, rate = 0.935 * 274e9;
  for (int i = 0; i < 32; i++)
    g[i] = i;
  g_assert_cmpfloat_with_epsilon (run (t2, SIM_OP_ALL_REDUCE, g, 16, s, SIM_ALGO_NVLS_TREE, SIM_PROTO_AUTO, 1),
                                  s / rate + 206.4e-6, 1e-9);
  g_assert_cmpfloat_with_epsilon (run (t2, SIM_OP_ALL_REDUCE, g, 16, s, SIM_ALGO_AUTO, SIM_PROTO_AUTO, 1),
                                  s / rate + 206.4e-6, 1e-9);
  g_assert_cmpfloat_with_epsilon (run (t4, SIM_OP_ALL_REDUCE, g, 32, s, SIM_ALGO_NVLS_TREE, SIM_PROTO_AUTO, 1),
                                  s / rate + 317.2e-6, 1e-9);
  g_assert_cmpfloat_with_epsilon (run (t4, SIM_OP_ALL_REDUCE, g, 32, 4 * s, SIM_ALGO_NVLS_TREE, SIM_PROTO_AUTO, 1),
                                  4 * s / rate + 317.2e-6, 1e-9);
  /* not on one node (nvls is), nor for all_gather */
  {
    g_autoptr (SimEngine) e = sim_engine_new ();
    g_autoptr (SimNetwork) net = sim_network_new (t2, e);
    g_assert_false (sim_collective_supported (net, SIM_OP_ALL_REDUCE, g, 8, SIM_ALGO_NVLS_TREE, SIM_PROTO_SIMPLE));
    g_assert_false (sim_collective_supported (net, SIM_OP_ALL_GATHER, g, 16, SIM_ALGO_NVLS_TREE, SIM_PROTO_SIMPLE));
    g_assert_true (sim_collective_supported (net, SIM_OP_ALL_REDUCE, g, 16, SIM_ALGO_NVLS_TREE, SIM_PROTO_SIMPLE));
  }
}

/* NCCL's tree correction at medium sizes: the tree's bandwidth times 0.5
 * at 1 MiB (log2(2^20 / 64) = 14) and 0.6 at 2 MiB (Simple row of
 * treeCorrectionFactor), the latency the same for both, so the times less
 * the latency stand as 1 : 2 x 0.5 / 0.6 */
static void
test_tree_correction (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 2);
  g_autoptr (SimEngine) e = sim_engine_new ();
  g_autoptr (SimNetwork) net = sim_network_new (t, e);
  g_autoptr (GError) error = NULL;
  SimCollChoice c1, c2;
  int g[16];
  for (int i = 0; i < 16; i++)
    g[i] = i;
  g_assert_true (sim_collective_choose (net, SIM_OP_ALL_REDUCE, g, 16, 1048576.0, SIM_ALGO_TREE,
                                        SIM_PROTO_SIMPLE, &c1, &error));
  g_assert_true (sim_collective_choose (net, SIM_OP_ALL_REDUCE, g, 16, 2097152.0, SIM_ALGO_TREE,
                                        SIM_PROTO_SIMPLE, &c2, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat_with_epsilon (c1.latency_s, c2.latency_s, 1e-15);
  g_assert_cmpfloat_with_epsilon ((c2.predicted_s - c2.latency_s) / (c1.predicted_s - c1.latency_s),
                                  2 * 0.5 / 0.6, 1e-6);
}

/* A network that may deliver a message's bytes out of order (<nic
 * in-order-delivery="false">, aws-p5.xml's EFA) carries NCCL's Simple
 * protocol only: across two p5 nodes every size from 8 B to 1 GiB runs
 * Simple, and LL or LL128 there is refused, while inside one p5 node, over
 * NVLink alone, small messages still run LL (as on dgx8x4.xml, whose
 * InfiniBand carries LL128 across nodes: the 4 MiB all_reduce of the same
 * 16 GPUs runs ring/LL128 there, section 6 of test-validation-nccl) */
static void
test_out_of_order_network (void)
{
  g_autoptr (SimTopology) p5 = test_load_topology ("aws-p5.xml", 2);
  g_autoptr (SimTopology) ib = test_load_topology ("dgx8x4.xml", 2);
  g_autoptr (SimEngine) e = sim_engine_new ();
  g_autoptr (SimNetwork) net = sim_network_new (p5, e);
  g_autoptr (SimEngine) e_ib = sim_engine_new ();
  g_autoptr (SimNetwork) net_ib = sim_network_new (ib, e_ib);
  SimCollChoice c;
  int g[16];
  g_assert_true (p5->cluster.nic_out_of_order);
  g_assert_false (ib->cluster.nic_out_of_order);
  for (int i = 0; i < 16; i++)
    g[i] = i;
  for (double bytes = 8; bytes <= 1073741824.0; bytes *= 8) {
    g_assert_true (sim_collective_choose (net, SIM_OP_ALL_REDUCE, g, 16, bytes, SIM_ALGO_AUTO,
                                          SIM_PROTO_AUTO, &c, NULL));
    g_assert_cmpint (c.proto, ==, SIM_PROTO_SIMPLE);
    g_assert_true (sim_collective_choose (net, SIM_OP_ALL_GATHER, g, 16, bytes, SIM_ALGO_AUTO,
                                          SIM_PROTO_AUTO, &c, NULL));
    g_assert_cmpint (c.proto, ==, SIM_PROTO_SIMPLE);
  }
  g_assert_false (sim_collective_supported (net, SIM_OP_ALL_REDUCE, g, 16, SIM_ALGO_RING, SIM_PROTO_LL128));
  g_assert_false (sim_collective_supported (net, SIM_OP_ALL_REDUCE, g, 16, SIM_ALGO_TREE, SIM_PROTO_LL));
  g_assert_true (sim_collective_supported (net, SIM_OP_ALL_REDUCE, g, 16, SIM_ALGO_RING, SIM_PROTO_SIMPLE));
  g_assert_true (sim_collective_choose (net, SIM_OP_ALL_REDUCE, g, 8, 8, SIM_ALGO_AUTO, SIM_PROTO_AUTO, &c,
                                        NULL));
  g_assert_cmpint (c.proto, ==, SIM_PROTO_LL);
  g_assert_true (sim_collective_choose (net_ib, SIM_OP_ALL_REDUCE, g, 16, 4194304.0, SIM_ALGO_AUTO,
                                        SIM_PROTO_AUTO, &c, NULL));
  g_assert_cmpint (c.proto, ==, SIM_PROTO_LL128);
}

/* the line NCCL's tuner logs: its names (collectives.cc), the API's count
 * in bytes (all_gather: a rank's piece, 1 MiB / 8 = 131072), none for
 * sim's hier nor for point-to-point operations */
static void
test_nccl_log_line (void)
{
  SimCollChoice tree = { SIM_ALGO_NVLS_TREE, SIM_PROTO_SIMPLE, 0, 0, SIM_TIME_MAX };
  SimCollChoice ring = { SIM_ALGO_RING, SIM_PROTO_LL128, 0, 0, SIM_TIME_MAX };
  SimCollChoice hier = { SIM_ALGO_HIER, SIM_PROTO_SIMPLE, 0, 0, SIM_TIME_MAX };
  g_autofree char *a = sim_collective_nccl_log_line (SIM_OP_ALL_REDUCE, 16, 1073741824.0, &tree);
  g_autofree char *b = sim_collective_nccl_log_line (SIM_OP_ALL_GATHER, 8, 1048576.0, &ring);
  g_assert_cmpstr (a, ==, "AllReduce: 1073741824 Bytes -> Algo NVLS_TREE proto SIMPLE");
  g_assert_cmpstr (b, ==, "AllGather: 131072 Bytes -> Algo RING proto LL128");
  g_assert_null (sim_collective_nccl_log_line (SIM_OP_ALL_REDUCE, 16, 1e9, &hier));
  g_assert_null (sim_collective_nccl_log_line (SIM_OP_ALLTOALL, 16, 1e9, &ring));
}

/* small messages: NCCL's LL ring latency, 6.6 + 14 x 0.6 = 15.0 us, is the
 * whole cost of an 8-byte all_reduce; auto picks it */
static void
test_small (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  g_autoptr (SimEngine) e = sim_engine_new ();
  g_autoptr (SimNetwork) net = sim_network_new (t, e);
  int g[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  SimCollChoice c;
  g_assert_true (sim_collective_choose (net, SIM_OP_ALL_REDUCE, g, 8, 8, SIM_ALGO_AUTO,
                                        SIM_PROTO_AUTO, &c, NULL));
  g_assert_cmpint (c.algo, ==, SIM_ALGO_RING);
  g_assert_cmpint (c.proto, ==, SIM_PROTO_LL);
  g_assert_cmpfloat_with_epsilon (c.latency_s, 15.0e-6, 1e-12);
  g_assert_cmpfloat_with_epsilon (c.predicted_s, 15.0e-6, 1e-9);
}

/* a ring's LL all_reduce of 1 MiB on one node: each rank sends
 * 2 x 7/8 x 1,048,576 = 1,835,008 bytes, on the wire twice that (8-byte
 * lines, half flags), at most at LL's bus-bandwidth ceiling for the GPU
 * (llMaxBws, tuning.cc at NVIDIA/nccl 5067397c): on 8 H100s 141 GB/s,
 * 1,835,008 / 141e9 = 13.014 us, where NVLink would carry the 3,670,016
 * wire bytes in 9.9 us at 370.8 GB/s; on 8 A100s 87.7 GB/s, 20.924 us
 * (the wire bytes take 15.9 us at 231 GB/s).  With the 15.0 us latency:
 * 28.014 and 35.924 us.  At NCCL 2.20's 1/4 the H100 would take
 * 15.0 + 7,340,032 / 370.8e9 = 34.8 us and more. */
static void
test_ll_ceiling (void)
{
  static const struct {
    const char *topology;
    double us;
  } cases[] = { { "dgx8x4.xml", 15.0 + 1835008 / 141e3 }, { "dgx-a100.xml", 15.0 + 1835008 / 87.7e3 } };
  int g[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (SimTopology) t = test_load_topology (cases[i].topology, 1);
    g_autoptr (SimEngine) e = sim_engine_new ();
    g_autoptr (SimNetwork) net = sim_network_new (t, e);
    SimCollChoice c;
    g_assert_true (sim_collective_choose (net, SIM_OP_ALL_REDUCE, g, 8, 1048576, SIM_ALGO_RING,
                                          SIM_PROTO_LL, &c, NULL));
    g_assert_cmpfloat_with_epsilon (c.predicted_s * 1e6, cases[i].us, 0.01);
  }
}

/* sim_collective_alone_chosen gives what sim_collective_alone_counted
 * runs for the choice just made on the same GPUs (16 across 2 nodes, an
 * all_reduce of 64 MiB): the choice's own picoseconds, the same activities,
 * and the same links added to the group's (here a -1 already there: the
 * union stays sorted, each once, and a second collective over the same
 * links adds none) */
static void
test_alone_chosen (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 2);
  g_autoptr (SimEngine) e = sim_engine_new ();
  g_autoptr (SimNetwork) net = sim_network_new (t, e);
  g_autoptr (GArray) ran = g_array_new (FALSE, FALSE, sizeof (int));
  g_autoptr (GArray) built = g_array_new (FALSE, FALSE, sizeof (int));
  int g[16], minus = -1;
  guint32 acts_ran = 0, acts_built = 0;
  SimTime t_ran, t_built;
  SimCollChoice c;
  for (int i = 0; i < 16; i++)
    g[i] = i;
  g_assert_true (sim_collective_choose (net, SIM_OP_ALL_REDUCE, g, 16, 64.0 * (1 << 20), SIM_ALGO_AUTO,
                                        SIM_PROTO_AUTO, &c, NULL));
  g_assert_cmpint (c.alone_t, !=, SIM_TIME_MAX);
  g_assert_cmpfloat (c.predicted_s, ==, sim_time_to_s (c.alone_t));
  g_array_append_val (ran, minus);
  g_array_append_val (built, minus);
  t_ran = sim_collective_alone_counted (net, SIM_OP_ALL_REDUCE, g, 16, 64.0 * (1 << 20), &c, ran, &acts_ran);
  t_built = sim_collective_alone_chosen (net, SIM_OP_ALL_REDUCE, g, 16, 64.0 * (1 << 20), &c, built, &acts_built);
  g_assert_cmpint (t_ran, ==, c.alone_t);
  g_assert_cmpint (t_built, ==, c.alone_t);
  g_assert_cmpuint (acts_built, ==, acts_ran);
  g_assert_cmpuint (acts_ran, >, 16);
  g_assert_cmpuint (built->len, ==, ran->len);
  g_assert_cmpuint (ran->len, >, 16);
  g_assert_cmpint (memcmp (built->data, ran->data, ran->len * sizeof (int)), ==, 0);
  g_assert_cmpint (g_array_index (ran, int, 0), ==, -1);
  for (guint i = 1; i < ran->len; i++)
    g_assert_cmpint (g_array_index (ran, int, i - 1), <, g_array_index (ran, int, i));
  {
    guint len = ran->len;
    sim_collective_alone_counted (net, SIM_OP_ALL_REDUCE, g, 16, 1 << 20, &c, ran, NULL);
    g_assert_cmpuint (ran->len, ==, len);
  }
}

/* a calibrated latency scale multiplies NCCL's per-hop latency, not its
 * base: 6.6 + 14 x 0.6 x 1.5 = 19.2 us; a scale on InfiniBand leaves a
 * one-node ring as it was */
static void
test_latency_scale (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  int g[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  SimCollChoice c;
  t->coll_latency_scale[SIM_LINK_INFINIBAND] = 3.0;
  t->coll_latency_scale[SIM_LINK_NVLINK] = 1.5;
  {
    g_autoptr (SimEngine) e = sim_engine_new ();
    g_autoptr (SimNetwork) net = sim_network_new (t, e);
    g_assert_true (sim_collective_choose (net, SIM_OP_ALL_REDUCE, g, 8, 8, SIM_ALGO_RING,
                                          SIM_PROTO_LL, &c, NULL));
    g_assert_cmpfloat_with_epsilon (c.latency_s, 19.2e-6, 1e-12);
  }
  t->coll_latency_scale[SIM_LINK_NVLINK] = 0; /* not calibrated: as tuned */
  {
    g_autoptr (SimEngine) e = sim_engine_new ();
    g_autoptr (SimNetwork) net = sim_network_new (t, e);
    g_assert_true (sim_collective_choose (net, SIM_OP_ALL_REDUCE, g, 8, 8, SIM_ALGO_RING,
                                          SIM_PROTO_LL, &c, NULL));
    g_assert_cmpfloat_with_epsilon (c.latency_s, 15.0e-6, 1e-12);
  }
}

/* nccl-tests bus bandwidth factors */
static void
test_busbw (void)
{
  g_assert_cmpfloat_with_epsilon (sim_coll_op_busbw_factor (SIM_OP_ALL_REDUCE, 8), 1.75, 1e-12);
  g_assert_cmpfloat_with_epsilon (sim_coll_op_busbw_factor (SIM_OP_ALL_GATHER, 16), 0.9375, 1e-12);
  g_assert_cmpfloat_with_epsilon (sim_coll_op_busbw_factor (SIM_OP_SENDRECV, 2), 1.0, 1e-12);
}

/* a point-to-point send of 1 GiB between two nodes: one NIC, 50 GB/s,
 * plus one network step of 14 us */
static void
test_sendrecv (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 2);
  int g[2] = { 0, 8 };
  double s = 1073741824.0;
  double got = run (t, SIM_OP_SENDRECV, g, 2, s, SIM_ALGO_AUTO, SIM_PROTO_AUTO, 1);
  g_assert_cmpfloat_with_epsilon (got, s / 50e9 + 14e-6, 1e-9);
}

/* all_to_all on one DGX H100 node, S = 1 GiB per rank: each rank sends
 * S/8 to each of its 7 peers at once (NCCL's grouped send/recv), so its
 * NVSwitch port carries 7/8 S out (and 7/8 S in) at send/recv's 0.913 of
 * the ring's 370.8 GB/s (P2P_EFFICIENCY, sim-collective.c), 338.54 GB/s: 0.875 x 1073741824 / 338.54e9 =
 * 2775.2 us.  Latency: the 7 peers fit one batch of 8 p2p operations, one
 * NVLink p2p step of 3.4 us (hwLat, ring, Simple, as a send/recv).
 * busbw = S/t x 7/8 -> 338.54 GB/s. */
static void
test_alltoall_node (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  int g[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  double s = 1073741824.0;
  double got = run (t, SIM_OP_ALLTOALL, g, 8, s, SIM_ALGO_AUTO, SIM_PROTO_AUTO, 1);
  g_assert_cmpfloat_with_epsilon (got, 0.875 * s / (0.913 * 370.8e9) + 3.4e-6, 1e-9);
  g_assert_cmpfloat_with_epsilon (s / (got - 3.4e-6) * sim_coll_op_busbw_factor (SIM_OP_ALLTOALL, 8) / 1e9,
                                  0.913 * 370.8, 1e-6);
}

/* all_to_all on 2 DGX H100 nodes (16 ranks), S = 1 GiB per rank: 8/16 of
 * each rank's data goes to the other node.  With PXN, rank i's piece for
 * GPU j of the other node crosses NVLink to local GPU j and leaves by NIC j
 * (rail j), so NIC j carries the pieces of all 8 local GPUs for GPU j:
 * 8 x S/16 = S/2 at send/recv's 0.913 of 400 Gb/s = 45.65 GB/s ->
 * S / 91.3 GB/s = 11760.6 us.  The NVLink port of a GPU carries 7 local
 * pieces and 7 PXN pieces, 14/16 S / 0.913 at 370.8 GB/s = 2775.2 us: the
 * NICs are the wall.  Latency: 15 peers are 2 batches of 8, both holding
 * an inter-node peer: 2 x 14 us (hwLat network, ring, Simple).
 * busbw = S/t x 15/16 -> 0.913 x 93.75 = 85.59 GB/s. */
static void
test_alltoall_two_nodes (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 2);
  int g[16];
  double s = 1073741824.0, got = 0;
  for (int i = 0; i < 16; i++)
    g[i] = i;
  got = run (t, SIM_OP_ALLTOALL, g, 16, s, SIM_ALGO_AUTO, SIM_PROTO_AUTO, 1);
  g_assert_cmpfloat_with_epsilon (got, s / (0.913 * 100e9) + 28e-6, 1e-9);
  g_assert_cmpfloat_with_epsilon (s / (got - 28e-6) * 15.0 / 16 / 1e9, 0.913 * 93.75, 1e-6);
}

/* latency by batches: 64 ranks on 8 nodes have 63 peers, 8 batches of 8,
 * each with a peer on another node: 8 x 14 = 112 us; an idle 8-byte
 * all_to_all costs just that.  The model accepts ring/Simple only, and
 * auto or another protocol asked for becomes Simple, as for send/recv. */
static void
test_alltoall_latency (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 8);
  g_autoptr (SimEngine) e = sim_engine_new ();
  g_autoptr (SimNetwork) net = sim_network_new (t, e);
  g_autoptr (GError) error = NULL;
  int g[64];
  SimCollChoice c;
  for (int i = 0; i < 64; i++)
    g[i] = i;
  g_assert_true (sim_collective_choose (net, SIM_OP_ALLTOALL, g, 64, 8, SIM_ALGO_AUTO,
                                        SIM_PROTO_LL, &c, &error));
  g_assert_no_error (error);
  g_assert_cmpint (c.algo, ==, SIM_ALGO_RING);
  g_assert_cmpint (c.proto, ==, SIM_PROTO_SIMPLE);
  g_assert_cmpfloat_with_epsilon (c.latency_s, 112e-6, 1e-12);
  g_assert_true (sim_collective_supported (net, SIM_OP_ALLTOALL, g, 64, SIM_ALGO_RING, SIM_PROTO_SIMPLE));
  g_assert_false (sim_collective_supported (net, SIM_OP_ALLTOALL, g, 64, SIM_ALGO_RING, SIM_PROTO_LL));
  g_assert_false (sim_collective_supported (net, SIM_OP_ALLTOALL, g, 64, SIM_ALGO_TREE, SIM_PROTO_SIMPLE));
  g_assert_false (sim_collective_choose (net, SIM_OP_ALLTOALL, g, 64, 8, SIM_ALGO_NVLS,
                                         SIM_PROTO_AUTO, &c, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_USAGE);
  g_assert_cmpfloat_with_epsilon (sim_coll_op_busbw_factor (SIM_OP_ALLTOALL, 8), 0.875, 1e-12);
  g_assert_cmpstr (sim_coll_op_name (SIM_OP_ALLTOALL), ==, "all_to_all");
}

/* auto is the fastest of every (algorithm, protocol) of NCCL's the group
 * supports, each asked for explicitly, the first of equals in sim's order
 * (ring, tree, nvls, nvlstree; LL, LL128, Simple), never hier (sim's
 * three phases, no NCCL algorithm): sim_collective_choose skips
 * simulating LL where its floor (bytes over its cap) is above the fastest
 * other, which must never change the answer.  Over 4 B .. 4 GiB, one node
 * and four (where LL's cap binds on large messages, and is the fastest on
 * small ones), all_reduce (every algorithm) and all_gather (ring only). */
static void
test_auto_is_fastest (void)
{
  static const SimAlgo algos[] = { SIM_ALGO_RING, SIM_ALGO_TREE, SIM_ALGO_NVLS, SIM_ALGO_NVLS_TREE };
  static const SimProto protos[] = { SIM_PROTO_LL, SIM_PROTO_LL128, SIM_PROTO_SIMPLE };
  static const SimCollOp ops[] = { SIM_OP_ALL_REDUCE, SIM_OP_ALL_GATHER };
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 4);
  g_autoptr (SimEngine) e = sim_engine_new ();
  g_autoptr (SimNetwork) net = sim_network_new (t, e);
  int one[8], four[32];
  int ll_won = 0, ll_lost = 0;
  for (int i = 0; i < 32; i++)
    four[i] = i, one[i % 8] = i % 8;
  for (guint o = 0; o < G_N_ELEMENTS (ops); o++)
    for (int w = 0; w < 2; w++)
      for (double bytes = 4; bytes <= 4.0 * (1 << 30); bytes *= 32) {
        const int *g = w ? four : one;
        int n = w ? 32 : 8;
        SimCollChoice a, best = { 0 }, c;
        gboolean any = FALSE;
        g_assert_true (sim_collective_choose (net, ops[o], g, n, bytes, SIM_ALGO_AUTO, SIM_PROTO_AUTO, &a, NULL));
        for (guint i = 0; i < G_N_ELEMENTS (algos); i++)
          for (guint j = 0; j < G_N_ELEMENTS (protos); j++) {
            if (!sim_collective_supported (net, ops[o], g, n, algos[i], protos[j]))
              continue;
            g_assert_true (sim_collective_choose (net, ops[o], g, n, bytes, algos[i], protos[j], &c, NULL));
            if (!any || c.predicted_s < best.predicted_s)
              best = c;
            any = TRUE;
          }
        g_assert_true (any);
        g_assert_cmpint (a.algo, ==, best.algo);
        g_assert_cmpint (a.proto, ==, best.proto);
        g_assert_cmpfloat (a.predicted_s, ==, best.predicted_s);
        if (a.proto == SIM_PROTO_LL)
          ll_won++;
        else
          ll_lost++;
      }
  /* both branches were taken: LL the fastest on small messages, skipped
   * or beaten on large ones */
  g_assert_cmpint (ll_won, >, 0);
  g_assert_cmpint (ll_lost, >, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/collective/routes", test_routes);
  g_test_add_func ("/collective/ring-formula", test_ring_formula);
  g_test_add_func ("/collective/contention", test_contention);
  g_test_add_func ("/collective/rails", test_rails);
  g_test_add_func ("/collective/hier", test_hier);
  g_test_add_func ("/collective/nvls", test_nvls);
  g_test_add_func ("/collective/nvls-tree", test_nvls_tree);
  g_test_add_func ("/collective/tree-correction", test_tree_correction);
  g_test_add_func ("/collective/nccl-log-line", test_nccl_log_line);
  g_test_add_func ("/collective/out-of-order-network", test_out_of_order_network);
  g_test_add_func ("/collective/small", test_small);
  g_test_add_func ("/collective/ll-ceiling", test_ll_ceiling);
  g_test_add_func ("/collective/alone-chosen", test_alone_chosen);
  g_test_add_func ("/collective/auto-is-fastest", test_auto_is_fastest);
  g_test_add_func ("/collective/latency-scale", test_latency_scale);
  g_test_add_func ("/collective/busbw", test_busbw);
  g_test_add_func ("/collective/sendrecv", test_sendrecv);
  g_test_add_func ("/collective/all-to-all/node", test_alltoall_node);
  g_test_add_func ("/collective/all-to-all/two-nodes", test_alltoall_two_nodes);
  g_test_add_func ("/collective/all-to-all/latency", test_alltoall_latency);
  return g_test_run ();
}
