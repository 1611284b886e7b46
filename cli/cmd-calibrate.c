/* cmd-calibrate.c — `sim calibrate`: microbenchmark measurements into a
 * calibration file (sim/sim-calibration.h).
 *
 * The fits, all from the measured points themselves:
 *   GEMM  the measured (m, n, k, rate) points become the GPU's GEMM table
 *         (the simulator interpolates between them, sim-gemm.h);
 *   HBM   the highest sustained rate among the copy and triad rows;
 *   links the bus bandwidth a ring all_reduce reaches on the largest sizes
 *         (the mean of the rows from 256 MiB up, or the largest row): the
 *         bandwidth transfers achieve on the link kind the measurement
 *         crossed (--link, nvlink for one node by default);
 *   latency with --topology: all_reduce up to 64 KiB is latency-bound;
 *         the per-hop latency of NCCL's tuning model for the link kind is
 *         scaled until the median of simulated / measured time over those
 *         sizes on the topology is 1 (bisection: every simulated time grows
 *         with the scale).  NCCL's base (launch) latency stays as tuned. */
#include <math.h>
#include <string.h>
#include <stdio.h>

#include "sim-bench.h"
#include "sim-calibration.h"
#include "sim-compare.h"
#include "cli.h"
#include "sim-error.h"
#include "sim-io.h"
#include "sim-nccl.h"

static const char *usage =
    "usage: sim calibrate [--gemm gemm.csv] [--hbm hbm.csv] [--nccl FILE] [--link nvlink|infiniband|...]\n"
    "                     [--topology T [--nodes N] [--gpus N]] --gpu NAME -o calib.xml\n"
    "\n"
    "Fits the measurements of microbench/ (sim-microbench/1 CSV; --nccl also takes the\n"
    "text nccl-tests prints) into a calibration file that a topology includes\n"
    "(<gpu-type calibration=\"FILE\">) or --calibration FILE applies.\n"
    "--nccl gives the link's achieved bandwidth; with --topology (the cluster the\n"
    "all_reduce ran on) it also fits the link's per-hop latency to the smallest size.\n";

/* all_reduce rows of a microbench CSV as nccl-tests rows */
static SimNcclResult *
nccl_from_bench (const SimBench *b, const char *path)
{
  SimNcclResult *r = g_new0 (SimNcclResult, 1);
  r->path = g_strdup (path);
  r->op = SIM_NCCL_ALL_REDUCE;
  r->rows = g_array_new (FALSE, TRUE, sizeof (SimNcclRow));
  r->avg_busbw_GBps = NAN;
  for (guint i = 0; i < b->rows->len; i++) {
    const SimBenchRow *br = &g_array_index (b->rows, SimBenchRow, i);
    SimNcclRow row = { 0 };
    if (!g_str_equal (br->kind, "nccl") || !g_str_equal (br->op, "all_reduce"))
      continue;
    row.size_bytes = br->bytes;
    row.count = br->bytes / 4;
    row.time_us = br->time_us;
    row.busbw_GBps = br->rate_per_s / 1e9;
    row.algbw_GBps = br->time_us > 0 ? br->bytes / (br->time_us * 1e3) : 0;
    row.time_us_inplace = NAN;
    row.busbw_GBps_inplace = NAN;
    r->ranks = br->gpus;
    g_array_append_val (r->rows, row);
  }
  return r;
}

static double
busbw_from_nccl_text (const char *path, int *ranks, GError **error)
{
  g_autoptr (SimNcclResult) r = sim_nccl_parse_file (path, error);
  double sum = 0, largest = 0;
  guint64 largest_size = 0;
  int n = 0;
  if (r == NULL)
    return -1;
  *ranks = r->ranks;
  for (guint i = 0; i < r->rows->len; i++) {
    const SimNcclRow *row = &g_array_index (r->rows, SimNcclRow, i);
    if (row->size_bytes >= (256u << 20)) {
      sum += row->busbw_GBps * 1e9;
      n++;
    }
    if (row->size_bytes > largest_size) {
      largest_size = row->size_bytes;
      largest = row->busbw_GBps * 1e9;
    }
  }
  return n > 0 ? sum / n : largest;
}

