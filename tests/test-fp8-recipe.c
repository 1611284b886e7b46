/* tests for --fp8-recipe: what each FP8 scaling recipe adds to one layer's
 * forward and backward (sim-cost.c, fp8_recipe_kernels), against the kernels
 * written out by hand below, and how the plan resolves the recipe; the same
 * for --fp4 (NVFP4, nvfp4_kernels) */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "sim-activation.h"
#include "sim-cost.h"
#include "sim-error.h"
#include "sim-gemm.h"
#include "sim-memory.h"
#include "sim-model.h"
#include "sim-plan.h"
#include "sim-topology.h"

typedef struct {
  SimTopology *topo;
  SimModel *model;
} Fixture;

static void
load_nodes (Fixture *f, const char *topology, int nodes)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *tp = g_build_filename (SIM_SOURCE_DIR, "topologies", topology, NULL);
  g_autofree char *mp = g_build_filename (SIM_SOURCE_DIR, "models", "llama3-70b.xml", NULL);
  f->topo = sim_topology_load (tp, nodes, &error);
  g_assert_no_error (error);
  f->model = sim_model_load (mp, &error);
  g_assert_no_error (error);
}

static void
load (Fixture *f, const char *topology)
{
  load_nodes (f, topology, 8);
}

static void
unload (Fixture *f)
{
  sim_topology_free (f->topo);
  sim_model_free (f->model);
}

/* the layer costs of llama3-70b at tp 8 (sequence parallel), pp 2, dp 4,
 * micro-batch 1, seq 8192, with `fp8` (e.g. "fp8=hybrid,fp8-recipe=current") */
static void
layer_on (Fixture *f, const char *layout, const char *fp8, SimLayerCost *c, SimPlan **out)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *text = g_strdup_printf ("%s,%s", layout, fp8);
  g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
  SimPlan *p = NULL;
  g_assert_true (sim_plan_request_parse_string (p_req, text, &error));
  g_assert_nonnull (p = sim_plan_resolve (p_req, f->topo, f->model, &error));
  g_assert_no_error (error);
  sim_cost_layer (f->model, p, sim_topology_gpu_type (f->topo, 0), c);
  if (out != NULL)
    *out = p;
  else
    sim_plan_free (p);
}

static void
layer (Fixture *f, const char *fp8, SimLayerCost *c, SimPlan **out)
{
  layer_on (f, "tp=8,pp=2,dp=4", fp8, c, out);
}

/* Per TP rank: T = 8192 tokens, Tn = T/8 under sequence parallelism, h 8192,
 * query width qd = 64 heads x 128 = 8192, kvd = 8 x 128 = 1024, f = 28672
 * (f/t = 3584, SwiGLU's up projection 2f/t = 7168).  The four GEMM inputs
 * hold in_x = 2 Tn h + T qd/t + T f/t elements, the four output gradients
 * in_dy = T (qd + 2 kvd)/t + 2 T h + T 2f/t; B is the achievable HBM rate
 * (bandwidth x eff.hbm), k the fixed cost of a kernel.
 *   current - delayed:   forward 2 casts of 4 Tn h bytes out of the norms,
 *     whose kernels compute their amax (Transformer Engine's fused norm
 *     linears), so amax passes of 2 bytes per element over the other two
 *     inputs only, in_x - 2 Tn h elements, and for each of the 4
 *     quantizations two single-thread launches (the amax zeroed, the scale
 *     from it) of 4 bytes: 12 k + (8 Tn h + 2 (in_x - 2 Tn h) + 32)/B;
 *     backward 4 amax passes over the gradients and 8 single-thread
 *     launches: 12 k + (2 in_dy + 32) / B
 *   blockwise - delayed: forward the 2 casts with a 4-byte scale per 128
 *     elements on both copies, and every other cast's scales:
 *     2 k + 2 (4 + 8/128) Tn h / B + (8/128) in_x / B; backward (8/128) in_dy / B
 *   mxfp8 - delayed (B200): a 1-byte scale per 32 elements on both copies:
 *     (2/32) in_x / B forward, (2/32) in_dy / B backward */
