/* tests for sim-model: exact parameter counts and LoRA adapters */
#include <glib.h>

#include "sim-error.h"
#include "sim-model.h"
#include "test-util.h"

static SimModel *
load (const char *name)
{
  return test_load_model (name);
}

static void
test_params (void)
{
  /* the figures a user can check against the papers and model cards:
   * GPT-3 175B: 96 * (12h^2 + 13h) + V*h + s*h + 2h with h = 12288,
   *   V = 51200, s = 2048 = 174,615,846,912 (Brown et al. 2020: "175B",
   *   Narayanan et al. 2021: 174.6 B);
   * Llama-3-8B: 32 * (2*4096^2 + 2*4096*1024 + 3*4096*14336 + 2*4096)
   *   + 2*128256*4096 + 4096 = 8,030,261,248 (model card: 8.03 B);
   * Llama-3-70B: 80 * (2*8192^2 + 2*8192*1024 + 3*8192*28672 + 2*8192)
   *   + 2*128256*8192 + 8192 = 70,553,706,496 (70.55 B);
   * Llama-2-7B: 32 * (4*4096^2 + 3*4096*11008 + 2*4096) + 2*32000*4096
   *   + 4096 = 6,738,415,616 (6.74 B) */
  struct { const char *file; guint64 params; } cases[] = {
    { "gpt3-175b.xml", G_GUINT64_CONSTANT (174615846912) },
    { "llama3-8b.xml", G_GUINT64_CONSTANT (8030261248) },
    { "llama3-70b.xml", G_GUINT64_CONSTANT (70553706496) },
    { "llama2-7b.xml", G_GUINT64_CONSTANT (6738415616) },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (SimModel) m = load (cases[i].file);
    g_assert_cmpuint (sim_model_param_count (m), ==, cases[i].params);
  }
}

static void
test_megatron_table (void)
{
  /* Narayanan et al. 2021 Table 1 gives each GPT's size to 0.1 B; the paper's
   * own count 12*l*h^2*(1 + 13/(12h) + (V+s)/(12*l*h)) differs from ours only
   * by the final LayerNorm (2h), so rounding must agree */
  struct { const char *file; double billions; } cases[] = {
    { "megatron-gpt-1.7b.xml", 1.7 }, { "megatron-gpt-3.6b.xml", 3.6 },
    { "megatron-gpt-7.5b.xml", 7.5 }, { "megatron-gpt-18.4b.xml", 18.4 },
    { "megatron-gpt-39.1b.xml", 39.1 }, { "megatron-gpt-76.1b.xml", 76.1 },
    { "megatron-gpt-145.6b.xml", 145.6 }, { "megatron-gpt-310.1b.xml", 310.1 },
    { "megatron-gpt-529.6b.xml", 529.6 }, { "megatron-gpt-1008b.xml", 1008.0 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (SimModel) m = load (cases[i].file);
    double b = (double) sim_model_param_count (m) / 1e9;
    g_assert_cmpfloat_with_epsilon (b, cases[i].billions, 0.05 + 1e-9);
  }
}

static void
test_tp_split (void)
{
  /* GPT-3 layer: 12h^2 + 13h; the row-parallel biases (2h) and the two
   * LayerNorms (4h) are replicated over TP, the rest is sharded */
  g_autoptr (SimModel) m = load ("gpt3-175b.xml");
  guint64 h = 12288;
  g_assert_cmpuint (sim_model_layer_params (m), ==, 12 * h * h + 13 * h);
  g_assert_cmpuint (sim_model_layer_params_replicated (m), ==, 6 * h);
  g_assert_cmpuint (sim_model_layer_params_sharded (m), ==, 12 * h * h + 7 * h);
}

static void
test_lora (void)
{
  /* Llama-3-8B, r = 16 on q,k,v,o,gate,up,down, per layer
   * 16*[(4096+4096)*2 + (4096+1024)*2 + (4096+14336)*3] = 1,310,720;
   * x 32 layers = 41,943,040 = 41.9 M (course notes, seeds/002) */
  g_autoptr (SimModel) m = load ("llama3-8b.xml");
  g_autoptr (GError) error = NULL;
  guint targets = 0;
  g_assert_cmpuint (m->layers * sim_model_lora_params_per_layer (m, 16, SIM_LORA_ALL), ==, 41943040);
  g_assert_true (sim_lora_targets_parse ("q,v", &targets, &error));
  /* q and v only: 16*(8192 + 5120) per layer */
  g_assert_cmpuint (sim_model_lora_params_per_layer (m, 16, targets), ==, 16 * (8192 + 5120));
  g_assert_false (sim_lora_targets_parse ("q,x", &targets, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_USAGE);
}

static void
test_lora_fused_qkv (void)
{
  /* Llama-3-70B (hidden 8192, 64 heads of 128, 8 KV heads: q 8192, k and v
   * 1024 each), r = 16.  One adapter on the fused QKV projection:
   * A 8192 x 16, B 16 x (8192 + 2 x 1024) = 16 x (8192 + 10240) = 294,912
   * per layer; three adapters on q, k and v: 16 x [(8192 + 8192) +
   * 2 x (8192 + 1024)] = 16 x 34,816 = 557,056 */
  g_autoptr (SimModel) m = load ("llama3-70b.xml");
  g_autoptr (GError) error = NULL;
  SimLoraAdapter a[SIM_LORA_MAX_ADAPTERS];
  guint targets = 0;
  g_assert_true (sim_lora_targets_parse ("qkv", &targets, &error));
  g_assert_cmpuint (sim_model_lora_params_per_layer (m, 16, targets), ==, 294912);
  g_assert_cmpint (sim_model_lora_adapters (m, targets, a), ==, 1);
  g_assert_cmpuint (a[0].in, ==, 8192);
  g_assert_cmpuint (a[0].out, ==, 10240);
  g_assert_true (a[0].column_parallel);
  g_assert_true (sim_lora_targets_parse ("q,k,v", &targets, &error));
  g_assert_cmpuint (sim_model_lora_params_per_layer (m, 16, targets), ==, 557056);
  /* given with q, k and v the fused one replaces them: qkv,o is two */
  g_assert_true (sim_lora_targets_parse ("q,qkv,o", &targets, &error));
  g_assert_cmpint (sim_model_lora_adapters (m, targets, a), ==, 2);
  g_assert_cmpuint (sim_model_lora_params_per_layer (m, 16, targets), ==, 294912 + 16 * (8192 + 8192));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/params", test_params);
  g_test_add_func ("/model/megatron-table", test_megatron_table);
  g_test_add_func ("/model/tp-split", test_tp_split);
  g_test_add_func ("/model/lora", test_lora);
  g_test_add_func ("/model/lora-fused-qkv", test_lora_fused_qkv);
  return g_test_run ();
}
