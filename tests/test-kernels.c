/* test-kernels.c — sim_cost_layer_kernels, the list `sim kernels` prints:
 * its kernels sum to the layer's and the head's GPU time, and each row's
 * shape, bytes and seconds are the ones worked out by hand beside it. */
#include <glib.h>
#include <string.h>

#include "sim-cost.h"
#include "sim-gemm.h"
#include "sim-iteration.h"
#include "sim-memory.h"
#include "sim-plan.h"
#include "test-util.h"

typedef struct {
  double s; /* summed seconds */
  int n;    /* kernels */
} Sum;

static Sum
pass_sum (const GArray *k, const char *pass)
{
  Sum r = { 0, 0 };
  for (guint i = 0; i < k->len; i++) {
    const SimKernel *x = &g_array_index (k, SimKernel, i);
    if (strcmp (x->pass, pass) == 0)
      r.s += x->seconds, r.n += x->kernels;
  }
  return r;
}

/* the summed seconds of pass's kernels with role */
static double
role_sum (const GArray *k, const char *pass, const char *role)
{
  double r = 0;
  for (guint i = 0; i < k->len; i++) {
    const SimKernel *x = &g_array_index (k, SimKernel, i);
    if (strcmp (x->pass, pass) == 0 && strcmp (x->role, role) == 0)
      r += x->seconds;
  }
  return r;
}

/* the first kernel of pass named name with role */
static const SimKernel *
find (const GArray *k, const char *pass, const char *name, const char *role)
{
  for (guint i = 0; i < k->len; i++) {
    const SimKernel *x = &g_array_index (k, SimKernel, i);
    if (strcmp (x->pass, pass) == 0 && strcmp (x->name, name) == 0 && strcmp (x->role, role) == 0)
      return x;
  }
  g_assert_not_reached ();
}

/* Llama-3-8B (hidden 4096, 32 heads of 128, 8 KV heads, ffn 14336,
 * vocabulary 128256, sequence 8192) at tp 1, micro-batch 1, on a DGX
 * H100: 8192 tokens per micro-batch. */
