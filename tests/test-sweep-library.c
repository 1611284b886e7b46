/* Unit tests of the sweep library (sim-sweep.h): Llama-3-8B on one DGX H100
 * node (8 GPUs), global batch 16. */
#include <glib.h>

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim-json-read.h"
#include "sim-error.h"
#include "sim-plan.h"
#include "sim-run.h"
#include "sim-sweep.h"
#include "test-util.h"

static SimSweep *
make (const SimModel *m)
{
  SimSweep *sw = sim_sweep_new (m, 16);
  sim_sweep_add_cluster (sw, test_load_topology ("dgx8x4.xml", 1), 1);
  sim_sweep_enumerate (sw);
  return sw;
}

/* the number a request holds for option key (sim_plan_request_value) */
static int
ask (const SimPlanRequest *q, const char *key)
{
  return (int) sim_plan_request_value (q, key);
}

/* a row's request is the one its label spells, as
 * sim_plan_request_parse_string reads it: the same options given, the
 * same plan resolved on the sweep's cluster, and its global batch that
 * request's */
static void
assert_row_plan (SimSweep *sw, const SimModel *m, const SimSweepRow *r)
{
  g_autoptr (SimPlanRequest) label = sim_plan_request_new ();
  g_autoptr (SimPlan) p = NULL, q = NULL;
  const SimTopology *t = sim_sweep_cluster (sw, r->nodes);
  g_assert_nonnull (r->request);
  g_assert_true (sim_plan_request_parse_string (label, r->label, NULL));
  g_assert_nonnull (p = sim_plan_resolve (label, t, m, NULL));
  g_assert_nonnull (q = sim_plan_resolve (r->request, t, m, NULL));
  g_assert_cmpuint (r->global_batch, ==, (guint64) sim_plan_request_value (label, "global-batch"));
  g_assert_cmpuint (q->given, ==, p->given);
  g_assert_cmpint (q->tp, ==, p->tp);
  g_assert_cmpint (q->cp, ==, p->cp);
  g_assert_cmpint (q->pp, ==, p->pp);
  g_assert_cmpint (q->dp, ==, p->dp);
  g_assert_cmpint (q->ep, ==, p->ep);
  g_assert_cmpint (q->etp, ==, p->etp);
  g_assert_cmpint (q->micro_batch, ==, p->micro_batch);
  g_assert_cmpuint (q->global_batch, ==, p->global_batch);
  g_assert_cmpuint (q->seq_len, ==, p->seq_len);
  g_assert_cmpint (q->schedule, ==, p->schedule);
  g_assert_cmpint (q->virtual_stages, ==, p->virtual_stages);
  g_assert_cmpint (q->recompute, ==, p->recompute);
  g_assert_cmpuint (q->recompute_modules, ==, p->recompute_modules);
  g_assert_cmpint (q->zero, ==, p->zero);
  g_assert_cmpint (q->fp8, ==, p->fp8);
  g_assert_cmpint (q->fp4, ==, p->fp4);
  g_assert_cmpint (q->moe_a2a_overlap, ==, p->moe_a2a_overlap);
  g_assert_cmpint (q->cuda_graph_impl, ==, p->cuda_graph_impl);
  g_assert_cmpuint (q->cuda_graph_scope, ==, p->cuda_graph_scope);
  g_assert_cmpfloat (q->gpu_variation, ==, p->gpu_variation);
  g_assert_cmpstr (q->layout != NULL ? q->layout->text : NULL, ==, p->layout != NULL ? p->layout->text : NULL);
}

/* the largest counts the progress callback saw, how often it was called,
 * and whether the total it was given ever changed (the workers call it
 * under no lock of the sweep's) */
typedef struct {
  GMutex lock;
  int calls, done, simulated, total;
  gboolean total_changed;
} Progress;

static void
record_progress (int done, int simulated, int total, gpointer data)
{
  Progress *p = data;
  g_mutex_lock (&p->lock);
  /* calls race to the lock: a count may arrive after a larger one */
  p->calls++;
  p->total_changed |= total != p->total && p->total != 0;
  p->done = MAX (p->done, done);
  p->simulated = MAX (p->simulated, simulated);
  p->total = total;
  g_mutex_unlock (&p->lock);
}

/* The progress counts: Llama-3-8B on one DGX H100 node, 1F1B, top 3 (so
 * that most layouts are pruned by their bound).  The callback ends at
 * every layout done, and the layouts it calls simulated are the rows the
 * sweep's own tally counts simulated (sim_sweep_summary's "N simulated"):
 * none is pruned after its simulation here, as no --min-headroom is set
 * and none fails.  Fewer than all were simulated, which a progress line
 * that called every layout done "simulated" hid. */
static void
test_progress (void)
{
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimSweep) sw = sim_sweep_new (m, 0);
  SimSweepConstraints c = { .schedules = 1u << SIM_SCHEDULE_1F1B };
  Progress p = { 0 };
  GPtrArray *rows;
  int simulated = 0;
  g_mutex_init (&p.lock);
  sim_sweep_set_constraints (sw, &c);
  sim_sweep_add_cluster (sw, test_load_topology ("dgx-h100.xml", 1), 1);
  sim_sweep_set_keep (sw, 3);
  sim_sweep_enumerate (sw);
  sim_sweep_run (sw, 2, record_progress, &p);
  rows = sim_sweep_rows (sw);
  for (guint i = 0; i < rows->len; i++) {
    const SimSweepRow *r = g_ptr_array_index (rows, i);
    simulated += r->pruned == NULL && r->simulated;
  }
  g_assert_false (p.total_changed);
  g_assert_cmpint (p.total, ==, (int) rows->len);
  g_assert_cmpint (p.done, ==, p.total);
  g_assert_cmpint (p.calls, ==, p.total);
  g_assert_cmpint (p.simulated, ==, simulated);
  g_assert_cmpint (simulated, >, 0);
  g_assert_cmpint (simulated, <, p.total);
  g_test_message ("%d layouts, %d simulated", p.total, p.simulated);
  g_mutex_clear (&p.lock);
}

/* Plans as values: Llama-3-8B on one DGX H100 node at its global batch of
 * 1024, 1F1B, every layout that fits simulated.  Each row not pruned
 * carries the plan of its label, with the pipeline layout the sweep added
 * to it (some rows gain one: the last stage holds the output layer); a
 * pruned row has dropped its plan and keeps its global batch, 1024, or 0
 * for a dominated choice (its label names none).  Read back from the
 * sweep's JSON, every row carries the same, and the global batch of each.
 * (/sweep/graphs checks a row that gains a CUDA graph scope.) */
