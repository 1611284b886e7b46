/* sim-iteration-analysis.c — the finished run read back: per-stage time
 * and activation memory, their averages, the critical path, throughput
 * and FLOPs (sim-iteration-private.h) */
#include "sim-iteration-private.h"

#include <math.h>
#include <string.h>

#include "sim-activation.h"
#include "sim-collective.h"
#include "sim-error.h"
#include "sim-schedule.h"
#include "sim-variability.h"

/* ---- reading the finished run ---- */

typedef struct {
  guint32 *off; /* CSR of recorded predecessors, by activity */
  SimActivityId *pred;
} Preds;

static void
preds_build (Preds *pr, SimIterBuilder *b, guint32 n)
{
  guint32 ne = b->edges->len / 2;
  const SimActivityId *ed = b->edges->data;
  g_autofree guint32 *fill = g_new0 (guint32, n + 1);
  pr->off = g_new0 (guint32, n + 1);
  pr->pred = g_new (SimActivityId, MAX (ne, 1));
  for (guint32 k = 0; k < ne; k++)
    pr->off[ed[2 * k] + 1]++;
  for (guint32 a = 0; a < n; a++)
    pr->off[a + 1] += pr->off[a];
  for (guint32 k = 0; k < ne; k++) {
    SimActivityId a = ed[2 * k];
    pr->pred[pr->off[a] + fill[a]++] = ed[2 * k + 1];
  }
}

static void
preds_clear (Preds *pr)
{
  g_clear_pointer (&pr->off, g_free);
  g_clear_pointer (&pr->pred, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Preds, preds_clear)

/* the recorded predecessor that finished last, or G_MAXUINT32 */
static SimActivityId
latest_pred (const Preds *pr, SimEngine *e, SimActivityId a)
{
  SimActivityId best = G_MAXUINT32;
  for (guint32 k = pr->off[a]; k < pr->off[a + 1]; k++)
    if (best == G_MAXUINT32 || sim_engine_end (e, pr->pred[k]) > sim_engine_end (e, best))
      best = pr->pred[k];
  return best;
}

Span *
sim_iter_span_of (SimIterBuilder *b, SimActivityId a)
{
  return &g_array_index (b->spans, Span, b->act_span->data[a]);
}

/* a span runs from its first activity's start to its last one's end */
void
sim_iter_spans_from_activities (SimIterBuilder *b)
{
  for (guint32 a = 0; a < b->act_span->len; a++) {
    Span *sp = sim_iter_span_of (b, a);
    SimTime st = sim_engine_start (b->e, a), en = sim_engine_end (b->e, a);
    if (sp->start < 0 || st < sp->start)
      sp->start = st;
    if (en > sp->end)
      sp->end = en;
  }
}

/* the spans reported: replica 0's (and the DP collectives, filed under
 * it), without bookkeeping gates and spans that never ran */
static GArray *
reported_spans (SimIterBuilder *b)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (SimSpan));
  for (guint i = 0; i < b->spans->len; i++) {
    const Span *sp = &g_array_index (b->spans, Span, i);
    SimSpan o = { sp->kind, sp->stage, sp->replica, sp->mb, sp->chunk, sp->start, sp->end, sp->paired };
    if (sp->kind == SIM_SPAN_GATE || sp->replica != 0 || sp->start < 0)
      continue;
    g_array_append_val (out, o);
  }
  return out;
}

/* what a compute activity waited for: through bookkeeping gates to the
 * first activity of another kind */
static SimActivityId
cause (const Preds *pr, SimIterBuilder *b, SimActivityId a)
{
  SimActivityId c = latest_pred (pr, b->e, a);
  int guard = 0;
  while (c != G_MAXUINT32 && sim_iter_span_of (b, c)->kind == SIM_SPAN_GATE && guard++ < 1000000) {
    SimActivityId up = latest_pred (pr, b->e, c);
    if (up == G_MAXUINT32)
      break;
    c = up;
  }
  return c;
}

static int
span_start_cmp (gconstpointer pa, gconstpointer pb, gpointer data)
{
  GArray *spans = data;
  const Span *x = &g_array_index (spans, Span, *(const guint32 *) pa);
  const Span *y = &g_array_index (spans, Span, *(const guint32 *) pb);
  return (x->start > y->start) - (x->start < y->start);
}

