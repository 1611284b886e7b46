/* tests for sim-plan: defaults, validation and Megatron rank placement */
#include <glib.h>
#include <string.h>

#include "sim-error.h"
#include "sim-memory.h"
#include "sim-plan.h"
#include "test-util.h"

static SimTopology *
dgx8x4 (void)
{
  return test_load_topology ("dgx8x4.xml", 0);
}

static SimModel *
model (const char *name)
{
  return test_load_model (name);
}

/* Megatron order, TP fastest then CP, DP, PP: with tp 8, pp 4, dp 2 rank 9
 * is tp 1 of dp replica 1 on stage 0; rank 16 starts stage 1 */
static void
test_ranks (void)
{
  g_autoptr (SimTopology) t = dgx8x4 ();
  g_autoptr (SimModel) m = model ("llama3-70b.xml");
  g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
  g_autoptr (SimPlan) p = NULL;
  g_autoptr (GError) error = NULL;
  int c[SIM_DIM_COUNT];
  g_assert_true (sim_plan_request_parse_string (p_req, "tp=8,pp=4,dp=2", &error));
  g_assert_nonnull (p = sim_plan_resolve (p_req, t, m, &error));
  g_assert_no_error (error);
  sim_plan_rank_coords (p, 9, c);
  g_assert_cmpint (c[SIM_DIM_TP], ==, 1);
  g_assert_cmpint (c[SIM_DIM_DP], ==, 1);
  g_assert_cmpint (c[SIM_DIM_PP], ==, 0);
  sim_plan_rank_coords (p, 16, c);
  g_assert_cmpint (c[SIM_DIM_TP], ==, 0);
  g_assert_cmpint (c[SIM_DIM_DP], ==, 0);
  g_assert_cmpint (c[SIM_DIM_PP], ==, 1);
  for (int r = 0; r < 64; r++) {
    sim_plan_rank_coords (p, r, c);
    g_assert_cmpint (sim_plan_rank_of (p, c), ==, r);
  }
}

/* 126 layers on 16 stages, as Llama 3 405B: 16 x 8 = 128, two short; the
 * first and the last stage hold 7, the others 8, and the layers add up */
