/* sim-iteration.c — see sim-iteration.h; the parts in sim-iteration-build.c,
 * -shortcuts.c, -analysis.c and -steady.c (sim-iteration-private.h)
 *
 * Two halves.  The builder (SimIterBuilder) turns a plan into activities
 * on a private engine in three phases: each replica's passes in program
 * order, the pipeline sends between stages, then per stage the gradient
 * reduction, the optimizer step and the ZeRO parameter all-gather.  The
 * analysis reads the finished run back: per-stage time and activation
 * memory, their averages, the critical path, throughput and FLOPs. */
#include "sim-iteration-private.h"

#include <math.h>
#include <string.h>

#include "sim-activation.h"
#include "sim-collective.h"
#include "sim-error.h"
#include "sim-schedule.h"
#include "sim-variability.h"

const char *
sim_span_kind_name (SimSpanKind k)
{
  static const char *names[] = { "forward", "backward", "recompute", "optimizer", "tp",
                                 "cp",      "pp",       "dp",        "ep",       "gate", "weight" };
  return k < SIM_SPAN_KINDS ? names[k] : "?";
}

/* 64-bit keys of two small halves (group << 32 | seq) mixed (g_int64_hash folds the halves with xor,
 * which makes small groups and small seqs collide) */
guint
sim_iter_key_hash (gconstpointer p)
{
  guint64 x = *(const guint64 *) p * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15);
  return (guint) (x >> 32);
}

/* LoRA: one layer's adapter parameters on one TP rank, the only ones with
 * gradients to reduce and an optimizer step (sim-cost.c lora_adapters): a
 * column-parallel projection's A (in x r) whole and B (r x out/tp); a
 * row-parallel one's A (in/tp x r) and B (r x out) whole */
double
sim_iter_lora_rank_params (const SimModel *m, const SimPlan *p)
{
  SimLoraAdapter a[SIM_LORA_MAX_ADAPTERS];
  int n = sim_model_lora_adapters (m, p->lora_targets, a);
  double r = (double) p->lora_rank, t = p->tp, params = 0;
  for (int i = 0; i < n; i++)
    params += a[i].column_parallel ? r * ((double) a[i].in + (double) a[i].out / t)
                                   : r * ((double) a[i].in / t + (double) a[i].out);
  return params;
}

/* the parameters of stage sm (per GPU) that have gradients and an
 * optimizer step, less the routed experts': all of them, or under LoRA the
 * adapters of its layers (the frozen base, embedding and output layer have
 * neither) */
double
sim_iter_trainable_dense (const SimModel *m, const SimPlan *p, const SimStageMemory *sm)
{
  if (p->lora_rank > 0)
    return (double) sm->layers * sim_iter_lora_rank_params (m, p);
  return (double) (sm->params - sm->expert_params);
}

/* ---- the run ---- */

SimIteration *
sim_iteration_run (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
                   const SimMemory *ledger, gboolean full, GError **error)
{
  return sim_iteration_run_with_cost (topo, model, plan, ledger, full, NULL, error);
}

/* builds the iteration into *b (initialised here); FALSE with error set */
gboolean
sim_iter_build (SimIterBuilder *b, const SimTopology *topo, const SimModel *model, const SimPlan *plan,
       const SimMemory *ledger, gboolean full, const SimLayerCost *cost, int alone, Scratch *sc,
       GError **error)
{
  sim_iter_builder_init (b, topo, model, plan, ledger, full, cost, alone, sc);
  for (int r = 0; r < b->replicas; r++)
    for (int s = 0; s < plan->pp; s++)
      sim_iter_build_stage_program (b, r, s);
  sim_iter_build_pipeline_sends (b);
  for (int s = 0; s < plan->pp; s++)
    sim_iter_build_stage_update (b, s);
  if (b->error != NULL) {
    g_propagate_error (error, g_steal_pointer (&b->error));
    return FALSE;
  }
  return TRUE;
}

