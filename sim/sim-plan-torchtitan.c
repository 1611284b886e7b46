/* sim-plan-torchtitan.c — the steps of sim_plan_resolve that read a plan
 * as torchtitan runs it (--framework torchtitan; sim-plan-private.h) */
#include "sim-plan.h"
#include "sim-plan-private.h"

#include "sim-error.h"

/* torch.compile, a torchtitan setting: torchtitan compiles each
 * transformer block when asked (--training.compile, off by default:
 * torchtitan/config_manager.py @9dec370, action store_true; the shipped
 * train_configs/llama3_8b.toml @9dec370 sets compile = false), and its
 * async TP needs it (parallelisms/parallelize_llama.py @9dec370: "Async TP
 * requires --training.compile").  Megatron-Core and llm-foundry runs keep
 * their own fused kernels, which sim models already. */
static gboolean
resolve_torch_compile (SimPlan *plan, GError **error)
{
  if (plan->framework != SIM_FRAMEWORK_TORCHTITAN) {
    if (given (plan, KEY_TORCH_COMPILE)) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--%storch-compile: expected --framework torchtitan (Megatron-Core and llm-foundry "
                   "run their own fused kernels)", plan->torch_compile ? "" : "no-");
      return FALSE;
    }
    plan->torch_compile = 0; /* their kernels, not Inductor's */
    return TRUE;
  }
  if (plan->torch_compile < 0) {
    plan->torch_compile = 0;
    sim_plan_note_default (plan, "--no-torch-compile (torchtitan's default: each block runs eagerly)");
  }
  if (!plan->torch_compile && plan->tp_comm_overlap > 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--tp-comm-overlap: torchtitan's async TP needs --torch-compile (it is Inductor's "
                 "micro-pipelining pass)");
    return FALSE;
  }
  return TRUE;
}

/* FSDP2 under pipeline parallelism, as torchtitan applies it: each
 * transformer block is sharded with reshard_after_forward=False "to avoid
 * per-microbatch all-gathers, which can be expensive and non-overlapped"
 * (torchtitan parallelisms/parallelize_llama.py @9dec370, apply_fsdp with
 * pp_enabled), and torch.distributed.pipelining's stage runs every backward
 * but the step's last without gradient sync and without resharding
 * (PipelineStage.backward_maybe_with_nosync: set_requires_gradient_sync
 * (False), set_reshard_after_backward (False)), FSDP2 keeping the
 * accumulated gradient unsharded in its reduce dtype, fp32
 * (training.mixed_precision_reduce, torchtitan/config_manager.py @9dec370).
 * So each stage holds its parameters gathered (bf16) and its gradients
 * whole (fp32) through the step, gathers once and reduce-scatters once:
 * the states and traffic of ZeRO-1 with fp32 gradients, which the plan
 * takes, saying so.  Without PP torchtitan reshards after each block's
 * forward (ZeRO-3 as given). */
static void
resolve_fsdp_under_pp (SimPlan *plan)
{
  if (plan->pp < 2 || plan->zero < 2 || plan->dp * plan->cp < 2)
    return;
  sim_plan_note_default (plan, "--zero %d under torchtitan with pp %d: each stage keeps its parameters gathered "
                         "and its gradients whole in fp32 across the micro-batches (FSDP2 with "
                         "reshard_after_forward=False, gradients reduced at the last backward), the states of "
                         "--zero 1 --grad-reduce-in-fp32", plan->zero, plan->pp);
  plan->zero = 1;
  plan->grad_reduce_fp32 = TRUE;
}

/* PyTorch FSDP with tensor, pipeline or context parallelism is PyTorch's
 * native parallelism, which torchtitan runs and sim models under
 * --framework torchtitan: FSDP2 over DTensor, DTensor's tensor-parallel
 * plans, torch.distributed.pipelining, and context parallelism through
 * context_parallel's ring over scaled_dot_product_attention (which serves
 * no other attention kernel).  The fsdp preset is llm-foundry's, whose
 * runs (the MPT benchmarks of training_calibration.csv) use FSDP alone: it
 * has no pipeline or context parallelism (llmfoundry/command_utils/
 * train.py @8c8dd48: parallelism_config holds 'fsdp' and 'tp' only), and
 * its tensor parallelism is Composer's DTensor plan (tp_config, commit
 * ee456002, 2024-09-27), which came after its Triton attention kernel, the
 * preset's default, was removed for FlashAttention-2 (commit 7f0fdae6,
 * 2024-03-26, "Remove triton"; attention.py @8c8dd48: attn_impl default
 * 'flash').  So a plan that asks for fsdp with tp, pp or cp over 1 takes
 * torchtitan's mechanics, saying so. */
void
sim_plan_resolve_pytorch_parallelism (SimPlan *plan)
{
  if (plan->framework != SIM_FRAMEWORK_FSDP || (plan->tp < 2 && plan->pp < 2 && plan->cp < 2))
    return;
  plan->framework = SIM_FRAMEWORK_TORCHTITAN;
  sim_plan_note_default (plan, "--framework torchtitan (fsdp with tp %d, pp %d, cp %d: PyTorch-native "
                         "parallelism, FSDP2 with DTensor TP, torch.distributed.pipelining and "
                         "context_parallel over SDPA, as torchtitan runs it; llm-foundry's FSDP, the "
                         "fsdp preset, runs none of them)", plan->tp, plan->pp, plan->cp);
}

/* the torchtitan steps, in order; TRUE for another framework */
gboolean
sim_plan_resolve_torchtitan (SimPlan *plan, GError **error)
{
  if (!resolve_torch_compile (plan, error))
    return FALSE;
  if (plan->framework == SIM_FRAMEWORK_TORCHTITAN)
    resolve_fsdp_under_pp (plan);
  return TRUE;
}
