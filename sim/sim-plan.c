/* sim-plan.c — a request resolved into a plan: defaults, validation and
 * rank placement (the options and the request: sim-plan-request.c) */
#include "sim-plan.h"
#include "sim-plan-private.h"
#include "sim-schedule.h"

#include <math.h>
#include <string.h>

#include "sim-error.h"
#include "sim-memory.h"
#include "sim-units.h"
#include "sim-variability.h"



void
sim_plan_note_default (SimPlan *plan, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_ptr_array_add (plan->defaults, g_strdup_vprintf (fmt, ap));
  va_end (ap);
}

static gboolean check_split (const SimPlan *plan, const SimModel *model, GError **error);

/* layouts of world GPUs that keep tp and cp, for the mismatch message */
static char *
suggest_layouts (const SimPlan *plan, int world, const SimModel *model)
{
  GString *s = g_string_new (NULL);
  gint64 tc64 = (gint64) plan->tp * plan->cp; /* degrees are at most 2^17 */
  int tc, shown = 0;
  if (tc64 > world || world % tc64 != 0)
    return g_string_free (s, FALSE);
  tc = (int) tc64;
  for (int pp = 1; pp <= world / tc && shown < 8; pp++) {
    if ((world / tc) % pp != 0 || model->layers % (guint64) pp != 0)
      continue;
    g_string_append_printf (s, "%s--tp %d", shown ? "; " : "", plan->tp);
    if (plan->cp > 1)
      g_string_append_printf (s, " --cp %d", plan->cp);
    g_string_append_printf (s, " --pp %d --dp %d", pp, world / tc / pp);
    shown++;
  }
  return g_string_free (s, FALSE);
}

/* tp, cp, pp and dp: defaults, then the checks against the cluster and the model */
static gboolean
resolve_layout (SimPlan *plan, const SimTopology *topo, const SimModel *model, GError **error)
{
  int world = sim_topology_n_gpus (topo);

  if (plan->tp == 0) {
    plan->tp = 1;
    sim_plan_note_default (plan, "--tp 1");
  }
  if (plan->cp == 0)
    plan->cp = 1;
  if (plan->pp == 0) {
    plan->pp = 1;
    sim_plan_note_default (plan, "--pp 1");
  }
  if (plan->dp == 0) {
    /* each degree is at most SIM_PLAN_MAX_DEGREE = 2^17: three fit in 2^51 */
    gint64 mp = (gint64) plan->tp * plan->cp * plan->pp;
    if (mp <= world && world % mp == 0) {
      plan->dp = (int) (world / mp);
      sim_plan_note_default (plan, "--dp %d (the %d GPU%s of %s / (tp %d x cp %d x pp %d))", plan->dp,
                    world, world == 1 ? "" : "s", topo->name, plan->tp, plan->cp, plan->pp);
    } else {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "tp %d x cp %d x pp %d = %" G_GINT64_FORMAT " does not divide the %d GPUs of %s, so no data-parallel degree fits",
                   plan->tp, plan->cp, plan->pp, mp, world, topo->name);
      return FALSE;
    }
  }
  /* four degrees of up to 2^17 overflow 64 bits: compare as doubles, exact below 2^53 */
  if ((double) plan->tp * plan->cp * plan->pp * plan->dp != (double) world) {
    g_autofree char *alts = suggest_layouts (plan, world, model);
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "tp %d x cp %d x pp %d x dp %d = %.0f GPU%s, but %s has %d (%d node%s)%s%s",
                 plan->tp, plan->cp, plan->pp, plan->dp,
                 (double) plan->tp * plan->cp * plan->pp * plan->dp,
                 (double) plan->tp * plan->cp * plan->pp * plan->dp == 1 ? "" : "s", topo->name, world,
                 topo->n_nodes, topo->n_nodes == 1 ? "" : "s", *alts ? "; layouts that fit: " : "", alts);
    return FALSE;
  }
  return check_split (plan, model, error);
}

static gboolean
check_split (const SimPlan *plan, const SimModel *model, GError **error)
{
  guint64 tp = (guint64) MAX (plan->tp, 1), cp = (guint64) MAX (plan->cp, 1);
  if (model->heads % tp != 0 || model->kv_heads % tp != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "tp %d must divide the %" G_GUINT64_FORMAT " attention heads and %" G_GUINT64_FORMAT
                 " KV heads of %s, so each tensor-parallel rank holds whole heads",
                 plan->tp, model->heads, model->kv_heads, model->name);
    return FALSE;
  }
  /* the dense FFN width matters only where a dense layer has it */
  if (model->ffn_hidden % tp != 0 && sim_model_moe_layers (model) < model->layers) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "tp %d must divide the feed-forward width %" G_GUINT64_FORMAT " of %s",
                 plan->tp, model->ffn_hidden, model->name);
    return FALSE;
  }
  if ((guint64) plan->pp > model->layers) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "pp %d exceeds the %" G_GUINT64_FORMAT " layers of %s: every stage needs at least one layer",
                 plan->pp, model->layers, model->name);
    return FALSE;
  }
  if (plan->seq_len > 0 && plan->seq_len % cp != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "cp %d must divide the sequence length %" G_GUINT64_FORMAT, plan->cp,
                 plan->seq_len);
    return FALSE;
  }
  return TRUE;
}

/* sequence length, micro-batch and global batch, and the micro-batches they give */
/* the model's sequence length where the plan gives none */
static void
resolve_seq_len (SimPlan *plan, const SimModel *model)
{
  if (plan->seq_len == 0) {
    /* a model file's own length is not a guess: not listed; a Hugging
     * Face config's is read from a field that may not be the run's */
    plan->seq_len = model->seq_len;
    if (model->seq_len_from != NULL)
      sim_plan_note_default (plan, "--seq-len %" G_GUINT64_FORMAT " (the config's %s; give the training run's)",
                    plan->seq_len, model->seq_len_from);
  }
}

