/* sim-run.c — see sim-run.h */
#include "sim-run.h"

#include <math.h>
#include <string.h>

#include "sim-balance.h"
#include "sim-error.h"
#include "sim-variability.h"

void
sim_run_free (SimRun *run)
{
  if (run == NULL)
    return;
  g_free (run->label);
  sim_plan_free (run->plan);
  sim_memory_free (run->memory);
  g_clear_pointer (&run->remedies, g_ptr_array_unref);
  sim_iteration_free (run->time);
  sim_iteration_free (run->straggler_base);
  sim_fastest_fit_free (run->fastest_fit);
  g_free (run);
}

void
sim_fastest_fit_free (SimFastestFit *f)
{
  if (f == NULL)
    return;
  if (f->row != NULL)
    sim_run_summary_free (f->row);
  g_free (f->flags);
  g_free (f);
}

/* the iteration of plan, whose ledger is mem, as flags ask
 * (SIM_RUN_REFERENCE, SIM_RUN_STEADY, SIM_RUN_FULL); with slow links, on a
 * copy of the cluster whose links of the GPUs that stand for them
 * (sim_plan_slow_link_gpu) carry their share of the bandwidth */
static SimIteration *
simulate (const SimRun *run, const SimPlan *plan, const SimMemory *mem, guint flags, GError **error)
{
  gboolean full = (flags & SIM_RUN_FULL) != 0;
  g_autoptr (SimTopology) whatif = NULL;
  const SimTopology *topo = run->topo;
  if (plan->n_slow_links > 0) {
    whatif = sim_topology_copy_links (topo);
    for (int i = 0; i < plan->n_slow_links; i++)
      sim_topology_slow_gpu_links (whatif, sim_plan_slow_link_gpu (plan, i, full),
                                   plan->slow_links[i].kind == SIM_SLOW_NIC,
                                   plan->slow_links[i].factor);
    topo = whatif;
  }
  if (flags & SIM_RUN_REFERENCE)
    return sim_iteration_run_reference (topo, run->model, plan, mem, full, error);
  if (flags & SIM_RUN_STEADY)
    return sim_iteration_run_steady (topo, run->model, plan, mem, full, error);
  return sim_iteration_run (topo, run->model, plan, mem, full, error);
}

/* the same plan with no GPU or link slow, simulated as the run was */
static gboolean
straggler_base (SimRun *run, guint flags, GError **error)
{
  g_autoptr (SimPlanRequest) q = sim_plan_request_of (run->plan);
  g_autoptr (SimPlan) base = NULL;
  sim_plan_request_clear_slow (q);
  if ((base = sim_plan_resolve (q, run->topo, run->model, error)) == NULL)
    return FALSE;
  if ((run->straggler_base = simulate (run, base, run->memory, flags, error)) == NULL)
    return FALSE;
  run->straggler_base_step_s = run->straggler_base->step_s;
  return TRUE;
}

char *
sim_run_exposed_added_text (const SimRun *run)
{
  const char *names[] = { "TP", "CP", "PP", "DP", "EP" };
  const SimIteration *it = run->time, *base = run->straggler_base;
  GString *s;
  if (it == NULL || base == NULL)
    return NULL;
  {
    double now[] = { it->exposed_tp_s, it->exposed_cp_s, it->exposed_pp_s, it->exposed_dp_s,
                     it->exposed_ep_s };
    double was[] = { base->exposed_tp_s, base->exposed_cp_s, base->exposed_pp_s,
                     base->exposed_dp_s, base->exposed_ep_s };
    s = g_string_new (NULL);
    for (guint k = 0; k < G_N_ELEMENTS (names); k++)
      if (now[k] - was[k] >= 1e-3)
        g_string_append_printf (s, "%s%s %+.3f s", s->len > 0 ? ", " : "", names[k], now[k] - was[k]);
  }
  if (s->len == 0)
    g_string_append (s, "none");
  return g_string_free (s, FALSE);
}

gboolean
sim_run_variability (const SimRun *run, SimVariability *out)
{
  const SimIteration *it = run->time;
  double c;
  memset (out, 0, sizeof *out);
  if (it == NULL)
    return FALSE;
  out->sigma = run->plan->gpu_variation;
  out->gpus = sim_plan_world_size (run->plan);
  out->slowdown = sim_variability_slowdown (out->sigma, out->gpus);
  c = it->critical_s[SIM_SPAN_FORWARD] + it->critical_s[SIM_SPAN_BACKWARD] +
      it->critical_s[SIM_SPAN_RECOMPUTE] + it->critical_s[SIM_SPAN_OPTIMIZER];
  out->added_s = c * out->slowdown / (1.0 + out->slowdown);
  return TRUE;
}

