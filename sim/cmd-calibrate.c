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
 *         crossed (--link, nvlink for one node by default). */
#include <math.h>
#include <string.h>
#include <stdio.h>

#include "sim-bench.h"
#include "sim-calibration.h"
#include "sim-commands.h"
#include "sim-error.h"
#include "sim-io.h"
#include "sim-nccl.h"

static const char *usage =
    "usage: sim calibrate [--gemm gemm.csv] [--hbm hbm.csv] [--nccl FILE] [--link nvlink|infiniband|...]\n"
    "                     --gpu NAME -o calib.xml\n"
    "\n"
    "Fits the measurements of microbench/ (sim-microbench/1 CSV; --nccl also takes the\n"
    "text nccl-tests prints) into a calibration file that a topology includes\n"
    "(<gpu-type calibration=\"FILE\">) or --calibration FILE applies.\n";

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

int
sim_cmd_calibrate (int argc, char **argv, GError **error)
{
  g_autofree char *gemm = NULL, *hbm = NULL, *nccl = NULL, *gpu = NULL, *out = NULL, *link = NULL;
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
    } else {
      bw = busbw_from_nccl_text (nccl, &ranks, error);
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
  xml = sim_calibration_to_xml (c, date, source->str);
  if (!sim_write_file (out, xml, error)) {
    g_prefix_error (error, "-o: ");
    return 2;
  }
  g_string_append_printf (summary, "wrote %s\n", out);
  fputs (summary->str, stdout);
  return 0;
}
