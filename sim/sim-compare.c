/* sim-compare.c — layouts of one job side by side (sim-compare.h) */
#include "sim-compare.h"

#include "sim-plan.h"
#include "sim-sweep.h"

GPtrArray *
sim_compare_runs (const SimTopology *topo, const SimModel *model, const char *const *plans, guint n,
                  gboolean full, double tokens, double price, guint64 *shared_gb, GError **error)
{
  g_autoptr (GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_run_free);
  guint64 gb = sim_sweep_default_global_batch (model, sim_topology_n_gpus (topo));
  gboolean shared = FALSE;
  for (guint i = 0; i < n; i++) {
    g_autoptr (SimPlanRequest) req = sim_plan_request_new ();
    double mb;
    SimRun *r;
    if (!sim_plan_request_parse_string (req, plans[i], error)) {
      g_prefix_error (error, "--plan %s: ", plans[i]);
      return NULL;
    }
    mb = sim_plan_request_value (req, "micro-batch");
    /* a model that publishes no global batch: one for every plan that
     * gives none, as sim sweep does, so that their step times compare;
     * it is each plan's own default (SIM_PLAN_SEQUENCES_PER_GPU per GPU)
     * where a micro-batch divides the 8 per GPU */
    if (model->default_global_batch == 0 && sim_plan_request_value (req, "global-batch") == 0 &&
        (mb == 0 || SIM_SWEEP_SEQUENCES_PER_GPU % (int) mb == 0)) {
      if (!sim_plan_request_set_number (req, "global-batch", gb, error))
        return NULL;
      shared = TRUE;
    }
    r = sim_run_evaluate (topo, model, req, plans[i],
                          SIM_RUN_TIME | SIM_RUN_REMEDIES | (full ? SIM_RUN_FULL : 0), error);
    if (r == NULL) {
      g_prefix_error (error, "--plan %s: ", plans[i]);
      return NULL;
    }
    r->train_tokens = tokens;
    r->gpu_hour_price = price;
    g_ptr_array_add (runs, r);
  }
  sim_run_rank (runs);
  if (shared_gb != NULL)
    *shared_gb = shared ? gb : 0;
  return g_steal_pointer (&runs);
}
