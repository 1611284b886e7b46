/* test-mtp.c — multi-token prediction (DeepSeek-V3's MTP module,
 * Megatron-Core's --mtp-num-layers): parameters, FLOPs, the plan's
 * default and refusals, the last stage's memory and its simulated time.
 * Every expected value is worked out by hand in the comment beside it. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "sim-cost.h"
#include "sim-iteration.h"
#include "sim-memory.h"
#include "sim-model.h"
#include "sim-plan.h"
#include "sim-report.h"
#include "test-util.h"

static const SimStageMemory *
stage (const SimMemory *mem, int s)
{
  return &g_array_index (mem->stages, SimStageMemory, s);
}

/* DeepSeek-V3, h = 7168, V = 129,280 (models/deepseek-v3.xml):
 *   the module's own weights: eh_proj 2h x h = 2 * 7168^2 = 102,760,448
 *     and three RMSNorms (enorm, hnorm, final) 3 * 7168 = 21,504:
 *     102,781,952
 *   its layer is of the last layer's kind, an MoE layer: attention
 *     187,107,328 + norms 14,336 + router 1,835,008 + 257 experts of
 *     3 * 7168 * 2048 = 44,040,192: 11,507,286,016
 *   the module: 11,610,067,968 (README_WEIGHTS.md of deepseek-ai/DeepSeek-V3:
 *     "11.5B unique parameters") */
