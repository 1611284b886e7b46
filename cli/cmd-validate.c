/* cmd-validate.c — `sim validate --nccl FILE`: measured vs simulated */
#include <math.h>
#include <stdio.h>

#include "sim-microbench.h"
#include "cli.h"
#include "sim-gemm.h"
#include "sim-validate.h"
#include "sim-error.h"
#include "sim-paths.h"

static const char *usage =
    "usage: sim validate --topology FILE|NAME [--nodes N] [--calibration FILE] [--max-error PERCENT]\n"
    "                    [--nccl FILE [--op OP] [--gpus N] [--algo ring|tree|hier|nvls|nvlstree|auto]]\n"
    "                    [--gemm gemm.csv] [--hbm hbm.csv]\n"
    "\n"
    "Reads nccl-tests output (all_reduce_perf, alltoall_perf and friends, as printed),\n"
    "simulates the same collective at every size on the first N GPUs of the topology\n"
    "and prints measured vs simulated bus bandwidth (GB/s, GB = 10^9 bytes) with the\n"
    "error per size.  --op and --gpus are needed when the output does not say them.\n"
    "--gemm and --hbm take microbench/ CSVs and compare each measured rate with the\n"
    "topology's GPU model.  With --max-error the command exits 1 when a mean absolute\n"
    "error is above it.\n";

static double
validate_bench (const SimTopology *topo, const char *path, const char *kind, GError **error)
{
  g_autoptr (SimMicrobench) b = sim_microbench_parse_file (path, error);
  const SimGpuType *gpu = sim_topology_gpu_type (topo, 0);
  double sum = 0;
  int n = 0;
  if (b == NULL)
    return -1;
  printf ("# sim validate --%s: %s (%s) against %s\n", kind, path,
          sim_microbench_header (b, "gpu") != NULL ? sim_microbench_header (b, "gpu") : "GPU not recorded", gpu->name);
  if (g_str_equal (kind, "gemm"))
    printf ("#%8s %8s %8s %12s %12s %8s\n", "m", "n", "k", "meas TFLOP/s", "sim TFLOP/s", "error");
  else
    printf ("#%12s %8s %12s %12s %8s\n", "bytes", "op", "meas GB/s", "sim GB/s", "error");
  for (guint i = 0; i < b->rows->len; i++) {
    const SimMicrobenchRow *r = &g_array_index (b->rows, SimMicrobenchRow, i);
    double sim, err;
    if (!g_str_equal (r->kind, kind))
      continue;
    if (g_str_equal (kind, "gemm")) {
      sim = 2.0 * r->m * r->n * r->k / sim_gemm_time (gpu, r->m, r->n, r->k);
      err = (sim - r->rate_per_s) / r->rate_per_s * 100;
      printf (" %8.0f %8.0f %8.0f %12.1f %12.1f %+7.1f%%\n", r->m, r->n, r->k, r->rate_per_s / 1e12, sim / 1e12, err);
    } else {
      sim = gpu->hbm_bw_bytes_per_s;
      err = (sim - r->rate_per_s) / r->rate_per_s * 100;
      printf (" %12.0f %8s %12.1f %12.1f %+7.1f%%\n", r->bytes, r->op, r->rate_per_s / 1e9, sim / 1e9, err);
    }
    sum += fabs (err);
    n++;
  }
  if (n == 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s: expected %s rows", path, kind);
    return -1;
  }
  printf ("# %s: mean absolute error %.1f %% over %d points\n", kind, sum / n, n);
  return sum / n;
}

static gboolean
parse_max_error (const char *max_s, double *max_error, GError **error)
{
  char *end = NULL;

  *max_error = g_ascii_strtod (max_s, &end);
  if (end == max_s || (*end != '\0' && !g_str_equal (end, "%")) || !(*max_error >= 0) || !isfinite (*max_error)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--max-error: expected a percentage such as 10, got '%s'", max_s);
    return FALSE;
  }
  return TRUE;
}