static void
test_recipe_kernels (void)
{
  const double T = 8192, t = 8, Tn = T / t, h = 8192, qd = 8192, kvd = 1024, f = 28672;
  const double in_x = 2 * Tn * h + T * qd / t + T * f / t;
  const double in_dy = T * (qd + 2 * kvd) / t + 2 * T * h + T * 2 * f / t;
  Fixture hopper, blackwell;
  SimLayerCost d, c, b, bd, bm;
  const SimGpuType *g;
  double B, k;

  load (&hopper, "dgx-h100.xml");
  g = sim_topology_gpu_type (hopper.topo, 0);
  B = g->hbm_bw_bytes_per_s * g->eff.hbm, k = g->eff.kernel_fixed_s;
  layer (&hopper, "fp8=hybrid,fp8-recipe=delayed", &d, NULL);
  layer (&hopper, "fp8=hybrid,fp8-recipe=current", &c, NULL);
  layer (&hopper, "fp8=hybrid,fp8-recipe=blockwise", &b, NULL);
  g_assert_cmpfloat_with_epsilon (c.layer_fwd_s - d.layer_fwd_s,
                                  12 * k + (8 * Tn * h + 2 * (in_x - 2 * Tn * h) + 32) / B, 1e-12);
  g_assert_cmpfloat_with_epsilon (c.layer_bwd_s - d.layer_bwd_s, 12 * k + (2 * in_dy + 32) / B, 1e-12);
  g_assert_cmpfloat_with_epsilon (b.layer_fwd_s - d.layer_fwd_s,
                                  2 * k + 2 * (4 + 8.0 / 128) * Tn * h / B + (8.0 / 128) * in_x / B, 1e-12);
  g_assert_cmpfloat_with_epsilon (b.layer_bwd_s - d.layer_bwd_s, (8.0 / 128) * in_dy / B, 1e-12);
  /* the GEMMs' FLOPs do not change */
  g_assert_cmpfloat (c.layer_fwd_flop, ==, d.layer_fwd_flop);
  unload (&hopper);

  load (&blackwell, "dgx-b200.xml");
  g = sim_topology_gpu_type (blackwell.topo, 0);
  B = g->hbm_bw_bytes_per_s * g->eff.hbm;
  layer (&blackwell, "fp8=hybrid,fp8-recipe=delayed", &bd, NULL);
  layer (&blackwell, "fp8=hybrid,fp8-recipe=mxfp8", &bm, NULL);
  g_assert_cmpfloat_with_epsilon (bm.layer_fwd_s - bd.layer_fwd_s, (2.0 / 32) * in_x / B, 1e-12);
  g_assert_cmpfloat_with_epsilon (bm.layer_bwd_s - bd.layer_bwd_s, (2.0 / 32) * in_dy / B, 1e-12);
  unload (&blackwell);
}

/* defaults: mxfp8 where the FP8 tensor cores are block-scaled (B200), delayed
 * elsewhere (H100); mxfp8 refused on H100; a recipe without --fp8 refused;
 * Megatron's "tensorwise" is current scaling */
