/* sim-sweep.c — see sim-sweep.h */
#include "sim-sweep.h"

#include <math.h>
#include <string.h>

#include "sim-cost.h"
#include "sim-error.h"
#include "sim-json.h"
#include "sim-json-read.h"
#include "sim-memory.h"
#include "sim-plan.h"
#include "sim-report.h"
#include "sim-run.h"

typedef SimSweepRow Row;

struct _SimSweep {
  GPtrArray *topos;      /* SimTopology*, by node count index */
  GArray *node_counts;   /* int */
  const SimModel *model;
  guint64 global_batch;
  GPtrArray *rows;
  gint done;
  int total;
  SimSweepProgress progress;
  gpointer progress_data;
};

typedef SimSweep Sweep;

SimSweep *
sim_sweep_new (const SimModel *model, guint64 global_batch)
{
  SimSweep *sw = g_new0 (SimSweep, 1);
  sw->topos = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_topology_free);
  sw->node_counts = g_array_new (FALSE, FALSE, sizeof (int));
  sw->model = model;
  sw->global_batch = global_batch;
  sw->rows = g_ptr_array_new_with_free_func (sim_run_summary_free);
  return sw;
}

void
sim_sweep_free (SimSweep *sw)
{
  if (sw == NULL)
    return;
  g_ptr_array_unref (sw->rows);
  g_ptr_array_unref (sw->topos);
  g_array_unref (sw->node_counts);
  g_free (sw);
}

void
sim_sweep_add_cluster (SimSweep *sw, SimTopology *topo, int nodes)
{
  g_ptr_array_add (sw->topos, topo);
  g_array_append_val (sw->node_counts, nodes);
}

const SimTopology *
sim_sweep_cluster (const SimSweep *sw, int nodes)
{
  for (guint i = 0; i < sw->node_counts->len; i++)
    if (g_array_index (sw->node_counts, int, i) == nodes)
      return g_ptr_array_index (sw->topos, i);
  return NULL;
}

GPtrArray *
sim_sweep_rows (const SimSweep *sw)
{
  return sw->rows;
}

static void
add (Sweep *sw, int nodes, const char *reason, const char *fmt, ...) G_GNUC_PRINTF (4, 5);

static void
add (Sweep *sw, int nodes, const char *reason, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *label = NULL;
  Row *r;
  va_start (ap, fmt);
  label = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  r = sim_run_summary_new ((int) sw->rows->len, label, nodes);
  r->pruned = reason != NULL ? g_strdup (reason) : NULL;
  g_ptr_array_add (sw->rows, r);
}

static gboolean
divides (guint64 a, guint64 b)
{
  return a > 0 && b % a == 0;
}

void
sim_sweep_enumerate (SimSweep *sw)
{
  const SimModel *m = sw->model;
  for (guint ni = 0; ni < sw->node_counts->len; ni++) {
    int nodes = g_array_index (sw->node_counts, int, ni);
    const SimTopology *t = g_ptr_array_index (sw->topos, ni);
    int G = sim_topology_n_gpus (t), gpn = t->gpus_per_node > 0 ? t->gpus_per_node : G;
    for (int tp = 1; tp <= G; tp *= 2) {
      if (!divides ((guint64) tp, m->heads) || !divides ((guint64) tp, m->kv_heads) || G % tp)
        continue;
      for (int cp = 1; cp <= 4; cp *= 2) {
        if (G % (tp * cp) || !divides ((guint64) cp, m->seq_len))
          continue;
        for (int pp = 1; pp <= G / (tp * cp); pp++) {
          int dp;
          if ((G / (tp * cp)) % pp || !divides ((guint64) pp, m->layers))
            continue;
          dp = G / (tp * cp * pp);
          for (int mb = 1; mb <= 8; mb *= 2) {
            guint64 gb = sw->global_batch > 0 ? sw->global_batch : m->default_global_batch;
            if (gb == 0)
              gb = (guint64) (mb * dp * 8 * pp);
            if (gb % (guint64) (mb * dp))
              continue;
            for (int v = 1; v <= 4; v++) {
              const char *sched = v == 1 ? "1f1b" : "interleaved";
              if (v > 1 && (pp < 2 || m->layers % (guint64) (pp * v) || (gb / (guint64) (mb * dp)) % (guint64) pp))
                continue;
              for (int rc = 0; rc < 2; rc++)
                for (int z = 0; z <= 3; z++) {
                  const char *tpn = tp > gpn ? "tensor parallelism across nodes" : NULL;
                  g_autofree char *vs = v > 1 ? g_strdup_printf (",v=%d", v) : g_strdup ("");
                  if (z > 0 && dp * cp == 1)
                    continue;
                  add (sw, nodes, tpn,
                       "tp=%d,cp=%d,pp=%d,dp=%d,mb=%d,gb=%" G_GUINT64_FORMAT ",schedule=%s%s,recompute=%s,zero=%d",
                       tp, cp, pp, dp, mb, gb, sched, vs, rc ? "full" : "none", z);
                }
            }
            /* the dominated choices, counted so the user sees them go */
            add (sw, nodes, "GPipe: the time of 1F1B with more memory",
                 "tp=%d,cp=%d,pp=%d,dp=%d,mb=%d,schedule=gpipe", tp, cp, pp, dp, mb);
            add (sw, nodes, "selective recomputation under fused attention: the same as none",
                 "tp=%d,cp=%d,pp=%d,dp=%d,mb=%d,recompute=selective", tp, cp, pp, dp, mb);
            if (tp > 1)
              add (sw, nodes, "no sequence parallelism with tp > 1: the same traffic, more memory",
                   "tp=%d,cp=%d,pp=%d,dp=%d,mb=%d,no-sequence-parallel", tp, cp, pp, dp, mb);
          }
        }
      }
    }
  }
}