/* whether b's delays are worth a run: they stand for at least a quarter
 * as many activities as b has.  Below that they save little, and where
 * something meets one (sends reaching a stage from both sides, the
 * gradient buckets' flows) the second run costs nearly twice the one run
 * without them.  A choice of speed only, never of the answer; over the
 * 415 published runs of tests/validation (bench/validation-layouts.py)
 * it spares the second runs of Llama 3.1 70B at CP 2 (0.12) and
 * DeepSeek-V3 on GB200 (0.23), keeps Llama 3.1 405B's one run (0.28) */
static gboolean
shortcut_worth (const SimIterBuilder *b)
{
  return 4 * b->alone_saved >= sim_engine_n_activities (b->e);
}

/* What b would count built again with only the delays of `keep` (ALONE_
 * flags) and the rest as flows, before any run (nothing taken off as a
 * culprit): each delay given up becomes the activities its flows are
 * (sim_collective_alone_counted), in its own span, which alone_saved_by
 * holds by kind and by micro-batch.  Gives the activities of no
 * micro-batch (`once`) and of the micro-batches (`rest`), and returns
 * whether the delays kept would be worth a run (shortcut_worth) */
gboolean
sim_iter_rebuilt_counts (const SimIterBuilder *b, int keep, guint64 *once, guint64 *rest)
{
  guint64 saved = 0;
  *once = *rest = 0;
  for (guint32 a = 0; a < b->act_span->len; a++)
    *once += sim_iter_span_of ((SimIterBuilder *) b, a)->mb < 0;
  *rest = b->act_span->len - *once;
  for (AloneKind k = 0; k < ALONE_KINDS; k++) {
    if (keep & alone_flag (k)) {
      saved += b->alone_saved_by[k].once + b->alone_saved_by[k].per_mb;
    } else {
      *once += b->alone_saved_by[k].once;
      *rest += b->alone_saved_by[k].per_mb;
    }
  }
  return 4 * saved >= *once + *rest;
}

