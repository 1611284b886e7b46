/* tests for sim-memory: the course notes' worked numbers and the verdicts */
#include <glib.h>

#include <math.h>
#include <string.h>

#include "sim-activation.h"
#include "sim-cost.h"
#include "sim-memory.h"
#include "test-util.h"

typedef struct {
  SimTopology *topo;
  SimModel *model;
  SimPlan *plan;
  SimMemory *mem;
} Run;

static void
run_clear (Run *r)
{
  sim_memory_free (r->mem);
  sim_plan_free (r->plan);
  sim_model_free (r->model);
  sim_topology_free (r->topo);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Run, run_clear)

static void
run (Run *r, const char *topo, int nodes, const char *model, const char *plan)
{
  g_autoptr (GError) error = NULL;
  r->topo = test_load_topology (topo, nodes);
  r->model = test_load_model (model);
  r->plan = test_resolve_plan (r->topo, r->model, plan);
  r->mem = sim_memory_compute (r->topo, r->model, r->plan);
}

static const SimStageMemory *
stage (const Run *r, int s)
{
  return &g_array_index (r->mem->stages, SimStageMemory, s);
}

static void
test_recipes (void)
{
  /* bytes per parameter: 2+2+4+4+4 = 16; +4 fp32 accumulation = 20;
   * fp32 4+4+4+4 = 16; 8-bit m, v: 2+2+4+1+1 = 10; SGD: 2+2+4 = 8.
   * 7e9 params x 16 B = 112e9 B = 112 GB = 104.3 GiB (course notes) */
  struct { SimRecipe r; int total; } cases[] = {
    { SIM_RECIPE_BF16_ADAM, 16 }, { SIM_RECIPE_BF16_ADAM_FP32_ACCUM, 20 },
    { SIM_RECIPE_FP32_ADAM, 16 }, { SIM_RECIPE_BF16_ADAM8BIT, 10 }, { SIM_RECIPE_BF16_SGD, 8 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    int p, g, m, o, a;
    sim_recipe_bytes (cases[i].r, &p, &g, &m, &o, &a);
    g_assert_cmpint (p + g + m + o + a, ==, cases[i].total);
  }
  {
    int p, g, m, o, a;
    guint64 bytes;
    sim_recipe_bytes (SIM_RECIPE_BF16_ADAM, &p, &g, &m, &o, &a);
    bytes = G_GUINT64_CONSTANT (7000000000) * (guint64) (p + g + m + o + a);
    g_assert_cmpuint (bytes, ==, G_GUINT64_CONSTANT (112000000000));
    g_assert_cmpfloat_with_epsilon ((double) bytes / 1073741824.0, 104.3, 0.05);
  }
}

/* Llama-3-8B full fine-tune on one GPU: 8,030,261,248 x 16 =
 * 128,484,179,968 B = 128.5 GB: case A on an 80 GB H100 */
static void
test_llama8b_full (void)
{
  g_auto (Run) r = { 0 };
  run (&r, "tests/data/h100x1.xml", 0, "llama3-8b.xml", "tp=1,pp=1,dp=1,gb=1");
  g_assert_cmpuint (stage (&r, 0)->states_bytes, ==, G_GUINT64_CONSTANT (128484179968));
  g_assert_false (r.mem->fits);
  g_assert_cmpint (r.mem->oom_case, ==, SIM_OOM_A);
}

/* the case-A remedies of the one-GPU full fine-tune offer both 10-byte
 * recipes, 8-bit Adam and NeMo's bf16 states (2 + 2 + 2 + 2 + 2 B/param):
 * 8,030,261,248 x 10 = 80.3 GB of states each, still over the usable
 * memory, and neither stacked with the other */
static void
test_llama8b_recipe_remedies (void)
{
  g_auto (Run) r = { 0 };
  g_autoptr (GPtrArray) remedies = NULL;
  guint found = 0;
  run (&r, "tests/data/h100x1.xml", 0, "llama3-8b.xml", "tp=1,pp=1,dp=1,gb=1");
  remedies = sim_memory_remedies (r.topo, r.model, r.plan, r.mem);
  for (guint i = 0; i < remedies->len; i++) {
    const SimRemedy *x = g_ptr_array_index (remedies, i);
    if (g_str_equal (x->flags, "--recipe bf16-adam8bit") ||
        g_str_equal (x->flags, "--recipe bf16-adam-bf16-states")) {
      g_assert_cmpuint (x->peak_bytes, >=, G_GUINT64_CONSTANT (8030261248) * 10);
      g_assert_false (x->fits);
      found++;
    }
    g_assert_null (strstr (x->flags, "bf16-adam8bit --recipe"));
  }
  g_assert_cmpuint (found, ==, 2);
}

/* ... and with fp32 accumulation 20 B/param, with 8-bit Adam 10 B/param */
static void
test_llama8b_recipes (void)
{
  g_auto (Run) a = { 0 };
  g_auto (Run) b = { 0 };
  run (&a, "tests/data/h100x1.xml", 0, "llama3-8b.xml", "gb=1,recipe=bf16-adam-fp32-accum");
  g_assert_cmpuint (stage (&a, 0)->states_bytes, ==, G_GUINT64_CONSTANT (8030261248) * 20);
  run (&b, "tests/data/h100x1.xml", 0, "llama3-8b.xml", "gb=1,recipe=bf16-adam8bit");
  g_assert_cmpuint (stage (&b, 0)->states_bytes, ==, G_GUINT64_CONSTANT (8030261248) * 10);
}

/* Megatron-LM's own bf16 default, gradients accumulated and reduced in fp32
 * (--grad-reduce-in-fp32): 2 + 4 + 4 + 4 + 4 = 18 B/param, 8,030,261,248 x
 * 18 = 144,544,702,464 B; with the recipe that already keeps an fp32
 * accumulation buffer the flag adds nothing (20 B/param) */
static void
test_llama8b_grad_reduce_fp32 (void)
{
  g_auto (Run) a = { 0 };
  g_auto (Run) b = { 0 };
  run (&a, "tests/data/h100x1.xml", 0, "llama3-8b.xml", "gb=1,grad-reduce-in-fp32");
  g_assert_cmpuint (stage (&a, 0)->states_bytes, ==, G_GUINT64_CONSTANT (144544702464));
  run (&b, "tests/data/h100x1.xml", 0, "llama3-8b.xml", "gb=1,recipe=bf16-adam-fp32-accum,grad-reduce-in-fp32");
  g_assert_cmpuint (stage (&b, 0)->states_bytes, ==, G_GUINT64_CONSTANT (8030261248) * 20);
}

/* LoRA r = 16 on all seven projections: 41,943,040 trainable;
 * 8,030,261,248 x 2 + 41,943,040 x 16 = 16,731,611,136 B = 16.7 GB: fits */
static void
test_llama8b_lora (void)
{
  g_auto (Run) r = { 0 };
  run (&r, "tests/data/h100x1.xml", 0, "llama3-8b.xml", "gb=1,lora-rank=16");
  g_assert_cmpuint (r.mem->trainable_params, ==, 41943040);
  g_assert_cmpuint (stage (&r, 0)->states_bytes, ==, G_GUINT64_CONSTANT (16731611136));
  g_assert_true (r.mem->fits);
}

/* FSDP / ZeRO-3 over 8 GPUs: 128.5 GB / 8 = 16.06 GB of states per GPU
 * (course notes: "128.5 GB -> 16 GB per card"), plus two gathered layers
 * of bf16 weights: 2 x 218,112,000 x 2 B = 872,448,000 B */
static void
test_zero3 (void)
{
  g_auto (Run) r = { 0 };
  run (&r, "dgx8x4.xml", 1, "llama3-8b.xml", "tp=1,pp=1,dp=8,zero=3,gb=8");
  g_assert_cmpuint (stage (&r, 0)->states_bytes - stage (&r, 0)->buffer_bytes, ==,
                    G_GUINT64_CONSTANT (128484179968) / 8);
  g_assert_cmpuint (stage (&r, 0)->buffer_bytes, ==, G_GUINT64_CONSTANT (872448000));
}

/* in-flight micro-batches per stage: GPipe m; 1F1B p - stage;
 * interleaved (Megatron) (p - s - 1)*2 + (v - 1)*p + 1 chunks: with p = 4,
 * v = 2 stage 0 holds 11 chunks of L/8 layers = L*(1 + (p-1)/(p*v)), the
 * factor Korthikanti et al. give for the interleaved schedule */
static void
test_in_flight (void)
{
  g_assert_cmpuint (sim_memory_in_flight (SIM_SCHEDULE_GPIPE, 4, 0, 32, 1), ==, 32);
  g_assert_cmpuint (sim_memory_in_flight (SIM_SCHEDULE_1F1B, 4, 0, 32, 1), ==, 4);
  g_assert_cmpuint (sim_memory_in_flight (SIM_SCHEDULE_1F1B, 4, 3, 32, 1), ==, 1);
  g_assert_cmpuint (sim_memory_in_flight (SIM_SCHEDULE_1F1B, 8, 0, 2, 1), ==, 2);
  g_assert_cmpuint (sim_memory_in_flight (SIM_SCHEDULE_INTERLEAVED, 4, 0, 32, 2), ==, 11);
  g_assert_cmpuint (sim_memory_in_flight (SIM_SCHEDULE_INTERLEAVED, 4, 3, 32, 2), ==, 5);
  g_assert_cmpfloat_with_epsilon (11.0 / 8.0, 1.0 + 3.0 / 8.0, 1e-12);
}

/* The headline: Llama-3-70B, tp 8, pp 4, dp 2 on dgx8x4, 1F1B, flash, SP.
 * Stage 0 holds 20 layers x 4 micro-batches of 33.5 sbh/8 bytes per layer
 * (SwiGLU f = 3.5h, GQA kvd = h/8 so K and V are 0.25 sbh each:
 * 8 + 2.5 + 2 + 21 = 33.5 sbh), s = 8192, h = 8192:
 * 33.5 * 67,108,864 / 8 = 281,018,368 B per layer, and the
 * first stage is the peak (Korthikanti: it holds p x L/p = L layers). */
static void
test_headline (void)
{
  g_auto (Run) r = { 0 };
  run (&r, "dgx8x4.xml", 0, "llama3-70b.xml", "tp=8,pp=4,dp=2");
  g_assert_cmpuint (stage (&r, 0)->activation_bytes_per_layer, ==, 281018368ull);
  g_assert_cmpuint (stage (&r, 0)->in_flight_chunks, ==, 4);
  g_assert_cmpuint (stage (&r, 0)->activations_peak_bytes, ==, 4ull * 20 * 281018368ull);
  g_assert_cmpint (r.mem->peak_stage, ==, 0);
  g_assert_true (r.mem->fits);
  /* usable: 81559 MiB - 1.5 GB, less 10% */
  g_assert_cmpuint (r.mem->usable_bytes, ==,
                    (guint64) ((81559ull * 1048576 - 1500000000ull) -
                               (guint64) llround ((81559.0 * 1048576 - 1.5e9) * 0.10)));
}

/* case B: states fit but 16 x 8192-token micro-batches without flash do not */
static void
test_case_b (void)
{
  g_auto (Run) r = { 0 };
  g_autoptr (GPtrArray) remedies = NULL;
  run (&r, "dgx8x4.xml", 1, "llama3-8b.xml", "tp=1,pp=1,dp=8,zero=3,mb=16,gb=128,no-flash-attention");
  g_assert_false (r.mem->fits);
  g_assert_cmpint (r.mem->oom_case, ==, SIM_OOM_B);
  remedies = sim_memory_remedies (r.topo, r.model, r.plan, r.mem);
  g_assert_cmpuint (remedies->len, >, 0);
  g_assert_cmpstr (((SimRemedy *) g_ptr_array_index (remedies, 0))->flags, ==, "--micro-batch 1");
  /* pp 1 without recomputation: offloading half of the 32 layers is offered,
   * 15 layers' activations fewer on the GPU (/memory/offload-ledger) */
  for (guint i = 0; i < remedies->len; i++) {
    const SimRemedy *x = g_ptr_array_index (remedies, i);
    const SimStageMemory *st = &g_array_index (r.mem->stages, SimStageMemory, 0);
    if (g_str_equal (x->flags, "--cpu-offloading-num-layers 16")) {
      g_assert_cmpuint (r.mem->peak_bytes - x->peak_bytes, ==, 15 * st->activation_bytes_per_layer);
      return;
    }
  }
  g_assert_not_reached ();
}

/* Block recomputation as a remedy: Llama 3 70B at 16k tokens, micro-batch
 * 2, tp 8 x pp 4 on four nodes (20 layers a stage) is out of memory for
 * its activations (case B); the remedy recomputes the first N layers of
 * each stage, N the fewest that fit: N fits (with the fragmentation
 * allowance) and N - 1 does not, and N is below the 20 that --recompute
 * full takes, whose peak is lower still */
static gboolean
fits_with (const char *plan)
{
  g_auto (Run) r = { 0 };
  run (&r, "dgx8x4.xml", 4, "llama3-70b.xml", plan);
  return r.mem->fits && !r.mem->tight;
}

static void
test_block_remedy (void)
{
  const char *base = "tp=8,pp=4,dp=1,seq=16384,mb=2,gb=64";
  g_auto (Run) r = { 0 };
  g_autoptr (GPtrArray) remedies = NULL;
  int n = 0;
  run (&r, "dgx8x4.xml", 4, "llama3-70b.xml", base);
  g_assert_cmpint (r.mem->oom_case, ==, SIM_OOM_B);
  remedies = sim_memory_remedies (r.topo, r.model, r.plan, r.mem);
  for (guint i = 0; i < remedies->len; i++) {
    const SimRemedy *x = g_ptr_array_index (remedies, i);
    if (g_str_has_prefix (x->flags, "--recompute-method block --recompute-num-layers "))
      n = (int) g_ascii_strtoll (x->flags + strlen ("--recompute-method block --recompute-num-layers "), NULL, 10);
  }
  g_test_message ("block remedy: %d of 20 layers a stage", n);
  g_assert_cmpint (n, >, 1);
  g_assert_cmpint (n, <, 20);
  {
    g_autofree char *at = g_strdup_printf ("%s,recompute-method=block,recompute-num-layers=%d", base, n);
    g_autofree char *below = g_strdup_printf ("%s,recompute-method=block,recompute-num-layers=%d", base, n - 1);
    g_assert_true (fits_with (at));
    g_assert_false (fits_with (below));
  }
}

/* case C: GPT-3 at 64k tokens without flash: one layer's scores alone,
 * 5*a*s^2*b = 5 * 96 * 65536^2 = 2.06e12 B, exceed any GPU */
static void
test_case_c (void)
{
  g_auto (Run) r = { 0 };
  run (&r, "dgx8x4.xml", 0, "gpt3-175b.xml", "tp=8,pp=8,dp=1,seq=65536,gb=8,no-flash-attention,zero=0");
  g_assert_false (r.mem->fits);
  g_assert_cmpint (r.mem->oom_case, ==, SIM_OOM_C);
}

/* Fits only without the fragmentation allowance: Llama-3-8B at 9,728 tokens,
 * two sequences per micro-batch on tp 2 x dp 4 peaks above the usable
 * 75.62 GB (85.52 GB visible - 1.5 GB context - 10 % of the rest) but under
 * the 84.02 GB the context leaves: "tight", which fits and has no OOM case.
 * At 8,192 tokens the same layout fits with headroom. */
static void
test_tight (void)
{
  g_auto (Run) r = { 0 }, s = { 0 };
  run (&r, "dgx8x4.xml", 1, "llama3-8b.xml", "tp=2,pp=1,dp=4,mb=2,gb=64,seq=9728");
  g_assert_cmpuint (r.mem->peak_bytes, >, r.mem->usable_bytes);
  g_assert_cmpuint (r.mem->peak_bytes + r.mem->context_reserve_bytes, <=, r.mem->capacity_bytes);
  g_assert_true (r.mem->fits);
  g_assert_true (r.mem->tight);
  g_assert_cmpint (r.mem->oom_case, ==, SIM_OOM_NONE);
  run (&s, "dgx8x4.xml", 1, "llama3-8b.xml", "tp=2,pp=1,dp=4,mb=2,gb=64,seq=8192");
  g_assert_true (s.mem->fits);
  g_assert_false (s.mem->tight);
}

/* Transformer Engine's offloading windows (sim-memory.h), worked by hand.
 * 8 layers, the first 4 offloaded, 1 GB saved each, forward 1 s and
 * backward 2 s a layer, 0.5 GB/s to the host (a copy takes 2 s).  Windows
 * end at layers w(g) = (8 / 4)(g + 1) - 1 = 1, 3, 5, 7.  Forward: during
 * layer 7 the GPU holds layers 4-7, which stay, and layer 3, whose window
 * ends there: 5 GB, the most anywhere (during layer 5: 2, 3, 4, 5; during
 * backward layer 4: 4, then 3 and 2 brought back); 8 GB without.  Waits:
 * group 0 copies beside layer 1's forward (1 s of 2: waits 1 s), the others
 * beside two layers (2 s: none); backward, group 0 comes back after layer
 * 1's backward with nothing left to hide behind before layer 0 (waits 2 s),
 * the others beside two layers' 4 s.  With 5 layers and 2 offloaded the
 * windows end at w(0) = 2 x 1 - 1 + 1 = 2 and w(1) = 2 x 2 - 1 + 1 = 4 (the
 * remainder 1 spread over the first group): during layer 4 the GPU holds
 * 1, 2, 3, 4: 4 of 5 layers. */
static void
test_offload_windows (void)
{
  guint64 bytes[8] = { 1000000000, 1000000000, 1000000000, 1000000000,
                       1000000000, 1000000000, 1000000000, 1000000000 };
  double fs[8] = { 1, 1, 1, 1, 1, 1, 1, 1 }, bs[8] = { 2, 2, 2, 2, 2, 2, 2, 2 };
  SimOffload off;
  sim_memory_offload (8, 4, bytes, fs, bs, 0.5e9, &off);
  g_assert_cmpuint (off.peak_bytes, ==, 5000000000);
  g_assert_cmpfloat_with_epsilon (off.fwd_wait_s, 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (off.bwd_wait_s, 2.0, 1e-12);
  sim_memory_offload (8, 0, bytes, fs, bs, 0.5e9, &off);
  g_assert_cmpuint (off.peak_bytes, ==, 8000000000);
  g_assert_cmpfloat (off.fwd_wait_s + off.bwd_wait_s, ==, 0);
  sim_memory_offload (5, 2, bytes, NULL, NULL, 0, &off);
  g_assert_cmpuint (off.peak_bytes, ==, 4000000000);
}

/* the ledger with offloading: Llama-3-8B's 32 layers at tp 1, the first 16
 * offloaded, windows ending at 2g + 1: the peak holds layers 16-31 and
 * layer 15 (its window ends at layer 31), 17 layers, 15 fewer than all 32 */
static void
test_offload_ledger (void)
{
  g_auto (Run) a = { 0 }, b = { 0 };
  const SimStageMemory *sa, *sb;
  run (&a, "dgx8x4.xml", 1, "llama3-8b.xml", "tp=1,pp=1,dp=8,mb=1,gb=64");
  run (&b, "dgx8x4.xml", 1, "llama3-8b.xml",
       "tp=1,pp=1,dp=8,mb=1,gb=64,cpu-offloading-num-layers=16");
  sa = &g_array_index (a.mem->stages, SimStageMemory, 0);
  sb = &g_array_index (b.mem->stages, SimStageMemory, 0);
  g_assert_cmpuint (sa->activation_bytes_per_layer, ==, sb->activation_bytes_per_layer);
  g_assert_cmpuint (sa->activations_peak_bytes - sb->activations_peak_bytes, ==,
                    15 * sa->activation_bytes_per_layer);
  g_assert_cmpuint (sa->states_bytes, ==, sb->states_bytes);
}

/* the waits sim-cost.c charges: Llama-3-8B at tp 1 on a DGX H100 (PCIe
 * Gen5, 63 GB/s to the host), 16 of 32 layers offloaded, windows of 2
 * layers ending at 2g + 1.  A layer's copy takes t = its saved bytes / 63
 * GB/s; the forward waits t - f for group 0 (one layer beside it) and
 * t - 2f for each of the 15 others where positive, the backward t for
 * group 0 (nothing beside it) and t - 2b for the others, f and b a
 * layer's forward and backward */
static void
test_offload_time (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimPlan)
      p = test_resolve_plan (t, m, "tp=1,pp=1,dp=8,mb=1,gb=64,cpu-offloading-num-layers=16");
  SimActivationConfig cfg;
  g_autoptr (SimActivations) a = NULL;
  SimLayerCost c;
  double copy, f, b;
  sim_activation_config_from_plan (&cfg, p);
  a = sim_activations_layer (m, &cfg);
  sim_cost_layer (m, p, sim_topology_gpu_type (t, 0), &c);
  copy = (double) a->saved_bytes / 63e9, f = c.layer_fwd_s, b = c.layer_bwd_s;
  g_assert_cmpfloat (copy, >, f); /* a copy outlasts a layer's forward here */
  g_assert_cmpfloat_with_epsilon (c.offload_fwd_s, MAX (copy - f, 0) + 15 * MAX (copy - 2 * f, 0),
                                  1e-12);
  g_assert_cmpfloat_with_epsilon (c.offload_bwd_s, copy + 15 * MAX (copy - 2 * b, 0), 1e-12);
}

/* A remedy's peak is the peak of the plan its printed flags give when
 * added to the user's: each remedy's flags ("--tp 2 --dp 4", "--recompute
 * full", the stacked combination) set on the user's request, resolved and
 * measured again, give the remedy's peak to the byte.  Case A with tp 1
 * (llama3-70b on one dgx8x4 node: the "--tp 2 --dp 4" remedy turns
 * sequence parallelism on, as --tp 2 does), case B and case C. */
static void
test_remedy_flags (void)
{
  static const struct {
    const char *topo;
    int nodes;
    const char *model, *plan;
  } cases[] = {
    { "dgx8x4.xml", 1, "llama3-70b.xml", "tp=1,pp=1,dp=8" },
    { "dgx8x4.xml", 1, "llama3-8b.xml", "tp=1,pp=1,dp=8,zero=3,mb=16,gb=128,no-flash-attention" },
    { "dgx8x4.xml", 0, "gpt3-175b.xml", "tp=8,pp=8,dp=1,seq=65536,gb=8,no-flash-attention,zero=0" },
  };
  int checked = 0, tp_moves = 0;
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_auto (Run) r = { 0 };
    g_autoptr (GPtrArray) remedies = NULL;
    run (&r, cases[i].topo, cases[i].nodes, cases[i].model, cases[i].plan);
    g_assert_false (r.mem->fits);
    remedies = sim_memory_remedies (r.topo, r.model, r.plan, r.mem);
    g_assert_cmpuint (remedies->len, >, 0);
    for (guint k = 0; k < remedies->len; k++) {
      const SimRemedy *x = g_ptr_array_index (remedies, k);
      g_autoptr (SimPlanRequest) q = test_request (cases[i].plan);
      g_auto (GStrv) w = g_strsplit (x->flags, " ", -1);
      g_autoptr (SimPlan) p = NULL;
      g_autoptr (SimMemory) m = NULL;
      for (guint j = 0; w[j] != NULL; j++) {
        const char *key = w[j] + 2;
        const char *value = sim_plan_key_takes_value (key) ? w[++j] : NULL;
        g_assert_true (g_str_has_prefix (w[j - (value != NULL)], "--"));
        g_assert_true (sim_plan_request_set (q, key, value, NULL, NULL));
      }
      g_assert_nonnull (p = sim_plan_resolve (q, r.topo, r.model, NULL));
      m = sim_memory_compute (r.topo, r.model, p);
      g_test_message ("%s + %s: %" G_GUINT64_FORMAT " B", cases[i].plan, x->flags, m->peak_bytes);
      g_assert_cmpuint (m->peak_bytes, ==, x->peak_bytes);
      tp_moves += r.plan->tp == 1 && p->tp == 2 && p->sequence_parallel;
      checked++;
    }
  }
  g_assert_cmpint (tp_moves, >, 0);
  g_test_message ("%d remedies checked", checked);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/memory/recipes", test_recipes);
  g_test_add_func ("/memory/llama8b-full", test_llama8b_full);
  g_test_add_func ("/memory/llama8b-recipes", test_llama8b_recipes);
  g_test_add_func ("/memory/llama8b-grad-reduce-fp32", test_llama8b_grad_reduce_fp32);
  g_test_add_func ("/memory/llama8b-recipe-remedies", test_llama8b_recipe_remedies);
  g_test_add_func ("/memory/llama8b-lora", test_llama8b_lora);
  g_test_add_func ("/memory/zero3", test_zero3);
  g_test_add_func ("/memory/in-flight", test_in_flight);
  g_test_add_func ("/memory/headline", test_headline);
  g_test_add_func ("/memory/case-b", test_case_b);
  g_test_add_func ("/memory/case-c", test_case_c);
  g_test_add_func ("/memory/block-remedy", test_block_remedy);
  g_test_add_func ("/memory/remedy-flags", test_remedy_flags);
  g_test_add_func ("/memory/tight", test_tight);
  g_test_add_func ("/memory/offload-windows", test_offload_windows);
  g_test_add_func ("/memory/offload-ledger", test_offload_ledger);
  g_test_add_func ("/memory/offload-time", test_offload_time);
  return g_test_run ();
}
