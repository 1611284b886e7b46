/* sim-plan-pipeline.c — the pipeline of a plan: its schedule, how its
 * layers split over the stages and chunks, and which chunk holds what
 * (sim-plan.h); the resolution steps sim_plan_resolve calls
 * (sim-plan-private.h) */
#include "sim-plan.h"
#include "sim-plan-private.h"
#include "sim-schedule.h"

#include <string.h>

#include "sim-error.h"

/* whether the plan splits the layers over the stages as Megatron-Core's
 * uneven options say, rather than sim's even split */
static gboolean
explicit_split (const SimPlan *plan)
{
  return plan->first_stage_layers > 0 || plan->last_stage_layers > 0 || plan->embedding_in_split ||
         plan->loss_in_split;
}

/* the layers of each pipeline stage that is neither a given first nor a
 * given last one (--first-stage-layers, --last-stage-layers), and how many
 * such stages there are */
static void
middle_stages (const SimPlan *plan, const SimModel *model, guint64 *layers, guint64 *count)
{
  guint64 rest = model->layers, left = (guint64) plan->pp;
  if (plan->first_stage_layers > 0)
    rest -= MIN (rest, (guint64) plan->first_stage_layers), left--;
  if (plan->last_stage_layers > 0)
    rest -= MIN (rest, (guint64) plan->last_stage_layers), left--;
  *count = left;
  *layers = left > 0 ? rest / left : 0;
}

/* Megatron-Core's pipeline layout (PipelineParallelLayerLayout in
 * megatron/core/transformer/pipeline_parallel_layer_layout.py): pp x v
 * virtual stages, v the chunks per rank (its __init__ divides by pp), the
 * model's layers all placed (validate_layer_layout), the MTP layers
 * mtp_num_layers of them (get_mtp_num_layers_to_build asserts the count);
 * it replaces the other ways of splitting the layers */
gboolean
sim_plan_resolve_pipeline_layout (SimPlan *plan, const SimModel *model, GError **error)
{
  const SimLayout *l = plan->layout != NULL ? &plan->layout->layout : NULL;
  guint64 sum = 0;
  if (l == NULL)
    return TRUE;
  if (l->n % (guint) plan->pp != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--pipeline-model-parallel-layout: expected a multiple of pp %d virtual stages, got %u",
                 plan->pp, l->n);
    return FALSE;
  }
  if ((given (plan, KEY_VIRTUAL_STAGES) && (guint) plan->virtual_stages != l->n / (guint) plan->pp) ||
      plan->layers_per_virtual_stage > 0 || explicit_split (plan)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--pipeline-model-parallel-layout: expected it alone to split the layers (its %u "
                 "virtual stages are %u per rank of pp %d), without --virtual-stages %d, "
                 "--layers-per-virtual-stage or an uneven split", l->n, l->n / (guint) plan->pp,
                 plan->pp, plan->virtual_stages);
    return FALSE;
  }
  for (guint k = 0; k < l->n; k++)
    sum += l->layers[k];
  if (sum != model->layers) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--pipeline-model-parallel-layout: expected the %" G_GUINT64_FORMAT
                 " layers of %s, got %" G_GUINT64_FORMAT, model->layers, model->name, sum);
    return FALSE;
  }
  if (given (plan, KEY_MTP_LAYERS) && (guint64) plan->mtp_layers != l->mtp) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--mtp-num-layers %d: expected as many m in --pipeline-model-parallel-layout, got %"
                 G_GUINT64_FORMAT, plan->mtp_layers, l->mtp);
    return FALSE;
  }
  if (l->mtp > 64) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--pipeline-model-parallel-layout: expected at most 64 m (MTP layers), got %"
                 G_GUINT64_FORMAT, l->mtp);
    return FALSE;
  }
  plan->mtp_layers = (int) l->mtp;
  plan->virtual_stages = (int) (l->n / (guint) plan->pp);
  plan->given |= G_GUINT64_CONSTANT (1) << KEY_VIRTUAL_STAGES;
  plan->given |= G_GUINT64_CONSTANT (1) << KEY_MTP_LAYERS;
  return TRUE;
}