static void
test_uneven (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 2048);
  g_autoptr (SimModel) m = model ("llama3-405b.xml");
  g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
  g_autoptr (SimPlan) p = NULL;
  g_autoptr (GError) error = NULL;
  guint64 sum = 0;
  g_assert_true (sim_plan_request_parse_string (p_req, "tp=8,pp=16,dp=128,gb=2048", &error));
  g_assert_nonnull (p = sim_plan_resolve (p_req, t, m, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (sim_plan_stage_layers (p, m, 0), ==, 7);
  g_assert_cmpuint (sim_plan_stage_layers (p, m, 15), ==, 7);
  for (int s = 1; s < 15; s++)
    g_assert_cmpuint (sim_plan_stage_layers (p, m, s), ==, 8);
  for (int s = 0; s < 16; s++)
    sum += sim_plan_stage_layers (p, m, s);
  g_assert_cmpuint (sum, ==, 126);
  g_assert_cmpuint (sim_plan_stage_first_layer (p, m, 15), ==, 119);
}

/* --order tp-pp-cp-dp puts the stages of one replica next to each other */
static void
test_order (void)
{
  g_autoptr (SimTopology) t = dgx8x4 ();
  g_autoptr (SimModel) m = model ("llama3-70b.xml");
  g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
  g_autoptr (SimPlan) p = NULL;
  g_autoptr (GError) error = NULL;
  int c[SIM_DIM_COUNT];
  g_assert_true (sim_plan_request_parse_string (p_req, "tp=8,pp=4,dp=2,order=tp-pp-cp-dp", &error));
  g_assert_nonnull (p = sim_plan_resolve (p_req, t, m, &error));
  sim_plan_rank_coords (p, 8, c);
  g_assert_cmpint (c[SIM_DIM_PP], ==, 1);
  g_assert_cmpint (c[SIM_DIM_DP], ==, 0);
}

/* dp is derived (64 / (8 x 4) = 2) and every default is recorded;
 * llama3-70b's file gives a global batch of 1024 */
static void
test_defaults (void)
{
  g_autoptr (SimTopology) t = dgx8x4 ();
  g_autoptr (SimModel) m = model ("llama3-70b.xml");
  g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
  g_autoptr (SimPlan) p = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (sim_plan_request_parse_string (p_req, "tp=8,pp=4", &error));
  g_assert_nonnull (p = sim_plan_resolve (p_req, t, m, &error));
  g_assert_cmpint (p->dp, ==, 2);
  g_assert_cmpuint (p->global_batch, ==, 1024);
  g_assert_cmpuint (p->micro_batches, ==, 512);
  g_assert_cmpint (p->zero, ==, 1);
  g_assert_cmpint (p->sequence_parallel, ==, 1);
  g_assert_true (g_str_has_prefix (g_ptr_array_index (p->defaults, 0), "--dp 2"));
}

/* Transformer Engine's TP overlap is a default where the NVSwitch
 * multicasts (NVLink SHARP, sharp="true": dgx8x4.xml's H100 nodes) and
 * not on DGX A100 (second-generation NVSwitch, sharp="false"), where the
 * defaults line says why; given, it is kept on either */
static void
test_tp_overlap_default (void)
{
  g_autoptr (SimModel) m = model ("llama3-70b.xml");
  const char *files[] = { "dgx8x4.xml", "dgx-a100.xml" };
  const int want[] = { 1, 0 };
  for (guint i = 0; i < G_N_ELEMENTS (files); i++) {
    g_autoptr (SimTopology) t = test_load_topology (files[i], 0);
    g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
    g_autoptr (SimPlan) p = NULL;
    g_autoptr (SimPlanRequest) given_req = sim_plan_request_new ();
    g_autoptr (SimPlan) given = NULL;
    g_autoptr (GError) error = NULL;
    gboolean said = FALSE;
    g_assert_true (sim_plan_request_parse_string (p_req, "tp=8,pp=4", &error));
    g_assert_nonnull (p = sim_plan_resolve (p_req, t, m, &error));
    g_assert_cmpint (p->tp_comm_overlap, ==, want[i]);
    for (guint k = 0; k < p->defaults->len; k++)
      said |= strstr (g_ptr_array_index (p->defaults, k), "no NVLink SHARP multicast") != NULL;
    g_assert_cmpint (said, ==, !want[i]);
    g_assert_true (sim_plan_request_parse_string (given_req, "tp=8,pp=4,tp-comm-overlap=true", &error));
    g_assert_nonnull (given = sim_plan_resolve (given_req, t, m, &error));
    g_assert_cmpint (given->tp_comm_overlap, ==, 1);
  }
}

/* the plan parses but sim_plan_resolve refuses it with a message that
 * holds `substring` */
static void
assert_refused (const SimTopology *t, const SimModel *m, const char *plan, const char *substring)
{
  g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
  g_autoptr (SimPlan) p = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (sim_plan_request_parse_string (p_req, plan, &error));
  g_assert_null (p = sim_plan_resolve (p_req, t, m, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_PLAN);
  if (strstr (error->message, substring) == NULL)
    g_error ("plan %s: '%s' lacks '%s'", plan, error->message, substring);
}

static void
test_errors (void)
{
  g_autoptr (SimTopology) t = dgx8x4 ();
  g_autoptr (SimModel) m = model ("llama3-70b.xml");
  struct { const char *plan; const char *substring;
  } cases[] = {
    { "tp=8,pp=4,dp=3", "layouts that fit: --tp 8 --pp 1 --dp 8; --tp 8 --pp 2 --dp 4" },
    { "tp=16,pp=2,dp=2", "must divide the 64 attention heads and 8 KV heads" },
    { "tp=8,pp=8,dp=1,schedule=interleaved,v=11",
      "a layer in each of the pp 8 x virtual stages 11" },
    { "tp=8,pp=4,dp=2,gb=7", "must be a multiple of micro-batch 1 x dp 2" },
    { "tp=8,pp=4,dp=2,v=2,schedule=1f1b", "needs --schedule interleaved" },
    { "tp=8,pp=4,dp=2,qlora", "--qlora needs --lora-rank" },
    /* Megatron-Core's TransformerConfig checks for CPU offloading */
    { "tp=8,pp=1,dp=8,cpu-offloading-num-layers=80", "expected fewer than the model's layers" },
    { "tp=8,pp=2,dp=4,cpu-offloading-num-layers=10", "expected --pp 1" },
    { "tp=8,pp=1,dp=8,recompute=full,cpu-offloading-num-layers=10", "expected --recompute none" },
    { "tp=8,pp=1,dp=8,framework=fsdp,zero=3,cpu-offloading-num-layers=10",
      "expected --framework megatron" },
    /* torch.compile is a torchtitan setting, and its async TP needs it
     * (parallelize_llama.py @9dec370) */
    { "tp=8,pp=4,dp=2,torch-compile=true", "expected --framework torchtitan" },
    { "tp=8,pp=4,dp=2,framework=torchtitan,tp-comm-overlap=true",
      "async TP needs --torch-compile" },
    /* torchtitan's selective recomputation is its op-level policy */
    { "tp=8,pp=4,dp=2,framework=torchtitan,recompute=selective,recompute-modules=mlp",
      "Megatron-Core's modules, not torchtitan's" },
    /* and a fsdp plan with tp over 1 is told why torchtitan's rule applies */
    { "tp=8,pp=4,dp=2,framework=fsdp,recompute=selective,recompute-modules=mlp",
      "(--framework torchtitan, which a fsdp plan with tp, pp or cp over 1 runs as)" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    assert_refused (t, m, cases[i].plan, cases[i].substring);
}

/* CPU offloading needs the GPU's host link to time the copies: the example
 * graph file gives none; dgx8x4.xml gives PCIe Gen5's 63 GB/s */
static void
test_offload_host_link (void)
{
  g_autoptr (SimTopology) graph = test_load_topology ("example-graph.xml", 0);
  g_autoptr (SimTopology) t = dgx8x4 ();
  g_autoptr (SimModel) m = model ("llama3-8b.xml");
  g_autoptr (SimPlan) p = NULL;
  assert_refused (graph, m, "tp=1,pp=1,dp=4,cpu-offloading-num-layers=4", "gives no host link");
  g_assert_cmpfloat (sim_topology_gpu_type (t, 0)->host_bw_bytes_per_s, ==, 63e9);
  p = test_resolve_plan (t, m, "tp=8,pp=1,dp=8,cpu-offloading-num-layers=16");
  g_assert_cmpint (p->cpu_offload_layers, ==, 16);
}

/* Uneven model chunks (sim-plan.h): llama3-70b's 80 layers on pp 8 x v 3
 * = 24 chunks of at most ceil(80/24) = 4 layers, 24 x 4 - 80 = 16 of them
 * giving one up in the order 0, 23, 1, 22, ...: chunks 0-7 and 16-23 hold
 * 3 layers, chunks 8-15 hold 4 (16 x 3 + 8 x 4 = 80).  Stage s holds chunks
 * s, s + 8 and s + 16: 3 + 4 + 3 = 10 layers; stage 0's second chunk
 * starts at layer 8 x 3 = 24, its third at 24 + 8 x 4 = 56.
 * DeepSeek-V3's 61 layers on pp 8 x v 4: 32 chunks of at most 2, 3 giving
 * one up (chunks 0, 31 and 1): stages 0, 1 and 7 hold 7 layers, the
 * others 8 (3 x 7 + 5 x 8 = 61). */
static void
test_uneven_chunks (void)
{
  g_autoptr (SimTopology) t = dgx8x4 ();
  g_autoptr (SimModel) m = model ("llama3-70b.xml");
  g_autoptr (SimModel) ds = model ("deepseek-v3.xml");
  g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
  g_autoptr (SimPlan) p = NULL;
  g_autoptr (SimPlanRequest) q_req = sim_plan_request_new ();
  g_autoptr (SimPlan) q = NULL;
  g_autoptr (GError) error = NULL;
  int want_ds[8] = { 7, 7, 8, 8, 8, 8, 8, 7 };
  g_assert_true (sim_plan_request_parse_string (p_req, "tp=8,pp=8,dp=1,schedule=interleaved,v=3", &error));
  g_assert_nonnull (p = sim_plan_resolve (p_req, t, m, &error));
  g_assert_no_error (error);
  for (int s = 0; s < 8; s++) {
    g_assert_cmpuint (sim_plan_chunk_layers (p, m, s, 0), ==, 3);
    g_assert_cmpuint (sim_plan_chunk_layers (p, m, s, 1), ==, 4);
    g_assert_cmpuint (sim_plan_chunk_layers (p, m, s, 2), ==, 3);
    g_assert_cmpuint (sim_plan_stage_layers (p, m, s), ==, 10);
  }
  g_assert_cmpuint (sim_plan_chunk_first_layer (p, m, 0, 1), ==, 24);
  g_assert_cmpuint (sim_plan_chunk_first_layer (p, m, 0, 2), ==, 56);
  g_assert_true (sim_plan_request_parse_string (q_req, "tp=8,pp=8,dp=1,schedule=interleaved,v=4,ep=8,etp=1", &error));
  g_assert_nonnull (q = sim_plan_resolve (q_req, t, ds, &error));
  g_assert_no_error (error);
  for (int s = 0; s < 8; s++)
    g_assert_cmpuint (sim_plan_stage_layers (q, ds, s), ==, (guint64) want_ds[s]);
  g_assert_cmpuint (sim_plan_chunk_layers (q, ds, 0, 0), ==, 1);
  g_assert_cmpuint (sim_plan_chunk_layers (q, ds, 1, 0), ==, 1);
  g_assert_cmpuint (sim_plan_chunk_layers (q, ds, 7, 3), ==, 1);
  g_assert_cmpuint (sim_plan_chunk_first_layer (q, ds, 7, 3), ==, 60);
}

/* Megatron-Core's uneven split (transformer_block.py get_num_layers_to_build),
 * worked by hand:
 *  - llama3-70b's 80 layers, pp 8, first stage 12, last 8: the other six
 *    stages split 80 - 20 = 60, 10 each; stage 7 starts at 12 + 6 x 10 = 72.
 *    Interleaved with v 2: each stage's layers halve over its two chunks
 *    (6, 5, ..., 5, 4); stage 0's second chunk starts after the 8 first
 *    chunks (6 + 6 x 5 + 4 = 40).
 *  - llama3-405b's 126 layers on pp 16 with the embedding and the loss
 *    counted as layers: 128 / 16 = 8 per stage, the first and the last
 *    hold one fewer: 7, 8 x 14, 7, Llama 3's own split (The Llama 3 Herd
 *    of Models 3.3.2), now as Megatron-Core computes it.
 *  - the same 126 layers on pp 16 x v 8 = 128 chunks, the flags not
 *    given: only the embedding and the loss counted make 126 + 2 = 128, one
 *    a chunk, so sim sets both and says so under Defaults; stage 0's first
 *    chunk holds the embedding and no layer, stage 15's last the loss and
 *    no layer, every other chunk one layer: 7, 8 x 14, 7 again.
 *  - llama3-70b on pp 4 x v 2 with the loss counted: 81 layers do not
 *    divide over 8 chunks; with the embedding too, 82 do not either; on
 *    pp 2 x v 1 with both, 82 / 2 = 41: stage 0 holds 40, stage 1 40. */
static void
test_megatron_split (void)
{
  g_autoptr (SimTopology) t = dgx8x4 ();
  g_autoptr (SimTopology) big = test_load_topology ("dgx-h100.xml", 2048);
  g_autoptr (SimModel) m = model ("llama3-70b.xml");
  g_autoptr (SimModel) l405 = model ("llama3-405b.xml");
  g_autoptr (GError) error = NULL;
  g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
  g_autoptr (SimPlan) p = NULL;
  g_autoptr (SimPlanRequest) q_req = sim_plan_request_new ();
  g_autoptr (SimPlan) q = NULL;
  g_autoptr (SimPlanRequest) r_req = sim_plan_request_new ();
  g_autoptr (SimPlan) r = NULL;
  g_autoptr (SimPlanRequest) two_req = sim_plan_request_new ();
  g_autoptr (SimPlan) two = NULL;
  guint64 sum = 0;

  g_assert_true (sim_plan_request_parse_string (p_req, "tp=8,pp=8,dp=1,first-stage-layers=12,last-stage-layers=8", &error));
  g_assert_nonnull (p = sim_plan_resolve (p_req, t, m, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (sim_plan_stage_layers (p, m, 0), ==, 12);
  for (int s = 1; s < 7; s++)
    g_assert_cmpuint (sim_plan_stage_layers (p, m, s), ==, 10);
  g_assert_cmpuint (sim_plan_stage_layers (p, m, 7), ==, 8);
  g_assert_cmpuint (sim_plan_stage_first_layer (p, m, 7), ==, 72);

  /* Megatron's own flag names set the same */
  g_assert_true (sim_plan_request_parse_string (q_req, "tp=8,pp=8,dp=1,schedule=interleaved,v=2,"
                                           "decoder-first-pipeline-num-layers=12,"
                                           "decoder-last-pipeline-num-layers=8", &error));
  g_assert_nonnull (q = sim_plan_resolve (q_req, t, m, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (sim_plan_chunk_layers (q, m, 0, 0), ==, 6);
  g_assert_cmpuint (sim_plan_chunk_layers (q, m, 0, 1), ==, 6);
  g_assert_cmpuint (sim_plan_chunk_layers (q, m, 3, 1), ==, 5);
  g_assert_cmpuint (sim_plan_chunk_layers (q, m, 7, 0), ==, 4);
  g_assert_cmpuint (sim_plan_chunk_first_layer (q, m, 0, 1), ==, 40);
  for (int s = 0; s < 8; s++)
    sum += sim_plan_stage_layers (q, m, s);
  g_assert_cmpuint (sum, ==, 80);

  g_assert_true (sim_plan_request_parse_string (r_req, "tp=8,pp=16,dp=128,gb=2048,account-for-embedding-in-pipeline-split,"
                                           "account-for-loss-in-pipeline-split", &error));
  g_assert_nonnull (r = sim_plan_resolve (r_req, big, l405, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (sim_plan_stage_layers (r, l405, 0), ==, 7);
  g_assert_cmpuint (sim_plan_stage_layers (r, l405, 15), ==, 7);
  for (int s = 1; s < 15; s++)
    g_assert_cmpuint (sim_plan_stage_layers (r, l405, s), ==, 8);

  {
    g_autoptr (SimPlanRequest) c_req = sim_plan_request_new ();
    g_autoptr (SimPlan) c = NULL;
    gboolean noted = FALSE;
    g_assert_true (
        sim_plan_request_parse_string (c_req, "tp=8,pp=16,dp=128,gb=2048,schedule=interleaved,v=8", &error));
    g_assert_nonnull (c = sim_plan_resolve (c_req, big, l405, &error));
    g_assert_no_error (error);
    g_assert_true (c->embedding_in_split && c->loss_in_split);
    for (guint i = 0; i < c->defaults->len; i++)
      noted = noted ||
              g_str_has_prefix (g_ptr_array_index (c->defaults, i),
                                "--account-for-embedding-in-pipeline-split --account-for-loss");
    g_assert_true (noted);
    g_assert_cmpuint (sim_plan_chunk_layers (c, l405, 0, 0), ==, 0);
    g_assert_cmpuint (sim_plan_chunk_layers (c, l405, 15, 7), ==, 0);
    g_assert_cmpuint (sim_plan_chunk_layers (c, l405, 0, 1), ==, 1);
    g_assert_cmpuint (sim_plan_chunk_layers (c, l405, 15, 6), ==, 1);
    g_assert_cmpuint (sim_plan_stage_layers (c, l405, 0), ==, 7);
    g_assert_cmpuint (sim_plan_stage_layers (c, l405, 15), ==, 7);
    for (int s = 1; s < 15; s++)
      g_assert_cmpuint (sim_plan_stage_layers (c, l405, s), ==, 8);
  }

  g_assert_true (sim_plan_request_parse_string (two_req, "tp=8,pp=2,dp=4,account-for-embedding-in-pipeline-split,"
                                             "account-for-loss-in-pipeline-split", &error));
  g_assert_nonnull (two = sim_plan_resolve (two_req, t, m, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (sim_plan_stage_layers (two, m, 0), ==, 40);
  g_assert_cmpuint (sim_plan_stage_layers (two, m, 1), ==, 40);

  {
    struct { const char *plan; const char *substring; } cases[] = {
      { "tp=8,pp=8,dp=1,first-stage-layers=11", "leaves 69 of the 80 layers" },
      { "tp=8,pp=8,dp=1,first-stage-layers=80", "at least one" },
      { "tp=8,pp=2,dp=4,first-stage-layers=30,last-stage-layers=40", "leave 10 of the 80 layers" },
      { "tp=8,pp=8,dp=1,first-stage-layers=12,last-stage-layers=8,account-for-loss-in-pipeline-split",
        "give one way" },
      { "tp=8,pp=4,dp=2,schedule=interleaved,v=2,account-for-loss-in-pipeline-split",
        "make 81, which pp 4 x 2 virtual stages must divide" },
      { "tp=8,pp=8,dp=1,schedule=interleaved,v=2,first-stage-layers=9,last-stage-layers=11",
        "stage 0 holds 9 layers, which its 2 virtual stages must divide" },
      { "tp=8,pp=1,dp=8,account-for-loss-in-pipeline-split", "needs pp of at least 2" },
    };
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
      assert_refused (t, m, cases[i].plan, cases[i].substring);
  }
}

/* sim_plan_resolve_model, the model's defaults without a cluster, as
 * the shipped model files give them: Mixtral 8x7B (seq-len 32768, 8 experts, no
 * multi-token prediction) at tp 2: ep 1, etp = tp = 2, seq 32768, mtp 0;
 * with ep 4 and etp 1 given, those; DeepSeek-V3 (<mtp layers="1"/>,
 * seq-len 4096): mtp 1, and none under LoRA; Llama 3 8B (dense, seq-len
 * 8192): ep = etp = 1, and ep 2 refused; tp 3 does not split Llama 3 8B's
 * 32 heads, refused as sim_plan_check_model_split refuses it */
static void
test_resolve_model (void)
{
  g_autoptr (SimModel) mixtral = model ("mixtral-8x7b.xml");
  g_autoptr (SimModel) dsv3 = model ("deepseek-v3.xml");
  g_autoptr (SimModel) llama = model ("llama3-8b.xml");
  struct {
    SimModel *m;
    const char *plan;
    gboolean ok;
    int ep, etp, mtp;
    guint64 seq;
    const char *message;
  } cases[] = {
    { mixtral, "tp=2", TRUE, 1, 2, 0, 32768, NULL },
    { mixtral, "tp=2,ep=4,etp=1,seq-len=4096", TRUE, 4, 1, 0, 4096, NULL },
    { dsv3, "tp=1", TRUE, 1, 1, 1, 4096, NULL },
    { dsv3, "tp=1,lora-rank=16", TRUE, 1, 1, 0, 4096, NULL },
    { llama, "tp=2", TRUE, 1, 1, 0, 8192, NULL },
    { llama, "tp=1,ep=2", FALSE, 0, 0, 0, 0, "no mixture-of-experts layers, so --ep and --etp must be 1" },
    { llama, "tp=3", FALSE, 0, 0, 0, 0, "32 attention heads" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
    g_autoptr (SimPlan) p = NULL;
    g_autoptr (GError) error = NULL;
    g_assert_true (sim_plan_request_parse_string (p_req, cases[i].plan, &error));
    if (!cases[i].ok) {
      g_assert_null (p = sim_plan_resolve_model (p_req, cases[i].m, &error));
      g_assert_error (error, SIM_ERROR, SIM_ERROR_PLAN);
      g_assert_nonnull (strstr (error->message, cases[i].message));
      continue;
    }
    g_assert_nonnull (p = sim_plan_resolve_model (p_req, cases[i].m, &error));
    g_assert_no_error (error);
    g_assert_cmpint (p->ep, ==, cases[i].ep);
    g_assert_cmpint (p->etp, ==, cases[i].etp);
    g_assert_cmpint (p->mtp_layers, ==, cases[i].mtp);
    g_assert_cmpuint (p->seq_len, ==, cases[i].seq);
  }
}

/* sim_plan_request_set_number sets what sim_plan_request_set sets from
 * the value as text, given bits included, so that the plans resolve alike (the same
 * values and the same defaults noted): a DeepSeek-V3 layout on 4 nodes of
 * dgx-h100 with the items sim sweep sets, a choice by its index (schedule
 * zb-v is 4, fp8 hybrid 1), a boolean as 1, a short form (mb, gb, v) and a
 * negated boolean; a value out of range, an unknown key and an option
 * whose value is text are refused, the plan unchanged */
static void
test_set_number (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 4);
  g_autoptr (SimModel) m = model ("deepseek-v3.xml");
  g_autoptr (SimPlanRequest) parsed_req = sim_plan_request_new ();
  g_autoptr (SimPlan) parsed = NULL;
  g_autoptr (SimPlanRequest) set_req = sim_plan_request_new ();
  g_autoptr (SimPlan) set = NULL;
  g_autoptr (GError) error = NULL;
  static const struct {
    const char *key;
    guint64 value;
  } items[] = {
    { "tp", 2 }, { "cp", 1 }, { "pp", 4 }, { "dp", 4 }, { "ep", 8 }, { "etp", 1 },
    { "overlap-moe-expert-parallel-comm", 1 }, { "mb", 1 }, { "gb", 512 }, { "schedule", 4 },
    { "recompute", 0 }, { "zero", 1 }, { "fp8", 1 }, { "no-tp-comm-overlap", 1 },
  };
  SimPlan a, b;
  g_assert_true (sim_plan_request_parse_string (parsed_req,
                                        "tp=2,cp=1,pp=4,dp=4,ep=8,etp=1,overlap-moe-expert-parallel-comm,mb=1,"
                                        "gb=512,schedule=zb-v,recompute=none,zero=1,fp8=hybrid,no-tp-comm-overlap",
                                        &error));
  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (items); i++) {
    g_assert_true (sim_plan_request_set_number (set_req, items[i].key, items[i].value, &error));
    g_assert_no_error (error);
  }
  g_assert_nonnull (parsed = sim_plan_resolve (parsed_req, t, m, &error));
  g_assert_nonnull (set = sim_plan_resolve (set_req, t, m, &error));
  g_assert_no_error (error);
  /* the same plan, field by field (the owned pointers apart), and the
   * same options given */
  a = *parsed;
  b = *set;
  a.defaults = b.defaults = NULL;
  a.request = b.request = NULL;
  g_assert_true (a.layout == NULL && b.layout == NULL);
  g_assert_true (memcmp (&a, &b, sizeof a) == 0);
  g_assert_cmpuint (parsed->defaults->len, ==, set->defaults->len);
  for (guint i = 0; i < set->defaults->len; i++)
    g_assert_cmpstr (g_ptr_array_index (parsed->defaults, i), ==, g_ptr_array_index (set->defaults, i));

  {
    g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
    static const struct {
      const char *key;
      guint64 value;
    } refused[] = { { "tp", 0 }, { "tp", 131073 }, { "zero", 4 }, { "sequence-parallel", 2 },
                    { "fp4-recipe", 1 }, { "no-such-option", 1 }, { "order", 1 }, { "gpu-variation", 0 } };
    for (guint i = 0; i < G_N_ELEMENTS (refused); i++) {
      g_autoptr (GError) e = NULL;
      g_assert_false (sim_plan_request_set_number (p_req, refused[i].key, refused[i].value, &e));
      g_assert_error (e, SIM_ERROR, SIM_ERROR_USAGE);
    }
    for (guint i = 0; i < G_N_ELEMENTS (refused); i++)
      g_assert_false (sim_plan_request_given (p_req, refused[i].key));
    g_assert_cmpfloat (sim_plan_request_value (p_req, "tp"), ==, 0);
  }
}

/* FSDP2 under pipeline parallelism as torchtitan runs it
 * (sim-plan-torchtitan.c): Llama-3-70B at tp 8, pp 4, dp 2 on dgx8x4 with
 * --zero 3 resolves to ZeRO-1 with fp32 gradients and says so.  Stage 1
 * holds 20 layers of 106,971,136 parameters per GPU (tests/test-headline.py:
 * (855,654,400 - 16,384) / 8 + 16,384), P = 2,139,422,720: bf16 parameters
 * gathered, 2P = 4,278,845,440 B; gradients whole in fp32, 4P =
 * 8,557,690,880 B; master weights 4P / dp 2 = 4,278,845,440 B and Adam's
 * moments 8P / 2 = 8,557,690,880 B.  Without PP, and with Megatron's
 * framework, --zero 3 stays ZeRO-3; torchtitan's shards of the gradients
 * are fp32 (FSDP2 reduce-scatters in its reduce dtype), 4 bytes against the
 * bf16 parameters' 2, where Megatron's ZeRO-3 keeps bf16 gradients. */
static void
test_torchtitan_fsdp_pp (void)
{
  g_autoptr (SimTopology) t = dgx8x4 ();
  g_autoptr (SimModel) m = model ("llama3-70b.xml");
  g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
  g_autoptr (SimPlan) p = NULL;
  g_autoptr (SimPlanRequest) flat_req = sim_plan_request_new ();
  g_autoptr (SimPlan) flat = NULL;
  g_autoptr (SimPlanRequest) mcore_req = sim_plan_request_new ();
  g_autoptr (SimPlan) mcore = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (SimMemory) mem = NULL;
  const SimStageMemory *s1;
  const guint64 P = 2139422720;
  gboolean said = FALSE;

  g_assert_true (sim_plan_request_parse_string (p_req, "tp=8,pp=4,dp=2,zero=3,framework=torchtitan", &error));
  g_assert_nonnull (p = sim_plan_resolve (p_req, t, m, &error));
  g_assert_cmpint (p->zero, ==, 1);
  g_assert_true (p->grad_reduce_fp32);
  for (guint k = 0; k < p->defaults->len; k++)
    said |= strstr (g_ptr_array_index (p->defaults, k), "reshard_after_forward=False") != NULL;
  g_assert_true (said);
  mem = sim_memory_compute (t, m, p);
  s1 = &g_array_index (mem->stages, SimStageMemory, 1);
  g_assert_cmpuint (s1->params, ==, P);
  g_assert_cmpuint (s1->params_bytes, ==, 2 * P);
  g_assert_cmpuint (s1->grads_bytes, ==, 4 * P);
  g_assert_cmpuint (s1->master_bytes, ==, 4 * P / 2);
  g_assert_cmpuint (s1->optimizer_bytes, ==, 8 * P / 2);
  g_assert_cmpuint (s1->buffer_bytes, ==, 0);

  g_assert_true (sim_plan_request_parse_string (flat_req, "tp=8,pp=1,dp=8,zero=3,framework=torchtitan", &error));
  g_assert_nonnull (flat = sim_plan_resolve (flat_req, t, m, &error));
  g_assert_cmpint (flat->zero, ==, 3);
  {
    g_autoptr (SimMemory) fm = sim_memory_compute (t, m, flat);
    const SimStageMemory *s0 = &g_array_index (fm->stages, SimStageMemory, 0);
    g_assert_cmpuint (s0->grads_bytes, ==, 2 * s0->params_bytes);
  }
  g_assert_true (sim_plan_request_parse_string (mcore_req, "tp=8,pp=4,dp=2,zero=3", &error));
  g_assert_nonnull (mcore = sim_plan_resolve (mcore_req, t, m, &error));
  g_assert_cmpint (mcore->zero, ==, 3);
  {
    g_autoptr (SimMemory) mm = sim_memory_compute (t, m, mcore);
    const SimStageMemory *s0 = &g_array_index (mm->stages, SimStageMemory, 0);
    g_assert_cmpuint (s0->grads_bytes, ==, s0->params_bytes);
  }
}

/* --framework fsdp is llm-foundry's FSDP, which runs no pipeline or context
 * parallelism and runs tensor parallelism as PyTorch's DTensor plans
 * (sim-plan-torchtitan.c, sim_plan_resolve_pytorch_parallelism): with tp,
 * pp or cp over 1 the plan takes torchtitan's mechanics and says so, and
 * FSDP alone stays llm-foundry's (its Triton attention kernel).  Under PP
 * the states are then torchtitan's (test_torchtitan_fsdp_pp): on Llama 3
 * 70B's stage 1 at tp 8, pp 4, P = 2,139,422,720 parameters with fp32
 * gradients, 4P bytes, where llm-foundry's ZeRO-3 would shard bf16 ones
 * over dp 2, P bytes. */
static void
test_fsdp_parallelism (void)
{
  g_autoptr (SimTopology) t = dgx8x4 ();
  g_autoptr (SimModel) m8 = model ("llama3-8b.xml");
  g_autoptr (SimModel) m70 = model ("llama3-70b.xml");
  const struct { const char *plan; gboolean titan; int attention; } cases[] = {
    { "tp=1,pp=1,cp=2,dp=32,framework=fsdp,zero=3", TRUE, SIM_ATTENTION_FLASH2 },
    { "tp=2,pp=1,dp=32,framework=fsdp,zero=3", TRUE, SIM_ATTENTION_FLASH2 },
    { "tp=1,pp=2,dp=32,framework=fsdp,zero=3", TRUE, SIM_ATTENTION_FLASH2 },
    { "tp=1,pp=1,dp=64,framework=fsdp,zero=3", FALSE, SIM_ATTENTION_TRITON },
    { "tp=2,pp=1,dp=32,framework=megatron", FALSE, SIM_ATTENTION_CUDNN },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (SimPlanRequest) req = sim_plan_request_new ();
    g_autoptr (SimPlan) p = NULL;
    g_autoptr (GError) error = NULL;
    gboolean said = FALSE;
    g_assert_true (sim_plan_request_parse_string (req, cases[i].plan, &error));
    g_assert_nonnull (p = sim_plan_resolve (req, t, m8, &error));
    for (guint k = 0; k < p->defaults->len; k++)
      said |= strstr (g_ptr_array_index (p->defaults, k), "PyTorch-native parallelism") != NULL;
    g_assert_cmpint (p->framework == SIM_FRAMEWORK_TORCHTITAN, ==, cases[i].titan);
    g_assert_cmpint (said, ==, cases[i].titan);
    g_assert_cmpint (p->attention_kernel, ==, cases[i].attention);
  }
  {
    g_autoptr (SimPlanRequest) req = sim_plan_request_new ();
    g_autoptr (SimPlan) p = NULL;
    g_autoptr (GError) error = NULL;
    g_autoptr (SimMemory) mem = NULL;
    const guint64 P = 2139422720;
    g_assert_true (sim_plan_request_parse_string (req, "tp=8,pp=4,dp=2,zero=3,framework=fsdp", &error));
    g_assert_nonnull (p = sim_plan_resolve (req, t, m70, &error));
    g_assert_cmpint (p->zero, ==, 1);
    mem = sim_memory_compute (t, m70, p);
    g_assert_cmpuint (g_array_index (mem->stages, SimStageMemory, 1).params, ==, P);
    g_assert_cmpuint (g_array_index (mem->stages, SimStageMemory, 1).grads_bytes, ==, 4 * P);
  }
}

/* A resolved plan holds no "unset" value (sim-plan.h): over dense and
 * mixture-of-experts models, Megatron, FSDP and torchtitan, FP8 on and off,
 * LoRA, with every option left to its default but the layout, each field
 * that a request leaves unset (0, -1 or < 0) is resolved; fp8_recipe is
 * -1 exactly when FP8 is off, and moe_imbalance 0 exactly for a dense
 * model.  And a request made from a plan (sim_plan_request_of) resolves
 * to the same plan, field by field. */
static void
test_resolved_sets_all (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 4);
  static const struct {
    const char *model, *plan;
  } cases[] = {
    { "llama3-8b.xml", "tp=8,pp=1" },
    { "llama3-8b.xml", "tp=1,pp=1,framework=fsdp,zero=3" },
    { "llama3-8b.xml", "tp=2,pp=2,framework=torchtitan,zero=3,recompute=selective" },
    { "llama3-8b.xml", "tp=2,pp=2,framework=fsdp,zero=3,recompute=selective" },
    { "llama3-8b.xml", "tp=8,pp=4,fp8=hybrid,schedule=interleaved" },
    { "llama3-8b.xml", "tp=2,pp=1,lora-rank=16" },
    { "deepseek-v3.xml", "tp=1,pp=8,ep=4,fp8=hybrid,fp8-recipe=blockwise" },
    { "qwen3-30b-a3b.xml", "tp=1,pp=1,ep=8,cuda-graph-impl=transformer_engine,cuda-graph-scope=attn+moe_router" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (SimModel) m = model (cases[i].model);
    g_autoptr (SimPlan) p = test_resolve_plan (t, m, cases[i].plan);
    g_autoptr (SimPlanRequest) again = sim_plan_request_of (p);
    g_autoptr (SimPlan) q = NULL;
    SimPlan a, b;
    g_test_message ("%s %s", cases[i].model, cases[i].plan);
    g_assert_cmpint (MIN (MIN (p->tp, p->cp), MIN (p->pp, p->dp)), >=, 1);
    g_assert_cmpint (MIN (MIN (p->ep, p->etp), p->edp), >=, 1);
    g_assert_cmpint (p->micro_batch, >=, 1);
    g_assert_cmpuint (p->global_batch, >=, 1);
    g_assert_cmpuint (p->seq_len, >=, 1);
    g_assert_cmpuint (p->micro_batches, >=, 1);
    g_assert_cmpint (p->virtual_stages, >=, 1);
    g_assert_cmpint (p->layers_per_virtual_stage, ==, 0);
    g_assert_true (p->sequence_parallel == 0 || p->sequence_parallel == 1);
    g_assert_true (p->flash_attention == 0 || p->flash_attention == 1);
    g_assert_true (p->zero >= 0 && p->zero <= 3);
    g_assert_true (p->tp_comm_overlap == 0 || p->tp_comm_overlap == 1);
    g_assert_true (p->torch_compile == 0 || p->torch_compile == 1);
    g_assert_true (p->overlap_param_gather == 0 || p->overlap_param_gather == 1);
    g_assert_true (p->moe_a2a_overlap == 0 || p->moe_a2a_overlap == 1);
    g_assert_true (p->fp8_params == 0 || p->fp8_params == 1);
    g_assert_cmpint (p->attention_kernel, >=, 0);
    g_assert_cmpint (p->mtp_layers, >=, 0);
    g_assert_cmpfloat (p->context_reserve_bytes, >=, 0);
    g_assert_cmpfloat (p->fragmentation, >=, 0);
    g_assert_cmpfloat (p->gpu_variation, >=, 0);
    g_assert_true ((p->fp8_recipe == -1) == (p->fp8 == SIM_FP8_OFF));
    g_assert_true ((p->moe_imbalance == 0) == !sim_model_is_moe (m));
    g_assert_nonnull (p->defaults);
    g_assert_nonnull (p->request);
    g_assert_nonnull (q = sim_plan_resolve (again, t, m, NULL));
    a = *p;
    b = *q;
    a.defaults = b.defaults = NULL;
    a.request = b.request = NULL;
    g_assert_true (memcmp (&a, &b, sizeof a) == 0);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/plan/ranks", test_ranks);
  g_test_add_func ("/plan/order", test_order);
  g_test_add_func ("/plan/uneven", test_uneven);
  g_test_add_func ("/plan/defaults", test_defaults);
  g_test_add_func ("/plan/tp-overlap-default", test_tp_overlap_default);
  g_test_add_func ("/plan/errors", test_errors);
  g_test_add_func ("/plan/offload-host-link", test_offload_host_link);
  g_test_add_func ("/plan/uneven-chunks", test_uneven_chunks);
  g_test_add_func ("/plan/megatron-split", test_megatron_split);
  g_test_add_func ("/plan/resolve-model", test_resolve_model);
  g_test_add_func ("/plan/set-number", test_set_number);
  g_test_add_func ("/plan/torchtitan-fsdp-pp", test_torchtitan_fsdp_pp);
  g_test_add_func ("/plan/fsdp-parallelism", test_fsdp_parallelism);
  g_test_add_func ("/plan/resolved-sets-all", test_resolved_sets_all);
  return g_test_run ();
}
