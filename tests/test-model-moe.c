/* tests for sim-model's mixture-of-experts models:
 * total and active parameters against the published figures, the layer
 * pattern, latent attention, the separate head size, the Hugging Face
 * import of the five shipped models, and the refusal until the simulation
 * models experts */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "sim-cost.h"
#include "sim-error.h"
#include "sim-model.h"
#include "sim-plan.h"
#include "sim-run.h"
#include "sim-topology.h"
#include "test-util.h"

/* the five shipped MoE models, hand-counted with the formulas of
 * sim-model.h (h hidden, V vocab, L layers; every model here is SwiGLU,
 * RMSNorm, untied, bias-free: an expert is 3*h*fe, a dense MLP 3*h*f, two
 * norms of h per layer, embedding + output 2*V*h, final norm h).
 *
 * Mixtral 8x7B: attn = 2*4096*4096 + 2*4096*1024 = 41,943,040;
 *   expert = 3*4096*14336 = 176,160,768; router 4096*8 = 32,768;
 *   layer = 41,943,040 + 8*176,160,768 + 32,768 + 8,192 = 1,451,270,144;
 *   total = 32*1,451,270,144 + 2*32000*4096 + 4096 = 46,702,792,704;
 *   active layer = 41,943,040 + 2*176,160,768 + 32,768 + 8,192 = 394,305,536;
 *   active = 32*394,305,536 + 262,148,096 = 12,879,925,248.
 *   Published: "46.7B total parameters but only uses 12.9B parameters per
 *   token" (Mistral AI, "Mixtral of experts", 2023-12-11).
 * Mixtral 8x22B: attn = 2*6144^2 + 2*6144*1024 = 88,080,384;
 *   expert = 3*6144*16384 = 301,989,888; router 49,152; norms 12,288;
 *   total = 56*(88,080,384 + 8*301,989,888 + 49,152 + 12,288)
 *         + 2*32000*6144 + 6144 = 140,620,634,112;
 *   active = 56*(88,080,384 + 2*301,989,888 + 61,440) + 393,222,144
 *          = 39,152,031,744.  Published: "39B active parameters out of
 *   141B" (Mistral AI, 2024-04-17).
 * Qwen3-30B-A3B (head_dim 128: q and o are 2048 x 4096):
 *   attn = 2*2048*4096 + 2*2048*512 = 18,874,368; expert = 3*2048*768
 *   = 4,718,592; router 2048*128 = 262,144; norms 4,096;
 *   total = 48*(18,874,368 + 128*4,718,592 + 262,144 + 4,096)
 *         + 2*151936*2048 + 2048 = 30,532,110,336;
 *   active = 48*(18,874,368 + 8*4,718,592 + 266,240) + 622,331,904
 *          = 3,353,020,416.  Published: "30.5B in total and 3.3B
 *   activated" (Qwen/Qwen3-30B-A3B model card).
 * Qwen3-235B-A22B: attn = 2*4096*8192 + 2*4096*512 = 71,303,168;
 *   expert = 3*4096*1536 = 18,874,368; router 524,288; norms 8,192;
 *   total = 94*(71,303,168 + 128*18,874,368 + 532,480)
 *         + 2*151936*4096 + 4096 = 235,093,610,496;
 *   active = 94*(71,303,168 + 8*18,874,368 + 532,480) + 1,244,663,808
 *          = 22,190,739,456.  Published: "235B in total and 22B activated".
 * DeepSeek-V3 (latent attention, 3 dense + 58 MoE layers, 1 shared expert):
 *   attn = 7168*1536 + 1536 + 1536*128*192 + 7168*576 + 512 + 512*128*256
 *        + 128*128*7168 = 187,107,328;
 *   dense layer = 187,107,328 + 14,336 + 3*7168*18432 = 583,483,392;
 *   expert = 3*7168*2048 = 44,040,192; router 7168*256 = 1,835,008;
 *   MoE layer = 187,107,328 + 14,336 + 1,835,008 + 257*44,040,192
 *             = 11,507,286,016;
 *   total = 3*583,483,392 + 58*11,507,286,016 + 2*129280*7168 + 7168
 *         = 671,026,404,352;
 *   active MoE layer = 187,107,328 + 14,336 + 1,835,008 + 9*44,040,192
 *                    = 585,318,400;
 *   active = 3*583,483,392 + 58*585,318,400 + 1,853,365,248
 *          = 37,552,282,624, of which 926,679,040 is the input embedding.
 *   Published: "671B total parameters with 37B activated for each token"
 *   (DeepSeek-V3 Technical Report); README_WEIGHTS.md of
 *   deepseek-ai/DeepSeek-V3: "Activation parameters: 36.6B (including 0.9B
 *   for the output Head)", which leaves the input embedding out:
 *   37,552,282,624 - 926,679,040 = 36,625,603,584.
 *
 * Tolerance: a published figure keeps only the digits it gives, rounded
 * (Mistral: 12.88B -> "12.9B") or cut (Qwen: 3.353B -> "3.3B"), so the exact
 * count must lie within one unit of its last digit (46.7B: +-0.1B; 141B:
 * +-1B).  Every count here is also within half a unit except Qwen3-30B-A3B's
 * active 3.353B. */