static double
overlap_s (SimTime a0, SimTime a1, SimTime b0, SimTime b1)
{
  SimTime lo = MAX (a0, b0), hi = MIN (a1, b1);
  return hi > lo ? sim_time_to_s (hi - lo) : 0.0;
}

/* ---- per-stage time: compute, exposed communication, bubble ---- */

/* What the per-stage reading needs of every stage, gathered in one pass
 * over the activities and one over the spans (not one per stage): each
 * stage's compute activities of replica 0 in id order, when its last DP
 * collective ends (0 when none), and its own TP, CP and EP spans of
 * replica 0 (indices) by start */
typedef struct {
  GArray **comp;     /* SimActivityId, per stage */
  SimTime *dp_end;
  GArray **own_comm; /* guint32 span index, per stage */
  GArray **chunked;  /* guint32 span index, per stage: those of a chunk (activation memory) */
  int n;
} StageIndex;

static void
stage_index_build (StageIndex *x, SimIterBuilder *b)
{
  guint32 n = sim_engine_n_activities (b->e);
  x->n = b->plan->pp;
  x->comp = g_new (GArray *, x->n);
  x->own_comm = g_new (GArray *, x->n);
  x->chunked = g_new (GArray *, x->n);
  x->dp_end = g_new0 (SimTime, x->n);
  for (int s = 0; s < x->n; s++) {
    x->comp[s] = g_array_new (FALSE, FALSE, sizeof (SimActivityId));
    x->own_comm[s] = g_array_new (FALSE, FALSE, sizeof (guint32));
    x->chunked[s] = g_array_new (FALSE, FALSE, sizeof (guint32));
  }
  for (guint32 a = 0; a < n; a++) {
    const Span *sp = sim_iter_span_of (b, a);
    if (sp->replica != 0 || sp->stage < 0 || sp->stage >= x->n)
      continue;
    if (b->is_compute->data[a])
      g_array_append_val (x->comp[sp->stage], a);
    if (sp->kind == SIM_SPAN_DP)
      x->dp_end[sp->stage] = MAX (x->dp_end[sp->stage], sim_engine_end (b->e, a));
  }
  for (guint32 i = 0; i < b->spans->len; i++) {
    const Span *sp = &g_array_index (b->spans, Span, i);
    if (sp->replica != 0 || sp->start < 0 || sp->stage < 0 || sp->stage >= x->n)
      continue;
    if (sp->kind == SIM_SPAN_TP || sp->kind == SIM_SPAN_CP || sp->kind == SIM_SPAN_EP)
      g_array_append_val (x->own_comm[sp->stage], i);
    if (sp->chunk >= 0)
      g_array_append_val (x->chunked[sp->stage], i);
  }
  for (int s = 0; s < x->n; s++)
    g_array_sort_with_data (x->own_comm[s], span_start_cmp, b->spans);
}

