/* cmd-sweep.c — `sim sweep`: every layout of a job, pruned, simulated, ranked.
 *
 * Enumeration: every TP x CP x PP x DP factorisation of the GPUs (TP within a
 * node, dividing the heads and KV heads; PP dividing the layers), micro-batch
 * sizes 1, 2, 4, 8, the 1F1B and interleaved schedules (v = 2, 3, 4, as the
 * layers allow), no or full recomputation, ZeRO 0-3.  Before anything is
 * simulated, layouts are pruned when they are invalid, dominated (GPipe:
 * 1F1B's time with more memory; selective recomputation under fused
 * attention: the same as none; TP > 1 without sequence parallelism: the same
 * traffic with more memory) or out of memory by the ledger.
 *
 * The rest are simulated on all cores (a GLib thread pool; each layout's
 * result has its own slot, so the table is the same for any thread count).
 * A layout with more than 4p micro-batches (p at least 4) is screened from
 * two shorter simulations (2p and 4p micro-batches; the step grows linearly
 * with m once the pipeline is full) and the top K are then simulated in
 * full.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sim-error.h"
#include "sim-io.h"
#include "sim-json.h"
#include "sim-json-read.h"
#include "sim-paths.h"
#include "sim-run.h"

static const char *usage =
    "usage: sim sweep --topology T [--model M] [--nodes N] [--global-batch B] [--scale]\n"
    "                 [--top K] [--threads N] [--shard I/N] [--json FILE|-]\n"
    "       sim sweep --merge FILE FILE ... [--top K]\n"
    "\n"
    "Enumerates every layout of the job on the cluster, prunes what is invalid,\n"
    "dominated or out of memory, simulates the rest on every core and prints the\n"
    "top K.  --scale also tries 1, 2, 4 ... nodes, and the scaling efficiency\n"
    "E = t1 k1 / (k tk) is against the smallest layout that fits.  --shard I/N\n"
    "does the I-th of N slices (for a job array); --merge joins their --json files.\n";

typedef struct {
  int index;
  char *label;
  int nodes;
  /* filled by the evaluation */
  char *pruned;          /* reason, or NULL */
  gboolean simulated, fits, screened, has_time;
  char *oom_case;
  guint64 peak_bytes, usable_bytes;
  int gpus;
  double step_s, tokens_per_s, mfu, bubble, compute_s, tp_s, cp_s, pp_s, dp_s;
  char *wall;
  double e;
} Row;

static void
row_free (gpointer p)
{
  Row *r = p;
  g_free (r->label);
  g_free (r->pruned);
  g_free (r->oom_case);
  g_free (r->wall);
  g_free (r);
}

typedef struct {
  GPtrArray *topos;      /* SimTopology*, by node count index */
  GArray *node_counts;   /* int */
  const SimModel *model;
  guint64 global_batch;
  GPtrArray *rows;
  gint done;
  int total;
  gboolean progress;
  GMutex lock;
} Sweep;

static const SimTopology *
topo_for (Sweep *sw, int nodes)
{
  for (guint i = 0; i < sw->node_counts->len; i++)
    if (g_array_index (sw->node_counts, int, i) == nodes)
      return g_ptr_array_index (sw->topos, i);
  return NULL;
}

static void
add (Sweep *sw, int nodes, const char *reason, const char *fmt, ...) G_GNUC_PRINTF (4, 5);

static void
add (Sweep *sw, int nodes, const char *reason, const char *fmt, ...)
{
  va_list ap;
  Row *r = g_new0 (Row, 1);
  va_start (ap, fmt);
  r->label = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  r->index = (int) sw->rows->len;
  r->nodes = nodes;
  r->pruned = reason != NULL ? g_strdup (reason) : NULL;
  g_ptr_array_add (sw->rows, r);
}

static gboolean
divides (guint64 a, guint64 b)
{
  return a > 0 && b % a == 0;
}

static void
enumerate (Sweep *sw)
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

static void
fill_time (Row *r, const SimRun *run)
{
  const SimIteration *it = run->time;
  r->has_time = TRUE;
  r->step_s = it->step_s;
  r->tokens_per_s = it->tokens_per_s;
  r->mfu = it->mfu;
  r->bubble = it->bubble_fraction;
  r->compute_s = it->compute_s;
  r->tp_s = it->exposed_tp_s;
  r->cp_s = it->exposed_cp_s;
  r->pp_s = it->exposed_pp_s;
  r->dp_s = it->exposed_dp_s;
  g_free (r->wall);
  r->wall = g_strdup (sim_run_wall (run));
}

/* evaluate one row: prune by validity and memory, then simulate, screening
 * long runs by linear extrapolation from 2p and 4p micro-batches */