/* one simulation of label with the global batch replaced by gb (0: keep) */
static SimRun *
simulate (const SimTopology *t, const SimModel *m, const char *label, guint64 gb, GError **error)
{
  SimPlan *plan = sim_plan_new ();
  if (!sim_plan_parse_string (plan, label, error)) {
    sim_plan_free (plan);
    return NULL;
  }
  if (gb > 0)
    plan->global_batch = gb;
  return sim_run_evaluate (t, m, plan, label, SIM_RUN_TIME, error);
}

/* evaluate one row: prune by validity and memory, then simulate, screening
 * long runs by linear extrapolation from 2p and 4p micro-batches */
static void
evaluate (Sweep *sw, Row *r, gboolean exact)
{
  const SimTopology *t = sim_sweep_cluster (sw, r->nodes);
  g_autoptr (GError) error = NULL;
  g_autoptr (SimPlan) plan = sim_plan_new ();
  g_autoptr (SimMemory) mem = NULL;
  guint64 m, p, mb_dp;

  if (r->pruned != NULL)
    return;
  if (!sim_plan_parse_string (plan, r->label, &error) || !sim_plan_resolve (plan, t, sw->model, &error)) {
    r->pruned = g_strdup ("invalid: a constraint of the layout fails");
    return;
  }
  r->gpus = sim_plan_world_size (plan);
  mem = sim_memory_compute (t, sw->model, plan);
  r->peak_bytes = mem->peak_bytes;
  r->usable_bytes = mem->usable_bytes;
  if (!mem->fits) {
    g_free (r->oom_case);
    r->oom_case = g_strdup (sim_oom_case_name (mem->oom_case));
    r->pruned = g_strdup_printf ("out of memory, case %s", r->oom_case);
    return;
  }
  r->fits = TRUE;
  r->tight = mem->tight;
  m = plan->micro_batches;
  p = (guint64) plan->pp;
  mb_dp = (guint64) plan->micro_batch * (guint64) plan->dp;
  /* at least 8 and 16 micro-batches: a single stage's start-up (ZeRO-3's
   * first gathers, the last gradient reduction) must be a small part */
  p = MAX (p, 4);
  if (exact || m <= 4 * p) {
    g_autoptr (SimRun) run = simulate (t, sw->model, r->label, 0, &error);
    if (run == NULL) {
      r->pruned = g_strdup_printf ("simulation failed: %s", error->message);
      r->fits = FALSE;
      return;
    }
    sim_run_summary_fill (r, run);
    r->screened = FALSE;
    r->peak_bytes = run->memory->peak_bytes;
  } else {
    g_autoptr (SimRun) a = simulate (t, sw->model, r->label, 2 * p * mb_dp, &error);
    g_autoptr (SimRun) b = a != NULL ? simulate (t, sw->model, r->label, 4 * p * mb_dp, &error) : NULL;
    double k = 0;
    if (b == NULL) {
      r->pruned = g_strdup_printf ("simulation failed: %s", error->message);
      r->fits = FALSE;
      return;
    }
    /* from 4p to m micro-batches, at the slope between 2p and 4p */
    k = (double) (m - 4 * p) / (double) (2 * p);
#define EX(f) (b->time->f + k * (b->time->f - a->time->f))
    sim_run_summary_fill (r, b);
    r->step_s = EX (step_s);
    r->compute_s = EX (compute_s);
    r->tp_s = EX (exposed_tp_s);
    r->cp_s = EX (exposed_cp_s);
    r->pp_s = EX (exposed_pp_s);
    r->dp_s = EX (exposed_dp_s);
    {
      double bub_a = a->time->bubble_fraction * a->time->step_s;
      double bub_b = b->time->bubble_fraction * b->time->step_s;
      r->bubble = (bub_b + k * (bub_b - bub_a)) / r->step_s;
    }
#undef EX
    r->tokens_per_s = (double) plan->global_batch * (double) plan->seq_len / r->step_s;
    r->mfu = sim_cost_mfu (sw->model, plan, sim_topology_gpu_type (t, 0), r->step_s);
    r->screened = TRUE;
  }
  r->simulated = TRUE;
}

