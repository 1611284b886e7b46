/* sim-iteration.c — see sim-iteration.h */
#include "sim-iteration.h"

#include <math.h>
#include <string.h>

#include "sim-activation.h"
#include "sim-collective.h"
#include "sim-error.h"
#include "sim-schedule.h"

/* Megatron's gradient bucket: max(40M, 1M x dp) parameters
 * (megatron/core/distributed/distributed_data_parallel.py, bucket_size) */
#define BUCKET_PARAMS 40000000.0

typedef struct {
  SimSpanKind kind;
  int stage, replica, mb, chunk;
  SimTime start, end;
} Span;

typedef struct {
  SimActivityId gate;   /* start: waits for program order and inputs */
  SimActivityId end;    /* end of the pass, its TP collectives included */
  guint32 compute_span;
  guint32 recompute_span;
  gboolean has_recompute;
  SimPipeOp op;
} Pass;

typedef struct {
  SimActivityId ready;  /* the activity after which these parameters' gradients are final */
  double params;
} GradEntry;

typedef struct {
  const SimTopology *topo;
  const SimModel *model;
  const SimPlan *plan;
  const SimGpuType *gpu;
  SimEngine *e;
  SimNetwork *net;
  SimLayerCost cost;
  GArray *spans;       /* Span */
  GArray *act_span;    /* guint32 per activity */
  GArray *is_compute;  /* guint8 per activity */
  GArray *edges;       /* SimActivityId pairs (after, before) */
  GHashTable *choices; /* "op/n/bytes/nodes" -> SimCollChoice */
  int replicas;
  int *lc_of;          /* layers per chunk, by stage */
  double layer_params; /* per TP rank */
  GError *error;
  /* ZeRO-2/3: per-pass collectives, created with replica 0 and shared by
   * every replica (they span all of them), indexed [stage][pass] */
  SimActivityId *ag_join;
  SimActivityId *rs_start;
  SimActivityId *rs_last;      /* per stage: the last gradient reduce-scatter */
  int passes_per_stage;
} B;

const char *
sim_span_kind_name (SimSpanKind k)
{
  static const char *names[] = { "forward", "backward", "recompute", "optimizer", "tp", "cp", "pp", "dp", "gate" };
  return k < SIM_SPAN_KINDS ? names[k] : "?";
}

static guint32
new_span (B *b, SimSpanKind kind, int stage, int replica, int mb, int chunk)
{
  Span s = { kind, stage, replica, mb, chunk, -1, -1 };
  g_array_append_val (b->spans, s);
  return b->spans->len - 1;
}

static void
mark_from (B *b, guint32 first, guint32 span)
{
  guint32 n = sim_engine_n_activities (b->e);
  guint8 no = 0;
  for (guint32 a = first; a < n; a++) {
    g_array_append_val (b->act_span, span);
    g_array_append_val (b->is_compute, no);
  }
}

static void
dep (B *b, SimActivityId after, SimActivityId before)
{
  sim_engine_add_dep (b->e, after, before);
  g_array_append_val (b->edges, after);
  g_array_append_val (b->edges, before);
}

static SimActivityId
compute (B *b, int stream, double seconds, guint32 span)
{
  guint32 first = sim_engine_n_activities (b->e);
  SimActivityId a = sim_engine_add_compute (b->e, stream, sim_time_from_s (seconds), span);
  mark_from (b, first, span);
  g_array_index (b->is_compute, guint8, a) = 1;
  return a;
}

static SimActivityId
gate (B *b, guint32 span)
{
  guint32 first = sim_engine_n_activities (b->e);
  SimActivityId a = sim_engine_add_delay (b->e, 0, span);
  mark_from (b, first, span);
  return a;
}

static int
gpu_of (B *b, int tp, int cp, int dp, int pp)
{
  int c[SIM_DIM_COUNT];
  c[SIM_DIM_TP] = tp, c[SIM_DIM_CP] = cp, c[SIM_DIM_DP] = dp, c[SIM_DIM_PP] = pp;
  return sim_plan_rank_of (b->plan, c);
}

static const SimCollChoice *
choose (B *b, SimCollOp op, const int *gpus, int n, double bytes)
{
  const SimTopology *t = b->topo;
  int nodes = 1;
  g_autofree char *key = NULL;
  SimCollChoice *c = NULL;
  for (int i = 1; i < n; i++) {
    gboolean seen = FALSE;
    for (int j = 0; j < i && !seen; j++)
      seen = sim_topology_gpu (t, gpus[j])->node == sim_topology_gpu (t, gpus[i])->node;
    nodes += !seen;
  }
  /* groups of one shape behave alike on a regular cluster */
  key = g_strdup_printf ("%d/%d/%.0f/%d/%d", op, n, bytes, nodes,
                         n > 1 ? gpus[1] - gpus[0] : 0);
  c = g_hash_table_lookup (b->choices, key);
  if (c != NULL)
    return c;
  c = g_new0 (SimCollChoice, 1);
  if (!sim_collective_choose (b->net, op, gpus, n, bytes, SIM_ALGO_AUTO, SIM_PROTO_AUTO, c,
                              b->error != NULL ? NULL : &b->error)) {
    c->algo = SIM_ALGO_RING;
    c->proto = SIM_PROTO_SIMPLE;
  }
  g_hash_table_insert (b->choices, g_steal_pointer (&key), c);
  return c;
}

/* `count` back-to-back collectives of `bytes` merged into one: the bytes
 * and the latency add up */