static gboolean
resolve_batch (SimPlan *plan, const SimModel *model, GError **error)
{
  guint64 mbdp = 0;

  resolve_seq_len (plan, model);
  if (model->attention_window > 0 && plan->seq_len > model->attention_window) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--seq-len %" G_GUINT64_FORMAT " is longer than the %" G_GUINT64_FORMAT
                 "-token sliding attention window of %s; sim charges full causal attention, "
                 "exact only up to the window (remove sliding_window from the config to model "
                 "full attention)", plan->seq_len, model->attention_window, model->name);
    return FALSE;
  }
  if (plan->seq_len % (guint64) plan->cp != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "cp %d must divide the sequence length %" G_GUINT64_FORMAT, plan->cp,
                 plan->seq_len);
    return FALSE;
  }

  if (plan->micro_batch == 0) {
    plan->micro_batch = 1;
    sim_plan_note_default (plan, "--micro-batch 1");
  }
  mbdp = (guint64) plan->micro_batch * (guint64) plan->dp;
  if (plan->global_batch == 0) {
    if (model->default_global_batch > 0) {
      plan->global_batch = (model->default_global_batch + mbdp - 1) / mbdp * mbdp;
      if (plan->global_batch != model->default_global_batch)
        plan->global_batch_wanted = model->default_global_batch;
      sim_plan_note_default (plan, "--global-batch %" G_GUINT64_FORMAT " (%s's published batch%s)",
                    plan->global_batch, model->name,
                    plan->global_batch != model->default_global_batch ? ", rounded up to a multiple of micro-batch x dp" : "");
    } else {
      /* SIM_PLAN_SEQUENCES_PER_GPU per GPU, rounded up to whole
       * micro-batches of every replica */
      guint64 want = SIM_PLAN_SEQUENCES_PER_GPU * (guint64) sim_plan_world_size (plan);
      plan->global_batch = (want + mbdp - 1) / mbdp * mbdp;
      if (plan->global_batch != want)
        plan->global_batch_wanted = want;
      sim_plan_note_default (plan, "--global-batch %" G_GUINT64_FORMAT " (%d sequences per GPU%s: %s publishes none)",
                    plan->global_batch, SIM_PLAN_SEQUENCES_PER_GPU,
                    plan->global_batch != want ? ", rounded up to a multiple of micro-batch x dp" : "",
                    model->name);
    }
  }
  if (plan->global_batch % mbdp != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "global batch %" G_GUINT64_FORMAT " must be a multiple of micro-batch %d x dp %d = %"
                 G_GUINT64_FORMAT, plan->global_batch, plan->micro_batch, plan->dp, mbdp);
    return FALSE;
  }
  plan->micro_batches = plan->global_batch / mbdp;
  if (plan->micro_batches > SIM_PLAN_MAX_MICRO_BATCHES) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "global batch %" G_GUINT64_FORMAT " is %" G_GUINT64_FORMAT
                 " micro-batches per data-parallel replica; sim simulates at most %d "
                 "(raise --micro-batch or --dp)",
                 plan->global_batch, plan->micro_batches, SIM_PLAN_MAX_MICRO_BATCHES);
    return FALSE;
  }
  if ((guint64) plan->micro_batch * plan->seq_len / (guint64) plan->cp > SIM_PLAN_MAX_MB_TOKENS) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "micro-batch %d x sequence %" G_GUINT64_FORMAT " / cp %d is more than %" G_GUINT64_FORMAT
                 " tokens per GPU per micro-batch, beyond what sim's arithmetic holds",
                 plan->micro_batch, plan->seq_len, plan->cp, SIM_PLAN_MAX_MB_TOKENS);
    return FALSE;
  }
  return TRUE;
}


/* Selective recomputation's modules, each where the model has it, as
 * Megatron-Core applies them (transformer_layer.py @0014f137: "layernorm"
 * only to a norm that is its own module, not fused into the next linear:
 * latent attention's input norm and an MoE layer's pre-MLP norm, as
 * Transformer Engine's layer specs build them; "mlp" only to dense
 * layers).  A module the model lacks is refused, never ignored. */
static gboolean
resolve_recompute_modules (SimPlan *plan, const SimModel *model, GError **error)
{
  gboolean mla = model->mla.kv_lora_rank > 0, moe = sim_model_is_moe (model);
  guint64 moe_layers = sim_model_moe_layers (model);
  struct { guint bit; gboolean has; const char *lacks; } need[] = {
    { SIM_RECOMPUTE_MOE_ACT, moe, "mixture-of-experts layers" },
    { SIM_RECOMPUTE_MOE, moe, "mixture-of-experts layers" },
    { SIM_RECOMPUTE_SHARED_EXPERTS, moe && model->moe.shared_experts > 0, "shared experts" },
    { SIM_RECOMPUTE_MLA_UP_PROJ, mla, "latent attention (MLA)" },
    { SIM_RECOMPUTE_MLP, moe_layers < model->layers, "dense MLP layers" },
    { SIM_RECOMPUTE_LAYERNORM, mla || moe,
      "norm outside a linear layer (only latent attention's input norm and an MoE layer's "
      "pre-MLP norm are; the others are fused into their linear, as Transformer Engine runs them)" },
  };
  if (plan->recompute_modules != 0 && !given (plan, KEY_RECOMPUTE)) {
    plan->recompute = SIM_RECOMPUTE_SELECTIVE;
    sim_plan_note_default (plan, "--recompute selective (--recompute-modules given)");
  }
  if (sim_plan_op_sac (plan)) {
    /* torchtitan's selective recomputation is its op-level policy
     * (sim_plan_op_sac), modelled on a dense layer of standard attention */
    const char *why = plan->recompute_modules != 0
                          ? "--recompute-modules: Megatron-Core's modules, not torchtitan's; its "
                            "selective recomputation is an op-level policy"
                      : moe || mla ? "--recompute selective: torchtitan's op-level policy is modelled "
                                     "on dense layers of standard attention"
                                   : NULL;
    if (why != NULL) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN, "%s (--framework torchtitan%s)", why,
                   plan->request->asked.framework == SIM_FRAMEWORK_FSDP
                       ? ", which a fsdp plan with tp, pp or cp over 1 runs as"
                       : "");
      return FALSE;
    }
    sim_plan_note_default (plan, "--recompute selective: torchtitan's op-level policy (matmul outputs but "
                        "every second, SDPA's and the reduce-scatters' kept)");
    return TRUE;
  }
  if (plan->recompute != SIM_RECOMPUTE_SELECTIVE) {
    if (plan->recompute_modules != 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--recompute-modules: expected --recompute selective, got --recompute %s",
                   sim_recompute_name (plan->recompute));
      return FALSE;
    }
    return TRUE;
  }
  if (plan->recompute_modules == 0) {
    plan->recompute_modules = SIM_RECOMPUTE_CORE_ATTN;
    sim_plan_note_default (plan, "--recompute-modules core_attn (Megatron-Core's default)");
  }
  for (guint i = 0; i < G_N_ELEMENTS (need); i++)
    if ((plan->recompute_modules & need[i].bit) && !need[i].has) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--recompute-modules %s: expected a model with %s, and %s has none",
                   sim_recompute_module_name (g_bit_nth_lsf (need[i].bit, -1)), need[i].lacks,
                   model->name);
      return FALSE;
    }
  /* one checkpoint around the whole MoE layer holds its parts' too */
  if ((plan->recompute_modules & SIM_RECOMPUTE_MOE) &&
      (plan->recompute_modules & (SIM_RECOMPUTE_MOE_ACT | SIM_RECOMPUTE_SHARED_EXPERTS))) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--recompute-modules: moe recomputes the whole MoE layer; expected it without "
                 "moe_act and shared_experts");
    return FALSE;
  }
  return TRUE;
}

