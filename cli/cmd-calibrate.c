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

#include "sim-microbench.h"
#include "sim-calibration.h"
#include "sim-validate.h"
#include "cli.h"
#include "sim-input.h"
#include "sim-error.h"
#include "sim-io.h"
#include "sim-nccl.h"
#include "sim-paths.h"

static const char *usage =
    "usage: sim calibrate [--gemm gemm.csv] [--hbm hbm.csv] [--nccl FILE] [--link nvlink|infiniband|...]\n"
    "                     [--topology T [--nodes N] [--gpus N]] --gpu NAME -o calib.xml\n"
    "\n"
    "Fits the measurements of microbench/ (sim-microbench/1 CSV; --nccl also takes the\n"
    "text nccl-tests prints) into a calibration file that a topology includes\n"
    "(<gpu-type calibration=\"FILE\">) or --calibration FILE applies.\n"
    "--nccl gives the link's achieved bandwidth; with --topology (the cluster the\n"
    "all_reduce ran on) it also fits the link's per-hop latency to the smallest size.\n";

static gboolean
parse_link_kind (const char *link, int *link_kind, GError **error)
{
  *link_kind = -1;
  for (int k = 0; k < 4; k++)
    if (g_str_equal (link, sim_link_kind_name ((SimLinkKind) k)))
      *link_kind = k;
  if (*link_kind < 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--link: expected nvlink, pcie, infiniband or ethernet, got '%s'", link);
    return FALSE;
  }
  return TRUE;
}

static void
add_source (GString *source, const char *path)
{
  g_string_append_printf (source, "%s%s", source->len ? " " : "", path);
}

static gboolean
fit_gemm (SimCalibration *c, const char *gemm, GString *summary, GString *source, GError **error)
{
  g_autoptr (SimMicrobench) b = sim_microbench_parse_file (gemm, error);
  guint n;

  if (b == NULL)
    return FALSE;
  n = sim_calibration_fit_gemm (c, b);
  g_string_append_printf (summary, "gemm: %u bf16 points from %s (%s)\n", n, gemm,
                          sim_microbench_header (b, "gpu") != NULL ? sim_microbench_header (b, "gpu") : "GPU not recorded");
  add_source (source, gemm);
  return TRUE;
}

static gboolean
fit_hbm (SimCalibration *c, const char *hbm, GString *summary, GString *source, GError **error)
{
  g_autoptr (SimMicrobench) b = sim_microbench_parse_file (hbm, error);

  if (b == NULL)
    return FALSE;
  sim_calibration_fit_hbm (c, b);
  g_string_append_printf (summary, "hbm: %.1f GB/s sustained, from %s\n", c->hbm_bw_bytes_per_s / 1e9, hbm);
  add_source (source, hbm);
  return TRUE;
}

/* the link's achieved bandwidth from nccl-tests text or a sim-microbench/1
 * file; returns the measurements (for the latency fit), or NULL with error set */
static SimNcclResult *
fit_link (SimCalibration *c, const char *nccl, int link_kind, GString *summary, GString *source,
          GError **error)
{
  g_autoptr (SimNcclResult) measured = NULL;
  g_autofree char *head = NULL;

  /* a FIFO or a device is refused here, as by every reader (sim-input.h) */
  if (!sim_input_read (nccl, SIM_INPUT_MAX_BYTES, &head, NULL, error))
    return NULL;
  if (head != NULL && strstr (head, "sim-microbench/1") != NULL) {
    g_autoptr (SimMicrobench) b = sim_microbench_parse_file (nccl, error);
    if (b == NULL)
      return NULL;
    measured = sim_calibration_nccl_from_bench (b, nccl);
  } else if ((measured = sim_nccl_parse_file (nccl, error)) == NULL)
    return NULL;
  if (!sim_calibration_fit_link (c, (SimLinkKind) link_kind, measured, error))
    return NULL;
  g_string_append_printf (summary, "%s: %.1f GB/s achieved (ring all_reduce bus bandwidth from 256 MiB up, %d GPUs), from %s\n",
                          sim_link_kind_name ((SimLinkKind) link_kind), c->link_bw[link_kind] / 1e9,
                          measured->ranks, nccl);
  add_source (source, nccl);
  return g_steal_pointer (&measured);
}

/* the link's per-hop latency, fitted to the small all_reduce sizes of
 * measured on the cluster they ran on */
static gboolean
fit_latency (SimCalibration *c, const char *topology, int nodes, int gpus, const char *nccl,
             SimNcclResult *measured, int link_kind, GString *summary, GError **error)
{
  g_autoptr (SimTopology) topo = NULL;
  g_autofree char *topo_path = sim_paths_resolve (topology, "topologies", error);
  SimLatencyFit fit;

  if (topo_path == NULL || (topo = sim_topology_load (topo_path, nodes, error)) == NULL ||
      !sim_topology_check_one_gpu_type (topo, error))
    return FALSE;
  /* the rates measured above are part of the cluster the fit runs on */
  sim_calibration_apply (c, topo);
  /* nccl-tests text does not always name its operation: --nccl is read as
   * all_reduce, as for the bandwidth above */
  if (measured == NULL || (measured->op != SIM_OP_ALL_REDUCE && measured->op != SIM_OP_UNKNOWN) ||
      measured->rows->len == 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s: expected all_reduce measurements to fit the latency", nccl);
    return FALSE;
  }
  if (gpus > 0)
    measured->ranks = gpus;
  if (measured->ranks <= 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s: the output does not list its GPUs; give --gpus N", nccl);
    return FALSE;
  }
  if (!sim_calibration_fit_latency (topo, measured, (SimLinkKind) link_kind, &fit, error))
    return FALSE;
  if (fit.scale > 0) {
    c->link_latency_scale[link_kind] = fit.scale;
    g_string_append_printf (summary,
                            "%s: latency x %.3f of NCCL's tuned per-hop latency (all_reduce up to 64 KiB, %d sizes on "
                            "%d GPUs of %s: median simulated / measured time %.3f as tuned, %.3f fitted)\n",
                            sim_link_kind_name ((SimLinkKind) link_kind), fit.scale, fit.rows, measured->ranks,
                            topo->name, fit.before, fit.after);
  } else {
    g_string_append_printf (summary,
                            "%s: latency not fitted: no per-hop latency from 0.01x to 100x NCCL's brings the median "
                            "simulated / measured time of the %d sizes up to 64 KiB to 1 on %s (%.3f as tuned)\n",
                            sim_link_kind_name ((SimLinkKind) link_kind), fit.rows, topo->name, fit.before);
  }
  return TRUE;
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
  if (link != NULL && !parse_link_kind (link, &link_kind, error))
    return 2;
  c->gpu = g_strdup (gpu);
  c->gemm = g_array_new (FALSE, FALSE, sizeof (SimGemmPoint));
  if (gemm != NULL && !fit_gemm (c, gemm, summary, source, error))
    return 2;
  if (hbm != NULL && !fit_hbm (c, hbm, summary, source, error))
    return 2;
  if (nccl != NULL && (measured = fit_link (c, nccl, link_kind, summary, source, error)) == NULL)
    return 2;
  if (topology != NULL &&
      !fit_latency (c, topology, nodes, gpus, nccl, measured, link_kind, summary, error))
    return 2;
  xml = sim_calibration_to_xml (c, date, source->str);
  if (!sim_write_file (out, xml, error)) {
    g_prefix_error (error, "-o: ");
    return 2;
  }
  g_string_append_printf (summary, "wrote %s\n", out);
  fputs (summary->str, stdout);
  return 0;
}
