/* sim-iteration-steady.c — a long 1F1B or interleaved step from the steady
 * state of shorter runs, proven periodic (sim-iteration-private.h) */
#include "sim-iteration-private.h"

#include <math.h>
#include <string.h>

#include "sim-activation.h"
#include "sim-collective.h"
#include "sim-error.h"
#include "sim-schedule.h"
#include "sim-variability.h"

/* ---- the steady state, extrapolated ---- */

/* The 1F1B and interleaved schedules repeat in their steady phase: after
 * the warm-up, every k micro-batches (1 for 1F1B; p for interleaved, whose
 * program cycles through the chunks p micro-batches at a time) each stage
 * runs the same passes, and the cool-down and the gradient reduction after
 * the last backward do not depend on how many came before.  So the step
 * time and every per-stage sum grow by the same amount per period: three
 * runs of m1, m1 + k and m1 + 2k micro-batches prove the period (equal
 * differences) and give it; the rest is arithmetic.  Where the warm-up
 * settles later (ZeRO-3's first gathers, contention), runs of m1 + 3k,
 * m1 + 4k, ... follow while they still save work. */

/* the period and the first run to try, in micro-batches: 1F1B is
 * periodic once every stage has a steady pair (m >= p); ZB-H1 once the
 * stages' waits for their neighbours' sends have settled, which on the
 * layouts of tests/test-steady.c takes up to 2p - 1 micro-batches (its F B
 * W section repeating p times); ZB-V and DualPipeV, whose steady phase
 * starts after about 2p forwards, from 2p + 2 there, and DualPipe, whose
 * micro-batches come a pair at a time, from 3p; interleaved once
 * the warm-up is not the whole program (m > p).  FALSE when the schedule
 * has no steady phase. */
static gboolean
steady_counts (const SimPlan *p, guint64 *m1, guint64 *k)
{
  guint64 pp = (guint64) p->pp;
  /* a schedule that splits the backward under ZeRO-3: its gathers ahead
   * of each pass settle late, after a stretch that looks periodic and is
   * not (Mixtral 8x7B on pp 2 under ZB-V: equal steps from 6 to 9
   * micro-batches, the steady ones only from 10, tests/test-sweep.py), so
   * it is simulated whole */
  if (sim_schedule_splits_backward (p->schedule) && p->zero >= 3)
    return FALSE;
  if (p->schedule == SIM_SCHEDULE_1F1B) {
    *k = 1;
    *m1 = MAX (pp, 2);
  } else if (p->schedule == SIM_SCHEDULE_ZB_H1) {
    *k = 1;
    *m1 = 2 * pp;
  } else if (sim_schedule_chunks (p->schedule) == 2) {
    /* DualPipe takes its micro-batches a pair at a time, one an end */
    *k = p->schedule == SIM_SCHEDULE_DUALPIPE ? 2 : 1;
    *m1 = p->schedule == SIM_SCHEDULE_DUALPIPE ? 3 * pp : 2 * pp + 2;
  } else if (p->schedule == SIM_SCHEDULE_INTERLEAVED) {
    *k = pp;
    *m1 = 2 * pp;
  } else {
    return FALSE;
  }
  return TRUE;
}

/* equal differences: |(c - b) - (b - a)| within tol */
static gboolean
linear3 (double a, double b, double c, double tol)
{
  return fabs ((c - b) - (b - a)) <= tol;
}

#define STAGE_SUMS(X) X (forward_s) X (backward_s) X (recompute_s) X (optimizer_s) \
  X (exposed_tp_s) X (exposed_cp_s) X (exposed_pp_s) X (exposed_dp_s) X (exposed_ep_s) X (bubble_s)

/* the step and every per-stage sum grow by the same amount from run to
 * run, within a millionth of the step's growth (what the extrapolated step
 * may then be off by, per period, is that millionth), no stage's bubble
 * shrinks, and the activation peaks are equal.  A shrinking bubble is a
 * stage still using up the slack of the warm-up, whose busy time grows
 * faster than the step: a run that long is not yet steady (carried
 * forward, its bubble would turn negative, its stage busier than the step
 * is long: on llama3-8b over pp 2 x v 2 with the uneven layout
 * Et*8|(t*9|)*2t*6L, runs of 4, 6 and 8 micro-batches grow evenly, and
 * their step carried to 128 is 137.7 s against 139.6 s simulated whole).
 * The critical path's composition is not checked: it may switch between
 * paths of equal length from one run to the next. */