static void
test_params (void)
{
  g_autoptr (SimModel) m = test_load_model ("deepseek-v3.xml");
  g_autoptr (SimModel) llama = test_load_model ("llama3-8b.xml");
  g_autoptr (GError) error = NULL;
  g_autofree char *hf = g_build_filename (SIM_SOURCE_DIR, "tests", "data", "hf", "deepseek-v3.json", NULL);
  g_autoptr (SimModel) j = sim_model_load_hf (hf, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (m->mtp_layers, ==, 1);
  /* config.json's num_nextn_predict_layers 1 */
  g_assert_cmpuint (j->mtp_layers, ==, 1);
  g_assert_cmpuint (llama->mtp_layers, ==, 0);
  g_assert_cmpuint (sim_model_mtp_extra_sharded (m), ==, 102760448);
  g_assert_cmpuint (sim_model_mtp_extra_params (m), ==, 102781952);
  g_assert_cmpuint (sim_model_mtp_params (m), ==, G_GUINT64_CONSTANT (11610067968));
  /* layer 61 is the MTP layer, an MoE layer as layer 60 */
  g_assert_true (sim_model_layer_is_moe (m, 61));
  /* the main model's count is unchanged: 671,026,404,352 */
  g_assert_cmpuint (sim_model_param_count (m), ==, G_GUINT64_CONSTANT (671026404352));
  /* a dense model's MTP layer is a dense layer: Llama-3-8B's 218,112,000
   * (2*4096^2 + 2*4096*1024 + 3*4096*14336 + 2*4096) plus 2*4096^2 +
   * 3*4096 = 33,566,720: 251,678,720 */
  g_assert_false (sim_model_layer_is_moe (llama, 32));
  g_assert_cmpuint (sim_model_mtp_params (llama), ==, 251678720);
}

/* Model FLOPs of one MTP module per token, forward, DeepSeek-V3 at
 * sequence S = 4096 (sim_cost_model_flop counts the full s x s attention):
 *   projections 2 * 187,105,280 (h*ql + ql*H*(n+r) + h*(kl+r) + kl*H*(n+v)
 *     + H*v*h = 11,010,048 + 37,748,736 + 4,128,768 + 16,777,216 +
 *     117,440,512) = 374,210,560
 *   MoE MLP 2 * (router 1,835,008 + 9 experts * 44,040,192) = 796,393,472
 *   attention 2 * S * H * (192 + 128) = 335,544,320
 *   eh_proj 2 * 2h * h = 205,520,896; output layer 2 * h * V = 1,853,358,080
 *   sum 3,565,027,328, times 3 (forward and backward): 10,695,081,984 */
static void
test_flop (void)
{
  g_autoptr (SimModel) m = test_load_model ("deepseek-v3.xml");
  g_autoptr (SimPlanRequest) one = test_request ("tp=1,cp=1,gb=1,seq=4096,mtp-num-layers=1");
  g_autoptr (SimPlanRequest) none = test_request ("tp=1,cp=1,gb=1,seq=4096,mtp-num-layers=0");
  g_autoptr (SimPlan) p = sim_plan_resolve_model (one, m, NULL), q = sim_plan_resolve_model (none, m, NULL);
  double with, without;
  g_assert_nonnull (p);
  g_assert_nonnull (q);
  with = sim_cost_model_flop (m, p);
  without = sim_cost_model_flop (m, q);
  g_assert_cmpfloat_with_epsilon ((with - without) / 4096, 10695081984.0, 1.0);
}

/* the default is the model's, printed; refusals */
static void
test_plan (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 32);
  g_autoptr (SimModel) m = test_load_model ("deepseek-v3.xml");
  g_autoptr (SimModel) llama = test_load_model ("llama3-8b.xml");
  g_autoptr (SimPlan) p = test_resolve_plan (t, m, "pp=16,ep=16");
  g_autoptr (SimPlan) off = test_resolve_plan (t, m, "pp=16,ep=16,mtp-num-layers=0");
  g_autoptr (SimPlan) dense = test_resolve_plan (t, llama, "tp=8,pp=4,mtp-num-layers=2");
  g_autoptr (SimPlanRequest) bad_req = sim_plan_request_new ();
  g_autoptr (SimPlan) bad = NULL;
  g_autoptr (GError) error = NULL;
  gboolean noted = FALSE;
  g_assert_cmpint (p->mtp_layers, ==, 1);
  for (guint i = 0; i < p->defaults->len; i++)
    noted |= g_str_has_prefix (g_ptr_array_index (p->defaults, i), "--mtp-num-layers 1 ");
  g_assert_true (noted);
  g_assert_cmpint (off->mtp_layers, ==, 0);
  g_assert_cmpint (dense->mtp_layers, ==, 2);
  /* all on the last virtual stage: stage 3 of 4, chunk 0 */
  g_assert_cmpuint (sim_plan_chunk_mtp_layers (dense, 3, 0), ==, 2);
  g_assert_cmpuint (sim_plan_chunk_mtp_layers (dense, 2, 0), ==, 0);
  /* (LoRA on MoE layers is refused before; a dense model shows it) */
  test_refused_plan (t, llama, "tp=8,lora-rank=16,mtp-num-layers=1", "--mtp-num-layers 1: expected 0 with --lora-rank");
  g_assert_false (sim_plan_request_parse_string (bad_req, "mtp-num-layers=65", &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_USAGE);
  g_assert_true (g_str_has_prefix (error->message, "--mtp-num-layers: expected a whole number from 0 to 64"));
}

/* DeepSeek-V3 at pp 16, ep 64 on 2,048 H100s (ZeRO 1): the default split
 * leaves the last stage 3 decoder layers (sim_plan_chunk_layers: chunks 0,
 * 15 and 1 give up one of 4).  The MTP module adds to it one MoE layer,
 * per GPU its attention, norms, router and shared expert 232,996,864 and
 * 256/64 = 4 routed experts of 44,040,192 = 176,160,768
 * (test-memory-moe.c); its own weights 102,781,952 (tp 1); and the input
 * embedding 7168 x 129,280 = 926,679,040, which an untied last stage lacks:
 * 1,438,618,624 parameters more, 176,160,768 of them routed experts' */
static void
test_memory (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 256);
  g_autoptr (SimModel) m = test_load_model ("deepseek-v3.xml");
  g_autoptr (SimPlan) p = test_resolve_plan (t, m, "pp=16,ep=64,zero=1");
  g_autoptr (SimPlan) off = test_resolve_plan (t, m, "pp=16,ep=64,zero=1,mtp-num-layers=0");
  g_autoptr (SimMemory) mem = sim_memory_compute (t, m, p);
  g_autoptr (SimMemory) moff = sim_memory_compute (t, m, off);
  g_assert_cmpuint (stage (moff, 15)->layers, ==, 3);
  g_assert_cmpuint (stage (mem, 15)->layers, ==, 4);
  g_assert_cmpuint (stage (mem, 15)->moe_layers, ==, 4);
  g_assert_cmpuint (stage (mem, 15)->params - stage (moff, 15)->params, ==, 1438618624u);
  g_assert_cmpuint (stage (mem, 15)->expert_params - stage (moff, 15)->expert_params, ==, 176160768u);
  /* the other stages do not change */
  g_assert_cmpuint (stage (mem, 14)->params, ==, stage (moff, 14)->params);
  g_assert_cmpuint (stage (mem, 14)->peak_bytes, ==, stage (moff, 14)->peak_bytes);
  /* every parameter trained: 671,026,404,352 + 11,610,067,968 */
  g_assert_cmpuint (mem->trainable_params, ==, G_GUINT64_CONSTANT (682636472320));
  /* the last stage holds more activations at its peak: the MoE layer's and
   * the module's own per micro-batch in flight */
  g_assert_cmpuint (stage (mem, 15)->activations_peak_bytes, >, stage (moff, 15)->activations_peak_bytes);
}