/* Which layers full recomputation recomputes: the method or its count
 * given alone means --recompute full, as Megatron-Core reads
 * recompute_method only with recompute_granularity full
 * (transformer_block.py, _checkpointed_forward under
 * recompute_granularity == 'full') */
static gboolean
resolve_recompute_method (SimPlan *plan, GError **error)
{
  gboolean method = given (plan, KEY_RECOMPUTE_METHOD) || given (plan, KEY_RECOMPUTE_NUM_LAYERS);
  if (!method)
    return TRUE;
  if (!given (plan, KEY_RECOMPUTE)) {
    plan->recompute = SIM_RECOMPUTE_FULL;
    sim_plan_note_default (plan, "--recompute full (--recompute-%s given)",
                  given (plan, KEY_RECOMPUTE_METHOD) ? "method" : "num-layers");
  } else if (plan->recompute != SIM_RECOMPUTE_FULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--recompute-%s: expected --recompute full, got --recompute %s",
                 given (plan, KEY_RECOMPUTE_METHOD) ? "method" : "num-layers",
                 sim_recompute_name (plan->recompute));
    return FALSE;
  }
  return TRUE;
}

/* recomputation, flash attention, sequence parallelism and the ZeRO stage */
static gboolean
resolve_memory_savers (SimPlan *plan, GError **error)
{
  if (!given (plan, KEY_RECOMPUTE) && plan->recompute_modules == 0 &&
      !given (plan, KEY_RECOMPUTE_METHOD) && !given (plan, KEY_RECOMPUTE_NUM_LAYERS))
    sim_plan_note_default (plan, "--recompute none");
  if (plan->flash_attention < 0) {
    plan->flash_attention = 1;
    sim_plan_note_default (plan, "--flash-attention");
  }
  if (plan->sequence_parallel < 0) {
    plan->sequence_parallel = plan->tp > 1;
    sim_plan_note_default (plan, "--%ssequence-parallel%s", plan->tp > 1 ? "" : "no-",
                  plan->tp > 1 ? " (tp > 1)" : " (tp 1)");
  } else if (plan->sequence_parallel && plan->tp == 1) {
    plan->sequence_parallel = 0;
    sim_plan_note_default (plan, "--no-sequence-parallel (sequence parallelism needs tp > 1)");
  }
  if (plan->sequence_parallel && (plan->seq_len / (guint64) plan->cp) % (guint64) plan->tp != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "sequence parallelism needs tp %d to divide the %" G_GUINT64_FORMAT
                 " tokens each context-parallel rank holds", plan->tp,
                 plan->seq_len / (guint64) plan->cp);
    return FALSE;
  }
  if (plan->zero < 0) {
    plan->zero = plan->dp * plan->cp > 1 ? 1 : 0;
    sim_plan_note_default (plan, "--zero %d%s", plan->zero,
                  plan->zero ? " (distributed optimizer over dp x cp, as Megatron-Core and NeMo recipes use)" : " (no data-parallel group to shard over)");
  }
  return TRUE;
}

/* The most nodes one expert group (the etp x ep GPUs that share a
 * layer's routed experts) spans.  Megatron-Core numbers a stage's GPUs
 * for the experts etp fastest, then ep, then edp, in the order it numbers
 * them for attention (parallel_state.py, initialize_model_parallel: the
 * expert RankGenerator takes the same order with cp folded away;
 * NVIDIA/Megatron-LM @00caa53), so group g of a stage is its GPUs g*n ..
 * (g+1)*n - 1 counted in that order, n = etp x ep. */
int
sim_plan_expert_group_nodes (const SimPlan *plan, const SimTopology *topo)
{
  int n = plan->etp * plan->ep, per_stage = plan->tp * plan->cp * plan->dp, most = 1;
  g_autoptr (GHashTable) nodes = g_hash_table_new (g_direct_hash, g_direct_equal);

  for (int stage = 0; stage < plan->pp; stage++)
    for (int first = 0; first < per_stage; first += n) {
      g_hash_table_remove_all (nodes);
      for (int j = first; j < first + n; j++) {
        int coords[SIM_DIM_COUNT], rest = j;
        /* j counted over the attention dimensions in --order, pp left out */
        for (int i = 0; i < SIM_DIM_COUNT; i++) {
          SimDim d = plan->order[i];
          int size = d == SIM_DIM_TP ? plan->tp : d == SIM_DIM_CP ? plan->cp : plan->dp;
          if (d == SIM_DIM_PP)
            continue;
          coords[d] = rest % size;
          rest /= size;
        }
        coords[SIM_DIM_PP] = stage;
        g_hash_table_add (nodes, GINT_TO_POINTER (sim_topology_gpu (topo, sim_plan_rank_of (plan, coords))->node));
      }
      most = MAX (most, (int) g_hash_table_size (nodes));
    }
  return most;
}

/* the expert-parallel degrees: ep 1 and etp = tp where the plan gives
 * none (Megatron-Core's, as resolve_experts cites them); a dense model has no experts to
 * split, so 1 and 1, and larger is refused */
static gboolean
resolve_expert_degrees (SimPlan *plan, const SimModel *model, GError **error)
{
  if (!sim_model_is_moe (model)) {
    if (plan->ep > 1 || plan->etp > 1) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--%s %d: %s has no mixture-of-experts layers, so --ep and --etp must be 1",
                   plan->ep > 1 ? "ep" : "etp", plan->ep > 1 ? plan->ep : plan->etp, model->name);
      return FALSE;
    }
    /* no note: a dense model's report does not mention experts */
    plan->ep = plan->etp = 1;
    return TRUE;
  }
  if (plan->ep == 0) {
    plan->ep = 1;
    sim_plan_note_default (plan, "--ep 1");
  }
  if (plan->etp == 0) {
    plan->etp = plan->tp;
    sim_plan_note_default (plan, "--etp %d (= tp, as Megatron-Core)", plan->etp);
  }
  return TRUE;
}