/* each remedy that fits, simulated as the plan was: what it costs in time
 * (a remedy that trades memory for time, such as full recomputation, is
 * only half told by its peak) */
static gboolean
time_remedies (SimRun *run, guint flags, GError **error)
{
  for (guint i = 0; i < run->remedies->len; i++) {
    SimRemedy *r = g_ptr_array_index (run->remedies, i);
    g_autoptr (SimMemory) m = NULL;
    g_autoptr (SimIteration) it = NULL;
    if (!r->fits || r->plan == NULL)
      continue;
    m = sim_memory_compute (run->topo, run->model, r->plan);
    if ((it = simulate (run, r->plan, m, flags, error)) == NULL)
      return FALSE;
    r->has_time = TRUE;
    r->step_s = it->step_s;
    r->tokens_per_s = it->tokens_per_s;
    r->time_change = run->time->tokens_per_s / it->tokens_per_s - 1.0;
  }
  return TRUE;
}

SimRun *
sim_run_evaluate (const SimTopology *topo, const SimModel *model, const SimPlanRequest *req,
                  const char *label, guint flags, GError **error)
{
  g_autoptr (SimRun) run = g_new0 (SimRun, 1);
  g_autoptr (GError) local = NULL;
  SimPlan *plan;
  run->topo = topo;
  run->model = model;
  run->label = g_strdup (label != NULL ? label : "");
  if ((run->plan = plan = sim_plan_resolve (req, topo, model, error)) == NULL)
    return NULL;
  run->memory = sim_memory_compute (topo, model, plan);
  if (flags & SIM_RUN_TIME) {
    g_autofree guint64 *peaks = g_new (guint64, plan->pp);
    run->time = simulate (run, plan, run->memory, flags, error);
    if (run->time == NULL)
      return NULL;
    run->extrapolated = run->time->steady_micro_batches[0] > 0;
    if ((plan->n_slow > 0 || plan->n_slow_links > 0) && !straggler_base (run, flags, error))
      return NULL;
    for (int s = 0; s < plan->pp; s++)
      peaks[s] = g_array_index (run->time->stages, SimStageTime, s).peak_activation_bytes;
    sim_memory_apply_timeline (run->memory, peaks);
  }
  run->remedies = (flags & SIM_RUN_REMEDIES) ? sim_memory_remedies (topo, model, plan, run->memory)
                                             : g_ptr_array_new_with_free_func (sim_remedy_free);
  if (run->time != NULL && !time_remedies (run, flags, error))
    return NULL;
  return g_steal_pointer (&run);
}

double
sim_run_scaling_efficiency (const SimRun *run, const SimRun *ref)
{
  double a, b;
  if (run->time == NULL || ref == NULL || ref->time == NULL)
    return NAN;
  a = run->time->tokens_per_s / sim_plan_world_size (run->plan);
  b = ref->time->tokens_per_s / sim_plan_world_size (ref->plan);
  return a / b;
}

/* Thresholds of the diagnosis.  The course notes' criterion for the
 * communication wall is exposed communication "comparable to" compute
 * (docs/course-notes/000, 9.1.4); we call it comparable from a quarter of
 * the compute time on.  A bubble above 10 % of the step is worth naming
 * (1F1B's (p-1)/(m+p-1) is 10 % at m = 9 (p-1)). */
#define COMM_COMPARABLE 0.25
#define BUBBLE_NOTABLE 0.10

const char *
sim_run_wall (const SimRun *run)
{
  const SimIteration *it = run->time;
  double comm;
  if (!run->memory->fits)
    return "memory";
  if (it == NULL)
    return "none";
  comm = it->exposed_tp_s + it->exposed_cp_s + it->exposed_pp_s + it->exposed_dp_s + it->exposed_ep_s;
  return comm >= COMM_COMPARABLE * it->compute_s ? "communication" : "compute";
}

/* With a capacity factor (token dropping): what the experts compute and
 * what the busiest GPU's experts drop at the plan's --moe-imbalance r, 1 -
 * capacity / r of their routed tokens where r is above the capacity */
static void
token_dropping (GPtrArray *out, const SimRun *run)
{
  const SimPlan *p = run->plan;
  double cf = p->moe_capacity_factor, r = p->moe_imbalance > 0 ? p->moe_imbalance : 1.0;
  g_autofree char *dropped = NULL;
  if (!sim_model_is_moe (run->model) || cf <= 0)
    return;
  dropped = r > cf ? g_strdup_printf ("the busiest GPU's experts (%.2fx the mean, --moe-imbalance) "
                                      "drop %.1f%% of their routed tokens",
                                      r, 100 * (1 - cf / r))
                   : g_strdup_printf ("at --moe-imbalance %.2f no token is dropped", r);
  g_ptr_array_add (out, g_strdup_printf (
      "token dropping: each expert takes at most %.2fx its even share of the routed tokens%s; %s",
      cf, p->moe_pad_to_capacity ? ", padded to it (every GPU's experts compute the whole capacity, "
                                   "and the dispatcher never waits for the host)" : "",
      dropped));
}