/* Megatron-Core's uneven pipeline split, refused where its
 * get_num_layers_to_build asserts (transformer_block.py) */
gboolean
sim_plan_resolve_split (SimPlan *plan, const SimModel *model, GError **error)
{
  guint64 L = model->layers, pp = (guint64) plan->pp, v = (guint64) MAX (plan->virtual_stages, 1);
  gboolean edges = plan->first_stage_layers > 0 || plan->last_stage_layers > 0;
  if (!explicit_split (plan))
    return TRUE;
  if (pp < 2) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "an uneven pipeline split (--first-stage-layers, --last-stage-layers, "
                 "--account-for-embedding/loss-in-pipeline-split) needs pp of at least 2, got pp %d",
                 plan->pp);
    return FALSE;
  }
  if (edges && (plan->embedding_in_split || plan->loss_in_split)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--first-stage-layers and --last-stage-layers exclude "
                 "--account-for-embedding/loss-in-pipeline-split, as in Megatron-Core: give one way "
                 "of splitting the layers");
    return FALSE;
  }
  if (edges) {
    guint64 given_layers = (guint64) MAX (plan->first_stage_layers, 0) + (guint64) MAX (plan->last_stage_layers, 0);
    guint64 per, left;
    middle_stages (plan, model, &per, &left);
    if (given_layers > L || (left == 0 && given_layers != L) || (left > 0 && (given_layers == L ||
                                                                             (L - given_layers) % left != 0))) {
      g_autofree char *first = plan->first_stage_layers > 0
                                   ? g_strdup_printf ("--first-stage-layers %d", plan->first_stage_layers)
                                   : NULL;
      g_autofree char *last = plan->last_stage_layers > 0
                                  ? g_strdup_printf ("--last-stage-layers %d", plan->last_stage_layers)
                                  : NULL;
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "%s%s%s leave%s %" G_GUINT64_FORMAT " of the %" G_GUINT64_FORMAT
                   " layers of %s for the other %" G_GUINT64_FORMAT
                   " stages: expected a split that gives each of them the same number, at least one",
                   first != NULL ? first : "", first != NULL && last != NULL ? " and " : "",
                   last != NULL ? last : "", first != NULL && last != NULL ? "" : "s",
                   L - MIN (L, given_layers), L, model->name, left);
      return FALSE;
    }
    for (guint64 s = 0; s < pp; s++) {
      guint64 n = s == 0 && plan->first_stage_layers > 0      ? (guint64) plan->first_stage_layers
                  : s == pp - 1 && plan->last_stage_layers > 0 ? (guint64) plan->last_stage_layers
                                                               : per;
      if (n % v != 0) {
        g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                     "pipeline stage %" G_GUINT64_FORMAT " holds %" G_GUINT64_FORMAT
                     " layers, which its %" G_GUINT64_FORMAT " virtual stages must divide",
                     s, n, v);
        return FALSE;
      }
    }
  } else {
    guint64 N = L + (plan->embedding_in_split ? 1 : 0) + (plan->loss_in_split ? 1 : 0);
    const char *what = plan->embedding_in_split && plan->loss_in_split ? "the embedding and the loss"
                       : plan->embedding_in_split                      ? "the embedding"
                                                                       : "the loss";
    if (N % (pp * v) != 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "the %" G_GUINT64_FORMAT " layers of %s, with %s counted as %s, make %"
                   G_GUINT64_FORMAT ", which pp %d x %" G_GUINT64_FORMAT " virtual stages must divide",
                   L, model->name, what,
                   plan->embedding_in_split && plan->loss_in_split ? "one layer each" : "a layer", N,
                   plan->pp, v);
      return FALSE;
    }
    /* resolve_schedule has checked N >= pp x v, so each chunk counts at
     * least one layer: with exactly one, the first chunk holds the
     * embedding alone and the last the output layer and loss alone, as
     * Megatron-Core builds them */
  }
  return TRUE;
}

