/* tests for the time simulation of mixture-of-experts layers: the model FLOPs of the active experts, the all-to-all bytes
 * per GPU, the dispatch and combine all-to-alls on the critical path, and
 * the MoE activations on the timeline, each against a value derived apart
 * from the code under test */
#include <glib.h>
#include <math.h>

#include "sim-activation.h"
#include "sim-collective.h"
#include "sim-cost.h"
#include "sim-gemm.h"
#include "sim-iteration.h"
#include "sim-memory.h"
#include "sim-model.h"
#include "sim-network.h"
#include "sim-plan.h"
#include "sim-topology.h"
#include "test-util.h"

typedef struct {
  SimTopology *topo; /* dgx8x4.xml, one node of 8 H100s */
  SimModel *model;   /* mixtral-8x7b */
  SimPlan *plan;
} Fixture;

static void
setup (Fixture *f, const char *plan)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *tp = g_build_filename (SIM_SOURCE_DIR, "topologies", "dgx8x4.xml", NULL);
  g_autofree char *mp = g_build_filename (SIM_SOURCE_DIR, "models", "mixtral-8x7b.xml", NULL);
  f->topo = sim_topology_load (tp, 1, &error);
  g_assert_no_error (error);
  f->model = sim_model_load (mp, &error);
  g_assert_no_error (error);
  f->plan = test_resolve_plan (f->topo, f->model, plan);
}

static void
teardown (Fixture *f)
{
  sim_plan_free (f->plan);
  sim_model_free (f->model);
  sim_topology_free (f->topo);
}

/* One grouped GEMM against its published measurement: Qwen3-30B-A3B's
 * up_proj, 128 experts of K 2048, N 1536, on 65,536 routed rows (512 per
 * expert, uniform routing), BF16 on an H100, ran at 129.5 TFLOP/s as a
 * loop of one cuBLAS GEMM per expert (tgale96/grouped_gemm pull request
 * #37, "cuBLAS (base)", uniform column; the SM90 CUTLASS grouped kernel of
 * the same table reached 160.5, and Transformer Engine's GroupedLinear,
 * which sim models, launches one cuBLAS GEMM per expert).  FLOPs:
 * 128 x 2 x 512 x 1536 x 2048 = 412,316,860,416.  sim times each expert's
 * GEMM at dgx-h100.xml's measured rate of 512 x 1536 x 2048 (between
 * 231.0 and 342.8 TFLOP/s at n 1024 and 2048) at the sustained clock,
 * plus the fixed cost of a kernel; the rate it implies must be the
 * published one within 15 %, the per-row tolerance of the issues. */
static void
test_grouped_gemm_published (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *tp = g_build_filename (SIM_SOURCE_DIR, "topologies", "dgx-h100.xml", NULL);
  SimTopology *topo = sim_topology_load (tp, 1, &error);
  g_assert_no_error (error);
  const SimGpuType *g = sim_topology_gpu_type (topo, 0);
  double flop = 128 * 2.0 * 512 * 1536 * 2048;
  double s = sim_cost_grouped_gemm_s (g, 128, 512, 1536, 2048, 1.0, 2.0);
  double rate = flop / s;
  g_test_message ("grouped GEMM 128 x (512 x 1536 x 2048) on H100: sim %.1f TFLOP/s (%.3f ms), "
                  "published 129.5 TFLOP/s, error %+.1f %%", rate / 1e12, s * 1e3,
                  100 * (rate / 129.5e12 - 1));
  g_assert_cmpfloat (fabs (rate / 129.5e12 - 1), <, 0.15);
  /* 16 rows an expert (a lightly loaded expert at a small micro-batch):
   * each GEMM reads its 2048 x 1536 weight and 16 x 2048 input and writes
   * 16 x 1536, 2 x (32,768 + 3,145,728) + 2 x 24,576 = 6,406,144 bytes,
   * longer at 3.35 TB/s x the achievable fraction than its 100,663,296
   * FLOP at the table's rate: the weights' bytes bound it */
  s = sim_cost_grouped_gemm_s (g, 128, 16, 1536, 2048, 1.0, 2.0);
  g_assert_cmpfloat_with_epsilon (
      s, 128 * (g->eff.kernel_fixed_s + 6406144.0 / (3.35e12 * g->eff.hbm)), 1e-12);
  g_assert_cmpfloat (6406144.0 / (3.35e12 * g->eff.hbm), >,
                     sim_gemm_time (g, 16, 1536, 2048) / g->eff.clock);
  sim_topology_free (topo);
}