static gboolean
periodic (SimIteration *const r[3])
{
  double tol = 1e-6 * fabs (r[1]->step_s - r[0]->step_s) + 4e-12;
  if (!linear3 (r[0]->step_s, r[1]->step_s, r[2]->step_s, tol))
    return FALSE;
  for (guint i = 0; i < r[0]->stages->len; i++) {
    const SimStageTime *a = &g_array_index (r[0]->stages, SimStageTime, i);
    const SimStageTime *b = &g_array_index (r[1]->stages, SimStageTime, i);
    const SimStageTime *c = &g_array_index (r[2]->stages, SimStageTime, i);
#define CHECK(f) if (!linear3 (a->f, b->f, c->f, tol)) return FALSE;
    STAGE_SUMS (CHECK)
#undef CHECK
    if (c->bubble_s - b->bubble_s < -tol)
      return FALSE;
    /* the micro-batches in flight stop growing once the warm-up is whole */
    if (a->peak_activation_bytes != c->peak_activation_bytes ||
        b->peak_activation_bytes != c->peak_activation_bytes)
      return FALSE;
  }
  return TRUE;
}

/* whether run n (of m micro-batches) is worth making: the first three
 * when they cost at most what the whole run does, in activities as a
 * build of the first counts them (steady_probe); after them, while every run so far and this one, in activities
 * (extrapolated from the last two), cost at most a quarter of the whole
 * run's.  A step that never settles costs the whole run plus the larger of
 * the first three runs and a quarter of it. */
static gboolean
steady_worth (const SimPlan *plan, guint64 first, guint64 base, int n, guint64 m,
              guint64 spent, guint64 last, guint64 before, const double probe[2])
{
  guint64 M = plan->micro_batches;
  double slope, whole;
  /* the first three: from the probe's activities once per step (a) and per
   * micro-batch (s), while a + s M, the whole run, costs more than them */
  if (n <= 2)
    return 3 * probe[0] + probe[1] * (3.0 * (double) first + 3.0 * (double) base) <=
           probe[0] + probe[1] * (double) M;
  slope = ((double) last - (double) before) / (double) base;
  whole = (double) last + (double) (M - (m - base)) * slope;
  return (double) spent + (double) last + (double) base * slope <= whole / 4;
}

/* the activities of a run of m micro-batches, as built: probe[0] those
 * tied to no micro-batch (the gradient reduction, the optimizer, the
 * parameter gather), which every run has once, probe[1] the rest per
 * micro-batch */
static gboolean
steady_probe (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
              const SimMemory *ledger, gboolean full, guint64 m, Scratch *sc, double probe[2],
              GError **error)
{
  g_auto (SimIterBuilder) b = { 0 };
  SimPlan q;
  guint64 once, rest;
  int alone = ALONE_TP | ALONE_PP | ALONE_DP | ALONE_CP, keep;
  sim_plan_with_micro_batches (&q, plan, m);
  if (!sim_iter_build (&b, topo, model, &q, ledger, full, NULL, alone | MIRROR_DP, sc, error))
    return FALSE;
  /* as the runs will be built: without the shortcuts not worth a run
   * (run_on drops them before running; the gradient buckets' flows, when
   * dropped, can outweigh every micro-batch's work), counted from this
   * sim_iter_build (sim_iter_rebuilt_counts) */
  keep = b.alone;
  if (keep != 0)
    keep &= ~sim_iter_alone_drop (&b);
  if (!sim_iter_rebuilt_counts (&b, keep, &once, &rest))
    sim_iter_rebuilt_counts (&b, 0, &once, &rest);
  probe[0] = (double) once;
  probe[1] = (double) rest / (double) m;
  return TRUE;
}

/* one run of m micro-batches, the rest of the plan as given */
static SimIteration *
steady_run (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
            const SimMemory *ledger, gboolean full, guint64 m, Scratch *sc, GError **error)
{
  SimPlan q;
  sim_plan_with_micro_batches (&q, plan, m);
  return sim_iter_run_on (topo, model, &q, ledger, full, NULL, TRUE, sc, error);
}