/* the schedules of two chunks per rank (sim-schedule.h): the V-shaped
 * ones, rank r holding model chunks r and 2p - 1 - r, an even split of the
 * layers over the 2p chunks (as torchtitan's pipeline_module_split; the
 * first and last chunks give one up first where it is uneven), DualPipeV
 * with at least 2p micro-batches (torch.distributed.pipelining's
 * ScheduleDualPipeV: "at least as many microbatches as stages"); and
 * DualPipe, two copies of the model split over the p ranks as 1F1B's one,
 * on an even number of ranks with an even number of micro-batches, at
 * least 2p (dualpipe.py's step: "num_ranks % 2 == 0", "num_chunks % 2 ==
 * 0 and num_chunks >= num_ranks * 2") */
static gboolean
resolve_two_chunk_schedule (SimPlan *plan, const SimModel *model, GError **error)
{
  const char *name = sim_schedule_name (plan->schedule);
  gboolean dual = plan->schedule == SIM_SCHEDULE_DUALPIPE;
  guint64 chunks = dual ? (guint64) plan->pp : 2 * (guint64) plan->pp;
  if (given (plan, KEY_VIRTUAL_STAGES) && plan->virtual_stages != 2) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--schedule %s places two model chunks on each rank, got --virtual-stages %d", name,
                 plan->virtual_stages);
    return FALSE;
  }
  plan->virtual_stages = 2;
  if (plan->pp < 2) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN, "--schedule %s needs pp of at least 2, got pp %d",
                 name, plan->pp);
    return FALSE;
  }
  if (plan->layout != NULL || explicit_split (plan)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--schedule %s splits the layers evenly over its 2 x pp chunks: expected no "
                 "pipeline layout, --first-stage-layers, --last-stage-layers or embedding and loss "
                 "counted as layers", name);
    return FALSE;
  }
  if (model->layers < chunks) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--schedule %s needs a layer in each of its %" G_GUINT64_FORMAT " model chunks; %s has %"
                 G_GUINT64_FORMAT " layers", name, chunks, model->name, model->layers);
    return FALSE;
  }
  if (dual && (plan->pp % 2 != 0 || plan->micro_batches % 2 != 0 ||
               plan->micro_batches < 2 * (guint64) plan->pp)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--schedule dualpipe needs an even pp and an even number of micro-batches per "
                 "replica, at least 2 x pp (half enter at each end), got pp %d and %" G_GUINT64_FORMAT,
                 plan->pp, plan->micro_batches);
    return FALSE;
  }
  if (model->layers % chunks != 0) {
    guint64 n = chunks, full = (model->layers + n - 1) / n;
    sim_plan_note_default (plan, "uneven chunks: %" G_GUINT64_FORMAT " of the %" G_GUINT64_FORMAT
                        " model chunks hold %" G_GUINT64_FORMAT " layers, the others %" G_GUINT64_FORMAT
                        " (the first and last chunks give one up first)",
                  n * full - model->layers, n, full - 1, full);
  }
  if (plan->schedule == SIM_SCHEDULE_DUALPIPE_V && plan->micro_batches < 2 * (guint64) plan->pp) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--schedule dualpipe-v needs at least 2 x pp = %d micro-batches per replica, got %"
                 G_GUINT64_FORMAT, 2 * plan->pp, plan->micro_batches);
    return FALSE;
  }
  return TRUE;
}

