/* tests for sim-topology: both forms, the expansion, --nodes */
#include <glib.h>
#include <math.h>

#include "sim-error.h"
#include "sim-gemm.h"
#include "sim-topology.h"
#include "test-util.h"

static SimTopology *
load (const char *name, int nodes)
{
  return test_load_topology (name, nodes);
}

static int
count_links (const SimTopology *t, SimLinkKind k)
{
  int n = 0;
  for (guint i = 0; i < t->links->len; i++)
    n += g_array_index (t->links, SimLink, i).kind == k;
  return n;
}

/* dgx8x4: 8 nodes x (8 GPUs + 1 NVSwitch + 8 NICs) = 136 vertices, plus
 * 8 rail leaves (one group: 8 <= 32 nodes per leaf) and a spine = 145.
 * Links: 64 NVLink, 64 PCIe, 64 NIC-leaf, 8 leaf-spine.  A leaf uplink
 * carries 8 nodes x 50 GB/s = 400 GB/s at oversubscription 1. */
static void
test_dgx8x4 (void)
{
  g_autoptr (SimTopology) t = load ("dgx8x4.xml", 0);
  const SimGpuType *g = sim_topology_gpu_type (t, 0);
  g_assert_cmpint (sim_topology_n_gpus (t), ==, 64);
  g_assert_cmpint (t->n_nodes, ==, 8);
  g_assert_cmpint (t->gpus_per_node, ==, 8);
  g_assert_cmpuint (t->vertices->len, ==, 145);
  g_assert_cmpint (count_links (t, SIM_LINK_NVLINK), ==, 64);
  g_assert_cmpint (count_links (t, SIM_LINK_PCIE), ==, 64);
  g_assert_cmpint (count_links (t, SIM_LINK_INFINIBAND), ==, 72);
  g_assert_cmpuint (g->hbm_capacity_bytes, ==, G_GUINT64_CONSTANT (80) << 30);
  g_assert_cmpuint (g->hbm_visible_bytes, ==, G_GUINT64_CONSTANT (81559) << 20);
  g_assert_cmpfloat_with_epsilon (g->peak_flop_per_s[SIM_DTYPE_BF16], 989.4e12, 1e6);
  g_assert_cmpfloat_with_epsilon (t->cluster.nic_bw_bytes_per_s, 50e9, 1.0);
  for (guint i = 0; i < t->links->len; i++) {
    const SimLink *l = &g_array_index (t->links, SimLink, i);
    const SimVertex *b = &g_array_index (t->vertices, SimVertex, l->b);
    if (b->kind == SIM_VERTEX_SPINE)
      g_assert_cmpfloat_with_epsilon (l->bw_bytes_per_s, 400e9, 1.0);
  }
  /* GPU numbers follow nodes: GPU 9 is the second GPU of node 1 */
  g_assert_cmpint (sim_topology_gpu (t, 9)->node, ==, 1);
}

/* the cluster form gives its vertices the ids n<node>-gpu<i>, n<node>-nic<k>,
 * n<node>-nvswitch and leaf-g<group>-rail<r>, as messages and traces show
 * them: on 300 dgx8x4 nodes (32 per leaf), GPU 8 x 123 + 5 is n123-gpu5
 * and its leaf, on rail 5 of group 123 / 32 = 3, is leaf-g3-rail5 */
static void
test_names (void)
{
  g_autoptr (SimTopology) t = load ("dgx8x4.xml", 300);
  const SimVertex *gpu = sim_topology_gpu (t, 8 * 123 + 5);
  gboolean nic = FALSE, hub = FALSE, leaf = FALSE;
  g_assert_cmpstr (gpu->id, ==, "n123-gpu5");
  for (guint i = 0; i < t->vertices->len; i++) {
    const char *n = g_array_index (t->vertices, SimVertex, i).id;
    nic = nic || g_str_equal (n, "n123-nic5");
    hub = hub || g_str_equal (n, "n299-nvswitch");
    leaf = leaf || g_str_equal (n, "leaf-g3-rail5");
  }
  g_assert_true (nic && hub && leaf);
  g_assert_cmpstr (sim_topology_gpu (t, 0)->id, ==, "n0-gpu0");
}