/* sim_iteration_run_with_cost on sc */
SimIteration *
sim_iter_run_on (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
        const SimMemory *ledger, gboolean full, const SimLayerCost *cost, gboolean shortcut,
        Scratch *sc, GError **error)
{
  g_auto (SimIterBuilder) b = { 0 };
  SimIteration *it;
  gboolean ran = FALSE;
  g_autoptr (GHashTable) off = g_hash_table_new_full (sim_iter_key_hash, g_int64_equal, g_free, NULL);
  g_autoptr (GArray) culprits = g_array_new (FALSE, FALSE, sizeof (gint64));
  guint64 spent_activities = 0, spent_events = 0; /* of runs not kept */

  /* TP collectives, pipeline sends and gradient buckets as one delay each
   * where that is exact: first all of them (but those not worth a run:
   * sim_iter_alone_drop); then, a few times at most, all but those something met in
   * the run before, as flows (sim_iter_alone_exact); when that does not settle, the
   * same without the buckets', then without the sends' shortcut, then
   * without any; at most ALONE_RUNS runs in all before the last */
  static const int masks[] = { ALONE_TP | ALONE_PP | ALONE_DP | ALONE_CP, ALONE_TP | ALONE_PP | ALONE_CP,
                                ALONE_TP | ALONE_CP, 0 };
  int level = shortcut ? 0 : 3, drop = 0, rounds = 0, runs = 0;
  guint64 once, rest;
  for (;;) {
    gboolean exact = FALSE;
    int d;
    b.alone_off = off; /* kept by builder_init */
    if (!sim_iter_build (&b, topo, model, plan, ledger, full, cost,
                (masks[level] & ~drop) | (shortcut ? MIRROR_DP : 0), sc, error))
      return NULL;
    if (b.alone == 0)
      break;
    d = sim_iter_alone_drop (&b);
    /* before the first run: delays that stand for less than a quarter of
     * the run's activities are not worth the risk of a second run (where
     * something meets one) that would cost more than one without them
     * (shortcut_worth); where some are dropped, what the build without
     * them would count says so without making it (rebuilt_counts: were
     * more dropped there, fewer still would be left) */
    if (runs == 0 && (d == 0 ? !shortcut_worth (&b) : !sim_iter_rebuilt_counts (&b, b.alone & ~d, &once, &rest))) {
      level = 3;
      sim_iter_builder_clear (&b);
      memset (&b, 0, sizeof b);
      continue;
    }
    if (d == 0) {
      if (!sim_engine_run (b.e, error))
        return NULL;
      exact = sim_iter_alone_exact (&b, culprits);
      rounds++;
      runs++;
      spent_activities += sim_engine_n_activities (b.e);
      spent_events += sim_engine_events (b.e);
    }
    if (exact) {
      ran = TRUE;
      spent_activities -= sim_engine_n_activities (b.e);
      spent_events -= sim_engine_events (b.e);
      break;
    }
    drop |= d;
    /* each once; when more than a tenth of the delays were met, more rounds
     * would hardly be faster than flows: the next level down that this plan
     * takes a shortcut at */
    g_array_sort (culprits, sim_iter_int64_cmp);
    for (guint i = 0; i < culprits->len; i++)
      if (i == 0 || g_array_index (culprits, gint64, i) != g_array_index (culprits, gint64, i - 1))
        g_hash_table_add (off, g_memdup2 (&g_array_index (culprits, gint64, i), sizeof (gint64)));
    if (d == 0 && (culprits->len == 0 || rounds > ALONE_ROUNDS ||
                   (guint64) g_hash_table_size (off) * 10 > sim_iter_alone_count (&b))) {
      do
        level++;
      while (level < 3 && (masks[level] & b.alone) == (masks[level - 1] & b.alone));
      rounds = 0;
      g_hash_table_remove_all (off);
    }
    if (runs >= ALONE_RUNS)
      level = 3;
    g_array_set_size (culprits, 0);
    sim_iter_builder_clear (&b);
    memset (&b, 0, sizeof b);
  }
  if (!ran && !sim_engine_run (b.e, error))
    return NULL;

  sim_iter_spans_from_activities (&b);
  it = g_new0 (SimIteration, 1);
  it->symmetric = !full;
  it->dp_mirrored = b.dp_mirror;
  it->gemm_table = b.gpu->gemm != NULL && b.gpu->gemm->len > 0;
  sim_iter_analyse (it, &b);
  it->activities = (guint32) MIN (spent_activities + sim_engine_n_activities (b.e), G_MAXUINT32);
  it->events = spent_events + sim_engine_events (b.e);
  return it;
}

SimIteration *
sim_iteration_run_with_cost (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
                             const SimMemory *ledger, gboolean full, const SimLayerCost *cost,
                             GError **error)
{
  g_auto (Scratch) sc = { 0 };
  return sim_iter_run_on (topo, model, plan, ledger, full, cost, TRUE, &sc, error);
}

SimIteration *
sim_iteration_run_reference (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
                             const SimMemory *ledger, gboolean full, GError **error)
{
  g_auto (Scratch) sc = { 0 };
  return sim_iter_run_on (topo, model, plan, ledger, full, NULL, FALSE, &sc, error);
}