typedef struct {
  const char *name;
  guint64 total, active;
  double published_total, total_unit;   /* 46.7e9 given to 0.1e9 */
  double published_active, active_unit;
  gboolean active_without_embedding;    /* DeepSeek's convention */
} Published;

static const Published published[] = {
  { "mixtral-8x7b", G_GUINT64_CONSTANT (46702792704), G_GUINT64_CONSTANT (12879925248), 46.7e9, 0.1e9,
    12.9e9, 0.1e9, FALSE },
  { "mixtral-8x22b", G_GUINT64_CONSTANT (140620634112), G_GUINT64_CONSTANT (39152031744), 141e9, 1e9,
    39e9, 1e9, FALSE },
  { "qwen3-30b-a3b", G_GUINT64_CONSTANT (30532110336), G_GUINT64_CONSTANT (3353020416), 30.5e9, 0.1e9,
    3.3e9, 0.1e9, FALSE },
  { "qwen3-235b-a22b", G_GUINT64_CONSTANT (235093610496), G_GUINT64_CONSTANT (22190739456), 235e9, 1e9,
    22e9, 1e9, FALSE },
  { "deepseek-v3", G_GUINT64_CONSTANT (671026404352), G_GUINT64_CONSTANT (37552282624), 671e9, 1e9,
    36.6e9, 0.1e9, TRUE },
};

static SimModel *
load_xml (const char *name)
{
  g_autofree char *file = g_strdup_printf ("%s.xml", name);
  return test_load_model (file);
}

static SimModel *
load_hf (const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *file = g_strdup_printf ("%s.json", name);
  g_autofree char *path = g_build_filename (SIM_SOURCE_DIR, "tests", "data", "hf", file, NULL);
  SimModel *m = sim_model_load (path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (m);
  return m;
}

static void
test_published (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (published); i++) {
    const Published *p = &published[i];
    g_autoptr (SimModel) m = load_xml (p->name);
    guint64 active = sim_model_param_count_active (m);
    double shown = p->active_without_embedding ? (double) (active - sim_model_embedding_params (m))
                                               : (double) active;
    g_test_message ("%s: %" G_GUINT64_FORMAT " total, %" G_GUINT64_FORMAT " active", p->name,
                    sim_model_param_count (m), active);
    g_assert_cmpuint (sim_model_param_count (m), ==, p->total);
    g_assert_cmpuint (active, ==, p->active);
    g_assert_cmpfloat_with_epsilon ((double) p->total, p->published_total, p->total_unit);
    g_assert_cmpfloat_with_epsilon (shown, p->published_active, p->active_unit);
  }
}

static void
test_deepseek_report_active (void)
{
  /* the report's "37B activated" is README_WEIGHTS.md's 36.6B rounded to
   * whole billions: 36,625,603,584 is within 0.5B of 37B */
  g_autoptr (SimModel) m = load_xml ("deepseek-v3");
  double active = (double) (sim_model_param_count_active (m) - sim_model_embedding_params (m));
  g_assert_cmpfloat_with_epsilon (active, 37e9, 0.5e9);
}