static void
coll (B *b, SimCollOp op, const int *gpus, int n, double bytes, int count, guint32 span,
      SimActivityId *start, SimActivityId *join)
{
  guint32 first = sim_engine_n_activities (b->e);
  SimCollChoice c = *choose (b, op, gpus, n, bytes);
  c.latency_s *= count;
  *join = sim_collective_add (b->net, op, gpus, n, bytes * count, &c, span, start);
  mark_from (b, first, span);
}

/* the TP collectives of one pass on every TP group of the stage, after
 * `after`; returns the activity that ends them all */
static SimActivityId
tp_colls (B *b, int replica, int stage, int count, SimActivityId after, int mb, int chunk)
{
  const SimPlan *p = b->plan;
  guint32 span;
  SimActivityId end;
  g_autofree int *g = NULL;
  if (p->tp < 2 || count == 0)
    return after;
  span = new_span (b, SIM_SPAN_TP, stage, replica, mb, chunk);
  end = gate (b, span);
  g = g_new (int, p->tp);
  for (int c = 0; c < p->cp; c++) {
    SimActivityId s, j;
    for (int t = 0; t < p->tp; t++)
      g[t] = gpu_of (b, t, c, replica, stage);
    /* with sequence parallelism, half are all_gathers, half reduce_scatters:
     * the same ring traffic, (t-1)/t S each */
    coll (b, p->sequence_parallel ? SIM_OP_ALL_GATHER : SIM_OP_ALL_REDUCE, g, p->tp,
          b->cost.tp_bytes, count, span, &s, &j);
    dep (b, s, after);
    dep (b, end, j);
  }
  return end;
}

/* context parallel: K and V blocks travel around each CP ring beside the
 * attention; the pass cannot end before they have */
static void
cp_flows (B *b, int replica, int stage, double bytes, SimActivityId after, SimActivityId end,
          int mb, int chunk)
{
  const SimPlan *p = b->plan;
  guint32 span;
  g_autofree int *g = NULL;
  if (p->cp < 2)
    return;
  span = new_span (b, SIM_SPAN_CP, stage, replica, mb, chunk);
  g = g_new (int, p->cp);
  for (int t = 0; t < p->tp; t++) {
    SimActivityId s, j;
    for (int c = 0; c < p->cp; c++)
      g[c] = gpu_of (b, t, c, replica, stage);
    /* (cp - 1) steps of one block each: the ring of an all_gather */
    coll (b, SIM_OP_ALL_GATHER, g, p->cp, bytes * p->cp / (p->cp - 1.0), 1, span, &s, &j);
    dep (b, s, after);
    dep (b, end, j);
  }
}

/* a collective over the dp x cp ranks holding the same parameters, one per
 * TP rank, after `after`; returns the activity that ends them all */
static SimActivityId
dp_coll (B *b, SimCollOp op, int stage, double bytes, SimActivityId after, SimActivityId *start_out,
         int mb, int chunk)
{
  const SimPlan *p = b->plan;
  int shards = p->dp * p->cp;
  guint32 span = new_span (b, SIM_SPAN_DP, stage, 0, mb, chunk);
  SimActivityId end = gate (b, span), first = G_MAXUINT32;
  g_autofree int *g = g_new (int, shards);
  for (int t = 0; t < p->tp; t++) {
    SimActivityId st, j;
    int n = 0;
    for (int d = 0; d < p->dp; d++)
      for (int c = 0; c < p->cp; c++)
        g[n++] = gpu_of (b, t, c, d, stage);
    coll (b, op, g, shards, bytes, 1, span, &st, &j);
    if (after != G_MAXUINT32)
      dep (b, st, after);
    if (first == G_MAXUINT32)
      first = st;
    dep (b, end, j);
  }
  if (start_out != NULL)
    *start_out = first;
  return end;
}

/* how long the TP collectives of one pass take alone on the network, and
 * the ZeRO collective of `bytes` over the data-parallel group: what the
 * compute beside them is slowed for */
static double
tp_pred_s (B *b, int stage, int count)
{
  const SimPlan *p = b->plan;
  g_autofree int *g = NULL;
  if (p->tp < 2 || count == 0)
    return 0;
  g = g_new (int, p->tp);
  for (int t = 0; t < p->tp; t++)
    g[t] = gpu_of (b, t, 0, 0, stage);
  return count * choose (b, p->sequence_parallel ? SIM_OP_ALL_GATHER : SIM_OP_ALL_REDUCE, g, p->tp,
                         b->cost.tp_bytes)->predicted_s;
}

static double
dp_pred_s (B *b, SimCollOp op, int stage, double bytes)
{
  const SimPlan *p = b->plan;
  int shards = p->dp * p->cp, n = 0;
  g_autofree int *g = g_new (int, shards);
  for (int d = 0; d < p->dp; d++)
    for (int c = 0; c < p->cp; c++)
      g[n++] = gpu_of (b, 0, c, d, stage);
  return choose (b, op, g, shards, bytes)->predicted_s;
}

/* compute of `seconds` with `comm_s` of communication kernels beside it:
 * while both run, the compute loses comm-slowdown of its speed to the
 * SMs and memory bandwidth the NCCL kernels take */
static double
slowed (const B *b, double seconds, double comm_s)
{
  return seconds + b->gpu->eff.comm_slowdown * MIN (seconds, comm_s);
}

