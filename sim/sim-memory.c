/* sim-memory.c — see sim-memory.h for the ledger and its sources */
#include "sim-memory.h"

#include <math.h>
#include <string.h>

#include "sim-activation.h"
#include "sim-format.h"
#include "sim-schedule.h"

void
sim_recipe_bytes (SimRecipe recipe, int *params, int *grads, int *master, int *optimizer,
                  int *accum)
{
  /* see the table in sim-memory.h */
  *params = 2, *grads = 2, *master = 4, *optimizer = 8, *accum = 0;
  switch (recipe) {
  case SIM_RECIPE_BF16_ADAM: break;
  case SIM_RECIPE_BF16_ADAM_FP32_ACCUM: *accum = 4; break;
  case SIM_RECIPE_FP32_ADAM: *params = 4, *grads = 4, *master = 0; break;
  case SIM_RECIPE_BF16_ADAM8BIT: *optimizer = 2; break;
  case SIM_RECIPE_BF16_SGD: *optimizer = 0; break;
  case SIM_RECIPE_BF16_ADAM_BF16_STATES: *master = 2, *optimizer = 4; break;
  }
}

void
sim_plan_state_bytes (const SimPlan *plan, int *params, int *grads, int *master, int *optimizer,
                      int *accum)
{
  sim_recipe_bytes (plan->recipe, params, grads, master, optimizer, accum);
  if ((plan->grad_reduce_fp32 || plan->framework == SIM_FRAMEWORK_TORCHTITAN) && *grads + *accum < 4)
    *grads = 4;
}

const char *
sim_oom_case_name (SimOomCase c)
{
  switch (c) {
  case SIM_OOM_A: return "A";
  case SIM_OOM_B: return "B";
  case SIM_OOM_C: return "C";
  case SIM_OOM_NONE: break;
  }
  return NULL;
}

guint64
sim_memory_in_flight (SimSchedule schedule, int pp, int stage, guint64 m, int v)
{
  switch (schedule) {
  case SIM_SCHEDULE_GPIPE:
    return m;
  case SIM_SCHEDULE_1F1B:
    return MIN ((guint64) (pp - stage), m);
  case SIM_SCHEDULE_INTERLEAVED: {
    /* Megatron's interleaved schedule: warm-up forwards, then one more
     * before the first backward (schedules.py, num_warmup_microbatches) */
    guint64 warmup = (guint64) (pp - stage - 1) * 2 + (guint64) (v - 1) * (guint64) pp;
    return MIN (warmup + 1, m * (guint64) v);
  }
  case SIM_SCHEDULE_ZB_H1:
    /* every stage's forwards reach p before its first weight gradient
     * frees one (sim-schedule.h): p - 1 warm-up and held-back ones, then
     * one more */
    return MIN ((guint64) pp, m);
  case SIM_SCHEDULE_ZB_V:
  case SIM_SCHEDULE_DUALPIPE_V:
  case SIM_SCHEDULE_DUALPIPE: {
    /* the most chunks whose forward has run and weight gradient not, in
     * micro-batches of two chunks (rounded up), or of one under DualPipe */
    g_autoptr (GArray) order = sim_schedule_stage (schedule, pp, stage, (int) m, v);
    guint64 level = 0, best = 0;
    for (guint i = 0; i < order->len; i++) {
      const SimPipeOp *op = &g_array_index (order, SimPipeOp, i);
      if (op->kind == SIM_PASS_FORWARD)
        best = MAX (best, ++level);
      else if (op->kind == SIM_PASS_WEIGHT)
        level--;
    }
    return schedule == SIM_SCHEDULE_DUALPIPE ? best : (best + 1) / 2;
  }
  }
  return m;
}

static guint64
div_up (guint64 a, guint64 b)
{
  return (a + b - 1) / b;
}

/* QLoRA NF4 weights: 4 bits plus double-quantised constants of 8 bits per
 * 64-weight block and 32 bits per 256 blocks (Dettmers et al. 2023, 3):
 * 4 + 8/64 + 32/(64*256) = 4.127 bits per weight */