/* A block-scaled (MXFP8 or NVFP4) mixture-of-experts plan that launches
 * each local expert's GEMMs and casts on their own, where Transformer
 * Engine's fused grouped MLP could run them (sim-plan-experts.c says
 * where): the line gives an MoE layer's forward and backward per
 * micro-batch both ways, from the same cost model (sim_cost_layer of the
 * plan with --moe-fused-grouped-mlp), as NVIDIA's Blackwell MoE recipes
 * run them from NeMo 26.06 (tests/validation/data/moe_training.md) */
static void
fused_experts (GPtrArray *out, const SimRun *run, const SimLayerCost *cost)
{
  const SimPlan *p = run->plan;
  g_autoptr (SimPlanRequest) want = NULL;
  g_autoptr (SimPlan) q = NULL;
  SimLayerCost with;
  double now_s, fused_s;
  if (!sim_model_is_moe (run->model) || p->moe_fused_grouped_mlp || run->model->mlp != SIM_MLP_SWIGLU ||
      !((p->fp8 != SIM_FP8_OFF && p->fp8_recipe == SIM_FP8_MXFP8) || p->fp4 != SIM_FP4_OFF) ||
      (p->recompute == SIM_RECOMPUTE_SELECTIVE && (p->recompute_modules & SIM_RECOMPUTE_MOE_ACT)))
    return;
  want = sim_plan_request_of (p);
  if (!sim_plan_request_set_number (want, "moe-fused-grouped-mlp", 1, NULL) ||
      (q = sim_plan_resolve (want, run->topo, run->model, NULL)) == NULL)
    return;
  sim_cost_layer (run->model, q, sim_topology_gpu_type (run->topo, 0), &with);
  now_s = cost->moe_fwd_s + cost->moe_bwd_s;
  fused_s = with.moe_fwd_s + with.moe_bwd_s;
  if (fused_s >= now_s)
    return;
  g_ptr_array_add (out, g_strdup_printf (
      "experts: each local expert's GEMMs and casts run as kernels of their own; Transformer "
      "Engine's fused grouped MLP (--moe-fused-grouped-mlp) would take an MoE layer's forward "
      "and backward from %.2f to %.2f ms per micro-batch",
      1e3 * now_s, 1e3 * fused_s));
}

/* A layer pass whose kernels the host launches more slowly than the GPU
 * runs them (sim-cost.c wall(): the CPU runs ahead of the GPU only while
 * it is faster) is named: its time rests on the host-launch constant
 * (fitted on dense runs, <efficiency host-launch>) rather than on the
 * GPU's rates.  The frameworks' cure is CUDA graphs: where the plan does
 * not capture the layer yet (and may: Megatron, no full recomputation),
 * the line gives the host's time under the scopes NVIDIA's recipes use,
 * from the same cost model (sim_cost_layer of the plan with them). */