/* Expert parallelism, as Megatron-Core's MoE parallel folding: the
 * attention of a stage runs on tp x cp x dp GPUs, its routed experts on the
 * same GPUs as etp x ep x edp, so edp = tp*cp*dp / (etp*ep) must be whole
 * (parallel_state.py: "world_size ... is not divisible by
 * expert_tensor_model_pipeline_parallel size"); ep divides the routed
 * experts (moe_layer.py: num_moe_experts % expert_parallel_size == 0); etp
 * defaults to tp (arguments.py: "if args.expert_tensor_parallel_size is
 * None: args.expert_tensor_parallel_size = args.tensor_model_parallel_size";
 * all NVIDIA/Megatron-LM) */
static gboolean
resolve_experts (SimPlan *plan, const SimTopology *topo, const SimModel *model, GError **error)
{
  guint64 stage_gpus = (guint64) plan->tp * (guint64) plan->cp * (guint64) plan->dp, group = 0;
  const SimMoe *moe = &model->moe;
  int nodes = 0;

  if (!resolve_expert_degrees (plan, model, error))
    return FALSE;
  if (!sim_model_is_moe (model)) {
    if (plan->moe_imbalance > 0 || plan->moe_a2a_overlap > 0 || given (plan, KEY_MOE_DISPATCHER) ||
        plan->fp8_expert_act || plan->moe_capacity_factor > 0 || plan->moe_pad_to_capacity ||
        plan->moe_fused_grouped_mlp) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN, "--%s: %s has no mixture-of-experts layers",
                   plan->moe_imbalance > 0         ? "moe-imbalance"
                   : plan->moe_fused_grouped_mlp   ? "moe-fused-grouped-mlp"
                   : plan->moe_capacity_factor > 0 ? "moe-expert-capacity-factor"
                   : plan->moe_pad_to_capacity     ? "moe-pad-expert-input-to-capacity"
                   : plan->moe_a2a_overlap > 0 ? "overlap-moe-expert-parallel-comm"
                   : plan->fp8_expert_act      ? "fp8-expert-act"
                                               : "moe-dispatcher",
                   model->name);
      return FALSE;
    }
    plan->moe_a2a_overlap = 0;
    plan->edp = (int) stage_gpus;
    return TRUE;
  }
  /* Megatron-Core: "Avoid EP overlap when full activation recompute is
   * enabled" (Megatron-Bridge's expert-parallel overlap guide); its
   * combined 1F1B pairs a forward with a backward, so it needs them */
  if (plan->moe_a2a_overlap > 0 && plan->recompute == SIM_RECOMPUTE_FULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--overlap-moe-expert-parallel-comm: not with --recompute full (Megatron-Core's "
                 "combined 1F1B does not support it)");
    return FALSE;
  }
  if (plan->moe_a2a_overlap < 0) {
    plan->moe_a2a_overlap = 0;
    if (plan->ep > 1 || plan->etp > 1)
      sim_plan_note_default (plan, "--no-overlap-moe-expert-parallel-comm (the all-to-alls after the compute, "
                          "as Megatron-Core's default)");
  }
  /* the model's capacity factor where the plan gives none; padding needs
   * one (Megatron-Core's MoEAlltoAllTokenDispatcher asserts it) */
  if (plan->moe_capacity_factor == 0 && moe->capacity_factor > 0) {
    plan->moe_capacity_factor = moe->capacity_factor;
    sim_plan_note_default (plan, "--moe-expert-capacity-factor %g (%s's capacity-factor)",
                           moe->capacity_factor, model->name);
  }
  if (plan->moe_pad_to_capacity && plan->moe_capacity_factor == 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--moe-pad-expert-input-to-capacity: expected a capacity, --moe-expert-capacity-factor "
                 "(dropless experts have none to pad to)");
    return FALSE;
  }
  if (plan->moe_imbalance == 0) {
    plan->moe_imbalance = 1.0;
    sim_plan_note_default (plan, "--moe-imbalance 1 (balanced routing: every GPU gets the mean share of "
                        "routed tokens)");
  }
  if (moe->experts % (guint64) plan->ep != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--ep %d must divide the %" G_GUINT64_FORMAT " routed experts of %s, so each "
                 "expert-parallel rank holds whole experts", plan->ep, moe->experts, model->name);
    return FALSE;
  }
  if (moe->ffn_hidden % (guint64) plan->etp != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--etp %d must divide the expert width %" G_GUINT64_FORMAT " of %s",
                 plan->etp, moe->ffn_hidden, model->name);
    return FALSE;
  }
  if ((moe->shared_experts * moe->ffn_hidden) % (guint64) plan->tp != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "tp %d must divide the shared experts' width %" G_GUINT64_FORMAT " of %s",
                 plan->tp, moe->shared_experts * moe->ffn_hidden, model->name);
    return FALSE;
  }
  group = (guint64) plan->etp * (guint64) plan->ep;
  if (stage_gpus % group != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "etp %d x ep %d = %" G_GUINT64_FORMAT " must divide the tp %d x cp %d x dp %d = %"
                 G_GUINT64_FORMAT " GPUs of a pipeline stage (expert data parallel = their "
                 "quotient, as Megatron-Core)", plan->etp, plan->ep, group, plan->tp, plan->cp,
                 plan->dp, stage_gpus);
    return FALSE;
  }
  plan->edp = (int) (stage_gpus / group);
  sim_plan_note_default (plan, "expert data parallel %d (tp x cp x dp / (etp x ep))", plan->edp);
  /* arguments.py: "When not using pp-last rank ordering, the data parallel
   * size of the attention and moe layers must be the same" */
  if (plan->order[SIM_DIM_COUNT - 1] != SIM_DIM_PP && plan->pp > 1 && plan->edp != plan->dp) {
    g_autofree char *order = sim_plan_order_string (plan);
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--order %s does not place pp last, so expert data parallel %d must equal dp %d "
                 "(as Megatron-Core requires): give etp x ep = tp x cp", order, plan->edp, plan->dp);
    return FALSE;
  }
  /* arguments.py: "When using MoE and tensor parallelism, sequence
   * parallelism must be used." */
  if (plan->tp > 1 && !plan->sequence_parallel) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--no-sequence-parallel: mixture-of-experts layers with tp %d need sequence "
                 "parallelism (as Megatron-Core requires)", plan->tp);
    return FALSE;
  }
  if (plan->lora_rank > 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--lora-rank: sim does not model LoRA adapters on mixture-of-experts layers");
    return FALSE;
  }
  if (group > 1) {
    nodes = sim_plan_expert_group_nodes (plan, topo);
    if (nodes == 1)
      sim_plan_note_default (plan, "expert groups (etp x ep = %" G_GUINT64_FORMAT " GPUs) each inside one "
                          "node's NVLink domain", group);
    else
      sim_plan_note_default (plan, "expert groups (etp x ep = %" G_GUINT64_FORMAT " GPUs) span up to %d "
                          "nodes: the token all-to-all crosses the network", group, nodes);
  }
  return TRUE;
}