static void
test_dense (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimPlan) p = test_resolve_plan (t, m, "tp=1,pp=1,dp=8,mb=1");
  const SimGpuType *g = sim_topology_gpu_type (t, 0);
  g_autoptr (GArray) k = sim_cost_layer_kernels (m, p, g);
  SimLayerCost c;
  const SimKernel *x;
  Sum f, b;
  double flop;

  sim_cost_layer (m, p, g, &c);
  /* the list is what the layer is charged: forward, 12 kernels (two
   * norms, two residual adds, QKV, the projection, FC1, FC2, SwiGLU, the
   * rotary embedding of q and of k, the fused attention); backward 19
   * (each norm's two, the two residual adds, eight GEMMs, SwiGLU's, the
   * two rotary, attention and its dO.O preprocessing) */
  f = pass_sum (k, "forward");
  b = pass_sum (k, "backward");
  g_assert_cmpint (f.n, ==, 12);
  g_assert_cmpint (b.n, ==, 19);
  g_assert_cmpfloat_with_epsilon (f.s, c.gpu_s[SIM_LAYER_FWD], 1e-12);
  g_assert_cmpfloat_with_epsilon (b.s, c.gpu_s[SIM_LAYER_BWD], 1e-12);

  /* QKV: 8192 tokens x (4096 + 2 x 8 x 128 = 6144) x 4096, 2 m n k =
   * 412,316,860,416 FLOP.  Every side is at or beyond the corner of the
   * GEMM table of dgx-h100.xml (m = n = k = 4096: 780.194 TFLOP/s), where
   * sim holds the rate, so the kernel takes the fixed cost plus the FLOPs
   * at 780.194 TFLOP/s x the sustained clock */
  flop = 412316860416.0;
  x = find (k, "forward", "qkv", "");
  g_assert_cmpint (x->kind, ==, SIM_KERNEL_GEMM);
  g_assert_cmpfloat (x->m, ==, 8192);
  g_assert_cmpfloat (x->n, ==, 6144);
  g_assert_cmpfloat (x->k, ==, 4096);
  g_assert_cmpfloat (x->flop, ==, flop);
  g_assert_cmpfloat_with_epsilon (x->seconds,
                                  g->eff.kernel_fixed_s + flop / (780.194e12 * g->eff.clock),
                                  1e-12);
  /* its weight gradient: (4096 x 8192).(8192 x 6144) */
  x = find (k, "backward", "qkv", "wgrad");
  g_assert_cmpfloat (x->m, ==, 4096);
  g_assert_cmpfloat (x->n, ==, 6144);
  g_assert_cmpfloat (x->k, ==, 8192);

  /* the input norm reads and writes 8192 x 4096 BF16 values: 4 x 8192 x
   * 4096 = 134,217,728 bytes, at the achievable HBM bandwidth */
  x = find (k, "forward", "input_norm", "");
  g_assert_cmpint (x->kind, ==, SIM_KERNEL_MEMORY);
  g_assert_cmpfloat (x->bytes, ==, 134217728.0);
  g_assert_cmpfloat_with_epsilon (x->seconds,
                                  g->eff.kernel_fixed_s +
                                      134217728.0 / (g->hbm_bw_bytes_per_s * g->eff.hbm),
                                  1e-15);

  /* the output layer: 8192 x 128256 x 4096; its pass sums to the head's
   * forward (6 kernels at 18.9 us each to launch, far below its GPU time,
   * so the GPU's time is the pass's) */
  x = find (k, "output forward", "output", "");
  g_assert_cmpfloat (x->n, ==, 128256);
  g_assert_cmpfloat_with_epsilon (pass_sum (k, "output forward").s, c.head_fwd_s, 1e-12);
  g_assert_cmpfloat_with_epsilon (pass_sum (k, "output backward").s, c.head_bwd_s, 1e-12);

  /* the weight-gradient pass of a schedule that splits the backward
   * (ZB-H1) is the list's wgrad rows: QKV, projection, FC1, FC2, and the
   * output layer's (the backward's GPU time is its wall time here, so no
   * host share scales it) */
  g_assert_cmpfloat (c.layer_bwd_s, ==, c.gpu_s[SIM_LAYER_BWD]);
  g_assert_cmpfloat_with_epsilon (c.layer_bwd_w_s, role_sum (k, "backward", "wgrad"), 1e-12);
  g_assert_cmpfloat_with_epsilon (c.head_bwd_w_s, role_sum (k, "output backward", "wgrad"), 1e-12);
  g_assert_cmpfloat_with_epsilon (c.head_bwd_w_s, find (k, "output backward", "output", "wgrad")->seconds,
                                  1e-12);
}

/* an FP8 GEMM runs at its shape's BF16 rate times the GPU's measured
 * FP8 / BF16 ratio of best-shape matmuls (MAMF table of stas00/ml-
 * engineering @744d01e): H100 SXM 1402.6 / 794.5 = 1.7654 (no
 * <gemm fp8-ratio> in dgx-h100.xml: the default), B200 SXM 3432.5 / 1745.0
 * = 1.9670 (dgx-b200.xml).  Llama-3-8B's QKV GEMM at tp 1: its time past
 * the kernel's fixed cost in BF16 over that in FP8 is the ratio. */
static void
test_fp8_ratio (void)
{
  static const struct {
    const char *topology;
    double ratio;
  } cases[] = { { "dgx-h100.xml", 1402.6 / 794.5 }, { "dgx-b200.xml", 3432.5 / 1745.0 } };
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (SimTopology) t = test_load_topology (cases[i].topology, 1);
    g_autoptr (SimPlan) bf16 = test_resolve_plan (t, m, "tp=1,pp=1,dp=8,mb=1");
    g_autoptr (SimPlan) fp8 = test_resolve_plan (t, m, "tp=1,pp=1,dp=8,mb=1,fp8=hybrid");
    const SimGpuType *g = sim_topology_gpu_type (t, 0);
    g_autoptr (GArray) kb = sim_cost_layer_kernels (m, bf16, g);
    g_autoptr (GArray) kf = sim_cost_layer_kernels (m, fp8, g);
    double sb = find (kb, "forward", "qkv", "")->seconds - g->eff.kernel_fixed_s;
    double sf = find (kf, "forward", "qkv", "")->seconds - g->eff.kernel_fixed_s;
    g_assert_cmpfloat_with_epsilon (sb / sf, cases[i].ratio, 1e-3);
  }
}