static void
stage_index_clear (StageIndex *x)
{
  for (int s = 0; x->comp != NULL && s < x->n; s++) {
    g_array_unref (x->comp[s]);
    g_array_unref (x->own_comm[s]);
    g_array_unref (x->chunked[s]);
  }
  g_clear_pointer (&x->comp, g_free);
  g_clear_pointer (&x->own_comm, g_free);
  g_clear_pointer (&x->chunked, g_free);
  g_clear_pointer (&x->dp_end, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (StageIndex, stage_index_clear)

/* the part of the idle gap [cursor, t0) the stage's own TP and CP
 * collectives cover, added to st; *first: the first of own_comm that may
 * still end after cursor (advanced) */
static double
own_comm_wait (SimStageTime *st, SimIterBuilder *b, const GArray *own_comm, guint *first,
               SimTime cursor, SimTime t0)
{
  double own = 0;
  while (*first < own_comm->len &&
         g_array_index (b->spans, Span, g_array_index (own_comm, guint32, *first)).end <= cursor)
    (*first)++;
  for (guint k = *first; k < own_comm->len; k++) {
    const Span *o = &g_array_index (b->spans, Span, g_array_index (own_comm, guint32, k));
    double x;
    if (o->start >= t0)
      break;
    x = overlap_s (cursor, t0, o->start, o->end);
    if (o->kind == SIM_SPAN_TP)
      st->exposed_tp_s += x;
    else if (o->kind == SIM_SPAN_EP)
      st->exposed_ep_s += x;
    else
      st->exposed_cp_s += x;
    own += x;
  }
  return own;
}

/* the rest of an idle gap [cursor, t0) before compute activity a, filed
 * under what a waited for */
static void
file_wait (SimStageTime *st, SimIterBuilder *b, const Preds *pr, SimActivityId a, double rest,
           SimTime cursor, SimTime t0)
{
  SimActivityId c = cause (pr, b, a);
  const Span *cs = c != G_MAXUINT32 ? sim_iter_span_of (b, c) : NULL;
  switch (cs != NULL ? cs->kind : SIM_SPAN_GATE) {
  case SIM_SPAN_DP: st->exposed_dp_s += rest; break;
  case SIM_SPAN_PP: {
    /* the transfer itself is exposed pipeline communication; waiting
     * for the sender to finish computing is the bubble */
    double x = MIN (rest, overlap_s (cursor, t0, cs->start, cs->end));
    st->exposed_pp_s += x;
    st->bubble_s += rest - x;
    break;
  }
  case SIM_SPAN_TP:
  case SIM_SPAN_CP:
  case SIM_SPAN_EP:
    /* already counted by overlap; a remainder is rounding */
    st->bubble_s += rest;
    break;
  default: st->bubble_s += rest; break;
  }
}

static void
stage_time (SimStageTime *st, SimIterBuilder *b, const Preds *pr, const StageIndex *x, int s)
{
  SimEngine *e = b->e;
  SimTime step = sim_engine_now (e), cursor = 0, dp_end = x->dp_end[s];
  const GArray *comp = x->comp[s], *own_comm = x->own_comm[s];
  guint first_own = 0;

  /* compute activities of one stream run one after another, in start order */
  for (guint i = 0; i < comp->len; i++) {
    SimActivityId a = g_array_index (comp, SimActivityId, i);
    SimTime t0 = sim_engine_start (e, a), t1 = sim_engine_end (e, a);
    double d = sim_time_to_s (t1 - t0);
    switch (sim_iter_span_of (b, a)->kind) {
    case SIM_SPAN_FORWARD: st->forward_s += d; break;
    case SIM_SPAN_BACKWARD:
    case SIM_SPAN_WEIGHT: st->backward_s += d; break;
    case SIM_SPAN_RECOMPUTE: st->recompute_s += d; break;
    default: st->optimizer_s += d; break;
    }
    if (t0 > cursor) {
      double gap = sim_time_to_s (t0 - cursor);
      /* the stage's own TP and CP collectives block its stream: whatever
       * part of the wait they cover is theirs */
      double own = own_comm_wait (st, b, own_comm, &first_own, cursor, t0);
      file_wait (st, b, pr, a, MAX (gap - own, 0.0), cursor, t0);
    }
    cursor = MAX (cursor, t1);
  }
  if (step > cursor) {
    double dp_tail = dp_end > cursor ? sim_time_to_s (MIN (dp_end, step) - cursor) : 0;
    st->exposed_dp_s += dp_tail;
    st->bubble_s += sim_time_to_s (step - cursor) - dp_tail;
  }
}

/* ---- per-stage activation memory over time ---- */

typedef struct {
  SimTime t;
  gint64 delta;
} MemEvent;

static int
mem_event_cmp (gconstpointer pa, gconstpointer pb)
{
  const MemEvent *x = pa, *y = pb;
  if (x->t != y->t)
    return x->t < y->t ? -1 : 1;
  /* frees before allocations at the same instant */
  return (x->delta > y->delta) - (x->delta < y->delta);
}

static void
mem_event (GArray *ev, SimTime t, gint64 delta)
{
  MemEvent x = { t, delta };
  g_array_append_val (ev, x);
}

/* Where a full recomputation's set is freed on stage s, replica 0: the
 * end of the first backward span (in span order) of each micro-batch and
 * chunk, at ends[mb * virtual_stages + chunk] (G_MININT64 where there is
 * none);
 * *n the entries.  One pass over the spans, so that the lookups of a long
 * run stay linear (stage_mem_events). */
static SimTime *
backward_ends (SimIterBuilder *b, int s, guint *n)
{
  int v = b->plan->virtual_stages, mbs = 0;
  SimTime *ends;
  for (guint k = 0; k < b->spans->len; k++) {
    const Span *bw = &g_array_index (b->spans, Span, k);
    if (bw->kind == SIM_SPAN_BACKWARD && bw->stage == s && bw->replica == 0 && bw->chunk >= 0 &&
        bw->chunk < v)
      mbs = MAX (mbs, bw->mb + 1);
  }
  *n = (guint) (mbs * v);
  ends = g_new (SimTime, MAX (*n, 1));
  for (guint i = 0; i < *n; i++)
    ends[i] = G_MININT64;
  for (guint k = 0; k < b->spans->len; k++) {
    const Span *bw = &g_array_index (b->spans, Span, k);
    if (bw->kind == SIM_SPAN_BACKWARD && bw->stage == s && bw->replica == 0 && bw->chunk >= 0 &&
        bw->chunk < v && bw->mb >= 0 && ends[bw->mb * v + bw->chunk] == G_MININT64)
      ends[bw->mb * v + bw->chunk] = bw->end;
  }
  return ends;
}

/* full recomputation: the whole layer comes back, one layer at a time,
 * until the backward of this pass ends (ends: backward_ends): approximate
 * by the pass's span */
static void
recompute_events (GArray *ev, const SimTime *ends, guint n, int v, const Span *rc, gint64 bytes)
{
  guint i = (guint) (rc->mb * v + rc->chunk);
  mem_event (ev, rc->start, bytes);
  if (rc->mb >= 0 && rc->chunk >= 0 && i < n && ends[i] != G_MININT64)
    mem_event (ev, ends[i], -bytes);
}

/* activation memory of stage s, replica 0: allocated when a forward pass
 * starts, freed when its backward ends; one layer's recomputation set
 * while its backward runs */
static GArray *
stage_mem_events (SimIterBuilder *b, const StageIndex *x, int s, const SimActivations *layer_act,
                  const SimActivations *moe_act, const SimActivations *layer_kept,
                  const SimActivations *moe_kept, const SimActivations *emb_act,
                  const SimActivations *out_act)
{
  const SimPlan *plan = b->plan;
  GArray *ev = g_array_new (FALSE, FALSE, sizeof (MemEvent));
  gint64 transient = (gint64) MAX (layer_act->transient_bytes,
                                   moe_act != NULL ? moe_act->transient_bytes : 0);
  /* each chunk's layers as the recomputation leaves them, and what its
   * full recomputation holds besides (sim_memory_chunk_saved_bytes) */
  g_autofree gint64 *chunk_bytes = g_new0 (gint64, plan->virtual_stages);
  g_autofree gint64 *chunk_rec = g_new0 (gint64, plan->virtual_stages);
  g_autofree SimTime *rec_ends = NULL; /* backward_ends, made when first needed */
  guint n_ends = 0;
  for (int c = 0, offset = 0; c < plan->virtual_stages; c++) {
    int k = s * plan->virtual_stages + c;
    guint64 t = 0;
    chunk_bytes[c] = (gint64) sim_memory_chunk_saved_bytes (b->model, plan, (guint64) b->first_of[k],
                                                            b->lc_of[k], offset, layer_act, moe_act,
                                                            layer_kept, moe_kept, &t);
    chunk_rec[c] = (gint64) t;
    offset += b->lc_of[k];
  }
  /* with CPU offloading (pp 1: the one chunk holds every layer) each pass
   * holds the chunk's offloading peak throughout, the ledger's figure */
  SimOffload off = { 0 };
  gboolean offload = plan->cpu_offload_layers > 0 && plan->pp == 1;
  if (offload)
    sim_memory_offload_model (b->model, plan, layer_act, moe_act, NULL, NULL, 0, &off);
  /* where the schedule splits the backward, its weight gradient frees a
   * pass's activations, but for what the input gradient frees of the
   * loss's (stage_activation_peak in sim-memory.c) */
  gboolean split = sim_schedule_splits_backward (plan->schedule);
  gint64 loss_freed = split ? (gint64) sim_memory_split_output_freed (out_act) : 0;
  /* the stage's spans of a chunk: the optimizer's and the DP collectives'
   * hold no activations */
  for (guint i = 0; i < x->chunked[s]->len; i++) {
    const Span *sp = &g_array_index (b->spans, Span, g_array_index (x->chunked[s], guint32, i));
    gboolean first = sim_plan_chunk_is_first (plan, s, sp->chunk);
    gboolean last = sim_plan_chunk_is_last (plan, s, sp->chunk);
    gint64 bytes = offload ? (gint64) off.peak_bytes : chunk_bytes[sp->chunk];
    bytes += (first ? (gint64) emb_act->saved_bytes : 0) +
             (last ? (gint64) out_act->saved_bytes : 0);
    if (sp->kind == SIM_SPAN_FORWARD) {
      mem_event (ev, sp->start, bytes);
      /* the loss's moment (sim_activations_output): while the head's
       * forward, the last of the pass, runs */
      if (last && out_act->transient_bytes > 0) {
        SimTime from = MAX (sp->start, sp->end - sim_time_from_s (b->cost.head_fwd_s));
        mem_event (ev, from, (gint64) out_act->transient_bytes);
        mem_event (ev, sp->end, -(gint64) out_act->transient_bytes);
      }
    } else if (sp->kind == SIM_SPAN_BACKWARD || sp->kind == SIM_SPAN_WEIGHT) {
      gint64 freed = last ? loss_freed : 0;
      if (!split)
        mem_event (ev, sp->end, -bytes);
      else if (sp->kind == SIM_SPAN_WEIGHT)
        mem_event (ev, sp->end, -(bytes - freed));
      else if (freed > 0)
        mem_event (ev, sp->end, -freed);
      if (transient > 0 && plan->recompute == SIM_RECOMPUTE_SELECTIVE && sp->kind == SIM_SPAN_BACKWARD) {
        mem_event (ev, sp->start, transient);
        mem_event (ev, sp->end, -transient);
      }
    } else if (sp->kind == SIM_SPAN_RECOMPUTE && chunk_rec[sp->chunk] > 0 &&
               plan->recompute == SIM_RECOMPUTE_FULL) {
      if (rec_ends == NULL)
        rec_ends = backward_ends (b, s, &n_ends);
      recompute_events (ev, rec_ends, n_ends, plan->virtual_stages, sp, chunk_rec[sp->chunk]);
    }
  }
  return ev;
}

/* the timeline of stage s into st->memory, with its peak */
static void
stage_memory (SimStageTime *st, SimIterBuilder *b, const StageIndex *x, int s,
              const SimActivations *layer_act, const SimActivations *moe_act,
              const SimActivations *layer_kept, const SimActivations *moe_kept,
              const SimActivations *emb_act, const SimActivations *out_act)
{
  g_autoptr (GArray) ev = stage_mem_events (b, x, s, layer_act, moe_act, layer_kept, moe_kept,
                                            emb_act, out_act);
  SimMemPoint origin = { 0, 0 };
  gint64 level = 0, peak = 0;
  g_array_sort (ev, mem_event_cmp);
  st->memory = g_array_new (FALSE, FALSE, sizeof (SimMemPoint));
  g_array_append_val (st->memory, origin);
  for (guint i = 0; i < ev->len; i++) {
    const MemEvent *m = &g_array_index (ev, MemEvent, i);
    SimMemPoint pt;
    level += m->delta;
    peak = MAX (peak, level);
    pt.time = m->t;
    pt.activation_bytes = (guint64) MAX (level, 0);
    g_array_append_val (st->memory, pt);
  }
  st->peak_activation_bytes = (guint64) peak;
  st->peak_bytes = g_array_index (b->ledger->stages, SimStageMemory, s).states_bytes +
                   (guint64) peak;
}

/* ---- the whole iteration ---- */

void
sim_iter_stage_averages (SimIteration *it, int p)
{
  for (int s = 0; s < p; s++) {
    const SimStageTime *st = &g_array_index (it->stages, SimStageTime, s);
    it->compute_s += (st->forward_s + st->backward_s + st->recompute_s + st->optimizer_s) / p;
    it->exposed_tp_s += st->exposed_tp_s / p;
    it->exposed_cp_s += st->exposed_cp_s / p;
    it->exposed_pp_s += st->exposed_pp_s / p;
    it->exposed_dp_s += st->exposed_dp_s / p;
    it->exposed_ep_s += st->exposed_ep_s / p;
    it->bubble_fraction += st->bubble_s / it->step_s / p;
  }
}

/* for each span, the latest-ending activity outside it that one of its
 * activities waited for (G_MAXUINT32: none); returns the activity that
 * ended last */
static SimActivityId
span_entries (SimIterBuilder *b, const Preds *pr, SimActivityId *entry)
{
  SimEngine *e = b->e;
  guint32 n = sim_engine_n_activities (e);
  SimActivityId last = 0;
  for (guint i = 0; i < b->spans->len; i++)
    entry[i] = G_MAXUINT32;
  for (guint32 x = 0; x < n; x++) {
    guint32 sp = b->act_span->data[x];
    SimActivityId l = latest_pred (pr, e, x);
    if (l != G_MAXUINT32 && b->act_span->data[l] != sp &&
        (entry[sp] == G_MAXUINT32 || sim_engine_end (e, l) > sim_engine_end (e, entry[sp])))
      entry[sp] = l;
    if (sim_engine_end (e, x) > sim_engine_end (e, last))
      last = x;
  }
  return last;
}

/* the critical path: from the last activity back along what it waited
 * for; a compute activity counts for itself, a communication span whole,
 * once, and is left by what entered it */
static void
critical_path (SimIteration *it, SimIterBuilder *b, const Preds *pr)
{
  SimEngine *e = b->e;
  guint32 n = sim_engine_n_activities (e), guard = 0;
  g_autofree gboolean *span_seen = g_new0 (gboolean, b->spans->len);
  g_autofree SimActivityId *entry = g_new (SimActivityId, b->spans->len);
  SimActivityId a = span_entries (b, pr, entry);
  while (a != G_MAXUINT32 && guard++ < n + 1) {
    guint32 sp = b->act_span->data[a];
    const Span *s = &g_array_index (b->spans, Span, sp);
    if (b->is_compute->data[a]) {
      SimSpanKind k = s->kind == SIM_SPAN_WEIGHT ? SIM_SPAN_BACKWARD : s->kind;
      it->critical_s[k] += sim_time_to_s (sim_engine_end (e, a) - sim_engine_start (e, a));
      a = latest_pred (pr, e, a);
    } else if (s->kind == SIM_SPAN_GATE) {
      a = latest_pred (pr, e, a);
    } else {
      if (!span_seen[sp])
        it->critical_s[s->kind] += sim_time_to_s (s->end - s->start);
      span_seen[sp] = TRUE;
      a = entry[sp];
    }
  }
}

void
sim_iter_throughput (SimIteration *it, const SimModel *model, const SimPlan *plan, const SimGpuType *gpu)
{
  double peak_flops = gpu->peak_flop_per_s[SIM_DTYPE_BF16] > 0 ? gpu->peak_flop_per_s[SIM_DTYPE_BF16]
                                                              : gpu->peak_flop_per_s[SIM_DTYPE_FP16];
  int world = sim_plan_world_size (plan);
  double gbs = (double) plan->global_batch, S = (double) plan->seq_len, h = model->hidden;
  it->model_flop = sim_cost_model_flop (model, plan);
  it->hardware_flop = it->model_flop;
  /* recomputation repeats the layers' forward (model FLOPs are 3x the
   * forward, the output layer's 2hV per token included), or only the
   * attention core */
  double mtp = MAX (plan->mtp_layers, 0);
  /* (multi-token prediction: its modules' layers are recomputed, not their
   * eh_proj and output layer) */
  if (plan->recompute == SIM_RECOMPUTE_FULL) {
    double layers_fwd = it->model_flop / 3 - (1 + mtp) * 2.0 * h * (double) model->vocab * gbs * S -
                        mtp * 4.0 * h * h * gbs * S;
    /* --recompute-method: the share of the layers' forward run again,
     * each layer weighed by its forward's FLOPs */
    if (!sim_plan_recomputes_all (plan)) {
      SimLayerCost c;
      double all = 0, again = 0;
      sim_cost_layer (model, plan, gpu, &c);
      for (int s = 0; s < plan->pp; s++)
        for (int k = 0; k < plan->virtual_stages; k++) {
          int rd, rm, lc = (int) (sim_plan_chunk_layers (plan, model, s, k) +
                                  sim_plan_chunk_mtp_layers (plan, s, k));
          guint64 first = sim_plan_chunk_first_layer (plan, model, s, k);
          for (int i = 0; i < lc; i++)
            all += sim_model_layer_is_moe (model, first + (guint64) i) ? c.moe_recompute_flop
                                                                       : c.layer_recompute_flop;
          sim_plan_chunk_recomputed (plan, model, s, k, &rd, &rm);
          again += rd * c.layer_recompute_flop + rm * c.moe_recompute_flop;
        }
      layers_fwd *= all > 0 ? again / all : 0;
    }
    it->hardware_flop += layers_fwd;
  } else if (plan->recompute == SIM_RECOMPUTE_SELECTIVE) {
    /* the attention core, and the other modules' forward again: per
     * layer and micro-batch on each of a stage's tp x cp x dp GPUs */
    if (plan->recompute_modules & SIM_RECOMPUTE_CORE_ATTN)
      it->hardware_flop += sim_cost_attention_core_flop (model, plan);
    if ((plan->recompute_modules & ~(guint) SIM_RECOMPUTE_CORE_ATTN) || sim_plan_op_sac (plan)) {
      SimLayerCost c;
      gboolean mtp_moe = sim_model_layer_is_moe (model, model->layers);
      double moe_layers = (double) sim_model_moe_layers (model) + (mtp_moe ? mtp : 0);
      double layers = (double) model->layers + mtp;
      sim_cost_layer (model, plan, gpu, &c);
      it->hardware_flop += ((layers - moe_layers) * c.layer_recompute_module_flop +
                            moe_layers * c.moe_recompute_module_flop) *
                           (double) plan->micro_batches * plan->dp * plan->tp * plan->cp;
    }
  }
  it->tokens_per_s = gbs * S / it->step_s;
  it->model_tflops_per_gpu = it->model_flop / it->step_s / world / 1e12;
  it->hardware_tflops_per_gpu = it->hardware_flop / it->step_s / world / 1e12;
  it->mfu = sim_cost_mfu (model, plan, gpu, it->step_s);
  it->hfu = it->hardware_flop / (it->step_s * world * peak_flops);
}

void
sim_iter_analyse (SimIteration *it, SimIterBuilder *b)
{
  const SimPlan *plan = b->plan;
  g_auto (Preds) pr = { 0 };
  g_auto (StageIndex) x = { 0 };
  SimActivationConfig cfg;
  g_autoptr (SimActivations) layer_act = NULL;
  g_autoptr (SimActivations) emb_act = NULL;
  g_autoptr (SimActivations) out_act = NULL;
  g_autoptr (SimActivations) moe_act = NULL;
  g_autoptr (SimActivations) layer_kept = NULL;
  g_autoptr (SimActivations) moe_kept = NULL;

  preds_build (&pr, b, sim_engine_n_activities (b->e));
  it->step_s = sim_time_to_s (sim_engine_now (b->e));
  it->stages = g_array_new (FALSE, TRUE, sizeof (SimStageTime));
  it->spans = reported_spans (b);
  sim_activation_config_from_plan (&cfg, plan);
  layer_act = sim_activations_layer (b->model, &cfg);
  emb_act = sim_activations_embedding (b->model, &cfg);
  out_act = sim_activations_output (b->model, &cfg);
  /* the last chunk's multi-token-prediction modules keep theirs beside the
   * output layer's, for as long (the ledger's mtp_act_bytes) */
  if (plan->mtp_layers > 0) {
    g_autoptr (SimActivations) mtp_act = sim_activations_mtp (b->model, &cfg);
    out_act->saved_bytes += (guint64) plan->mtp_layers * mtp_act->saved_bytes;
  }
  if (sim_model_is_moe (b->model))
    moe_act = sim_activations_moe_layer (b->model, &cfg);
  sim_memory_kept_activations (b->model, plan, &layer_kept, &moe_kept);
  stage_index_build (&x, b);
  for (int s = 0; s < plan->pp; s++) {
    SimStageTime st = { 0 };
    st.stage = s;
    stage_time (&st, b, &pr, &x, s);
    stage_memory (&st, b, &x, s, layer_act, moe_act, layer_kept, moe_kept, emb_act, out_act);
    g_array_append_val (it->stages, st);
  }
  sim_iter_stage_averages (it, plan->pp);
  critical_path (it, b, &pr);
  sim_iter_throughput (it, b->model, plan, b->gpu);
}

