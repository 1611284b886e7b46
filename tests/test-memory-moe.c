/* test-memory-moe.c — expert parallelism in the plan and the memory ledger
 * of mixture-of-experts models, against hand
 * calculations from each model's config (models/NAME.xml) */
#include <glib.h>
#include <string.h>

#include "sim-activation.h"
#include "sim-error.h"
#include "sim-memory.h"
#include "sim-model.h"
#include "sim-plan.h"
#include "test-util.h"

/* a resolved plan from a plan string, asserting it resolves */
static SimPlan *
resolved (const SimTopology *t, const SimModel *m, const char *text)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
  SimPlan *p = NULL;
  g_assert_true (sim_plan_request_parse_string (p_req, text, &error));
  g_assert_no_error (error);
  g_assert_nonnull (p = sim_plan_resolve (p_req, t, m, &error));
  g_assert_no_error (error);
  return p;
}

static gboolean
noted (const SimPlan *p, const char *text)
{
  for (guint i = 0; i < p->defaults->len; i++)
    if (strstr (g_ptr_array_index (p->defaults, i), text) != NULL)
      return TRUE;
  return FALSE;
}

static const SimStageMemory *
stage (const SimMemory *mem, int s)
{
  return &g_array_index (mem->stages, SimStageMemory, s);
}

/* one MoE layer split as the ledger splits it adds up to the model's count */
static void
test_split (void)
{
  static const char *files[] = { "mixtral-8x7b.xml", "mixtral-8x22b.xml", "qwen3-30b-a3b.xml",
                                 "qwen3-235b-a22b.xml", "deepseek-v3.xml" };
  for (guint i = 0; i < G_N_ELEMENTS (files); i++) {
    g_autoptr (SimModel) m = test_load_model (files[i]);
    g_assert_cmpuint (sim_model_moe_layer_dense_sharded (m) + sim_model_moe_layer_dense_replicated (m) +
                          m->moe.experts * (sim_model_expert_params_sharded (m) +
                                            sim_model_expert_params_replicated (m)),
                      ==, sim_model_moe_layer_params (m));
    g_assert_cmpuint (sim_model_layer_params_sharded (m) + sim_model_layer_params_replicated (m), ==,
                      sim_model_layer_params (m));
  }
  {
    /* DeepSeek-V3's latent attention under TP: the down projections
     * h*(q_lora + kv_lora + rope) = 7168*(1536 + 512 + 64) = 15,138,816 and
     * the q_a/kv_a norms 1536 + 512 are replicated, so a dense layer's
     * replicated part is 15,138,816 + 2,048 + 2*7168 = 15,155,200 */
    g_autoptr (SimModel) ds = test_load_model ("deepseek-v3.xml");
    g_assert_cmpuint (sim_model_layer_params_replicated (ds), ==, 15155200);
  }
}

/* Mixtral 8x7B on 64 H100s, tp 2, ep 8, pp 1 (dp 32), etp = tp = 2 by
 * default: edp = tp*cp*dp / (etp*ep) = 2*1*32 / (2*8) = 4.
 * Per GPU, from the config (h 4096, 32 heads of 128, 8 KV heads, expert
 * width 14336, 8 experts, vocab 32000, 32 layers, RMSNorm, untied):
 *   attention 2*4096*4096 + 2*4096*1024 = 41,943,040 / tp 2 = 20,971,520
 *   norms 2*4096 + router 4096*8 = 8,192 + 32,768 = 40,960 (replicated)
 *   -> the dense part of a layer 21,012,480
 *   experts 8/ep 8 = 1 expert of 3*4096*14336 = 176,160,768 / etp 2
 *   -> 88,080,384
 *   32 layers: 32 * (21,012,480 + 88,080,384) = 3,490,971,648
 *   embedding and output 2 * 32000*4096 / 2 = 131,072,000, final norm 4,096
 *   -> 3,622,047,744 parameters, 2,818,572,288 of them routed experts'
 * bf16-adam with ZeRO 1: master (4 B) and m, v (8 B) sharded, the dense
 * part (803,475,456) over dp x cp = 32, the experts' over edp = 4:
 *   master 4*803,475,456/32 + 4*2,818,572,288/4 = 100,434,432 + 2,818,572,288
 *        = 2,919,006,720; optimizer twice that, 5,838,013,440 */