/* tp 8 with sequence parallelism: each GPU's QKV is 8192 x 6144 / 8 = 768
 * columns wide, and its norms see 8192 / 8 = 1024 tokens: 4 x 1024 x 4096
 * = 16,777,216 bytes */
static void
test_tensor_parallel (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimPlan) p = test_resolve_plan (t, m, "tp=8,pp=1,dp=1,mb=1");
  g_autoptr (GArray) k = sim_cost_layer_kernels (m, p, sim_topology_gpu_type (t, 0));
  g_assert_cmpfloat (find (k, "forward", "qkv", "")->n, ==, 768);
  g_assert_cmpfloat (find (k, "forward", "input_norm", "")->bytes, ==, 16777216.0);
}

/* bytes and kernels of the rows of pass `pass` named `name` */
static Sum
tag_bytes (const GArray *k, const char *pass, const char *name, double *bytes)
{
  Sum r = { 0, 0 };
  *bytes = 0;
  for (guint i = 0; i < k->len; i++) {
    const SimKernel *x = &g_array_index (k, SimKernel, i);
    if (strcmp (x->pass, pass) == 0 && strcmp (x->name, name) == 0)
      *bytes += x->bytes, r.s += x->seconds, r.n += x->kernels;
  }
  return r;
}

/* torchtitan's Llama-3-8B layer, eager and compiled, at tp 1 and
 * micro-batch 1: N = 8192 x 4096 = 33,554,432 elements through each norm,
 * F = 8192 x 14336 = 117,440,512 through SwiGLU's product, q 8192 x 4096
 * and k 8192 x 1024 rotated.
 *   input norm, eager: 36 N = 1,207,959,552 bytes in 8 kernels forward,
 *     92 N = 3,087,007,744 in 14 backward; compiled (Inductor's one
 *     kernel): 4 N = 134,217,728 forward, 8 N = 268,435,456 in 2 backward
 *   SwiGLU, eager: silu 4 F + product 6 F = 1,174,405,120 bytes in 2
 *     kernels; compiled 6 F = 704,643,072 in 1
 *   rotary, both: 20 x 8192 x (4096 + 1024) = 838,860,800 bytes in 6
 *     kernels (cast, complex product, cast, for q and for k)
 *   repeat_kv, both: keys and values each read 8192 x 1024 and write
 *     8192 x 4096 BF16: 2 x 2 x 8192 x 5120 = 167,772,160 bytes, 2 kernels
 * Kernel counts, the seven linears (wq, wk, wv, wo, w1, w3, w2) each its
 * own GEMM: forward eager 16 (norms) + 2 (residual adds) + 7 GEMMs + 2
 * (SwiGLU) + 6 (rotary) + 2 (repeat_kv) + 1 (attention) = 36, compiled 2
 * + 2 + 7 + 1 + 6 + 2 + 1 = 21; backward eager 28 + 2 + 14 + 3 + 6 + 2 +
 * 2 (attention and its dO.O) = 57, compiled 4 + 2 + 14 + 1 + 6 + 2 + 2 =
 * 31.
 * Op-level checkpointing (--recompute selective) reruns the even matmuls
 * the backward needs: wk (8192 x 1024 x 4096), wo (8192 x 4096 x 4096,
 * whose output the residual add needs at tp 1) and w3 (8192 x 14336 x
 * 4096): 2 x 8192 x 4096 x (1024 + 4096 + 14336) = 1,305,670,057,984
 * FLOP; at tp 8 a compiled block leaves wo out (its reduce-scatter's
 * output is kept): 2 x 8192 x 4096 x (1024 + 14336) / 8 =
 * 128,849,018,880, and an eager one reruns it: 163,208,757,248. */