static void
test_layers (void)
{
  /* DeepSeek-V3: first_k_dense_replace 3, so layers 0-2 dense, 3-60 MoE */
  g_autoptr (SimModel) ds = load_xml ("deepseek-v3");
  g_autoptr (SimModel) mx = load_xml ("mixtral-8x7b");
  g_autoptr (SimModel) llama = load_xml ("llama3-8b");
  g_assert_cmpuint (sim_model_moe_layers (ds), ==, 58);
  g_assert_false (sim_model_layer_is_moe (ds, 2));
  g_assert_true (sim_model_layer_is_moe (ds, 3));
  g_assert_true (sim_model_layer_is_moe (ds, 60));
  /* layer 61 is the multi-token-prediction layer, of layer 60's kind */
  g_assert_true (sim_model_layer_is_moe (ds, 61));
  g_assert_cmpuint (sim_model_moe_layers (mx), ==, 32);
  g_assert_true (sim_model_layer_is_moe (mx, 0));
  /* a dense model: no MoE layer, active = total, the dense layer unchanged
   * (Llama-3-8B: 2*4096^2 + 2*4096*1024 + 3*4096*14336 + 2*4096) */
  g_assert_false (sim_model_is_moe (llama));
  g_assert_cmpuint (sim_model_moe_layers (llama), ==, 0);
  g_assert_cmpuint (sim_model_moe_layer_params (llama), ==, 0);
  g_assert_cmpuint (sim_model_param_count_active (llama), ==, sim_model_param_count (llama));
  g_assert_cmpuint (sim_model_layer_params (llama), ==, 218112000);
  g_assert_cmpuint (sim_model_attention_params (llama), ==, 41943040);
}

/* a folder of this run's own (two builds may run the tests at once) */
static char *scratch_dir;

/* text written to a scratch file named name; the caller removes it */
static char *
scratch (const char *name, const char *text)
{
  g_autoptr (GError) error = NULL;
  char *path = g_build_filename (scratch_dir, name, NULL);
  g_file_set_contents (path, text, -1, &error);
  g_assert_no_error (error);
  return path;
}

#define TINY_XML(MOE)                                                                           \
  "<?xml version=\"1.0\"?>\n<model name=\"tiny\" description=\"t\">\n"                          \
  "  <transformer layers=\"8\" hidden=\"64\" heads=\"4\" kv-heads=\"4\" ffn-hidden=\"128\"\n"   \
  "    vocab=\"100\" seq-len=\"32\" mlp=\"swiglu\" norm=\"rmsnorm\" position=\"rope\"\n"        \
  "    tied-embeddings=\"true\" bias=\"false\" dropout=\"false\"/>\n  " MOE "\n</model>\n"

static void
test_pattern (void)
{
  /* first-dense 1, every 2 over 8 layers: MoE layers 1, 3, 5, 7;
   * dense layer = 2*64*64 + 2*64*64 + 3*64*128 + 2*64 = 41,088;
   * expert = 3*64*16 = 3,072; MoE layer = 16,384 + 128 + 64*4 + (4 + 1)*3,072
   * = 32,128, active (top-2 + 1 shared) 25,984;
   * total = 4*41,088 + 4*32,128 + 100*64 + 64 = 299,328;
   * active = 4*41,088 + 4*25,984 + 6,464 = 274,752 */
  g_autoptr (GError) error = NULL;
  g_autofree char *path = scratch ("pattern.xml",
    TINY_XML ("<moe experts=\"4\" top-k=\"2\" shared-experts=\"1\" ffn-hidden=\"16\" first-dense=\"1\" every=\"2\" capacity-factor=\"1.25\"/>"));
  g_autoptr (SimModel) m = sim_model_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sim_model_moe_layers (m), ==, 4);
  g_assert_false (sim_model_layer_is_moe (m, 0));
  g_assert_true (sim_model_layer_is_moe (m, 1));
  g_assert_false (sim_model_layer_is_moe (m, 2));
  g_assert_true (sim_model_layer_is_moe (m, 7));
  g_assert_cmpuint (sim_model_layer_params (m), ==, 41088);
  g_assert_cmpuint (sim_model_moe_layer_params (m), ==, 32128);
  g_assert_cmpuint (sim_model_moe_layer_params_active (m), ==, 25984);
  g_assert_cmpuint (sim_model_param_count (m), ==, 299328);
  g_assert_cmpuint (sim_model_param_count_active (m), ==, 274752);
  g_assert_cmpfloat_with_epsilon (m->moe.capacity_factor, 1.25, 1e-12);
  g_unlink (path);
}

