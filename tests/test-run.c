/* Unit tests of sim-run.h: evaluating a layout and ranking layouts. */
#include <glib.h>
#include <math.h>
#include <string.h>
#include <stdio.h>

#include "sim-cost.h"
#include "sim-run.h"
#include "test-util.h"

static SimRun *
evaluate (const SimTopology *t, const SimModel *m, const char *label, guint flags)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
  SimRun *r = NULL;
  g_assert_true (sim_plan_request_parse_string (p_req, label, &error));
  r = sim_run_evaluate (t, m, p_req, label, flags, &error);
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

/* a diagnosis line that starts with prefix, or NULL */
static const char *
line_with (GPtrArray *lines, const char *prefix)
{
  for (guint i = 0; i < lines->len; i++)
    if (g_str_has_prefix (g_ptr_array_index (lines, i), prefix))
      return g_ptr_array_index (lines, i);
  return NULL;
}

/* The diagnosis names a layer pass whose kernels the host launches more
 * slowly than the GPU runs them.  Qwen3-30B-A3B at micro-batch 1 of 1,024
 * tokens on 8 B200s (ep 8, FP8): 16 local experts' grouped GEMMs and casts make the MoE
 * layer's forward launch-bound, and the line's host time is above its GPU
 * time; Llama-3-70B's headline layout on 32 H100s (4,096-token micro-
 * batches of large GEMMs) is not. */
static void
test_launch_bound (void)
{
  g_autoptr (SimTopology) b200 = test_load_topology ("dgx-b200.xml", 1);
  g_autoptr (SimTopology) h100 = test_load_topology ("dgx8x4.xml", 0);
  g_autoptr (SimModel) q = test_load_model ("qwen3-30b-a3b.xml");
  g_autoptr (SimModel) l = test_load_model ("llama3-70b.xml");
  g_autoptr (SimRun) a = evaluate (b200, q, "tp=1,pp=1,dp=8,ep=8,mb=1,gb=64,seq=1024,fp8=hybrid", SIM_RUN_TIME);
  g_autoptr (SimRun) b = evaluate (h100, l, "tp=8,pp=4,dp=2", SIM_RUN_TIME);
  g_autoptr (GPtrArray) da = sim_run_diagnose (a, NULL);
  g_autoptr (GPtrArray) db = sim_run_diagnose (b, NULL);
  const char *x = line_with (da, "launch-bound: the host launches an MoE layer's forward kernels in ");
  double host = 0, gpu = 0;
  g_assert_nonnull (x);
  g_test_message ("%s", x);
  g_assert_cmpint (sscanf (x, "launch-bound: the host launches an MoE layer's forward kernels in %lf ms, "
                              "the GPU runs them in %lf ms", &host, &gpu), ==, 2);
  g_assert_cmpfloat (host, >, gpu);
  g_assert_null (line_with (db, "launch-bound"));
}

/* The exposed all-to-all's remedy names what applies: Qwen3-30B-A3B with
 * ep 16 on 2 DGX H100 nodes has expert groups of 16 GPUs over both nodes,
 * so a smaller ep first (etp is 1 already, so not --etp 1), then the
 * combined 1F1B; not that where it is on already, nor under full
 * recomputation, which Megatron-Core's combined 1F1B refuses */
static void
test_ep_remedy (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 2);
  g_autoptr (SimModel) m = test_load_model ("qwen3-30b-a3b.xml");
  g_autoptr (SimRun) a = evaluate (t, m, "ep=16,gb=64", SIM_RUN_TIME);
  g_autoptr (SimRun) b = evaluate (t, m, "ep=16,gb=64,overlap-moe-expert-parallel-comm", SIM_RUN_TIME);
  g_autoptr (SimRun) c = evaluate (t, m, "ep=16,gb=64,recompute=full", SIM_RUN_TIME);
  g_autoptr (GPtrArray) da = sim_run_diagnose (a, NULL);
  g_autoptr (GPtrArray) db = sim_run_diagnose (b, NULL);
  g_autoptr (GPtrArray) dc = sim_run_diagnose (c, NULL);
  const char *x = line_with (da, "remedy: the token all-to-all");
  const char *y = line_with (db, "remedy: the token all-to-all");
  const char *z = line_with (dc, "remedy: the token all-to-all");
  g_assert_nonnull (x);
  g_test_message ("%s", x);
  g_assert_nonnull (strstr (x, "etp 1 x ep 16 GPUs, across nodes"));
  g_assert_nonnull (strstr (x, "(a smaller --ep)"));
  g_assert_null (strstr (x, "--etp 1"));
  g_assert_nonnull (strstr (x, "--overlap-moe-expert-parallel-comm"));
  g_assert_true (y == NULL || strstr (y, "--overlap-moe-expert-parallel-comm") == NULL);
  g_assert_nonnull (z);
  g_assert_null (strstr (z, "--overlap-moe-expert-parallel-comm"));
}

/* The diagnosis offers the fused grouped MLP where it could run and the
 * plan does not: Qwen3-30B-A3B at ep 8 on B200 in MXFP8.  Its figures are
 * an MoE layer's forward plus backward per micro-batch, from sim_cost_layer
 * of the plan without and with the flag; no line with the flag given, nor
 * under delayed-scaling FP8 (the fused kernel is block-scaled only) */
static void
test_fused_experts (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-b200.xml", 1);
  g_autoptr (SimModel) q = test_load_model ("qwen3-30b-a3b.xml");
  const char *base = "tp=1,pp=1,dp=8,ep=8,mb=4,gb=64,fp8=hybrid,fp8-recipe=mxfp8";
  g_autofree char *fused = g_strconcat (base, ",moe-fused-grouped-mlp=true", NULL);
  g_autoptr (SimRun) a = evaluate (t, q, base, SIM_RUN_TIME);
  g_autoptr (SimRun) b = evaluate (t, q, fused, SIM_RUN_TIME);
  g_autoptr (SimRun) c = evaluate (t, q, "tp=1,pp=1,dp=8,ep=8,mb=4,gb=64,fp8=hybrid,fp8-recipe=delayed",
                                   SIM_RUN_TIME);
  g_autoptr (GPtrArray) da = sim_run_diagnose (a, NULL);
  g_autoptr (GPtrArray) db = sim_run_diagnose (b, NULL);
  g_autoptr (GPtrArray) dc = sim_run_diagnose (c, NULL);
  const char *x = line_with (da, "experts: ");
  const char *at;
  double now = 0, then = 0;
  SimLayerCost u, f;
  g_assert_nonnull (x);
  g_test_message ("%s", x);
  at = strstr (x, "backward from ");
  g_assert_nonnull (at);
  g_assert_cmpint (sscanf (at, "backward from %lf to %lf ms", &now, &then), ==, 2);
  sim_cost_layer (q, a->plan, sim_topology_gpu_type (t, 0), &u);
  sim_cost_layer (q, b->plan, sim_topology_gpu_type (t, 0), &f);
  g_assert_cmpfloat (fabs (now - 1e3 * (u.moe_fwd_s + u.moe_bwd_s)), <, 0.005);
  g_assert_cmpfloat (fabs (then - 1e3 * (f.moe_fwd_s + f.moe_bwd_s)), <, 0.005);
  g_assert_null (line_with (db, "experts: "));
  g_assert_null (line_with (dc, "experts: "));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/run/rank", test_rank);
  g_test_add_func ("/run/launch-bound", test_launch_bound);
  g_test_add_func ("/run/fused-experts", test_fused_experts);
  g_test_add_func ("/run/ep-remedy", test_ep_remedy);
  return g_test_run ();
}