static void
evaluate (Sweep *sw, Row *r, gboolean exact)
{
  const SimTopology *t = topo_for (sw, r->nodes);
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
    fill_time (r, run);
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
    fill_time (r, b);
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
    r->mfu = sim_cost_model_flop (sw->model, plan) /
             (r->step_s * r->gpus * sim_topology_gpu_type (t, 0)->peak_flop_per_s[SIM_DTYPE_BF16]);
    r->screened = TRUE;
  }
  r->simulated = TRUE;
}

static void
progress (Sweep *sw)
{
  int done = g_atomic_int_add (&sw->done, 1) + 1;
  if (!sw->progress)
    return;
  g_mutex_lock (&sw->lock);
  {
    int width = 40, fill = sw->total > 0 ? width * done / sw->total : width;
    fprintf (stderr, "\r  [%.*s%*s] %d/%d layouts", fill, "========================================",
             width - fill, "", done, sw->total);
    if (done == sw->total)
      fputc ('\n', stderr);
    fflush (stderr);
  }
  g_mutex_unlock (&sw->lock);
}

static void
work (gpointer data, gpointer user)
{
  Sweep *sw = user;
  evaluate (sw, data, FALSE);
  progress (sw);
}

static int
rank_cmp (gconstpointer pa, gconstpointer pb)
{
  const Row *a = *(const Row *const *) pa, *b = *(const Row *const *) pb;
  if (a->has_time != b->has_time)
    return a->has_time ? -1 : 1;
  if (a->tokens_per_s != b->tokens_per_s)
    return a->tokens_per_s > b->tokens_per_s ? -1 : 1;
  return a->index - b->index;
}

static void
efficiency (GPtrArray *ranked)
{
  const Row *ref = NULL;
  for (guint i = 0; i < ranked->len; i++) {
    const Row *r = g_ptr_array_index (ranked, i);
    if (!r->has_time)
      continue;
    if (ref == NULL || r->gpus < ref->gpus)
      ref = r; /* ranked by throughput: the first of the fewest GPUs is its best */
  }
  for (guint i = 0; i < ranked->len; i++) {
    Row *r = g_ptr_array_index (ranked, i);
    r->e = ref != NULL && r->has_time ? (r->tokens_per_s / r->gpus) / (ref->tokens_per_s / ref->gpus) : NAN;
  }
}

static void
print_table (GString *out, GPtrArray *ranked, int top, gboolean scale)
{
  gsize w = 20;
  int shown = 0;
  for (guint i = 0; i < ranked->len && (int) i < top; i++)
    w = MAX (w, strlen (((Row *) g_ptr_array_index (ranked, i))->label));
  g_string_append_printf (out, "%4s  %-*s %5s %9s %9s %11s %6s %7s %7s %7s %7s %5s  %s\n", "rank", (int) w, "plan",
                          "GPUs", "peak GiB", "step s", "tokens/s", "MFU", "bubble", "TP exp", "PP exp",
                          "DP exp", "E", "wall");
  for (guint i = 0; i < ranked->len && shown < top; i++) {
    const Row *r = g_ptr_array_index (ranked, i);
    if (!r->has_time)
      break;
    g_string_append_printf (out, "%4d  %-*s %5d %9.1f %9.3f %11.0f %5.1f%% %6.1f%% %7.3f %7.3f %7.3f %5.2f  %s%s\n",
                            ++shown, (int) w, r->label, r->gpus, r->peak_bytes / 1073741824.0, r->step_s,
                            r->tokens_per_s, 100 * r->mfu, 100 * r->bubble, r->tp_s, r->pp_s, r->dp_s, r->e,
                            r->wall != NULL ? r->wall : "-", r->screened ? " (screened)" : "");
  }
  (void) scale;
}

static void
print_counts (GString *out, GPtrArray *rows)
{
  g_autoptr (GHashTable) reasons = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) order = g_ptr_array_new ();
  int simulated = 0, screened = 0, pruned = 0;
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = g_ptr_array_index (rows, i);
    if (r->pruned != NULL) {
      gpointer n = g_hash_table_lookup (reasons, r->pruned);
      if (n == NULL)
        g_ptr_array_add (order, r->pruned);
      g_hash_table_insert (reasons, r->pruned, GINT_TO_POINTER (GPOINTER_TO_INT (n) + 1));
      pruned++;
    } else if (r->simulated) {
      simulated++;
      screened += r->screened;
    }
  }
  g_string_append_printf (out, "%u layouts: %d simulated (%d of them screened from shorter runs), %d pruned before simulation:\n",
                          rows->len, simulated, screened, pruned);
  for (guint i = 0; i < order->len; i++)
    g_string_append_printf (out, "  %6d  %s\n", GPOINTER_TO_INT (g_hash_table_lookup (reasons, g_ptr_array_index (order, i))),
                            (const char *) g_ptr_array_index (order, i));
}