static void
launch_bound (GPtrArray *out, const SimRun *run, const SimLayerCost *cost)
{
  static const char *const what[SIM_LAYER_PASSES] = {
    [SIM_LAYER_FWD] = "a dense layer's forward",
    [SIM_LAYER_BWD] = "a dense layer's backward",
    [SIM_MOE_LAYER_FWD] = "an MoE layer's forward",
    [SIM_MOE_LAYER_BWD] = "an MoE layer's backward",
  };
  const SimGpuType *g = sim_topology_gpu_type (run->topo, 0);
  const SimPlan *p = run->plan;
  guint64 moe = sim_model_moe_layers (run->model);
  guint want;
  int worst = -1;
  g_autofree char *cure = NULL;
  for (int i = 0; i < SIM_LAYER_PASSES; i++) {
    gboolean present = i < SIM_MOE_LAYER_FWD ? moe < run->model->layers : moe > 0;
    if (present && cost->host_s[i] > cost->gpu_s[i] &&
        (worst < 0 || cost->host_s[i] / cost->gpu_s[i] > cost->host_s[worst] / cost->gpu_s[worst]))
      worst = i;
  }
  if (worst < 0)
    return;
  want = worst < SIM_MOE_LAYER_FWD ? SIM_GRAPH_ATTN | SIM_GRAPH_MLP
                   : SIM_GRAPH_ATTN | SIM_GRAPH_MOE_ROUTER | SIM_GRAPH_MOE_PREPROCESS;
  if (p->framework == SIM_FRAMEWORK_MEGATRON && p->recompute != SIM_RECOMPUTE_FULL &&
      (p->cuda_graph_impl == SIM_CUDA_GRAPH_NONE || (p->cuda_graph_scope & want) != want)) {
    g_autoptr (SimPlanRequest) r = sim_plan_request_of (p);
    g_autoptr (SimPlan) q = NULL;
    guint scopes = p->cuda_graph_scope | want;
    g_autofree char *scope = NULL;
    SimLayerCost with;
    if (!sim_model_is_moe (run->model))
      scopes &= ~(guint) (SIM_GRAPH_MOE_ROUTER | SIM_GRAPH_MOE_PREPROCESS);
    scope = sim_cuda_graph_scope_string (scopes, ",");
    if ((p->cuda_graph_impl == SIM_CUDA_GRAPH_NONE &&
         !sim_plan_request_set (r, "cuda-graph-impl", sim_cuda_graph_impl_name (SIM_CUDA_GRAPH_TE), NULL, NULL)) ||
        !sim_plan_request_set (r, "cuda-graph-scope", scope, NULL, NULL) ||
        (q = sim_plan_resolve (r, run->topo, run->model, NULL)) == NULL)
      goto line;
    sim_cost_layer (run->model, q, g, &with);
    cure = g_strdup_printf ("; under CUDA graphs (--cuda-graph-scope %s) the host would launch "
                            "them in %.2f ms", scope, 1e3 * with.host_s[worst]);
  }
line:
  g_ptr_array_add (out, g_strdup_printf (
      "launch-bound: the host launches %s kernels in %.2f ms, the GPU runs them in %.2f ms "
      "(per micro-batch; %.1f us per launch, fitted on dense runs): a larger micro-batch "
      "fills the GPU%s",
      what[worst], 1e3 * cost->host_s[worst], 1e3 * cost->gpu_s[worst], 1e6 * g->eff.host_launch_s,
      cure != NULL ? cure : ""));
}

/* A stage that computes well above the others sets the pipeline's pace
 * (sim-balance.h): named from 10 % above the stages' mean, with the layout
 * that evens the virtual stages when one gains 5 % or more; returns the
 * stage named, or -1 */
#define IMBALANCE_NOTABLE 0.10

static int
pipeline_imbalance (GPtrArray *out, const SimRun *run, const SimLayerCost *c)
{
  const SimPlan *p = run->plan;
  g_autofree double *st = NULL;
  g_autofree char *layout = NULL;
  double mean = 0, now = 0, best = 0;
  int worst = 0;
  if (p->pp < 2)
    return -1;
  st = g_new (double, p->pp);
  sim_balance_stage_s (run->model, p, c, st);
  for (int s = 0; s < p->pp; s++) {
    mean += st[s] / p->pp;
    if (st[s] > st[worst])
      worst = s;
  }
  if (!(st[worst] >= (1 + IMBALANCE_NOTABLE) * mean))
    return -1;
  g_ptr_array_add (out, g_strdup_printf (
      "pipeline imbalance: stage %d computes %.1f ms per micro-batch, %.0f%% above the stages' "
      "mean of %.1f ms%s; the others wait for it", worst, 1e3 * st[worst],
      100 * (st[worst] / mean - 1), 1e3 * mean,
      sim_plan_stage_has_output (p, worst) && p->mtp_layers > 0
          ? " (it holds the output layer and the multi-token-prediction layers)"
      : sim_plan_stage_has_output (p, worst) ? " (it holds the output layer and loss)"
      : worst == 0                           ? " (it holds the embedding)"
                                             : ""));
  layout = sim_balance_layout (run->model, p, c, 0.05, &now, &best);
  if (layout != NULL)
    g_ptr_array_add (out, g_strdup_printf (
        "remedy: --pipeline-model-parallel-layout '%s' places the layers so that no virtual "
        "stage computes more than %.1f ms per micro-batch (%.1f ms now)", layout, 1e3 * best,
        1e3 * now));
  return worst;
}