/* --gemm and --hbm against the topology's GPU; *worst is the larger mean
 * absolute error (0 when neither is given) */
static gboolean
validate_rates (const char *topology, int nodes, const char *calibration, const char *gemm,
                const char *hbm, double *worst, GError **error)
{
  g_autoptr (SimTopology) t = sim_cli_load_topology (topology, nodes, 0, calibration, error);

  *worst = 0;
  if (t == NULL)
    return FALSE;
  if (gemm != NULL) {
    double e = validate_bench (t, gemm, "gemm", error);
    if (e < 0)
      return FALSE;
    *worst = MAX (*worst, e);
  }
  if (hbm != NULL) {
    double e = validate_bench (t, hbm, "hbm", error);
    if (e < 0)
      return FALSE;
    *worst = MAX (*worst, e);
  }
  return TRUE;
}

/* the collective and the GPU count: the output's own, or --op and --gpus */
static gboolean
resolve_op_and_ranks (const SimNcclResult *measured, const char *nccl, const char *op_s,
                      const char *gpus_s, SimCollOp *op, int *ranks, GError **error)
{
  SimCollOp nop = measured->op;

  if (op_s != NULL && !sim_nccl_op_parse (op_s, &nop)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--op: expected all_reduce, all_gather, reduce_scatter, broadcast, sendrecv or all_to_all, got '%s'", op_s);
    return FALSE;
  }
  if (nop == SIM_OP_UNKNOWN) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s: the output does not name its collective; give --op (for example --op all_reduce)", nccl);
    return FALSE;
  }
  *op = nop;
  if (!sim_coll_op_simulated (*op)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s: %s is not modelled; expected all_reduce, all_gather, reduce_scatter, broadcast, sendrecv or all_to_all",
                 nccl, sim_coll_op_name (nop));
    return FALSE;
  }
  *ranks = measured->ranks;
  if (gpus_s != NULL && !sim_cli_int ("gpus", gpus_s, 1, 1 << 20, ranks, error))
    return FALSE;
  if (*ranks < 1) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s: the output does not list its GPUs; give --gpus N", nccl);
    return FALSE;
  }
  return TRUE;
}

/* measured vs simulated, size by size; returns the mean absolute error */
static double
print_nccl_rows (const char *nccl, const SimNcclResult *measured, SimCollOp op, int ranks,
                 SimAlgo algo, const SimTopology *topo, GArray *rows)
{
  double mean = 0;

  printf ("# sim validate: %s\n", nccl);
  printf ("# %s on %d GPUs%s%s, measured vs %s on %s (%s)\n", sim_coll_op_name (op), ranks,
          measured->gpu_name != NULL ? " of " : "", measured->gpu_name != NULL ? measured->gpu_name : "",
          sim_algo_name (algo), topo->name, sim_topology_gpu_type (topo, 0)->name);
  printf ("#%12s  %10s  %10s  %10s  %10s  %8s  %s\n", "size", "measured", "simulated", "measured",
          "simulated", "error", "algo/proto");
  printf ("#%12s  %10s  %10s  %10s  %10s  %8s\n", "(B)", "(us)", "(us)", "busbw GB/s", "busbw GB/s", "(%)");
  for (guint i = 0; i < rows->len; i++) {
    const SimValidationRow *c = &g_array_index (rows, SimValidationRow, i);
    printf (" %12" G_GUINT64_FORMAT "  %10.2f  %10.2f  %10.2f  %10.2f  %+8.1f  %s/%s\n", c->size_bytes,
            c->measured_us, c->simulated_us, c->measured_busbw_GBps, c->simulated_busbw_GBps,
            c->error_pct, sim_algo_name (c->choice.algo), sim_proto_name (c->choice.proto));
  }
  mean = sim_validate_mean_abs_error (rows, 0);
  printf ("# mean absolute error %.1f %% over %u sizes", mean, rows->len);
  printf ("; %.1f %% from 1 MiB; %.1f %% from 64 MiB\n", sim_validate_mean_abs_error (rows, 1u << 20),
          sim_validate_mean_abs_error (rows, 64u << 20));
  return mean;
}

