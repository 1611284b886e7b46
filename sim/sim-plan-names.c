/* sim-plan-names.c — a plan's rank placement and the names and strings of
 * its settings (sim-plan.h) */
#include "sim-plan.h"

#include <string.h>

#include "sim-plan-private.h"

/* Megatron-Core's names of the recompute modules and CUDA graph scopes,
 * bit k of SimRecomputeModules and of the graph scope */
const char *const sim_plan_recompute_module_names[SIM_RECOMPUTE_MODULE_COUNT] = {
  "core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts",
};

const char *const sim_plan_graph_scope_names[SIM_GRAPH_SCOPE_COUNT] = {
  "attn", "mlp", "moe", "moe_router", "moe_preprocess",
};

int
sim_plan_world_size (const SimPlan *plan)
{
  return plan->tp * plan->cp * plan->pp * plan->dp;
}

static int
dim_size (const SimPlan *plan, SimDim d)
{
  switch (d) {
  case SIM_DIM_TP: return plan->tp;
  case SIM_DIM_CP: return plan->cp;
  case SIM_DIM_DP: return plan->dp;
  case SIM_DIM_PP: return plan->pp;
  default: return 1;
  }
}

void
sim_plan_rank_coords (const SimPlan *plan, int rank, int coords[SIM_DIM_COUNT])
{
  for (int i = 0; i < SIM_DIM_COUNT; i++) {
    int n = dim_size (plan, plan->order[i]);
    coords[plan->order[i]] = rank % n;
    rank /= n;
  }
}

int
sim_plan_rank_of (const SimPlan *plan, const int coords[SIM_DIM_COUNT])
{
  int rank = 0;
  for (int i = SIM_DIM_COUNT - 1; i >= 0; i--)
    rank = rank * dim_size (plan, plan->order[i]) + coords[plan->order[i]];
  return rank;
}

const char *
sim_schedule_name (SimSchedule s)
{
  static const char *names[] = { "gpipe", "1f1b", "interleaved", "zb-h1", "zb-v", "dualpipe-v", "dualpipe" };
  return names[s];
}

const char *
sim_recompute_name (SimRecompute r)
{
  static const char *names[] = { "none", "selective", "full" };
  return names[r];
}

const char *
sim_recompute_method_name (SimRecomputeMethod m)
{
  static const char *names[] = { "uniform", "block", "every" };
  return names[m];
}

SimLayerRecompute
sim_plan_layer_recompute (const SimPlan *plan, int rank_offset, int i)
{
  int n = MAX (plan->recompute_num_layers, 1);
  if (plan->recompute != SIM_RECOMPUTE_FULL)
    return SIM_LAYER_KEPT;
  switch (plan->recompute_method) {
  case SIM_RECOMPUTE_BLOCK:
    return i < n ? SIM_LAYER_CHECKPOINT : SIM_LAYER_KEPT;
  case SIM_RECOMPUTE_EVERY:
    return (rank_offset + i + 1) % n == 0 ? SIM_LAYER_CHECKPOINT : SIM_LAYER_KEPT;
  case SIM_RECOMPUTE_UNIFORM:
  default:
    return i % n == 0 ? SIM_LAYER_CHECKPOINT : SIM_LAYER_IN_GROUP;
  }
}

int
sim_plan_recompute_group (const SimPlan *plan, int lc)
{
  if (plan->recompute != SIM_RECOMPUTE_FULL)
    return 0;
  if (plan->recompute_method != SIM_RECOMPUTE_UNIFORM)
    return 1;
  return MAX (1, MIN (plan->recompute_num_layers, lc));
}

char *
sim_plan_recompute_method_string (const SimPlan *plan)
{
  int n = plan->recompute_num_layers;
  if (plan->recompute != SIM_RECOMPUTE_FULL ||
      (plan->recompute_method == SIM_RECOMPUTE_UNIFORM && n <= 1))
    return g_strdup ("");
  switch (plan->recompute_method) {
  case SIM_RECOMPUTE_BLOCK:
    return g_strdup_printf (" (block: the first %d layer%s of each model chunk)", n, n > 1 ? "s" : "");
  case SIM_RECOMPUTE_EVERY:
    return n > 1 ? g_strdup_printf (" (every %d%s layer of a pipeline rank)", n,
                                    n % 10 == 2 && n % 100 != 12   ? "nd"
                                    : n % 10 == 3 && n % 100 != 13 ? "rd"
                                    : n % 10 == 1 && n % 100 != 11 ? "st"
                                                                   : "th")
                 : g_strdup (" (every layer)");
  case SIM_RECOMPUTE_UNIFORM:
  default:
    return g_strdup_printf (" (uniform: groups of %d layers, each group's input kept)", n);
  }
}

gboolean
sim_plan_recomputes_all (const SimPlan *plan)
{
  return plan->recompute == SIM_RECOMPUTE_FULL &&
         (plan->recompute_method == SIM_RECOMPUTE_UNIFORM || plan->recompute_num_layers <= 1);
}

const char *
sim_recompute_module_name (int i)
{
  return sim_plan_recompute_module_names[i];
}

guint
sim_plan_cheap_recompute_modules (const SimModel *model)
{
  gboolean mla = model->mla.kv_lora_rank > 0, moe = sim_model_is_moe (model);
  if (!mla && !moe)
    return 0;
  return (mla ? SIM_RECOMPUTE_MLA_UP_PROJ : 0) | (moe ? SIM_RECOMPUTE_MOE_ACT : 0) |
         SIM_RECOMPUTE_LAYERNORM;
}