GPtrArray *
sim_run_diagnose (const SimRun *run, const SimRun *ref)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  const SimIteration *it = run->time;
  const SimPlan *p = run->plan;
  const SimMemory *mem = run->memory;
  SimLayerCost cost;
  int slowest;

  if (!mem->fits) {
    static const char *why[] = { "", "model states alone exceed the usable memory",
                                 "the states fit but the activations do not",
                                 "a single layer with one sequence does not fit" };
    g_ptr_array_add (out, g_strdup_printf ("memory wall: out of memory, case %s (%s): peak %.1f GB on stage %d against %.1f GB usable",
                                           sim_oom_case_name (mem->oom_case), why[mem->oom_case],
                                           mem->peak_bytes / 1e9, mem->peak_stage, mem->usable_bytes / 1e9));
    return out;
  }
  if (it == NULL)
    return out;
  {
    double comm = it->exposed_tp_s + it->exposed_cp_s + it->exposed_pp_s + it->exposed_dp_s +
                  it->exposed_ep_s;
    const char *kind = "TP";
    double worst = it->exposed_tp_s;
    if (it->exposed_pp_s > worst)
      kind = "PP", worst = it->exposed_pp_s;
    if (it->exposed_dp_s > worst)
      kind = "DP", worst = it->exposed_dp_s;
    if (it->exposed_cp_s > worst)
      kind = "CP", worst = it->exposed_cp_s;
    if (it->exposed_ep_s > worst)
      kind = "EP", worst = it->exposed_ep_s;
    if (comm >= COMM_COMPARABLE * it->compute_s) {
      g_ptr_array_add (out, g_strdup_printf ("communication wall: %.0f%% of the step waits for communication (%s most: %.2f s of %.2f s); the GPUs compute %.0f%% of the time",
                                             100 * comm / it->step_s, kind, worst, it->step_s,
                                             100 * it->compute_s / it->step_s));
      if (g_str_equal (kind, "TP"))
        g_ptr_array_add (out, g_strdup_printf ("remedy: tensor parallelism of %d is exposed on every layer; a smaller --tp with a larger --pp moves that traffic to fewer, larger pipeline sends (sim compare shows the trade)", p->tp));
      else if (g_str_equal (kind, "DP"))
        g_ptr_array_add (out, g_strdup ("remedy: the gradient reduction is exposed: keep --overlap on, use fewer, larger replicas, or ZeRO 1 instead of 2/3"));
      else if (g_str_equal (kind, "EP"))
      {
        /* what applies: the network between nodes, then the combined 1F1B */
        gboolean spans = sim_plan_expert_group_nodes (p, run->topo) > 1;
        g_ptr_array_add (out, g_strdup_printf (
            "remedy: the token all-to-all of the mixture-of-experts layers is exposed (expert "
            "groups of etp %d x ep %d GPUs%s): %s%sfewer tokens per all-to-all",
            p->etp, p->ep, spans ? ", across nodes" : ", inside one NVLink domain",
            !spans        ? ""
            : p->etp > 1  ? "keep the expert group inside a node's NVLink domain (a smaller --ep, or "
                            "--etp 1), "
                          : "keep the expert group inside a node's NVLink domain (a smaller --ep), ",
            /* (Megatron-Core's combined 1F1B refuses full recomputation) */
            p->moe_a2a_overlap > 0 || p->recompute == SIM_RECOMPUTE_FULL
                ? "or "
                : "hide it behind the adjacent micro-batch's compute "
                  "(--overlap-moe-expert-parallel-comm, Megatron-Core's combined 1F1B), or "));
      }
      else if (g_str_equal (kind, "PP"))
        g_ptr_array_add (out, g_strdup ("remedy: pipeline sends are exposed: fewer stages, or stages on NVLink neighbours (--order)"));
      else
        g_ptr_array_add (out, g_strdup ("remedy: the context-parallel ring does not hide behind attention: a smaller --cp"));
    } else {
      const char *precision = NULL;
      double m = sim_run_mfu_gemm_peak (run->topo, p, it->mfu, &precision);
      g_ptr_array_add (out, g_strdup_printf ("compute wall: the GPUs compute %.0f%% of the step at %.0f%% MFU%s; exposed communication is %.0f%% of the step",
                                             100 * it->compute_s / it->step_s, 100 * m,
                                             sim_run_gemm_peak_words (precision),
                                             100 * comm / it->step_s));
    }
    /* the layer costs both lines read */
    sim_cost_layer (run->model, p, sim_topology_gpu_type (run->topo, 0), &cost);
    launch_bound (out, run, &cost);
    fused_experts (out, run, &cost);
    token_dropping (out, run);
    slowest = pipeline_imbalance (out, run, &cost);
    if (p->n_slow_links > 0 && run->straggler_base_step_s > 0) {
      g_autofree char *added = sim_run_exposed_added_text (run);
      gboolean many = p->n_slow_links > 1;
      g_ptr_array_add (out, g_strdup_printf (
          "slow link%s: the step is %+.1f%% longer than with none slow (%.3f s -> %.3f s)%s; the "
          "communication exposed beyond none slow: %s; replace %s, or leave %s node%s out of the "
          "job", many ? "s" : "", 100 * (it->step_s / run->straggler_base_step_s - 1),
          run->straggler_base_step_s, it->step_s,
          p->n_slow > 0 ? " with the slow GPUs" : "", added, many ? "them" : "it",
          many ? "their" : "its", many ? "s" : ""));
    }
    else if (p->n_slow > 0 && run->straggler_base_step_s > 0) {
      /* the what-if's bubble is the wait for the slow GPU, which no
       * schedule or micro-batch count removes */
      gboolean many = p->n_slow > 1 || p->slow[0].node;
      g_autofree char *bubble =
          it->bubble_fraction >= BUBBLE_NOTABLE
              ? g_strdup_printf ("; the pipeline bubble (%.0f%% of the step) is the other stages "
                                 "waiting for %s", 100 * it->bubble_fraction, many ? "them" : "it")
              : g_strdup ("");
      g_ptr_array_add (out, g_strdup_printf (
          "straggler: the slow GPU%s make%s the step %+.1f%% longer than with none slow (%.3f s "
          "-> %.3f s)%s; replace %s, or give %s stage%s fewer layers",
          many ? "s" : "", many ? "" : "s", 100 * (it->step_s / run->straggler_base_step_s - 1),
          run->straggler_base_step_s, it->step_s, bubble, many ? "them" : "it",
          many ? "their" : "its", many ? "s" : ""));
    }
    else if (it->bubble_fraction >= BUBBLE_NOTABLE && slowest >= 0)
      g_ptr_array_add (out, g_strdup_printf ("pipeline bubble %.0f%% of the step, much of it the other stages waiting for stage %d (above)",
                                             100 * it->bubble_fraction, slowest));
    else if (it->bubble_fraction >= BUBBLE_NOTABLE)
      g_ptr_array_add (out, g_strdup_printf ("pipeline bubble %.0f%% of the step: more micro-batches per replica (%" G_GUINT64_FORMAT " now), %s",
                                             100 * it->bubble_fraction, p->micro_batches,
                                             p->schedule == SIM_SCHEDULE_INTERLEAVED ? "more virtual stages" : "or the interleaved schedule"));
    if (mem->tight)
      g_ptr_array_add (out, g_strdup_printf ("memory: peak %.1f GB on stage %d is over the %.1f GB usable: it fits only "
                                             "without the %.0f%% fragmentation allowance; a smaller micro-batch or "
                                             "recomputation buys headroom",
                                             mem->peak_bytes / 1e9, mem->peak_stage, mem->usable_bytes / 1e9,
                                             100 * mem->fragmentation));
    else {
      double headroom = (double) mem->usable_bytes - (double) mem->peak_bytes;
      g_ptr_array_add (out, g_strdup_printf ("memory: peak %.1f GB of %.1f GB usable on stage %d (%.1f GB headroom)",
                                             mem->peak_bytes / 1e9, mem->usable_bytes / 1e9, mem->peak_stage,
                                             headroom / 1e9));
    }
  }
  if (ref != NULL && ref != run && ref->time != NULL) {
    double e = sim_run_scaling_efficiency (run, ref);
    g_ptr_array_add (out, g_strdup_printf ("scaling efficiency E = t1 k1 / (k tk) = %.2f against %s on %d GPU%s: %s",
                                           e, ref->label, sim_plan_world_size (ref->plan),
                                           sim_plan_world_size (ref->plan) == 1 ? "" : "s",
                                           e >= 0.9 ? "the extra GPUs pay for themselves"
                                           : e >= 0.7 ? "the extra GPUs help, at a cost"
                                                      : "most of the extra GPUs are wasted"));
  }
  return out;
}