/* --nodes 2048 turns the same node into a 16,384-GPU cluster:
 * 64 leaf groups x 8 rails = 512 leaves under the spine */
static void
test_nodes_override (void)
{
  g_autoptr (SimTopology) t = load ("dgx8x4.xml", 2048);
  int leaves = 0;
  g_assert_cmpint (sim_topology_n_gpus (t), ==, 16384);
  for (guint i = 0; i < t->vertices->len; i++)
    leaves += g_array_index (t->vertices, SimVertex, i).kind == SIM_VERTEX_LEAF;
  g_assert_cmpint (leaves, ==, 512);
}

static void
test_graph (void)
{
  g_autoptr (SimTopology) t = load ("example-graph.xml", 0);
  g_autoptr (GError) error = NULL;
  g_autofree char *p = g_build_filename (SIM_SOURCE_DIR, "topologies", "example-graph.xml", NULL);
  g_assert_cmpint (sim_topology_n_gpus (t), ==, 4);
  g_assert_cmpint (t->n_nodes, ==, 2);
  g_assert_cmpint (t->gpus_per_node, ==, 2);
  g_assert_false (t->cluster.present);
  /* an explicit graph cannot be resized */
  g_assert_null (sim_topology_load (p, 4, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_USAGE);
}

/* every shipped topology loads; the Blackwell files give the dense FP4 and
 * FP6 peaks of their data sheets (B200: 144 PFLOPS FP4 with 2:4 sparsity
 * for 8 GPUs = 9,000 TFLOP/s dense each; GB200: 1,440 PFLOPS sparse for
 * 72 = 10,000; GB300: 1,080 PFLOPS dense for 72 = 15,000; FP6 at the FP8
 * rate, 4,500 and 5,000), Hopper none */
static void
test_shipped (void)
{
  const char *names[] = { "dgx8x4.xml",   "dgx-a100.xml",    "dgx-a800.xml",
                          "dgx-h100.xml", "dgx-h200.xml",    "dgx-h800.xml",
                          "dgx-b200.xml", "gb200-nvl72.xml", "gb300-nvl72.xml",
                          "dgx-a100-40gb.xml", "grand-teton-h100.xml", "aws-p5.xml" };
  const double fp4[] = { 0, 0, 0, 0, 0, 0, 9000e12, 10000e12, 15000e12, 0, 0, 0 };
  const double fp6[] = { 0, 0, 0, 0, 0, 0, 4500e12, 5000e12, 5000e12, 0, 0, 0 };
  /* the Hopper files carry a held-out error band (validation-heldout checks
   * its value against the rows), the others none */
  const gboolean heldout[] = { TRUE, FALSE, FALSE, TRUE, TRUE, TRUE, FALSE, FALSE, FALSE, FALSE, TRUE, TRUE };
  /* and an MoE band where published MoE runs of the generation were
   * predicted (validation-moe checks its value): not the A100/A800 */
  const gboolean moe[] = { TRUE, FALSE, FALSE, TRUE, TRUE, TRUE, TRUE, TRUE, TRUE, FALSE, TRUE, TRUE };
  /* and an FSDP band where the fit saw Megatron's runs and published FSDP
   * runs were predicted (validation-fsdp checks its value): the Hopper
   * files; the A100's constants are fitted on FSDP runs themselves */
  const gboolean fsdp[] = { TRUE, FALSE, FALSE, TRUE, TRUE, TRUE, FALSE, FALSE, FALSE, FALSE, TRUE, TRUE };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++) {
    g_autoptr (SimTopology) t = load (names[i], 0);
    const SimGpuType *g = sim_topology_gpu_type (t, 0);
    g_assert_cmpint (sim_topology_n_gpus (t), >, 0);
    g_assert_true (sim_topology_check_one_gpu_type (t, NULL));
    g_assert_cmpfloat_with_epsilon (g->peak_flop_per_s[SIM_DTYPE_FP4], fp4[i], 1e6);
    g_assert_cmpfloat_with_epsilon (g->peak_flop_per_s[SIM_DTYPE_FP6], fp6[i], 1e6);
    g_assert_cmpstr (sim_dtype_name (SIM_DTYPE_FP4), ==, "fp4");
    g_assert_cmpint (g->eff.bands.heldout.rows > 0, ==, heldout[i]);
    g_assert_cmpint (g->eff.bands.heldout.error > 0, ==, heldout[i]);
    g_assert_cmpint (g->eff.bands.moe.rows > 0, ==, moe[i]);
    g_assert_cmpint (g->eff.bands.moe.within, <=, g->eff.bands.moe.rows);
    g_assert_cmpfloat (fabs (g->eff.bands.moe.bias), <=, g->eff.bands.moe.error);
    g_assert_cmpint (g->eff.bands.fsdp.rows > 0, ==, fsdp[i]);
    g_assert_cmpint (g->eff.bands.fsdp.within, <=, g->eff.bands.fsdp.rows);
    g_assert_cmpfloat (fabs (g->eff.bands.fsdp.bias), <=, g->eff.bands.fsdp.error);
  }
}