static void
test_plans (void)
{
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimSweep) sw = sim_sweep_new (m, 0);
  g_autoptr (GPtrArray) back = g_ptr_array_new_with_free_func (sim_run_summary_free);
  g_autofree char *text = NULL, *topo = NULL, *model = NULL;
  g_autoptr (GError) error = NULL;
  SimSweepConstraints c = { .schedules = 1u << SIM_SCHEDULE_1F1B };
  GPtrArray *rows;
  int timed = 0, laid_out = 0;
  sim_sweep_set_constraints (sw, &c);
  sim_sweep_add_cluster (sw, test_load_topology ("dgx-h100.xml", 1), 1);
  sim_sweep_set_threads (sw, 2);
  sim_sweep_enumerate (sw);
  sim_sweep_run (sw, 2, NULL, NULL);
  rows = sim_sweep_rows (sw);
  for (guint i = 0; i < rows->len; i++) {
    const SimSweepRow *r = g_ptr_array_index (rows, i);
    if (r->pruned != NULL) {
      g_assert_null (r->request);
      g_assert_cmpuint (r->global_batch, ==, strstr (r->label, ",gb=") != NULL ? 1024 : 0);
      continue;
    }
    assert_row_plan (sw, m, r);
    g_assert_cmpuint (r->global_batch, ==, 1024);
    timed += r->has_time;
    laid_out += strstr (r->label, ",layout=") != NULL;
  }
  g_assert_cmpint (timed, >, 0);
  g_assert_cmpint (laid_out, >, 0);
  g_test_message ("%u rows, %d timed, %d with a layout", rows->len, timed, laid_out);
  text = sim_sweep_json (sw, "dgx-h100", "nodes=1", 1, 1);
  g_assert_true (sim_sweep_rows_read ("x.json", text, &topo, &model, back, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (back->len, ==, rows->len);
  for (guint i = 0; i < back->len; i++) {
    const SimSweepRow *y = g_ptr_array_index (back, i);
    const SimSweepRow *x = g_ptr_array_index (rows, (guint) y->index);
    g_assert_cmpstr (x->label, ==, y->label);
    g_assert_cmpuint (x->global_batch, ==, y->global_batch);
    if (y->pruned != NULL)
      g_assert_null (y->request);
    else
      assert_row_plan (sw, m, y);
  }
}

/* Enumeration: every label is a distinct valid plan string; TP stays within
 * the 8 GPUs and divides the 8 KV heads; ZeRO > 0 needs dp x cp > 1; PP
 * divides the 32 layers and the 8 GPUs.  Layouts with tp 8 x cp 1: pp 1 and
 * dp 1 only (8 / 8), so no ZeRO stage above 0 appears for them. */
static void
test_enumerate (void)
{
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimSweep) sw = make (m);
  GPtrArray *rows = sim_sweep_rows (sw);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  int tp8 = 0;
  g_assert_cmpuint (rows->len, >, 50);
  for (guint i = 0; i < rows->len; i++) {
    const SimSweepRow *r = g_ptr_array_index (rows, i);
    g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
    g_assert_cmpint (r->index, ==, (int) i);
    g_assert_false (g_hash_table_contains (seen, r->label));
    g_hash_table_add (seen, r->label);
    g_assert_true (sim_plan_request_parse_string (p_req, r->label, NULL));
    g_assert_cmpint (8 % ask (p_req, "tp"), ==, 0);
    g_assert_cmpint (32 % MAX (ask (p_req, "pp"), 1), ==, 0);
    if (ask (p_req, "zero") > 0)
      g_assert_cmpint (ask (p_req, "dp") * ask (p_req, "cp"), >, 1);
    if (ask (p_req, "tp") == 8 && ask (p_req, "cp") == 1 && ask (p_req, "zero") >= 0 && r->pruned == NULL) {
      g_assert_cmpint (ask (p_req, "pp"), ==, 1);
      g_assert_cmpint (ask (p_req, "zero"), ==, 0);
      tp8++;
    }
  }
  /* tp 8: micro-batch 1, 2, 4, 8 (16 divisible by each), 1f1b only (pp 1),
   * recompute none or full, ZeRO 0: 4 x 2 = 8 layouts */
  g_assert_cmpint (tp8, ==, 8);
}

/* Evaluation and ranking: every layout that was simulated fits by the
 * ledger; the ranking is by tokens/s, the simulated ones first; the scaling
 * efficiency of the best layout is 1 (one cluster size: it is its own
 * reference); one thread and two give the same rows. */
static void
test_run_and_rank (void)
{
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimSweep) a = make (m);
  g_autoptr (SimSweep) b = make (m);
  g_autoptr (GPtrArray) ra = NULL, rb = NULL;
  sim_sweep_run (a, 1, NULL, NULL);
  sim_sweep_run (b, 2, NULL, NULL);
  ra = sim_sweep_rank (a, 3);
  rb = sim_sweep_rank (b, 3);
  g_assert_cmpuint (ra->len, ==, rb->len);
  for (guint i = 0; i < ra->len; i++) {
    const SimSweepRow *x = g_ptr_array_index (ra, i), *y = g_ptr_array_index (rb, i);
    g_assert_cmpstr (x->label, ==, y->label);
    g_assert_cmpfloat (x->step_s, ==, y->step_s);
    if (x->has_time) {
      g_assert_true (x->fits);
      /* within usable, or over it only by the fragmentation allowance */
      g_assert_true (x->peak_bytes <= x->usable_bytes || x->tight);
      g_assert_cmpfloat (x->tokens_per_s, >, 0);
      g_assert_cmpfloat (fabs (x->tokens_per_s * x->step_s - 16.0 * 8192), <, 1e-6 * 16 * 8192);
    }
    if (i > 0) {
      const SimSweepRow *prev = g_ptr_array_index (ra, i - 1);
      /* the simulated ones first: those that fit with the fragmentation
       * allowance, then the tight ones, each by tokens/s */
      if (x->has_time) {
        g_assert_true (prev->has_time);
        g_assert_true (!prev->tight || x->tight);
        if (prev->tight == x->tight)
          g_assert_cmpfloat (prev->tokens_per_s, >=, x->tokens_per_s);
      }
    }
  }
  {
    const SimSweepRow *best = g_ptr_array_index (ra, 0);
    g_assert_true (best->has_time);
    g_assert_cmpfloat (best->e, ==, 1.0);
  }
}

/* Shards partition the rows: shard i of 3 keeps rows i-1, i+2, ... */
static void
test_shards (void)
{
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  guint total = 0, all;
  {
    g_autoptr (SimSweep) sw = make (m);
    all = sim_sweep_rows (sw)->len;
  }
  for (int s = 1; s <= 3; s++) {
    g_autoptr (SimSweep) sw = make (m);
    GPtrArray *rows;
    sim_sweep_keep_shard (sw, s, 3);
    rows = sim_sweep_rows (sw);
    for (guint i = 0; i < rows->len; i++)
      g_assert_cmpint (((SimSweepRow *) g_ptr_array_index (rows, i))->index % 3, ==, s - 1);
    total += rows->len;
  }
  g_assert_cmpuint (total, ==, all);
}

