/* test-cuda-graphs.c — CUDA graphs (--cuda-graph-impl, --cuda-graph-scope):
 * the host launches one graph instead of each captured kernel, the
 * graphed callable's static-input copies, the static input buffer each
 * graph keeps per micro-batch, and the scopes refused.  Every expected
 * value is worked out by hand in the comment beside it. */
#include <glib.h>
#include <math.h>

#include "sim-activation.h"
#include "sim-cost.h"
#include "sim-plan.h"
#include "test-util.h"

static void
cost_of (const SimTopology *t, const SimModel *m, const char *plan, SimLayerCost *c)
{
  g_autoptr (SimPlan) p = test_resolve_plan (t, m, plan);
  sim_cost_layer (m, p, sim_topology_gpu_type (t, 0), c);
}

/* Llama-3-8B (h 4096, sequence 8192) at tp 1, micro-batch 1, on a DGX
 * H100.  With attn and mlp captured, every kernel of a dense layer's
 * forward is in the one graph: the host launches the graph and the eager
 * copy of the input into the graph's static buffer, 2 launches, and as
 * many for the backward (the graph, the output gradient's copy).  The GPU
 * runs the same kernels plus that copy: the fixed cost per kernel and
 * Tn x h = 8192 x 4096 BF16 values read and written, 4 x 8192 x 4096 =
 * 134,217,728 bytes, at the achievable HBM bandwidth. */
static void
test_dense_host (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  const SimGpuType *g = sim_topology_gpu_type (t, 0);
  double launch = g->eff.host_launch_s;
  double copy = g->eff.kernel_fixed_s + 134217728.0 / (g->hbm_bw_bytes_per_s * g->eff.hbm);
  SimLayerCost eager, graphed;

  cost_of (t, m, "tp=1,pp=1,dp=8,mb=1", &eager);
  cost_of (t, m, "tp=1,pp=1,dp=8,mb=1,cuda-graph-scope=attn+mlp", &graphed);
  g_assert_cmpfloat_with_epsilon (graphed.host_s[SIM_LAYER_FWD], 2 * launch, 1e-15);
  g_assert_cmpfloat_with_epsilon (graphed.host_s[SIM_LAYER_BWD], 2 * launch, 1e-15);
  g_assert_cmpfloat_with_epsilon (graphed.gpu_s[SIM_LAYER_FWD] - eager.gpu_s[SIM_LAYER_FWD], copy, 1e-12);
  g_assert_cmpfloat_with_epsilon (graphed.gpu_s[SIM_LAYER_BWD] - eager.gpu_s[SIM_LAYER_BWD], copy, 1e-12);
  /* eager, the host launches each kernel: forward the two norms, the two
   * residual adds, four GEMMs, the SwiGLU, RoPE of q and of k and the
   * fused attention, 12; backward two kernels per norm, the two residual
   * adds, two GEMMs per linear, the SwiGLU's, RoPE's two, the attention's
   * and its rowsum of dO x O, 19 */
  g_assert_cmpfloat_with_epsilon (eager.host_s[SIM_LAYER_FWD], 12 * launch, 1e-15);
  g_assert_cmpfloat_with_epsilon (eager.host_s[SIM_LAYER_BWD], 19 * launch, 1e-15);
  /* the layer's time is the GPU's or the host's, whichever is longer */
  g_assert_cmpfloat_with_epsilon (graphed.layer_fwd_s, MAX (graphed.gpu_s[SIM_LAYER_FWD], graphed.host_s[SIM_LAYER_FWD]), 1e-15);
}

/* Qwen3-30B-A3B (128 experts, top 8, no expert groups) at ep 8.  With
 * moe_router and moe_preprocess captured, the MoE layer's forward no
 * longer launches the router's GEMM and its 22 small kernels nor the
 * preprocess's 12 (sim-cost.c moe_kernels), 35 launches, and launches the
 * graph and its input's copy instead: 33 fewer.  Backward: the router's
 * two GEMMs and 14 small kernels, 16, for the graph and the gradient's
 * copy: 14 fewer.  The dense layers are not captured. */
static void
test_moe_router (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("qwen3-30b-a3b.xml");
  double launch = sim_topology_gpu_type (t, 0)->eff.host_launch_s;
  SimLayerCost eager, graphed;
  const char *base = "tp=1,pp=1,dp=8,ep=8,mb=1,seq=4096";
  g_autofree char *with = g_strdup_printf ("%s,cuda-graph-scope=moe_router+moe_preprocess", base);

  cost_of (t, m, base, &eager);
  cost_of (t, m, with, &graphed);
  g_assert_cmpfloat_with_epsilon (eager.host_s[SIM_MOE_LAYER_FWD] - graphed.host_s[SIM_MOE_LAYER_FWD], 33 * launch, 1e-12);
  g_assert_cmpfloat_with_epsilon (eager.host_s[SIM_MOE_LAYER_BWD] - graphed.host_s[SIM_MOE_LAYER_BWD], 14 * launch, 1e-12);
  g_assert_cmpfloat_with_epsilon (eager.host_s[SIM_LAYER_FWD], graphed.host_s[SIM_LAYER_FWD], 1e-15);
}

