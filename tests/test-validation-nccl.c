/* Validation: collectives against published nccl-tests outputs.
 *
 * 1. The 8x H100 all_reduce sweep of NVIDIA/dgxc-benchmarking
 *    (tests/validation/data/nccl-tests/h100x8-allreduce-dgxc-benchmarking.txt,
 *    rows dgxc_h100x8_allreduce_* of ../shared/validation/nccl_collectives.csv)
 *    on dgx8x4.xml with one node.  Tolerances from the issue: busbw within
 *    10 % from 64 MiB up, within 25 % from 1 MiB up, and the small-message
 *    latency floor (the fastest time up to 4 KiB) within 30 %.
 * 2. Other published outputs on clusters our topology files describe
 *    closely enough (same GPU, NVLink and 8 NICs of 400 Gb/s or 3,200 Gb/s
 *    EFA per node): the error is printed; the check is order of magnitude,
 *    |error| < 50 % from 1 GiB up.
 * 2b. Per algorithm (the check): each row from 64 MiB of the H100
 *    sweeps is put down to the algorithm NCCL ran and compared with the
 *    simulator forced to that algorithm; ring and NVLS within 5 % each on
 *    the DGX H100 sweep.  A row is NVLS when it is more than 5 % faster than
 *    the simulated ring (best protocol) could be: a ring on NVLink 4 moves
 *    at most ~370 GB/s (NVIDIA/nccl-tests#212), and NCCL runs all_reduce on
 *    NVLink SHARP by default where it can.  The ring's own check is its
 *    large-message bus bandwidth against that 370 GB/s (row
 *    gtc_nvlink4_sharp_slide, "370 (no SHARP)"); the H100 sweeps hold no
 *    ring row from 64 MiB.
 * 3. Two nodes of DGX H100 over NDR: NVIDIA's statement of 46-48 GB/s per
 *    NIC (NVIDIA/nccl-tests#290, row issue_nccltests290_ndr_per_nic) against
 *    the simulated ring's per-NIC rate, within 15 % of 47 GB/s.
 * Every table is printed into the test log. */
#include <glib.h>
#include <math.h>
#include <stdio.h>

#include "sim-compare.h"
#include "test-util.h"

static GArray *
compare (const char *file, const char *topology, int nodes, SimCollOp op, int ranks)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (SIM_SOURCE_DIR, "tests", "validation", "data",
                                            "nccl-tests", file, NULL);
  g_autoptr (SimNcclResult) m = sim_nccl_parse_file (path, &error);
  g_autoptr (SimTopology) t = test_load_topology (topology, nodes);
  GArray *rows = NULL;
  g_assert_no_error (error);
  rows = sim_compare_nccl (t, m, op, ranks, SIM_ALGO_AUTO, &error);
  g_assert_no_error (error);
  printf ("# %s on %s (%d node%s), %s, %d GPUs\n", file, topology, nodes, nodes == 1 ? "" : "s",
          sim_coll_op_name (op), ranks);
  printf ("# %12s %10s %10s %11s %11s %8s  %s\n", "size (B)", "meas us", "sim us", "meas GB/s",
          "sim GB/s", "error %", "algo");
  for (guint i = 0; i < rows->len; i++) {
    const SimComparison *c = &g_array_index (rows, SimComparison, i);
    printf ("#   %12" G_GUINT64_FORMAT " %10.2f %10.2f %11.2f %11.2f %+8.1f  %s/%s\n", c->size_bytes,
            c->measured_us, c->simulated_us, c->measured_busbw_GBps, c->simulated_busbw_GBps,
            c->error_pct, sim_algo_name (c->choice.algo), sim_proto_name (c->choice.proto));
  }
  return rows;
}

static void
test_dgxc_h100x8 (void)
{
  g_autoptr (GArray) rows = compare ("h100x8-allreduce-dgxc-benchmarking.txt", "dgx8x4.xml", 1,
                                     SIM_OP_ALL_REDUCE, 8);
  double floor_meas = G_MAXDOUBLE, floor_sim = 0, floor_err = 0;
  int out = 0;
  for (guint i = 0; i < rows->len; i++) {
    const SimComparison *c = &g_array_index (rows, SimComparison, i);
    double tol = c->size_bytes >= (64u << 20) ? 10.0 : c->size_bytes >= (1u << 20) ? 25.0 : -1;
    if (c->size_bytes <= 4096) {
      floor_meas = MIN (floor_meas, c->measured_us);
      floor_sim = c->size_bytes == 8 ? c->simulated_us : floor_sim;
    }
    if (tol > 0 && fabs (c->error_pct) > tol) {
      printf ("#   OUT OF TOLERANCE: %" G_GUINT64_FORMAT " B: %+.1f %% (tolerance %.0f %%)\n",
              c->size_bytes, c->error_pct, tol);
      out++;
    }
  }
  floor_err = (floor_sim - floor_meas) / floor_meas * 100.0;
  printf ("# latency floor: measured %.2f us, simulated %.2f us, error %+.1f %% (tolerance 30 %%)\n",
          floor_meas, floor_sim, floor_err);
  printf ("# mean |error|: %.1f %% from 1 MiB, %.1f %% from 64 MiB; %d sizes out of tolerance\n",
          sim_compare_mean_abs_error (rows, 1u << 20), sim_compare_mean_abs_error (rows, 64u << 20), out);
  g_assert_cmpint (out, ==, 0);
  g_assert_cmpfloat (fabs (floor_err), <=, 30.0);
}