/* The JSON of a shard reads back to the same rows; a row without a plan
 * string is refused with the file, the line and what was expected. */
static void
test_json (void)
{
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimSweep) sw = make (m);
  g_autoptr (GPtrArray) back = g_ptr_array_new_with_free_func (sim_run_summary_free);
  g_autofree char *text = NULL, *topo = NULL, *model = NULL;
  g_autoptr (GError) error = NULL;
  GPtrArray *rows;
  sim_sweep_keep_shard (sw, 1, 8);
  sim_sweep_run (sw, 1, NULL, NULL);
  rows = sim_sweep_rows (sw);
  text = sim_sweep_json (sw, "dgx8x4", "nodes=1", 1, 8);
  g_assert_true (sim_sweep_rows_read ("x.json", text, &topo, &model, back, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (topo, ==, "dgx8x4");
  g_assert_cmpuint (back->len, ==, rows->len);
  for (guint i = 0; i < rows->len; i++) {
    const SimSweepRow *x = g_ptr_array_index (rows, i), *y = g_ptr_array_index (back, i);
    g_assert_cmpstr (x->label, ==, y->label);
    g_assert_cmpstr (x->pruned, ==, y->pruned);
    g_assert_cmpint (x->has_time, ==, y->has_time);
    g_assert_cmpint (x->tight, ==, y->tight);
    if (x->has_time)
      g_assert_cmpfloat (fabs (x->step_s - y->step_s), <=, 1e-9 * x->step_s);
  }
  g_assert_false (sim_sweep_rows_read (
      "bad.json",
      "{\"schema\":\"sim-sweep/3\",\"topology\":\"dgx8x4\",\n"
      "\"model\":\"llama3-8b\",\"options\":{},\"layouts\":1,\"shard\":1,\"shards\":1,\n"
      "\"rows\":[{\"rank\":null,\"index\":0,\n\"plan\":null}]}",
      &topo, &model, back, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_USAGE);
  g_assert_cmpstr (error->message, ==, "bad.json:4: expected \"plan\" to be a string, not null");
}

/* a scratch file holding text; g_free the path, unlink it */
static char *
scratch (const char *name, const char *text)
{
  char *path = g_build_filename (g_get_tmp_dir (), name, NULL);
  g_autofree char *unique = g_strdup_printf ("%s-%d", path, (int) getpid ());
  g_free (path);
  g_assert_true (g_file_set_contents (unique, text, -1, NULL));
  return g_steal_pointer (&unique);
}

/* Three shards of the sweep, merged in any order, give every layout of the
 * whole sweep once, in enumeration order; one missing, one twice, or a
 * shard of another sweep (other options) is refused. */
static void
test_merge (void)
{
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (SimSweepMerged) merged = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *other = NULL;
  guint all;
  {
    g_autoptr (SimSweep) sw = make (m);
    all = sim_sweep_rows (sw)->len;
  }
  for (int s = 3; s >= 1; s--) {
    g_autoptr (SimSweep) sw = make (m);
    g_autofree char *text = NULL, *name = g_strdup_printf ("sim-merge-%d.json", s);
    sim_sweep_keep_shard (sw, s, 3);
    sim_sweep_run (sw, 2, NULL, NULL);
    text = sim_sweep_json (sw, "dgx8x4", "nodes=1", s, 3);
    g_ptr_array_add (paths, scratch (name, text));
    if (s == 2) {
      g_autofree char *o = sim_sweep_json (sw, "dgx8x4", "nodes=2", s, 3);
      other = scratch ("sim-merge-other.json", o);
    }
  }
  merged = sim_sweep_merge ((const char *const *) paths->pdata, 3, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (merged->rows->len, ==, all);
  g_assert_cmpuint (merged->layouts, ==, all);
  g_assert_cmpint (merged->shards, ==, 3);
  g_assert_cmpstr (merged->options, ==, "nodes=1");
  for (guint i = 0; i < all; i++)
    g_assert_cmpint (((SimSweepRow *) g_ptr_array_index (merged->rows, i))->index, ==, (int) i);

  /* shards 3 and 1: shard 2 is missing */
  g_clear_pointer (&merged, sim_sweep_merged_free);
  {
    const char *two[] = { g_ptr_array_index (paths, 0), g_ptr_array_index (paths, 2) };
    g_autofree char *want =
        g_strdup_printf ("%s: expected all 3 shards of the sweep: shard 2 is missing", two[0]);
    g_assert_null (sim_sweep_merge (two, 2, &error));
    g_assert_error (error, SIM_ERROR, SIM_ERROR_USAGE);
    g_assert_cmpstr (error->message, ==, want);
    g_clear_error (&error);
  }
  /* shard 3 twice */
  {
    const char *twice[] = { g_ptr_array_index (paths, 0), g_ptr_array_index (paths, 1),
                            g_ptr_array_index (paths, 2), g_ptr_array_index (paths, 0) };
    g_assert_null (sim_sweep_merge (twice, 4, &error));
    g_assert_error (error, SIM_ERROR, SIM_ERROR_USAGE);
    g_assert_nonnull (strstr (error->message, "expected each shard once: shard 3 of 3 is also"));
    g_clear_error (&error);
  }
  /* shard 2 of a sweep with other options */
  {
    const char *mixed[] = { g_ptr_array_index (paths, 0), other, g_ptr_array_index (paths, 2) };
    g_assert_null (sim_sweep_merge (mixed, 3, &error));
    g_assert_error (error, SIM_ERROR, SIM_ERROR_USAGE);
    g_assert_nonnull (strstr (error->message, "its options is 'nodes=2', not 'nodes=1'"));
    g_clear_error (&error);
  }
  for (guint i = 0; i < paths->len; i++)
    g_unlink (g_ptr_array_index (paths, i));
  g_unlink (other);
}

/* One bad shard file each (a whole sweep of one or two layouts): the error
 * names the file, the line where one exists, and what was expected. */
static void
test_merge_bad (void)
{
#define HEAD(layouts)                                                                                       \
  "{\"schema\":\"sim-sweep/3\",\"topology\":\"t\",\"model\":\"m\",\"options\":{},\n\"layouts\":" #layouts \
  ",\"shard\":1,\"shards\":1,\n\"rows\":["
#define PRUNED(i, plan)                \
  "{\"rank\":null,\"index\":" #i ",\"plan\":\"" plan \
  "\",\"nodes\":1,\"gpus\":0,\"pruned\":\"x\",\"status\":\"oom\",\"oom_case\":null,\"peak_bytes\":0,\"usable_bytes\":0}"
#define TIMED(extra)                                                                                                                                                                                                                                                                                                                                                        \
  "{\"rank\":null,\"index\":0,\"plan\":\"tp=1\",\"nodes\":1,\"gpus\":8,\"pruned\":null,\"status\":\"fits\",\"oom_case\":null,\"peak_bytes\":1,\"usable_bytes\":2,\n\"screened\":false,\"step_s\":1,\"tokens_per_s\":2,\"mfu\":0.5,\"mfu_gemm_peak\":0.5,\"gemm_precision\":\"bf16\",\"error_band\":0.05,\"tie\":false,\"bubble_fraction\":0,\"compute_s\":1,\"exposed_tp_s\":0,\"exposed_cp_s\":0,\"exposed_pp_s\":0,\"exposed_dp_s\":0,\"exposed_ep_s\":0,\"wall\":\"compute\"" extra \
  "}"
  static const struct {
    const char *text, *error;
  } cases[] = {
    { HEAD (1) PRUNED (0, "tp=1") "]}", NULL },
    { HEAD (1) TIMED (",\"scaling_efficiency\":null") "]}", NULL },
    { "{\"schema\":\"sim-sweep/1\",\"topology\":\"t\",\"model\":\"m\",\"shard\":1,\"shards\":1,\"rows\":[{\"plan\":null}]}",
      "F:1: expected the JSON of sim sweep --json (schema sim-sweep/3)" },
    { HEAD (1) "1]}", "F:3: expected each row to be an object, not a number" },
    { HEAD (1) "null]}", "F:3: expected each row to be an object, not null" },
    { HEAD (1) "{}]}", "F:3: expected a member \"rank\" (a number or null)" },
    { HEAD (1) "{\"rank\":null}]}", "F:3: expected a member \"index\" (a number)" },
    { HEAD (1) "{\"rank\":null,\"index\":0,\"plan\":null}]}", "F:3: expected \"plan\" to be a string, not null" },
    { HEAD (1) PRUNED (0, "tp=999,zz") "]}",
      "F:3: expected \"plan\" to be a plan string, not 'tp=999,zz': " },
    { HEAD (1) PRUNED (0, "") "]}", "F:3: expected \"plan\" to be a plan string, not ''" },
    { HEAD (1) PRUNED (1, "tp=1") "]}", "F:3: expected \"index\" to be a layout of shard 1 of 1" },
    { HEAD (2) PRUNED (0, "tp=1") "," PRUNED (0, "tp=2") "]}",
      "F:3: expected each layout once: row 0 is there twice" },
    { HEAD (2) PRUNED (0, "tp=1") "," PRUNED (1, "tp=1") "]}",
      "F: expected each layout once: 'tp=1' on 1 nodes is rows 0 and 1" },
    { HEAD (2) PRUNED (0, "tp=1") "]}",
      "F: expected the 2 layouts of the sweep in its shards, not 1" },
    { HEAD (1) TIMED ("") "]}",
      "F:3: expected a member \"scaling_efficiency\" (a number or null)" },
    { HEAD (1) TIMED (",\"scaling_efficiency\":-1") "]}",
      "F:4: expected \"scaling_efficiency\" to be at least 0" },
    { HEAD (
          1) "{\"rank\":null,\"index\":0,\"plan\":\"tp=1\",\"nodes\":1,\"gpus\":8,\"pruned\":null,\"status\":\"fits\",\"oom_case\":null,\"peak_bytes\":1,\"usable_bytes\":2}]}",
      "F:3: expected a row either pruned (\"pruned\" a string) or simulated (fits, \"step_s\" and the rest), not neither" },
    { HEAD (
          1) "{\"rank\":null,\"index\":0,\"plan\":\"tp=1\",\"nodes\":1,\"gpus\":0,\"pruned\":\"x\",\"status\":\"oom\",\"oom_case\":\"D\",\"peak_bytes\":0,\"usable_bytes\":0}]}",
      "F:3: expected \"oom_case\" to be \"A\", \"B\", \"C\" or null" },
    { HEAD (
          1) "{\"rank\":null,\"index\":0,\"plan\":\"tp=1\",\"nodes\":1,\"gpus\":0,\"pruned\":\"x\",\"status\":\"oom\",\"oom_case\":null,\"peak_bytes\":-1,\"usable_bytes\":0}]}",
      "F:3: expected \"peak_bytes\" to be a whole number from 0 to " },
    { HEAD (1) "{\"rank\":null,\"index\":0.5}]}", "F:3: expected \"index\" to be a whole number from 0 to " },
    { HEAD (
          1) "{\"rank\":null,\"index\":0,\"plan\":\"tp=1\",\"nodes\":1,\"gpus\":0,\"pruned\":\"x\",\"status\":\"yes\",\"oom_case\":null,\"peak_bytes\":0,\"usable_bytes\":0}]}",
      "F:3: expected \"status\" to be \"fits\", \"tight\" or \"oom\"" },
    { HEAD (1) "{\"rank\":0,\"index\":0}]}", "F:3: expected \"rank\" to be a whole number from 1, or null" },
    { "{\"schema\":\"sim-sweep/3\",\"topology\":\"t\",\"model\":\"m\",\"options\":{\"nodes\":[1]},\"layouts\":1,\"shard\":1,\"shards\":1,\"rows\":[]}",
      "F:1: expected \"options\" values to be strings or whole numbers" },
    { "{\"schema\":\"sim-sweep/3\",\"topology\":\"t\",\"model\":\"m\",\"options\":\"nodes=1\",\"layouts\":1,\"shard\":1,\"shards\":1,\"rows\":[]}",
      "F:1: expected \"options\" to be an object, not a string" },
    { HEAD (1) "{\"rank\":null,\"index\":0,\"index\":0}]}", "F:3: expected each member name once in an object" },
    { "{\"schema\":\"sim-sweep/3\",\"topology\":\"t\",\"model\":null}",
      "F:1: expected \"model\" to be a string, not null" },
    { "{\"schema\":\"sim-sweep/3\",\"topology\":\"t\",\"model\":\"m\",\"options\":{},\"layouts\":1,\"shard\":0,\"shards\":1,\"rows\":[]}",
      "F:1: expected \"shard\" to be a whole number from 1 to 1" },
    { "{\"schema\":\"sim-sweep/3\",\"topology\":\"t\",\"model\":\"m\",\"options\":{},\"layouts\":1,\"shard\":1,\"shards\":1099511627776,\"rows\":[]}",
      "F:1: expected \"shards\" to be a whole number from 1 to 1073741824" },
    { HEAD (1) PRUNED (0, "tp=1") "]} x", "F:3: expected the end of the document" },
    { "{\"schema\":\"sim-sweep/3\",\"topology\":\"a\\u0000b\"}",
      "F:1: expected no \\u0000 in a string" },
    { "[0x10]", "F:1: expected ',' or ']'" },
    { "[-inf]", "F:1: expected a finite number" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree char *path = scratch ("F", cases[i].text);
    const char *paths[] = { path };
    g_autoptr (SimSweepMerged) merged = NULL;
    g_autoptr (GError) error = NULL;
    g_autofree char *want = NULL;
    if (g_test_verbose ())
      g_printerr ("case %u\n", i);
    merged = sim_sweep_merge (paths, 1, &error);
    if (cases[i].error == NULL) {
      g_assert_no_error (error);
      g_assert_nonnull (merged);
    } else {
      g_assert_null (merged);
      g_assert_error (error, SIM_ERROR, SIM_ERROR_USAGE);
      /* the scratch path stands for "F" */
      want = g_strconcat (path, cases[i].error + 1, NULL);
      if (!g_str_has_prefix (error->message, want))
        g_error ("case %u: got \"%s\", expected a prefix \"%s\"", i, error->message, want);
      g_assert_null (strchr (error->message, '\n'));
    }
    g_unlink (path);
  }
#undef HEAD
#undef PRUNED
#undef TIMED
}

/* A FIFO and a device are refused without blocking, an unreadable path
 * with SIM_ERROR_IO. */
static void
test_merge_not_a_file (void)
{
  const char *zero[] = { "/dev/zero" }, *none[] = { "/nonexistent/sim-merge.json" };
  g_autoptr (GError) error = NULL;
  g_autofree char *fifo = g_build_filename (g_get_tmp_dir (), "sim-merge-fifo", NULL);
  g_autofree char *fifo_unique = g_strdup_printf ("%s-%d", fifo, (int) getpid ());
  const char *fifos[] = { fifo_unique };
  g_assert_null (sim_sweep_merge (zero, 1, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_IO);
  g_clear_error (&error);
  g_assert_null (sim_sweep_merge (none, 1, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_IO);
  g_clear_error (&error);
  g_assert_cmpint (mkfifo (fifo_unique, 0600), ==, 0);
  g_assert_null (sim_sweep_merge (fifos, 1, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_IO);
  g_unlink (fifo_unique);
}

/* Constraints: --tp 4,2,2,3 --cp 1 --pp 2,1 enumerate tp 2 and 4 only (3
 * divides neither the 32 heads nor the 8 GPUs, so it gives no row; the
 * repeat is dropped), cp 1 and pp 1 and 2; the lists come back sorted.
 * Every row's label says so, and there are rows of each tp. */
static void
test_constraints (void)
{
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimSweep) sw = sim_sweep_new (m, 16);
  SimSweepConstraints c = { .tp = { 4, 2, 2, 3 }, .n_tp = 4, .cp = { 1 }, .n_cp = 1, .pp = { 2, 1 }, .n_pp = 2 };
  const SimSweepConstraints *got;
  GPtrArray *rows;
  int per_tp[5] = { 0 };
  sim_sweep_set_constraints (sw, &c);
  got = sim_sweep_constraints (sw);
  g_assert_cmpint (got->n_tp, ==, 3);
  g_assert_cmpint (got->tp[0], ==, 2);
  g_assert_cmpint (got->tp[1], ==, 3);
  g_assert_cmpint (got->tp[2], ==, 4);
  g_assert_cmpint (got->pp[0], ==, 1);
  sim_sweep_add_cluster (sw, test_load_topology ("dgx8x4.xml", 1), 1);
  sim_sweep_enumerate (sw);
  rows = sim_sweep_rows (sw);
  g_assert_cmpuint (rows->len, >, 0);
  for (guint i = 0; i < rows->len; i++) {
    const SimSweepRow *r = g_ptr_array_index (rows, i);
    g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
    g_assert_true (sim_plan_request_parse_string (p_req, r->label, NULL));
    g_assert_true (ask (p_req, "tp") == 2 || ask (p_req, "tp") == 4);
    g_assert_cmpint (ask (p_req, "cp"), ==, 1);
    g_assert_true (ask (p_req, "pp") == 1 || ask (p_req, "pp") == 2);
    per_tp[ask (p_req, "tp")]++;
  }
  g_assert_cmpint (per_tp[2], >, 0);
  g_assert_cmpint (per_tp[4], >, 0);
}

/* --min-headroom 50%: every row left fits with at least half its usable
 * memory free; the ones it pruned fit with less, and say why */
static void
test_min_headroom (void)
{
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimSweep) sw = sim_sweep_new (m, 16);
  SimSweepConstraints c = { .n_tp = 1, .tp = { 2 }, .min_headroom = 0.5 };
  GPtrArray *rows;
  int kept = 0, cut = 0;
  sim_sweep_set_constraints (sw, &c);
  sim_sweep_add_cluster (sw, test_load_topology ("dgx8x4.xml", 1), 1);
  sim_sweep_enumerate (sw);
  sim_sweep_run (sw, 2, NULL, NULL);
  rows = sim_sweep_rows (sw);
  for (guint i = 0; i < rows->len; i++) {
    const SimSweepRow *r = g_ptr_array_index (rows, i);
    double free_fraction = ((double) r->usable_bytes - (double) r->peak_bytes) / (double) r->usable_bytes;
    if (r->pruned == NULL) {
      g_assert_cmpfloat (free_fraction, >=, 0.5);
      kept++;
    } else if (strstr (r->pruned, "--min-headroom") != NULL) {
      g_assert_cmpfloat (free_fraction, <, 0.5);
      g_assert_false (r->fits);
      g_assert_cmpstr (r->pruned, ==, "fits with less than 50% of usable memory free (--min-headroom)");
      cut++;
    }
  }
  g_assert_cmpint (kept, >, 0);
  g_assert_cmpint (cut, >, 0);
}

/* A whole sweep's JSON is the table: rows in its order with their rank,
 * one status each.  Four rows by hand: 0 fits at 100 tokens/s, 1 tight at
 * 200 (fits only without the fragmentation allowance: after every row that
 * fits, sim_run_summary_cmp), 2 fits at 150, 3 pruned out of memory.  The
 * table's order is 2, 0, 1, 3: ranks 1, 2, 3 and null, statuses fits,
 * fits, tight, oom; the exposed EP time goes with its row. */
static void
test_json_ranked (void)
{
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func (sim_run_summary_free);
  const double tok[] = { 100, 200, 150 };
  g_autofree char *text = NULL;
  g_autoptr (SimJsonValue) doc = NULL;
  const SimJsonValue *out;
  const int order[] = { 2, 0, 1, 3 };
  const char *status[] = { "fits", "fits", "tight", "oom" };
  for (int i = 0; i < 4; i++) {
    SimRunSummary *r = sim_run_summary_new (i, "tp=1", 1);
    r->gpus = 8;
    r->fits = i < 3;
    r->tight = i == 1;
    r->peak_bytes = 1, r->usable_bytes = 2;
    if (i < 3) {
      r->has_time = r->simulated = TRUE;
      r->tokens_per_s = tok[i];
      r->step_s = 1000 / tok[i];
      r->ep_s = 0.25 * i;
      r->wall = g_strdup ("compute");
    } else
      r->pruned = g_strdup ("out of memory");
    g_ptr_array_add (rows, r);
  }
  text = sim_sweep_rows_json (rows, "t", "m", 1, 1);
  doc = sim_json_parse ("sweep.json", text, NULL);
  g_assert_nonnull (doc);
  g_assert_cmpstr (sim_json_get_string (doc, "schema"), ==, "sim-sweep/3");
  g_assert_cmpint (sim_json_get (doc, "options")->type, ==, SIM_JOBJECT);
  out = sim_json_get (doc, "rows");
  g_assert_cmpuint (out->items->len, ==, 4);
  for (int k = 0; k < 4; k++) {
    const SimJsonValue *o = g_ptr_array_index (out->items, k);
    g_assert_cmpfloat (sim_json_get_number (o, "index", -1), ==, order[k]);
    g_assert_cmpstr (sim_json_get_string (o, "status"), ==, status[k]);
    if (k < 3) {
      g_assert_cmpfloat (sim_json_get_number (o, "rank", -1), ==, k + 1);
      g_assert_cmpfloat (sim_json_get_number (o, "exposed_ep_s", -1), ==, 0.25 * order[k]);
    } else
      g_assert_cmpint (sim_json_get (o, "rank")->type, ==, SIM_JNULL);
  }
}

/* CSV: a header and one line per row; the plan, with its commas, quoted */
static void
test_csv (void)
{
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimSweep) sw = make (m);
  g_autofree char *csv = sim_sweep_rows_csv (sim_sweep_rows (sw));
  g_auto (GStrv) lines = g_strsplit (csv, "\n", -1);
  const SimSweepRow *r0 = g_ptr_array_index (sim_sweep_rows (sw), 0);
  g_autofree char *quoted = g_strdup_printf (",0,\"%s\",1,", r0->label);
  g_assert_true (g_str_has_prefix (csv, "rank,index,plan,nodes,gpus,status,peak_bytes,"));
  g_assert_nonnull (strstr (lines[0], ",exposed_dp_s,exposed_ep_s,limit,pruned"));
  g_assert_cmpuint (g_strv_length (lines), ==, sim_sweep_rows (sw)->len + 2); /* and "" after the last \n */
  g_assert_true (g_str_has_prefix (lines[1], quoted));
}

/* A mixture-of-experts model (Mixtral 8x7B: 8 experts of width 14336) on
 * 8 GPUs: every layout names its expert split, ZeRO 0-3, etp x ep
 * divides tp x cp x dp.  At tp 2, cp 1, dp 4 (pp 1) the stage has 8 GPUs:
 * etp 1 with ep 1, 2, 4, 8 and etp 2 with ep 1, 2, 4, seven splits, and
 * the five with an all-to-all (ep > 1) again under Megatron-Core's combined
 * 1F1B (--overlap-moe-expert-parallel-comm): 12 per schedule,
 * recomputation and ZeRO stage.  --ep 4 --etp 1 leaves that split alone;
 * --ep 3 and an expert list on a dense model are refused. */
static void
test_experts (void)
{
  g_autoptr (SimModel) m = test_load_model ("mixtral-8x7b.xml");
  g_autoptr (SimModel) dense = test_load_model ("llama3-8b.xml");
  g_autoptr (SimSweep) sw = make (m);
  g_autoptr (SimSweep) one = sim_sweep_new (m, 16);
  g_autoptr (GError) error = NULL;
  SimSweepConstraints c = { .ep = { 4 }, .n_ep = 1, .etp = { 1 }, .n_etp = 1 };
  SimSweepConstraints bad = { .ep = { 2, 3 }, .n_ep = 2 };
  GPtrArray *rows = sim_sweep_rows (sw);
  int splits = 0, layouts = 0;
  for (guint i = 0; i < rows->len; i++) {
    const SimSweepRow *r = g_ptr_array_index (rows, i);
    g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
    g_assert_true (sim_plan_request_parse_string (p_req, r->label, NULL));
    if (strstr (r->label, "zero=") == NULL)
      continue; /* a dominated choice, pruned */
    layouts++;
    g_assert_nonnull (strstr (r->label, ",ep="));
    g_assert_cmpint (ask (p_req, "zero"), <=, 3);
    g_assert_cmpint (8 % ask (p_req, "ep"), ==, 0);
    g_assert_cmpint ((ask (p_req, "tp") * ask (p_req, "cp") * ask (p_req, "dp")) % (ask (p_req, "ep") * ask (p_req, "etp")), ==, 0);
    g_assert_true (ask (p_req, "etp") == 1 || ask (p_req, "etp") == ask (p_req, "tp"));
    /* the combined 1F1B needs an all-to-all and refuses full recomputation */
    g_assert_true (ask (p_req, "overlap-moe-expert-parallel-comm") <= 0 || (ask (p_req, "ep") > 1 && ask (p_req, "recompute") != SIM_RECOMPUTE_FULL));
    if (g_str_has_prefix (r->label, "tp=2,cp=1,pp=1,dp=4,") && strstr (r->label, ",mb=1,") &&
        strstr (r->label, "schedule=1f1b,recompute=none,zero=0"))
      splits++;
  }
  g_assert_cmpint (layouts, >, 0);
  g_assert_cmpint (splits, ==, 12);

  sim_sweep_set_constraints (one, &c);
  sim_sweep_add_cluster (one, test_load_topology ("dgx8x4.xml", 1), 1);
  sim_sweep_enumerate (one);
  rows = sim_sweep_rows (one);
  for (guint i = 0; i < rows->len; i++) {
    const SimSweepRow *r = g_ptr_array_index (rows, i);
    if (strstr (r->label, "zero=") != NULL)
      g_assert_nonnull (strstr (r->label, ",ep=4,etp=1,"));
  }

  g_assert_true (sim_sweep_check_experts (m, &c, &error));
  g_assert_no_error (error);
  g_assert_false (sim_sweep_check_experts (m, &bad, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_USAGE);
  g_assert_cmpstr (error->message, ==,
                   "--ep 3 must divide the 8 routed experts of mixtral-8x7b, so each expert-parallel rank "
                   "holds whole experts");
  g_clear_error (&error);
  g_assert_false (sim_sweep_check_experts (dense, &c, &error));
  g_assert_cmpstr (error->message, ==, "--ep: llama3-8b has no mixture-of-experts layers");
}

/* CUDA graphs in the sweep: Qwen3-30B-A3B on one DGX B200 (FP8, sequence
 * 1024, global batch 512) at tp 1, pp 1, ep 8.  At micro-batch 1 its MoE
 * layers' forward is launch-bound in sim (the host 1.95 ms against the
 * GPU's 1.41 ms per layer at cp 1, sim's report of that plan; 1.95 against
 * 1.76 at micro-batch 4), so those rows run under CUDA graphs, and each
 * such row's plan simulated without them takes longer; at micro-batch 8
 * and cp 1 the GPU bounds every pass and no row is graphed (cp 2 or 4
 * splits the sequence, so micro-batch 8 there runs the tokens of
 * micro-batch 4 or 2 per GPU, and is). */
static void
test_graphs (void)
{
  g_autoptr (SimModel) m = test_load_model ("qwen3-30b-a3b.xml");
  g_autoptr (SimTopology) t = test_load_topology ("dgx-b200.xml", 1);
  g_autoptr (SimSweep) sw = sim_sweep_new (m, 512);
  SimSweepConstraints c = { .tp = { 1 }, .n_tp = 1, .pp = { 1 }, .n_pp = 1, .ep = { 8 }, .n_ep = 1,
                            .etp = { 1 }, .n_etp = 1 };
  const char *suffix = ",cuda-graph-scope=attn+moe_router+moe_preprocess";
  GPtrArray *rows;
  int graphed = 0, checked = 0;

  sim_sweep_set_constraints (sw, &c);
  sim_sweep_set_seq_len (sw, 1024);
  sim_sweep_set_fp8 (sw, SIM_FP8_HYBRID, FALSE);
  sim_sweep_add_cluster (sw, test_load_topology ("dgx-b200.xml", 1), 1);
  sim_sweep_enumerate (sw);
  sim_sweep_run (sw, 1, NULL, NULL);
  rows = sim_sweep_rows (sw);
  for (guint i = 0; i < rows->len; i++) {
    const SimSweepRow *r = g_ptr_array_index (rows, i);
    if (!r->has_time || !g_str_has_suffix (r->label, suffix))
      continue;
    graphed++;
    assert_row_plan (sw, m, r);
    g_assert_true (sim_plan_request_given (r->request, "cuda-graph-scope"));
    g_assert_false (strstr (r->label, ",cp=1,") != NULL && strstr (r->label, ",mb=8,") != NULL);
    /* the first few: the plan without graphs, simulated alone, is slower */
    if (checked < 3 && strstr (r->label, ",mb=1,") != NULL) {
      g_autofree char *eager = g_strndup (r->label, strlen (r->label) - strlen (suffix));
      g_autoptr (SimPlanRequest) pe = sim_plan_request_new (), pg = sim_plan_request_new ();
      g_autoptr (SimRun) re = NULL, rg = NULL;
      g_assert_true (sim_plan_request_parse_string (pe, eager, NULL));
      g_assert_true (sim_plan_request_parse_string (pg, r->label, NULL));
      re = sim_run_evaluate (t, m, pe, eager, SIM_RUN_TIME, NULL);
      rg = sim_run_evaluate (t, m, pg, r->label, SIM_RUN_TIME, NULL);
      g_assert_nonnull (re);
      g_assert_nonnull (rg);
      g_assert_cmpfloat (rg->time->step_s, <, re->time->step_s);
      checked++;
    }
  }
  g_assert_cmpint (checked, ==, 3);
  g_assert_cmpint (graphed, >=, checked);
}

/* Pruning by the compute-alone bound (sim_sweep_set_keep): on one node and
 * on two (two GPU counts, each its own top 3), the rows simulated with
 * keep 3 have the times of simulating all, the top 3 of each GPU count are
 * the same layouts with the same times, bit for bit, and every layout the
 * bound pruned is, simulated, no faster than the third best of its GPU
 * count, with its bound at most its step; the bound prunes some.  With
 * keep 3, one thread and two enumerate (the same layouts spelt twice
 * pruned), prune and simulate the same rows, and so does a sweep that
 * enumerates on two threads and runs on one (its threads, kept across the
 * phases, cut to one). */
static void
test_keep (void)
{
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  SimSweep *sw[4];
  GPtrArray *ranked[4];
  int bounded = 0;
  for (int k = 0; k < 4; k++) {
    sw[k] = sim_sweep_new (m, 16);
    sim_sweep_add_cluster (sw[k], test_load_topology ("dgx8x4.xml", 1), 1);
    sim_sweep_add_cluster (sw[k], test_load_topology ("dgx8x4.xml", 2), 2);
    sim_sweep_set_threads (sw[k], k == 2 ? 1 : 2);
    sim_sweep_enumerate (sw[k]);
    sim_sweep_set_keep (sw[k], k == 0 ? 0 : 3);
    sim_sweep_run (sw[k], k >= 2 ? 1 : 2, NULL, NULL);
    ranked[k] = sim_sweep_rank (sw[k], 3);
  }
  for (int k = 2; k < 4; k++)
    for (guint i = 0; i < sim_sweep_rows (sw[1])->len; i++) {
      const SimSweepRow *a = g_ptr_array_index (sim_sweep_rows (sw[1]), i);
      const SimSweepRow *b = g_ptr_array_index (sim_sweep_rows (sw[k]), i);
      g_assert_cmpstr (a->pruned, ==, b->pruned);
      g_assert_cmpint (a->simulated, ==, b->simulated);
      g_assert_cmpfloat (a->step_s, ==, b->step_s);
    }
  for (int gpus = 8; gpus <= 16; gpus += 8) {
    int seen[2] = { 0, 0 };
    double third = 0;
    const SimSweepRow *top[2][3];
    for (int k = 0; k < 2; k++)
      for (guint i = 0; i < ranked[k]->len && seen[k] < 3; i++) {
        const SimSweepRow *r = g_ptr_array_index (ranked[k], i);
        if (r->gpus == gpus && r->has_time)
          top[k][seen[k]++] = r;
      }
    g_assert_cmpint (seen[0], ==, 3);
    g_assert_cmpint (seen[1], ==, 3);
    for (int i = 0; i < 3; i++) {
      g_assert_cmpstr (top[0][i]->label, ==, top[1][i]->label);
      g_assert_cmpfloat (top[0][i]->step_s, ==, top[1][i]->step_s);
    }
    third = top[0][2]->tokens_per_s;
    for (guint i = 0; i < sim_sweep_rows (sw[1])->len; i++) {
      const SimSweepRow *a = g_ptr_array_index (sim_sweep_rows (sw[0]), i);
      const SimSweepRow *b = g_ptr_array_index (sim_sweep_rows (sw[1]), i);
      g_assert_cmpstr (a->label, ==, b->label);
      if (a->gpus != gpus)
        continue;
      if (b->has_time)
        g_assert_cmpfloat (a->step_s, ==, b->step_s);
      if (b->pruned != NULL && g_str_has_prefix (b->pruned, "its compute alone is slower than the top 3")) {
        g_assert_true (a->has_time);
        g_assert_cmpfloat (a->tokens_per_s, <=, third);
        g_assert_cmpfloat (b->bound_s, >, 0);
        g_assert_cmpfloat (b->bound_s, <=, a->step_s);
        bounded++;
      }
    }
  }
  g_assert_cmpint (bounded, >, 0);
  for (int k = 0; k < 4; k++) {
    g_ptr_array_unref (ranked[k]);
    sim_sweep_free (sw[k]);
  }
}

/* The leaders simulated ahead of the ranking (ahead_of_rank): Llama-3-70B
 * on dgx8x4 (64 GPUs), top 10, as bench/bench-table.py sweeps it.  On two
 * threads the costliest leaders (two interleaved layouts at 256
 * micro-batches) run exactly while the last waves do, and the ranking takes
 * them; on one thread none does.  Every row, pruned, simulated and timed,
 * and the ranking are the same, to the bit. */
static void
test_ahead (void)
{
  g_autoptr (SimModel) m = test_load_model ("llama3-70b.xml");
  SimSweep *sw[2];
  GPtrArray *ranked[2];
  for (int k = 0; k < 2; k++) {
    sw[k] = sim_sweep_new (m, 0);
    sim_sweep_add_cluster (sw[k], test_load_topology ("dgx8x4.xml", 0), 8);
    sim_sweep_set_threads (sw[k], k + 1);
    sim_sweep_enumerate (sw[k]);
    sim_sweep_set_keep (sw[k], 10);
    sim_sweep_run (sw[k], k + 1, NULL, NULL);
    ranked[k] = sim_sweep_rank (sw[k], 10);
  }
  g_assert_cmpint (sim_sweep_ahead_used (sw[0]), ==, 0);
  g_assert_cmpint (sim_sweep_ahead_used (sw[1]), >, 0);
  for (guint i = 0; i < sim_sweep_rows (sw[0])->len; i++) {
    const SimSweepRow *a = g_ptr_array_index (sim_sweep_rows (sw[0]), i);
    const SimSweepRow *b = g_ptr_array_index (sim_sweep_rows (sw[1]), i);
    g_assert_cmpstr (a->label, ==, b->label);
    g_assert_cmpstr (a->pruned, ==, b->pruned);
    g_assert_cmpint (a->simulated, ==, b->simulated);
    g_assert_cmpint (a->screened, ==, b->screened);
    g_assert_cmpfloat (a->step_s, ==, b->step_s);
    g_assert_cmpuint (a->peak_bytes, ==, b->peak_bytes);
  }
  for (guint i = 0; i < 10; i++)
    g_assert_cmpstr (((SimSweepRow *) g_ptr_array_index (ranked[0], i))->label, ==,
                     ((SimSweepRow *) g_ptr_array_index (ranked[1], i))->label);
  for (int k = 0; k < 2; k++) {
    g_ptr_array_unref (ranked[k]);
    sim_sweep_free (sw[k]);
  }
}

/* The best layout's full run, as the ranking simulated it: where the best
 * was screened (its time from a steady state) sim_sweep_rank simulates it
 * in full and sim_sweep_take_run hands that run over once; its step is
 * the row's and the same, to the bit, as sim_run_evaluate's of the row's
 * label (both are the one deterministic computation).  Llama-3-8B on one
 * node, global batch 512, top 3: the best, tp 1 dp 8 (64 micro-batches),
 * is screened. */
static void
test_take_run (void)
{
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimSweep) sw = sim_sweep_new (m, 512);
  g_autoptr (GHashTable) screened = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_autoptr (GPtrArray) ranked = NULL;
  g_autoptr (SimRun) run = NULL, again = NULL;
  g_autoptr (GError) error = NULL;
  GPtrArray *rows;
  const SimSweepRow *best;
  g_autoptr (SimPlanRequest) plan_req = sim_plan_request_new ();
  sim_sweep_add_cluster (sw, test_load_topology ("dgx8x4.xml", 1), 1);
  sim_sweep_enumerate (sw);
  sim_sweep_set_keep (sw, 3);
  sim_sweep_run (sw, 2, NULL, NULL);
  rows = sim_sweep_rows (sw);
  for (guint i = 0; i < rows->len; i++)
    if (((const SimSweepRow *) g_ptr_array_index (rows, i))->screened)
      g_hash_table_add (screened, g_ptr_array_index (rows, i));
  ranked = sim_sweep_rank (sw, 3);
  best = g_ptr_array_index (ranked, 0);
  g_assert_true (best->has_time);
  g_assert_true (g_hash_table_contains (screened, best));
  g_assert_false (best->screened);
  run = sim_sweep_take_run (sw, best);
  g_assert_nonnull (run);
  g_assert_null (sim_sweep_take_run (sw, best));
  g_assert_cmpfloat (run->time->step_s, ==, best->step_s);
  g_assert_true (sim_plan_request_parse_string (plan_req, best->label, &error));
  again = sim_run_evaluate (sim_sweep_cluster (sw, best->nodes), m, plan_req, best->label, SIM_RUN_TIME, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (again->time->step_s, ==, run->time->step_s);
  g_assert_cmpuint (again->time->activities, ==, run->time->activities);
  g_assert_cmpuint (again->memory->peak_bytes, ==, run->memory->peak_bytes);
  /* and of the row's own plan, as sim sweep runs the best again */
  g_clear_pointer (&again, sim_run_free);
  again = sim_run_evaluate (sim_sweep_cluster (sw, best->nodes), m, best->request, best->label,
                            SIM_RUN_TIME, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (again->time->step_s, ==, run->time->step_s);
  g_assert_cmpuint (again->time->activities, ==, run->time->activities);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sweep/progress", test_progress);
  g_test_add_func ("/sweep/enumerate", test_enumerate);
  g_test_add_func ("/sweep/plans", test_plans);
  g_test_add_func ("/sweep/run-and-rank", test_run_and_rank);
  g_test_add_func ("/sweep/shards", test_shards);
  g_test_add_func ("/sweep/keep", test_keep);
  g_test_add_func ("/sweep/json", test_json);
  g_test_add_func ("/sweep/merge", test_merge);
  g_test_add_func ("/sweep/merge/bad", test_merge_bad);
  g_test_add_func ("/sweep/merge/not-a-file", test_merge_not_a_file);
  g_test_add_func ("/sweep/constraints", test_constraints);
  g_test_add_func ("/sweep/min-headroom", test_min_headroom);
  g_test_add_func ("/sweep/csv", test_csv);
  g_test_add_func ("/sweep/json-ranked", test_json_ranked);
  g_test_add_func ("/sweep/experts", test_experts);
  g_test_add_func ("/sweep/graphs", test_graphs);
  g_test_add_func ("/sweep/ahead", test_ahead);
  g_test_add_func ("/sweep/take-run", test_take_run);
  return g_test_run ();
}
