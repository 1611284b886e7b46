/* bench-estimate.c — the time of one estimate in-process: each published
 * layout of ../shared/validation/training_calibration.csv's NeMo rows that a
 * shipped model file describes (GPT-3 175B on dgx-h100, as NVIDIA's DGX
 * Cloud recipes ran it) and the headline layouts of the README, each
 * resolved, ledgered and simulated (symmetry-reduced) `REPEAT` times; prints
 * the median and the slowest of the per-layout medians, the figure issue 16
 * asks for (a target of 2 ms per estimate).
 *
 * By default a long 1F1B or interleaved step comes from its steady state,
 * as sim's report does (sim_iteration_run_steady); with --whole every
 * micro-batch is simulated, as for sim's charts (sim_iteration_run, its
 * collectives alone where nothing meets them); with --exact every
 * micro-batch and every collective's flows (sim --exact:
 * sim_iteration_run_reference).
 *
 *   bench-estimate SOURCE_ROOT [--whole|--exact] */
#include <stdio.h>
#include <stdlib.h>

#include "sim-run.h"

#define REPEAT 5

typedef struct {
  const char *topology;
  int nodes;
  const char *model;
  const char *plan;
} Layout;

/* the dgxc GPT-3 175B rows (TP 4, PP 8, VP 12, MBS 1, GBS = 2 x GPUs, on
 * 128 ... 2048 H100s) and the README's examples */
static const Layout layouts[] = {
  { "dgx-h100.xml", 16, "gpt3-175b.xml", "tp=4,pp=8,dp=4,gb=256,schedule=interleaved,v=12" },
  { "dgx-h100.xml", 32, "gpt3-175b.xml", "tp=4,pp=8,dp=8,gb=512,schedule=interleaved,v=12" },
  { "dgx-h100.xml", 64, "gpt3-175b.xml", "tp=4,pp=8,dp=16,gb=1024,schedule=interleaved,v=12" },
  { "dgx-h100.xml", 128, "gpt3-175b.xml", "tp=4,pp=8,dp=32,gb=2048,schedule=interleaved,v=12" },
  { "dgx-h100.xml", 256, "gpt3-175b.xml", "tp=4,pp=8,dp=64,gb=4096,schedule=interleaved,v=12" },
  { "dgx8x4.xml", 0, "llama3-70b.xml", "tp=8,pp=4,dp=2" },
  { "dgx8x4.xml", 0, "llama3-70b.xml", "tp=8,pp=8,dp=1" },
  { "dgx8x4.xml", 1, "llama3-8b.xml", "tp=1,pp=1,dp=8,gb=64" },
  { "dgx-h100.xml", 0, "llama3-405b.xml", "tp=8,pp=8,dp=4" },
  { "dgx-a100.xml", 128, "gpt3-175b.xml", "tp=8,pp=8,dp=16,gb=1536" },
};

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

int
main (int argc, char **argv)
{
  const char *root = argc > 1 ? argv[1] : ".";
  gboolean exact = argc > 2 && g_str_equal (argv[2], "--exact");
  gboolean whole = exact || (argc > 2 && g_str_equal (argv[2], "--whole"));
  SimRunFlags flags = SIM_RUN_TIME | (exact ? SIM_RUN_REFERENCE : whole ? 0 : SIM_RUN_STEADY);
  double medians[G_N_ELEMENTS (layouts)];

  printf ("%-14s %-16s %-48s %10s\n", "cluster", "model", "plan", "median ms");
  for (guint i = 0; i < G_N_ELEMENTS (layouts); i++) {
    const Layout *l = &layouts[i];
    g_autofree char *tp = g_build_filename (root, "topologies", l->topology, NULL);
    g_autofree char *mp = g_build_filename (root, "models", l->model, NULL);
    g_autoptr (GError) error = NULL;
    g_autoptr (SimTopology) t = sim_topology_load (tp, l->nodes, &error);
    g_autoptr (SimModel) m = NULL;
    double ms[REPEAT];
    if (t == NULL || (m = sim_model_load (mp, &error)) == NULL)
      g_error ("%s", error->message);
    for (int k = 0; k < REPEAT; k++) {
      SimPlan *p = sim_plan_new ();
      gint64 t0;
      g_autoptr (SimRun) r = NULL;
      if (!sim_plan_parse_string (p, l->plan, &error))
        g_error ("%s", error->message);
      t0 = g_get_monotonic_time ();
      r = sim_run_evaluate (t, m, p, l->plan, flags, &error);
      ms[k] = (double) (g_get_monotonic_time () - t0) / 1e3;
      if (r == NULL)
        g_error ("%s: %s", l->plan, error->message);
    }
    qsort (ms, REPEAT, sizeof ms[0], cmp_double);
    medians[i] = ms[REPEAT / 2];
    printf ("%-14s %-16s %-48s %10.2f\n", l->topology, l->model, l->plan, medians[i]);
  }
  qsort (medians, G_N_ELEMENTS (layouts), sizeof medians[0], cmp_double);
  printf ("median of %u layouts%s: %.2f ms per estimate (slowest %.2f ms; target 2 ms, issue 16)\n",
          (guint) G_N_ELEMENTS (layouts), exact ? " (--exact)" : whole ? " (--whole)" : "",
          medians[G_N_ELEMENTS (layouts) / 2],
          medians[G_N_ELEMENTS (layouts) - 1]);
  return 0;
}