static void
build_pass (B *b, int replica, int stage, int stream, const SimPipeOp *op, Pass *pass,
            GArray *grads, gboolean last_use, SimActivityId prev_end, int index,
            SimActivityId *ag_prev, SimActivityId prev_gate)
{
  const SimPlan *p = b->plan;
  const SimLayerCost *c = &b->cost;
  int pp = p->pp, v = p->virtual_stages;
  gboolean first_chunk = stage == 0 && op->chunk == 0;
  gboolean last_chunk = stage == pp - 1 && op->chunk == v - 1;
  guint32 gspan = new_span (b, SIM_SPAN_GATE, stage, replica, (int) op->micro_batch, op->chunk);
  SimActivityId x;
  int lc = b->lc_of[stage];
  double cp_bytes = lc * (p->cp - 1) * c->cp_kv_bytes;
  gboolean overlap_tp = p->tp_comm_overlap > 0;
  /* ZeRO-3 collectives beside this pass's compute: the next pass's
   * parameter all-gather, and in a backward the gradient reduce-scatter */
  double side_s = 0;
  if (p->zero >= 3 && p->dp * p->cp > 1) {
    int pb, gb, mb, ob, ab;
    sim_recipe_bytes (p->recipe, &pb, &gb, &mb, &ob, &ab);
    side_s = dp_pred_s (b, SIM_OP_ALL_GATHER, stage, lc * b->layer_params * 2);
    if (op->backward)
      side_s += dp_pred_s (b, SIM_OP_REDUCE_SCATTER, stage,
                           lc * b->layer_params * (gb + ab > 2 ? 4 : 2));
  }

  pass->op = *op;
  pass->gate = gate (b, gspan);
  if (prev_end != G_MAXUINT32)
    dep (b, pass->gate, prev_end);
  x = pass->gate;
  pass->end = gate (b, gspan);

  /* ZeRO-3: the chunk's parameters are gathered before each pass, at most
   * one pass ahead of the compute */
  if (p->zero >= 3 && p->dp * p->cp > 1) {
    SimActivityId *slot = &b->ag_join[stage * b->passes_per_stage + index];
    if (replica == 0) {
      SimActivityId st;
      *slot = dp_coll (b, SIM_OP_ALL_GATHER, stage, lc * b->layer_params * 2, *ag_prev, &st,
                       (int) op->micro_batch, op->chunk);
      if (prev_gate != G_MAXUINT32)
        dep (b, st, prev_gate);
      *ag_prev = *slot;
    }
    dep (b, pass->gate, *slot);
  }

  if (!op->backward) {
    double t = lc * c->layer_fwd_s + (first_chunk ? c->embed_fwd_s : 0) +
               (last_chunk ? c->head_fwd_s : 0);
    SimActivityId a;
    pass->compute_span = new_span (b, SIM_SPAN_FORWARD, stage, replica, (int) op->micro_batch, op->chunk);
    a = compute (b, stream, slowed (b, t, side_s + (overlap_tp ? tp_pred_s (b, stage, lc * c->tp_colls_fwd) : 0)),
                 pass->compute_span);
    dep (b, a, x);
    x = tp_colls (b, replica, stage, lc * c->tp_colls_fwd, overlap_tp ? x : a, (int) op->micro_batch,
                  op->chunk);
    cp_flows (b, replica, stage, cp_bytes, pass->gate, pass->end, (int) op->micro_batch, op->chunk);
    dep (b, pass->end, x);
    dep (b, pass->end, a);
    return;
  }

  if (c->layer_recompute_s > 0) {
    SimActivityId r;
    pass->has_recompute = TRUE;
    pass->recompute_span = new_span (b, SIM_SPAN_RECOMPUTE, stage, replica, (int) op->micro_batch, op->chunk);
    gboolean tp_rc = p->recompute == SIM_RECOMPUTE_FULL;
    r = compute (b, stream,
                 slowed (b, lc * c->layer_recompute_s,
                         side_s + (overlap_tp && tp_rc ? tp_pred_s (b, stage, lc * c->tp_colls_fwd) : 0)),
                 pass->recompute_span);
    dep (b, r, x);
    if (tp_rc) {
      SimActivityId y = tp_colls (b, replica, stage, lc * c->tp_colls_fwd, overlap_tp ? x : r,
                                  (int) op->micro_batch, op->chunk);
      x = gate (b, gspan);
      dep (b, x, y);
      dep (b, x, r);
    } else
      x = r;
  }
  pass->compute_span = new_span (b, SIM_SPAN_BACKWARD, stage, replica, (int) op->micro_batch, op->chunk);
  if (last_use && grads != NULL) {
    /* the last backward of this chunk: layer by layer, so that gradient
     * buckets can leave while the rest is still computing */
    for (int l = lc - 1; l >= 0; l--) {
      double t = c->layer_bwd_s + (last_chunk && l == lc - 1 ? c->head_bwd_s : 0) +
                 (first_chunk && l == 0 ? c->embed_bwd_s : 0);
      double params = b->layer_params;
      GradEntry ge;
      SimActivityId a = compute (b, stream,
                                 slowed (b, t, side_s / lc + (overlap_tp ? tp_pred_s (b, stage, c->tp_colls_fwd) : 0)),
                                 pass->compute_span);
      SimActivityId y;
      dep (b, a, x);
      y = tp_colls (b, replica, stage, c->tp_colls_fwd, overlap_tp ? x : a, (int) op->micro_batch, op->chunk);
      x = gate (b, gspan);
      dep (b, x, y);
      dep (b, x, a);
      if (last_chunk && l == lc - 1)
        params += (double) sim_model_final_norm_params (b->model) +
                  (double) (b->model->tied_embeddings && pp == 1 ? 0 : sim_model_embedding_params (b->model)) / p->tp;
      if (first_chunk && l == 0)
        params += (double) sim_model_embedding_params (b->model) / p->tp +
                  (double) sim_model_position_params (b->model);
      ge.ready = x;
      ge.params = params;
      g_array_append_val (grads, ge);
    }
  } else {
    double t = lc * c->layer_bwd_s + (first_chunk ? c->embed_bwd_s : 0) +
               (last_chunk ? c->head_bwd_s : 0);
    SimActivityId a = compute (b, stream,
                               slowed (b, t, side_s + (overlap_tp ? tp_pred_s (b, stage, lc * c->tp_colls_fwd) : 0)),
                               pass->compute_span);
    SimActivityId y;
    dep (b, a, x);
    y = tp_colls (b, replica, stage, lc * c->tp_colls_fwd, overlap_tp ? x : a, (int) op->micro_batch,
                  op->chunk);
    x = gate (b, gspan);
    dep (b, x, y);
    dep (b, x, a);
  }
  cp_flows (b, replica, stage, 2 * cp_bytes, pass->gate, pass->end, (int) op->micro_batch, op->chunk);
  dep (b, pass->end, x);

  /* ZeRO-2/3: every backward reduce-scatters its chunk's gradients at once
   * (a partition cannot accumulate the whole gradient) */
  if (p->zero >= 2 && p->dp * p->cp > 1) {
    SimActivityId *slot = &b->rs_start[stage * b->passes_per_stage + index];
    if (replica == 0) {
      int pb, gb, mb, ob, ab;
      SimActivityId end;
      sim_recipe_bytes (p->recipe, &pb, &gb, &mb, &ob, &ab);
      end = dp_coll (b, SIM_OP_REDUCE_SCATTER, stage, lc * b->layer_params * (gb + ab > 2 ? 4 : 2),
                     b->rs_last[stage], slot, (int) op->micro_batch, op->chunk);
      b->rs_last[stage] = end;
    }
    dep (b, *slot, pass->end);
  }
}