/* The static input buffer: one per graph a layer replays and micro-batch,
 * the layer's input, s x b x h BF16 (split by sequence parallelism):
 * Llama-3-8B at tp 1, 2 x 8192 x 4096 = 67,108,864 bytes per layer,
 * whether the graph holds attn alone or the whole layer (one graph). */
static void
test_static_input (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  const char *plans[] = { "tp=1,pp=1,dp=8,mb=1,cuda-graph-scope=attn", "tp=1,pp=1,dp=8,mb=1,cuda-graph-impl=local" };
  g_autoptr (SimPlan) p0 = test_resolve_plan (t, m, "tp=1,pp=1,dp=8,mb=1");
  SimActivationConfig c;
  g_autoptr (SimActivations) a0 = NULL;

  sim_activation_config_from_plan (&c, p0);
  a0 = sim_activations_layer (m, &c);
  for (guint i = 0; i < G_N_ELEMENTS (plans); i++) {
    g_autoptr (SimPlan) p = test_resolve_plan (t, m, plans[i]);
    g_autoptr (SimActivations) a = NULL;
    sim_activation_config_from_plan (&c, p);
    a = sim_activations_layer (m, &c);
    g_assert_cmpuint (a->saved_bytes - a0->saved_bytes, ==, 67108864);
  }
}

/* What the plan refuses or fills in */
static void
test_resolve (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 1);
  g_autoptr (SimModel) moe = test_load_model ("qwen3-30b-a3b.xml");
  g_autoptr (SimModel) dense = test_load_model ("llama3-8b.xml");
  const char *base = "tp=1,pp=1,dp=8,ep=8,mb=1,seq=4096";
  g_autofree char *whole = g_strdup_printf ("%s,cuda-graph-impl=transformer_engine", base);
  g_autofree char *moe_scope = g_strdup_printf ("%s,cuda-graph-scope=attn+moe", base);
  g_autofree char *pre = g_strdup_printf ("%s,cuda-graph-scope=moe_preprocess", base);
  g_autoptr (SimPlan) p = NULL;

  /* an MoE layer cannot be captured whole without padding its experts' tokens */
  test_refused_plan (t, moe, whole, "--cuda-graph-impl transformer_engine: expected --cuda-graph-scope");
  test_refused_plan (t, moe, moe_scope, "--cuda-graph-scope attn,moe: capturing MoE layers whole");
  test_refused_plan (t, moe, pre, "--cuda-graph-scope moe_preprocess: expected moe_router");
  test_refused_plan (t, dense, "tp=1,pp=1,dp=8,framework=fsdp,zero=3,cuda-graph-scope=attn",
                     "--cuda-graph-scope attn: Megatron-Core's graphs");
  test_refused_plan (t, dense, "tp=1,pp=1,dp=8,cuda-graph-impl=none,cuda-graph-scope=attn",
                     "--cuda-graph-scope: expected a --cuda-graph-impl");
  /* a scope alone is Transformer Engine's; an implementation alone on a
   * dense model captures every layer whole, moe's bit dropped */
  p = test_resolve_plan (t, dense, "tp=1,pp=1,dp=8,cuda-graph-scope=attn");
  g_assert_cmpint (p->cuda_graph_impl, ==, SIM_CUDA_GRAPH_TE);
  g_assert_cmpuint (p->cuda_graph_scope, ==, SIM_GRAPH_ATTN);
  g_clear_pointer (&p, sim_plan_free);
  p = test_resolve_plan (t, dense, "tp=1,pp=1,dp=8,cuda-graph-scope=full");
  g_assert_cmpuint (p->cuda_graph_scope, ==, SIM_GRAPH_ATTN | SIM_GRAPH_MLP);
  g_assert_cmpint (sim_plan_layer_graphs (p, FALSE), ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda-graphs/dense-host", test_dense_host);
  g_test_add_func ("/cuda-graphs/moe-router", test_moe_router);
  g_test_add_func ("/cuda-graphs/static-input", test_static_input);
  g_test_add_func ("/cuda-graphs/resolve", test_resolve);
  return g_test_run ();
}