/* whether the nodes' NVSwitch multicasts (NVLink SHARP: Hopper's
 * third-generation NVSwitch and later; the cluster file's sharp="true") */
static gboolean
nvswitch_multicast (const SimTopology *topo)
{
  for (guint i = 0; i < topo->vertices->len; i++) {
    const SimVertex *v = &g_array_index (topo->vertices, SimVertex, i);
    if (v->kind == SIM_VERTEX_NVSWITCH && v->sharp)
      return TRUE;
  }
  return FALSE;
}

/* the recipe, and the framework's overlaps and attention kernel */
static void
resolve_framework (SimPlan *plan, const SimTopology *topo)
{
  if (!given (plan, KEY_RECIPE))
    sim_plan_note_default (plan, "--recipe %s", sim_recipe_name (plan->recipe));
  if (!given (plan, KEY_FRAMEWORK))
    sim_plan_note_default (plan, "--framework megatron (Megatron-Core overlaps and kernels, as NeMo recipes)");
  if (plan->tp_comm_overlap < 0) {
    /* Transformer Engine's userbuffers overlap splits the sequence-parallel
     * all-gathers and reduce-scatters; NeMo recipes turn it on with TP on
     * Hopper and later.  Its buffers are CUDA multicast objects, which
     * need an NVSwitch with NVLink SHARP (TransformerEngine
     * pytorch/module/base.py initialize_ub asserts
     * tex.device_supports_multicast() unless UB_SKIPMC=1), and NeMo's tuned
     * overlap configurations are for H100 and B200 alone
     * (nemo/collections/llm/recipes/tp_overlap_configs/userbuffers.py).
     * The published Megatron runs on A100 ran without it: Narayanan et al.
     * 2021 and Korthikanti et al. 2022 predate it, and MegaScale's Table 3
     * (arXiv 2402.15627) adds "TP overlap" to its Megatron-LM baseline
     * (tests/validation/data/megascale_scaling.md). */
    gboolean multicast = nvswitch_multicast (topo);
    plan->tp_comm_overlap = plan->framework == SIM_FRAMEWORK_MEGATRON && plan->tp > 1 &&
                            plan->sequence_parallel && multicast;
    if (plan->tp > 1)
      sim_plan_note_default (plan, "--%stp-comm-overlap%s", plan->tp_comm_overlap ? "" : "no-",
                    plan->framework == SIM_FRAMEWORK_MEGATRON && plan->sequence_parallel && !multicast
                        ? " (no NVLink SHARP multicast on this NVSwitch, which Transformer Engine's "
                          "overlap needs)"
                        : "");
  }
  if (plan->overlap_param_gather < 0) {
    plan->overlap_param_gather = plan->framework == SIM_FRAMEWORK_MEGATRON;
    if (plan->zero >= 1 && plan->zero < 3 && plan->dp * plan->cp > 1)
      sim_plan_note_default (plan, "--%soverlap-param-gather", plan->overlap_param_gather ? "" : "no-");
  }
  /* bf16 gradients on the wire, as NeMo's performance recipes set
   * (grad_reduce_in_fp32 = False); said where a pasted Megatron-LM script
   * would differ: its --bf16 reduces in fp32 */
  if (plan->framework == SIM_FRAMEWORK_MEGATRON && plan->dp * plan->cp > 1 && !given (plan, KEY_GRAD_REDUCE_FP32) &&
      (plan->recipe == SIM_RECIPE_BF16_ADAM || plan->recipe == SIM_RECIPE_BF16_ADAM8BIT ||
       plan->recipe == SIM_RECIPE_BF16_ADAM_BF16_STATES || plan->recipe == SIM_RECIPE_BF16_SGD))
    sim_plan_note_default (plan, "--no-grad-reduce-in-fp32 (bf16 gradients, as NeMo's performance recipes; "
                        "Megatron-LM's --bf16 reduces in fp32)");
}

/* CUDA graphs.  A scope without an implementation is Transformer Engine's
 * (Megatron-Bridge's recipes pair the two), an implementation without a
 * scope captures every layer whole (Megatron-Core's default, "full").
 * Capturing an MoE layer whole needs its token counts static, padded to
 * the experts' capacity (Megatron-Core's moe_pad_expert_input_to_capacity),
 * which sim does not model: it routes every token (dropless), so moe and
 * full are refused on MoE models, as the partial scopes the recipes use
 * (attn, moe_router, moe_preprocess) are not.  Graphs are Megatron-Core's,
 * not PyTorch FSDP's; sim does not model them beside full recomputation. */