/* the pass of (stage, chunk, mb, direction) in a replica's pass table */
static Pass *
find_pass (Pass *passes, const int *offsets, int stage, int total, int chunk, int mb, gboolean bwd)
{
  Pass *ps = passes + offsets[stage];
  for (int i = 0; i < total; i++)
    if (ps[i].op.chunk == chunk && (int) ps[i].op.micro_batch == mb && ps[i].op.backward == bwd)
      return &ps[i];
  return NULL;
}

static void
pp_send (B *b, int replica, int from, int to, SimActivityId after, SimActivityId before, int mb, int chunk)
{
  const SimPlan *p = b->plan;
  guint32 span;
  if (b->cost.pp_bytes <= 0) {
    /* nothing to send (an idealised cost model): a plain dependency */
    dep (b, before, after);
    return;
  }
  span = new_span (b, SIM_SPAN_PP, from, replica, mb, chunk);
  for (int t = 0; t < p->tp; t++)
    for (int c = 0; c < p->cp; c++) {
      int g[2] = { gpu_of (b, t, c, replica, from), gpu_of (b, t, c, replica, to) };
      SimActivityId s, j;
      coll (b, SIM_OP_SENDRECV, g, 2, b->cost.pp_bytes, 1, span, &s, &j);
      dep (b, s, after);
      dep (b, before, j);
    }
}


static void
choice_free (gpointer p)
{
  g_free (p);
}


/* ---- reading the finished run ---- */

typedef struct {
  guint32 *off;   /* CSR of recorded predecessors, by activity */
  SimActivityId *pred;
} Preds;

static void
preds_build (Preds *pr, B *b, guint32 n)
{
  guint32 ne = b->edges->len / 2;
  const SimActivityId *ed = (const SimActivityId *) (gpointer) b->edges->data;
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
  g_free (pr->off);
  g_free (pr->pred);
}

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

static Span *
span_of (B *b, SimActivityId a)
{
  return &g_array_index (b->spans, Span, g_array_index (b->act_span, guint32, a));
}

/* what a compute activity waited for: through bookkeeping gates to the
 * first activity of another kind */
static SimActivityId
cause (const Preds *pr, B *b, SimActivityId a)
{
  SimActivityId c = latest_pred (pr, b->e, a);
  int guard = 0;
  while (c != G_MAXUINT32 && span_of (b, c)->kind == SIM_SPAN_GATE && guard++ < 1000000) {
    SimActivityId up = latest_pred (pr, b->e, c);
    if (up == G_MAXUINT32)
      break;
    c = up;
  }
  return c;
}

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

