/* test-recompute-modules.c — selective recomputation by module
 * (--recompute-modules, Megatron-Core's recompute_modules): what each
 * module stops saving, what its recomputation costs, how the plan refuses
 * a module the model lacks, and that the iteration charges it; each value
 * from the model's config by hand (models/NAME.xml) */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "sim-activation.h"
#include "sim-cost.h"
#include "sim-error.h"
#include "sim-iteration.h"
#include "sim-memory.h"
#include "sim-plan.h"
#include "test-util.h"

/* one layer's saved and transient bytes under plan (a MoE layer when moe) */
static void
layer (const SimTopology *t, const SimModel *m, const char *plan, gboolean moe, guint64 *saved,
       guint64 *transient)
{
  g_autoptr (SimPlan) p = test_resolve_plan (t, m, plan);
  g_autoptr (SimActivations) a = NULL;
  SimActivationConfig c;
  sim_activation_config_from_plan (&c, p);
  a = moe ? sim_activations_moe_layer (m, &c) : sim_activations_layer (m, &c);
  *saved = a->saved_bytes;
  *transient = a->transient_bytes;
}

/* what a module drops from one layer: saved bytes without it, less with
 * it; and it comes back, for one layer at a time, as the transient */
static guint64
dropped (const SimTopology *t, const SimModel *m, const char *base, const char *modules, gboolean moe)
{
  g_autofree char *with = g_strdup_printf ("%s,recompute-modules=%s", base, modules);
  guint64 s0, t0, s1, t1;
  layer (t, m, base, moe, &s0, &t0);
  layer (t, m, with, moe, &s1, &t1);
  g_assert_cmpuint (t0, ==, 0);
  g_assert_cmpuint (t1, ==, s0 - s1);
  return s0 - s1;
}

/* DeepSeek-V3 (s 4096, b 1, tp 1, BF16), per layer:
 *   mla_up_proj: Q and K, 128 heads x (128 nope + 64 rope) = 24,576 each,
 *     and V, 128 x 128 = 16,384, two bytes per token: 2 x 4096 x 65,536
 *     = 536,870,912 bytes, dense and MoE layers alike;
 *   layernorm: the input norm's output the down projections read, 2 x
 *     4096 x 7168 = 58,720,256, and in a MoE layer the pre-MLP norm's
 *     output the router reads, the same again: 117,440,512 */
static void
test_deepseek (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("deepseek-v3.xml");
  const char *base = "tp=1,pp=1,dp=8,ep=8,mb=1,seq=4096,gb=8";
  g_assert_cmpuint (dropped (t, m, base, "mla_up_proj", FALSE), ==, 536870912ull);
  g_assert_cmpuint (dropped (t, m, base, "mla_up_proj", TRUE), ==, 536870912ull);
  g_assert_cmpuint (dropped (t, m, base, "layernorm", FALSE), ==, 58720256ull);
  g_assert_cmpuint (dropped (t, m, base, "layernorm", TRUE), ==, 117440512ull);
  g_assert_cmpuint (dropped (t, m, base, "mla_up_proj+layernorm", TRUE), ==, 536870912ull + 117440512ull);
}

/* Qwen3-30B-A3B, ep 8, etp 1, s 4096, b 1: each GPU's experts get the
 * 4096 x 8 = 32,768 routed rows of its own tokens on average; moe_act
 * drops the activation output FC2 reads, 768 wide: 2 x 32,768 x 768 =
 * 50,331,648 bytes in BF16 and, FC2 saving its original input in FP8
 * (Megatron-Core experts.py, set_save_original_input), the one-byte copy
 * sim keeps there, 25,165,824 */
static void
test_moe_act (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("qwen3-30b-a3b.xml");
  g_assert_cmpuint (dropped (t, m, "tp=1,pp=1,dp=8,ep=8,mb=1,seq=4096,gb=8", "moe_act", TRUE), ==,
                    50331648ull);
  g_assert_cmpuint (dropped (t, m, "tp=1,pp=1,dp=8,ep=8,mb=1,seq=4096,gb=8,fp8=hybrid", "moe_act", TRUE),
                    ==, 25165824ull);
}

/* Llama-3-8B, tp 1, s 4096: mlp keeps only the MLP's input (the residual
 * its norm keeps anyway) and drops the norm output FC1 reads, 2 x 4096 x
 * 4096 = 33,554,432, the SwiGLU's gate and up outputs, 2 x 2 x 4096 x
 * 14,336 = 234,881,024, and FC2's input, 2 x 4096 x 14,336 = 117,440,512:
 * 385,875,968 bytes */
static void
test_mlp (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_assert_cmpuint (dropped (t, m, "tp=1,pp=1,dp=8,mb=1,seq=4096,gb=8", "mlp", FALSE), ==, 385875968ull);
}