static gboolean
resolve_cuda_graphs (SimPlan *plan, const SimModel *model, GError **error)
{
  guint s = plan->cuda_graph_scope;
  g_autofree char *names = NULL;
  const char *why = NULL;

  if (s != 0 && !given (plan, KEY_CUDA_GRAPH_IMPL)) {
    plan->cuda_graph_impl = SIM_CUDA_GRAPH_TE;
    sim_plan_note_default (plan, "--cuda-graph-impl transformer_engine (--cuda-graph-scope given)");
  }
  if (plan->cuda_graph_impl == SIM_CUDA_GRAPH_NONE) {
    if (s != 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--cuda-graph-scope: expected a --cuda-graph-impl other than none");
      return FALSE;
    }
    return TRUE;
  }
  if (s == 0) {
    if (sim_model_is_moe (model)) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--cuda-graph-impl %s: expected --cuda-graph-scope for %s, whose MoE layers "
                   "cannot be captured whole (the default, full) without padding each expert's "
                   "tokens to its capacity, which sim does not model: attn, moe_router, "
                   "moe_preprocess, as NVIDIA's recipes", sim_cuda_graph_impl_name (plan->cuda_graph_impl),
                   model->name);
      return FALSE;
    }
    s = plan->cuda_graph_scope = SIM_GRAPH_ATTN | SIM_GRAPH_MLP;
    sim_plan_note_default (plan, "--cuda-graph-scope full (every layer whole, Megatron-Core's default)");
  }
  names = sim_cuda_graph_scope_string (s, ",");
  if ((s & SIM_GRAPH_MOE) && sim_model_is_moe (model))
    why = "capturing MoE layers whole needs each expert's tokens padded to its capacity, which "
          "sim does not model (it routes every token): expected attn, moe_router, moe_preprocess";
  else if ((s & (SIM_GRAPH_MOE_ROUTER | SIM_GRAPH_MOE_PREPROCESS)) && !sim_model_is_moe (model))
    why = "moe_router and moe_preprocess are for mixture-of-experts layers, and the model has none";
  else if ((s & SIM_GRAPH_MOE_PREPROCESS) && !(s & SIM_GRAPH_MOE_ROUTER))
    why = "expected moe_router with moe_preprocess (the preprocess continues the router's graph)";
  else if (plan->framework != SIM_FRAMEWORK_MEGATRON)
    why = "Megatron-Core's graphs, not with PyTorch FSDP or torchtitan";
  else if (plan->recompute == SIM_RECOMPUTE_FULL)
    why = "sim does not model CUDA graphs with --recompute full";
  if (why != NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN, "--cuda-graph-scope %s: %s", names, why);
    return FALSE;
  }
  /* a dense model's scope without the MoE bits full set */
  if (!sim_model_is_moe (model))
    plan->cuda_graph_scope &= ~(guint) SIM_GRAPH_MOE;
  return TRUE;
}

/* The fused attention's kernel, when not given: llm-foundry's MPT
 * benchmarks, the FSDP runs we validate on, ran FlashAttention's Triton
 * kernel (scripts/train/benchmarking/submit_benchmarks.py @12a63191:
 * --attn_impl default 'triton').  Megatron-Core runs Transformer Engine's
 * DotProductAttention, whose backend choice prefers cuDNN's fused attention
 * to FlashAttention on compute capability 9.0 and later when both can run a
 * BF16 layer ("Disabling FlashAttention to give FusedAttention preference
 * on Hopper+ for performance reasons", transformer_engine/pytorch/
 * attention, get_attention_backend; NVIDIA/NeMo pull request 9188): cudnn
 * where the cluster file gives cuDNN's rates (the Hopper files), else the
 * GPU's FlashAttention-class kernel.  torchtitan calls PyTorch's
 * scaled_dot_product_attention, which on Hopper dispatches its
 * FlashAttention-2 backend: PyTorch 2.5 made the cuDNN backend opt-in
 * (pytorch/pytorch pull request 138522, "Make CuDNN Attention Opt in"), and
 * H100 runs of torchtitan on 2.7 nightlies still got FLASH_ATTENTION
 * (pytorch/torchtitan issue 1042); flash2 where the cluster file gives its
 * rates, else flash.  Then --attention-kernel cudnn or flash2 needs the
 * cluster file's rates for it. */
static gboolean
resolve_attention_kernel (SimPlan *plan, const SimTopology *topo, GError **error)
{
  const SimGpuType *g = sim_topology_gpu_type (topo, 0);
  gboolean cudnn;
  if (plan->attention_kernel < 0) {
    if (plan->framework == SIM_FRAMEWORK_FSDP)
      plan->attention_kernel = SIM_ATTENTION_TRITON;
    else if (plan->framework == SIM_FRAMEWORK_TORCHTITAN)
      plan->attention_kernel = g != NULL && g->attn_flash2_fwd_efficiency > 0 ? SIM_ATTENTION_FLASH2
                                                                              : SIM_ATTENTION_FLASH;
    else
      plan->attention_kernel = g != NULL && g->attn_cudnn_fwd_efficiency > 0 ? SIM_ATTENTION_CUDNN
                                                                             : SIM_ATTENTION_FLASH;
    if (plan->flash_attention)
      sim_plan_note_default (plan, "--attention-kernel %s",
                    plan->attention_kernel == SIM_ATTENTION_TRITON   ? "triton (llm-foundry's)"
                    : plan->attention_kernel == SIM_ATTENTION_CUDNN ? "cudnn (Transformer Engine's choice on Hopper)"
                    : plan->attention_kernel == SIM_ATTENTION_FLASH2 ? "flash2 (PyTorch SDPA's FlashAttention-2 backend)"
                                                                      : "flash");
  }
  cudnn = plan->attention_kernel == SIM_ATTENTION_CUDNN;
  if ((cudnn && (g == NULL || g->attn_cudnn_fwd_efficiency <= 0)) ||
      (plan->attention_kernel == SIM_ATTENTION_FLASH2 && (g == NULL || g->attn_flash2_fwd_efficiency <= 0))) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--attention-kernel %s: the cluster file of %s gives no %s rate (attributes %s-forward-"
                 "efficiency and %s-backward-efficiency of <attention>); expected flash or triton here",
                 cudnn ? "cudnn" : "flash2", g != NULL ? g->name : topo->name,
                 cudnn ? "cuDNN fused-attention" : "FlashAttention-2", cudnn ? "cudnn" : "flash2",
                 cudnn ? "cudnn" : "flash2");
    return FALSE;
  }
  return TRUE;
}

/* FP8: the GPU must have FP8 tensor cores; weights in FP8 by default with
 * megatron, as NVIDIA's FP8 performance recipes run (NVIDIA/dgxc-benchmarking
 * nemotron/configure.sh and nemo_megatron/gpt3_175b_hydra.yaml @35a9aec:
 * fp8_params true) */
