/* cmd-kernels.c — `sim kernels`: the kernels of one layer and of the
 * output layer, one micro-batch, on one GPU of a plan, each with its shape
 * or bytes, its FLOPs and the seconds sim charges it (sim_cost_layer_kernels):
 * where a layer's time goes, and at what rate each kernel runs. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sim-cost.h"
#include "sim-error.h"
#include "sim-io.h"
#include "sim-model.h"
#include "sim-paths.h"
#include "sim-plan.h"
#include "sim-report.h"
#include "sim-topology.h"

int
sim_cmd_kernels (int argc, char **argv, GError **error)
{
  g_autofree char *topology = NULL, *model_s = NULL, *nodes_s = NULL, *gpus_s = NULL;
  g_autofree char *calibration = NULL, *efficiency = NULL, *csv = NULL;
  g_autofree char *topo_path = NULL, *model_path = NULL;
  g_autoptr (SimPlanRequest) req = sim_plan_request_new ();
  g_autoptr (SimPlan) plan = NULL;
  g_autoptr (SimTopology) topo = NULL;
  g_autoptr (SimModel) m = NULL;
  const SimGpuType *g;
  gboolean help = FALSE;
  int nodes = 0, gpus = 0;
  const SimCliOption options[] = {
    { "topology", TRUE, &topology, NULL, NULL },
    { "model", TRUE, &model_s, NULL, NULL },
    { "nodes", TRUE, &nodes_s, NULL, NULL },
    { "gpus", TRUE, &gpus_s, NULL, NULL },
    { "calibration", TRUE, &calibration, NULL, NULL },
    { "efficiency", TRUE, &efficiency, NULL, NULL },
    { "csv", TRUE, &csv, NULL, NULL },
    { "help", FALSE, NULL, &help, NULL },
    { NULL, FALSE, NULL, NULL, NULL },
  };
  if (!sim_cli_parse_plan (argc, argv, 2, options, "kernels", req, error))
    return 2;
  if (help) {
    puts (
        "usage: sim kernels --topology FILE|NAME --model FILE|NAME [--nodes N | --gpus N]\n"
        "                   [--calibration FILE] [--efficiency KEY=VALUE,...] [--csv FILE|-]\n"
        "                   [plan flags]\n"
        "prints the kernels of one transformer layer (a mixture-of-experts layer where the model\n"
        "has them) and of the output layer and loss, for one micro-batch on one GPU of the plan:\n"
        "each GEMM's shape (m x n x k), each fused attention kernel, each memory-bound kernel's\n"
        "bytes, with its GFLOP, the milliseconds sim charges it (its fixed per-kernel cost\n"
        "included) and the rate of its work; then each pass's share of GEMMs, attention and\n"
        "memory-bound kernels and the host's time to launch them.  The plan flags are sim's\n"
        "(sim --help); the layout must be one the cluster holds, as for sim.\n"
        "--csv FILE writes the list as CSV as well (pass,name,role,kind,m,n,k,batch,kernels,\n"
        "bytes,flop,seconds: one row per kernel, its seconds with the fixed cost), whole or\n"
        "not at all; --csv - prints the CSV instead of the table.");
    return 0;
  }
  if (topology == NULL || model_s == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "kernels: expected --topology T and --model M; see sim kernels --help");
    return 2;
  }
  if (csv != NULL && !g_str_equal (csv, "-") && !sim_output_check (csv, FALSE, error)) {
    g_prefix_error (error, "--csv: ");
    return 2;
  }
  if ((nodes_s != NULL && !sim_cli_int ("nodes", nodes_s, 1, 65536, &nodes, error)) ||
      (gpus_s != NULL && !sim_cli_int ("gpus", gpus_s, 1, SIM_TOPOLOGY_MAX_GPUS, &gpus, error)))
    return 2;
  if ((topo_path = sim_paths_resolve (topology, "topologies", error)) == NULL ||
      (model_path = sim_paths_resolve (model_s, "models", error)) == NULL)
    return 2;
  if ((topo = sim_cli_load_topology (topo_path, nodes, gpus, calibration, error)) == NULL)
    return 2;
  if (efficiency != NULL && !sim_topology_set_efficiency (topo, efficiency, error)) {
    g_prefix_error (error, "--efficiency: ");
    return 2;
  }
  if ((m = sim_model_load (model_path, error)) == NULL || (plan = sim_plan_resolve (req, topo, m, error)) == NULL)
    return 2;
  g = sim_topology_gpu_type (topo, 0);
  if (csv != NULL) {
    g_autoptr (GArray) k = sim_cost_layer_kernels (m, plan, g);
    g_autofree char *text = sim_report_kernels_csv (k);
    if (g_str_equal (csv, "-")) {
      fputs (text, stdout);
      return 0;
    }
    if (!sim_write_file (csv, text, error)) {
      g_prefix_error (error, "--csv: ");
      return 2;
    }
  }
  {
    g_autofree char *text = sim_report_kernels (m, plan, g);
    fputs (text, stdout);
  }
  return 0;
}
