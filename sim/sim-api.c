/* sim-api.c — sim as a library (sim-api.h): the same evaluation as the
 * command line's sim and sim compare, answered as their JSON */
#include "sim-api.h"

#include <stdlib.h>
#include <string.h>

#include "sim-calibration.h"
#include "sim-compare.h"
#include "sim-error.h"
#include "sim-model.h"
#include "sim-paths.h"
#include "sim-plan.h"
#include "sim-report.h"
#include "sim-run.h"
#include "sim-sweep.h"

/* the model sim runs when none is given (cli/cmd-run.c's) */
#define DEFAULT_MODEL "llama3-70b"

struct SimApiSession {
  char *topology;      /* as given, to load the cluster again (the search) */
  int nodes, gpus;
  gboolean model_default;
  SimTopology *topo;
  SimModel *model;
};

/* text copied with malloc, for sim_api_free (free) */
static char *
dup_malloc (const char *text)
{
  size_t n = strlen (text) + 1;
  char *out = malloc (n);
  if (out != NULL)
    memcpy (out, text, n);
  return out;
}

/* a GError as the caller's one line (sim_api_free) */
static void
set_error (char **out, GError *error)
{
  if (out != NULL)
    *out = dup_malloc (error != NULL ? error->message : "sim: failed");
  g_clear_error (&error);
}

int
sim_api_version (void)
{
  return SIM_API_VERSION;
}

SimApiSession *
sim_api_session_new (const char *topology, const char *model, int nodes, int gpus, char **error)
{
  GError *err = NULL;
  g_autofree char *model_path = NULL;
  SimApiSession *s;
  if (error != NULL)
    *error = NULL;
  if (topology == NULL || *topology == '\0' || nodes < 0 || gpus < 0) {
    g_set_error (&err, SIM_ERROR, SIM_ERROR_USAGE,
                 "expected a topology (a cluster file or a name in topologies/) and nodes, gpus >= 0");
    set_error (error, err);
    return NULL;
  }
  s = g_new0 (SimApiSession, 1);
  s->topology = g_strdup (topology);
  s->nodes = nodes;
  s->gpus = gpus;
  s->model_default = model == NULL;
  if ((s->topo = sim_calibration_load_cluster (topology, nodes, gpus, NULL, &err)) == NULL ||
      (model_path = sim_paths_resolve (model != NULL ? model : DEFAULT_MODEL, "models", &err)) == NULL ||
      (s->model = sim_model_load (model_path, &err)) == NULL) {
    set_error (error, err);
    sim_api_session_free (s);
    return NULL;
  }
  return s;
}

void
sim_api_session_free (SimApiSession *s)
{
  if (s == NULL)
    return;
  g_free (s->topology);
  sim_topology_free (s->topo);
  sim_model_free (s->model);
  g_free (s);
}

char *
sim_api_estimate (SimApiSession *s, const char *plan_text, char **error)
{
  GError *err = NULL;
  SimPlan *plan = sim_plan_new ();
  g_autoptr (SimRun) run = NULL;
  if (error != NULL)
    *error = NULL;
  if (s == NULL || !sim_plan_parse_string (plan, plan_text != NULL ? plan_text : "", &err)) {
    if (err == NULL)
      g_set_error (&err, SIM_ERROR, SIM_ERROR_USAGE, "expected a session");
    sim_plan_free (plan);
    set_error (error, err);
    return NULL;
  }
  /* as the plain command: its remedies, timed from the steady state */
  run = sim_run_evaluate (s->topo, s->model, plan, NULL,
                          SIM_RUN_REMEDIES | SIM_RUN_TIME | SIM_RUN_STEADY, &err);
  if (run == NULL) {
    set_error (error, err);
    return NULL;
  }
  if (s->model_default)
    g_ptr_array_insert (run->plan->defaults, 0, g_strdup ("--model " DEFAULT_MODEL));
  if (!sim_sweep_offer_fastest_fit (run, s->topology, s->nodes, s->gpus, NULL, NULL, FALSE,
                                    (int) g_get_num_processors (), NULL, NULL, &err)) {
    set_error (error, err);
    return NULL;
  }
  {
    g_autofree char *json = sim_report_json (run);
    return dup_malloc (json);
  }
}

char *
sim_api_compare (SimApiSession *s, const char *const *plans, int n, char **error)
{
  GError *err = NULL;
  g_autoptr (GPtrArray) runs = NULL;
  g_autofree char *json = NULL;
  if (error != NULL)
    *error = NULL;
  if (s == NULL || plans == NULL || n < 1) {
    g_set_error (&err, SIM_ERROR, SIM_ERROR_USAGE, "compare: expected a session and at least one plan");
    set_error (error, err);
    return NULL;
  }
  if ((runs = sim_compare_runs (s->topo, s->model, plans, (guint) n, FALSE, 0, 0, NULL, &err)) == NULL) {
    set_error (error, err);
    return NULL;
  }
  json = sim_report_runs_json ("compare", s->topo->name, s->model->name, runs, NULL, NULL);
  return dup_malloc (json);
}

void
sim_api_free (void *p)
{
  free (p);
}