static gboolean
resolve_fp8 (SimPlan *plan, const SimTopology *topo, GError **error)
{
  const SimGpuType *g = sim_topology_gpu_type (topo, 0);
  if (plan->fp8 == SIM_FP8_OFF) {
    if (plan->fp8_attention || plan->tp_only_amax_red || plan->fp8_expert_act) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--%s: expected --fp8 hybrid or e4m3 with it (the plan trains in BF16)",
                   plan->fp8_attention ? "fp8-attention"
                   : plan->fp8_expert_act ? "fp8-expert-act"
                                          : "tp-only-amax-red");
      return FALSE;
    }
    if (plan->fp8_recipe >= 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--fp8-recipe %s: expected --fp8 hybrid or e4m3 with it (the plan trains in BF16)",
                   sim_fp8_recipe_name ((SimFp8Recipe) plan->fp8_recipe));
      return FALSE;
    }
    plan->fp8_params = 0;
    return TRUE;
  }
  if (g == NULL || g->peak_flop_per_s[SIM_DTYPE_FP8] <= 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--fp8: %s has no FP8 tensor cores (its cluster file gives no fp8 peak)",
                 g != NULL ? g->name : topo->name);
    return FALSE;
  }
  /* MXFP8 needs tensor cores that apply a scale per 32-element block
   * (Blackwell's, <peak dtype="fp8" block-scaled="true">); Transformer
   * Engine makes it the default there and delayed scaling on Hopper */
  if (plan->fp8_attention && !plan->flash_attention) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--fp8-attention: expected fused (flash) attention, whose FP8 kernels it uses; "
                 "drop --no-flash-attention");
    return FALSE;
  }
  if (plan->fp8_recipe == SIM_FP8_MXFP8 && !g->fp8_block_scaled) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--fp8-recipe mxfp8: %s has no block-scaled FP8 tensor cores (Blackwell's; its "
                 "cluster file's fp8 peak is not block-scaled): use delayed, current or blockwise",
                 g->name);
    return FALSE;
  }
  if (plan->fp8_recipe < 0) {
    plan->fp8_recipe = g->fp8_block_scaled ? SIM_FP8_MXFP8 : SIM_FP8_DELAYED;
    sim_plan_note_default (plan, "--fp8-recipe %s", sim_fp8_recipe_name ((SimFp8Recipe) plan->fp8_recipe));
  }
  if (plan->fp8_params < 0) {
    plan->fp8_params = plan->framework == SIM_FRAMEWORK_MEGATRON;
    sim_plan_note_default (plan, "--%sfp8-params%s", plan->fp8_params ? "" : "no-",
                  plan->fp8_params ? " (as NVIDIA's FP8 recipes)" : "");
  }
  return TRUE;
}

/* FP4: the GPU must have FP4 tensor cores; not with FP8 (Megatron-Core
 * asserts one of the two); the weights stay BF16 parameters, quantized
 * for the GEMMs, as Megatron-Bridge's bf16_with_nvfp4_mixed
 * (fp8_param_gather False; src/megatron/bridge/training/mixed_precision.py) */
static gboolean
resolve_fp4 (SimPlan *plan, const SimTopology *topo, GError **error)
{
  const SimGpuType *g = sim_topology_gpu_type (topo, 0);
  if (plan->fp4 == SIM_FP4_OFF) {
    if (given (plan, KEY_FP4_RECIPE)) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--fp4-recipe nvfp4: expected --fp4 e2m1 with it (the plan does not train in FP4)");
      return FALSE;
    }
    return TRUE;
  }
  if (plan->fp8 != SIM_FP8_OFF) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--fp4 e2m1: expected --fp8 off with it (the linear layers train in FP8 or in FP4, "
                 "as Megatron-Core allows one of the two)");
    return FALSE;
  }
  if (g == NULL || g->peak_flop_per_s[SIM_DTYPE_FP4] <= 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--fp4: %s has no FP4 tensor cores (its cluster file gives no fp4 peak)",
                 g != NULL ? g->name : topo->name);
    return FALSE;
  }
  if (!given (plan, KEY_FP4_RECIPE))
    sim_plan_note_default (plan, "--fp4-recipe nvfp4 (the one FP4 recipe)");
  return TRUE;
}

/* the model's multi-token-prediction layers where the plan gives none;
 * multi-token prediction is a pre-training objective: a LoRA fine-tune
 * trains adapters on the main model only */
static gboolean
resolve_mtp (SimPlan *plan, const SimModel *model, GError **error)
{
  if (plan->mtp_layers > 0 && plan->lora_rank > 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--mtp-num-layers %d: expected 0 with --lora-rank (LoRA adapts the main model; "
                 "multi-token prediction is a pre-training objective)", plan->mtp_layers);
    return FALSE;
  }
  if (plan->mtp_layers < 0) {
    plan->mtp_layers = plan->lora_rank > 0 ? 0 : (int) model->mtp_layers;
    if (model->mtp_layers > 0 && plan->lora_rank > 0)
      sim_plan_note_default (plan, "--mtp-num-layers 0 (LoRA fine-tunes the main model only)");
    else if (model->mtp_layers > 0)
      sim_plan_note_default (plan, "--mtp-num-layers %d (the model's multi-token prediction, as it was "
                          "trained)", plan->mtp_layers);
  }
  return TRUE;
}

/* LoRA adapters, and the memory the context and the allocator take */
static gboolean
resolve_adapters_and_reserves (SimPlan *plan, const SimModel *model, GError **error)
{
  if (plan->qlora && plan->lora_rank == 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN, "--qlora needs --lora-rank R (for example 16)");
    return FALSE;
  }
  if (plan->lora_rank > model->hidden) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--lora-rank %" G_GUINT64_FORMAT " exceeds the hidden size %" G_GUINT64_FORMAT
                 " of %s", plan->lora_rank, model->hidden, model->name);
    return FALSE;
  }
  if (!resolve_mtp (plan, model, error))
    return FALSE;
  if (plan->context_reserve_bytes < 0) {
    plan->context_reserve_bytes = SIM_CONTEXT_RESERVE_BYTES;
    sim_plan_note_default (plan, "--context-reserve 1.5GB (CUDA context and library workspaces)");
  }
  if (plan->fragmentation < 0) {
    plan->fragmentation = SIM_FRAGMENTATION_FRACTION;
    sim_plan_note_default (plan, "--fragmentation 10%% (allocator fragmentation allowance)");
  }
  return TRUE;
}

/* the slowest GPUs: the spread's default, and each slow GPU or node
 * inside the job */