static void
analyse (SimIteration *it, B *b, const SimMemory *ledger)
{
  const SimPlan *plan = b->plan;
  const SimModel *model = b->model;
  SimEngine *e = b->e;
  guint32 n = sim_engine_n_activities (e);
  int p = plan->pp;
  Preds pr;
  SimTime step = sim_engine_now (e);
  SimActivationConfig cfg;
  g_autoptr (SimActivations) layer_act = NULL;
  g_autoptr (SimActivations) emb_act = NULL;
  g_autoptr (SimActivations) out_act = NULL;
  double peak_flops = b->gpu->peak_flop_per_s[SIM_DTYPE_BF16] > 0
                          ? b->gpu->peak_flop_per_s[SIM_DTYPE_BF16]
                          : b->gpu->peak_flop_per_s[SIM_DTYPE_FP16];
  int world = sim_plan_world_size (plan);

  preds_build (&pr, b, n);
  it->step_s = sim_time_to_s (step);
  it->stages = g_array_new (FALSE, TRUE, sizeof (SimStageTime));
  it->spans = g_array_new (FALSE, FALSE, sizeof (SimSpan));
  for (guint i = 0; i < b->spans->len; i++) {
    const Span *sp = &g_array_index (b->spans, Span, i);
    SimSpan o = { sp->kind, sp->stage, sp->replica, sp->mb, sp->chunk, sp->start, sp->end };
    if (sp->kind == SIM_SPAN_GATE || sp->replica != 0 || sp->start < 0)
      continue;
    g_array_append_val (it->spans, o);
  }

  sim_activation_config_from_plan (&cfg, plan);
  layer_act = sim_activations_layer (model, &cfg);
  emb_act = sim_activations_embedding (model, &cfg);
  out_act = sim_activations_output (model, &cfg);

  for (int s = 0; s < p; s++) {
    SimStageTime st = { 0 };
    SimTime cursor = 0, dp_end = 0;
    g_autoptr (GArray) comp = g_array_new (FALSE, FALSE, sizeof (SimActivityId));
    g_autoptr (GArray) own_comm = g_array_new (FALSE, FALSE, sizeof (guint32));
    guint tpi = 0;
    g_autoptr (GArray) ev = g_array_new (FALSE, FALSE, sizeof (MemEvent));
    gint64 level = 0, peak = 0;

    st.stage = s;
    for (guint32 a = 0; a < n; a++) {
      const Span *sp = span_of (b, a);
      if (sp->stage != s || sp->replica != 0)
        continue;
      if (g_array_index (b->is_compute, guint8, a))
        g_array_append_val (comp, a);
      if (sp->kind == SIM_SPAN_DP)
        dp_end = MAX (dp_end, sim_engine_end (e, a));
    }
    for (guint32 i = 0; i < b->spans->len; i++) {
      const Span *sp = &g_array_index (b->spans, Span, i);
      if (sp->stage == s && sp->replica == 0 && sp->start >= 0 &&
          (sp->kind == SIM_SPAN_TP || sp->kind == SIM_SPAN_CP))
        g_array_append_val (own_comm, i);
    }
    g_array_sort_with_data (own_comm, span_start_cmp, b->spans);
    /* compute activities of one stream run one after another, in start order */
    for (guint i = 0; i < comp->len; i++) {
      SimActivityId a = g_array_index (comp, SimActivityId, i);
      const Span *sp = span_of (b, a);
      SimTime t0 = sim_engine_start (e, a), t1 = sim_engine_end (e, a);
      double d = sim_time_to_s (t1 - t0);
      switch (sp->kind) {
      case SIM_SPAN_FORWARD: st.forward_s += d; break;
      case SIM_SPAN_BACKWARD: st.backward_s += d; break;
      case SIM_SPAN_RECOMPUTE: st.recompute_s += d; break;
      default: st.optimizer_s += d; break;
      }
      if (t0 > cursor) {
        double gap = sim_time_to_s (t0 - cursor);
        double own = 0, rest = 0;
        SimActivityId c = cause (&pr, b, a);
        const Span *cs = c != G_MAXUINT32 ? span_of (b, c) : NULL;
        /* the stage's own TP and CP collectives block its stream: whatever
         * part of the wait they cover is theirs */
        while (tpi < own_comm->len &&
               g_array_index (b->spans, Span, g_array_index (own_comm, guint32, tpi)).end <= cursor)
          tpi++;
        for (guint k = tpi; k < own_comm->len; k++) {
          const Span *o = &g_array_index (b->spans, Span, g_array_index (own_comm, guint32, k));
          double x;
          if (o->start >= t0)
            break;
          x = overlap_s (cursor, t0, o->start, o->end);
          if (o->kind == SIM_SPAN_TP)
            st.exposed_tp_s += x;
          else
            st.exposed_cp_s += x;
          own += x;
        }
        rest = MAX (gap - own, 0.0);
        switch (cs != NULL ? cs->kind : SIM_SPAN_GATE) {
        case SIM_SPAN_DP: st.exposed_dp_s += rest; break;
        case SIM_SPAN_PP: {
          /* the transfer itself is exposed pipeline communication; waiting
           * for the sender to finish computing is the bubble */
          double x = MIN (rest, overlap_s (cursor, t0, cs->start, cs->end));
          st.exposed_pp_s += x;
          st.bubble_s += rest - x;
          break;
        }
        case SIM_SPAN_TP:
        case SIM_SPAN_CP:
          /* already counted by overlap; a remainder is rounding */
          st.bubble_s += rest;
          break;
        default: st.bubble_s += rest; break;
        }
      }
      cursor = MAX (cursor, t1);
    }
    if (step > cursor) {
      double dp_tail = dp_end > cursor ? sim_time_to_s (MIN (dp_end, step) - cursor) : 0;
      st.exposed_dp_s += dp_tail;
      st.bubble_s += sim_time_to_s (step - cursor) - dp_tail;
    }

    /* activation memory over time: allocated when a forward pass starts,
     * freed when its backward ends; one layer's recomputation set while
     * its backward runs */
    for (guint i = 0; i < b->spans->len; i++) {
      const Span *sp = &g_array_index (b->spans, Span, i);
      gint64 bytes;
      gboolean first = s == 0 && sp->chunk == 0, last = s == p - 1 && sp->chunk == plan->virtual_stages - 1;
      if (sp->stage != s || sp->replica != 0 || sp->start < 0)
        continue;
      bytes = (gint64) b->lc_of[s] * (gint64) layer_act->saved_bytes + (first ? (gint64) emb_act->saved_bytes : 0) +
              (last ? (gint64) out_act->saved_bytes : 0);
      if (sp->kind == SIM_SPAN_FORWARD) {
        MemEvent x = { sp->start, bytes };
        g_array_append_val (ev, x);
      } else if (sp->kind == SIM_SPAN_BACKWARD) {
        MemEvent x = { sp->end, -bytes };
        MemEvent y = { sp->start, (gint64) layer_act->transient_bytes };
        MemEvent z = { sp->end, -(gint64) layer_act->transient_bytes };
        g_array_append_val (ev, x);
        if (layer_act->transient_bytes > 0 && plan->recompute == SIM_RECOMPUTE_SELECTIVE) {
          g_array_append_val (ev, y);
          g_array_append_val (ev, z);
        }
      } else if (sp->kind == SIM_SPAN_RECOMPUTE && layer_act->transient_bytes > 0 &&
                 plan->recompute == SIM_RECOMPUTE_FULL) {
        /* the whole layer comes back, one layer at a time, until the
         * backward of this pass ends: approximate by the pass's span */
        MemEvent y = { sp->start, (gint64) layer_act->transient_bytes };
        g_array_append_val (ev, y);
        for (guint k = 0; k < b->spans->len; k++) {
          const Span *bw = &g_array_index (b->spans, Span, k);
          if (bw->kind == SIM_SPAN_BACKWARD && bw->stage == s && bw->replica == 0 &&
              bw->mb == sp->mb && bw->chunk == sp->chunk) {
            MemEvent z = { bw->end, -(gint64) layer_act->transient_bytes };
            g_array_append_val (ev, z);
            break;
          }
        }
      }
    }
    g_array_sort (ev, mem_event_cmp);
    st.memory = g_array_new (FALSE, FALSE, sizeof (SimMemPoint));
    {
      SimMemPoint z = { 0, 0 };
      g_array_append_val (st.memory, z);
    }
    for (guint i = 0; i < ev->len; i++) {
      const MemEvent *x = &g_array_index (ev, MemEvent, i);
      SimMemPoint pt;
      level += x->delta;
      peak = MAX (peak, level);
      pt.time = x->t;
      pt.activation_bytes = (guint64) MAX (level, 0);
      g_array_append_val (st.memory, pt);
    }
    st.peak_activation_bytes = (guint64) peak;
    st.peak_bytes = g_array_index (ledger->stages, SimStageMemory, s).states_bytes + (guint64) peak;
    g_array_append_val (it->stages, st);
  }

  /* averages over stages */
  for (int s = 0; s < p; s++) {
    const SimStageTime *st = &g_array_index (it->stages, SimStageTime, s);
    it->compute_s += (st->forward_s + st->backward_s + st->recompute_s + st->optimizer_s) / p;
    it->exposed_tp_s += st->exposed_tp_s / p;
    it->exposed_cp_s += st->exposed_cp_s / p;
    it->exposed_pp_s += st->exposed_pp_s / p;
    it->exposed_dp_s += st->exposed_dp_s / p;
    it->bubble_fraction += st->bubble_s / it->step_s / p;
  }

  /* the critical path: from the last activity back along what it waited for */
  {
    SimActivityId a = 0;
    g_autofree gboolean *span_seen = g_new0 (gboolean, b->spans->len);
    g_autofree SimActivityId *entry = g_new (SimActivityId, b->spans->len);
    guint32 guard = 0;
    for (guint i = 0; i < b->spans->len; i++)
      entry[i] = G_MAXUINT32;
    for (guint32 x = 0; x < n; x++) {
      guint32 sp = g_array_index (b->act_span, guint32, x);
      SimActivityId l = latest_pred (&pr, e, x);
      if (l != G_MAXUINT32 && g_array_index (b->act_span, guint32, l) != sp &&
          (entry[sp] == G_MAXUINT32 || sim_engine_end (e, l) > sim_engine_end (e, entry[sp])))
        entry[sp] = l;
      if (sim_engine_end (e, x) > sim_engine_end (e, a))
        a = x;
    }
    while (a != G_MAXUINT32 && guard++ < n + 1) {
      guint32 sp = g_array_index (b->act_span, guint32, a);
      const Span *s = &g_array_index (b->spans, Span, sp);
      SimActivityId next;
      if (g_array_index (b->is_compute, guint8, a)) {
        it->critical_s[s->kind] += sim_time_to_s (sim_engine_end (e, a) - sim_engine_start (e, a));
        next = latest_pred (&pr, e, a);
      } else if (s->kind == SIM_SPAN_GATE) {
        next = latest_pred (&pr, e, a);
      } else {
        if (!span_seen[sp])
          it->critical_s[s->kind] += sim_time_to_s (s->end - s->start);
        span_seen[sp] = TRUE;
        next = entry[sp];
      }
      a = next;
    }
  }

  /* throughput and FLOPs */
  {
    double gbs = (double) plan->global_batch, S = (double) plan->seq_len, h = model->hidden;
    double kvd = (double) sim_model_kv_dim (model), L = model->layers;
    double up = (model->mlp == SIM_MLP_SWIGLU ? 3.0 : 2.0) * h * model->ffn_hidden;
    double layer_fwd = (2.0 * (h * (h + 2 * kvd) + h * h + up) + 4.0 * S * h) * L * gbs * S;
    it->model_flop = sim_cost_model_flop (model, plan);
    it->hardware_flop = it->model_flop;
    if (plan->recompute == SIM_RECOMPUTE_FULL)
      it->hardware_flop += layer_fwd;
    else if (plan->recompute == SIM_RECOMPUTE_SELECTIVE)
      it->hardware_flop += 4.0 * S * h * L * gbs * S;
    it->tokens_per_s = gbs * S / it->step_s;
    it->model_tflops_per_gpu = it->model_flop / it->step_s / world / 1e12;
    it->hardware_tflops_per_gpu = it->hardware_flop / it->step_s / world / 1e12;
    it->mfu = sim_cost_mfu (model, plan, b->gpu, it->step_s);
    it->hfu = it->hardware_flop / (it->step_s * world * peak_flops);
  }
  preds_clear (&pr);
}