static char *
rows_json (GPtrArray *rows, const char *topo, const char *model, int shard, int shards)
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
    sim_json_bool (&j, "fits", r->fits);
    sim_json_string (&j, "oom_case", r->oom_case);
    sim_json_uint (&j, "peak_bytes", r->peak_bytes);
    sim_json_uint (&j, "usable_bytes", r->usable_bytes);
    if (r->has_time) {
      sim_json_bool (&j, "screened", r->screened);
      sim_json_double (&j, "step_s", r->step_s);
      sim_json_double (&j, "tokens_per_s", r->tokens_per_s);
      sim_json_double (&j, "mfu", r->mfu);
      sim_json_double (&j, "bubble_fraction", r->bubble);
      sim_json_double (&j, "compute_s", r->compute_s);
      sim_json_double (&j, "exposed_tp_s", r->tp_s);
      sim_json_double (&j, "exposed_cp_s", r->cp_s);
      sim_json_double (&j, "exposed_pp_s", r->pp_s);
      sim_json_double (&j, "exposed_dp_s", r->dp_s);
      sim_json_string (&j, "wall", r->wall);
      sim_json_double (&j, "scaling_efficiency", r->e);
    }
    sim_json_end_object (&j);
  }
  sim_json_end_array (&j);
  sim_json_end_object (&j);
  return sim_json_finish (&j);
}

static int
merge (GPtrArray *files, int top, GError **error)
{
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func (row_free);
  g_autoptr (GPtrArray) ranked = NULL;
  g_autoptr (GString) out = g_string_new (NULL);
  g_autofree char *topo = NULL, *model = NULL;
  for (guint f = 0; f < files->len; f++) {
    const char *path = g_ptr_array_index (files, f);
    g_autofree char *text = NULL;
    g_autoptr (GError) local = NULL;
    g_autoptr (SimJsonValue) doc = NULL;
    const SimJsonValue *arr;
    const char *schema;
    if (!g_file_get_contents (path, &text, NULL, &local)) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: cannot read: %s", path, local->message);
      return 2;
    }
    doc = sim_json_parse (path, text, error);
    if (doc == NULL)
      return 2;
    schema = sim_json_get_string (doc, "schema");
    arr = sim_json_get (doc, "rows");
    if (schema == NULL || !g_str_equal (schema, "sim-sweep/1") || arr == NULL || arr->type != SIM_JARRAY) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s:1: expected the JSON of sim sweep --json (schema sim-sweep/1)", path);
      return 2;
    }
    if (topo == NULL) {
      topo = g_strdup (sim_json_get_string (doc, "topology"));
      model = g_strdup (sim_json_get_string (doc, "model"));
    } else if (g_strcmp0 (topo, sim_json_get_string (doc, "topology")) != 0 ||
               g_strcmp0 (model, sim_json_get_string (doc, "model")) != 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s:1: expected a shard of the same sweep (%s on %s)", path, model, topo);
      return 2;
    }
    for (guint i = 0; i < arr->items->len; i++) {
      const SimJsonValue *o = g_ptr_array_index (arr->items, i);
      Row *r = g_new0 (Row, 1);
      r->index = (int) sim_json_get_number (o, "index", 0);
      r->label = g_strdup (sim_json_get_string (o, "plan"));
      r->nodes = (int) sim_json_get_number (o, "nodes", 0);
      r->gpus = (int) sim_json_get_number (o, "gpus", 0);
      r->pruned = g_strdup (sim_json_get_string (o, "pruned"));
      r->fits = sim_json_get_bool (o, "fits", FALSE);
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
  }
  ranked = g_ptr_array_new ();
  for (guint i = 0; i < rows->len; i++)
    g_ptr_array_add (ranked, g_ptr_array_index (rows, i));
  g_ptr_array_sort (ranked, rank_cmp);
  efficiency (ranked);
  g_string_append_printf (out, "sim sweep --merge: %s on %s, %u shard files\n\n", model, topo, files->len);
  print_table (out, ranked, top, FALSE);
  g_string_append_c (out, '\n');
  print_counts (out, rows);
  fputs (out->str, stdout);
  return 0;
}