/* names[i] of each bit i set, joined by sep; new string */
static char *
names_string (guint bits, const char *const *names, int count, const char *sep)
{
  GString *s = g_string_new (NULL);
  for (int i = 0; i < count; i++)
    if (bits & (1u << i))
      g_string_append_printf (s, "%s%s", s->len > 0 ? sep : "", names[i]);
  return g_string_free (s, FALSE);
}

char *
sim_recompute_modules_string (guint modules, const char *sep)
{
  return names_string (modules, sim_plan_recompute_module_names, SIM_RECOMPUTE_MODULE_COUNT, sep);
}

const char *
sim_cuda_graph_impl_name (SimCudaGraphImpl i)
{
  static const char *names[] = { "none", "transformer_engine", "local" };
  return names[i];
}

char *
sim_cuda_graph_scope_string (guint scope, const char *sep)
{
  return names_string (scope, sim_plan_graph_scope_names, SIM_GRAPH_SCOPE_COUNT, sep);
}

int
sim_plan_layer_graphs (const SimPlan *p, gboolean moe_layer)
{
  guint s = p->cuda_graph_impl != SIM_CUDA_GRAPH_NONE ? p->cuda_graph_scope : 0;
  guint captured = moe_layer ? SIM_GRAPH_ATTN | SIM_GRAPH_MOE_ROUTER : SIM_GRAPH_ATTN | SIM_GRAPH_MLP;
  return (s & captured) != 0 ? 1 : 0;
}

const char *
sim_fp8_name (SimFp8 f)
{
  static const char *names[] = { "off", "hybrid", "e4m3" };
  return names[f];
}

const char *
sim_fp8_recipe_name (SimFp8Recipe r)
{
  static const char *names[] = { "delayed", "current", "mxfp8", "blockwise" };
  return names[r];
}

const char *
sim_fp4_name (SimFp4 f)
{
  static const char *names[] = { "off", "e2m1" };
  return names[f];
}

gboolean
sim_plan_quantized (const SimPlan *p)
{
  return p->fp8 != SIM_FP8_OFF || p->fp4 != SIM_FP4_OFF;
}

const char *
sim_recipe_name (SimRecipe r)
{
  static const char *names[] = { "bf16-adam", "bf16-adam-fp32-accum", "fp32-adam",
                                 "bf16-adam8bit", "bf16-sgd", "bf16-adam-bf16-states" };
  return names[r];
}

const char *
sim_dim_name (SimDim d)
{
  static const char *names[] = { "tp", "cp", "dp", "pp" };
  return d < SIM_DIM_COUNT ? names[d] : "?";
}

char *
sim_plan_order_string (const SimPlan *plan)
{
  return g_strdup_printf ("%s-%s-%s-%s", sim_dim_name (plan->order[0]),
                          sim_dim_name (plan->order[1]), sim_dim_name (plan->order[2]),
                          sim_dim_name (plan->order[3]));
}

double
sim_plan_slow_factor (const SimPlan *plan, int gpus_per_node, int stage, int dp)
{
  double f = 1.0;
  int g = MAX (gpus_per_node, 1);
  for (int i = 0; i < plan->n_slow; i++) {
    int first, last;
    sim_plan_slow_ranks (plan, g, i, &first, &last);
    for (int r = first; r <= last; r++) {
      int c[SIM_DIM_COUNT];
      sim_plan_rank_coords (plan, r, c);
      if (c[SIM_DIM_PP] == stage && c[SIM_DIM_DP] == dp)
        f = MAX (f, plan->slow[i].factor);
    }
  }
  return f;
}

void
sim_plan_slow_ranks (const SimPlan *plan, int gpus_per_node, int i, int *first, int *last)
{
  const SimSlow *x = &plan->slow[i];
  int g = MAX (gpus_per_node, 1);
  *first = x->node ? x->index * g : x->index;
  *last = MIN (x->node ? *first + g : *first + 1, sim_plan_world_size (plan)) - 1;
}

char *
sim_plan_slow_name (const SimPlan *plan, int gpus_per_node, int i)
{
  int first, last;
  sim_plan_slow_ranks (plan, gpus_per_node, i, &first, &last);
  if (plan->slow[i].node)
    return g_strdup_printf ("node %d: GPUs %d-%d", plan->slow[i].index, first, last);
  return g_strdup_printf ("GPU %d", first);
}

int
sim_plan_slow_link_gpu (const SimPlan *plan, int i, gboolean full)
{
  const SimSlowLink *x = &plan->slow_links[i];
  int c[SIM_DIM_COUNT];
  sim_plan_rank_coords (plan, x->rank, c);
  if (!full)
    c[SIM_DIM_DP] = 0;
  if (x->kind == SIM_SLOW_NIC)
    c[SIM_DIM_TP] = 0;
  return sim_plan_rank_of (plan, c);
}

char *
sim_plan_slow_link_name (const SimPlan *plan, int i)
{
  const SimSlowLink *x = &plan->slow_links[i];
  return g_strdup_printf ("GPU %d's %s", x->rank, x->kind == SIM_SLOW_NIC ? "NIC" : "NVLinks");
}