SimIteration *
sim_iteration_run (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
                   const SimMemory *ledger, gboolean full, GError **error)
{
  return sim_iteration_run_with_cost (topo, model, plan, ledger, full, NULL, error);
}

SimIteration *
sim_iteration_run_with_cost (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
                             const SimMemory *ledger, gboolean full, const SimLayerCost *cost,
                             GError **error)
{
  g_autoptr (SimEngine) e = sim_engine_new ();
  g_autoptr (SimNetwork) net = NULL;
  B b = { 0 };
  int p = plan->pp, v = plan->virtual_stages, m = (int) plan->micro_batches;
  int total = m * v;
  int replicas = full ? plan->dp : 1;
  int shards = plan->dp * plan->cp;
  g_autofree int *stream = NULL;
  g_autofree Pass *passes = NULL;
  g_autofree int *offsets = NULL;
  g_autoptr (GPtrArray) grads = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  SimIteration *it = g_new0 (SimIteration, 1);
  g_autofree SimActivityId *stage_end = NULL;

  net = sim_network_new (topo, e);
  b.topo = topo, b.model = model, b.plan = plan, b.e = e, b.net = net;
  b.gpu = sim_topology_gpu_type (topo, 0);
  b.spans = g_array_new (FALSE, FALSE, sizeof (Span));
  b.act_span = g_array_new (FALSE, FALSE, sizeof (guint32));
  b.is_compute = g_array_new (FALSE, FALSE, sizeof (guint8));
  b.edges = g_array_new (FALSE, FALSE, sizeof (SimActivityId));
  b.choices = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, choice_free);
  b.replicas = replicas;
  b.lc_of = g_new (int, p);
  for (int s = 0; s < p; s++)
    b.lc_of[s] = (int) (sim_plan_stage_layers (plan, model, s) / (guint64) v);
  b.layer_params = (double) sim_model_layer_params_sharded (model) / plan->tp +
                   (double) sim_model_layer_params_replicated (model);
  if (cost != NULL)
    b.cost = *cost;
  else
    sim_cost_layer (model, plan, b.gpu, &b.cost);
  it->symmetric = !full;
  it->gemm_table = b.gpu->gemm != NULL && b.gpu->gemm->len > 0;

  b.passes_per_stage = 2 * total;
  b.ag_join = g_new (SimActivityId, (gsize) p * b.passes_per_stage);
  b.rs_start = g_new (SimActivityId, (gsize) p * b.passes_per_stage);
  b.rs_last = g_new (SimActivityId, p);
  for (int s = 0; s < p; s++)
    b.rs_last[s] = G_MAXUINT32;
  stream = g_new (int, replicas * p);
  offsets = g_new (int, p);
  passes = g_new0 (Pass, (gsize) replicas * p * 2 * total);
  stage_end = g_new (SimActivityId, replicas * p);
  for (int s = 0; s < p; s++)
    offsets[s] = s * 2 * total;

  /* 1. every replica's stages, pass by pass in program order */
  for (int r = 0; r < replicas; r++)
    for (int s = 0; s < p; s++) {
      g_autoptr (GArray) order = sim_schedule_stage (plan->schedule, p, s, m, v);
      Pass *ps = passes + (gsize) r * p * 2 * total + offsets[s];
      GArray *ge = g_array_new (FALSE, FALSE, sizeof (GradEntry));
      SimActivityId prev = G_MAXUINT32, ag_prev = G_MAXUINT32, prev_gate = G_MAXUINT32;
      stream[r * p + s] = sim_engine_add_stream (e);
      for (guint i = 0; i < order->len; i++) {
        const SimPipeOp *op = &g_array_index (order, SimPipeOp, i);
        /* the last backward of each chunk is the one that finalises its grads */
        gboolean last_use = op->backward && (int) op->micro_batch == m - 1;
        build_pass (&b, r, s, stream[r * p + s], op, &ps[i], plan->zero >= 2 ? NULL : ge,
                    last_use && plan->overlap, prev, (int) i, &ag_prev, prev_gate);
        prev = ps[i].end;
        prev_gate = ps[i].gate;
      }
      stage_end[r * p + s] = prev;
      if (!plan->overlap && plan->zero < 2) {
        /* all gradients at once, after the whole backward */
        GradEntry all = { prev, (double) g_array_index (ledger->stages, SimStageMemory, s).params };
        if (plan->zero >= 3)
          all.params *= shards;
        g_array_append_val (ge, all);
      }
      g_ptr_array_add (grads, ge);
    }

  /* 2. pipeline sends between the stages of each replica */
  for (int r = 0; r < replicas; r++) {
    Pass *base = passes + (gsize) r * p * 2 * total;
    for (int s = 0; s < p; s++)
      for (int i = 0; i < 2 * total; i++) {
        Pass *src = base + offsets[s] + i;
        int c = src->op.chunk, mb = (int) src->op.micro_batch, to = -1, tc = c;
        Pass *dst = NULL;
        if (!src->op.backward) {
          if (s < p - 1)
            to = s + 1;
          else if (c < v - 1)
            to = 0, tc = c + 1;
        } else {
          if (s > 0)
            to = s - 1;
          else if (c > 0)
            to = p - 1, tc = c - 1;
        }
        if (to < 0)
          continue;
        dst = find_pass (base, offsets, to, 2 * total, tc, mb, src->op.backward);
        if (dst != NULL)
          pp_send (&b, r, s, to, src->end, dst->gate, mb, c);
      }
  }

  /* 3. gradients: buckets per stage, one collective per TP rank over the
   * dp x cp ranks that hold the same parameters; optimizer; ZeRO all-gather */
  for (int s = 0; s < p; s++) {
    g_autofree int *group = g_new (int, shards);
    GArray *ge0 = g_ptr_array_index (grads, s);
    g_autoptr (GArray) last = g_array_new (FALSE, FALSE, sizeof (SimActivityId));
    double bucket = MAX (BUCKET_PARAMS, 1e6 * plan->dp);
    int pb, gb, mb, ob, ab;
    double local = (double) g_array_index (ledger->stages, SimStageMemory, s).params;
    guint32 opt_span;

    sim_recipe_bytes (plan->recipe, &pb, &gb, &mb, &ob, &ab);
    if (plan->zero >= 2 && b.rs_last[s] != G_MAXUINT32)
      g_array_append_val (last, b.rs_last[s]);
    if (shards > 1 && plan->zero < 2) {
      g_autofree SimActivityId *prev = g_new (SimActivityId, plan->tp);
      double acc = 0;
      guint start_entry = 0;
      for (int t = 0; t < plan->tp; t++)
        prev[t] = G_MAXUINT32;
      for (guint k = 0; k < ge0->len; k++) {
        acc += g_array_index (ge0, GradEntry, k).params;
        if (acc < bucket && k + 1 < ge0->len)
          continue;
        /* the bucket's gradients are final when its last entry is, in every
         * replica simulated */
        {
          guint32 span = new_span (&b, SIM_SPAN_DP, s, 0, -1, -1);
          for (int t = 0; t < plan->tp; t++) {
            SimActivityId st, j;
            int n = 0;
            for (int d = 0; d < plan->dp; d++)
              for (int c = 0; c < plan->cp; c++)
                group[n++] = gpu_of (&b, t, c, d, s);
            coll (&b, plan->zero >= 1 ? SIM_OP_REDUCE_SCATTER : SIM_OP_ALL_REDUCE, group, shards,
                  acc * (gb + ab > 2 ? 4 : 2), 1, span, &st, &j);
            for (int r = 0; r < replicas; r++) {
              GArray *ger = g_ptr_array_index (grads, r * p + s);
              dep (&b, st, g_array_index (ger, GradEntry, k).ready);
            }
            if (prev[t] != G_MAXUINT32)
              dep (&b, st, prev[t]);
            prev[t] = j;
          }
        }
        acc = 0;
        start_entry = k + 1;
      }
      (void) start_entry;
      for (int t = 0; t < plan->tp; t++)
        if (prev[t] != G_MAXUINT32)
          g_array_append_val (last, prev[t]);
    }
    /* the optimizer step on each replica, once every gradient is reduced */
    if (plan->zero >= 1 && plan->zero < 3)
      local = local / shards;
    for (int r = 0; r < replicas; r++) {
      SimActivityId o;
      opt_span = new_span (&b, SIM_SPAN_OPTIMIZER, s, r, -1, -1);
      o = compute (&b, stream[r * p + s], b.cost.optimizer_s_per_param * local, opt_span);
      dep (&b, o, stage_end[r * p + s]);
      for (guint k = 0; k < last->len; k++)
        dep (&b, o, g_array_index (last, SimActivityId, k));
      stage_end[r * p + s] = o;
    }
    if (plan->zero >= 1 && plan->zero < 3 && shards > 1) {
      guint32 span = new_span (&b, SIM_SPAN_DP, s, 0, -1, -1);
      double params = (double) g_array_index (ledger->stages, SimStageMemory, s).params *
                      (plan->zero >= 3 ? shards : 1);
      /* --overlap-param-gather: Megatron gathers bucket by bucket as the
       * next forward reaches each; only the first bucket holds it up */
      if (plan->overlap_param_gather > 0)
        params = MIN (params, bucket);
      for (int t = 0; t < plan->tp; t++) {
        SimActivityId st, j;
        int n = 0;
        for (int d = 0; d < plan->dp; d++)
          for (int c = 0; c < plan->cp; c++)
            group[n++] = gpu_of (&b, t, c, d, s);
        coll (&b, SIM_OP_ALL_GATHER, group, shards, params * 2, 1, span, &st, &j);
        for (int r = 0; r < replicas; r++)
          dep (&b, st, stage_end[r * p + s]);
      }
    }
  }

  if (b.error != NULL) {
    g_propagate_error (error, b.error);
    sim_iteration_free (it);
    return NULL;
  }
  if (!sim_engine_run (e, error)) {
    sim_iteration_free (it);
    return NULL;
  }

  /* spans from their activities */
  for (guint32 a = 0; a < b.act_span->len; a++) {
    Span *sp = &g_array_index (b.spans, Span, g_array_index (b.act_span, guint32, a));
    SimTime st = sim_engine_start (e, a), en = sim_engine_end (e, a);
    if (sp->start < 0 || st < sp->start)
      sp->start = st;
    if (en > sp->end)
      sp->end = en;
  }
  analyse (it, &b, ledger);
  it->activities = sim_engine_n_activities (e);
  it->events = sim_engine_events (e);
  g_free (b.lc_of);
  g_free (b.ag_join);
  g_free (b.rs_start);
  g_free (b.rs_last);
  g_array_unref (b.spans);
  g_array_unref (b.act_span);
  g_array_unref (b.is_compute);
  g_array_unref (b.edges);
  g_hash_table_unref (b.choices);
  return it;
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
