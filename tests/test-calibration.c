/* Unit tests of the calibration fits (sim-calibration.h). */
#include <glib.h>
#include <math.h>

#include "sim-calibration.h"
#include "sim-error.h"
#include "test-util.h"

static const char *bench_text =
    "# sim-microbench/1\n# program: test\n# gpu: test\n"
    "kind,op,dtype,m,n,k,bytes,gpus,time_us,rate_per_s\n"
    "gemm,matmul,bf16,4096,4096,4096,,1,180.0,7.6e14\n"
    "gemm,matmul,bf16,8192,8192,8192,,1,1400.0,7.8e14\n"
    "gemm,matmul,fp8,8192,8192,8192,,1,800.0,1.37e15\n"
    "hbm,triad,bf16,,,,1073741824,1,400.0,3.0e12\n"
    "hbm,copy,bf16,,,,1073741824,1,420.0,2.8e12\n"
    "nccl,all_reduce,bf16,,,,134217728,8,380.0,3.5e11\n"
    "nccl,all_reduce,bf16,,,,268435456,8,700.0,4.0e11\n"
    "nccl,all_reduce,bf16,,,,536870912,8,1300.0,4.2e11\n";

/* The bf16 GEMM rows become the table (2 of the 3; fp8 is not bf16); the
 * highest HBM rate wins (3.0 TB/s triad over 2.8 copy); the link's rate is
 * the mean bus bandwidth from 256 MiB up: (400 + 420) / 2 = 410 GB/s, the
 * 128 MiB row left out. */
static void
test_rates (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimMicrobench) b = sim_microbench_parse_text ("t.csv", bench_text, &error);
  g_autoptr (SimCalibration) c = g_new0 (SimCalibration, 1);
  g_autoptr (SimNcclResult) r = NULL;
  g_assert_no_error (error);
  g_assert_cmpuint (sim_calibration_fit_gemm (c, b), ==, 2);
  g_assert_cmpuint (c->gemm->len, ==, 2);
  g_assert_cmpfloat (g_array_index (c->gemm, SimGemmPoint, 1).flop_per_s, ==, 7.8e14);
  sim_calibration_fit_hbm (c, b);
  g_assert_cmpfloat (c->hbm_bw_bytes_per_s, ==, 3.0e12);
  r = sim_calibration_nccl_from_bench (b, "t.csv");
  g_assert_cmpuint (r->rows->len, ==, 3);
  g_assert_cmpint (r->ranks, ==, 8);
  g_assert_true (sim_calibration_fit_link (c, SIM_LINK_NVLINK, r, &error));
  g_assert_cmpfloat_with_epsilon (c->link_bw[SIM_LINK_NVLINK], 410e9, 1e3);
  g_assert_cmpfloat (c->link_bw[SIM_LINK_PCIE], ==, 0);
}

/* The latency fit on the published DGX H100 all_reduce sweep
 * (tests/validation/data/nccl-tests/h100x8-allreduce-dgxc-benchmarking.txt):
 * after the fit, the median of simulated / measured time over the sizes up
 * to 64 KiB is 1 (bisection to 1e-6); the topology is left as loaded (its
 * scale still 0: as tuned), and a sweep with no latency-bound row is
 * refused. */
static void
test_latency (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  g_autofree char *path = g_build_filename (SIM_SOURCE_DIR, "tests", "validation", "data", "nccl-tests",
                                            "h100x8-allreduce-dgxc-benchmarking.txt", NULL);
  g_autoptr (SimNcclResult) m = sim_nccl_parse_file (path, &error);
  SimLatencyFit fit;
  g_assert_no_error (error);
  g_assert_true (sim_calibration_fit_latency (t, m, SIM_LINK_NVLINK, &fit, &error));
  g_assert_no_error (error);
  g_assert_cmpint (fit.rows, >, 5);
  g_assert_cmpfloat (fit.scale, >, 0.5);
  g_assert_cmpfloat (fit.scale, <, 2.0);
  g_assert_cmpfloat_with_epsilon (fit.after, 1.0, 1e-3);
  g_assert_cmpfloat (fabs (fit.before - 1.0), >, fabs (fit.after - 1.0));
  g_assert_cmpfloat (t->coll_latency_scale[SIM_LINK_NVLINK], ==, 0);
  {
    SimNcclResult big = *m;
    g_autoptr (GArray) rows = g_array_new (FALSE, FALSE, sizeof (SimNcclRow));
    for (guint i = 0; i < m->rows->len; i++)
      if (g_array_index (m->rows, SimNcclRow, i).size_bytes > (64u << 10))
        g_array_append_val (rows, g_array_index (m->rows, SimNcclRow, i));
    big.rows = rows;
    g_assert_false (sim_calibration_fit_latency (t, &big, SIM_LINK_NVLINK, &fit, &error));
    g_assert_error (error, SIM_ERROR, SIM_ERROR_USAGE);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/calibration/rates", test_rates);
  g_test_add_func ("/calibration/latency", test_latency);
  return g_test_run ();
}