/* Mixtral 8x7B (h 4096, 32 layers, 32 heads of 128, 8 KV heads, 8 experts
 * of width 14336, top-2, SwiGLU, vocab 32000) at sequence 4096, one
 * sequence per step.  Forward matmul FLOPs per token and layer:
 *   projections 2 (h (qd + 2 kvd) + qd h) = 2 x 41,943,040
 *   router and the 2 experts a token meets 2 (h E + 2 x 3 h fe)
 *             = 2 x (32,768 + 352,321,536) = 2 x 352,354,304
 *   full attention 2 S H (d + d) = 2 x 4096 x 32 x 256 = 67,108,864
 * = 855,703,552; x 32 layers + output 2 h V = 262,144,000 gives
 * 27,644,657,664 per token; model FLOPs = 3 x that x 4096 tokens
 * = 339,697,553,375,232. */
static void
test_model_flop (void)
{
  Fixture f;
  setup (&f, "tp=1,pp=1,dp=8,ep=8,seq=4096,gb=8");
  /* the step's 8 sequences, 8 times the one sequence's */
  g_assert_cmpfloat_with_epsilon (sim_cost_model_flop (f.model, f.plan) / 8, 339697553375232.0, 1.0);
  teardown (&f);
}

/* Each GPU holds Tn = 4096 tokens (tp 1) and sends each to k = 2 experts
 * in BF16: 2 x 4096 x 4096 x 2 = 67,108,864 bytes per all-to-all, times
 * the busiest GPU's load (1.5: 100,663,296); no expert TP, no gather */
static void
test_a2a_bytes (void)
{
  Fixture f;
  SimLayerCost c;
  setup (&f, "tp=1,pp=1,dp=8,ep=8,seq=4096,gb=8");
  sim_cost_layer (f.model, f.plan, sim_topology_gpu_type (f.topo, 0), &c);
  g_assert_cmpfloat (c.a2a_bytes, ==, 67108864.0);
  g_assert_cmpfloat (c.etp_bytes, ==, 0.0);
  g_assert_cmpint (c.moe_tp_colls_fwd, ==, 0);
  g_assert_cmpfloat (c.moe_fwd_s, >, 0.0);
  teardown (&f);
  setup (&f, "tp=1,pp=1,dp=8,ep=8,seq=4096,gb=8,moe-imbalance=1.5");
  sim_cost_layer (f.model, f.plan, sim_topology_gpu_type (f.topo, 0), &c);
  g_assert_cmpfloat (c.a2a_bytes, ==, 100663296.0);
  teardown (&f);
}

/* a collective of `bytes` over the node's 8 GPUs, alone on the network
 * (sim_collective_choose: what sim collective prints) */
static double
alone_s (const SimTopology *topo, SimCollOp op, double bytes)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimEngine) e = sim_engine_new ();
  g_autoptr (SimNetwork) net = sim_network_new (topo, e);
  int gpus[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  SimCollChoice choice;
  g_assert_true (sim_collective_choose (net, op, gpus, 8, bytes, SIM_ALGO_AUTO, SIM_PROTO_AUTO,
                                        &choice, &error));
  g_assert_no_error (error);
  return choice.predicted_s;
}

/* one all-to-all of 67,108,864 bytes per GPU over the node's 8 GPUs, alone
 * on the network (what sim collective --op all_to_all prints) */
static double
a2a_alone_s (const SimTopology *topo)
{
  return alone_s (topo, SIM_OP_ALLTOALL, 67108864.0);
}

