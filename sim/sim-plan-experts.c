/* sim-plan-experts.c — the checks sim_plan_resolve makes of how a
 * plan runs a mixture-of-experts model's routed experts
 * (sim-plan-private.h) */
#include "sim-plan.h"
#include "sim-plan-private.h"

#include "sim-error.h"

/* Transformer Engine's fused grouped MLP runs block-scaled FP8 (MXFP8)
 * or NVFP4 gated experts only (transformer_engine/pytorch/ops/fused/
 * grouped_mlp.py @d0067d0: "Joint fused op for block-scaled GroupedLinear
 * + activation + GroupedLinear", its GLU kernels; Megatron-Core's
 * experts.py @d98e8a64 builds it for SwiGLU and quick-GEGLU).  The
 * activation runs inside FC1's kernel, so selective recomputation of it
 * alone (moe_act) has nothing to recompute: refused. */
gboolean
sim_plan_resolve_fused_grouped_mlp (SimPlan *plan, const SimModel *model, GError **error)
{
  const char *why = NULL;
  if (!plan->moe_fused_grouped_mlp)
    return TRUE;
  if (model->mlp != SIM_MLP_SWIGLU)
    why = "expected gated (SwiGLU) experts, the fused kernel's activation";
  else if (!(plan->fp8 != SIM_FP8_OFF && plan->fp8_recipe == SIM_FP8_MXFP8) && plan->fp4 == SIM_FP4_OFF)
    why = "expected --fp8-recipe mxfp8 or --fp4 (the fused kernel is block-scaled only)";
  else if (plan->recompute == SIM_RECOMPUTE_SELECTIVE && (plan->recompute_modules & SIM_RECOMPUTE_MOE_ACT))
    why = "not with --recompute-modules moe_act (the activation runs inside FC1's kernel)";
  if (why != NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN, "--moe-fused-grouped-mlp: %s", why);
    return FALSE;
  }
  return TRUE;
}