SimRunSummary *
sim_run_summary_new (int index, const char *label, int nodes)
{
  SimRunSummary *s = g_new0 (SimRunSummary, 1);
  s->index = index;
  s->label = g_strdup (label);
  s->nodes = nodes;
  s->e = NAN;
  s->gemm_precision = "bf16";
  return s;
}

void
sim_run_summary_free (gpointer p)
{
  SimRunSummary *s = p;
  g_free (s->label);
  sim_plan_request_free (s->request);
  g_free (s->pruned);
  g_free (s->oom_case);
  g_free (s->wall);
  g_free (s);
}

SimRunSummary *
sim_run_summary_copy (const SimRunSummary *s)
{
  SimRunSummary *c = g_memdup2 (s, sizeof *s);
  c->label = g_strdup (s->label);
  c->request = s->request != NULL ? sim_plan_request_copy (s->request) : NULL;
  c->pruned = g_strdup (s->pruned);
  c->oom_case = g_strdup (s->oom_case);
  c->wall = g_strdup (s->wall);
  return c;
}

void
sim_run_summary_set_request (SimRunSummary *s, SimPlanRequest *req)
{
  sim_plan_request_free (s->request);
  s->request = req;
  s->global_batch = req != NULL ? (guint64) sim_plan_request_value (req, "global-batch") : 0;
}