/* the pipeline schedule, uneven stages and the interleaved schedule's virtual stages */
gboolean
sim_plan_resolve_schedule (SimPlan *plan, const SimModel *model, GError **error)
{
  /* Megatron counts layers per chunk; sim counts chunks per pipeline rank */
  if (plan->layers_per_virtual_stage > 0) {
    guint64 n = (guint64) plan->layers_per_virtual_stage, per_rank = n * (guint64) plan->pp;
    int v = 0;
    if (model->layers % per_rank != 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--layers-per-virtual-stage %d (Megatron's --num-layers-per-virtual-pipeline-"
                   "stage): pp %d x %d layers per chunk must divide the %" G_GUINT64_FORMAT
                   " layers of %s", plan->layers_per_virtual_stage, plan->pp,
                   plan->layers_per_virtual_stage, model->layers, model->name);
      return FALSE;
    }
    v = (int) (model->layers / per_rank);
    if (given (plan, KEY_VIRTUAL_STAGES) && plan->virtual_stages != v) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--layers-per-virtual-stage %d gives %d virtual stages (%" G_GUINT64_FORMAT
                   " layers / (pp %d x %d)), but --virtual-stages is %d",
                   plan->layers_per_virtual_stage, v, model->layers, plan->pp,
                   plan->layers_per_virtual_stage, plan->virtual_stages);
      return FALSE;
    }
    plan->virtual_stages = v;
    /* converted once: a copy of the resolved plan keeps the chunks, as with --virtual-stages */
    plan->layers_per_virtual_stage = 0;
    plan->given |= G_GUINT64_CONSTANT (1) << KEY_VIRTUAL_STAGES;
  }
  if (!given (plan, KEY_SCHEDULE)) {
    plan->schedule = plan->virtual_stages > 1 ? SIM_SCHEDULE_INTERLEAVED : SIM_SCHEDULE_1F1B;
    sim_plan_note_default (plan, "--schedule %s", sim_schedule_name (plan->schedule));
  }
  if (sim_schedule_chunks (plan->schedule) == 2)
    return resolve_two_chunk_schedule (plan, model, error);
  if (model->layers % (guint64) plan->pp != 0 && plan->schedule != SIM_SCHEDULE_INTERLEAVED &&
      !explicit_split (plan) && plan->layout == NULL) {
    sim_plan_note_default (plan, "uneven stages: %" G_GUINT64_FORMAT " of %d hold %" G_GUINT64_FORMAT
                        " layers, the others %" G_GUINT64_FORMAT " (the first and last stages give one up first, as Llama 3)",
                  (guint64) plan->pp * ((model->layers + plan->pp - 1) / plan->pp) - model->layers, plan->pp,
                  model->layers / plan->pp, (model->layers + plan->pp - 1) / plan->pp);
  }
  if (plan->schedule != SIM_SCHEDULE_INTERLEAVED) {
    if (plan->virtual_stages > 1) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--virtual-stages %d needs --schedule interleaved, got --schedule %s",
                   plan->virtual_stages, sim_schedule_name (plan->schedule));
      return FALSE;
    }
    plan->virtual_stages = 1;
    return TRUE;
  }
  if (plan->pp < 2) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "the interleaved schedule needs pp of at least 2, got pp %d", plan->pp);
    return FALSE;
  }
  if (plan->virtual_stages == 0) {
    guint64 per_stage = model->layers / (guint64) plan->pp;
    plan->virtual_stages = per_stage % 2 == 0 ? 2 : (int) per_stage;
    sim_plan_note_default (plan, "--virtual-stages %d", plan->virtual_stages);
  }
  /* two chunks more than layers: Megatron-Core builds that split only with
   * the embedding and the loss counted as a layer each (transformer_block.py
   * get_num_layers_to_build asserts the division otherwise), the first
   * chunk holding the embedding alone and the last the output layer and
   * loss: Llama 3.1 405B's 126 layers on pp 16 x vp 8, as Megatron-Bridge's
   * GB200 MXFP8 and NVFP4 presets run it (rows mbridge2602_gb200_llama31_
   * 405b_* of tests/validation/data/blackwell; tools/blackwell-check.py
   * counted_split) */
  if (plan->layout == NULL && !explicit_split (plan) && !given (plan, KEY_EMBEDDING_IN_SPLIT) &&
      !given (plan, KEY_LOSS_IN_SPLIT) && plan->virtual_stages >= 2 &&
      model->layers + 2 == (guint64) plan->pp * (guint64) plan->virtual_stages) {
    plan->embedding_in_split = plan->loss_in_split = TRUE;
    sim_plan_note_default (plan,
                  "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split "
                  "(the %" G_GUINT64_FORMAT
                  " layers of %s fill the pp %d x %d model chunks only so, "
                  "as Megatron-Core builds them)",
                  model->layers, model->name, plan->pp, plan->virtual_stages);
  }
  /* (a layout may leave a chunk without layers, as Megatron-Core's) */
  if (plan->virtual_stages < 2 ||
      (plan->layout == NULL &&
       model->layers + (plan->embedding_in_split ? 1 : 0) + (plan->loss_in_split ? 1 : 0) <
           (guint64) plan->pp * (guint64) plan->virtual_stages)) {
    g_set_error (
        error, SIM_ERROR, SIM_ERROR_PLAN,
        "the interleaved schedule needs at least 2 virtual stages and a layer in each of the "
        "pp %d x virtual stages %d model chunks; %s has %" G_GUINT64_FORMAT
        " layers (--account-for-embedding-in-pipeline-split and "
        "--account-for-loss-in-pipeline-split count the embedding and the loss as one more each)",
        plan->pp, plan->virtual_stages, model->name, model->layers);
    return FALSE;
  }
  if (plan->micro_batches % (guint64) plan->pp != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "the interleaved schedule needs the %" G_GUINT64_FORMAT
                 " micro-batches per replica to be a multiple of pp %d (as Megatron requires)",
                 plan->micro_batches, plan->pp);
    return FALSE;
  }
  {
    guint64 n = (guint64) plan->pp * (guint64) plan->virtual_stages;
    guint64 full = (model->layers + n - 1) / n;
    if (model->layers % n != 0 && !explicit_split (plan) && plan->layout == NULL)
      sim_plan_note_default (plan, "uneven chunks: %" G_GUINT64_FORMAT " of the %" G_GUINT64_FORMAT
                          " model chunks hold %" G_GUINT64_FORMAT " layers, the others %" G_GUINT64_FORMAT
                          " (the first and last chunks give one up first, as Llama 3's stages)",
                    n * full - model->layers, n, full - 1, full);
  }
  return TRUE;
}