int
sim_cmd_sweep (int argc, char **argv, GError **error)
{
  g_autofree char *topology = NULL, *model_s = NULL, *nodes_s = NULL, *gb_s = NULL, *top_s = NULL;
  g_autofree char *threads_s = NULL, *shard_s = NULL, *json = NULL, *calibration = NULL;
  g_autoptr (GPtrArray) merge_files = g_ptr_array_new_with_free_func (g_free);
  gboolean help = FALSE, scale = FALSE, quiet = FALSE;
  const SimCliOption options[] = {
    { "topology", TRUE, &topology, NULL, NULL }, { "model", TRUE, &model_s, NULL, NULL },
    { "nodes", TRUE, &nodes_s, NULL, NULL }, { "global-batch", TRUE, &gb_s, NULL, NULL },
    { "top", TRUE, &top_s, NULL, NULL }, { "threads", TRUE, &threads_s, NULL, NULL },
    { "shard", TRUE, &shard_s, NULL, NULL }, { "json", TRUE, &json, NULL, NULL },
    { "merge", TRUE, NULL, NULL, merge_files }, { "scale", FALSE, NULL, &scale, NULL },
    { "quiet", FALSE, NULL, &quiet, NULL }, { "calibration", TRUE, &calibration, NULL, NULL }, { "help", FALSE, NULL, &help, NULL },
    { NULL, FALSE, NULL, NULL, NULL },
  };
  g_autofree char *topo_path = NULL, *model_path = NULL;
  g_autoptr (SimModel) model = NULL;
  g_autoptr (GPtrArray) ranked = g_ptr_array_new ();
  g_autoptr (GString) out = g_string_new (NULL);
  Sweep sw = { 0 };
  int nodes = 0, top = 10, threads = (int) g_get_num_processors (), shard = 1, shards = 1;
  int max_nodes = 0;
  guint64 gb = 0;
  gint64 t0 = g_get_monotonic_time ();

  /* --merge takes several files: gather the words after it */
  for (int i = 2; i < argc; i++)
    if (g_str_equal (argv[i], "--merge")) {
      int k = i + 1;
      while (k < argc && !g_str_has_prefix (argv[k], "--"))
        g_ptr_array_add (merge_files, g_strdup (argv[k++]));
      for (int x = i; x + (k - i) < argc; x++)
        argv[x] = argv[x + (k - i)];
      argc -= k - i;
      i--;
    }
  if (!sim_cli_parse (argc, argv, 2, options, "sweep", error))
    return 2;
  if (help) {
    fputs (usage, stdout);
    return 0;
  }
  if (top_s != NULL && !sim_cli_int ("top", top_s, 1, 100000, &top, error))
    return 2;
  if (merge_files->len > 0)
    return merge (merge_files, top, error);
  if (topology == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "sweep: expected --topology (or --merge FILE...); see sim sweep --help");
    return 2;
  }
  if (nodes_s != NULL && !sim_cli_int ("nodes", nodes_s, 1, 65536, &nodes, error))
    return 2;
  if (threads_s != NULL && !sim_cli_int ("threads", threads_s, 1, 1024, &threads, error))
    return 2;
  if (gb_s != NULL) {
    int v = 0;
    if (!sim_cli_int ("global-batch", gb_s, 1, 1 << 30, &v, error))
      return 2;
    gb = (guint64) v;
  }
  if (shard_s != NULL && (sscanf (shard_s, "%d/%d", &shard, &shards) != 2 || shards < 1 || shard < 1 || shard > shards)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--shard: expected I/N with 1 <= I <= N, for example 3/8, got '%s'", shard_s);
    return 2;
  }
  if ((topo_path = sim_paths_resolve (topology, "topologies", error)) == NULL ||
      (model_path = sim_paths_resolve (model_s != NULL ? model_s : "llama3-70b", "models", error)) == NULL ||
      (model = sim_model_load (model_path, error)) == NULL)
    return 2;

  sw.topos = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_topology_free);
  sw.node_counts = g_array_new (FALSE, FALSE, sizeof (int));
  sw.model = model;
  sw.global_batch = gb;
  sw.rows = g_ptr_array_new_with_free_func (row_free);
  g_mutex_init (&sw.lock);
  {
    SimTopology *t = sim_cli_load_topology (topo_path, nodes, calibration, error);
    if (t == NULL)
      return 2;
    if (!sim_topology_check_one_gpu_type (t, error)) {
      sim_topology_free (t);
      return 2;
    }
    max_nodes = t->n_nodes;
    if (!scale) {
      g_ptr_array_add (sw.topos, t);
      g_array_append_val (sw.node_counts, max_nodes);
    } else {
      sim_topology_free (t);
      for (int n = 1; n <= max_nodes; n *= 2) {
        SimTopology *tn = sim_cli_load_topology (topo_path, n, calibration, error);
        if (tn == NULL)
          return 2;
        g_ptr_array_add (sw.topos, tn);
        g_array_append_val (sw.node_counts, n);
        if (n < max_nodes && n * 2 > max_nodes) {
          tn = sim_cli_load_topology (topo_path, max_nodes, calibration, error);
          g_ptr_array_add (sw.topos, tn);
          g_array_append_val (sw.node_counts, max_nodes);
        }
      }
    }
  }
  enumerate (&sw);

  /* this shard's rows, evaluated on the pool */
  {
    g_autoptr (GPtrArray) mine = g_ptr_array_new ();
    GThreadPool *pool = NULL;
    for (guint i = 0; i < sw.rows->len; i++)
      if ((int) (i % (guint) shards) == shard - 1)
        g_ptr_array_add (mine, g_ptr_array_index (sw.rows, i));
    sw.total = (int) mine->len;
    sw.progress = !quiet && isatty (STDERR_FILENO);
    pool = g_thread_pool_new (work, &sw, threads, TRUE, NULL);
    for (guint i = 0; i < mine->len; i++)
      g_thread_pool_push (pool, g_ptr_array_index (mine, i), NULL);
    g_thread_pool_free (pool, FALSE, TRUE);
    for (guint i = 0; i < mine->len; i++)
      g_ptr_array_add (ranked, g_ptr_array_index (mine, i));
    /* the rows of other shards leave the table and the counts */
    if (shards > 1) {
      g_autoptr (GPtrArray) keep = g_ptr_array_new_with_free_func (row_free);
      for (guint i = 0; i < sw.rows->len; i++) {
        Row *r = g_ptr_array_index (sw.rows, i);
        if ((int) (i % (guint) shards) == shard - 1)
          g_ptr_array_add (keep, r);
        else
          row_free (r);
      }
      g_ptr_array_set_free_func (sw.rows, NULL);
      g_ptr_array_unref (sw.rows);
      sw.rows = g_steal_pointer (&keep);
    }
  }
  g_ptr_array_sort (ranked, rank_cmp);
  /* the leaders, simulated in full where they were screened */
  {
    int redone = 0;
    for (guint i = 0; i < ranked->len && redone < top; i++) {
      Row *r = g_ptr_array_index (ranked, i);
      if (!r->has_time)
        break;
      if (r->screened)
        evaluate (&sw, r, TRUE);
      redone++;
    }
    g_ptr_array_sort (ranked, rank_cmp);
  }
  efficiency (ranked);

  if (json != NULL) {
    g_autofree char *text = rows_json (sw.rows, topology, model->name, shard, shards);
    if (g_str_equal (json, "-")) {
      fputs (text, stdout);
      goto done;
    }
    if (!sim_write_file (json, text, error)) {
      g_prefix_error (error, "--json: ");
      return 2;
    }
  }
  g_string_append_printf (out, "sim sweep: %s on %s, up to %d nodes%s; global batch %s; top %d by tokens/s\n\n",
                          model->name, topology, max_nodes, scale ? " (scaling 1, 2, 4 ... nodes)" : "",
                          gb_s != NULL ? gb_s : "the model's", top);
  if (shards > 1)
    g_string_append_printf (out, "shard %d of %d\n\n", shard, shards);
  print_table (out, ranked, top, scale);
  g_string_append_c (out, '\n');
  print_counts (out, sw.rows);
  {
    /* the diagnosis of the best, simulated again for its full report */
    const Row *best = ranked->len > 0 ? g_ptr_array_index (ranked, 0) : NULL;
    if (best != NULL && best->has_time) {
      g_autoptr (GError) local = NULL;
      g_autoptr (SimRun) run = simulate (topo_for (&sw, best->nodes), model, best->label, 0, &local);
      if (run != NULL) {
        g_autoptr (GPtrArray) d = sim_run_diagnose (run, NULL);
        g_string_append_printf (out, "\nbest: %s\n", best->label);
        for (guint i = 0; i < d->len; i++)
          g_string_append_printf (out, "  %s\n", (const char *) g_ptr_array_index (d, i));
        if (scale)
          g_string_append_printf (out, "  scaling efficiency E = %.2f against the smallest layout that fits\n", best->e);
      }
    }
  }
  g_string_append_printf (out, "\n%d threads, %.1f s\n", threads, (double) (g_get_monotonic_time () - t0) / 1e6);
  fputs (out->str, stdout);
done:
  g_ptr_array_unref (sw.rows);
  g_ptr_array_unref (sw.topos);
  g_array_unref (sw.node_counts);
  g_mutex_clear (&sw.lock);
  return 0;
}