double
sim_iteration_bound_s (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
                       const SimMemory *ledger)
{
  int p = plan->pp, v = plan->virtual_stages;
  /* DualPipe: each micro-batch crosses one of a rank's two copies */
  gboolean dual = plan->schedule == SIM_SCHEDULE_DUALPIPE;
  gboolean split = sim_schedule_splits_backward (plan->schedule);
  double m = (double) plan->micro_batches / (dual ? 2 : 1), before_f = 0, before_b = 0, opt0 = 0,
         bound = 0;
  SimLayerCost c;

  sim_cost_layer (model, plan, sim_topology_gpu_type (topo, 0), &c);
  for (int s = 0; s < p; s++) {
    const SimStageMemory *sm = &g_array_index (ledger->stages, SimStageMemory, s);
    double local = (double) sm->params, work = 0, fmin = G_MAXDOUBLE, bmin = G_MAXDOUBLE, opt;
    for (int k = 0; k < v; k++) {
      int lc = (int) (sim_plan_chunk_layers (plan, model, s, k) + sim_plan_chunk_mtp_layers (plan, s, k));
      int nm = 0, nd;
      gboolean first = sim_plan_chunk_is_first (plan, s, k), last = sim_plan_chunk_is_last (plan, s, k);
      guint64 layer = sim_plan_chunk_first_layer (plan, model, s, k);
      double f, r = 0, bw;
      if (sim_model_is_moe (model))
        for (int l = 0; l < lc; l++)
          nm += sim_model_layer_is_moe (model, layer + (guint64) l) ? 1 : 0;
      nd = lc - nm;
      /* as build_forward, build_recompute and build_backward charge them */
      f = nd * c.layer_fwd_s + nm * c.moe_fwd_s + (first ? c.embed_fwd_s + c.offload_fwd_s : 0) +
          (last ? sim_cost_tail_s (&c, plan, FALSE) : 0);
      if (plan->recompute == SIM_RECOMPUTE_FULL) {
        int rd, rm;
        sim_plan_chunk_recomputed (plan, model, s, k, &rd, &rm);
        r = rd * c.layer_recompute_s + rm * c.moe_recompute_s;
      } else if (c.layer_recompute_s > 0 || c.moe_recompute_s > 0)
        r = nd * c.layer_recompute_s + nm * c.moe_recompute_s;
      bw = r + nd * c.layer_bwd_s + nm * c.moe_bwd_s +
           (first ? c.embed_bwd_s + c.offload_bwd_s : 0) +
           (last ? sim_cost_tail_s (&c, plan, TRUE) : 0);
      work += m * (f + bw);
      fmin = MIN (fmin, f);
      bmin = MIN (bmin, bw);
    }
    /* as build_optimizer steps each rank's shard */
    local = sim_iter_trainable_dense (model, plan, sm) + (double) sm->expert_params;
    if (plan->zero >= 1 && plan->zero < 3)
      local = sim_iter_trainable_dense (model, plan, sm) / (plan->dp * plan->cp) +
              (double) sm->expert_params / plan->edp;
    opt = c.optimizer_s_per_param * local;
    if (s == 0)
      opt0 = opt;
    /* the fill before the stage's first forward (none under DualPipe,
     * whose last rank takes the second copy's micro-batches first) and
     * the drain after its last backward; where the schedule splits the
     * backward its last passes may be weight gradients that nothing
     * follows, so only its own optimizer step is certain to */
    bound = MAX (bound, (dual ? 0 : before_f) + work + (split ? opt : MAX (opt, before_b + opt0)));
    before_f += fmin;
    before_b += bmin;
  }
  /* every stage computes at least 1 + the spread's slowdown of its
   * nominal time (builder_init's stage_scale); the simulated durations
   * are these sums rounded up to picoseconds per activity; a relative
   * millionth of a millionth absorbs the order of the floating-point
   * additions */
  bound *= 1.0 + sim_variability_slowdown (plan->gpu_variation, sim_plan_world_size (plan));
  return bound * (1.0 - 1e-12);
}

void
sim_iteration_free (SimIteration *it)
{
  if (it == NULL)
    return;
  if (it->stages != NULL) {
    for (guint i = 0; i < it->stages->len; i++)
      g_clear_pointer (&g_array_index (it->stages, SimStageTime, i).memory, g_array_unref);
    g_array_unref (it->stages);
  }
  g_clear_pointer (&it->spans, g_array_unref);
  g_free (it);
}