/* grand-teton-h100.xml is dgx-h100.xml's H100 at a 500 W power limit with
 * 96 GiB of HBM2e at 2.4 TB/s (torchtitan's benchmark hardware): its peak
 * linear in the power limit between the H100 NVL (835.5 TFLOP/s dense BF16
 * at 400 W) and the SXM (989.4 at 700 W), 835.5 + 153.9 x 100/300 = 886.8,
 * and every GEMM point the SXM's x 886.8/989.4 = 0.8963 (<gemm scale>); the
 * efficiency constants and the GEMM shapes are the SXM file's */
static void
test_grand_teton (void)
{
  g_autoptr (SimTopology) gt = load ("grand-teton-h100.xml", 0);
  g_autoptr (SimTopology) sxm = load ("dgx-h100.xml", 0);
  const SimGpuType *a = sim_topology_gpu_type (gt, 0), *b = sim_topology_gpu_type (sxm, 0);
  g_assert_cmpuint (a->hbm_capacity_bytes, ==, 96ull << 30);
  g_assert_cmpuint (a->hbm_visible_bytes, ==, 96256ull << 20);
  g_assert_cmpfloat (a->hbm_bw_bytes_per_s, ==, 2.4e12);
  g_assert_cmpfloat_with_epsilon (a->peak_flop_per_s[SIM_DTYPE_BF16], 886.8e12, 1e9);
  g_assert_cmpfloat_with_epsilon (a->peak_flop_per_s[SIM_DTYPE_BF16] / b->peak_flop_per_s[SIM_DTYPE_BF16],
                                  0.8963, 1e-4);
  g_assert_cmpuint (a->gemm->len, ==, b->gemm->len);
  for (guint i = 0; i < a->gemm->len; i++) {
    const SimGemmPoint *p = &g_array_index (a->gemm, SimGemmPoint, i);
    const SimGemmPoint *q = &g_array_index (b->gemm, SimGemmPoint, i);
    g_assert_cmpfloat (p->m, ==, q->m);
    g_assert_cmpfloat_with_epsilon (p->flop_per_s, 0.8963 * q->flop_per_s, 1e-9 * q->flop_per_s);
  }
  g_assert_cmpfloat (a->eff.clock, ==, b->eff.clock);
  g_assert_cmpfloat (a->eff.hbm, ==, b->eff.hbm);
  g_assert_cmpint (sim_topology_n_gpus (gt), ==, 512);
}

/* dgx-a100-40gb.xml is dgx-a100.xml with the A100 40GB's memory: 40 GiB
 * (42,949,672,960 bytes) of HBM2, 40960 MiB (42,949,672,960 bytes) visible,
 * 1,555 GB/s (A100 datasheet), where the 80 GB part has 80 GiB, 81920 MiB
 * and 2,039 GB/s; the peaks, GEMM table, attention and <efficiency>
 * constants, and the network, are the 80 GB file's */