/* One micro-batch on one stage: the forward runs its 32 MoE layers' dispatch
 * and combine (2 all-to-alls each), the backward the same again, nothing
 * beside them, so the exposed expert-parallel time and the critical path's
 * are both 32 x 2 x 2 = 128 all-to-alls of 67,108,864 bytes over the 8
 * GPUs, each for its time alone on the network (sim_collective_choose,
 * the simulation sim collective --op all_to_all prints).  The activation
 * peak is the forward's: 32 MoE layers' saved tensors plus the
 * embedding's and the output layer's (sim_activations_*). */
static void
test_one_stage (void)
{
  Fixture f;
  g_autoptr (GError) error = NULL;
  g_autoptr (SimMemory) mem = NULL;
  g_autoptr (SimIteration) it = NULL;
  g_autoptr (SimActivations) moe = NULL, emb = NULL, out = NULL;
  SimActivationConfig cfg;
  double a2a_s, want;
  const SimStageTime *st;

  setup (&f, "tp=1,pp=1,dp=8,ep=8,seq=4096,gb=8");
  a2a_s = a2a_alone_s (f.topo);
  want = 128 * a2a_s;

  mem = sim_memory_compute (f.topo, f.model, f.plan);
  it = sim_iteration_run (f.topo, f.model, f.plan, mem, FALSE, &error);
  g_assert_no_error (error);
  g_printerr ("# one all-to-all %.1f us; exposed EP %.6f s, critical EP %.6f s, want %.6f s\n",
              1e6 * a2a_s, it->exposed_ep_s, it->critical_s[SIM_SPAN_EP], want);
  g_assert_cmpfloat_with_epsilon (it->critical_s[SIM_SPAN_EP], want, 1e-8);
  g_assert_cmpfloat_with_epsilon (it->exposed_ep_s, want, 1e-8);

  sim_activation_config_from_plan (&cfg, f.plan);
  moe = sim_activations_moe_layer (f.model, &cfg);
  emb = sim_activations_embedding (f.model, &cfg);
  out = sim_activations_output (f.model, &cfg);
  st = &g_array_index (it->stages, SimStageTime, 0);
  g_assert_cmpuint (st->peak_activation_bytes, ==,
                    32 * moe->saved_bytes + emb->saved_bytes + out->saved_bytes);
  teardown (&f);
}

/* DeepEP's dispatch (--moe-dispatcher deepep) on the one-stage run above:
 * its 8 GPUs are one node, so only the NVLink hop runs, each expert's copy
 * of every token once, in BF16 (no FP8 here) both ways: the same
 * all-to-all of 67,108,864 bytes as NCCL's, the same 128 of them exposed.
 * And the nodes a token reaches across an expert-parallel group, closed
 * forms of nodes x (1 - C(pool - pool/nodes, pick) / C(pool, pick)):
 * DeepSeek-V3's group-limited routing, 4 of 8 groups, a group a node of 8:
 * 8 x (1 - C(7,4)/C(8,4)) = 8 x (1 - 35/70) = 4, every group on its own
 * node; its 8 of 256 experts without the limit: 8 x (1 - C(224,8)/C(256,8))
 * = 5.294652; on 2 nodes 2 x (1 - C(128,8)/C(256,8)) = 1.993020; a pick
 * of one reaches one node. */