/* the simulated time of size bytes in rows, which are in size order */
static const SimComparison *
find_row (GArray *rows, guint64 size)
{
  for (guint i = 0; i < rows->len; i++)
    if (g_array_index (rows, SimComparison, i).size_bytes == size)
      return &g_array_index (rows, SimComparison, i);
  return NULL;
}

/* prints the rows from 64 MiB by the algorithm NCCL ran; returns the
 * largest |error| of each against the simulator forced to it */
static void
per_algorithm (const char *file, const char *topology, double *worst_ring, double *worst_nvls,
               int *n_ring, int *n_nvls)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (SIM_SOURCE_DIR, "tests", "validation", "data",
                                            "nccl-tests", file, NULL);
  g_autoptr (SimNcclResult) m = sim_nccl_parse_file (path, &error);
  g_autoptr (SimTopology) t = test_load_topology (topology, 1);
  g_autoptr (GArray) ring = NULL;
  g_autoptr (GArray) nvls = NULL;
  g_assert_no_error (error);
  ring = sim_compare_nccl (t, m, SIM_OP_ALL_REDUCE, 8, SIM_ALGO_RING, &error);
  g_assert_no_error (error);
  nvls = sim_compare_nccl (t, m, SIM_OP_ALL_REDUCE, 8, SIM_ALGO_NVLS, &error);
  g_assert_no_error (error);
  *worst_ring = *worst_nvls = 0;
  *n_ring = *n_nvls = 0;
  printf ("# %s on %s, all_reduce, 8 GPUs, by the algorithm NCCL ran (from 64 MiB)\n", file, topology);
  printf ("# %6s %12s %10s %10s %11s %11s %8s\n", "algo", "size (B)", "meas us", "sim us",
          "meas GB/s", "sim GB/s", "error %");
  for (int pass = 0; pass < 2; pass++)
    for (guint i = 0; i < ring->len; i++) {
      const SimComparison *r = &g_array_index (ring, SimComparison, i);
      const SimComparison *c = find_row (nvls, r->size_bytes);
      gboolean is_nvls = r->measured_us < 0.95 * r->simulated_us;
      if (r->size_bytes < (64u << 20) || is_nvls != (pass == 1))
        continue;
      c = is_nvls ? c : r;
      printf ("# %6s %12" G_GUINT64_FORMAT " %10.2f %10.2f %11.2f %11.2f %+8.1f\n",
              is_nvls ? "nvls" : "ring", c->size_bytes, c->measured_us, c->simulated_us,
              c->measured_busbw_GBps, c->simulated_busbw_GBps, c->error_pct);
      if (is_nvls) {
        *worst_nvls = MAX (*worst_nvls, fabs (c->error_pct));
        (*n_nvls)++;
      } else {
        *worst_ring = MAX (*worst_ring, fabs (c->error_pct));
        (*n_ring)++;
      }
    }
  printf ("# worst |error|: ring %.1f %% over %d rows, nvls %.1f %% over %d rows\n", *worst_ring,
          *n_ring, *worst_nvls, *n_nvls);
}