static void
test_mixtral (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 8);
  g_autoptr (SimModel) m = test_load_model ("mixtral-8x7b.xml");
  g_autoptr (SimPlan) p = resolved (t, m, "tp=2,ep=8,pp=1,seq=4096");
  g_autoptr (SimMemory) mem = sim_memory_compute (t, m, p);
  const SimStageMemory *st = stage (mem, 0);

  g_assert_cmpint (p->etp, ==, 2);
  g_assert_cmpint (p->edp, ==, 4);
  g_assert_true (noted (p, "--etp 2 (= tp, as Megatron-Core)"));
  g_assert_true (noted (p, "expert data parallel 4"));
  /* etp 2 x ep 8 = 16 GPUs: two DGX H100 nodes of 8 */
  g_assert_true (noted (p, "span up to 2 nodes"));
  g_assert_cmpuint (st->moe_layers, ==, 32);
  g_assert_cmpuint (st->params, ==, 3622047744u);
  g_assert_cmpuint (st->expert_params, ==, 2818572288u);
  g_assert_cmpuint (st->params_bytes, ==, G_GUINT64_CONSTANT (7244095488));
  g_assert_cmpuint (st->grads_bytes, ==, G_GUINT64_CONSTANT (7244095488));
  g_assert_cmpuint (st->master_bytes, ==, 2919006720u);
  g_assert_cmpuint (st->optimizer_bytes, ==, G_GUINT64_CONSTANT (5838013440));
  /* the experts' share: 2+2 B unsharded, 4+8 B over edp 4 = 4 + 3 B each */
  g_assert_cmpuint (st->expert_states_bytes, ==, G_GUINT64_CONSTANT (19730006016));

  /* Activations of one MoE layer, s 4096, b 1, tp 2 with sequence
   * parallelism, flash attention; sbh = 4096*4096 = 16,777,216:
   *   attention: norm input, qkv input, Q, output: 4 x 2*sbh/2 = 67,108,864;
   *     K, V: 2 x 2*4096*1024/2 = 8,388,608
   *   MLP norm input 16,777,216; router input 16,777,216
   *   T = 4096/2 = 2,048 tokens per GPU: router probabilities 4*T*8 = 65,536,
   *     routing indices 8*T*2 = 32,768
   *   R = T*k*etp = 2048*2*2 = 8,192 routed tokens, each saving
   *     2*4096 + 2*2*7168 + 2*7168 + 4 = 51,204 B (fe/etp = 7,168):
   *     419,463,168
   *   total 528,613,376 */
  {
    SimActivationConfig cfg;
    g_autoptr (SimActivations) a = NULL;
    sim_activation_config_from_plan (&cfg, p);
    a = sim_activations_moe_layer (m, &cfg);
    g_assert_cmpuint (a->saved_bytes, ==, 528613376u);
    g_assert_cmpuint (st->activation_bytes_per_layer, ==, 528613376u);
  }
  /* --fp8-expert-act keeps the routed experts' fc1 output (2 x 7,168 wide
   * per routed token) in FP8 with a 4-byte scale per 128 values: 14,336 x
   * (1 + 4/128) = 14,784 B per routed token against 28,672 in BF16, so
   * 8,192 x (28,672 - 14,784) = 113,770,496 B fewer a layer (FP8 also
   * shrinks the linear layers' saved inputs, counted on both sides) */
  {
    g_autoptr (SimTopology) h = test_load_topology ("dgx-h100.xml", 8);
    g_autoptr (SimPlan) q8 = resolved (h, m, "tp=2,ep=8,pp=1,seq=4096,fp8=hybrid");
    g_autoptr (SimPlan) q8a = resolved (h, m, "tp=2,ep=8,pp=1,seq=4096,fp8=hybrid,fp8-expert-act=true");
    SimActivationConfig c8, c8a;
    g_autoptr (SimActivations) a8 = NULL, a8a = NULL;
    sim_activation_config_from_plan (&c8, q8);
    sim_activation_config_from_plan (&c8a, q8a);
    a8 = sim_activations_moe_layer (m, &c8);
    a8a = sim_activations_moe_layer (m, &c8a);
    g_assert_cmpuint (a8->saved_bytes - a8a->saved_bytes, ==, 113770496u);
  }
}

/* the same model with experts whole on each GPU (etp 1): edp = 64/8 = 8,
 * one expert of 176,160,768 per layer per GPU, 32 * 176,160,768 =
 * 5,637,144,576 routed-expert parameters */
static void
test_mixtral_etp1 (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 8);
  g_autoptr (SimModel) m = test_load_model ("mixtral-8x7b.xml");
  g_autoptr (SimPlan) p = resolved (t, m, "tp=2,ep=8,etp=1,pp=1,seq=4096");
  g_autoptr (SimMemory) mem = sim_memory_compute (t, m, p);

  g_assert_cmpint (p->edp, ==, 8);
  g_assert_true (noted (p, "each inside one node's NVLink domain"));
  g_assert_cmpuint (stage (mem, 0)->expert_params, ==, G_GUINT64_CONSTANT (5637144576));
}