/* the simulated step: the last stage's forward grows by the MTP layer
 * and the module's own kernels, once per micro-batch, and nothing else's.
 * DeepSeek-V3 at pp 4, ep 8 on 32 H100s (tp 1: no TP collective), 8
 * micro-batches: stage 3's summed forward compute grows by exactly 8 x
 * (moe_fwd_s + mtp_fwd_s) of sim_cost_layer, up to the picosecond
 * rounding of each activity.  The parameter all-gather is not overlapped:
 * beside the first forwards it would slow them (the compute slow-down
 * beside communication), by more on the last stage, whose gather grows
 * with the module's parameters. */
static void
test_iteration (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 4);
  g_autoptr (SimModel) m = test_load_model ("deepseek-v3.xml");
  g_autoptr (SimPlan) p = test_resolve_plan (t, m, "pp=4,ep=8,gb=64,recompute=full,zero=1,overlap-param-gather=false,gpu-variation=0");
  g_autoptr (SimPlan) off = test_resolve_plan (t, m, "pp=4,ep=8,gb=64,recompute=full,zero=1,overlap-param-gather=false,mtp-num-layers=0,gpu-variation=0");
  g_autoptr (SimMemory) mem = sim_memory_compute (t, m, p);
  g_autoptr (SimMemory) moff = sim_memory_compute (t, m, off);
  g_autoptr (GError) error = NULL;
  g_autoptr (SimIteration) it = sim_iteration_run (t, m, p, mem, FALSE, &error);
  g_autoptr (SimIteration) ioff = NULL;
  SimLayerCost c;
  const SimStageTime *a, *b;
  g_assert_no_error (error);
  ioff = sim_iteration_run (t, m, off, moff, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (p->micro_batches, ==, 8);
  sim_cost_layer (m, p, sim_topology_gpu_type (t, 0), &c);
  g_assert_cmpfloat (c.mtp_fwd_s, >, c.head_fwd_s);
  g_assert_cmpint (c.mtp_tp_colls, ==, 0);
  a = &g_array_index (it->stages, SimStageTime, 3);
  b = &g_array_index (ioff->stages, SimStageTime, 3);
  g_assert_cmpfloat_with_epsilon (a->forward_s - b->forward_s, 8 * (c.moe_fwd_s + c.mtp_fwd_s), 1e-9);
  a = &g_array_index (it->stages, SimStageTime, 0);
  b = &g_array_index (ioff->stages, SimStageTime, 0);
  g_assert_cmpfloat_with_epsilon (a->forward_s, b->forward_s, 1e-12);
  /* MFU counts the module's FLOPs: the model FLOPs grow */
  g_assert_cmpfloat (it->model_flop, >, ioff->model_flop);
}

/* Megatron-Bridge's DeepSeek-V3 layout for pp 4 x 4 chunks,
 * Et*4|(t*4|)*14tmL: 16 virtual stages in model order k = chunk x 4 +
 * stage, virtual stage 0 (stage 0, chunk 0) the embedding and 4 layers,
 * 1-14 four layers each, 15 (stage 3, chunk 3) one layer and the MTP
 * layer: 4 + 14 x 4 + 1 = 61.  Stage 3's chunks are virtual stages 3, 7,
 * 11, 15: 4 + 4 + 4 + 1 = 13 layers and the MTP layer; its last chunk's
 * first layer is 60. */