static void
work (gpointer data, gpointer user)
{
  Sweep *sw = user;
  int done;
  evaluate (sw, data, FALSE);
  done = g_atomic_int_add (&sw->done, 1) + 1;
  if (sw->progress != NULL)
    sw->progress (done, sw->total, sw->progress_data);
}

void
sim_sweep_keep_shard (SimSweep *sw, int shard, int shards)
{
  g_autoptr (GPtrArray) keep = g_ptr_array_new_with_free_func (sim_run_summary_free);
  if (shards <= 1)
    return;
  for (guint i = 0; i < sw->rows->len; i++) {
    Row *r = g_ptr_array_index (sw->rows, i);
    if ((int) (i % (guint) shards) == shard - 1)
      g_ptr_array_add (keep, r);
    else
      sim_run_summary_free (r);
  }
  g_ptr_array_set_free_func (sw->rows, NULL);
  g_ptr_array_unref (sw->rows);
  sw->rows = g_steal_pointer (&keep);
}

void
sim_sweep_run (SimSweep *sw, int threads, SimSweepProgress progress, gpointer data)
{
  GThreadPool *pool = g_thread_pool_new (work, sw, MAX (threads, 1), TRUE, NULL);
  sw->total = (int) sw->rows->len;
  sw->done = 0;
  sw->progress = progress;
  sw->progress_data = data;
  for (guint i = 0; i < sw->rows->len; i++)
    g_thread_pool_push (pool, g_ptr_array_index (sw->rows, i), NULL);
  g_thread_pool_free (pool, FALSE, TRUE);
}

void
sim_sweep_rank_rows (GPtrArray *rows)
{
  sim_run_summaries_rank (rows);
  sim_run_summaries_efficiency (rows);
}

GPtrArray *
sim_sweep_rank (SimSweep *sw, int exact)
{
  GPtrArray *ranked = g_ptr_array_new ();
  int redone = 0;
  for (guint i = 0; i < sw->rows->len; i++)
    g_ptr_array_add (ranked, g_ptr_array_index (sw->rows, i));
  sim_run_summaries_rank (ranked);
  /* the leaders, simulated in full where they were screened */
  for (guint i = 0; i < ranked->len && redone < exact; i++) {
    Row *r = g_ptr_array_index (ranked, i);
    if (!r->has_time)
      break;
    if (r->screened)
      evaluate (sw, r, TRUE);
    redone++;
  }
  sim_sweep_rank_rows (ranked);
  return ranked;
}