int
sim_cmd_validate (int argc, char **argv, GError **error)
{
  g_autofree char *nccl = NULL, *topology = NULL, *nodes_s = NULL, *op_s = NULL;
  g_autofree char *gpus_s = NULL, *algo_s = NULL, *max_s = NULL;
  g_autofree char *gemm = NULL, *hbm = NULL, *calibration = NULL;
  g_autoptr (SimNcclResult) measured = NULL;
  g_autoptr (SimTopology) topo = NULL;
  g_autoptr (GArray) rows = NULL;
  gboolean help = FALSE;
  const SimCliOption options[] = {
    { "nccl", TRUE, &nccl, NULL, NULL }, { "topology", TRUE, &topology, NULL, NULL },
    { "nodes", TRUE, &nodes_s, NULL, NULL }, { "op", TRUE, &op_s, NULL, NULL },
    { "gpus", TRUE, &gpus_s, NULL, NULL }, { "algo", TRUE, &algo_s, NULL, NULL },
    { "max-error", TRUE, &max_s, NULL, NULL }, { "help", FALSE, NULL, &help, NULL },
    { "gemm", TRUE, &gemm, NULL, NULL }, { "hbm", TRUE, &hbm, NULL, NULL },
    { "calibration", TRUE, &calibration, NULL, NULL },
    { NULL, FALSE, NULL, NULL, NULL },
  };
  int nodes = 0, ranks = 0;
  SimCollOp op = SIM_OP_ALL_REDUCE;
  SimAlgo algo = SIM_ALGO_AUTO;
  double max_error = NAN, mean = 0, worst = 0;

  if (!sim_cli_parse (argc, argv, 2, options, "validate", error))
    return 2;
  if (help) {
    fputs (usage, stdout);
    return 0;
  }
  if (topology == NULL || (nccl == NULL && gemm == NULL && hbm == NULL)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "validate: expected --topology T and at least one of --nccl, --gemm, --hbm; see sim validate --help");
    return 2;
  }
  if (nodes_s != NULL && !sim_cli_int ("nodes", nodes_s, 1, 65536, &nodes, error))
    return 2;
  if (algo_s != NULL && !sim_algo_parse (algo_s, &algo)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--algo: expected ring, tree, hier, nvls, nvlstree or auto, got '%s'", algo_s);
    return 2;
  }
  if (max_s != NULL && !parse_max_error (max_s, &max_error, error))
    return 2;
  if (!validate_rates (topology, nodes, calibration, gemm, hbm, &worst, error))
    return 2;
  if (nccl == NULL) {
    if (!isnan (max_error) && worst > max_error) {
      fprintf (stderr, "sim: validate: mean absolute error %.1f %% is above --max-error %.1f %%\n", worst, max_error);
      return 1;
    }
    return 0;
  }
  measured = sim_nccl_parse_file (nccl, error);
  if (measured == NULL)
    return 2;
  if (!resolve_op_and_ranks (measured, nccl, op_s, gpus_s, &op, &ranks, error))
    return 2;
  topo = sim_cli_load_topology (topology, nodes, 0, calibration, error);
  if (topo == NULL)
    return 2;
  rows = sim_validate_nccl (topo, measured, op, ranks, algo, error);
  if (rows == NULL) {
    /* the library says the quantities; the flag that changes them is ours */
    if (ranks > sim_topology_n_gpus (topo) && g_error_matches (*error, SIM_ERROR, SIM_ERROR_USAGE)) {
      char *old = (*error)->message;
      (*error)->message = g_strdup_printf ("%s (use --nodes)", old);
      g_free (old);
    }
    return 2;
  }
  mean = print_nccl_rows (nccl, measured, op, ranks, algo, topo, rows);
  if (!isnan (max_error) && mean > max_error) {
    fprintf (stderr, "sim: validate: mean absolute error %.1f %% is above --max-error %.1f %%\n", mean, max_error);
    return 1;
  }
  return 0;
}
