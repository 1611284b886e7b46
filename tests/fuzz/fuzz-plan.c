/* fuzz-plan.c — the plan parser ("tp=8,pp=4,dp=2,schedule=interleaved", as
 * sim compare --plan and the sweep take it), then everything a parsed plan
 * reaches: validation against a cluster and a model, the memory ledger,
 * the remedies and the simulated iteration.  The cluster is 4 DGX nodes
 * (32 GPUs) and the model Llama 3 8B, so any plan that validates is small
 * enough to simulate in milliseconds. */
#include "fuzz.h"
#include "sim-run.h"

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
  SimPlan *plan = sim_plan_new ();
  if (!sim_plan_parse_string (plan, text, &error))
    {
      g_assert (error != NULL && error->message[0] != '\0');
      g_error_free (error);
      sim_plan_free (plan);
      return 0;
    }
  SimRun *run = sim_run_evaluate (topo, model, plan, text,
                                  SIM_RUN_TIME | SIM_RUN_REMEDIES, &error);
  if (run == NULL)
    {
      g_assert (error != NULL && error->message[0] != '\0');
      g_error_free (error);
      return 0;
    }
  GPtrArray *lines = sim_run_diagnose (run, NULL);
  g_ptr_array_unref (lines);
  sim_run_free (run);
  return 0;
}