static void
test_layout (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 32);
  g_autoptr (SimModel) m = test_load_model ("deepseek-v3.xml");
  g_autoptr (SimPlan) p = test_resolve_plan (t, m, "pp=4,ep=64,layout=Et*4|(t*4|)*14tmL");
  g_autoptr (SimPlan) plain = test_resolve_plan (t, m, "pp=4,ep=64,layout=Et*4|(t*4|)*14tL");
  g_autoptr (SimPlan) copy = sim_plan_copy (p);
  g_autoptr (SimMemory) mem = sim_memory_compute (t, m, p);
  g_assert_cmpint (p->virtual_stages, ==, 4);
  g_assert_cmpint (p->schedule, ==, SIM_SCHEDULE_INTERLEAVED);
  g_assert_cmpint (p->mtp_layers, ==, 1);
  /* the layout without m trains no MTP layer, whatever the model has */
  g_assert_cmpint (plain->mtp_layers, ==, 0);
  g_assert_cmpuint (sim_plan_chunk_layers (p, m, 0, 0), ==, 4);
  g_assert_cmpuint (sim_plan_chunk_layers (p, m, 3, 3), ==, 1);
  g_assert_cmpuint (sim_plan_chunk_first_layer (p, m, 3, 3), ==, 60);
  g_assert_cmpuint (sim_plan_stage_layers (p, m, 3), ==, 13);
  g_assert_cmpuint (sim_plan_chunk_mtp_layers (p, 3, 3), ==, 1);
  g_assert_cmpuint (sim_plan_chunk_mtp_layers (p, 3, 2), ==, 0);
  g_assert_cmpuint (g_array_index (mem->stages, SimStageMemory, 3).layers, ==, 14);
  /* a copy shares the layout and outlives nothing it needs */
  g_assert_true (copy->layout == p->layout);
  g_clear_pointer (&p, sim_plan_free);
  g_assert_cmpuint (sim_plan_chunk_layers (copy, m, 3, 3), ==, 1);
  /* refusals: 4 + 14 x 4 + 0 = 60 of 61 layers; 12 stages (5 + 10 x 5 +
   * 6) on pp 8; a different MTP count; another split beside it */
  test_refused_plan (t, m, "pp=4,ep=64,layout=Et*4|(t*4|)*14mL",
                     "--pipeline-model-parallel-layout: expected the 61 layers of deepseek-v3, got 60");
  test_refused_plan (t, m, "pp=8,ep=32,layout=Et*5|(t*5|)*10t*6mL",
                     "--pipeline-model-parallel-layout: expected a multiple of pp 8 virtual stages, got 12");
  test_refused_plan (t, m, "pp=4,ep=64,layout=Et*4|(t*4|)*14tmL,mtp-num-layers=0",
                     "--mtp-num-layers 0: expected as many m in --pipeline-model-parallel-layout, got 1");
  test_refused_plan (t, m, "pp=4,ep=64,layout=Et*4|(t*4|)*14tmL,v=2",
                     "--pipeline-model-parallel-layout: expected it alone to split the layers");
  test_refused_plan (t, m, "pp=16,ep=16,layout=Et*4|(t*4|)*14tmL,first-stage-layers=4",
                     "--pipeline-model-parallel-layout: expected it alone to split the layers");
}

/* a remedy that fits only without the fragmentation allowance says so:
 * DeepSeek-V3 at pp 4, ep 64 on 256 H100s, with full recomputation,
 * peaks at 76.41 GB on stage 3 (its 16 layers, the MTP layer and two
 * output layers), above the 75.62 GB usable (85.52 GB the driver exposes
 * less 1.5 GB of context, less the 10 % allowance of the rest) and below
 * the 84.02 GB the context leaves */
static void
test_tight_remedy (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 32);
  g_autoptr (SimModel) m = test_load_model ("deepseek-v3.xml");
  g_autoptr (SimPlan) p = test_resolve_plan (t, m, "pp=4,ep=64");
  g_autoptr (SimMemory) mem = sim_memory_compute (t, m, p);
  g_autoptr (GPtrArray) rem = sim_memory_remedies (t, m, p, mem);
  gboolean seen = FALSE;
  g_assert_false (mem->fits);
  for (guint i = 0; i < rem->len; i++) {
    const SimRemedy *r = g_ptr_array_index (rem, i);
    if (!r->together && g_str_equal (r->flags, "--recompute full")) {
      g_autofree char *text = sim_report_remedy_text (r);
      g_assert_true (r->fits && r->tight);
      g_assert_cmpuint (r->peak_bytes, >, mem->usable_bytes);
      g_assert_nonnull (strstr (text, "fits only without the fragmentation allowance"));
      seen = TRUE;
    }
  }
  g_assert_true (seen);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/mtp/params", test_params);
  g_test_add_func ("/mtp/flop", test_flop);
  g_test_add_func ("/mtp/plan", test_plan);
  g_test_add_func ("/mtp/memory", test_memory);
  g_test_add_func ("/mtp/iteration", test_iteration);
  g_test_add_func ("/mtp/layout", test_layout);
  g_test_add_func ("/mtp/tight-remedy", test_tight_remedy);
  return g_test_run ();
}