/* The recomputation's time and FLOPs.  Qwen3-30B-A3B's moe_act runs the
 * SwiGLU again on its 32,768 rows: one kernel reading the gate and up
 * halves and writing the output, 6 bytes x 32,768 x 768 = 150,994,944, at
 * the file's achievable HBM rate plus the fixed cost of a kernel (longer
 * than the host's launch); with FP8 FC2 quantizes the recomputed input
 * again, 4 bytes per element, a second kernel.  DeepSeek-V3's
 * mla_up_proj runs the two up projections again: 2 x 4096 x 1536 x
 * (128 x 192) + 2 x 4096 x 512 x (128 x 256) = 309,237,645,312 +
 * 137,438,953,472 = 446,676,598,784 FLOPs per layer. */
static void
test_cost (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  g_autoptr (SimModel) q = test_load_model ("qwen3-30b-a3b.xml");
  g_autoptr (SimModel) d = test_load_model ("deepseek-v3.xml");
  const SimGpuType *g = sim_topology_gpu_type (t, 0);
  double bw = g->hbm_bw_bytes_per_s * g->eff.hbm, fixed = g->eff.kernel_fixed_s;
  double want = fixed + 150994944.0 / bw, want8 = 2 * fixed + (150994944.0 + 100663296.0) / bw;
  SimLayerCost c;
  {
    g_autoptr (SimPlan) p = test_resolve_plan (t, q, "tp=1,pp=1,dp=8,ep=8,mb=1,seq=4096,gb=8,recompute-modules=moe_act");
    sim_cost_layer (q, p, g, &c);
    g_assert_cmpfloat (want, >, g->eff.host_launch_s);
    g_assert_cmpfloat_with_epsilon (c.moe_recompute_s, want, 1e-12);
    g_assert_cmpfloat (c.moe_recompute_module_flop, ==, 0);
    g_assert_cmpint (c.moe_recompute_tp_colls, ==, 0);
  }
  {
    g_autoptr (SimPlan) p =
        test_resolve_plan (t, q, "tp=1,pp=1,dp=8,ep=8,mb=1,seq=4096,gb=8,fp8=hybrid,recompute-modules=moe_act");
    sim_cost_layer (q, p, g, &c);
    g_assert_cmpfloat_with_epsilon (c.moe_recompute_s, want8, 1e-12);
  }
  {
    g_autoptr (SimPlan) p = test_resolve_plan (t, d, "tp=1,pp=1,dp=8,ep=8,mb=1,seq=4096,gb=8,recompute-modules=mla_up_proj");
    sim_cost_layer (d, p, g, &c);
    g_assert_cmpfloat (c.layer_recompute_module_flop, ==, 446676598784.0);
    g_assert_cmpfloat (c.moe_recompute_module_flop, ==, 446676598784.0);
    g_assert_cmpfloat (c.layer_recompute_flop, ==, 446676598784.0);
  }
  {
    /* with the default core_attn beside it, the attention core's forward
     * FLOPs too: causal, half of 2 x 4096 x 4096 x 128 x (192 + 128) =
     * 1,374,389,534,720, so 687,194,767,360 */
    g_autoptr (SimPlan) p =
        test_resolve_plan (t, d, "tp=1,pp=1,dp=8,ep=8,mb=1,seq=4096,gb=8,recompute-modules=core_attn+mla_up_proj");
    sim_cost_layer (d, p, g, &c);
    g_assert_cmpfloat (c.layer_recompute_flop, ==, 446676598784.0 + 687194767360.0);
  }
}

/* a module the model lacks is refused, never ignored; so are modules
 * without selective recomputation, and moe with its own parts */