static void
test_xml_errors (void)
{
  g_autoptr (GError) error = NULL;
  char *path = scratch ("topk.xml", TINY_XML ("<moe experts=\"4\" top-k=\"5\" ffn-hidden=\"16\"/>"));
  g_autoptr (SimModel) m = sim_model_load (path, &error);
  g_assert_null (m);
  g_assert_error (error, SIM_ERROR, SIM_ERROR_MODEL);
  g_assert_nonnull (strstr (error->message, "expected top-k (5) to be at most experts (4)"));
  g_unlink (path);
  g_clear_error (&error);
  g_free (path);
  /* 100,000 layers of 65,536 experts of 3 x 2^20 x 2^24 weights: about
   * 3.6e27 parameters, past what a 64-bit count holds */
  path = scratch ("huge.xml",
                  "<?xml version=\"1.0\"?>\n<model name=\"huge\" description=\"h\">\n"
                  "  <transformer layers=\"100000\" hidden=\"1048576\" heads=\"4\" kv-heads=\"4\"\n"
                  "    ffn-hidden=\"128\" vocab=\"100\" seq-len=\"32\" mlp=\"swiglu\" norm=\"rmsnorm\"\n"
                  "    position=\"rope\" tied-embeddings=\"true\" bias=\"false\" dropout=\"false\"/>\n"
                  "  <moe experts=\"65536\" top-k=\"2\" ffn-hidden=\"16777216\"/>\n</model>\n");
  g_assert_null (sim_model_load (path, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_MODEL);
  g_assert_nonnull (strstr (error->message, "huge.xml:3: expected a model of fewer than 2^63 parameters"));
  g_unlink (path);
  g_free (path);
}

static void
test_latent_attention (void)
{
  /* DeepSeek-V3's attention, hand-counted in the header comment above */
  g_autoptr (SimModel) m = load_xml ("deepseek-v3");
  g_assert_cmpuint (sim_model_attention_params (m), ==, 187107328);
  g_assert_cmpuint (sim_model_layer_params (m), ==, 583483392);
  g_assert_cmpuint (sim_model_moe_layer_params (m), ==, G_GUINT64_CONSTANT (11507286016));
  g_assert_cmpuint (sim_model_moe_layer_params_active (m), ==, 585318400);
  g_assert_cmpuint (sim_model_expert_params (m), ==, 44040192);
  g_assert_cmpuint (sim_model_router_params (m), ==, 1835008);
}

static void
test_head_dim (void)
{
  /* Qwen3-30B-A3B: 32 heads of 128 at hidden 2048 (q 4096 wide) */
  g_autoptr (SimModel) m = load_xml ("qwen3-30b-a3b");
  g_assert_cmpuint (sim_model_head_dim (m), ==, 128);
  g_assert_cmpuint (sim_model_kv_dim (m), ==, 512);
  g_assert_cmpuint (sim_model_attention_params (m), ==, 18874368);
}

static void
test_hf_import (void)
{
  /* each shipped MoE model's config.json gives the model of its XML */
  for (guint i = 0; i < G_N_ELEMENTS (published); i++) {
    g_autoptr (SimModel) x = load_xml (published[i].name);
    g_autoptr (SimModel) j = load_hf (published[i].name);
    g_assert_cmpuint (sim_model_param_count (j), ==, published[i].total);
    g_assert_cmpuint (sim_model_param_count_active (j), ==, published[i].active);
    g_assert_cmpuint (sim_model_moe_layers (j), ==, sim_model_moe_layers (x));
    g_assert_cmpuint (j->moe.experts, ==, x->moe.experts);
    g_assert_cmpuint (j->moe.top_k, ==, x->moe.top_k);
    g_assert_cmpuint (j->moe.shared_experts, ==, x->moe.shared_experts);
    g_assert_cmpuint (j->moe.ffn_hidden, ==, x->moe.ffn_hidden);
    g_assert_cmpuint (sim_model_head_dim (j), ==, sim_model_head_dim (x));
    g_assert_cmpuint (j->mla.kv_lora_rank, ==, x->mla.kv_lora_rank);
  }
  {
    /* DeepSeek-V3's routing details, read as informational */
    g_autoptr (SimModel) ds = load_hf ("deepseek-v3");
    g_assert_cmpuint (ds->moe.groups, ==, 8);
    g_assert_cmpuint (ds->moe.topk_groups, ==, 4);
    g_assert_cmpfloat_with_epsilon (ds->moe.routed_scaling, 2.5, 1e-12);
  }
}

/* the shipped config.json of name with from replaced by to (and from2 by
 * to2 unless NULL), written to a scratch file; the caller removes it */
static char *
hf_changed (const char *name, const char *from, const char *to, const char *from2, const char *to2)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *file = g_strdup_printf ("%s.json", name);
  g_autofree char *src = g_build_filename (SIM_SOURCE_DIR, "tests", "data", "hf", file, NULL);
  g_autofree char *orig = NULL;
  g_autoptr (GString) text = NULL;
  g_file_get_contents (src, &orig, NULL, &error);
  g_assert_no_error (error);
  text = g_string_new (orig);
  g_assert_cmpuint (g_string_replace (text, from, to, 1), ==, 1);
  if (from2 != NULL)
    g_assert_cmpuint (g_string_replace (text, from2, to2, 1), ==, 1);
  return scratch (file, text->str);
}