void
sim_run_summary_fill (SimRunSummary *s, const SimRun *run)
{
  const SimIteration *it = run->time;
  s->gpus = sim_plan_world_size (run->plan);
  s->fits = run->memory->fits;
  s->tight = run->memory->tight;
  g_free (s->oom_case);
  s->oom_case = g_strdup (sim_oom_case_name (run->memory->oom_case));
  s->peak_bytes = run->memory->peak_bytes;
  s->usable_bytes = run->memory->usable_bytes;
  s->screened = run->extrapolated;
  g_free (s->wall);
  s->wall = g_strdup (sim_run_wall (run));
  s->has_time = it != NULL;
  s->simulated = it != NULL;
  if (it == NULL)
    return;
  s->step_s = it->step_s;
  s->tokens_per_s = it->tokens_per_s;
  s->mfu = it->mfu;
  s->mfu_gemm = sim_run_mfu_gemm_peak (run->topo, run->plan, it->mfu, &s->gemm_precision);
  {
    SimErrorBand b;
    sim_run_error_band (run, &b);
    s->band = b.error;
  }
  s->bubble = it->bubble_fraction;
  s->compute_s = it->compute_s;
  s->tp_s = it->exposed_tp_s;
  s->cp_s = it->exposed_cp_s;
  s->pp_s = it->exposed_pp_s;
  s->dp_s = it->exposed_dp_s;
  s->ep_s = it->exposed_ep_s;
  {
    /* the runs of a steady state stand for sum(m_i) micro-batches of work */
    double m = (double) (it->steady_micro_batches[0] + it->steady_micro_batches[1] +
                         it->steady_micro_batches[2]);
    s->whole_activities = it->activities * (m > 0 ? (double) run->plan->micro_batches / m : 1.0);
  }
  s->passes = (double) run->plan->micro_batches * MAX (run->plan->virtual_stages, 1) * run->plan->pp;
}

double
sim_run_mfu_gemm_peak (const SimTopology *t, const SimPlan *p, double mfu_bf16, const char **precision)
{
  const SimGpuType *g = sim_topology_gpu_type (t, 0);
  double bf16 = g->peak_flop_per_s[SIM_DTYPE_BF16] > 0 ? g->peak_flop_per_s[SIM_DTYPE_BF16]
                                                       : g->peak_flop_per_s[SIM_DTYPE_FP16];
  SimDtype d = p->fp4 != SIM_FP4_OFF ? SIM_DTYPE_FP4 : p->fp8 != SIM_FP8_OFF ? SIM_DTYPE_FP8 : SIM_DTYPE_BF16;
  /* sim_plan_resolve refuses FP8 and FP4 on a GPU whose file gives no such peak */
  if (d != SIM_DTYPE_BF16 && g->peak_flop_per_s[d] <= 0)
    d = SIM_DTYPE_BF16;
  if (precision != NULL)
    *precision = d == SIM_DTYPE_FP4 ? "fp4" : d == SIM_DTYPE_FP8 ? "fp8" : "bf16";
  return d == SIM_DTYPE_BF16 ? mfu_bf16 : mfu_bf16 * bf16 / g->peak_flop_per_s[d];
}

const char *
sim_run_gemm_peak_words (const char *precision)
{
  return g_str_equal (precision, "fp8") ? " of the FP8 peak" : g_str_equal (precision, "fp4") ? " of the FP4 peak" : "";
}

const char *
sim_run_summary_status (const SimRunSummary *s)
{
  return !s->fits ? "oom" : s->tight ? "tight" : "fits";
}

int
sim_run_summary_cmp (const SimRunSummary *a, const SimRunSummary *b)
{
  double ta = a->has_time ? a->tokens_per_s : 0, tb = b->has_time ? b->tokens_per_s : 0;
  if (a->fits != b->fits)
    return a->fits ? -1 : 1;
  /* then those simulated (a sweep's others were pruned by their bound) */
  if (a->fits && a->has_time != b->has_time)
    return a->has_time ? -1 : 1;
  /* a layout that fits only without the fragmentation allowance is not one
   * to book a cluster on while another fits with it: after all of those */
  if (a->fits && a->tight != b->tight)
    return a->tight ? 1 : -1;
  if (a->fits && ta != tb)
    return ta > tb ? -1 : 1;
  /* equal throughput (or none fits): the one with more headroom first */
  if (a->peak_bytes != b->peak_bytes)
    return a->peak_bytes < b->peak_bytes ? -1 : 1;
  return a->index - b->index; /* a total order: the same table every run */
}

static int
summary_cmp (gconstpointer pa, gconstpointer pb)
{
  return sim_run_summary_cmp (*(const SimRunSummary *const *) pa, *(const SimRunSummary *const *) pb);
}

void
sim_run_summaries_rank (GPtrArray *summaries)
{
  g_ptr_array_sort (summaries, summary_cmp);
}