char *
sim_sweep_rows_json (GPtrArray *rows, const char *topo, const char *model, int shard, int shards)
{
  SimJson j;
  sim_json_init (&j, TRUE);
  sim_json_begin_object (&j, NULL);
  sim_json_string (&j, "schema", "sim-sweep/1");
  sim_json_string (&j, "topology", topo);
  sim_json_string (&j, "model", model);
  sim_json_int (&j, "shard", shard);
  sim_json_int (&j, "shards", shards);
  sim_json_begin_array (&j, "rows");
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = g_ptr_array_index (rows, i);
    sim_json_begin_object (&j, NULL);
    sim_json_int (&j, "index", r->index);
    sim_json_string (&j, "plan", r->label);
    sim_json_int (&j, "nodes", r->nodes);
    sim_json_int (&j, "gpus", r->gpus);
    sim_json_string (&j, "pruned", r->pruned);
    sim_report_summary_json (&j, r);
    sim_json_end_object (&j);
  }
  sim_json_end_array (&j);
  sim_json_end_object (&j);
  return sim_json_finish (&j);
}

gboolean
sim_sweep_rows_read (const char *path, const char *text, char **topo, char **model, GPtrArray *rows,
                     GError **error)
{
  g_autoptr (SimJsonValue) doc = NULL;
  const SimJsonValue *arr;
  const char *schema;
  doc = sim_json_parse (path, text, error);
  if (doc == NULL)
    return FALSE;
  schema = sim_json_get_string (doc, "schema");
  arr = sim_json_get (doc, "rows");
  if (schema == NULL || !g_str_equal (schema, "sim-sweep/1") || arr == NULL || arr->type != SIM_JARRAY) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s:1: expected the JSON of sim sweep --json (schema sim-sweep/1)", path);
    return FALSE;
  }
  if (*topo == NULL) {
    *topo = g_strdup (sim_json_get_string (doc, "topology"));
    *model = g_strdup (sim_json_get_string (doc, "model"));
  } else if (g_strcmp0 (*topo, sim_json_get_string (doc, "topology")) != 0 ||
             g_strcmp0 (*model, sim_json_get_string (doc, "model")) != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s:1: expected a shard of the same sweep (%s on %s)", path, *model, *topo);
    return FALSE;
  }
  for (guint i = 0; i < arr->items->len; i++) {
    const SimJsonValue *o = g_ptr_array_index (arr->items, i);
    Row *r = NULL;
    if (o == NULL || o->type != SIM_JOBJECT || sim_json_get_string (o, "plan") == NULL) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                   "%s:1: expected row %u of \"rows\" to be an object with a \"plan\" string", path, i);
      return FALSE;
    }
    r = g_new0 (Row, 1);
    r->e = NAN;
    r->index = (int) sim_json_get_number (o, "index", 0);
    r->label = g_strdup (sim_json_get_string (o, "plan"));
    r->nodes = (int) sim_json_get_number (o, "nodes", 0);
    r->gpus = (int) sim_json_get_number (o, "gpus", 0);
    r->pruned = g_strdup (sim_json_get_string (o, "pruned"));
    r->fits = sim_json_get_bool (o, "fits", FALSE);
    r->tight = sim_json_get_bool (o, "tight", FALSE);
    r->oom_case = g_strdup (sim_json_get_string (o, "oom_case"));
    r->peak_bytes = (guint64) sim_json_get_number (o, "peak_bytes", 0);
    r->usable_bytes = (guint64) sim_json_get_number (o, "usable_bytes", 0);
    r->has_time = sim_json_get (o, "step_s") != NULL;
    r->simulated = r->has_time;
    r->screened = sim_json_get_bool (o, "screened", FALSE);
    r->step_s = sim_json_get_number (o, "step_s", 0);
    r->tokens_per_s = sim_json_get_number (o, "tokens_per_s", 0);
    r->mfu = sim_json_get_number (o, "mfu", 0);
    r->bubble = sim_json_get_number (o, "bubble_fraction", 0);
    r->compute_s = sim_json_get_number (o, "compute_s", 0);
    r->tp_s = sim_json_get_number (o, "exposed_tp_s", 0);
    r->cp_s = sim_json_get_number (o, "exposed_cp_s", 0);
    r->pp_s = sim_json_get_number (o, "exposed_pp_s", 0);
    r->dp_s = sim_json_get_number (o, "exposed_dp_s", 0);
    r->wall = g_strdup (sim_json_get_string (o, "wall"));
    g_ptr_array_add (rows, r);
  }
  return TRUE;
}