/* that changed config is refused with SIM_ERROR_MODEL and expect */
static void
hf_refused (const char *name, const char *from, const char *to, const char *from2, const char *to2,
            const char *expect)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = hf_changed (name, from, to, from2, to2);
  g_autoptr (SimModel) m = sim_model_load (path, &error);
  g_assert_null (m);
  g_assert_error (error, SIM_ERROR, SIM_ERROR_MODEL);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, expect));
  g_unlink (path);
}

static void
test_hf_patterns (void)
{
  /* decoder_sparse_step 2: transformers makes layer i MoE when (i + 1) % 2
   * == 0, so layers 1, 3, ..., 47: first-dense 1, every 2, 24 MoE layers */
  g_autoptr (GError) error = NULL;
  g_autofree char *path = hf_changed ("qwen3-30b-a3b", "\"decoder_sparse_step\": 1",
                                      "\"decoder_sparse_step\": 2", NULL, NULL);
  g_autoptr (SimModel) m = sim_model_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sim_model_moe_layers (m), ==, 24);
  g_assert_false (sim_model_layer_is_moe (m, 0));
  g_assert_true (sim_model_layer_is_moe (m, 1));
  g_assert_true (sim_model_layer_is_moe (m, 47));
  g_unlink (path);

  /* patterns <moe> cannot write are refused with the field's line */
  hf_refused ("qwen3-30b-a3b", "\"mlp_only_layers\": []", "\"mlp_only_layers\": [5]", NULL, NULL,
              "qwen3-30b-a3b.json:17: expected \"mlp_only_layers\" to list the first layers");
  hf_refused ("deepseek-v3", "\"moe_layer_freq\": 1", "\"moe_layer_freq\": 2", NULL, NULL,
              "deepseek-v3.json:25: expected first_k_dense_replace (3) to be a multiple of "
              "moe_layer_freq (2)");
  /* the MoE fields stay refused in a dense family (Mistral with experts) */
  hf_refused ("mixtral-8x7b", "\"model_type\": \"mixtral\"", "\"model_type\": \"mistral\"",
              "\"MixtralForCausalLM\"", "\"MistralForCausalLM\"",
              "mixtral-8x7b.json:15: expected a dense transformer, got field \"num_experts_per_tok\"");
}

static void
test_simulated (void)
{
  /* sim simulates a MoE layout's step, under ZeRO-2 too (the routed
   * experts' gradients reduce-scattered over their expert data-parallel
   * group every backward) */
  g_autoptr (GError) error = NULL;
  g_autoptr (SimModel) mx = load_xml ("mixtral-8x7b");
  g_autoptr (SimPlanRequest) plan_req = sim_plan_request_new ();
  g_autoptr (SimPlan) plan = NULL;
  g_autoptr (SimTopology) topo = NULL;
  g_autoptr (SimRun) run = NULL;
  g_autofree char *topo_path = g_build_filename (SIM_SOURCE_DIR, "topologies", "dgx8x4.xml", NULL);
  topo = sim_topology_load (topo_path, 0, &error);
  g_assert_no_error (error);
  g_assert_true (sim_plan_request_set (plan_req, "zero", "2", NULL, &error));
  run = sim_run_evaluate (topo, mx, plan_req, NULL, SIM_RUN_TIME, &error);
  g_assert_no_error (error);
  g_assert_nonnull (run);
  g_assert_nonnull (run->time);
  g_clear_pointer (&run, sim_run_free);
  g_clear_pointer (&plan_req, sim_plan_request_free);
  plan_req = sim_plan_request_new ();
  run = sim_run_evaluate (topo, mx, plan_req, NULL, SIM_RUN_TIME, &error);
  g_assert_no_error (error);
  g_assert_nonnull (run);
  g_assert_nonnull (run->time);
}