/* Latency-bound sizes: up to 64 KiB a ring all_reduce on 8 GPUs moves
 * 2 (n-1)/n x 64 KiB = 115 kB per GPU, 0.25 us at 450 GB/s, against a
 * latency of 13-20 us (the dgxc H100 measurement): the time is latency. */
#define LATENCY_BOUND_BYTES (64u << 10)

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* the median over the rows of m of simulated / measured time, on topo with
 * the latency of link kind `kind` scaled by s */
static double
median_ratio (SimTopology *topo, const SimNcclResult *m, int kind, double s, GError **error)
{
  g_autoptr (GArray) cmp = NULL;
  g_autofree double *r = NULL;
  topo->coll_latency_scale[kind] = s;
  cmp = sim_compare_nccl (topo, m, SIM_OP_ALL_REDUCE, m->ranks, SIM_ALGO_AUTO, error);
  if (cmp == NULL || cmp->len == 0)
    return -1;
  r = g_new (double, cmp->len);
  for (guint i = 0; i < cmp->len; i++) {
    const SimComparison *c = &g_array_index (cmp, SimComparison, i);
    r[i] = c->simulated_us / c->measured_us;
  }
  qsort (r, cmp->len, sizeof (double), cmp_double);
  return cmp->len % 2 ? r[cmp->len / 2] : 0.5 * (r[cmp->len / 2 - 1] + r[cmp->len / 2]);
}

/* Fit the latency scale of link kind `kind` (see the top of this file): the
 * scale at which the median of simulated / measured time over the
 * latency-bound rows is 1 (a median, so one noisy size does not move it).
 * *scale is 0 when no scale from 0.01 to 100 reaches it. */
static gboolean
fit_latency (SimTopology *topo, const SimNcclResult *all, int kind, double *scale, int *n_rows,
             double *before, double *after, GError **error)
{
  SimNcclResult bound = *all;
  double lo = 0.01, hi = 100.0, f_lo, f_hi;
  g_autoptr (GArray) rows = g_array_new (FALSE, FALSE, sizeof (SimNcclRow));

  *scale = 0;
  for (guint i = 0; i < all->rows->len; i++) {
    const SimNcclRow *r = &g_array_index (all->rows, SimNcclRow, i);
    if (r->size_bytes > 0 && r->size_bytes <= LATENCY_BOUND_BYTES && r->time_us > 0)
      g_array_append_val (rows, *r);
  }
  *n_rows = (int) rows->len;
  if (rows->len == 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s: expected all_reduce rows of 64 KiB or less to fit the latency", all->path);
    return FALSE;
  }
  bound.rows = rows;
  if ((*before = median_ratio (topo, &bound, kind, 1.0, error)) < 0 ||
      (f_lo = median_ratio (topo, &bound, kind, lo, error)) < 0 ||
      (f_hi = median_ratio (topo, &bound, kind, hi, error)) < 0)
    return FALSE;
  if (f_lo > 1.0 || f_hi < 1.0) {
    topo->coll_latency_scale[kind] = 0;
    return TRUE;
  }
  /* geometric bisection: the scale spans four decades */
  for (int it = 0; it < 60; it++) {
    double mid = sqrt (lo * hi), f = median_ratio (topo, &bound, kind, mid, error);
    if (f < 0)
      return FALSE;
    if (f < 1.0)
      lo = mid;
    else
      hi = mid;
  }
  *scale = sqrt (lo * hi);
  *after = median_ratio (topo, &bound, kind, *scale, error);
  topo->coll_latency_scale[kind] = 0;
  return *after >= 0;
}