static guint64
nf4_bytes (guint64 weights)
{
  return (guint64) ceil ((double) weights * (4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0);
}

static void
verdict (SimMemory *mem)
{
  mem->peak_bytes = 0;
  mem->peak_stage = 0;
  mem->oom_case = SIM_OOM_NONE;
  mem->fits = TRUE;
  for (guint i = 0; i < mem->stages->len; i++) {
    SimStageMemory *st = &g_array_index (mem->stages, SimStageMemory, i);
    if (st->peak_bytes > mem->peak_bytes) {
      mem->peak_bytes = st->peak_bytes;
      mem->peak_stage = st->stage;
    }
  }
  mem->tight = FALSE;
  /* Above usable but within what the context leaves: the run fits only if
   * the allocator fragments less than the allowance assumes (an allowance
   * the tightest published runs bound, not a measured fragmentation,
   * sim-memory.h): a verdict of its own, "tight", not out of memory */
  if (mem->peak_bytes > mem->usable_bytes &&
      mem->peak_bytes + mem->context_reserve_bytes <= mem->capacity_bytes) {
    mem->tight = TRUE;
    return;
  }
  if (mem->peak_bytes > mem->usable_bytes) {
    mem->fits = FALSE;
    mem->oom_case = SIM_OOM_B;
    for (guint i = 0; i < mem->stages->len; i++) {
      SimStageMemory *st = &g_array_index (mem->stages, SimStageMemory, i);
      if (st->states_bytes > mem->usable_bytes && mem->oom_case == SIM_OOM_B)
        mem->oom_case = SIM_OOM_A;
      if (st->largest_layer_states_bytes + st->largest_layer_activation_bytes > mem->usable_bytes)
        mem->oom_case = SIM_OOM_C;
    }
  }
}

void
sim_memory_apply_timeline (SimMemory *mem, const guint64 *peak_activation_bytes)
{
  for (guint i = 0; i < mem->stages->len; i++) {
    SimStageMemory *st = &g_array_index (mem->stages, SimStageMemory, i);
    st->activations_peak_bytes = peak_activation_bytes[i];
    st->peak_bytes = st->states_bytes + st->activations_peak_bytes;
  }
  verdict (mem);
}

/* what every stage of one ledger shares: per-GPU parameter counts, the
 * recipe's bytes per parameter and the activations of one micro-batch.
 * An MoE layer's per-GPU parameters are moe_dense_gpu (attention, norms,
 * router, shared experts; sharded by ZeRO over dp x cp like a dense
 * layer) plus expert_gpu (its E/ep routed experts, each split over etp;
 * sharded by ZeRO over the expert data-parallel group, edp). */
typedef struct {
  const SimModel *model;
  const SimPlan *plan;
  guint64 tp, shards, expert_shards;
  guint64 layer_gpu, vocab_gpu, lora_layer_gpu;
  guint64 moe_dense_gpu, expert_gpu;
  int pb, gb, mb, ob, ab;
  const SimActivations *layer_act, *moe_act, *emb_act, *out_act;
  /* the layers full recomputation leaves alone (--recompute-method): NULL
   * when it recomputes every layer (sim_memory_kept_activations) */
  const SimActivations *layer_kept, *moe_kept;
  /* the last chunk's multi-token-prediction modules beyond their layers:
   * saved bytes per micro-batch (sim_activations_mtp, times the modules) */
  guint64 mtp_act_bytes;
} Ledger;

/* a state's bytes on one GPU: the dense part sharded over dp x cp and the
 * routed experts' over edp when the ZeRO stage shards it */
static guint64
split_bytes (const Ledger *l, guint64 dense, guint64 experts, gboolean sharded)
{
  if (!sharded)
    return dense + experts;
  return div_up (dense, l->shards) + div_up (experts, l->expert_shards);
}

/* one layer's per-GPU parameters (before ZeRO) and saved activations */
static guint64
layer_gpu_params (const Ledger *l, gboolean moe)
{
  return moe ? l->moe_dense_gpu + l->expert_gpu : l->layer_gpu;
}

static const SimActivations *
layer_activations (const Ledger *l, gboolean moe)
{
  return moe ? l->moe_act : l->layer_act;
}

/* the largest per-GPU layer of the stage: its parameters and activations */
static guint64
largest_layer_params (const Ledger *l, const SimStageMemory *st)
{
  return MAX (st->layers > st->moe_layers ? l->layer_gpu : 0,
              st->moe_layers > 0 ? layer_gpu_params (l, TRUE) : 0);
}

/* the GPU's memory less the context reserve and the fragmentation allowance */
static void
memory_budget (SimMemory *mem, const SimGpuType *gpu, const SimPlan *plan)
{
  guint64 usable_left = 0;

  mem->hbm_capacity_bytes = gpu->hbm_capacity_bytes;
  mem->capacity_bytes = gpu->hbm_visible_bytes;
  mem->context_reserve_bytes = (guint64) plan->context_reserve_bytes;
  usable_left = mem->capacity_bytes > mem->context_reserve_bytes
                    ? mem->capacity_bytes - mem->context_reserve_bytes : 0;
  mem->fragmentation = plan->fragmentation;
  mem->fragmentation_bytes = (guint64) llround ((double) usable_left * plan->fragmentation);
  mem->usable_bytes = usable_left - mem->fragmentation_bytes;
}

/* parameters, gradients, master weights and optimizer state of one stage,
 * sharded as the ZeRO stage says */
static void
stage_states (const Ledger *l, SimStageMemory *st, gboolean first, gboolean last)
{
  const SimModel *model = l->model;
  const SimPlan *plan = l->plan;
  guint64 dense_layers = st->layers - st->moe_layers;
  guint64 params = dense_layers * l->layer_gpu + st->moe_layers * l->moe_dense_gpu;
  guint64 experts = st->moe_layers * l->expert_gpu;
  guint64 linear = st->layers * div_up (sim_model_layer_linear_weights (model), l->tp);
  guint64 trainable = 0, frozen_bytes = 0, largest = largest_layer_params (l, st);
  /* the layers' weights whole on this GPU (TP/EP-split), for the FP8 copies */
  guint64 layer_weights = params + experts;
  gboolean zero3 = plan->zero >= 3;
  /* ZeRO-3 gathers a layer's parameters from the GPUs that shard them */
  gboolean gathered = zero3 && (l->shards > 1 || (experts > 0 && l->expert_shards > 1));

  if (first)
    params += l->vocab_gpu + sim_model_position_params (model);
  if (last) {
    params += sim_model_final_norm_params (model);
    /* untied: the output layer; tied on a stage other than the
     * embedding's: Megatron's copy of the embedding there, kept in sync by
     * an all-reduce (a V's first rank holds both ends; DualPipe's end
     * ranks hold the embedding of one copy and the output of the other) */
    if (!model->tied_embeddings || !sim_plan_ends_share_rank (plan))
      params += l->vocab_gpu;
    /* multi-token prediction: each module's norms and eh_proj (its layer is
     * counted with the stage's layers), and the input embedding, which
     * Megatron-Core builds on the last stage too (GPTModel: embedding when
     * pre_process or mtp_process) unless that stage has it already (the
     * first, or a tied output layer's copy) */
    if (plan->mtp_layers > 0) {
      params += (guint64) plan->mtp_layers *
                (div_up (sim_model_mtp_extra_sharded (model), l->tp) +
                 sim_model_mtp_extra_params (model) - sim_model_mtp_extra_sharded (model));
      if (!sim_plan_ends_share_rank (plan) && !model->tied_embeddings)
        params += l->vocab_gpu;
    }
  }

  if (plan->lora_rank > 0) {
    trainable = st->layers * l->lora_layer_gpu;
    frozen_bytes = plan->qlora ? nf4_bytes (linear) + 2 * (params - linear) : 2 * params;
    st->params = params + trainable;
  } else {
    trainable = params;
    st->params = params;
  }
  st->params_bytes = split_bytes (l, frozen_bytes + trainable * (guint64) l->pb,
                                  experts * (guint64) l->pb, zero3);
  st->params = split_bytes (l, st->params, experts, zero3);
  st->expert_params = split_bytes (l, 0, experts, zero3);
  st->grads_bytes = split_bytes (l, trainable * (guint64) l->gb, experts * (guint64) l->gb,
                                 plan->zero >= 2);
  st->grad_accum_bytes = split_bytes (l, trainable * (guint64) l->ab, experts * (guint64) l->ab,
                                      plan->zero >= 2);
  st->master_bytes = split_bytes (l, trainable * (guint64) l->mb, experts * (guint64) l->mb,
                                  plan->zero >= 1);
  st->optimizer_bytes = split_bytes (l, trainable * (guint64) l->ob, experts * (guint64) l->ob,
                                     plan->zero >= 1);
  /* the routed experts' share of the five states above */
  st->expert_states_bytes = split_bytes (l, 0, experts * (guint64) l->pb, zero3) +
                            split_bytes (l, 0, experts * (guint64) l->gb, plan->zero >= 2) +
                            split_bytes (l, 0, experts * (guint64) l->ab, plan->zero >= 2) +
                            split_bytes (l, 0, experts * (guint64) l->mb, plan->zero >= 1) +
                            split_bytes (l, 0, experts * (guint64) l->ob, plan->zero >= 1);
  /* ZeRO-3 gathers a layer's parameters before use and prefetches the
   * next: two layers' worth of full (TP-sharded) bf16 weights */
  if (gathered)
    st->buffer_bytes = 2 * largest * 2;
  /* FP8 without FP8 weights: Transformer Engine casts each linear weight
   * on the first micro-batch and keeps the FP8 copy and its transpose for
   * the others (is_first_microbatch in transformer_engine/pytorch/module/
   * linear.py), one byte each per weight; with --fp8-params the weights
   * themselves are FP8 (one byte and its transpose: the bf16 weight's two) */
  if (plan->fp8 != SIM_FP8_OFF && plan->fp8_params <= 0)
    /* under ZeRO-3 the weights exist whole only for the two gathered
     * layers, and so does their FP8 copy */
    st->buffer_bytes += 2 * (gathered ? 2 * largest : layer_weights);
  /* NVFP4 caches the same two copies, each 4 bits and an E4M3 scale per
   * 16 values (16 x 16 blocks for weights): 2 x 9/16 byte per weight */
  if (plan->fp4 != SIM_FP4_OFF)
    st->buffer_bytes += (gathered ? 2 * largest : layer_weights) / 8 * 9;
  st->states_bytes = st->params_bytes + st->grads_bytes + st->master_bytes + st->optimizer_bytes +
                     st->grad_accum_bytes + st->buffer_bytes;
}

/* the last layer of group g's window (TE's layer_window_map) */
static int
offload_window_end (int layers, int n, int g)
{
  int q = layers / n, r = layers % n;
  return q * (g + 1) - 1 + (g < r ? g + 1 : r);
}

void
sim_memory_offload (int layers, int n, const guint64 *bytes, const double *fwd_s,
                    const double *bwd_s, double host_bw_bytes_per_s, SimOffload *out)
{
  memset (out, 0, sizeof *out);
  n = CLAMP (n, 0, MAX (layers - 1, 0));
  for (int k = 0; k < layers; k++)
    out->total_bytes += bytes[k];
  /* forward: during layer j, every layer at or below it that stays, and
   * each offloaded one whose window has not ended */
  for (int j = 0; j < layers; j++) {
    guint64 level = 0;
    for (int k = 0; k <= j; k++)
      if (k >= n || offload_window_end (layers, n, k) >= j)
        level += bytes[k];
    out->peak_bytes = MAX (out->peak_bytes, level);
  }
  /* backward: during layer j, the layers at or below it that stayed, and
   * the offloaded ones brought back (their window's end passed) */
  for (int j = layers - 1; j >= 0; j--) {
    guint64 level = 0;
    for (int k = 0; k <= j; k++)
      if (k >= n || offload_window_end (layers, n, k) > j)
        level += bytes[k];
    out->peak_bytes = MAX (out->peak_bytes, level);
  }
  if (fwd_s == NULL || bwd_s == NULL || host_bw_bytes_per_s <= 0)
    return;
  for (int g = 0; g < n; g++) {
    int from = g == 0 ? 0 : offload_window_end (layers, n, g - 1),
        to = offload_window_end (layers, n, g);
    double copy = (double) bytes[g] / host_bw_bytes_per_s, f = 0, b = 0;
    /* forward: the layers after the copy starts, through the window's end */
    for (int k = from + 1; k <= to; k++)
      f += fwd_s[k];
    /* backward: from below the window's end down to the previous window's
     * end (for g 0, down to layer 1: layer 0 needs its activations) */
    for (int k = to - 1; k >= MAX (from, 1); k--)
      b += bwd_s[k];
    out->fwd_wait_s += MAX (copy - f, 0);
    out->bwd_wait_s += MAX (copy - b, 0);
  }
}

void
sim_memory_offload_model (const SimModel *model, const SimPlan *plan, const SimActivations *dense,
                          const SimActivations *moe, const double *dense_s, const double *moe_s,
                          double host_bw_bytes_per_s, SimOffload *out)
{
  int L = (int) model->layers;
  gboolean timed = dense_s != NULL && (moe == NULL || moe_s != NULL);
  g_autofree guint64 *bytes = g_new0 (guint64, MAX (L, 1));
  g_autofree double *fs = g_new0 (double, MAX (L, 1));
  g_autofree double *bs = g_new0 (double, MAX (L, 1));
  for (int i = 0; i < L; i++) {
    gboolean is_moe = moe != NULL && sim_model_layer_is_moe (model, (guint64) i);
    bytes[i] = (is_moe ? moe : dense)->saved_bytes;
    if (timed) {
      fs[i] = (is_moe ? moe_s : dense_s)[0];
      bs[i] = (is_moe ? moe_s : dense_s)[1];
    }
  }
  sim_memory_offload (L, plan->cpu_offload_layers, bytes, timed ? fs : NULL, timed ? bs : NULL,
                      host_bw_bytes_per_s, out);
}

guint64
sim_memory_chunk_saved_bytes (const SimModel *model, const SimPlan *plan, guint64 first, int lc,
                              int offset, const SimActivations *dense, const SimActivations *moe,
                              const SimActivations *dense_kept, const SimActivations *moe_kept,
                              guint64 *transient)
{
  guint64 saved = 0, worst = 0;
  gboolean full = plan->recompute == SIM_RECOMPUTE_FULL;
  for (int i = 0; i < lc; i++) {
    gboolean is_moe = moe != NULL && sim_model_layer_is_moe (model, first + (guint64) i);
    const SimActivations *a = is_moe ? moe : dense;
    const SimActivations *k = is_moe ? moe_kept : dense_kept;
    switch (sim_plan_layer_recompute (plan, offset, i)) {
    case SIM_LAYER_KEPT:
      saved += (full && k != NULL ? k : a)->saved_bytes;
      if (!full)
        worst = MAX (worst, a->transient_bytes);
      break;
    case SIM_LAYER_CHECKPOINT:
      saved += a->saved_bytes;
      worst = MAX (worst, a->transient_bytes);
      break;
    case SIM_LAYER_IN_GROUP:
      worst = MAX (worst, a->transient_bytes);
      break;
    }
  }
  if (transient != NULL)
    *transient = full ? worst * (guint64) sim_plan_recompute_group (plan, lc) : worst;
  return saved;
}

guint64
sim_memory_split_output_freed (const SimActivations *out_act)
{
  guint64 logits = 0;
  for (guint i = 0; i < out_act->tensors->len; i++) {
    const SimSavedTensor *t = &g_array_index (out_act->tensors, SimSavedTensor, i);
    if (strcmp (t->op, "loss") == 0)
      logits += t->bytes;
  }
  return logits / 2;
}

void
sim_memory_kept_activations (const SimModel *model, const SimPlan *plan, SimActivations **dense,
                             SimActivations **moe)
{
  SimActivationConfig cfg;
  *dense = *moe = NULL;
  if (plan->recompute != SIM_RECOMPUTE_FULL || sim_plan_recomputes_all (plan))
    return;
  sim_activation_config_from_plan (&cfg, plan);
  cfg.recompute = SIM_RECOMPUTE_NONE;
  cfg.recompute_modules = 0;
  *dense = sim_activations_layer (model, &cfg);
  if (sim_model_is_moe (model))
    *moe = sim_activations_moe_layer (model, &cfg);
}

/* walk the stage's passes in program order: a forward holds its chunk's
 * activations until the matching backward ends, or where the schedule
 * splits the backward until its weight gradient ends (ZB-H1's weight pass
 * keeps each linear layer's input and output gradient: of a GPT layer's
 * 34 s b h / t bytes under sequence parallelism (Korthikanti et al. 2022)
 * the QKV, projection, FC1 and FC2 inputs, 2 + 2 + 2 + 8, and their
 * output gradients, 6 + 2 + 8 + 2, 32 in all, so sim keeps the whole
 * set); the embedding and output
 * activations ride with the first and last chunk.  The peak is an output
 * of the schedule, the same as the simulated timeline's. */
static void
stage_activation_peak (const Ledger *l, SimStageMemory *st, gboolean first, gboolean last)
{
  const SimPlan *plan = l->plan;
  int v = plan->virtual_stages;
  g_autoptr (GArray) order = sim_schedule_stage (plan->schedule, plan->pp, st->stage,
                                                 (int) plan->micro_batches, v);
  g_autofree guint64 *chunk_bytes = g_new0 (guint64, v);
  guint64 level = 0, best = 0, chunks = 0, best_chunks = 0;
  guint64 transient = 0;
  guint64 freed = sim_memory_split_output_freed (l->out_act);

  /* each chunk's layers (Megatron's interleaved layout, sim-plan.h), dense
   * or MoE, with their own saved tensors, as the recomputation leaves
   * each (sim_memory_chunk_saved_bytes) */
  for (int c = 0, offset = 0; c < v; c++) {
    guint64 t = 0, layer = sim_plan_chunk_first_layer (plan, l->model, st->stage, c);
    guint64 lpc = sim_plan_chunk_layers (plan, l->model, st->stage, c) +
                  sim_plan_chunk_mtp_layers (plan, st->stage, c);
    chunk_bytes[c] = sim_memory_chunk_saved_bytes (l->model, plan, layer, (int) lpc, offset,
                                                   l->layer_act, l->moe_act, l->layer_kept,
                                                   l->moe_kept, &t);
    transient = MAX (transient, t);
    offset += (int) lpc;
    for (guint64 i = 0; i < lpc; i++) {
      gboolean moe = sim_model_layer_is_moe (l->model, layer + i);
      const SimActivations *a = layer_activations (l, moe);
      const SimActivations *k = moe ? l->moe_kept : l->layer_kept;
      st->activation_bytes_per_layer = MAX (st->activation_bytes_per_layer, a->saved_bytes);
      if (k != NULL)
        st->activation_bytes_per_layer = MAX (st->activation_bytes_per_layer, k->saved_bytes);
    }
  }
  /* CPU offloading (pp 1, one chunk): what the chunk holds at its peak */
  if (plan->cpu_offload_layers > 0 && v == 1 && plan->pp == 1) {
    SimOffload off;
    sim_memory_offload_model (l->model, plan, l->layer_act, l->moe_act, NULL, NULL, 0, &off);
    /* the MTP layers after the decoder's stay */
    chunk_bytes[0] = chunk_bytes[0] - off.total_bytes + off.peak_bytes;
  }
  for (guint i = 0; i < order->len; i++) {
    const SimPipeOp *op = &g_array_index (order, SimPipeOp, i);
    gboolean first_chunk = first && sim_plan_chunk_is_first (plan, st->stage, op->chunk);
    gboolean last_chunk = last && sim_plan_chunk_is_last (plan, st->stage, op->chunk);
    guint64 bytes = chunk_bytes[op->chunk] + (first_chunk ? l->emb_act->saved_bytes : 0) +
                    (last_chunk ? l->out_act->saved_bytes + l->mtp_act_bytes : 0);
    if (op->kind == SIM_PASS_WEIGHT) {
      level -= bytes - (last_chunk ? freed : 0);
      chunks--;
    } else if (op->kind == SIM_PASS_FORWARD) {
      /* the loss's moment at the end of the last chunk's forward */
      guint64 loss = last_chunk ? l->out_act->transient_bytes : 0;
      level += bytes;
      chunks++;
      if (level + loss > best) {
        best = level + loss;
        best_chunks = chunks;
      }
    } else {
      /* during the backward, this pass's activations and the layer's
       * recomputation working set are both live */
      if (level + transient > best) {
        best = level + transient;
        best_chunks = chunks;
      }
      /* split: the input gradient's activations stay for its weight
       * gradient, but for the loss's */
      if (!sim_schedule_splits_backward (plan->schedule)) {
        level -= bytes;
        chunks--;
      } else if (last_chunk) {
        level -= freed;
      }
    }
  }
  st->in_flight_chunks = best_chunks;
  /* a micro-batch crosses every chunk of a rank, but under DualPipe only
   * its own copy's */
  st->in_flight_micro_batches = (double) best_chunks / (plan->schedule == SIM_SCHEDULE_DUALPIPE ? 1 : v);
  st->activations_peak_bytes = best;
}

/* case C: the largest single layer with one micro-batch of its
 * activations, states as sharded now (ZeRO-3: the gathered layer) */
static void
stage_largest_layer (const Ledger *l, SimStageMemory *st, gboolean first, gboolean last)
{
  const SimPlan *plan = l->plan;
  guint64 shards = l->shards;
  guint64 per_param = (guint64) (l->gb + l->mb + l->ob + l->ab);
  guint64 lt = plan->lora_rank > 0 ? l->lora_layer_gpu : l->layer_gpu;
  guint64 lstates = (plan->lora_rank > 0 ? 2 * l->layer_gpu : 0) + lt * (guint64) l->pb +
                    lt * per_param / (plan->zero >= 1 ? shards : 1);
  /* per sequence: a smaller micro-batch is case B's remedy, so case C
   * asks whether one layer fails even with a single sequence */
  guint64 lact = (l->layer_act->saved_bytes + l->layer_act->transient_bytes) /
                 (guint64) plan->micro_batch;
  /* a layer full recomputation leaves alone keeps all of it */
  if (l->layer_kept != NULL)
    lact = MAX (lact, l->layer_kept->saved_bytes / (guint64) plan->micro_batch);

  if (st->moe_layers > 0) {
    /* an MoE layer: LoRA is refused for them, so states are the recipe's;
     * the routed experts' optimizer states shard over edp */
    guint64 mstates = (l->moe_dense_gpu + l->expert_gpu) * (guint64) l->pb +
                      l->moe_dense_gpu * per_param / (plan->zero >= 1 ? shards : 1) +
                      l->expert_gpu * per_param / (plan->zero >= 1 ? l->expert_shards : 1);
    guint64 mact = (l->moe_act->saved_bytes + l->moe_act->transient_bytes) /
                   (guint64) plan->micro_batch;
    if (l->moe_kept != NULL)
      mact = MAX (mact, l->moe_kept->saved_bytes / (guint64) plan->micro_batch);
    if (st->moe_layers == st->layers || mstates + mact > lstates + lact)
      lstates = mstates, lact = mact;
  }

  st->largest_layer_name = "one transformer layer";
  st->largest_layer_states_bytes = lstates;
  st->largest_layer_activation_bytes = lact;
  if (first || last) {
    guint64 vt = plan->lora_rank > 0 ? 0 : l->vocab_gpu;
    guint64 vstates = (plan->lora_rank > 0 ? 2 * l->vocab_gpu : 0) + vt * (guint64) l->pb +
                      vt * per_param / (plan->zero >= 1 ? shards : 1);
    guint64 vact = (last ? l->out_act->saved_bytes : l->emb_act->saved_bytes) /
                   (guint64) plan->micro_batch;
    if (vstates + vact > lstates + lact) {
      st->largest_layer_name = last ? "the output layer and loss" : "the embedding";
      st->largest_layer_states_bytes = vstates;
      st->largest_layer_activation_bytes = vact;
    }
  }
}

SimMemory *
sim_memory_compute (const SimTopology *topo, const SimModel *model, const SimPlan *plan)
{
  SimMemory *mem = g_new0 (SimMemory, 1);
  const SimGpuType *gpu = sim_topology_gpu_type (topo, 0);
  SimActivationConfig cfg;
  g_autoptr (SimActivations) layer_act = NULL;
  g_autoptr (SimActivations) moe_act = NULL;
  g_autoptr (SimActivations) emb_act = NULL;
  g_autoptr (SimActivations) out_act = NULL;
  g_autoptr (SimActivations) mtp_act = NULL;
  g_autoptr (SimActivations) layer_kept = NULL;
  g_autoptr (SimActivations) moe_kept = NULL;
  Ledger l = { .model = model, .plan = plan };

  l.tp = (guint64) plan->tp;
  l.shards = (guint64) plan->dp * (guint64) plan->cp;
  l.expert_shards = (guint64) MAX (plan->edp, 1);
  if (sim_model_is_moe (model)) {
    guint64 etp = (guint64) MAX (plan->etp, 1), ep = (guint64) MAX (plan->ep, 1);
    l.moe_dense_gpu = div_up (sim_model_moe_layer_dense_sharded (model), l.tp) +
                      sim_model_moe_layer_dense_replicated (model);
    l.expert_gpu = model->moe.experts / ep *
                   (div_up (sim_model_expert_params_sharded (model), etp) +
                    sim_model_expert_params_replicated (model));
  }
  l.layer_gpu = div_up (sim_model_layer_params_sharded (model), l.tp) +
                sim_model_layer_params_replicated (model);
  l.vocab_gpu = div_up (sim_model_embedding_params (model), l.tp);
  l.lora_layer_gpu = plan->lora_rank > 0
                         ? div_up (sim_model_lora_params_per_layer (model, plan->lora_rank, plan->lora_targets), l.tp)
                         : 0;
  sim_plan_state_bytes (plan, &l.pb, &l.gb, &l.mb, &l.ob, &l.ab);
  mem->stages = g_array_new (FALSE, TRUE, sizeof (SimStageMemory));
  memory_budget (mem, gpu, plan);

  if (plan->lora_rank > 0) {
    mem->trainable_params = model->layers * sim_model_lora_params_per_layer (model, plan->lora_rank,
                                                                           plan->lora_targets);
    mem->frozen_params = sim_model_param_count (model);
  } else {
    mem->trainable_params = sim_model_param_count (model) +
                            (guint64) MAX (plan->mtp_layers, 0) * sim_model_mtp_params (model);
  }

  sim_activation_config_from_plan (&cfg, plan);
  layer_act = sim_activations_layer (model, &cfg);
  moe_act = sim_activations_moe_layer (model, &cfg);
  emb_act = sim_activations_embedding (model, &cfg);
  out_act = sim_activations_output (model, &cfg);
  l.layer_act = layer_act;
  l.moe_act = moe_act;
  sim_memory_kept_activations (model, plan, &layer_kept, &moe_kept);
  l.layer_kept = layer_kept;
  l.moe_kept = moe_kept;
  l.emb_act = emb_act;
  l.out_act = out_act;
  mtp_act = sim_activations_mtp (model, &cfg);
  l.mtp_act_bytes = (guint64) MAX (plan->mtp_layers, 0) * mtp_act->saved_bytes;

  for (int s = 0; s < plan->pp; s++) {
    SimStageMemory st = { 0 };
    gboolean first = sim_plan_stage_has_embedding (plan, s), last = sim_plan_stage_has_output (plan, s);

    st.stage = s;
    /* the last stage's multi-token-prediction layers count as its layers */
    st.layers = sim_plan_stage_layers (plan, model, s) +
                sim_plan_chunk_mtp_layers (plan, s, plan->virtual_stages - 1);
    for (int c = 0; c < plan->virtual_stages; c++)
      for (guint64 i = 0, f = sim_plan_chunk_first_layer (plan, model, s, c),
                   n = sim_plan_chunk_layers (plan, model, s, c) + sim_plan_chunk_mtp_layers (plan, s, c);
           i < n; i++)
        st.moe_layers += sim_model_layer_is_moe (model, f + i);
    stage_states (&l, &st, first, last);
    stage_activation_peak (&l, &st, first, last);
    st.peak_bytes = st.states_bytes + st.activations_peak_bytes;
    stage_largest_layer (&l, &st, first, last);
    g_array_append_val (mem->stages, st);
  }

  verdict (mem);
  return mem;
}

void
sim_memory_free (SimMemory *mem)
{
  if (mem == NULL)
    return;
  g_clear_pointer (&mem->stages, g_array_unref);
  g_free (mem);
}

/* ---- remedies: try each change, keep the ones that are valid plans ---- */

/* A change reads the plan it varies (resolved: the user's, or the stack
 * so far) and asks the same of its request (sim_plan_request_of): what
 * the remedy's printed flags, added to the user's, ask.  FALSE where a
 * setter refuses the value. */
typedef gboolean (*Change) (const SimPlan *p, SimPlanRequest *q);

static gboolean
set_n (SimPlanRequest *q, const char *key, guint64 value)
{
  return sim_plan_request_set_number (q, key, value, NULL);
}

static gboolean zero1 (const SimPlan *p, SimPlanRequest *q) { return set_n (q, "zero", MAX (p->zero, 1)); }
static gboolean zero2 (const SimPlan *p, SimPlanRequest *q) { return set_n (q, "zero", MAX (p->zero, 2)); }
static gboolean zero3 (const SimPlan *p, SimPlanRequest *q) { return set_n (q, "zero", 3); }
static gboolean
adam8 (const SimPlan *p, SimPlanRequest *q)
{
  return sim_plan_request_set (q, "recipe", sim_recipe_name (SIM_RECIPE_BF16_ADAM8BIT), NULL, NULL);
}
static gboolean
bf16_states (const SimPlan *p, SimPlanRequest *q)
{
  return sim_plan_request_set (q, "recipe", sim_recipe_name (SIM_RECIPE_BF16_ADAM_BF16_STATES), NULL, NULL);
}
static gboolean tp2 (const SimPlan *p, SimPlanRequest *q) { return set_n (q, "tp", p->tp * 2) && set_n (q, "dp", p->dp / 2); }
static gboolean ep2 (const SimPlan *p, SimPlanRequest *q) { return set_n (q, "ep", p->ep * 2); }
static gboolean pp2 (const SimPlan *p, SimPlanRequest *q) { return set_n (q, "pp", p->pp * 2) && set_n (q, "dp", p->dp / 2); }
static gboolean cp2 (const SimPlan *p, SimPlanRequest *q) { return set_n (q, "cp", p->cp * 2) && set_n (q, "dp", p->dp / 2); }
static gboolean tp2_pp (const SimPlan *p, SimPlanRequest *q) { return set_n (q, "tp", p->tp * 2) && set_n (q, "pp", p->pp / 2); }
static gboolean cp2_pp (const SimPlan *p, SimPlanRequest *q) { return set_n (q, "cp", p->cp * 2) && set_n (q, "pp", p->pp / 2); }
static gboolean mb1 (const SimPlan *p, SimPlanRequest *q) { return set_n (q, "micro-batch", 1); }
static gboolean one_f1b (const SimPlan *p, SimPlanRequest *q) { return set_n (q, "schedule", SIM_SCHEDULE_1F1B); }
static gboolean
sel (const SimPlan *p, SimPlanRequest *q)
{
  sim_plan_request_set_recompute (q, SIM_RECOMPUTE_SELECTIVE, 0, SIM_RECOMPUTE_UNIFORM, 1);
  return TRUE;
}
static gboolean half_seq (const SimPlan *p, SimPlanRequest *q) { return set_n (q, "seq-len", p->seq_len / 2); }
static gboolean
full (const SimPlan *p, SimPlanRequest *q)
{
  sim_plan_request_set_recompute (q, SIM_RECOMPUTE_FULL, 0, SIM_RECOMPUTE_UNIFORM, 1);
  return TRUE;
}
/* selective recomputation of sim_plan_cheap_recompute_modules' set for a
 * model with latent attention and MoE layers, one of them, or the other
 * (the change cannot see the model; sim_memory_remedies picks the one
 * whose set matches); what selective already recomputed stays */
static gboolean
fine (const SimPlan *p, SimPlanRequest *q, guint modules)
{
  guint had = p->recompute == SIM_RECOMPUTE_SELECTIVE ? p->recompute_modules : 0;
  sim_plan_request_set_recompute (q, SIM_RECOMPUTE_SELECTIVE, had | modules, SIM_RECOMPUTE_UNIFORM, 1);
  return TRUE;
}
static gboolean
fine_mla_moe (const SimPlan *p, SimPlanRequest *q)
{
  return fine (p, q, SIM_RECOMPUTE_MLA_UP_PROJ | SIM_RECOMPUTE_MOE_ACT | SIM_RECOMPUTE_LAYERNORM);
}
static gboolean fine_moe (const SimPlan *p, SimPlanRequest *q) { return fine (p, q, SIM_RECOMPUTE_MOE_ACT | SIM_RECOMPUTE_LAYERNORM); }
static gboolean fine_mla (const SimPlan *p, SimPlanRequest *q) { return fine (p, q, SIM_RECOMPUTE_MLA_UP_PROJ | SIM_RECOMPUTE_LAYERNORM); }
static gboolean sp_on (const SimPlan *p, SimPlanRequest *q) { return set_n (q, "sequence-parallel", 1); }
static gboolean flash_on (const SimPlan *p, SimPlanRequest *q) { return set_n (q, "flash-attention", 1); }
static gboolean lora (const SimPlan *p, SimPlanRequest *q) { return set_n (q, "lora-rank", 16); }
static gboolean qlora (const SimPlan *p, SimPlanRequest *q) { return set_n (q, "lora-rank", 16) && set_n (q, "qlora", 1); }

/* the plan change gives from plan, resolved; NULL where the change or the
 * resolution refuses it */
static SimPlan *
changed (const SimTopology *topo, const SimModel *model, const SimPlan *plan, Change change)
{
  g_autoptr (SimPlanRequest) q = sim_plan_request_of (plan);
  if (!change (plan, q))
    return NULL;
  return sim_plan_resolve (q, topo, model, NULL);
}

void
sim_remedy_free (gpointer p)
{
  SimRemedy *r = p;
  g_free (r->flags);
  g_free (r->why);
  sim_plan_free (r->plan);
  g_free (r);
}

/* the remedy of flags, with the plan they give (p, taken over) and its
 * ledger m */
static SimRemedy *
remedy_new (const char *flags, const char *why, gboolean together, const SimMemory *m, SimPlan *p)
{
  SimRemedy *r = g_new0 (SimRemedy, 1);
  r->plan = p;
  r->flags = g_strdup (flags);
  r->why = g_strdup (why);
  r->together = together;
  r->peak_bytes = m->peak_bytes;
  r->peak_stage = m->peak_stage;
  r->fits = m->fits;
  r->tight = m->tight;
  return r;
}

typedef struct {
  GPtrArray *lines;        /* SimRemedy */
  GString *flags;          /* the helpful changes so far, for the combination */
  GPtrArray *changes;      /* Change, in the same order */
  gboolean any_fits;
} Remedies;

/* NeMo's distributed_fused_adam with dtype bf16, as NVIDIA's Nemotron-4
 * 340B recipe trains (sim-memory.h) */
#define BF16_STATES_WHY "master weights and Adam moments in bf16, as NeMo's 340B recipe"

static void
try_remedy (Remedies *r, const SimTopology *topo, const SimModel *model, const SimPlan *plan,
            const SimMemory *mem, const char *flags, const char *why, Change change)
{
  /* layout changes (tp, pp, cp, dp), fine-tuning and the two optimizer-state
   * recipes are alternatives, not knobs to stack, and selective
   * recomputation and ZeRO 1/2 are subsumed by full recomputation and ZeRO
   * 3: only the others join the combination */
  gboolean combinable = change != tp2 && change != ep2 && change != pp2 && change != cp2 &&
                        change != tp2_pp && change != cp2_pp && change != lora && change != qlora &&
                        change != sel && change != fine_mla_moe && change != fine_moe &&
                        change != fine_mla && change != zero1 && change != zero2 &&
                        change != bf16_states && change != half_seq;
  g_autoptr (SimPlan) p = changed (topo, model, plan, change);
  g_autoptr (SimMemory) m = NULL;
  if (p == NULL)
    return;
  m = sim_memory_compute (topo, model, p);
  if (m->peak_bytes >= mem->peak_bytes)
    return; /* a remedy that does not help is not a remedy */
  g_ptr_array_add (r->lines, remedy_new (flags, why, FALSE, m, g_steal_pointer (&p)));
  r->any_fits |= m->fits;
  if (!combinable)
    return;
  g_string_append_printf (r->flags, "%s%s", r->flags->len ? "\t" : "", flags);
  g_ptr_array_add (r->changes, (gpointer) change);
}


/* the plan with full recomputation of the first n layers of each chunk
 * (Megatron-Core's block method), resolved; NULL where refused */
static SimPlan *
block_plan (const SimTopology *topo, const SimModel *model, const SimPlan *plan, int n)
{
  g_autoptr (SimPlanRequest) q = sim_plan_request_of (plan);
  sim_plan_request_set_recompute (q, SIM_RECOMPUTE_FULL, 0, SIM_RECOMPUTE_BLOCK, n);
  return sim_plan_resolve (q, topo, model, NULL);
}

/* whether the plan with block recomputation of n layers per chunk fits,
 * with the fragmentation allowance */
static gboolean
block_fits (const SimTopology *topo, const SimModel *model, const SimPlan *plan, int n)
{
  g_autoptr (SimPlan) p = block_plan (topo, model, plan, n);
  g_autoptr (SimMemory) m = NULL;
  if (p == NULL)
    return FALSE;
  m = sim_memory_compute (topo, model, p);
  return m->fits && !m->tight;
}

/* Megatron-Core's block method with the fewest layers that fit ("a method
 * fully use the device memory removing redundant re-computation",
 * transformer_block.py, _checkpointed_forward): each more layer
 * recomputed keeps less, so the first count that fits is found by
 * halving; offered where it recomputes fewer layers than a chunk holds,
 * and never stacked with the other remedies */
static void
try_block (Remedies *r, const SimTopology *topo, const SimModel *model, const SimPlan *plan,
           const SimMemory *mem)
{
  int most = 0, lo = 1, hi;
  g_autoptr (SimPlan) p = NULL;
  g_autoptr (SimMemory) m = NULL;
  g_autofree char *flags = NULL;
  for (int s = 0; s < plan->pp; s++)
    for (int c = 0; c < plan->virtual_stages; c++)
      most = MAX (most, (int) (sim_plan_chunk_layers (plan, model, s, c) +
                               sim_plan_chunk_mtp_layers (plan, s, c)));
  hi = most - 1;
  if (hi < 1 || !block_fits (topo, model, plan, hi))
    return;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (block_fits (topo, model, plan, mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  if (plan->recompute == SIM_RECOMPUTE_FULL && plan->recompute_method == SIM_RECOMPUTE_BLOCK &&
      plan->recompute_num_layers == lo)
    return;
  p = block_plan (topo, model, plan, lo);
  if (p == NULL)
    return;
  m = sim_memory_compute (topo, model, p);
  if (m->peak_bytes >= mem->peak_bytes)
    return;
  flags = g_strdup_printf ("--recompute-method block --recompute-num-layers %d", lo);
  g_ptr_array_add (r->lines, remedy_new (flags, "recompute only the first layers of each model chunk, the fewest that fit",
                                         FALSE, m, g_steal_pointer (&p)));
  r->any_fits |= m->fits;
}

/* full recomputation of every layer, where the plan recomputes fewer
 * (none, selective, or --recompute-method leaving some layers alone) */
static void
try_full (Remedies *r, const SimTopology *topo, const SimModel *model, const SimPlan *plan,
          const SimMemory *mem)
{
  if (plan->recompute != SIM_RECOMPUTE_FULL)
    try_remedy (r, topo, model, plan, mem, "--recompute full", "keep only each layer's input", full);
  else if (!sim_plan_recomputes_all (plan))
    try_remedy (r, topo, model, plan, mem, "--recompute-method uniform --recompute-num-layers 1",
                "recompute every layer, keep only each layer's input", full);
}

/* Megatron-Core's CPU offloading of half the layers' activations, where
 * it runs (pp 1, no recomputation, megatron, a host link: the plan's checks
 * refuse it elsewhere); a knob of its own, not stacked with the others */
static void
try_offload (Remedies *r, const SimTopology *topo, const SimModel *model, const SimPlan *plan,
             const SimMemory *mem)
{
  int n = (int) MIN (model->layers / 2, (guint64) SIM_PLAN_MAX_DEGREE);
  g_autofree char *count = g_strdup_printf ("%d", n);
  g_autofree char *flags = g_strdup_printf ("--cpu-offloading-num-layers %s", count);
  g_autoptr (SimPlanRequest) q = NULL;
  g_autoptr (SimPlan) p = NULL;
  g_autoptr (SimMemory) m = NULL;
  if (n < 1 || plan->cpu_offload_layers >= n)
    return;
  q = sim_plan_request_of (plan);
  if (!sim_plan_request_set (q, "cpu-offloading-num-layers", count, NULL, NULL) ||
      (p = sim_plan_resolve (q, topo, model, NULL)) == NULL)
    return;
  m = sim_memory_compute (topo, model, p);
  if (m->peak_bytes >= mem->peak_bytes)
    return;
  g_ptr_array_add (r->lines, remedy_new (flags,
                                         "keep half the layers' activations in host memory, "
                                         "copied beside the compute",
                                         FALSE, m, g_steal_pointer (&p)));
  r->any_fits |= m->fits;
}

/* when no single change is enough, stack the helpful knobs in the order of
 * the table, cheapest first, and stop at the first stack that fits */
static void
try_together (Remedies *r, const SimTopology *topo, const SimModel *model, const SimPlan *plan)
{
  g_autoptr (SimPlan) p = NULL; /* the stack so far, resolved */
  g_autoptr (GString) flags = g_string_new (NULL);
  g_auto (GStrv) names = g_strsplit (r->flags->str, "\t", -1);
  if (r->any_fits || r->changes->len < 2)
    return;
  for (guint i = 0; i < r->changes->len; i++) {
    g_autoptr (SimMemory) m = NULL;
    SimPlan *q = changed (topo, model, p != NULL ? p : plan, (Change) g_ptr_array_index (r->changes, i));
    if (q == NULL)
      return;
    sim_plan_free (p);
    p = q;
    g_string_append_printf (flags, "%s%s", i ? " " : "", names[i]);
    if (i == 0)
      continue;
    m = sim_memory_compute (topo, model, p);
    if (m->fits || i + 1 == r->changes->len) {
      g_ptr_array_add (r->lines, remedy_new (flags->str, NULL, TRUE, m, g_steal_pointer (&p)));
      return;
    }
  }
}

GPtrArray *
sim_memory_remedies (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
                     const SimMemory *mem)
{
  Remedies r = { g_ptr_array_new_with_free_func (sim_remedy_free), g_string_new (NULL),
                  g_ptr_array_new (), FALSE };
  gboolean even_dp = plan->dp % 2 == 0;
  g_autofree char *tpf = g_strdup_printf ("--tp %d --dp %d", plan->tp * 2, plan->dp / 2);
  g_autofree char *ppf = g_strdup_printf ("--pp %d --dp %d", plan->pp * 2, plan->dp / 2);
  g_autofree char *cpf = g_strdup_printf ("--cp %d --dp %d", plan->cp * 2, plan->dp / 2);
  g_autofree char *tppf = g_strdup_printf ("--tp %d --pp %d", plan->tp * 2, plan->pp / 2);
  g_autofree char *cppf = g_strdup_printf ("--cp %d --pp %d", plan->cp * 2, plan->pp / 2);
  gboolean shardable = plan->dp * plan->cp > 1;
  g_autofree char *epf = g_strdup_printf ("--ep %d", plan->ep * 2);
  /* routed experts over twice the GPUs: fewer expert states per GPU (the
   * plan's checks drop a degree that does not divide) */
  gboolean experts = sim_model_is_moe (model) && mem->stages->len > 0;
  gboolean mla = model->mla.kv_lora_rank > 0;
  /* fp32 master weights and Adam moments: the recipes a state recipe replaces */
  gboolean fp32_adam = plan->recipe == SIM_RECIPE_BF16_ADAM ||
                       plan->recipe == SIM_RECIPE_BF16_ADAM_FP32_ACCUM;

  if (mem->fits)
    goto done;
  /* the order of the course notes' decision table: cheapest remedy first */
  switch (mem->oom_case) {
  case SIM_OOM_A:
    if (shardable && plan->zero < 1)
      try_remedy (&r, topo, model, plan, mem, "--zero 1", "shard optimizer states over dp", zero1);
    if (shardable && plan->zero < 2)
      try_remedy (&r, topo, model, plan, mem, "--zero 2", "also shard gradients", zero2);
    if (shardable && plan->zero < 3)
      try_remedy (&r, topo, model, plan, mem, "--zero 3", "also shard parameters (FSDP)", zero3);
    if (experts)
      try_remedy (&r, topo, model, plan, mem, epf, "split the routed experts over more GPUs", ep2);
    if (fp32_adam)
      try_remedy (&r, topo, model, plan, mem, "--recipe bf16-adam8bit", "8-bit optimizer states", adam8);
    if (fp32_adam)
      try_remedy (&r, topo, model, plan, mem, "--recipe bf16-adam-bf16-states", BF16_STATES_WHY,
                  bf16_states);
    if (even_dp)
      try_remedy (&r, topo, model, plan, mem, ppf, "split layers over more pipeline stages", pp2);
    if (even_dp)
      try_remedy (&r, topo, model, plan, mem, tpf, "split every layer over more GPUs", tp2);
    if (plan->lora_rank == 0)
      try_remedy (&r, topo, model, plan, mem, "--lora-rank 16", "fine-tuning only: train adapters, freeze the base", lora);
    if (!plan->qlora)
      try_remedy (&r, topo, model, plan, mem, "--lora-rank 16 --qlora", "fine-tuning only: 4-bit frozen base", qlora);
    break;
  case SIM_OOM_B:
    if (plan->schedule == SIM_SCHEDULE_GPIPE)
      try_remedy (&r, topo, model, plan, mem, "--schedule 1f1b",
                  "hold at most p micro-batches, not all of them", one_f1b);
    /* a Hugging Face config's length, when the plan runs it, is read from a
     * field that may not be the run's (SimModel.seq_len_from): a shorter
     * one is the user's call */
    if (model->seq_len_from != NULL && plan->seq_len == model->seq_len && plan->seq_len % 2 == 0) {
      g_autofree char *flag = g_strdup_printf ("--seq-len %" G_GUINT64_FORMAT, plan->seq_len / 2);
      g_autofree char *why = g_strdup_printf ("half the sequence, which is the config's %s",
                                              model->seq_len_from);
      try_remedy (&r, topo, model, plan, mem, flag, why, half_seq);
    }
    if (plan->micro_batch > 1)
      try_remedy (&r, topo, model, plan, mem, "--micro-batch 1",
                  "smaller micro-batches, same global batch by accumulation", mb1);
    if (!plan->flash_attention)
      try_remedy (&r, topo, model, plan, mem, "--flash-attention", "never store the s*s scores", flash_on);
    if (plan->recompute == SIM_RECOMPUTE_NONE && plan->framework == SIM_FRAMEWORK_TORCHTITAN)
      try_remedy (&r, topo, model, plan, mem, "--recompute selective",
                  "torchtitan's op-level checkpointing: keep every other matmul's output and SDPA's",
                  sel);
    else if (plan->recompute == SIM_RECOMPUTE_NONE && !plan->flash_attention)
      try_remedy (&r, topo, model, plan, mem, "--recompute selective", "recompute the attention core", sel);
    if (plan->recompute != SIM_RECOMPUTE_FULL && (mla || experts)) {
      guint want = sim_plan_cheap_recompute_modules (model);
      guint had = plan->recompute == SIM_RECOMPUTE_SELECTIVE ? plan->recompute_modules : 0;
      g_autofree char *mods = sim_recompute_modules_string (had | want, ",");
      g_autofree char *flag = g_strdup_printf ("--recompute-modules %s", mods);
      if ((had & want & ~(guint) SIM_RECOMPUTE_LAYERNORM) != (want & ~(guint) SIM_RECOMPUTE_LAYERNORM))
        try_remedy (&r, topo, model, plan, mem, flag,
                    mla && experts ? "recompute the up projections, the experts' activation and the norms"
                    : mla          ? "recompute the up projections and the norms"
                                   : "recompute the experts' activation and the norms",
                    mla && experts ? fine_mla_moe : mla ? fine_mla : fine_moe);
    }
    try_block (&r, topo, model, plan, mem);
    try_full (&r, topo, model, plan, mem);
    try_offload (&r, topo, model, plan, mem);
    if (plan->tp > 1 && !plan->sequence_parallel)
      try_remedy (&r, topo, model, plan, mem, "--sequence-parallel", "split norm/dropout activations over tp", sp_on);
    if (even_dp)
      try_remedy (&r, topo, model, plan, mem, cpf, "split the sequence over more GPUs", cp2);
    if (even_dp)
      try_remedy (&r, topo, model, plan, mem, tpf, "split every layer over more GPUs", tp2);
    if (experts)
      try_remedy (&r, topo, model, plan, mem, epf, "free room for activations: fewer experts per GPU", ep2);
    if (shardable && plan->zero < 3)
      try_remedy (&r, topo, model, plan, mem, "--zero 3", "free room for activations by sharding states", zero3);
    if (fp32_adam)
      try_remedy (&r, topo, model, plan, mem, "--recipe bf16-adam-bf16-states", BF16_STATES_WHY,
                  bf16_states);
    break;
  case SIM_OOM_C:
    if (!plan->flash_attention)
      try_remedy (&r, topo, model, plan, mem, "--flash-attention", "never store the s*s scores", flash_on);
    if (even_dp)
      try_remedy (&r, topo, model, plan, mem, tpf, "split every layer over more GPUs", tp2);
    else if (plan->pp % 2 == 0)
      try_remedy (&r, topo, model, plan, mem, tppf, "split every layer over more GPUs", tp2_pp);
    if (!even_dp && plan->pp % 2 == 0)
      try_remedy (&r, topo, model, plan, mem, cppf, "split the sequence over more GPUs", cp2_pp);
    try_full (&r, topo, model, plan, mem);
    if (even_dp)
      try_remedy (&r, topo, model, plan, mem, cpf, "split the sequence over more GPUs", cp2);
    break;
  case SIM_OOM_NONE:
    break;
  }
  try_together (&r, topo, model, plan);
done:
  g_string_free (r.flags, TRUE);
  g_ptr_array_unref (r.changes);
  return r.lines;
}