/* the ring's plateau: 16 GiB alone on 8 H100s, bus bandwidth vs 370 GB/s */
static double
ring_plateau_busbw (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  g_autoptr (SimEngine) e = sim_engine_new ();
  g_autoptr (SimNetwork) net = sim_network_new (t, e);
  int g[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  double s = 17179869184.0;
  SimCollChoice c;
  g_assert_true (sim_collective_choose (net, SIM_OP_ALL_REDUCE, g, 8, s, SIM_ALGO_RING,
                                        SIM_PROTO_AUTO, &c, NULL));
  return s / c.predicted_s * 1.75 / 1e9;
}

static void
test_per_algorithm (void)
{
  double ring = 0, nvls = 0, plateau = ring_plateau_busbw ();
  int n_ring = 0, n_nvls = 0;
  /* the main sweep: asserted */
  per_algorithm ("h100x8-allreduce-dgxc-benchmarking.txt", "dgx8x4.xml", &ring, &nvls, &n_ring,
                 &n_nvls);
  printf ("# ring plateau (16 GiB): simulated %.1f GB/s, NVIDIA 370 (nccl-tests#212, "
          "gtc_nvlink4_sharp_slide): error %+.1f %%\n",
          plateau, (plateau - 370.0) / 370.0 * 100);
  g_assert_cmpint (n_nvls, >, 0);
  g_assert_cmpfloat (nvls, <=, 5.0);
  g_assert_cmpfloat (ring, <=, 5.0);
  g_assert_cmpfloat (fabs (plateau - 370.0) / 370.0, <=, 0.05);
  /* an older NCCL on p5 (its NVLS ramps later: 442-444 GB/s at 1-2 GiB
   * where the DGX sweep has 466-473): printed only */
  per_algorithm ("h100x8-p5-allreduce-awsbatch.txt", "dgx8x4.xml", &ring, &nvls, &n_ring, &n_nvls);
}

static void
check_order (const char *file, const char *topology, int nodes, SimCollOp op, int ranks)
{
  g_autoptr (GArray) rows = compare (file, topology, nodes, op, ranks);
  double worst = 0;
  for (guint i = 0; i < rows->len; i++) {
    const SimComparison *c = &g_array_index (rows, SimComparison, i);
    if (c->size_bytes >= (1u << 30))
      worst = MAX (worst, fabs (c->error_pct));
  }
  printf ("# worst |error| from 1 GiB: %.1f %% (order of magnitude: below 50 %%)\n", worst);
  g_assert_cmpfloat (worst, <, 50.0);
}

static void
test_other_outputs (void)
{
  /* A100: NVLink3 300 GB/s, DGX A100 */
  check_order ("a100x8-allreduce-g8-singleproc-blog.txt", "dgx-a100.xml", 1, SIM_OP_ALL_REDUCE, 8);
  check_order ("a100x8-allreduce-mpirun-np8-blog.txt", "dgx-a100.xml", 1, SIM_OP_ALL_REDUCE, 8);
  /* H100 p5 on one node: same NVLink as DGX H100 */
  check_order ("h100x8-p5-allreduce-awsbatch.txt", "dgx8x4.xml", 1, SIM_OP_ALL_REDUCE, 8);
  /* two p5 nodes: 32 x 100 Gb/s EFA = 3,200 Gb/s per node, as 8 x 400 Gb/s */
  check_order ("h100x16-2node-p5-efa-allreduce-awsome.txt", "dgx8x4.xml", 2, SIM_OP_ALL_REDUCE, 16);
  /* two H200 nodes on 8 x 400 Gb/s RoCE (Spectrum-X; GCP a3-ultra) */
  check_order ("h200x16-2node-spectrumx-roce-allreduce-g8x2proc-ncclt2.18.txt", "dgx-h200.xml", 2,
               SIM_OP_ALL_REDUCE, 16);
  check_order ("h200x16-2node-a3ultra-rdma-allgather-gcp.txt", "dgx-h200.xml", 2, SIM_OP_ALL_GATHER, 16);
}

/* per NIC: a ring over 2 DGX H100 nodes sends 2(n-1)/n S through 8 NICs */
static void
test_ndr_per_nic (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 2);
  g_autoptr (SimEngine) e = sim_engine_new ();
  g_autoptr (SimNetwork) net = sim_network_new (t, e);
  int g[16];
  SimCollChoice c;
  double s = 8589934592.0, per_nic = 0;
  for (int i = 0; i < 16; i++)
    g[i] = i;
  g_assert_true (sim_collective_choose (net, SIM_OP_ALL_REDUCE, g, 16, s, SIM_ALGO_RING,
                                        SIM_PROTO_AUTO, &c, NULL));
  per_nic = s * 2.0 * 15 / 16 / c.predicted_s / 8 / 1e9;
  printf ("# 2 x DGX H100, NDR: simulated %.1f GB/s per NIC, NVIDIA says 46-48: error %+.1f %% vs 47\n",
          per_nic, (per_nic - 47.0) / 47.0 * 100);
  g_assert_cmpfloat (fabs (per_nic - 47.0) / 47.0, <, 0.15);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/validation/nccl/dgxc-h100x8", test_dgxc_h100x8);
  g_test_add_func ("/validation/nccl/per-algorithm", test_per_algorithm);
  g_test_add_func ("/validation/nccl/other-outputs", test_other_outputs);
  g_test_add_func ("/validation/nccl/ndr-per-nic", test_ndr_per_nic);
  return g_test_run ();
}