static void
test_deepep (void)
{
  Fixture f;
  g_autoptr (GError) error = NULL;
  g_autoptr (SimMemory) mem = NULL;
  g_autoptr (SimIteration) it = NULL;
  setup (&f, "tp=1,pp=1,dp=8,ep=8,seq=4096,gb=8,moe-dispatcher=deepep");
  mem = sim_memory_compute (f.topo, f.model, f.plan);
  it = sim_iteration_run (f.topo, f.model, f.plan, mem, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat_with_epsilon (it->exposed_ep_s, 128 * a2a_alone_s (f.topo), 1e-8);
  teardown (&f);
  g_assert_cmpfloat_with_epsilon (sim_cost_nodes_reached (8, 4, 8), 4.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (sim_cost_nodes_reached (256, 8, 8), 5.294652, 1e-6);
  g_assert_cmpfloat_with_epsilon (sim_cost_nodes_reached (256, 8, 2), 1.993020, 1e-6);
  g_assert_cmpfloat_with_epsilon (sim_cost_nodes_reached (256, 1, 8), 1.0, 1e-12);
}

/* --overlap-moe-expert-parallel-comm on the one-stage run above: its
 * forward and backward are each other's neighbours in program order, so
 * every all-to-all runs beside compute, each shorter than the compute it
 * hides behind (161.8 us against milliseconds per layer).  Nothing of EP
 * is exposed, and the step shrinks by the 128 all-to-alls less what their
 * kernels take from the compute beside them, comm-slowdown of their time:
 * step(on) - step(off) = -(1 - comm-slowdown) x 128 x a2a. */
static void
test_a2a_overlap (void)
{
  Fixture f;
  g_autoptr (GError) error = NULL;
  g_autoptr (SimMemory) mem = NULL, mem_on = NULL;
  g_autoptr (SimIteration) off = NULL, on = NULL;
  double cs, want, a2a_s;

  setup (&f, "tp=1,pp=1,dp=8,ep=8,seq=4096,gb=8");
  a2a_s = a2a_alone_s (f.topo);
  cs = sim_topology_gpu_type (f.topo, 0)->eff.comm_slowdown;
  mem = sim_memory_compute (f.topo, f.model, f.plan);
  off = sim_iteration_run (f.topo, f.model, f.plan, mem, FALSE, &error);
  g_assert_no_error (error);
  teardown (&f);
  setup (&f, "tp=1,pp=1,dp=8,ep=8,seq=4096,gb=8,overlap-moe-expert-parallel-comm");
  mem_on = sim_memory_compute (f.topo, f.model, f.plan);
  on = sim_iteration_run (f.topo, f.model, f.plan, mem_on, FALSE, &error);
  g_assert_no_error (error);
  want = -(1 - cs) * 128 * a2a_s;
  g_printerr ("# step %.9f s -> %.9f s, want a change of %.9f s\n", off->step_s, on->step_s, want);
  g_assert_cmpfloat (on->exposed_ep_s, ==, 0.0);
  g_assert_cmpfloat_with_epsilon (on->step_s - off->step_s, want, 1e-8);
  teardown (&f);
}

/* The same with --moe-imbalance 64: the busiest GPU receives 64 times the
 * mean, so each all-to-all moves 64 x 67,108,864 bytes and outlasts the
 * compute it hides behind.  Under Megatron-Core's combined 1F1B a
 * forward's dispatch hides behind the backward's experts, its combine
 * behind the backward's attention, and the backward's combine and dispatch
 * behind the forward's attention and experts (model_chunk_schedule_plan.py,
 * TransformerLayerSchedulePlan.run).  With a the time of one all-to-all
 * alone, A and M the attention's and the experts' share of a layer pass
 * (sim_cost_layer's moe_attn_*_s, the rest of moe_*_s), the one forward
 * and one backward expose, over 32 layers:
 *   32 x (max(0, a - A_bwd) + max(0, a - M_bwd) + max(0, a - A_fwd) + max(0, a - M_fwd)) */
static void
test_a2a_overlap_exposed (void)
{
  Fixture f;
  g_autoptr (GError) error = NULL;
  g_autoptr (SimMemory) mem = NULL;
  g_autoptr (SimIteration) it = NULL;
  SimLayerCost c;
  double a, want;

  setup (&f, "tp=1,pp=1,dp=8,ep=8,seq=4096,gb=8,moe-imbalance=64,overlap-moe-expert-parallel-comm");
  a = alone_s (f.topo, SIM_OP_ALLTOALL, 64 * 67108864.0);
  sim_cost_layer (f.model, f.plan, sim_topology_gpu_type (f.topo, 0), &c);
  want = 32 * (MAX (0, a - c.moe_attn_bwd_s) + MAX (0, a - (c.moe_bwd_s - c.moe_attn_bwd_s)) +
               MAX (0, a - c.moe_attn_fwd_s) + MAX (0, a - (c.moe_fwd_s - c.moe_attn_fwd_s)));
  mem = sim_memory_compute (f.topo, f.model, f.plan);
  it = sim_iteration_run (f.topo, f.model, f.plan, mem, FALSE, &error);
  g_assert_no_error (error);
  g_printerr ("# one all-to-all %.3f ms; attention %.3f/%.3f ms, experts %.3f/%.3f ms (fwd/bwd); "
              "exposed EP %.6f s, want %.6f s\n", 1e3 * a, 1e3 * c.moe_attn_fwd_s,
              1e3 * c.moe_attn_bwd_s, 1e3 * (c.moe_fwd_s - c.moe_attn_fwd_s),
              1e3 * (c.moe_bwd_s - c.moe_attn_bwd_s), it->exposed_ep_s, want);
  g_assert_cmpfloat (want, >, 0);
  g_assert_cmpfloat_with_epsilon (it->exposed_ep_s, want, 1e-8);
  teardown (&f);
}

/* sim shapes lists one routed expert's GEMM at the busiest GPU's rows:
 * Tn k etp / (E / ep) = 4096 x 2 x 1 / (8 / 8) = 8,192 rows balanced, and
 * 1.5 times that, 12,288, at --moe-imbalance 1.5 */
static double
expert_up_rows (const char *plan)
{
  Fixture f;
  g_autoptr (GArray) shapes = NULL;
  double rows = 0;
  setup (&f, plan);
  shapes = sim_cost_gemm_shapes (f.model, f.plan);
  for (guint i = 0; i < shapes->len; i++)
    if (g_str_equal (g_array_index (shapes, SimGemmShape, i).name, "expert_up"))
      rows = g_array_index (shapes, SimGemmShape, i).m;
  teardown (&f);
  return rows;
}

/* ZeRO-3 with experts (Megatron-FSDP and FSDP2 shard the routed experts
 * over their expert data-parallel group): tp 8, ep 1, etp 1 on one node
 * leaves dp x cp = 1, so the dense weights are not sharded, while the 8
 * TP ranks all hold the 8 whole experts (edp = 8).  Each pass gathers its
 * 32 MoE layers' experts, 8 x 3 x 4096 x 14336 = 1,409,286,144 parameters
 * a layer, 90,194,313,216 bytes in BF16, over the 8 GPUs, and each
 * backward reduce-scatters their gradients (at the recipe's wire width):
 * with m = 2 micro-batches, 2m gathers and m reduce-scatters, one DP span
 * each.  The first gather runs with only the TP collectives beside it:
 * within 5 % of its time alone on the node's NVLink
 * (sim_collective_choose); every other takes at least its time alone and
 * at most, sharing the links with the one other ZeRO collective that can
 * run beside it (a backward's reduce-scatter beside the next pass's
 * prefetched gather), the sum of both alone, 5 % more. */
static void
test_zero3_experts (void)
{
  Fixture f;
  g_autoptr (GError) error = NULL;
  g_autoptr (SimMemory) mem = NULL;
  g_autoptr (SimIteration) it = NULL;
  double params = 32.0 * 8 * 3 * 4096 * 14336, gather_s, rs_s;
  int pb, gb, mb, ob, ab, n = 0;
  SimTime first = G_MAXINT64;
  double first_s = 0;

  setup (&f, "tp=8,pp=1,dp=1,ep=1,etp=1,seq=4096,gb=2,zero=3");
  g_assert_cmpint (f.plan->edp, ==, 8);
  sim_recipe_bytes (f.plan->recipe, &pb, &gb, &mb, &ob, &ab);
  gather_s = alone_s (f.topo, SIM_OP_ALL_GATHER, params * 2);
  rs_s = alone_s (f.topo, SIM_OP_REDUCE_SCATTER, params * (gb + ab > 2 ? 4 : 2));
  mem = sim_memory_compute (f.topo, f.model, f.plan);
  it = sim_iteration_run (f.topo, f.model, f.plan, mem, FALSE, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < it->spans->len; i++) {
    const SimSpan *sp = &g_array_index (it->spans, SimSpan, i);
    double d = sim_time_to_s (sp->end - sp->start);
    if (sp->kind != SIM_SPAN_DP)
      continue;
    g_printerr ("# DP span from %.6f s: %.6f s (gather alone %.6f s, reduce-scatter alone %.6f s)\n",
                sim_time_to_s (sp->start), d, gather_s, rs_s);
    g_assert_cmpfloat (d, >=, MIN (gather_s, rs_s) * (1 - 1e-9));
    g_assert_cmpfloat (d, <=, 1.05 * (gather_s + rs_s));
    if (sp->start < first) {
      first = sp->start;
      first_s = d;
    }
    n++;
  }
  g_assert_cmpint (n, ==, 6);
  g_assert_cmpfloat (first_s, >=, gather_s * (1 - 1e-9));
  g_assert_cmpfloat (first_s, <=, 1.05 * gather_s);
  teardown (&f);
}

static void
test_shapes_imbalance (void)
{
  g_assert_cmpfloat (expert_up_rows ("tp=1,pp=1,dp=8,ep=8,seq=4096,gb=8"), ==, 8192.0);
  g_assert_cmpfloat (expert_up_rows ("tp=1,pp=1,dp=8,ep=8,seq=4096,gb=8,moe-imbalance=1.5"), ==, 12288.0);
}

/* The experts' FP8 casts are one kernel per local expert except under
 * delayed scaling (Transformer Engine's split_quantize: one fused kernel
 * for delayed scaling only), and current scaling quantizes each expert's
 * rows in four launches (Float8CurrentScalingQuantizer::quantize_impl):
 * the amax zeroed, the amax pass, the scale, the cast.  Qwen3-30B-A3B's
 * MoE layer forward casts FC1's and FC2's inputs: under current scaling
 * with 32 local experts (ep 4) that is 2 x 4 x 32 launches, with 16 (ep 8)
 * 2 x 4 x 16; under delayed scaling 2 either way; the routed rows' bytes
 * are the same (every GPU casts the same rows), the single-thread
 * launches' 4 bytes apiece are not.  So the current-minus-delayed
 * difference of the forward grows by 128 kernels' fixed cost and 2 x 2 x
 * 16 x 4 = 256 bytes at the HBM rate from ep 8 to ep 4, all else (the
 * attention's casts, the GEMMs) cancelling.  Micro-batch 8 keeps the
 * forward longer than the host's launches. */
static void
test_expert_casts (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  g_autoptr (SimModel) q = test_load_model ("qwen3-30b-a3b.xml");
  const SimGpuType *g = sim_topology_gpu_type (t, 0);
  double f[2][2];
  for (int e = 0; e < 2; e++)
    for (int r = 0; r < 2; r++) {
      g_autofree char *plan = g_strdup_printf ("tp=1,pp=1,dp=8,ep=%d,mb=8,seq=4096,gb=64,fp8=hybrid,fp8-recipe=%s",
                                               e == 0 ? 4 : 8, r == 0 ? "current" : "delayed");
      g_autoptr (SimPlan) p = test_resolve_plan (t, q, plan);
      SimLayerCost c;
      sim_cost_layer (q, p, g, &c);
      f[e][r] = c.moe_fwd_s;
    }
  g_test_message ("current - delayed: ep 4 %.9f s, ep 8 %.9f s", f[0][0] - f[0][1], f[1][0] - f[1][1]);
  g_assert_cmpfloat_with_epsilon ((f[0][0] - f[0][1]) - (f[1][0] - f[1][1]),
                                  128 * g->eff.kernel_fixed_s + 256 / (g->hbm_bw_bytes_per_s * g->eff.hbm), 1e-12);
}

/* the experts' sum of saved bytes (moe.experts) of one MoE layer */
static guint64
expert_bytes (const Fixture *f)
{
  SimActivationConfig cfg;
  g_autoptr (SimActivations) a = NULL;
  guint64 n = 0;
  sim_activation_config_from_plan (&cfg, f->plan);
  a = sim_activations_moe_layer (f->model, &cfg);
  for (guint i = 0; i < a->tensors->len; i++) {
    const SimSavedTensor *t = &g_array_index (a->tensors, SimSavedTensor, i);
    n += g_str_equal (t->op, "moe.experts") ? t->bytes : 0;
  }
  return n;
}

/* the forward kernels named `name` of the listed MoE layer: how many
 * rows, and whether one is the GPU waiting for the host */
static int
forward_rows (const Fixture *f, const char *name, gboolean *waits)
{
  g_autoptr (GArray) k = sim_cost_layer_kernels (f->model, f->plan, sim_topology_gpu_type (f->topo, 0));
  int n = 0;
  *waits = FALSE;
  for (guint i = 0; i < k->len; i++) {
    const SimKernel *x = &g_array_index (k, SimKernel, i);
    if (g_str_equal (x->pass, "forward") && g_str_equal (x->name, name)) {
      n++;
      *waits |= x->kind == SIM_KERNEL_WAIT;
    }
  }
  return n;
}

/* Token dropping (Megatron-Core's capacity factor).  The dropless
 * all-to-all of test_a2a_bytes is 67,108,864 bytes at the mean load.
 *  - capacity 1.25 at --moe-imbalance 1.5: the busiest GPU's experts take
 *    1.25x the mean and drop the rest: 1.25 x 67,108,864 = 83,886,080;
 *  - padded to capacity 1.25 at balanced routing: every expert computes
 *    and every GPU sends its whole capacity, the same 83,886,080, and each
 *    expert keeps 1.25x the dropless rows of activations (1.25 x the
 *    dropless moe.experts bytes, to the byte's rounding);
 *  - padded to capacity 1, balanced: the dropless bytes, and the
 *    dispatcher's preprocess is one kernel with no wait for the host
 *    (token_dispatcher.py @0014f137: preprocess returns early under
 *    drop_and_pad, _maybe_dtoh_and_synchronize does nothing), where the
 *    dropless one is 12 kernels and a wait. */
static void
test_capacity (void)
{
  Fixture f;
  SimLayerCost c;
  gboolean waits = FALSE;
  guint64 dropless;
  setup (&f, "tp=1,pp=1,dp=8,ep=8,seq=4096,gb=8");
  dropless = expert_bytes (&f);
  g_assert_cmpint (forward_rows (&f, "dispatch_preprocess", &waits), ==, 13);
  g_assert_true (waits);
  teardown (&f);
  setup (&f, "tp=1,pp=1,dp=8,ep=8,seq=4096,gb=8,moe-imbalance=1.5,moe-expert-capacity-factor=1.25");
  sim_cost_layer (f.model, f.plan, sim_topology_gpu_type (f.topo, 0), &c);
  g_assert_cmpfloat (c.a2a_bytes, ==, 83886080.0);
  g_assert_cmpuint (expert_bytes (&f), ==, dropless);
  teardown (&f);
  setup (&f, "tp=1,pp=1,dp=8,ep=8,seq=4096,gb=8,moe-expert-capacity-factor=1.25,"
             "moe-pad-expert-input-to-capacity=true");
  sim_cost_layer (f.model, f.plan, sim_topology_gpu_type (f.topo, 0), &c);
  g_assert_cmpfloat (c.a2a_bytes, ==, 83886080.0);
  g_assert_cmpfloat (fabs ((double) expert_bytes (&f) / (1.25 * (double) dropless) - 1), <, 1e-6);
  teardown (&f);
  setup (&f, "tp=1,pp=1,dp=8,ep=8,seq=4096,gb=8,moe-expert-capacity-factor=1,"
             "moe-pad-expert-input-to-capacity=true");
  sim_cost_layer (f.model, f.plan, sim_topology_gpu_type (f.topo, 0), &c);
  g_assert_cmpfloat (c.a2a_bytes, ==, 67108864.0);
  g_assert_cmpint (forward_rows (&f, "dispatch_preprocess", &waits), ==, 1);
  g_assert_false (waits);
  teardown (&f);
}

/* the forward kernels and seconds of the listed MoE layer's rows named
 * `name` */
static int
forward_kernels (const SimModel *m, const SimPlan *p, const SimGpuType *g, const char *name, double *s)
{
  g_autoptr (GArray) k = sim_cost_layer_kernels (m, p, g);
  int n = 0;
  *s = 0;
  for (guint i = 0; i < k->len; i++) {
    const SimKernel *x = &g_array_index (k, SimKernel, i);
    if (g_str_equal (x->pass, "forward") && g_str_equal (x->name, name))
      n += x->kernels, *s += x->seconds;
  }
  return n;
}

/* Transformer Engine's fused grouped MLP (grouped_mlp.py @d0067d0) on
 * Qwen3-30B-A3B at ep 8: 128 / 8 = 16 local experts, MXFP8 on B200.
 * Unfused, the forward launches one GEMM per expert for FC1 and FC2 (16
 * each), one MXFP8 cast per expert of FC1's and of FC2's input (32) and
 * the activation (1); fused, one grouped GEMM each, one grouped quantize
 * of FC1's input (FC2's is written by FC1's epilogue) and no activation
 * kernel.  The GEMMs' work is the same, so each linear's forward is 15
 * kernels' fixed cost shorter; the fused casts move the bytes of FC1's
 * 16 casts in one kernel: 15 fixed costs shorter than those alone. */
static void
test_fused_grouped_mlp (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-b200.xml", 1);
  g_autoptr (SimModel) q = test_load_model ("qwen3-30b-a3b.xml");
  const SimGpuType *g = sim_topology_gpu_type (t, 0);
  const char *base = "tp=1,pp=1,dp=8,ep=8,mb=8,seq=4096,gb=64,fp8=hybrid,fp8-recipe=mxfp8";
  g_autofree char *fused = g_strconcat (base, ",moe-fused-grouped-mlp=true", NULL);
  g_autoptr (SimPlan) u = test_resolve_plan (t, q, base);
  g_autoptr (SimPlan) f = test_resolve_plan (t, q, fused);
  const char *gemms[] = { "expert_fc1", "expert_fc2" };
  double su, sf;
  for (guint i = 0; i < G_N_ELEMENTS (gemms); i++) {
    g_assert_cmpint (forward_kernels (q, u, g, gemms[i], &su), ==, 16);
    g_assert_cmpint (forward_kernels (q, f, g, gemms[i], &sf), ==, 1);
    g_assert_cmpfloat_with_epsilon (su - sf, 15 * g->eff.kernel_fixed_s, 1e-12);
  }
  g_assert_cmpint (forward_kernels (q, u, g, "expert_fp8_cast", &su), ==, 32);
  g_assert_cmpint (forward_kernels (q, f, g, "expert_fp8_cast", &sf), ==, 1);
  g_assert_cmpint (forward_kernels (q, u, g, "expert_activation", &su), ==, 1);
  g_assert_cmpint (forward_kernels (q, f, g, "expert_activation", &sf), ==, 0);
  g_assert_cmpfloat (sf, ==, 0);
  /* refused where the kernel cannot run: delayed-scaling FP8 */
  {
    g_autoptr (SimPlanRequest) d_req = sim_plan_request_new ();
    g_autoptr (SimPlan) d = NULL;
    g_autoptr (GError) error = NULL;
    g_assert_true (sim_plan_request_parse_string (d_req, "tp=1,pp=1,dp=8,ep=8,fp8=hybrid,fp8-recipe=delayed,"
                                             "moe-fused-grouped-mlp=true", NULL));
    g_assert_null (d = sim_plan_resolve (d_req, t, q, &error));
    g_assert_nonnull (strstr (error->message, "--moe-fused-grouped-mlp"));
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/moe-time/grouped-gemm-published", test_grouped_gemm_published);
  g_test_add_func ("/moe-time/model-flop", test_model_flop);
  g_test_add_func ("/moe-time/a2a-bytes", test_a2a_bytes);
  g_test_add_func ("/moe-time/capacity", test_capacity);
  g_test_add_func ("/moe-time/one-stage", test_one_stage);
  g_test_add_func ("/moe-time/shapes-imbalance", test_shapes_imbalance);
  g_test_add_func ("/moe-time/deepep", test_deepep);
  g_test_add_func ("/moe-time/a2a-overlap", test_a2a_overlap);
  g_test_add_func ("/moe-time/a2a-overlap-exposed", test_a2a_overlap_exposed);
  g_test_add_func ("/moe-time/zero3-experts", test_zero3_experts);
  g_test_add_func ("/moe-time/expert-casts", test_expert_casts);
  g_test_add_func ("/moe-time/fused-grouped-mlp", test_fused_grouped_mlp);
  return g_test_run ();
}
