/* bench-iteration.c — one GPT-3 175B iteration on 1,024 A100s (TP 8, PP 8,
 * DP 16, global batch 1536, 1F1B), symmetry-reduced and at full fidelity
 * (every replica): wall time and peak resident memory of each. */
#include <stdio.h>
#include <sys/resource.h>

#include "sim-iteration.h"

static long
max_rss_kib (void)
{
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

int
main (int argc, char **argv)
{
  const char *root = argc > 1 ? argv[1] : ".";
  g_autofree char *tp = g_build_filename (root, "topologies", "dgx-a100.xml", NULL);
  g_autofree char *mp = g_build_filename (root, "models", "gpt3-175b.xml", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (SimTopology) t = sim_topology_load (tp, 128, &error);
  g_autoptr (SimModel) m = NULL;
  g_autoptr (SimPlanRequest) q = sim_plan_request_new ();
  g_autoptr (SimPlan) p = NULL;
  g_autoptr (SimMemory) mem = NULL;

  if (t == NULL || (m = sim_model_load (mp, &error)) == NULL ||
      !sim_plan_request_parse_string (q, "tp=8,pp=8,dp=16,gb=1536,schedule=1f1b", &error) ||
      (p = sim_plan_resolve (q, t, m, &error)) == NULL)
    g_error ("%s", error->message);
  mem = sim_memory_compute (t, m, p);
  for (int full = 0; full < 2; full++) {
    gint64 t0 = g_get_monotonic_time ();
    g_autoptr (SimIteration) it = sim_iteration_run (t, m, p, mem, full, &error);
    double wall = (double) (g_get_monotonic_time () - t0) / 1e6;
    if (it == NULL)
      g_error ("%s", error->message);
    printf ("%-28s step %.4f s, %9u activities, %9" G_GUINT64_FORMAT " events, wall %.3f s, peak RSS so far %.1f MiB\n",
            full ? "full fidelity (16 replicas)" : "symmetry-reduced (1 replica)", it->step_s,
            it->activities, it->events, wall, max_rss_kib () / 1024.0);
  }
  return 0;
}
