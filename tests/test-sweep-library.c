/* Unit tests of the sweep library (sim-sweep.h): Llama-3-8B on one DGX H100
 * node (8 GPUs), global batch 16. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "sim-error.h"
#include "sim-plan.h"
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
    g_autoptr (SimPlan) p = sim_plan_new ();
    g_assert_cmpint (r->index, ==, (int) i);
    g_assert_false (g_hash_table_contains (seen, r->label));
    g_hash_table_add (seen, r->label);
    g_assert_true (sim_plan_parse_string (p, r->label, NULL));
    g_assert_cmpint (8 % p->tp, ==, 0);
    g_assert_cmpint (32 % MAX (p->pp, 1), ==, 0);
    if (p->zero > 0)
      g_assert_cmpint (p->dp * p->cp, >, 1);
    if (p->tp == 8 && p->cp == 1 && p->zero >= 0 && r->pruned == NULL) {
      g_assert_cmpint (p->pp, ==, 1);
      g_assert_cmpint (p->zero, ==, 0);
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
      /* the simulated ones first, by tokens/s */
      if (x->has_time) {
        g_assert_true (prev->has_time);
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

/* The JSON of rows reads back to the same rows; a row without a plan
 * string is refused with the file and what was expected. */
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
  text = sim_sweep_rows_json (rows, "dgx8x4", "llama3-8b", 1, 8);
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
  g_assert_false (sim_sweep_rows_read ("bad.json",
                                       "{\"schema\":\"sim-sweep/1\",\"topology\":\"dgx8x4\","
                                       "\"model\":\"llama3-8b\",\"rows\":[{\"plan\":null}]}",
                                       &topo, &model, back, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_USAGE);
  g_assert_nonnull (strstr (error->message, "bad.json:1: expected row 0"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sweep/enumerate", test_enumerate);
  g_test_add_func ("/sweep/run-and-rank", test_run_and_rank);
  g_test_add_func ("/sweep/shards", test_shards);
  g_test_add_func ("/sweep/json", test_json);
  return g_test_run ();
}