SimIteration *
sim_iteration_run_steady (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
                          const SimMemory *ledger, gboolean full, GError **error)
{
  /* runs of first, first + base, first + 2 base, ...: the last five kept */
  SimIteration *w[5] = { NULL, NULL, NULL, NULL, NULL }, *r[3] = { NULL, NULL, NULL }, *it;
  guint64 first, base, m, k = 0, periods, M = plan->micro_batches;
  guint64 activities = 0, events = 0; /* of every run, to report the work done */
  guint64 last = 0, before = 0; /* activities of the last two runs */
  int n = 0;
  g_auto (Scratch) sc = { 0 }; /* shared by the runs */
  double probe[2] = { 0, 0 };

  if (!steady_counts (plan, &first, &base))
    return sim_iteration_run (topo, model, plan, ledger, full, error);
  /* three runs of first, first + base and first + 2 base micro-batches
   * cost at least the whole when 3 (first + base) >= M, as every run has
   * the optimizer's activities once (steady_worth's test, whatever the
   * probe would count): then no probe, and the whole run */
  if (first >= M || 3 * (first + base) >= M)
    return sim_iteration_run (topo, model, plan, ledger, full, error);
  if (!steady_probe (topo, model, plan, ledger, full, first, &sc, probe, error))
    return NULL;
  /* a longer warm-up (ZeRO-3's first gathers, contention settling) needs
   * longer runs, and traffic that alternates between micro-batches a
   * period of 2 base: one run more at a time, each tried as the end of
   * both periods, while that saves work (steady_worth) */
  for (m = first; k == 0 && m < M &&
                 steady_worth (plan, first, base, n, m, activities, last, before, probe);
       m += base, n++) {
    if (n >= 5) {
      sim_iteration_free (w[0]);
      memmove (w, w + 1, 4 * sizeof w[0]);
    }
    w[MIN (n, 4)] = steady_run (topo, model, plan, ledger, full, m, &sc, error);
    if (w[MIN (n, 4)] == NULL) {
      for (int i = 0; i < 5; i++)
        sim_iteration_free (w[i]);
      return NULL;
    }
    before = last;
    last = w[MIN (n, 4)]->activities;
    activities += w[MIN (n, 4)]->activities;
    events += w[MIN (n, 4)]->events;
    if (n >= 2 && (M - m) % base == 0) {
      int l = MIN (n, 4);
      r[0] = w[l - 2], r[1] = w[l - 1], r[2] = w[l];
      if (periodic (r))
        k = base;
      else if (n >= 4 && (M - m) % (2 * base) == 0) {
        r[0] = w[l - 4], r[1] = w[l - 2], r[2] = w[l];
        if (periodic (r))
          k = 2 * base;
      }
    }
  }
  for (int i = 0; i < 5; i++)
    if (k == 0 || (w[i] != r[0] && w[i] != r[1] && w[i] != r[2]))
      g_clear_pointer (&w[i], sim_iteration_free);
  if (k == 0)
    return sim_iter_run_on (topo, model, plan, ledger, full, NULL, TRUE, &sc, error);
  m -= base; /* the last run's */

  /* the last run, carried forward by the remaining periods */
  it = r[2];
  periods = (M - m) / k;
#define GROW(dst, b, c) (dst) = (c) + (double) periods * ((c) - (b))
  GROW (it->step_s, r[1]->step_s, it->step_s);
  for (int x = 0; x < SIM_SPAN_KINDS; x++) {
    GROW (it->critical_s[x], r[1]->critical_s[x], it->critical_s[x]);
    it->critical_s[x] = MAX (it->critical_s[x], 0.0);
  }
  for (guint i = 0; i < it->stages->len; i++) {
    SimStageTime *c = &g_array_index (it->stages, SimStageTime, i);
    const SimStageTime *b = &g_array_index (r[1]->stages, SimStageTime, i);
#define EXTEND(f) GROW (c->f, b->f, c->f);
    STAGE_SUMS (EXTEND)
#undef EXTEND
    /* a timeline of the shorter run would mislead a chart */
    g_array_set_size (c->memory, 0);
  }
#undef GROW
  g_array_set_size (it->spans, 0);
  it->compute_s = it->exposed_tp_s = it->exposed_cp_s = it->exposed_pp_s = it->exposed_dp_s = 0;
  it->exposed_ep_s = 0;
  it->bubble_fraction = 0;
  sim_iter_stage_averages (it, plan->pp);
  sim_iter_throughput (it, model, plan, sim_topology_gpu_type (topo, 0));
  it->activities = (guint32) MIN (activities, G_MAXUINT32);
  it->events = events;
  for (int i = 0; i < 3; i++)
    it->steady_micro_batches[i] = m - (guint64) (2 - i) * k;
  sim_iteration_free (r[0]);
  sim_iteration_free (r[1]);
  /* the whole run would have overrun the engine's clock (sim-engine.c) */
  if (!(it->step_s < sim_time_to_s (SIM_TIME_MAX))) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "the step would take longer than %.0f days, more than sim's clock can represent",
                 sim_time_to_s (SIM_TIME_MAX) / 86400.0);
    sim_iteration_free (it);
    return NULL;
  }
  return it;
}

