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
#include "sim-topology.h"

/* a byte count as MB (10^6) with one decimal, or GB (10^9) from 1 GB */
static char *
bytes_text (double b)
{
  return b >= 1e9 ? g_strdup_printf ("%.2f GB", b / 1e9) : g_strdup_printf ("%.1f MB", b / 1e6);
}

static gboolean
same_kernel (const SimKernel *a, const SimKernel *b)
{
  return strcmp (a->pass, b->pass) == 0 && strcmp (a->name, b->name) == 0 &&
         strcmp (a->role, b->role) == 0 && a->kind == b->kind && a->m == b->m && a->n == b->n &&
         a->k == b->k && a->batch == b->batch && a->bytes == b->bytes && a->seconds == b->seconds &&
         a->kernels == b->kernels;
}

/* the list as CSV, one row per kernel, in sim_cost_layer_kernels' order:
 * for a profile to be set beside (the seconds include the fixed cost per
 * kernel) */
static char *
kernels_csv (const GArray *k)
{
  static const char *kinds[] = { "gemm",      "batched_gemm", "grouped_gemm",
                                 "attention", "memory",       "wait" };
  GString *out = g_string_new ("pass,name,role,kind,m,n,k,batch,kernels,bytes,flop,seconds\n");
  for (guint i = 0; i < k->len; i++) {
    const SimKernel *x = &g_array_index (k, SimKernel, i);
    char sec[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_printf (out, "%s,%s,%s,%s,%.0f,%.0f,%.0f,%.0f,%d,%.0f,%.0f,%s\n", x->pass,
                            x->name, x->role, kinds[x->kind], x->m, x->n, x->k, x->batch,
                            x->kernels, x->bytes, x->flop,
                            g_ascii_formatd (sec, sizeof sec, "%.9e", x->seconds));
  }
  return g_string_free (out, FALSE);
}

/* one pass's rows and its summary; the kernels from index *i while their
 * pass is the same */
static void
print_pass (GString *out, const GArray *k, guint *i, const SimGpuType *g,
            SimAttentionKernel attention)
{
  const char *pass = g_array_index (k, SimKernel, *i).pass;
  double sum[SIM_KERNEL_WAIT + 1] = { 0 }, total = 0, flop = 0;
  int n = 0;
  g_string_append_printf (out, "\n%-30s %-27s %8s %8s %8s %7s\n", pass, "m x n x k, or bytes",
                          "GFLOP", "ms", "TFLOP/s", "GB/s");
  while (*i < k->len && strcmp (g_array_index (k, SimKernel, *i).pass, pass) == 0) {
    const SimKernel *x = &g_array_index (k, SimKernel, *i);
    /* a run of the same kernel (the same module, role, shape and bytes)
     * prints as one row, its count in front of the name */
    guint same = 1;
    while (*i + same < k->len && same_kernel (x, &g_array_index (k, SimKernel, *i + same)))
      same++;
    *i += same;
    g_autofree char *count = same > 1 ? g_strdup_printf ("%u x ", same) : g_strdup ("");
    g_autofree char *name = g_strdup_printf ("%s%s%s%s", count, x->name, *x->role ? " " : "",
                                             x->role);
    g_autofree char *what = NULL;
    /* the work's rate, without the fixed per-kernel cost */
    double work_s = x->seconds - g->eff.kernel_fixed_s * x->kernels;
    if (x->kind == SIM_KERNEL_WAIT)
      what = g_strdup ("GPU waits for the host");
    else if (x->kind == SIM_KERNEL_MEMORY)
      what = bytes_text (x->bytes);
    else if (x->kind == SIM_KERNEL_ATTENTION)
      what = g_strdup (attention == SIM_ATTENTION_CUDNN    ? "fused (cuDNN)"
                       : attention == SIM_ATTENTION_FLASH2 ? "fused (FlashAttention-2)"
                       : attention == SIM_ATTENTION_TRITON ? "fused (Triton FlashAttn)"
                                                           : "fused (FlashAttention)");
    else if (x->batch > 1)
      what = g_strdup_printf ("%.0f x %.0f x %.0f x %.0f", x->batch, x->m, x->n, x->k);
    else
      what = g_strdup_printf ("%.0f x %.0f x %.0f", x->m, x->n, x->k);
    g_string_append_printf (out, "  %-28s %-27s ", name, what);
    if (x->flop > 0)
      g_string_append_printf (out, "%8.2f %8.3f %8.1f\n", same * x->flop / 1e9,
                              same * x->seconds * 1e3, work_s > 0 ? x->flop / work_s / 1e12 : 0.0);
    else if (x->kind == SIM_KERNEL_MEMORY && x->bytes > 0)
      g_string_append_printf (out, "%8s %8.3f %8s %7.0f\n", "", same * x->seconds * 1e3, "",
                              work_s > 0 ? x->bytes / work_s / 1e9 : 0.0);
    else
      g_string_append_printf (out, "%8s %8.3f\n", "", same * x->seconds * 1e3);
    sum[x->kind] += same * x->seconds;
    total += same * x->seconds;
    flop += same * x->flop;
    n += same * x->kernels;
  }
  if (flop > 0)
    g_string_append_printf (out, "  %-28s %-27s %8.2f %8.3f %8.1f\n", "total", "", flop / 1e9,
                            total * 1e3, flop / total / 1e12);
  else
    g_string_append_printf (out, "  %-28s %-27s %8s %8.3f\n", "total", "", "", total * 1e3);
  {
    double gemm = sum[SIM_KERNEL_GEMM] + sum[SIM_KERNEL_BATCHED_GEMM] +
                  sum[SIM_KERNEL_GROUPED_GEMM];
    double host = n * g->eff.host_launch_s;
    g_autofree char *line = g_strdup_printf (
        "GEMMs %.0f%%, attention %.0f%%, memory-bound %.0f%% of %.3f ms on the GPU, of which "
        "%d kernels' fixed cost %.3f ms; the host launches them in %.3f ms%s",
        total > 0 ? 100 * gemm / total : 0.0,
        total > 0 ? 100 * sum[SIM_KERNEL_ATTENTION] / total : 0.0,
        total > 0 ? 100 * sum[SIM_KERNEL_MEMORY] / total : 0.0, total * 1e3, n,
        n * g->eff.kernel_fixed_s * 1e3, host * 1e3,
        host > total ? " (the host is the bottleneck: the pass takes that long)" : "");
    g_string_append (out, "  ");
    sim_cli_append_wrapped (out, line, 2, 2, SIM_CLI_COLUMNS);
    g_string_append_c (out, '\n');
  }
}

int
sim_cmd_kernels (int argc, char **argv, GError **error)
{
  g_autofree char *topology = NULL, *model_s = NULL, *nodes_s = NULL, *gpus_s = NULL;
  g_autofree char *calibration = NULL, *efficiency = NULL, *csv = NULL;
  g_autofree char *topo_path = NULL, *model_path = NULL;
  g_autoptr (SimPlan) plan = sim_plan_new ();
  g_autoptr (SimTopology) topo = NULL;
  g_autoptr (SimModel) m = NULL;
  g_autoptr (GArray) k = NULL;
  g_autoptr (GString) out = g_string_new (NULL);
  const SimGpuType *g;
  gboolean help = FALSE;
  int nodes = 0, gpus = 0;
  guint i = 0;
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
  if (!sim_cli_parse_plan (argc, argv, 2, options, "kernels", plan, error))
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
  if ((m = sim_model_load (model_path, error)) == NULL || !sim_plan_resolve (plan, topo, m, error))
    return 2;
  g = sim_topology_gpu_type (topo, 0);
  k = sim_cost_layer_kernels (m, plan, g);
  if (csv != NULL) {
    g_autofree char *text = kernels_csv (k);
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
    double tokens = (double) plan->seq_len / plan->cp * plan->micro_batch;
    g_autofree char *head = g_strdup_printf (
        "%s on one %s: one %slayer and the output layer, one micro-batch of %.0f tokens on this GPU "
        "(micro-batch %d x sequence %" G_GUINT64_FORMAT " / cp %d), tp %d%s%s",
        m->name, g->name, sim_model_is_moe (m) ? "mixture-of-experts " : "", tokens,
        plan->micro_batch, plan->seq_len, plan->cp, plan->tp,
        plan->fp8 != SIM_FP8_OFF ? ", FP8 linear layers" : "",
        plan->sequence_parallel ? ", sequence parallel" : "");
    g_autofree char *eff = g_strdup_printf (
        "each kernel: %.1f us fixed, then its work at the cluster file's GEMM table x sustained clock "
        "%.3f, at its attention rates, or its bytes at %.2f TB/s x %.3f; the host issues a kernel in "
        "%.1f us",
        g->eff.kernel_fixed_s * 1e6, g->eff.clock, g->hbm_bw_bytes_per_s / 1e12, g->eff.hbm,
        g->eff.host_launch_s * 1e6);
    sim_cli_append_wrapped (out, head, 0, 2, SIM_CLI_COLUMNS);
    g_string_append_c (out, '\n');
    g_string_append (out, "  ");
    sim_cli_append_wrapped (out, eff, 2, 2, SIM_CLI_COLUMNS);
    g_string_append_c (out, '\n');
  }
  while (i < k->len)
    print_pass (out, k, &i, g, plan->attention_kernel);
  if (plan->recompute != SIM_RECOMPUTE_NONE) {
    /* what the backward runs again first, as sim_cost_layer charges it */
    SimLayerCost c;
    g_autofree char *line = NULL;
    sim_cost_layer (m, plan, g, &c);
    line = g_strdup_printf ("recomputation: %.3f ms of the forward's kernels again before each layer's "
                            "backward (%s), not listed above",
                            (sim_model_is_moe (m) ? c.moe_recompute_s : c.layer_recompute_s) * 1e3,
                            plan->recompute == SIM_RECOMPUTE_FULL
                                ? "full: the whole forward"
                                : "selective: the modules --recompute-modules names");
    g_string_append_c (out, '\n');
    sim_cli_append_wrapped (out, line, 0, 2, SIM_CLI_COLUMNS);
    g_string_append_c (out, '\n');
  }
  fputs (out->str, stdout);
  return 0;
}