static void
test_recipe_resolution (void)
{
  Fixture hopper, blackwell;
  SimLayerCost c1, c2;
  SimPlan *p = NULL;
  g_autoptr (GError) error = NULL;
  const char *refused[] = { "tp=8,pp=2,dp=4,fp8=hybrid,fp8-recipe=mxfp8", "tp=8,pp=2,dp=4,fp8-recipe=current" };

  load (&hopper, "dgx-h100.xml");
  layer (&hopper, "fp8=hybrid", &c1, &p);
  g_assert_cmpint (p->fp8_recipe, ==, SIM_FP8_DELAYED);
  sim_plan_free (p);
  layer (&hopper, "fp8=hybrid,fp8-recipe=tensorwise", &c1, &p);
  g_assert_cmpint (p->fp8_recipe, ==, SIM_FP8_CURRENT);
  sim_plan_free (p);
  layer (&hopper, "fp8=hybrid,fp8-recipe=current", &c2, NULL);
  g_assert_cmpfloat (c1.layer_fwd_s, ==, c2.layer_fwd_s);
  for (guint i = 0; i < G_N_ELEMENTS (refused); i++) {
    g_autoptr (SimPlanRequest) q_req = sim_plan_request_new ();
    g_autoptr (SimPlan) q = NULL;
    g_assert_true (sim_plan_request_parse_string (q_req, refused[i], &error));
    g_assert_null (q = sim_plan_resolve (q_req, hopper.topo, hopper.model, &error));
    g_assert_error (error, SIM_ERROR, SIM_ERROR_PLAN);
    g_assert_nonnull (strstr (error->message, "--fp8-recipe"));
    g_clear_error (&error);
  }
  unload (&hopper);

  load (&blackwell, "dgx-b200.xml");
  layer (&blackwell, "fp8=hybrid", &c1, &p);
  g_assert_cmpint (p->fp8_recipe, ==, SIM_FP8_MXFP8);
  sim_plan_free (p);
  unload (&blackwell);
}

/* --fp8-attention: the fused attention's forward at 1200/740 of its BF16
 * rate (FlashAttention-3's FP8 and BF16 maxima on H100), its backward as
 * before; the fixed cost of the one kernel k stays */