int
sim_cmd_calibrate (int argc, char **argv, GError **error)
{
  g_autofree char *gemm = NULL, *hbm = NULL, *nccl = NULL, *gpu = NULL, *out = NULL, *link = NULL;
  g_autofree char *topology = NULL, *nodes_s = NULL, *gpus_s = NULL;
  g_autoptr (SimNcclResult) measured = NULL;
  int nodes = 0, gpus = 0;
  g_autoptr (SimCalibration) c = g_new0 (SimCalibration, 1);
  g_autoptr (GString) summary = g_string_new (NULL);
  g_autofree char *xml = NULL;
  g_autoptr (GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *date = g_date_time_format_iso8601 (now);
  g_autoptr (GString) source = g_string_new (NULL);
  gboolean help = FALSE;
  const SimCliOption options[] = {
    { "gemm", TRUE, &gemm, NULL, NULL }, { "hbm", TRUE, &hbm, NULL, NULL }, { "nccl", TRUE, &nccl, NULL, NULL },
    { "link", TRUE, &link, NULL, NULL }, { "gpu", TRUE, &gpu, NULL, NULL }, { "output", TRUE, &out, NULL, NULL },
    { "topology", TRUE, &topology, NULL, NULL }, { "nodes", TRUE, &nodes_s, NULL, NULL },
    { "gpus", TRUE, &gpus_s, NULL, NULL },
    { "help", FALSE, NULL, &help, NULL }, { NULL, FALSE, NULL, NULL, NULL },
  };
  int link_kind = SIM_LINK_NVLINK;

  /* -o is --output */
  for (int i = 2; i < argc; i++)
    if (g_str_equal (argv[i], "-o"))
      argv[i] = (char *) "--output";
  if (!sim_cli_parse (argc, argv, 2, options, "calibrate", error))
    return 2;
  if (help) {
    fputs (usage, stdout);
    return 0;
  }
  if (out == NULL || gpu == NULL || (gemm == NULL && hbm == NULL && nccl == NULL)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "calibrate: expected --gpu NAME, -o FILE and at least one of --gemm, --hbm, --nccl; see sim calibrate --help");
    return 2;
  }
  if ((nodes_s != NULL && !sim_cli_int ("nodes", nodes_s, 1, 65536, &nodes, error)) ||
      (gpus_s != NULL && !sim_cli_int ("gpus", gpus_s, 2, 1 << 20, &gpus, error)))
    return 2;
  if (topology != NULL && nccl == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "calibrate: --topology fits the latency of --nccl; expected --nccl FILE too");
    return 2;
  }
  if (link != NULL) {
    link_kind = -1;
    for (int k = 0; k < 4; k++)
      if (g_str_equal (link, sim_link_kind_name ((SimLinkKind) k)))
        link_kind = k;
    if (link_kind < 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--link: expected nvlink, pcie, infiniband or ethernet, got '%s'", link);
      return 2;
    }
  }
  c->gpu = g_strdup (gpu);
  c->gemm = g_array_new (FALSE, FALSE, sizeof (SimGemmPoint));
  if (gemm != NULL) {
    g_autoptr (SimBench) b = sim_bench_parse_file (gemm, error);
    if (b == NULL)
      return 2;
    for (guint i = 0; i < b->rows->len; i++) {
      const SimBenchRow *r = &g_array_index (b->rows, SimBenchRow, i);
      SimGemmPoint p = { r->m, r->n, r->k, r->rate_per_s };
      if (g_str_equal (r->kind, "gemm") && g_str_equal (r->dtype, "bf16"))
        g_array_append_val (c->gemm, p);
    }
    g_string_append_printf (summary, "gemm: %u bf16 points from %s (%s)\n", c->gemm->len, gemm,
                            sim_bench_header (b, "gpu") != NULL ? sim_bench_header (b, "gpu") : "GPU not recorded");
    g_string_append_printf (source, "%s%s", source->len ? " " : "", gemm);
  }
  if (hbm != NULL) {
    g_autoptr (SimBench) b = sim_bench_parse_file (hbm, error);
    if (b == NULL)
      return 2;
    for (guint i = 0; i < b->rows->len; i++) {
      const SimBenchRow *r = &g_array_index (b->rows, SimBenchRow, i);
      if (g_str_equal (r->kind, "hbm"))
        c->hbm_bw_bytes_per_s = MAX (c->hbm_bw_bytes_per_s, r->rate_per_s);
    }
    g_string_append_printf (summary, "hbm: %.1f GB/s sustained, from %s\n", c->hbm_bw_bytes_per_s / 1e9, hbm);
    g_string_append_printf (source, "%s%s", source->len ? " " : "", hbm);
  }
  if (nccl != NULL) {
    g_autoptr (SimBench) b = NULL;
    g_autofree char *head = NULL;
    double bw = -1;
    int ranks = 0;
    g_file_get_contents (nccl, &head, NULL, NULL);
    if (head != NULL && strstr (head, "sim-microbench/1") != NULL) {
      double sum = 0;
      int n = 0;
      if ((b = sim_bench_parse_file (nccl, error)) == NULL)
        return 2;
      for (guint i = 0; i < b->rows->len; i++) {
        const SimBenchRow *r = &g_array_index (b->rows, SimBenchRow, i);
        if (g_str_equal (r->kind, "nccl") && g_str_equal (r->op, "all_reduce") && r->bytes >= (256u << 20)) {
          sum += r->rate_per_s;
          n++;
          ranks = r->gpus;
        }
      }
      bw = n > 0 ? sum / n : -1;
      measured = nccl_from_bench (b, nccl);
    } else {
      bw = busbw_from_nccl_text (nccl, &ranks, error);
      if (bw > 0)
        measured = sim_nccl_parse_file (nccl, error);
    }
    if (bw <= 0) {
      if (error != NULL && *error == NULL)
        g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s: expected all_reduce rows of 256 MiB or more", nccl);
      return 2;
    }
    c->link_bw[link_kind] = bw;
    g_string_append_printf (summary, "%s: %.1f GB/s achieved (ring all_reduce bus bandwidth from 256 MiB up, %d GPUs), from %s\n",
                            sim_link_kind_name ((SimLinkKind) link_kind), bw / 1e9, ranks, nccl);
    g_string_append_printf (source, "%s%s", source->len ? " " : "", nccl);
  }
  if (topology != NULL) {
    g_autoptr (SimTopology) topo = sim_cli_load_topology (topology, nodes, NULL, error);
    double scale = 0, before = 0, after = 0;
    int n_rows = 0;
    if (topo == NULL)
      return 2;
    /* nccl-tests text does not always name its operation: --nccl is read as
     * all_reduce, as for the bandwidth above */
    if (measured == NULL || (measured->op != SIM_NCCL_ALL_REDUCE && measured->op != SIM_NCCL_UNKNOWN) ||
        measured->rows->len == 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s: expected all_reduce measurements to fit the latency", nccl);
      return 2;
    }
    if (gpus > 0)
      measured->ranks = gpus;
    if (measured->ranks <= 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s: the output does not list its GPUs; give --gpus N", nccl);
      return 2;
    }
    sim_calibration_apply (c, topo);
    if (!fit_latency (topo, measured, link_kind, &scale, &n_rows, &before, &after, error))
      return 2;
    if (scale > 0) {
      c->link_latency_scale[link_kind] = scale;
      g_string_append_printf (summary,
                              "%s: latency x %.3f of NCCL's tuned per-hop latency (all_reduce up to 64 KiB, %d sizes on "
                              "%d GPUs of %s: median simulated / measured time %.3f as tuned, %.3f fitted)\n",
                              sim_link_kind_name ((SimLinkKind) link_kind), scale, n_rows, measured->ranks,
                              topo->name, before, after);
    } else {
      g_string_append_printf (summary,
                              "%s: latency not fitted: no per-hop latency from 0.01x to 100x NCCL's brings the median "
                              "simulated / measured time of the %d sizes up to 64 KiB to 1 on %s (%.3f as tuned)\n",
                              sim_link_kind_name ((SimLinkKind) link_kind), n_rows, topo->name, before);
    }
  }
  xml = sim_calibration_to_xml (c, date, source->str);
  if (!sim_write_file (out, xml, error)) {
    g_prefix_error (error, "-o: ");
    return 2;
  }
  g_string_append_printf (summary, "wrote %s\n", out);
  fputs (summary->str, stdout);
  return 0;
}
