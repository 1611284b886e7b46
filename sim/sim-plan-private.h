/* sim-plan-private.h — what the parts of sim-plan share (-request.c the
 * options and the request they fill; sim-plan.c the defaults, validation
 * and rank placement that resolve it; -pipeline.c the schedule and the
 * split of the layers; -names.c the names; -experts.c the routed experts;
 * -torchtitan.c torchtitan's steps).  Internal to libsim: not
 * installed. */
#pragma once

#include "sim-plan.h"

G_BEGIN_DECLS

/* every plan option, the bit of SimPlan.given it sets */
typedef enum {
  KEY_TP,
  KEY_CP,
  KEY_PP,
  KEY_DP,
  KEY_MICRO_BATCH,
  KEY_GLOBAL_BATCH,
  KEY_SEQ_LEN,
  KEY_SCHEDULE,
  KEY_VIRTUAL_STAGES,
  KEY_RECOMPUTE,
  KEY_SEQUENCE_PARALLEL,
  KEY_FLASH_ATTENTION,
  KEY_ZERO,
  KEY_RECIPE,
  KEY_ORDER,
  KEY_LORA_RANK,
  KEY_LORA_TARGETS,
  KEY_QLORA,
  KEY_CONTEXT_RESERVE,
  KEY_FRAGMENTATION,
  KEY_OVERLAP,
  KEY_FRAMEWORK,
  KEY_TP_COMM_OVERLAP,
  KEY_TORCH_COMPILE,
  KEY_OVERLAP_PARAM_GATHER,
  KEY_ATTENTION_KERNEL,
  KEY_FP8,
  KEY_FP8_PARAMS,
  KEY_FP8_RECIPE,
  KEY_FP8_ATTENTION,
  KEY_LAYERS_PER_VIRTUAL_STAGE,
  KEY_EP,
  KEY_ETP,
  KEY_MOE_IMBALANCE,
  KEY_MOE_CAPACITY,
  KEY_MOE_PAD,
  KEY_MOE_A2A_OVERLAP,
  KEY_MOE_DISPATCHER,
  KEY_MOE_FUSED_GROUPED_MLP,
  KEY_FP8_EXPERT_ACT,
  KEY_FIRST_STAGE_LAYERS,
  KEY_LAST_STAGE_LAYERS,
  KEY_EMBEDDING_IN_SPLIT,
  KEY_LOSS_IN_SPLIT,
  KEY_FP4,
  KEY_FP4_RECIPE,
  KEY_TP_ONLY_AMAX_RED,
  KEY_GRAD_REDUCE_FP32,
  KEY_RECOMPUTE_MODULES,
  KEY_RECOMPUTE_METHOD,
  KEY_RECOMPUTE_NUM_LAYERS,
  KEY_MTP_LAYERS,
  KEY_PIPELINE_LAYOUT,
  KEY_CUDA_GRAPH_IMPL,
  KEY_CUDA_GRAPH_SCOPE,
  KEY_CPU_OFFLOAD_LAYERS,
  KEY_GPU_VARIATION,
  KEY_SLOW_GPU,
  KEY_SLOW_NODE,
  KEY_SLOW_LINK,
} Key;

/* whether the user gave option k */
static inline gboolean
given (const SimPlan *plan, Key k)
{
  return (plan->given & (G_GUINT64_CONSTANT (1) << k)) != 0;
}

/* Megatron-Core's names: recompute_modules (bit k of SimRecomputeModules)
 * and cuda_graph_scope (sim-plan-names.c) */
extern const char *const sim_plan_recompute_module_names[SIM_RECOMPUTE_MODULE_COUNT];
extern const char *const sim_plan_graph_scope_names[SIM_GRAPH_SCOPE_COUNT];

/* a default the resolution applied, for the report's Defaults line */
G_GNUC_PRINTF (2, 3) void sim_plan_note_default (SimPlan *plan, const char *fmt, ...);

/* the steps of sim_plan_resolve that settle the pipeline, in its order */
gboolean sim_plan_resolve_pipeline_layout (SimPlan *plan, const SimModel *model, GError **error);
gboolean sim_plan_resolve_schedule (SimPlan *plan, const SimModel *model, GError **error);
gboolean sim_plan_resolve_split (SimPlan *plan, const SimModel *model, GError **error);
/* sim-plan-experts.c: --moe-fused-grouped-mlp's requirements */
gboolean sim_plan_resolve_fused_grouped_mlp (SimPlan *plan, const SimModel *model, GError **error);
/* sim-plan-torchtitan.c: fsdp with TP, PP or CP as torchtitan runs it (right
 * after the layout), then --torch-compile's checks and FSDP2 under PP */
void sim_plan_resolve_pytorch_parallelism (SimPlan *plan);
gboolean sim_plan_resolve_torchtitan (SimPlan *plan, GError **error);

/* A request is a plan record as asked: each option not given holds the
 * value that means "unset" to sim_plan_resolve (0 for the parallel
 * degrees, the batch, the sequence and the layer counts; -1 for the
 * switches that default by cluster, framework or model; < 0 for the
 * reserve, the fragmentation and the GPU variation), and defaults is
 * NULL.  sim_plan_resolve copies the record and resolves the copy. */
struct _SimPlanRequest {
  SimPlan asked;
};

/* a record copied field by field, the layout shared by reference; a
 * plan's (with_defaults) with a copy of its request and a new empty
 * defaults list, a request's with neither (sim-plan-request.c) */
void sim_plan_record_copy (SimPlan *to, const SimPlan *from, gboolean with_defaults);
/* what a record owns released: its defaults, its request, its layout */
void sim_plan_record_clear (SimPlan *p);

G_END_DECLS
