/* fuzz-plan.c — the plan parser ("tp=8,pp=4,dp=2,schedule=interleaved", as
 * sim compare --plan and the sweep take it), then everything a parsed plan
 * reaches: validation against a cluster and a model, the memory ledger,
 * the remedies and the simulated iteration.  The cluster is dgx8x4 (8 DGX
 * nodes, 64 GPUs) and the model Llama 3 8B.  Fast path: every plan is
 * resolved and its memory ledger built; only plans of at most
 * FUZZ_MAX_PASSES forward and backward passes per stage are then simulated,
 * so the target spends its time on the parser and the arithmetic of huge
 * values rather than on long simulations of valid ones.  Oracle beyond
 * "no crash": the compute-alone bound the sweep prunes by
 * (sim_iteration_bound_s) never exceeds the simulated step. */
#include "fuzz.h"
#include "sim-iteration.h"
#include "sim-run.h"

#define FUZZ_MAX_PASSES 64

static SimTopology *topo;
static SimModel *model;

static void
load_fixed_inputs (void)
{
  GError *error = NULL;
  topo = sim_topology_load (SIM_SOURCE_DIR "/topologies/dgx8x4.xml", 0, &error);
  if (topo == NULL)
    g_error ("%s", error->message);
  model = sim_model_load (SIM_SOURCE_DIR "/models/llama3-8b.xml", &error);
  if (model == NULL)
    g_error ("%s", error->message);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (topo == NULL)
    load_fixed_inputs ();
  g_autofree char *text = fuzz_text (data, size);
  GError *error = NULL;
  SimPlanRequest *plan = sim_plan_request_new ();
  if (!sim_plan_request_parse_string (plan, text, &error))
    {
      g_assert (error != NULL && error->message[0] != '\0');
      g_error_free (error);
      sim_plan_request_free (plan);
      return 0;
    }
  SimRun *run = sim_run_evaluate (topo, model, plan, text, 0, &error);
  if (run == NULL)
    {
      g_assert (error != NULL && error->message[0] != '\0');
      g_error_free (error);
      sim_plan_request_free (plan);
      return 0;
    }
  /* the resolved plan says how long the simulation would be */
  guint64 passes = run->plan->micro_batches * (guint64) MAX (run->plan->virtual_stages, 1);
  sim_run_free (run);
  if (passes > FUZZ_MAX_PASSES)
    {
      sim_plan_request_free (plan);
      return 0;
    }
  run = sim_run_evaluate (topo, model, plan, text, SIM_RUN_TIME | SIM_RUN_REMEDIES, &error);
  sim_plan_request_free (plan);
  if (run == NULL)
    {
      g_assert (error != NULL && error->message[0] != '\0');
      g_error_free (error);
      return 0;
    }
  if (run->time != NULL)
    {
      double bound = sim_iteration_bound_s (topo, model, run->plan, run->memory);
      g_assert (bound >= 0 && bound <= run->time->step_s * (1 + 1e-9));
    }
  GPtrArray *lines = sim_run_diagnose (run, NULL);
  g_ptr_array_unref (lines);
  sim_run_free (run);
  return 0;
}