static gboolean
resolve_variability (SimPlan *plan, const SimTopology *topo, GError **error)
{
  int world = sim_plan_world_size (plan), g = MAX (topo->gpus_per_node, 1);
  if (plan->gpu_variation < 0) {
    plan->gpu_variation = SIM_GPU_VARIATION_DEFAULT;
    sim_plan_note_default (plan, "--gpu-variation 1.5%% (each step waits for the slowest GPU)");
  }
  for (int i = 0; i < plan->n_slow; i++) {
    const SimSlow *x = &plan->slow[i];
    int n = x->node ? (world + g - 1) / g : world;
    if (x->node && topo->gpus_per_node <= 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--slow-node %d:%g: expected a cluster whose nodes hold the same number of "
                   "GPUs (name the GPUs with --slow-gpu instead)", x->index, x->factor);
      return FALSE;
    }
    if (x->index >= n) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--%s %d:%g: expected a %s below %d (the job's %s are 0 to %d)",
                   x->node ? "slow-node" : "slow-gpu", x->index, x->factor,
                   x->node ? "node" : "rank", n, x->node ? "nodes" : "ranks", n - 1);
      return FALSE;
    }
  }
  for (int i = 0; i < plan->n_slow_links; i++) {
    const SimSlowLink *x = &plan->slow_links[i];
    const char *kind = x->kind == SIM_SLOW_NIC ? "nic" : "nvlink";
    g_autoptr (GArray) links = NULL;
    if (x->rank >= world) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--slow-link %s:%d:%g: expected a rank below %d (the job's ranks are 0 to %d)",
                   kind, x->rank, x->factor, world, world - 1);
      return FALSE;
    }
    /* the GPU must have links of that kind (a NIC to the fabric, NVLinks) */
    links = sim_topology_gpu_links (topo, x->rank, x->kind == SIM_SLOW_NIC);
    if (links->len == 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--slow-link %s:%d:%g: expected a GPU with %s; GPU %d of %s has none", kind,
                   x->rank, x->factor,
                   x->kind == SIM_SLOW_NIC ? "a NIC to a fabric switch" : "NVLinks", x->rank,
                   topo->name);
      return FALSE;
    }
  }
  return TRUE;
}

/* --cpu-offloading-num-layers: Megatron-Core's TransformerConfig refuses
 * it at num_layers or more, with pipeline parallelism and with
 * recomputation (megatron/core/transformer/transformer_config.py,
 * __post_init__: "CPU offloading can be done only for layers less than",
 * "Currently there is no support for Pipeline parallelism with CPU
 * offloading", "CPU offloading does not work when activation recomputation
 * is enabled"); sim needs the GPU's host link to time the copies.  Runs
 * after the framework is resolved (it is Megatron-Core's). */
static gboolean
resolve_cpu_offload (SimPlan *plan, const SimTopology *topo, const SimModel *model, GError **error)
{
  const SimGpuType *g = sim_topology_gpu_type (topo, 0);
  const char *why = NULL;
  int n = plan->cpu_offload_layers;
  if (n == 0)
    return TRUE;
  if ((guint64) n >= model->layers)
    why = "expected fewer than the model's layers (Megatron-Core keeps at least one on the GPU)";
  else if (plan->pp > 1)
    why = "expected --pp 1 (Megatron-Core offloads only without pipeline parallelism)";
  else if (plan->recompute != SIM_RECOMPUTE_NONE)
    why = "expected --recompute none (Megatron-Core offloads only without recomputation)";
  else if (plan->framework != SIM_FRAMEWORK_MEGATRON)
    why = "expected --framework megatron (it is Megatron-Core's offloading)";
  else if (g == NULL || g->host_bw_bytes_per_s <= 0)
    why =
        "the cluster file gives no host link for its GPU (<host-link bandwidth=...> in <gpu-type>), "
        "so the copies cannot be timed";
  if (why != NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN, "--cpu-offloading-num-layers %d: %s", n, why);
    return FALSE;
  }
  return TRUE;
}

gboolean
sim_plan_op_sac (const SimPlan *plan)
{
  return plan->framework == SIM_FRAMEWORK_TORCHTITAN && plan->recompute == SIM_RECOMPUTE_SELECTIVE;
}

void
sim_plan_with_micro_batches (SimPlan *to, const SimPlan *from, guint64 m)
{
  *to = *from;
  to->micro_batches = m;
  to->global_batch = m * (guint64) from->micro_batch * (guint64) from->dp;
}

SimPlan *
sim_plan_resolve_model (const SimPlanRequest *req, const SimModel *model, GError **error)
{
  g_autoptr (SimPlan) plan = g_new0 (SimPlan, 1);
  sim_plan_record_copy (plan, &req->asked, TRUE);
  plan->request = sim_plan_request_copy (req);
  resolve_seq_len (plan, model);
  if (!resolve_expert_degrees (plan, model, error) || !resolve_mtp (plan, model, error) ||
      !check_split (plan, model, error))
    return NULL;
  return g_steal_pointer (&plan);
}

/* the steps of sim_plan_resolve on the copy of the request's record */
static gboolean
resolve (SimPlan *plan, const SimTopology *topo, const SimModel *model, GError **error)
{
  /* one GPU type: the cost model, the ledger and the MFU all read GPU 0's */
  if (!sim_topology_check_one_gpu_type (topo, error))
    return FALSE;
  if (!resolve_layout (plan, topo, model, error))
    return FALSE;
  sim_plan_resolve_pytorch_parallelism (plan);
  if (!resolve_batch (plan, model, error) || !sim_plan_resolve_pipeline_layout (plan, model, error) ||
      !sim_plan_resolve_schedule (plan, model, error) || !sim_plan_resolve_split (plan, model, error) ||
      !resolve_recompute_method (plan, error) || !resolve_memory_savers (plan, error) ||
      !resolve_recompute_modules (plan, model, error) ||
      !resolve_experts (plan, topo, model, error))
    return FALSE;
  resolve_framework (plan, topo);
  return sim_plan_resolve_torchtitan (plan, error) && resolve_cpu_offload (plan, topo, model, error) &&
         resolve_cuda_graphs (plan, model, error) && resolve_attention_kernel (plan, topo, error) &&
         resolve_fp8 (plan, topo, error) && resolve_fp4 (plan, topo, error) &&
         sim_plan_resolve_fused_grouped_mlp (plan, model, error) &&
         resolve_adapters_and_reserves (plan, model, error) &&
         resolve_variability (plan, topo, error);
}

SimPlan *
sim_plan_resolve (const SimPlanRequest *req, const SimTopology *topo, const SimModel *model,
                  GError **error)
{
  g_autoptr (SimPlan) plan = g_new0 (SimPlan, 1);
  sim_plan_record_copy (plan, &req->asked, TRUE);
  plan->request = sim_plan_request_copy (req);
  if (!resolve (plan, topo, model, error))
    return NULL;
  return g_steal_pointer (&plan);
}