static void
test_torchtitan (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimPlan) pe =
      test_resolve_plan (t, m, "tp=1,pp=1,dp=8,mb=1,framework=torchtitan");
  g_autoptr (SimPlan) pc =
      test_resolve_plan (t, m, "tp=1,pp=1,dp=8,mb=1,framework=torchtitan,torch-compile=true");
  const SimGpuType *g = sim_topology_gpu_type (t, 0);
  g_autoptr (GArray) ke = sim_cost_layer_kernels (m, pe, g);
  g_autoptr (GArray) kc = sim_cost_layer_kernels (m, pc, g);
  SimLayerCost ce, cc;
  double bytes;
  Sum n;

  g_assert_cmpint (pe->torch_compile, ==, 0);
  g_assert_cmpint (pc->torch_compile, ==, 1);
  {
    /* the rows by hand above: list (eager or compiled), pass, name, bytes, kernels */
    const struct { gboolean compiled; const char *pass, *name; double bytes; int kernels; } want[] = {
      { FALSE, "forward", "input_norm", 1207959552.0, 8 },
      { FALSE, "backward", "input_norm", 3087007744.0, 14 },
      { TRUE, "forward", "input_norm", 134217728.0, 1 },
      { TRUE, "backward", "input_norm", 268435456.0, 2 },
      { FALSE, "forward", "swiglu", 1174405120.0, 2 },
      { TRUE, "forward", "swiglu", 704643072.0, 1 },
      { FALSE, "forward", "rope", 838860800.0, 6 },
      { TRUE, "forward", "rope", 838860800.0, 6 },
      { FALSE, "forward", "repeat_kv", 167772160.0, 2 },
      { TRUE, "forward", "repeat_kv", 167772160.0, 2 },
    };
    for (guint i = 0; i < G_N_ELEMENTS (want); i++) {
      n = tag_bytes (want[i].compiled ? kc : ke, want[i].pass, want[i].name, &bytes);
      g_assert_cmpfloat (bytes, ==, want[i].bytes);
      g_assert_cmpint (n.n, ==, want[i].kernels);
    }
  }
  g_assert_cmpint (pass_sum (ke, "forward").n, ==, 36);
  g_assert_cmpint (pass_sum (kc, "forward").n, ==, 21);
  g_assert_cmpint (pass_sum (ke, "backward").n, ==, 57);
  g_assert_cmpint (pass_sum (kc, "backward").n, ==, 31);
  /* the list is still what the layer is charged */
  sim_cost_layer (m, pe, g, &ce);
  sim_cost_layer (m, pc, g, &cc);
  g_assert_cmpfloat_with_epsilon (pass_sum (ke, "forward").s, ce.gpu_s[SIM_LAYER_FWD], 1e-12);
  g_assert_cmpfloat_with_epsilon (pass_sum (kc, "backward").s, cc.gpu_s[SIM_LAYER_BWD], 1e-12);
  {
    const char *plans[] = {
      "tp=1,pp=1,dp=8,mb=1,framework=torchtitan,torch-compile=true,recompute=selective",
      "tp=8,pp=1,dp=1,mb=1,framework=torchtitan,torch-compile=true,recompute=selective",
      "tp=8,pp=1,dp=1,mb=1,framework=torchtitan,recompute=selective",
    };
    const double want[] = { 1305670057984.0, 128849018880.0, 163208757248.0 };
    for (guint i = 0; i < G_N_ELEMENTS (plans); i++) {
      g_autoptr (SimPlan) p = test_resolve_plan (t, m, plans[i]);
      SimLayerCost c;
      g_assert_true (sim_plan_op_sac (p));
      sim_cost_layer (m, p, g, &c);
      g_assert_cmpfloat (c.layer_recompute_flop, ==, want[i]);
      /* the two all-gathers of the attention's and the MLP's inputs */
      g_assert_cmpint (c.recompute_tp_colls, ==, p->tp > 1 ? 2 : 0);
    }
  }
  /* context parallel 2: 4096 tokens a GPU; torchtitan's ring carries K and
   * V repeated to the 32 query heads, 2 x 2 x 4096 x 4096 = 67,108,864
   * bytes a layer, Megatron's the 8 KV heads, 2 x 2 x 4096 x 1024 =
   * 16,777,216 */
  {
    g_autoptr (SimPlan) pt = test_resolve_plan (t, m, "tp=1,pp=1,dp=4,cp=2,mb=1,framework=torchtitan");
    g_autoptr (SimPlan) pm = test_resolve_plan (t, m, "tp=1,pp=1,dp=4,cp=2,mb=1");
    SimLayerCost c;
    sim_cost_layer (m, pt, g, &c);
    g_assert_cmpfloat (c.cp_kv_bytes, ==, 67108864.0);
    sim_cost_layer (m, pm, g, &c);
    g_assert_cmpfloat (c.cp_kv_bytes, ==, 16777216.0);
  }
}