/* DeepSeek-V3 as its report trained it: "16-way Pipeline Parallelism (PP),
 * 64-way Expert Parallelism (EP) spanning 8 nodes, and ZeRO-1 Data
 * Parallelism (DP)" on 2,048 H800s (DeepSeek-V3 Technical Report,
 * arXiv:2412.19437, 3.2), on dgx-h800 with 256 nodes.  tp 1, dp 2048/16 =
 * 128, edp = 128/64 = 2.  61 layers on 16 stages: stages 0, 15 and 1 hold
 * 3, the others 4; layers 0-2 (stage 0) are DeepSeek's dense layers.
 *   dense layer: attention 187,107,328 + MLP 3*7168*18432 = 396,361,728 +
 *     norms 2*7168 = 14,336 -> 583,483,392
 *   stage 0: 3 * 583,483,392 + embedding 129280*7168 = 926,679,040
 *     -> 2,677,129,216, no experts
 *   MoE layer: attention 187,107,328 + norms 14,336 + router 7168*256 =
 *     1,835,008 + shared expert 3*7168*2048 = 44,040,192 -> 232,996,864;
 *     experts 256/64 = 4 of 44,040,192 -> 176,160,768
 *   stage 2 (layers 6-9): 4 * (232,996,864 + 176,160,768) = 1,636,630,528,
 *     of them 4 * 176,160,768 = 704,643,072 routed experts' */
static void
test_deepseek (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h800.xml", 256);
  g_autoptr (SimModel) m = test_load_model ("deepseek-v3.xml");
  g_autoptr (SimPlan) p = resolved (t, m, "pp=16,ep=64,zero=1");
  g_autoptr (SimMemory) mem = sim_memory_compute (t, m, p);
  g_autoptr (SimPlan) full = resolved (t, m, "pp=16,ep=64,zero=1,recompute=full");
  g_autoptr (SimMemory) fmem = sim_memory_compute (t, m, full);

  g_assert_cmpint (p->dp, ==, 128);
  g_assert_cmpint (p->edp, ==, 2);
  /* the report's "spanning 8 nodes": 64 GPUs of 8 per node */
  g_assert_true (noted (p, "span up to 8 nodes"));
  g_assert_cmpuint (stage (mem, 0)->layers, ==, 3);
  g_assert_cmpuint (stage (mem, 0)->moe_layers, ==, 0);
  g_assert_cmpuint (stage (mem, 0)->params, ==, 2677129216u);
  g_assert_cmpuint (stage (mem, 0)->expert_params, ==, 0);
  g_assert_cmpuint (stage (mem, 1)->moe_layers, ==, 3);
  g_assert_cmpuint (stage (mem, 2)->moe_layers, ==, 4);
  g_assert_cmpuint (stage (mem, 2)->params, ==, 1636630528u);
  g_assert_cmpuint (stage (mem, 2)->expert_params, ==, 704643072u);
  /* the published layout's states fit every stage with room to spare
   * (about 11 GB at most, below 76 GB usable; the last stage, with the
   * output layer, the multi-token-prediction module and its copy of the
   * embedding, 2.2 B parameters more than stage 2's 1.6 B, 18.9 GB,
   * test-mtp.c); the activations of 1F1B
   * without recomputation do not (DeepSeek recomputed the norms and the
   * MLA up-projections, cached activations in FP8 and ran DualPipe, none
   * of which sim's ledger models), with full recomputation the layout fits */
  for (guint s = 0; s + 1 < mem->stages->len; s++)
    g_assert_cmpuint (stage (mem, (int) s)->states_bytes, <, G_GUINT64_CONSTANT (12000000000));
  g_assert_cmpuint (stage (mem, 15)->states_bytes, <, G_GUINT64_CONSTANT (19000000000));
  g_assert_true (fmem->fits);
}

/* the checks of the parallel folding, each one line */
static void
test_refusals (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 8);
  g_autoptr (SimModel) mx = test_load_model ("mixtral-8x7b.xml");
  g_autoptr (SimModel) llama = test_load_model ("llama3-8b.xml");
  g_autoptr (SimPlan) dense = NULL;

  test_refused_plan (t, mx, "ep=3", "--ep 3 must divide the 8 routed experts of mixtral-8x7b");
  /* tp 2 x dp 8 = 16 GPUs per stage, etp 4 x ep 8 = 32 */
  test_refused_plan (t, mx, "tp=2,pp=4,ep=8,etp=4", "etp 4 x ep 8 = 32 must divide the tp 2 x cp 1 x dp 8 = 16");
  test_refused_plan (t, mx, "tp=2,pp=4,ep=8,sp=false", "--no-sequence-parallel: mixture-of-experts layers");
  test_refused_plan (t, llama, "ep=2", "--ep 2: llama3-8b has no mixture-of-experts layers");
  test_refused_plan (t, llama, "tp=8,etp=8", "--etp 8: llama3-8b has no mixture-of-experts layers");
  /* a dense model resolves to ep = etp = 1 and its report says nothing of experts */
  dense = resolved (t, llama, "tp=8,ep=1");
  g_assert_cmpint (dense->ep, ==, 1);
  g_assert_cmpint (dense->etp, ==, 1);
  g_assert_false (noted (dense, "expert"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/memory-moe/split", test_split);
  g_test_add_func ("/memory-moe/mixtral/tp2-ep8", test_mixtral);
  g_test_add_func ("/memory-moe/mixtral/etp1", test_mixtral_etp1);
  g_test_add_func ("/memory-moe/deepseek-v3/published-layout", test_deepseek);
  g_test_add_func ("/memory-moe/refusals", test_refusals);
  return g_test_run ();
}