static void
test_a100_40gb (void)
{
  g_autoptr (SimTopology) t40 = load ("dgx-a100-40gb.xml", 0);
  g_autoptr (SimTopology) t80 = load ("dgx-a100.xml", 0);
  const SimGpuType *a = sim_topology_gpu_type (t40, 0), *b = sim_topology_gpu_type (t80, 0);
  g_assert_cmpstr (a->name, ==, "NVIDIA A100-SXM4-40GB");
  g_assert_cmpuint (a->hbm_capacity_bytes, ==, 42949672960u);
  g_assert_cmpuint (a->hbm_visible_bytes, ==, 42949672960u);
  g_assert_cmpfloat (a->hbm_bw_bytes_per_s, ==, 1555e9);
  g_assert_cmpuint (b->hbm_capacity_bytes, ==, 85899345920u);
  g_assert_cmpfloat (b->hbm_bw_bytes_per_s, ==, 2039e9);
  g_assert_cmpfloat (a->peak_flop_per_s[SIM_DTYPE_BF16], ==, b->peak_flop_per_s[SIM_DTYPE_BF16]);
  g_assert_cmpuint (a->gemm->len, ==, b->gemm->len);
  g_assert_cmpfloat (a->attn_fwd_efficiency, ==, b->attn_fwd_efficiency);
  g_assert_cmpfloat (a->eff.clock, ==, b->eff.clock);
  g_assert_cmpfloat (a->eff.hbm, ==, b->eff.hbm);
  g_assert_cmpfloat (a->eff.host_launch_s, ==, b->eff.host_launch_s);
  g_assert_cmpint (sim_topology_n_gpus (t40), ==, sim_topology_n_gpus (t80));
  g_assert_cmpint (count_links (t40, SIM_LINK_NVLINK), ==, count_links (t80, SIM_LINK_NVLINK));
}

/* sim_gemm_rate on a 2 x 2 x 2 table, m, n, k in {1024, 4096}, rate
 * r(m, n, k) = (1 + i + 2 j + 4 l) x 1e14 FLOP/s for the indices i, j, l
 * of m, n, k: at (2048, 2048, 2048), the midpoint in log2 on every axis,
 * trilinear interpolation weighs each corner 1/8, so the rate is the mean
 * (1 + ... + 8)/8 = 4.5e14; at (1024, 1024, 8192) k is clamped to 4096:
 * r(0, 0, 1) = 5e14; the same before and after sim_gemm_prepare.  With the
 * corner (4096, 4096, 4096) replaced by a second copy of (1024, 1024, 1024)
 * the table still counts 2 x 2 x 2 values and 8 points, one of them a
 * repeat: the missing corner is skipped, (1 + ... + 7)/8 = 3.5e14, and
 * nothing reads past the table. */
static void
test_gemm (void)
{
  SimGpuType g = { 0 };
  double v[2] = { 1024, 4096 };
  g.peak_flop_per_s[SIM_DTYPE_BF16] = 989.4e12;
  g.gemm = g_array_new (FALSE, FALSE, sizeof (SimGemmPoint));
  for (int l = 0; l < 2; l++)
    for (int j = 0; j < 2; j++)
      for (int i = 0; i < 2; i++) {
        SimGemmPoint p = { v[i], v[j], v[l], (1 + i + 2 * j + 4 * l) * 1e14 };
        g_array_append_val (g.gemm, p);
      }
  for (int prepared = 0; prepared < 2; prepared++) {
    if (prepared)
      sim_gemm_prepare (&g);
    g_assert_cmpfloat_with_epsilon (sim_gemm_rate (&g, 2048, 2048, 2048), 4.5e14, 1e3);
    g_assert_cmpfloat_with_epsilon (sim_gemm_rate (&g, 1024, 1024, 8192), 5e14, 1e3);
  }
  /* a table changed in place is prepared again (sim_gemm_prepare's
   * contract); unprepared, the rate comes from the points themselves */
  g_array_index (g.gemm, SimGemmPoint, 7) = g_array_index (g.gemm, SimGemmPoint, 0);
  g_clear_pointer (&g.gemm_grid, g_free);
  for (int prepared = 0; prepared < 2; prepared++) {
    if (prepared)
      sim_gemm_prepare (&g);
    g_assert_cmpfloat_with_epsilon (sim_gemm_rate (&g, 2048, 2048, 2048), 3.5e14, 1e3);
  }
  g_free (g.gemm_grid);
  g_array_unref (g.gemm);
}