static void
test_fp8_attention (void)
{
  Fixture hopper;
  SimLayerCost a, b;
  double k;
  g_autoptr (GError) error = NULL;
  g_autoptr (SimPlanRequest) q_req = sim_plan_request_new ();
  g_autoptr (SimPlan) q = NULL;

  load (&hopper, "dgx-h100.xml");
  k = sim_topology_gpu_type (hopper.topo, 0)->eff.kernel_fixed_s;
  layer (&hopper, "fp8=hybrid", &a, NULL);
  layer (&hopper, "fp8=hybrid,fp8-attention", &b, NULL);
  g_assert_cmpfloat_with_epsilon ((a.attn_core_fwd_s - k) / (b.attn_core_fwd_s - k), 1200.0 / 740.0, 1e-12);
  g_assert_cmpfloat (b.layer_bwd_s, ==, a.layer_bwd_s);
  g_assert_cmpfloat_with_epsilon (a.layer_fwd_s - b.layer_fwd_s, a.attn_core_fwd_s - b.attn_core_fwd_s, 1e-15);
  /* memory: Q, K and V kept in FP8 (1 byte instead of 2) and the output
   * once in FP8 instead of in BF16 beside the projection's FP8 copy (3
   * bytes -> 1): per layer and TP rank, s b (qd + 2 kvd)/t + 2 s b qd/t =
   * 8192 x (8192 + 2048)/8 + 2 x 8192 x 8192/8 = 10,485,760 + 16,777,216
   * = 27,262,976 bytes less */
  {
    SimPlan *p1 = NULL, *p2 = NULL;
    SimMemory *m1, *m2;
    layer (&hopper, "fp8=hybrid", &a, &p1);
    layer (&hopper, "fp8=hybrid,fp8-attention", &b, &p2);
    m1 = sim_memory_compute (hopper.topo, hopper.model, p1);
    m2 = sim_memory_compute (hopper.topo, hopper.model, p2);
    g_assert_cmpuint (g_array_index (m1->stages, SimStageMemory, 0).activation_bytes_per_layer -
                          g_array_index (m2->stages, SimStageMemory, 0).activation_bytes_per_layer,
                      ==, 27262976);
    sim_memory_free (m1);
    sim_memory_free (m2);
    sim_plan_free (p1);
    sim_plan_free (p2);
  }
  /* Megatron's --fp8-dot-product-attention needs --fp8 as well */
  g_assert_true (sim_plan_request_parse_string (q_req, "tp=8,pp=2,dp=4,fp8-attention", &error));
  g_assert_null (q = sim_plan_resolve (q_req, hopper.topo, hopper.model, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_PLAN);
  unload (&hopper);
}

/* --attention-kernel cudnn|flash2 (not FP8, but this file has the layer
 * helper): on H100 the attention core runs at dgx-h100.xml's cuDNN and
 * FlashAttention-2 efficiencies instead of FlashAttention-3's 0.623 /
 * 0.45, everything else alike.  The forward figures are the causal ones at
 * 16k tokens (Shah et al. 2024, Fig. 5(d): 616, 539 and 335 of 989.4
 * TFLOP/s).  Forward: the core's time beyond its fixed kernel cost scales
 * as 1 / efficiency, 0.623 / 0.545 and 0.623 / 0.339 of flash's.  Backward: the layers differ only in the core's backward
 * kernel, whose time is X / efficiency for one X, so
 * (flash - cudnn) / (flash2 - flash) = (1/0.45 - 1/0.522) / (1/0.325 - 1/0.45).
 * llm-foundry's Triton kernel runs at FlashAttention-2's rate / 1.4 forward
 * and / 2 backward (Dao 2023): on H100 FlashAttention-2's is the flash2
 * pair, so its forward core beyond the fixed cost is 1.4 times flash2's,
 * and its backward core X / (0.325 / 2) against flash2's X / 0.325:
 * (triton - flash2) / (flash2 - flash) = (2/0.325 - 1/0.325) / (1/0.325 -
 * 1/0.45).  On A100 the first pair is FlashAttention-2's (0.73 / 0.63 in
 * dgx-a100.xml): the forward core 1.4 times flash's.
 * A100's file measures neither kernel: refused there. */
static void
test_attention_kernels (void)
{
  Fixture hopper, ampere;
  SimLayerCost fl, cu, f2, tr;
  double k;
  g_autoptr (GError) error = NULL;
  g_autoptr (SimPlanRequest) q_req = sim_plan_request_new ();
  g_autoptr (SimPlan) q = NULL;

  load (&hopper, "dgx-h100.xml");
  k = sim_topology_gpu_type (hopper.topo, 0)->eff.kernel_fixed_s;
  layer (&hopper, "attention-kernel=flash", &fl, NULL);
  layer (&hopper, "attention-kernel=cudnn", &cu, NULL);
  layer (&hopper, "attention-kernel=flash2", &f2, NULL);
  g_assert_cmpfloat_with_epsilon ((fl.attn_core_fwd_s - k) / (cu.attn_core_fwd_s - k), 0.545 / 0.623, 1e-12);
  g_assert_cmpfloat_with_epsilon ((fl.attn_core_fwd_s - k) / (f2.attn_core_fwd_s - k), 0.339 / 0.623, 1e-12);
  g_assert_cmpfloat_with_epsilon ((fl.layer_bwd_s - cu.layer_bwd_s) / (f2.layer_bwd_s - fl.layer_bwd_s),
                                  (1 / 0.45 - 1 / 0.522) / (1 / 0.325 - 1 / 0.45), 1e-9);
  layer (&hopper, "attention-kernel=triton", &tr, NULL);
  g_assert_cmpfloat_with_epsilon ((tr.attn_core_fwd_s - k) / (f2.attn_core_fwd_s - k), 1.4, 1e-12);
  g_assert_cmpfloat_with_epsilon ((tr.layer_bwd_s - f2.layer_bwd_s) / (f2.layer_bwd_s - fl.layer_bwd_s),
                                  (2 / 0.325 - 1 / 0.325) / (1 / 0.325 - 1 / 0.45), 1e-9);
  unload (&hopper);

  load (&ampere, "dgx-a100.xml");
  k = sim_topology_gpu_type (ampere.topo, 0)->eff.kernel_fixed_s;
  layer (&ampere, "attention-kernel=flash", &fl, NULL);
  layer (&ampere, "attention-kernel=triton", &tr, NULL);
  g_assert_cmpfloat_with_epsilon ((tr.attn_core_fwd_s - k) / (fl.attn_core_fwd_s - k), 1.4, 1e-12);
  g_assert_true (sim_plan_request_parse_string (q_req, "tp=8,pp=2,dp=4,attention-kernel=cudnn", &error));
  g_assert_null (q = sim_plan_resolve (q_req, ampere.topo, ampere.model, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_PLAN);
  g_assert_nonnull (strstr (error->message, "gives no cuDNN fused-attention rate"));
  unload (&ampere);
}

/* A head between a kernel's compiled head sizes runs in the next one up
 * (sim-cost.c, kernel_head_dim): Llama-3-70B's 64 heads cut to 112 do
 * 112/128 of the 128-wide heads' attention FLOPs, but FlashAttention-2
 * (kHeadDim 128, the first multiple of 32 that holds 112), the
 * FlashAttention-class kernel (the same rule) and llm-foundry's Triton
 * kernel (the next power of two, 128) run them as 128: the same forward
 * core time (the backward's core scales alike; the layer's backward also
 * holds the narrower QKV GEMMs, so it is not compared).  cuDNN's fused
 * attention runs the head as it is: its core's time beyond the fixed
 * kernel cost is 112/128 of the wide heads'.  A head of 128 is a tile in
 * every kernel, so it pads nothing. */
static void
test_head_padding (void)
{
  const char *kernels[] = { "flash2", "flash", "triton", "cudnn" };
  Fixture hopper;
  double k;

  load (&hopper, "dgx-h100.xml");
  k = sim_topology_gpu_type (hopper.topo, 0)->eff.kernel_fixed_s;
  for (guint i = 0; i < G_N_ELEMENTS (kernels); i++) {
    g_autofree char *kernel = g_strdup_printf ("attention-kernel=%s", kernels[i]);
    SimLayerCost wide, narrow;
    hopper.model->head_dim = 128;
    layer (&hopper, kernel, &wide, NULL);
    hopper.model->head_dim = 112;
    layer (&hopper, kernel, &narrow, NULL);
    hopper.model->head_dim = 0;
    g_assert_cmpfloat (narrow.layer_fwd_flop, <, wide.layer_fwd_flop);
    if (g_str_equal (kernels[i], "cudnn")) {
      g_assert_cmpfloat_with_epsilon ((narrow.attn_core_fwd_s - k) / (wide.attn_core_fwd_s - k),
                                      112.0 / 128.0, 1e-12);
    } else {
      g_assert_cmpfloat_with_epsilon (narrow.attn_core_fwd_s / wide.attn_core_fwd_s, 1.0, 1e-12);
    }
  }
  unload (&hopper);
}

/* --fp4 e2m1 on B200 against BF16, the layout of test_recipe_kernels.  The
 * GEMMs of the four linear layers (forward: QKV T x (qd + 2 kvd)/t x h,
 * projection T x h x qd/t, FC1 T x 2f/t x h, FC2 T x h x f/t; backward each
 * one's data and weight gradients) take G/clock in BF16, G the GEMM table's
 * time of the shape, and G/(clock x 3778.8/1421.0) in NVFP4.  Each of the
 * four GEMM inputs (in_x elements in all) and the four output gradients
 * (in_dy) adds two kernels: an amax pass reading 2 bytes per element and a
 * quantization reading 2 and writing 2 x 9/16.  So
 *   fp4 - bf16 = -(1 - 1421.0/3778.8) sum G/clock + 8 k + 5.125 in/B
 * forward (in_x) and backward (in_dy); the FLOPs are the same.  Saved for
 * the backward, per layer: the QKV and FC1 inputs (Tn h each, under
 * sequence parallelism), the projection's (T qd/t: its bf16 copy stays for
 * the fused attention, an NVFP4 one is added) and FC2's (T f/t), 9/16 byte
 * per element against bf16's 2.  Refused: on H100 (no FP4 peak), with
 * --fp8, and --fp4-recipe without --fp4.  On GB300 (one rack, tp 8 and the
 * same layer shapes) the NVFP4 GEMMs run that measured ratio times the
 * ratio of its FP4 / BF16 peaks to B200's: 3778.8/1421.0 x (15000/2500) /
 * (9000/2250) = 3.989 (sim-cost.c, linear_speedup); the kernels are the
 * same. */
static double
gemm_s (const SimGpuType *g, double m, double n, double k)
{
  return sim_gemm_time (g, m, n, k) / g->eff.clock;
}

static void
test_nvfp4 (void)
{
  const double T = 8192, t = 8, Tn = T / t, h = 8192, qd = 8192, kvd = 1024, f = 28672;
  const double up = 2 * f / t, speedup = 3778.8 / 1421.0;
  const double ultra_speedup = speedup * (15000.0 / 2500.0) / (9000.0 / 2250.0);
  const double in_x = 2 * Tn * h + T * qd / t + T * f / t;
  const double in_dy = T * (qd + 2 * kvd) / t + 2 * T * h + T * up;
  const double shapes[4][3] = { { T, (qd + 2 * kvd) / t, h }, { T, h, qd / t }, { T, up, h }, { T, h, f / t } };
  Fixture blackwell, ultra, hopper;
  SimLayerCost bf, fp;
  SimPlan *pb = NULL, *pf = NULL;
  SimActivationConfig cb, cf;
  SimActivations *ab, *af;
  const SimGpuType *g;
  double B, k, gf = 0, gb = 0;
  g_autoptr (GError) error = NULL;
  const char *refused[][2] = { { "tp=8,pp=2,dp=4,fp4=e2m1,fp8=hybrid", "--fp8 off" },
                               { "tp=8,pp=2,dp=4,fp4-recipe=nvfp4", "--fp4 e2m1 with it" } };

  load (&blackwell, "dgx-b200.xml");
  g = sim_topology_gpu_type (blackwell.topo, 0);
  B = g->hbm_bw_bytes_per_s * g->eff.hbm, k = g->eff.kernel_fixed_s;
  for (int i = 0; i < 4; i++) {
    gf += gemm_s (g, shapes[i][0], shapes[i][1], shapes[i][2]);
    gb += gemm_s (g, shapes[i][0], shapes[i][2], shapes[i][1]) +
          gemm_s (g, shapes[i][2], shapes[i][1], shapes[i][0]);
  }
  layer (&blackwell, "fp4=e2m1", &fp, &pf);
  layer (&blackwell, "fp8=off", &bf, &pb);
  g_assert_cmpint (pf->fp4, ==, SIM_FP4_E2M1);
  g_assert_true (sim_plan_quantized (pf));
  g_assert_false (sim_plan_quantized (pb));
  g_assert_cmpfloat_with_epsilon (fp.layer_fwd_s - bf.layer_fwd_s,
                                  -(1 - 1 / speedup) * gf + 8 * k + 5.125 * in_x / B, 1e-12);
  g_assert_cmpfloat_with_epsilon (fp.layer_bwd_s - bf.layer_bwd_s,
                                  -(1 - 1 / speedup) * gb + 8 * k + 5.125 * in_dy / B, 1e-12);
  g_assert_cmpfloat (fp.layer_fwd_flop, ==, bf.layer_fwd_flop);
  g_assert_cmpfloat (fp.layer_bwd_flop, ==, bf.layer_bwd_flop);

  sim_activation_config_from_plan (&cb, pb);
  sim_activation_config_from_plan (&cf, pf);
  ab = sim_activations_layer (blackwell.model, &cb);
  af = sim_activations_layer (blackwell.model, &cf);
  /* 2 Tn h + T f/t elements from 2 to 9/16 byte; the projection's input
   * gains an NVFP4 copy of T qd/t elements */
  g_assert_cmpfloat_with_epsilon ((double) ab->saved_bytes - (double) af->saved_bytes,
                                  (2 - 9.0 / 16) * (2 * Tn * h + T * f / t) - 9.0 / 16 * T * qd / t, 1.0);
  sim_activations_free (ab);
  sim_activations_free (af);
  sim_plan_free (pb);
  sim_plan_free (pf);
  for (guint i = 0; i < G_N_ELEMENTS (refused); i++) {
    g_autoptr (SimPlanRequest) q_req = sim_plan_request_new ();
    g_autoptr (SimPlan) q = NULL;
    g_assert_true (sim_plan_request_parse_string (q_req, refused[i][0], &error));
    g_assert_null (q = sim_plan_resolve (q_req, blackwell.topo, blackwell.model, &error));
    g_assert_error (error, SIM_ERROR, SIM_ERROR_PLAN);
    g_assert_nonnull (strstr (error->message, refused[i][1]));
    g_clear_error (&error);
  }
  unload (&blackwell);

  load_nodes (&ultra, "gb300-nvl72.xml", 1);
  g = sim_topology_gpu_type (ultra.topo, 0);
  B = g->hbm_bw_bytes_per_s * g->eff.hbm, k = g->eff.kernel_fixed_s;
  gf = gb = 0;
  for (int i = 0; i < 4; i++) {
    gf += gemm_s (g, shapes[i][0], shapes[i][1], shapes[i][2]);
    gb += gemm_s (g, shapes[i][0], shapes[i][2], shapes[i][1]) +
          gemm_s (g, shapes[i][2], shapes[i][1], shapes[i][0]);
  }
  layer_on (&ultra, "tp=8,pp=1,dp=9", "fp4=e2m1", &fp, NULL);
  layer_on (&ultra, "tp=8,pp=1,dp=9", "fp8=off", &bf, NULL);
  g_assert_cmpfloat_with_epsilon (fp.layer_fwd_s - bf.layer_fwd_s,
                                  -(1 - 1 / ultra_speedup) * gf + 8 * k + 5.125 * in_x / B, 1e-12);
  g_assert_cmpfloat_with_epsilon (fp.layer_bwd_s - bf.layer_bwd_s,
                                  -(1 - 1 / ultra_speedup) * gb + 8 * k + 5.125 * in_dy / B, 1e-12);
  unload (&ultra);

  load (&hopper, "dgx-h100.xml");
  {
    g_autoptr (SimPlanRequest) q_req = sim_plan_request_new ();
    g_autoptr (SimPlan) q = NULL;
    g_assert_true (sim_plan_request_parse_string (q_req, "tp=8,pp=2,dp=4,fp4=e2m1", &error));
    g_assert_null (q = sim_plan_resolve (q_req, hopper.topo, hopper.model, &error));
    g_assert_error (error, SIM_ERROR, SIM_ERROR_PLAN);
    g_assert_nonnull (strstr (error->message, "has no FP4 tensor cores"));
    g_clear_error (&error);
  }
  unload (&hopper);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/fp8-recipe/kernels", test_recipe_kernels);
  g_test_add_func ("/fp8-recipe/resolution", test_recipe_resolution);
  g_test_add_func ("/fp8-recipe/attention", test_fp8_attention);
  g_test_add_func ("/attention/kernels", test_attention_kernels);
  g_test_add_func ("/attention/head-padding", test_head_padding);
  g_test_add_func ("/fp4/nvfp4", test_nvfp4);
  return g_test_run ();
}