int
sim_plan_virtual_stage (const SimPlan *plan, int stage, int chunk)
{
  if (plan->schedule == SIM_SCHEDULE_DUALPIPE)
    return chunk == 0 ? stage : plan->pp - 1 - stage;
  if (sim_schedule_is_v (plan->schedule))
    return chunk == 0 ? stage : 2 * plan->pp - 1 - stage;
  return chunk * plan->pp + stage;
}

void
sim_plan_chunk_at (const SimPlan *plan, int k, int *stage, int *chunk)
{
  if (sim_schedule_is_v (plan->schedule)) {
    *chunk = k < plan->pp ? 0 : 1;
    *stage = k < plan->pp ? k : 2 * plan->pp - 1 - k;
    return;
  }
  *stage = k % plan->pp;
  *chunk = k / plan->pp;
}

gboolean
sim_plan_chunk_is_first (const SimPlan *plan, int stage, int chunk)
{
  return sim_plan_virtual_stage (plan, stage, chunk) == 0;
}

/* the model's chunks in order: pp x v, or pp blocks under dualpipe */
static int
model_chunks (const SimPlan *plan)
{
  return plan->schedule == SIM_SCHEDULE_DUALPIPE ? plan->pp : plan->pp * MAX (plan->virtual_stages, 1);
}

gboolean
sim_plan_chunk_is_last (const SimPlan *plan, int stage, int chunk)
{
  return sim_plan_virtual_stage (plan, stage, chunk) == model_chunks (plan) - 1;
}

gboolean
sim_plan_stage_has_output (const SimPlan *plan, int stage)
{
  if (plan->schedule == SIM_SCHEDULE_DUALPIPE)
    return stage == 0 || stage == plan->pp - 1;
  return stage == (sim_schedule_is_v (plan->schedule) ? 0 : plan->pp - 1);
}

gboolean
sim_plan_stage_has_embedding (const SimPlan *plan, int stage)
{
  return stage == 0 || (plan->schedule == SIM_SCHEDULE_DUALPIPE && stage == plan->pp - 1);
}

gboolean
sim_plan_ends_share_rank (const SimPlan *plan)
{
  return plan->pp == 1 || sim_schedule_is_v (plan->schedule);
}

