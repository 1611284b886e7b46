/* test-balance.c — the pipeline's balance (sim-balance.h): the partition
 * against an exhaustive search, the layout string it gives, and the
 * diagnosis of a DeepSeek-V3 plan whose last stage carries the MTP module. */
#include <glib.h>
#include <math.h>

#include "sim-balance.h"
#include "sim-layout.h"
#include "sim-run.h"
#include "test-util.h"

/* the smallest largest part over every way of cutting L layers into n
 * contiguous parts (parts may be empty), by enumeration */
static double
exhaustive (const double *w, guint64 L, guint n, double head, double tail, guint k, guint64 from,
            double sofar)
{
  double best = INFINITY;
  if (k == n - 1) {
    double sum = tail + (n == 1 ? head : 0);
    for (guint64 i = from; i < L; i++)
      sum += w[i];
    return MAX (sofar, sum);
  }
  for (guint64 to = from; to <= L; to++) {
    double sum = k == 0 ? head : 0;
    for (guint64 i = from; i < to; i++)
      sum += w[i];
    if (MAX (sofar, sum) < best)
      best = MIN (best, exhaustive (w, L, n, head, tail, k + 1, to, MAX (sofar, sum)));
  }
  return best;
}

/* 500 random instances of up to 12 layers in up to 5 parts, with layer
 * costs from 1 to 10, a head of 0 to 5 and a tail of 0 to 30: the binary
 * search's cut is as good as the best cut (to a millionth), and its counts
 * add up to the layers with the largest part it reports */
static void
test_partition (void)
{
  GRand *r = g_rand_new_with_seed (17);
  for (int t = 0; t < 500; t++) {
    guint64 L = (guint64) g_rand_int_range (r, 1, 13), counts[5], sum = 0, i = 0;
    guint n = (guint) g_rand_int_range (r, 1, 6);
    double w[12], head = g_rand_double_range (r, 0, 5), tail = g_rand_double_range (r, 0, 30);
    double got, want, worst = 0;
    for (guint64 j = 0; j < L; j++)
      w[j] = g_rand_double_range (r, 1, 10);
    got = sim_balance_partition (w, L, n, head, tail, counts);
    want = exhaustive (w, L, n, head, tail, 0, 0, 0);
    g_assert_cmpfloat (fabs (got - want), <=, 1e-6 * want);
    for (guint k = 0; k < n; k++) {
      double part = (k == 0 ? head : 0) + (k == n - 1 ? tail : 0);
      for (guint64 j = 0; j < counts[k]; j++)
        part += w[i++];
      sum += counts[k];
      worst = MAX (worst, part);
    }
    g_assert_cmpuint (sum, ==, L);
    g_assert_cmpfloat (worst, ==, got);
  }
  g_rand_free (r);
}

/* 10 layers of 1 on 3 parts, a tail of 2.5 (the output layer and loss)
 * and no head.  A cap C holds floor(C) layers in each of the first two
 * parts and floor(C - 2.5) in the last: for 4 <= C < 4.5 that is 4 + 4 + 1
 * = 9, at 4.5 it is 4 + 4 + 2 = 10.  So the best largest part is 4.5, cut
 * 4 | 4 | 2 */
static void
test_partition_by_hand (void)
{
  double w[10] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
  guint64 counts[3];
  g_assert_cmpfloat_with_epsilon (sim_balance_partition (w, 10, 3, 0, 2.5, counts), 4.5, 1e-9);
  g_assert_cmpuint (counts[0], ==, 4);
  g_assert_cmpuint (counts[1], ==, 4);
  g_assert_cmpuint (counts[2], ==, 2);
}

/* DeepSeek-V3 on 256 B200s at pp 16 (ep 8, FP8 MXFP8, mla_up_proj
 * recomputed) with its MTP module: the default split leaves the last stage
 * 3 layers, the output layer and the MTP module, the slowest; the
 * diagnosis names it and gives a layout, which parses, places the 61
 * layers and the MTP layer, computes no virtual stage above what it
 * reports, and, simulated, runs the step faster than the default split
 * and no slower than Megatron-Bridge's recipe layout Et*4|(t*4|)*14tmL */
static void
test_deepseek (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-b200.xml", 32);
  g_autoptr (SimModel) m = test_load_model ("deepseek-v3.xml");
  const char *base = "pp=16,ep=8,gb=4096,recompute-modules=mla_up_proj,fp8=hybrid,fp8-recipe=mxfp8";
  g_autoptr (SimPlan) p = test_resolve_plan (t, m, base);
  g_autoptr (GError) error = NULL;
  g_autoptr (SimRun) run = NULL, balanced = NULL, recipe = NULL;
  g_autoptr (SimPlanRequest) balanced_req = NULL, recipe_req = NULL;
  g_autoptr (GPtrArray) lines = NULL;
  g_autofree char *layout = NULL, *plan = NULL, *with_recipe = NULL;
  g_auto (SimLayout) parsed = { 0 };
  SimLayerCost c;
  double now = 0, best = 0, sum = 0;
  gboolean named = FALSE;

  sim_cost_layer (m, p, sim_topology_gpu_type (t, 0), &c);
  layout = sim_balance_layout (m, p, &c, 0.05, &now, &best);
  g_assert_nonnull (layout);
  g_test_message ("suggested %s: %.1f ms against %.1f ms", layout, 1e3 * best, 1e3 * now);
  g_assert_true (sim_layout_parse (layout, &parsed, &error));
  g_assert_cmpuint (parsed.n, ==, 16);
  for (guint k = 0; k < parsed.n; k++)
    sum += (double) parsed.layers[k];
  g_assert_cmpfloat (sum, ==, 61);
  g_assert_cmpuint (parsed.mtp, ==, 1);
  g_assert_cmpfloat (best, <=, 0.95 * now);

  run = sim_run_evaluate (t, m, p->request, NULL, SIM_RUN_TIME | SIM_RUN_STEADY, &error);
  g_assert_no_error (error);
  lines = sim_run_diagnose (run, NULL);
  for (guint i = 0; i < lines->len; i++)
    named |= g_str_has_prefix (g_ptr_array_index (lines, i), "pipeline imbalance: stage 15 ") ||
             (g_strrstr (g_ptr_array_index (lines, i), layout) != NULL);
  g_assert_true (named);

  plan = g_strdup_printf ("%s,layout=%s", base, layout);
  balanced_req = test_request (plan);
  balanced = sim_run_evaluate (t, m, balanced_req, NULL, SIM_RUN_TIME | SIM_RUN_STEADY, &error);
  g_assert_no_error (error);
  with_recipe = g_strdup_printf ("%s,layout=Et*4|(t*4|)*14tmL", base);
  recipe_req = test_request (with_recipe);
  recipe = sim_run_evaluate (t, m, recipe_req, NULL, SIM_RUN_TIME | SIM_RUN_STEADY, &error);
  g_assert_no_error (error);
  g_test_message ("step: default split %.3f s, suggested %.3f s, recipe %.3f s", run->time->step_s,
                  balanced->time->step_s, recipe->time->step_s);
  g_assert_cmpfloat (balanced->time->step_s, <, 0.8 * run->time->step_s);
  g_assert_cmpfloat (balanced->time->step_s, <=, recipe->time->step_s);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/balance/partition", test_partition);
  g_test_add_func ("/balance/partition-by-hand", test_partition_by_hand);
  g_test_add_func ("/balance/deepseek", test_deepseek);
  return g_test_run ();
}
