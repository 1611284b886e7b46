/* Unit tests of sim-run.h: evaluating a layout and ranking layouts. */
#include <glib.h>

#include "sim-run.h"
#include "test-util.h"

static SimRun *
evaluate (const SimTopology *t, const SimModel *m, const char *label, guint flags)
{
  g_autoptr (GError) error = NULL;
  SimPlan *p = sim_plan_new ();
  SimRun *r = NULL;
  g_assert_true (sim_plan_parse_string (p, label, &error));
  r = sim_run_evaluate (t, m, p, label, flags, &error);
  g_assert_no_error (error);
  g_assert_nonnull (r);
  return r;
}

/* Llama-3-8B on one DGX H100 node, 16 sequences per step: two layouts that
 * fit (simulated) and two that do not (a 16-sequence micro-batch without
 * fused attention, and the same on 2 GPUs per replica).  The ranking puts
 * the layouts that fit first, the faster first; then those that do not,
 * the smaller peak first.  A run keeps the topology and model it ran on. */
static void
test_rank (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_run_free);
  const SimRun *a, *b, *c, *d;
  g_ptr_array_add (runs, evaluate (t, m, "tp=8,pp=1,dp=1,mb=16,gb=16,no-flash-attention,zero=0", 0));
  g_ptr_array_add (runs, evaluate (t, m, "tp=4,pp=1,dp=2,gb=16", SIM_RUN_TIME));
  g_ptr_array_add (runs, evaluate (t, m, "tp=2,pp=1,dp=4,mb=4,gb=16,no-flash-attention,zero=0", 0));
  g_ptr_array_add (runs, evaluate (t, m, "tp=8,pp=1,dp=1,gb=16", SIM_RUN_TIME));
  a = g_ptr_array_index (runs, 1);
  g_assert_true (a->topo == t && a->model == m);
  sim_run_rank (runs);
  a = g_ptr_array_index (runs, 0), b = g_ptr_array_index (runs, 1);
  c = g_ptr_array_index (runs, 2), d = g_ptr_array_index (runs, 3);
  g_assert_true (a->memory->fits && b->memory->fits);
  g_assert_false (c->memory->fits || d->memory->fits);
  g_assert_cmpfloat (a->time->tokens_per_s, >=, b->time->tokens_per_s);
  g_assert_cmpuint (c->memory->peak_bytes, <=, d->memory->peak_bytes);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/run/rank", test_rank);
  return g_test_run ();
}