/* sim shapes' list for a MoE model (sim_cost_gemm_shapes), by hand:
 * Mixtral at tp 2, ep 4, etp 2, sequence 4096: T = 4096 tokens, Tn =
 * 2048 under sequence parallelism; the router 2048 x 8 x 4096; each of
 * the E/ep = 2 local experts gets Tn*k*etp/(E/ep) = 2048*2*2/2 = 4096
 * rows, up 2*14336/2 = 14336 wide (SwiGLU), down from 7168; no dense MLP
 * (every layer is MoE).  DeepSeek-V3 at tp 4, ep 8, etp 1: latent
 * attention's down projections on Tn = 1024 (q 1536, kv 512 + 64 rope),
 * q_up to 128*(128 + 64)/4 = 6144, kv_up to 128*(128 + 128)/4 = 8192,
 * the output from 128*128/4 = 4096; 1024*8/(256/8) = 256 rows per
 * expert; one shared expert 2048/4 = 512 wide per rank */
static void
test_shapes (void)
{
  /* per model: the plan, the lines expected among sim shapes' (name,m,n,k),
   * and the names that must not be there */
  struct {
    const char *model;
    int tp, ep, etp;
    const char *lines, *absent;
  } cases[] = {
    { "mixtral-8x7b", 2, 4, 2,
      "router,2048,8,4096 expert_up,4096,14336,4096 expert_down_wgrad,7168,4096,4096 output,4096,16000,4096",
      "mlp_up shared_up q_down" },
    { "deepseek-v3", 4, 8, 1,
      "q_down,1024,1536,7168 q_up,4096,6144,1536 kv_down,1024,576,7168 kv_up,4096,8192,512 "
      "attn_out,4096,7168,4096 expert_up_dgrad,256,7168,4096 shared_down,4096,7168,512",
      "qkv q_proj" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (SimModel) m = load_xml (cases[i].model);
    g_autofree char *text_plan = g_strdup_printf ("tp=%d,ep=%d,etp=%d,cp=1,seq=4096,mb=1", cases[i].tp,
                                                  cases[i].ep, cases[i].etp);
    g_autoptr (SimPlanRequest) p_req = test_request (text_plan);
    g_autoptr (SimPlan) p = sim_plan_resolve_model (p_req, m, NULL);
    g_autoptr (GArray) shapes = NULL;
    g_autoptr (GString) text = g_string_new (" ");
    g_auto (GStrv) lines = g_strsplit (cases[i].lines, " ", -1);
    g_auto (GStrv) absent = g_strsplit (cases[i].absent, " ", -1);
    g_assert_nonnull (p);
    shapes = sim_cost_gemm_shapes (m, p);
    for (guint j = 0; j < shapes->len; j++) {
      const SimGemmShape *s = &g_array_index (shapes, SimGemmShape, j);
      g_string_append_printf (text, "%s,%.0f,%.0f,%.0f ", s->name, s->m, s->n, s->k);
    }
    for (guint j = 0; lines[j] != NULL; j++) {
      g_autofree char *want = g_strdup_printf (" %s ", lines[j]);
      g_assert_nonnull (strstr (text->str, want));
    }
    for (guint j = 0; absent[j] != NULL; j++) {
      g_autofree char *name = g_strdup_printf (" %s,", absent[j]);
      g_assert_null (strstr (text->str, name));
    }
  }
}

int
main (int argc, char **argv)
{
  int status = 0;
  g_autoptr (GError) error = NULL;
  g_test_init (&argc, &argv, NULL);
  scratch_dir = g_dir_make_tmp ("sim-test-moe-XXXXXX", &error);
  g_assert_no_error (error);
  g_test_add_func ("/model-moe/published", test_published);
  g_test_add_func ("/model-moe/deepseek-report-active", test_deepseek_report_active);
  g_test_add_func ("/model-moe/layers", test_layers);
  g_test_add_func ("/model-moe/pattern", test_pattern);
  g_test_add_func ("/model-moe/xml-errors", test_xml_errors);
  g_test_add_func ("/model-moe/latent-attention", test_latent_attention);
  g_test_add_func ("/model-moe/head-dim", test_head_dim);
  g_test_add_func ("/model-moe/hf-import", test_hf_import);
  g_test_add_func ("/model-moe/hf-patterns", test_hf_patterns);
  g_test_add_func ("/model-moe/simulated", test_simulated);
  g_test_add_func ("/model-moe/shapes", test_shapes);
  status = g_test_run ();
  g_rmdir (scratch_dir);
  g_free (scratch_dir);
  return status;
}
