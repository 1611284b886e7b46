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
#include "sim-units.h"

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
  g_autoptr (SimPlanRequest) req = sim_plan_request_new ();
  g_autoptr (SimRun) run = NULL;
  if (error != NULL)
    *error = NULL;
  if (s == NULL || !sim_plan_request_parse_string (req, plan_text != NULL ? plan_text : "", &err)) {
    if (err == NULL)
      g_set_error (&err, SIM_ERROR, SIM_ERROR_USAGE, "expected a session");
    set_error (error, err);
    return NULL;
  }
  /* as the plain command: its remedies, timed from the steady state */
  run = sim_run_evaluate (s->topo, s->model, req, NULL,
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

/* a sweep's options, as sim sweep takes them */
typedef struct {
  SimSweepAsk ask;
  int top;
  gboolean all;
  char *fp8, *fp4;
} SweepOptions;

static gboolean
sweep_option (const char *key, const char *value, gpointer data, GError **error)
{
  SweepOptions *o = data;
  SimSweepConstraints *c = &o->ask.constraints;
  guint64 v = 0;
  if (value == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: expected a value (key=value)", key);
    return FALSE;
  }
  if (g_str_equal (key, "top") || g_str_equal (key, "global-batch") || g_str_equal (key, "seq-len")) {
    guint64 max = g_str_equal (key, "top") ? 100000 : g_str_equal (key, "seq-len") ? 1 << 24 : 1 << 30;
    if (!g_ascii_string_to_unsigned (value, 10, 1, max, &v, NULL)) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: expected a whole number from 1 to %" G_GUINT64_FORMAT
                   ", got '%.40s'", key, max, value);
      return FALSE;
    }
    if (g_str_equal (key, "top"))
      o->top = (int) v;
    else if (g_str_equal (key, "seq-len"))
      o->ask.seq_len = (int) v;
    else
      o->ask.global_batch = v;
    return TRUE;
  }
  if (g_str_equal (key, "all")) {
    if (!g_str_equal (value, "true") && !g_str_equal (value, "false")) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--all: expected true or false, got '%.40s'", value);
      return FALSE;
    }
    o->all = g_str_equal (value, "true");
    return TRUE;
  }
  if (g_str_equal (key, "gpu-variation")) {
    /* the plan's own parser checks it, as every layout's plan will */
    g_autoptr (SimPlanRequest) check = sim_plan_request_new ();
    if (!sim_plan_request_set (check, "gpu-variation", value, NULL, error))
      return FALSE;
    o->ask.gpu_variation = sim_plan_request_value (check, "gpu-variation");
    return TRUE;
  }
  if (g_str_equal (key, "moe-imbalance") || g_str_equal (key, "moe-expert-capacity-factor") ||
      g_str_equal (key, "moe-pad-expert-input-to-capacity")) {
    /* the experts' routing of every layout, as a plan reads it */
    g_autoptr (SimPlanRequest) check = sim_plan_request_new ();
    if (!sim_plan_request_set (check, key, value, NULL, error))
      return FALSE;
    if (g_str_equal (key, "moe-imbalance"))
      o->ask.moe_imbalance = sim_plan_request_value (check, key);
    else if (g_str_equal (key, "moe-expert-capacity-factor"))
      o->ask.moe_capacity_factor = sim_plan_request_value (check, key);
    else
      o->ask.moe_pad = sim_plan_request_value (check, key) != 0;
    return TRUE;
  }
  if (g_str_equal (key, "fp8") || g_str_equal (key, "fp4")) {
    char **slot = g_str_equal (key, "fp8") ? &o->fp8 : &o->fp4;
    g_free (*slot);
    *slot = g_strdup (value);
    return TRUE;
  }
  if (g_str_equal (key, "min-headroom"))
    return sim_sweep_parse_headroom (value, &c->min_headroom, error);
  if (g_str_equal (key, "tp"))
    return sim_sweep_parse_choices (key, value, "/", c->tp, &c->n_tp, error);
  if (g_str_equal (key, "pp"))
    return sim_sweep_parse_choices (key, value, "/", c->pp, &c->n_pp, error);
  if (g_str_equal (key, "cp"))
    return sim_sweep_parse_choices (key, value, "/", c->cp, &c->n_cp, error);
  if (g_str_equal (key, "ep"))
    return sim_sweep_parse_choices (key, value, "/", c->ep, &c->n_ep, error);
  if (g_str_equal (key, "etp"))
    return sim_sweep_parse_choices (key, value, "/", c->etp, &c->n_etp, error);
  if (g_str_equal (key, "schedule"))
    return sim_sweep_parse_schedules (value, "/", &c->schedules, error);
  g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
               "sweep: unknown option '%.40s' (top, all, global-batch, seq-len, gpu-variation, fp8, fp4, "
               "tp, pp, cp, ep, etp, schedule, min-headroom, moe-imbalance, moe-expert-capacity-factor, "
               "moe-pad-expert-input-to-capacity)", key);
  return FALSE;
}

char *
sim_api_sweep (SimApiSession *s, const char *options, char **error)
{
  GError *err = NULL;
  SweepOptions o = { .top = 10 };
  g_autoptr (SimSweep) sw = NULL;
  g_autoptr (GPtrArray) ranked = NULL;
  g_autofree char *shaping = NULL, *json = NULL;
  int threads = (int) g_get_num_processors (), max_nodes = 0, keep;
  char *out = NULL;
  if (error != NULL)
    *error = NULL;
  if (s == NULL) {
    g_set_error (&err, SIM_ERROR, SIM_ERROR_USAGE, "sweep: expected a session");
    set_error (error, err);
    return NULL;
  }
  o.ask.topology = s->topology;
  o.ask.nodes = s->nodes;
  o.ask.gpus = s->gpus;
  o.ask.gpu_variation = -1;
  if (sim_units_foreach_key_value (options != NULL ? options : "", sweep_option, &o, &err)) {
    o.ask.fp8 = o.fp8;
    o.ask.fp4 = o.fp4;
    sw = sim_sweep_prepare (s->model, &o.ask, threads, &max_nodes, &err);
  }
  if (sw != NULL) {
    /* as sim sweep: the top K of each GPU count simulated for certain,
     * every layout that fits with all */
    keep = o.all ? 0 : o.top;
    sim_sweep_set_keep (sw, keep);
    sim_sweep_run (sw, threads, NULL, NULL);
    ranked = sim_sweep_rank (sw, o.top);
    shaping = sim_sweep_options_text (sw, &o.ask, keep);
    json = sim_sweep_json (sw, s->topology, shaping, 1, 1);
    out = dup_malloc (json);
  } else
    set_error (error, err);
  g_free (o.fp8);
  g_free (o.fp4);
  return out;
}

void
sim_api_free (void *p)
{
  free (p);
}