/* the slow-link what-if's copy: dgx8x4's GPU 9 (node 1) has one NIC,
 * whose one link to its rail leaf carries 400 Gb/s = 50 GB/s, a quarter
 * of it at factor 4; its NVLinks (one GPU-NVSwitch link in the cluster
 * form) half theirs at factor 2.  The copy's links are its own: the
 * loaded file is unchanged, and every other link is the same. */
static void
test_slow_links (void)
{
  g_autoptr (SimTopology) t = load ("dgx8x4.xml", 0);
  g_autoptr (SimTopology) c = sim_topology_copy_links (t);
  int v = g_array_index (t->gpus, int, 9), changed = 0;
  double nvlink = 0;
  g_assert_cmpint (sim_topology_slow_gpu_links (c, 9, TRUE, 4.0), ==, 1);
  g_assert_cmpint (sim_topology_slow_gpu_links (c, 9, FALSE, 2.0), ==, 1);
  g_assert_cmpuint (c->links->len, ==, t->links->len);
  for (guint i = 0; i < t->links->len; i++) {
    const SimLink *a = &g_array_index (t->links, SimLink, i), *b = &g_array_index (c->links, SimLink, i);
    const SimVertex *x = &g_array_index (t->vertices, SimVertex, a->a);
    const SimVertex *y = &g_array_index (t->vertices, SimVertex, a->b);
    if (a->bw_bytes_per_s == b->bw_bytes_per_s)
      continue;
    changed++;
    if (a->kind == SIM_LINK_NVLINK) {
      g_assert_true (a->a == v || a->b == v);
      g_assert_cmpfloat_with_epsilon (b->bw_bytes_per_s, a->bw_bytes_per_s / 2, 1.0);
      nvlink = a->bw_bytes_per_s;
    } else {
      /* the NIC of node 1 on rail 1, to its leaf */
      const SimVertex *nic = x->kind == SIM_VERTEX_NIC ? x : y;
      g_assert_cmpint (nic->kind, ==, SIM_VERTEX_NIC);
      g_assert_cmpint (nic->node, ==, 1);
      g_assert_cmpstr (nic->id, ==, "n1-nic1");
      g_assert_cmpfloat_with_epsilon (a->bw_bytes_per_s, 50e9, 1.0);
      g_assert_cmpfloat_with_epsilon (b->bw_bytes_per_s, 12.5e9, 1.0);
    }
  }
  g_assert_cmpint (changed, ==, 2);
  g_assert_cmpfloat (nvlink, >, 0);
  /* the graph form: n1-gpu1's NIC n1-nic1 has one link to leaf0 */
  {
    g_autoptr (SimTopology) graph = load ("example-graph.xml", 0);
    g_autoptr (SimTopology) gc = sim_topology_copy_links (graph);
    g_assert_cmpint (sim_topology_slow_gpu_links (gc, 3, TRUE, 2.0), ==, 1);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/topology/dgx8x4", test_dgx8x4);
  g_test_add_func ("/topology/nodes-override", test_nodes_override);
  g_test_add_func ("/topology/names", test_names);
  g_test_add_func ("/topology/graph", test_graph);
  g_test_add_func ("/topology/shipped", test_shipped);
  g_test_add_func ("/topology/a100-40gb", test_a100_40gb);
  g_test_add_func ("/topology/grand-teton", test_grand_teton);
  g_test_add_func ("/topology/gemm", test_gemm);
  g_test_add_func ("/topology/slow-links", test_slow_links);
  return g_test_run ();
}