void
sim_run_summaries_efficiency (GPtrArray *ranked)
{
  const SimRunSummary *ref = NULL;
  for (guint i = 0; i < ranked->len; i++) {
    const SimRunSummary *r = g_ptr_array_index (ranked, i);
    if (!r->has_time)
      continue;
    if (ref == NULL || r->gpus < ref->gpus)
      ref = r; /* ranked by throughput: the first of the fewest GPUs is its best */
  }
  for (guint i = 0; i < ranked->len; i++) {
    SimRunSummary *r = g_ptr_array_index (ranked, i);
    r->e = ref != NULL && r->has_time ? (r->tokens_per_s / r->gpus) / (ref->tokens_per_s / ref->gpus) : NAN;
  }
}

void
sim_run_summaries_ties (GPtrArray *ranked)
{
  const SimRunSummary *best = NULL;
  for (guint i = 0; i < ranked->len; i++) {
    SimRunSummary *r = g_ptr_array_index (ranked, i);
    r->tie = FALSE;
    if (!r->fits || !r->has_time)
      continue;
    if (best == NULL)
      best = r;
    else
      r->tie = best->band > 0 && (best->tokens_per_s - r->tokens_per_s) <= best->band * best->tokens_per_s;
  }
}

void
sim_run_ties (GPtrArray *runs, gboolean *tie)
{
  g_autoptr (GPtrArray) sums = g_ptr_array_new_with_free_func (sim_run_summary_free);
  for (guint i = 0; i < runs->len; i++) {
    SimRunSummary *s = sim_run_summary_new ((int) i, "", 0);
    sim_run_summary_fill (s, g_ptr_array_index (runs, i));
    g_ptr_array_add (sums, s);
  }
  sim_run_summaries_ties (sums);
  for (guint i = 0; i < runs->len; i++)
    tie[i] = ((const SimRunSummary *) g_ptr_array_index (sums, i))->tie;
}

void
sim_run_rank (GPtrArray *runs)
{
  g_autoptr (GPtrArray) sums = g_ptr_array_new_with_free_func (sim_run_summary_free);
  g_autofree gpointer *order = g_new (gpointer, runs->len);
  for (guint i = 0; i < runs->len; i++) {
    const SimRun *r = g_ptr_array_index (runs, i);
    SimRunSummary *s = sim_run_summary_new ((int) i, r->label, 0);
    sim_run_summary_fill (s, r);
    g_ptr_array_add (sums, s);
  }
  sim_run_summaries_rank (sums);
  for (guint i = 0; i < sums->len; i++)
    order[i] = g_ptr_array_index (runs, ((SimRunSummary *) g_ptr_array_index (sums, i))->index);
  for (guint i = 0; i < runs->len; i++)
    runs->pdata[i] = order[i];
}

gboolean
sim_run_train_estimate (const SimRun *run, double tokens, double price, SimTrainEstimate *out)
{
  memset (out, 0, sizeof *out);
  if (run->time == NULL || !run->memory->fits || !(run->time->tokens_per_s > 0) || !(tokens > 0))
    return FALSE;
  out->tokens = tokens;
  out->days = tokens / run->time->tokens_per_s / 86400.0;
  out->gpu_hours = out->days * 24.0 * sim_plan_world_size (run->plan);
  out->cost = price > 0 ? out->gpu_hours * price : 0;
  {
    SimErrorBand b;
    sim_run_error_band (run, &b);
    out->band = b.error;
    out->days_lo = out->days * (1 - b.error), out->days_hi = out->days * (1 + b.error);
    out->gpu_hours_lo = out->gpu_hours * (1 - b.error), out->gpu_hours_hi = out->gpu_hours * (1 + b.error);
    out->cost_lo = out->cost * (1 - b.error), out->cost_hi = out->cost * (1 + b.error);
  }
  return TRUE;
}

void
sim_run_error_band (const SimRun *run, SimErrorBand *out)
{
  const SimEfficiency *eff = &sim_topology_gpu_type (run->topo, 0)->eff;
  if (sim_model_is_moe (run->model) && eff->bands.moe.rows > 0)
    *out = (SimErrorBand) { eff->bands.moe.error, "moe" };
  else if (run->plan->framework == SIM_FRAMEWORK_FSDP && eff->bands.fsdp.rows > 0)
    *out = (SimErrorBand) { eff->bands.fsdp.error, "fsdp" };
  else if (run->plan->framework == SIM_FRAMEWORK_TORCHTITAN && eff->bands.torchtitan.rows > 0)
    *out = (SimErrorBand) { eff->bands.torchtitan.error, "torchtitan" };
  else if (eff->bands.heldout.error > 0)
    *out = (SimErrorBand) { eff->bands.heldout.error, "heldout" };
  else if (eff->bands.fitted.error > 0)
    *out = (SimErrorBand) { eff->bands.fitted.error, "fitted" };
  else
    *out = (SimErrorBand) { 0, "none" };
}