/* Mixtral 8x7B lists its mixture-of-experts layer: the kernels sum to the
 * MoE layer's GPU time (SimLayerCost.gpu_s[SIM_MOE_LAYER_FWD] and
 * [SIM_MOE_LAYER_BWD]) and include the experts' */
static void
test_moe (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("mixtral-8x7b.xml");
  g_autoptr (SimPlan) p = test_resolve_plan (t, m, "tp=1,pp=1,dp=8,ep=8,mb=1");
  const SimGpuType *g = sim_topology_gpu_type (t, 0);
  g_autoptr (GArray) k = sim_cost_layer_kernels (m, p, g);
  SimLayerCost c;
  gboolean experts = FALSE;
  sim_cost_layer (m, p, g, &c);
  g_assert_cmpfloat_with_epsilon (pass_sum (k, "forward").s, c.gpu_s[SIM_MOE_LAYER_FWD], 1e-12);
  g_assert_cmpfloat_with_epsilon (pass_sum (k, "backward").s, c.gpu_s[SIM_MOE_LAYER_BWD], 1e-12);
  for (guint i = 0; i < k->len; i++)
    experts |= strcmp (g_array_index (k, SimKernel, i).name, "expert_fc1") == 0;
  g_assert_true (experts);
}

/* the kernels of pass named name with role */
static int
count (const GArray *k, const char *pass, const char *name, const char *role)
{
  int n = 0;
  for (guint i = 0; i < k->len; i++) {
    const SimKernel *x = &g_array_index (k, SimKernel, i);
    n += strcmp (x->pass, pass) == 0 && strcmp (x->name, name) == 0 && strcmp (x->role, role) == 0;
  }
  return n;
}

/* LoRA rank 16 on every projection of Llama-3-8B: the frozen base weights
 * take no weight gradient, so the backward runs the four linears' data
 * gradients only; each of the 7 adapters adds two GEMMs and the add of its
 * output forward (14 + 7 kernels: 12 + 21 = 33), and backward two data
 * and two weight gradients and the add of its input gradient (35: 19 - 4
 * + 35 = 50); the frozen output layer has no weight gradient.  QLoRA
 * dequantizes each of the four base weights before its forward and before
 * its data gradient: 4 more kernels each way, the QKV weight's 4096 x 6144
 * elements at half a byte read and two written: 62,914,560 bytes. */
static void
test_lora (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimPlan) p = test_resolve_plan (t, m, "tp=1,pp=1,dp=8,mb=1,lora-rank=16");
  g_autoptr (SimPlan) q = test_resolve_plan (t, m, "tp=1,pp=1,dp=8,mb=1,lora-rank=16,qlora");
  const SimGpuType *g = sim_topology_gpu_type (t, 0);
  g_autoptr (GArray) k = sim_cost_layer_kernels (m, p, g);
  g_autoptr (GArray) kq = sim_cost_layer_kernels (m, q, g);
  const SimKernel *x;
  double bytes;

  g_assert_cmpint (pass_sum (k, "forward").n, ==, 33);
  g_assert_cmpint (pass_sum (k, "backward").n, ==, 50);
  g_assert_cmpint (count (k, "backward", "qkv", "wgrad"), ==, 0);
  g_assert_cmpint (count (k, "backward", "qkv", "dgrad"), ==, 1);
  g_assert_cmpint (count (k, "backward", "fc2", "wgrad"), ==, 0);
  g_assert_cmpint (count (k, "output backward", "output", "wgrad"), ==, 0);
  g_assert_cmpint (count (k, "output backward", "output", "dgrad"), ==, 1);
  /* the q adapter: A is 4096 x 16 (x A: 8192 x 16 x 4096), B 16 x 4096 */
  x = find (k, "forward", "lora_qkv", "");
  g_assert_cmpfloat (x->n, ==, 16);
  g_assert_cmpfloat (x->k, ==, 4096);
  /* x A is memory-bound: 2 bytes x (8192 x 4096 + 4096 x 16) read and
   * 2 x 8192 x 16 written, 67,502,080 bytes, at 3.35 TB/s x the achievable
   * fraction (dgx-h100.xml) take longer than its 1,073,741,824 FLOP at the
   * rate of the GEMM table's thinnest shapes (256 a side), so the kernel
   * takes the fixed cost plus the bytes' time */
  bytes = 2.0 * (8192.0 * 4096 + 4096.0 * 16) + 2.0 * 8192 * 16;
  g_assert_cmpfloat (bytes, ==, 67502080.0);
  g_assert_cmpfloat_with_epsilon (x->seconds,
                                  g->eff.kernel_fixed_s + bytes / (3.35e12 * g->eff.hbm), 1e-12);
  g_assert_cmpfloat (x->seconds - g->eff.kernel_fixed_s, >,
                     sim_gemm_time (g, 8192, 16, 4096) / g->eff.clock);
  g_assert_cmpint (pass_sum (kq, "forward").n, ==, 37);
  g_assert_cmpint (pass_sum (kq, "backward").n, ==, 54);
  g_assert_cmpfloat (find (kq, "forward", "qkv", "")->kind, ==, SIM_KERNEL_MEMORY);
  g_assert_cmpfloat (find (kq, "forward", "qkv", "")->bytes, ==, 62914560.0);
}