guint64
sim_plan_chunk_layers (const SimPlan *plan, const SimModel *model, int stage, int chunk)
{
  guint64 v = (guint64) MAX (plan->virtual_stages, 1), n = (guint64) model_chunks (plan);
  guint64 k = (guint64) sim_plan_virtual_stage (plan, stage, chunk); /* in model order */
  guint64 full = (model->layers + n - 1) / n, deficit = n * full - model->layers;
  if (plan->layout != NULL)
    return plan->layout->layout.layers[k];
  if (plan->first_stage_layers > 0 || plan->last_stage_layers > 0) {
    guint64 per, left;
    middle_stages (plan, model, &per, &left);
    if (stage == 0 && plan->first_stage_layers > 0)
      per = (guint64) plan->first_stage_layers;
    else if (stage == plan->pp - 1 && plan->last_stage_layers > 0)
      per = (guint64) plan->last_stage_layers;
    return per / v;
  }
  if (plan->embedding_in_split || plan->loss_in_split) {
    guint64 per = (model->layers + (plan->embedding_in_split ? 1 : 0) + (plan->loss_in_split ? 1 : 0)) / n;
    return per - (k == 0 && plan->embedding_in_split ? 1 : 0) - (k == n - 1 && plan->loss_in_split ? 1 : 0);
  }
  /* the order in which chunks give up a layer: 0, n-1, 1, n-2, ... */
  guint64 rank = k < (n + 1) / 2 ? 2 * k : 2 * (n - 1 - k) + 1;
  return rank < deficit ? full - 1 : full;
}

guint64
sim_plan_chunk_mtp_layers (const SimPlan *plan, int stage, int chunk)
{
  return sim_plan_chunk_is_last (plan, stage, chunk) ? (guint64) MAX (plan->mtp_layers, 0) : 0;
}

guint64
sim_plan_chunk_first_layer (const SimPlan *plan, const SimModel *model, int stage, int chunk)
{
  guint64 first = 0;
  int k = sim_plan_virtual_stage (plan, stage, chunk);
  for (int j = 0; j < k; j++) {
    int s, c;
    if (plan->schedule == SIM_SCHEDULE_DUALPIPE)
      s = j, c = 0; /* block j of the first copy */
    else
      sim_plan_chunk_at (plan, j, &s, &c);
    first += sim_plan_chunk_layers (plan, model, s, c);
  }
  return first;
}

int
sim_plan_chunk_rank_offset (const SimPlan *plan, const SimModel *model, int stage, int chunk)
{
  guint64 n = 0;
  for (int c = 0; c < chunk; c++)
    n += sim_plan_chunk_layers (plan, model, stage, c) + sim_plan_chunk_mtp_layers (plan, stage, c);
  return (int) n;
}

void
sim_plan_chunk_recomputed (const SimPlan *plan, const SimModel *model, int stage, int chunk,
                           int *dense, int *moe)
{
  int lc, offset;
  guint64 first;
  *dense = *moe = 0;
  if (plan->recompute != SIM_RECOMPUTE_FULL)
    return;
  lc = (int) (sim_plan_chunk_layers (plan, model, stage, chunk) +
              sim_plan_chunk_mtp_layers (plan, stage, chunk));
  offset = sim_plan_chunk_rank_offset (plan, model, stage, chunk);
  first = sim_plan_chunk_first_layer (plan, model, stage, chunk);
  for (int i = 0; i < lc; i++)
    if (sim_plan_layer_recompute (plan, offset, i) != SIM_LAYER_KEPT) {
      if (sim_model_layer_is_moe (model, first + (guint64) i))
        (*moe)++;
      else
        (*dense)++;
    }
}

guint64
sim_plan_stage_layers (const SimPlan *plan, const SimModel *model, int stage)
{
  guint64 n = 0;
  for (int c = 0; c < MAX (plan->virtual_stages, 1); c++)
    n += sim_plan_chunk_layers (plan, model, stage, c);
  return n;
}

guint64
sim_plan_stage_first_layer (const SimPlan *plan, const SimModel *model, int stage)
{
  return sim_plan_chunk_first_layer (plan, model, stage, 0);
}