static void
test_refusals (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  g_autoptr (SimModel) l = test_load_model ("llama3-8b.xml");
  g_autoptr (SimModel) q = test_load_model ("qwen3-30b-a3b.xml");
  g_autoptr (GError) error = NULL;
  g_autoptr (SimPlanRequest) bad_req = sim_plan_request_new ();
  g_autoptr (SimPlan) bad = NULL;
  g_autoptr (SimPlan) ok = NULL;
  const char *base = "tp=1,pp=1,dp=8,mb=1,seq=4096,gb=8";
  g_autofree char *mla = g_strdup_printf ("%s,recompute-modules=mla_up_proj", base);
  g_autofree char *act = g_strdup_printf ("%s,recompute-modules=moe_act", base);
  g_autofree char *norm = g_strdup_printf ("%s,recompute-modules=layernorm", base);
  g_autofree char *full = g_strdup_printf ("%s,recompute=full,recompute-modules=core_attn", base);
  g_autofree char *mlp = g_strdup_printf ("%s,ep=8,recompute-modules=mlp", base);
  g_autofree char *both = g_strdup_printf ("%s,ep=8,recompute-modules=moe+moe_act", base);
  g_autofree char *sel = g_strdup_printf ("%s,recompute=selective", base);

  test_refused_plan (t, l, mla, "--recompute-modules mla_up_proj: expected a model with latent attention");
  test_refused_plan (t, l, act, "--recompute-modules moe_act: expected a model with mixture-of-experts layers");
  test_refused_plan (t, l, norm, "--recompute-modules layernorm: expected a model with norm outside a linear");
  test_refused_plan (t, l, full, "--recompute-modules: expected --recompute selective, got --recompute full");
  test_refused_plan (t, q, mlp, "--recompute-modules mlp: expected a model with dense MLP layers");
  test_refused_plan (t, q, both, "--recompute-modules: moe recomputes the whole MoE layer");
  g_assert_false (sim_plan_request_parse_string (bad_req, "recompute-modules=core_attn+attn", &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_USAGE);
  g_assert_nonnull (strstr (error->message, "got 'attn'"));
  /* selective alone recomputes Megatron-Core's default, the attention core */
  ok = test_resolve_plan (t, l, sel);
  g_assert_cmpuint (ok->recompute_modules, ==, SIM_RECOMPUTE_CORE_ATTN);
}

/* The iteration charges the recomputation before each backward: Llama-3-8B
 * on 8 GPUs, tp 1, 8 micro-batches per replica, mlp recomputed: the
 * stage's recompute time is 8 micro-batches x 32 layers x the layer's
 * recomputation (no TP collectives at tp 1; the gradient reduction after
 * the backward, so that no collective slows the last one) */
static void
test_iteration (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimPlan) p = test_resolve_plan (t, m, "tp=1,pp=1,dp=8,mb=1,seq=4096,gb=64,no-overlap-grad-reduce,recompute-modules=mlp,gpu-variation=0");
  g_autoptr (SimMemory) mem = sim_memory_compute (t, m, p);
  g_autoptr (GError) error = NULL;
  SimIteration *it;
  SimLayerCost c;
  double want;
  sim_cost_layer (m, p, sim_topology_gpu_type (t, 0), &c);
  g_assert_cmpfloat (c.layer_recompute_s, >, 0);
  want = 8.0 * 32.0 * c.layer_recompute_s;
  it = sim_iteration_run (t, m, p, mem, FALSE, &error);
  g_assert_no_error (error);
  g_test_message ("recompute %.9f s, want %.9f s", g_array_index (it->stages, SimStageTime, 0).recompute_s,
                  want);
  g_assert_cmpfloat (fabs (g_array_index (it->stages, SimStageTime, 0).recompute_s - want), <, 1e-9 * want);
  sim_iteration_free (it);
}

/* The same where only the MoE layers recompute: Qwen3-30B-A3B's 48 layers
 * are all MoE, and moe_act recomputes the experts' activation alone (a
 * dense layer of the model would recompute nothing); on 8 GPUs, ep 8, 8
 * micro-batches per replica the stage's recompute time is 8 x 48 x the
 * MoE layer's recomputation */
static void
test_iteration_moe (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("qwen3-30b-a3b.xml");
  g_autoptr (SimPlan) p =
      test_resolve_plan (t, m, "tp=1,pp=1,dp=8,ep=8,mb=1,seq=4096,gb=64,no-overlap-grad-reduce,recompute-modules=moe_act,gpu-variation=0");
  g_autoptr (SimMemory) mem = sim_memory_compute (t, m, p);
  g_autoptr (GError) error = NULL;
  SimIteration *it;
  SimLayerCost c;
  double want, got;
  sim_cost_layer (m, p, sim_topology_gpu_type (t, 0), &c);
  g_assert_cmpfloat (c.layer_recompute_s, ==, 0);
  g_assert_cmpfloat (c.moe_recompute_s, >, 0);
  want = 8.0 * 48.0 * c.moe_recompute_s;
  it = sim_iteration_run (t, m, p, mem, FALSE, &error);
  g_assert_no_error (error);
  got = g_array_index (it->stages, SimStageTime, 0).recompute_s;
  g_test_message ("recompute %.9f s, want %.9f s", got, want);
  g_assert_cmpfloat (fabs (got - want), <, 1e-9 * want);
  sim_iteration_free (it);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/recompute-modules/deepseek-v3", test_deepseek);
  g_test_add_func ("/recompute-modules/moe-act", test_moe_act);
  g_test_add_func ("/recompute-modules/mlp", test_mlp);
  g_test_add_func ("/recompute-modules/cost", test_cost);
  g_test_add_func ("/recompute-modules/refusals", test_refusals);
  g_test_add_func ("/recompute-modules/iteration", test_iteration);
  g_test_add_func ("/recompute-modules/iteration-moe", test_iteration_moe);
  return g_test_run ();
}