/* The model FLOPs of a LoRA step (the MFU's numerator), Llama-3-8B, rank
 * 16 on every projection, 64 sequences of 8192 tokens.  Per token, forward:
 * the weights 2 x 32 x (41,943,040 attention + 176,160,768 MLP) =
 * 13,958,643,712 and the output layer 2 x 4096 x 128256 = 1,050,673,152,
 * the attention core 2 x 8192 x 32 heads x 256 x 32 = 4,294,967,296.
 * The frozen weights run forward and data gradient (x 2), the core forward
 * and backward (x 3), the 32 x 1,310,720 = 41,943,040 adapter parameters
 * train in full (x 6): 2 x 15,009,316,864 + 3 x 4,294,967,296 + 6 x
 * 41,943,040 = 43,155,193,856 per token. */
static void
test_lora_model_flop (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimPlan) p = test_resolve_plan (t, m, "tp=1,pp=1,dp=8,mb=1,gb=64,lora-rank=16");
  g_assert_cmpfloat_with_epsilon (sim_cost_model_flop (m, p), 43155193856.0 * 64 * 8192, 1e3);
}

/* Under LoRA only the adapters are stepped: Llama-3-8B, rank 16 on every
 * projection, tp 1: 32 layers x 1,310,720 adapter parameters =
 * 41,943,040 (the frozen embedding, output layer and norms have none),
 * sharded by ZeRO 1 over dp 8: 5,242,880 a GPU, at the optimizer's
 * seconds per parameter */
static void
test_lora_optimizer (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimPlan) p = test_resolve_plan (t, m, "tp=1,pp=1,dp=8,mb=1,gb=16,zero=1,lora-rank=16,gpu-variation=0");
  g_autoptr (SimMemory) mem = sim_memory_compute (t, m, p);
  g_autoptr (SimIteration) it = sim_iteration_run (t, m, p, mem, FALSE, &error);
  SimLayerCost c;
  g_assert_no_error (error);
  sim_cost_layer (m, p, sim_topology_gpu_type (t, 0), &c);
  g_assert_cmpfloat_with_epsilon (g_array_index (it->stages, SimStageTime, 0).optimizer_s,
                                  c.optimizer_s_per_param * 41943040.0 / 8, 1e-9);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernels/dense", test_dense);
  g_test_add_func ("/kernels/tensor-parallel", test_tensor_parallel);
  g_test_add_func ("/kernels/fp8-ratio", test_fp8_ratio);
  g_test_add_func ("/kernels/torchtitan", test_torchtitan);
  g_test_add_func ("/kernels/moe", test_moe);
  g_test_add_func ("/kernels/lora", test_lora);
  g_test_add_func ("/kernels/lora-model-flop", test_lora_model_flop);
  g_test_add_func ("/kernels/lora-optimizer", test_lora_optimizer);
  return g_test_run ();
}
