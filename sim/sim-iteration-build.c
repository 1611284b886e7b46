/* sim-iteration-build.c — a plan into activities on the engine: each
 * replica's passes in program order, the pipeline sends between stages,
 * then per stage the gradient reduction, the optimizer step and the ZeRO
 * parameter all-gather (sim-iteration-private.h) */
#include "sim-iteration-private.h"

#include <math.h>
#include <string.h>

#include "sim-activation.h"
#include "sim-collective.h"
#include "sim-error.h"
#include "sim-memory.h"
#include "sim-schedule.h"
#include "sim-variability.h"

/* what a collective's algorithm and protocol depend on: the operation,
 * the group's size, nodes and stride, and the bytes (choose) */
typedef struct {
  int op, n, nodes, stride;
  double bytes;
} ChoiceKey;

static guint
choice_key_hash (gconstpointer p)
{
  const ChoiceKey *k = p;
  guint64 b = (guint64) k->bytes;
  return (guint) (k->op * 73856093u ^ k->n * 19349663u ^ k->nodes * 83492791u ^ k->stride * 2654435761u ^
                  (guint) (b ^ (b >> 32)));
}

static gboolean
choice_key_equal (gconstpointer pa, gconstpointer pb)
{
  const ChoiceKey *a = pa, *b = pb;
  return a->op == b->op && a->n == b->n && a->nodes == b->nodes && a->stride == b->stride &&
         a->bytes == b->bytes;
}

static void
choice_free (gpointer p)
{
  g_free (p);
}

static void moe_init (SimIterBuilder *b);

static void
array_unref_null (gpointer a)
{
  if (a != NULL)
    g_array_unref (a);
}

/* what a collective's time alone depends on, beside the network: its
 * group, operation, merged count and bytes (the choice follows from them:
 * choose) */
typedef struct {
  int gi, op, count;
  double bytes;
} AloneKey;

static guint
alone_key_hash (gconstpointer p)
{
  const AloneKey *k = p;
  guint64 b;
  memcpy (&b, &k->bytes, sizeof b);
  b = (b ^ ((guint64) k->gi << 40 ^ (guint64) k->op << 32 ^ (guint64) k->count)) *
      G_GUINT64_CONSTANT (0x9E3779B97F4A7C15);
  return (guint) (b >> 32);
}

static gboolean
alone_key_equal (gconstpointer pa, gconstpointer pb)
{
  const AloneKey *a = pa, *b = pb;
  return a->gi == b->gi && a->op == b->op && a->count == b->count && a->bytes == b->bytes;
}

/* whether ZeRO-2/3's per-pass collectives have a group to run over: the
 * dense parameters' dp x cp ranks, or a MoE model's routed experts' edp
 * ranks (a dense model's edp is its stage's every GPU) */
static gboolean
experts_sharded (const SimIterBuilder *b)
{
  return sim_model_is_moe (b->model) && b->plan->edp > 1;
}

static gboolean
zero_sharded (const SimIterBuilder *b)
{
  return b->plan->dp * b->plan->cp > 1 || experts_sharded (b);
}

static int gpu_of (const SimIterBuilder *b, int tp, int cp, int dp, int pp);

/* Whether, in a run of one replica, the data-parallel collectives of TP
 * ranks 1 .. tp-1 are exact copies of rank 0's, so that rank 0's alone
 * give the step.  On a rail-optimised cluster whose every GPU has its own
 * NIC and rail (DGX: GPU i -> NIC i -> the leaf of rail i), with each TP
 * group an aligned block of tp consecutive GPUs of a node (rank r at
 * offset r), shifting every block's offsets by t (and the NICs and rails
 * with them) maps the cluster onto itself and rank 0's gradient buckets,
 * parameter gathers and pipeline sends onto rank t's, while the TP
 * collectives, rings around each block, map onto themselves.  Rank t's
 * traffic runs on its GPUs' links and rails, which rank 0's never
 * touches, so leaving it out changes no rate on any link rank 0's crosses
 * (each of those carries the same flows as before), and every rank's
 * collective ended when rank 0's does.  When a block is a whole node
 * (tp 8 on DGX) no link is shared at all; a smaller block shares NVLink
 * with the rings around it, so those must be rings: sequence parallelism
 * (TP all-gathers and reduce-scatters, ring only, where an all-reduce may
 * take a tree that the shift does not preserve) and ZeRO-1 or more
 * (reduce-scatters and all-gathers over data parallelism, ring only).
 * Not with context parallelism or experts (their rings and all-to-alls
 * cross the TP ranks), nor with every replica simulated. */
static gboolean
dp_mirrored (const SimIterBuilder *b, gboolean full)
{
  const SimPlan *p = b->plan;
  const SimTopology *t = b->topo;
  const SimClusterInfo *c = &t->cluster;
  int g = t->gpus_per_node;
  if (full || p->tp < 2 || p->cp > 1 || p->dp < 2 || sim_model_is_moe (b->model) || !c->present ||
      !c->rail_optimized || c->nvlink_bw_bytes_per_s <= 0 || g <= 0 || g % p->tp != 0 ||
      c->nics_per_node != g)
    return FALSE;
  if (p->tp < g && (!p->sequence_parallel || p->zero < 1))
    return FALSE;
  for (int s = 0; s < p->pp; s++)
    for (int d = 0; d < p->dp; d++) {
      int g0 = gpu_of (b, 0, 0, d, s);
      if (g0 % p->tp != 0)
        return FALSE;
      for (int r = 1; r < p->tp; r++)
        if (gpu_of (b, r, 0, d, s) != g0 + r)
          return FALSE;
    }
  return TRUE;
}

/* whether context parallelism's blocks leave the TP groups' links alone:
 * every TP group inside one node (its collectives on NVLink) and every CP
 * group's ranks each on a node of their own (its blocks over the NICs).
 * Then the TP collectives can be delays of their time alone beside the
 * blocks' flows (alone_exact checks that nothing met them) */
static gboolean
cp_apart (const SimIterBuilder *b)
{
  const SimPlan *p = b->plan;
  for (int r = 0; r < b->replicas; r++)
    for (int s = 0; s < p->pp; s++)
      for (int t = 0; t < p->tp; t++)
        for (int c = 0; c < p->cp; c++) {
          int node = sim_topology_gpu (b->topo, gpu_of (b, t, c, r, s))->node;
          if (node != sim_topology_gpu (b->topo, gpu_of (b, 0, c, r, s))->node)
            return FALSE; /* a TP group across nodes */
          for (int k = 0; k < c; k++)
            if (node == sim_topology_gpu (b->topo, gpu_of (b, t, k, r, s))->node)
              return FALSE; /* two CP ranks in one node */
        }
  return TRUE;
}

void
sim_iter_builder_init (SimIterBuilder *b, const SimTopology *topo, const SimModel *model,
              const SimPlan *plan, const SimMemory *ledger, gboolean full, const SimLayerCost *cost,
              int alone, Scratch *sc)
{
  int p = plan->pp, v = plan->virtual_stages;
  int replicas = full ? plan->dp : 1;
  gboolean apart; /* cp_apart, once */
  double spread;  /* the slowest GPU's compute over nominal (sim-variability.h) */

  b->topo = topo, b->model = model, b->plan = plan, b->ledger = ledger;
  if (sc->e == NULL) {
    sc->e = sim_engine_new ();
    sc->net = sim_network_new (topo, sc->e);
    sc->spans = g_array_new (FALSE, FALSE, sizeof (Span));
    sc->choices = g_hash_table_new_full (choice_key_hash, choice_key_equal, g_free, choice_free);
    sc->nodes_seen = g_hash_table_new (g_direct_hash, g_direct_equal);
    sc->alone_s = g_hash_table_new_full (alone_key_hash, alone_key_equal, g_free, g_free);
    sc->alone_links = g_ptr_array_new_with_free_func (array_unref_null);
  } else {
    /* the links (and the network's routes) stay */
    sim_engine_reset (sc->e);
    g_array_set_size (sc->spans, 0);
    sim_vec_truncate (&sc->act_span);
    sim_vec_truncate (&sc->is_compute);
    sim_vec_truncate (&sc->edges);
  }
  b->sc = sc;
  b->e = sc->e, b->net = sc->net;
  b->spans = sc->spans, b->act_span = &sc->act_span, b->is_compute = &sc->is_compute;
  b->edges = &sc->edges, b->choices = sc->choices, b->nodes_seen = sc->nodes_seen;
  b->gpu = sim_topology_gpu_type (topo, 0);
  b->replicas = replicas;
  b->lc_of = g_new (int, p * v);
  b->first_of = g_new (int, p * v);
  b->rec_dense_of = g_new (int, p * v);
  b->rec_moe_of = g_new (int, p * v);
  /* the model's chunks in order (sim_plan_chunk_first_layer); DualPipe's
   * two copies each hold every layer, chunk 0 of rank s block s */
  for (int k = 0, first = 0; k < p * v; k++) {
    int s, c, layers;
    gboolean dual = plan->schedule == SIM_SCHEDULE_DUALPIPE;
    if (dual)
      s = k / 2, c = k % 2;
    else
      sim_plan_chunk_at (plan, k, &s, &c);
    layers = (int) sim_plan_chunk_layers (plan, model, s, c);
    b->first_of[s * v + c] = dual ? (int) sim_plan_chunk_first_layer (plan, model, s, c) : first;
    b->lc_of[s * v + c] = layers + (int) sim_plan_chunk_mtp_layers (plan, s, c);
    first += layers;
    sim_plan_chunk_recomputed (plan, model, s, c, &b->rec_dense_of[s * v + c],
                               &b->rec_moe_of[s * v + c]);
  }
  b->layer_params = (double) sim_model_layer_params_sharded (model) / plan->tp +
                    (double) sim_model_layer_params_replicated (model);
  b->grad_params = plan->lora_rank > 0 ? sim_iter_lora_rank_params (model, plan) : b->layer_params;
  if (cost != NULL)
    b->cost = *cost;
  else
    sim_cost_layer (model, plan, b->gpu, &b->cost);
  moe_init (b);

  /* a forward and a backward per micro-batch and chunk */
  b->passes_per_stage = (int) sim_schedule_passes (plan->schedule, (int) plan->micro_batches, v);
  b->ag_join = g_new (SimActivityId, (gsize) p * b->passes_per_stage);
  b->rs_start = g_new (SimActivityId, (gsize) p * b->passes_per_stage);
  b->rs_last = g_new (SimActivityId, p);
  for (int s = 0; s < p; s++)
    b->rs_last[s] = G_MAXUINT32;
  b->stream = g_new (int, p *replicas);
  b->passes = g_new0 (Pass, (gsize) replicas * p * b->passes_per_stage);
  b->stage_end = g_new (SimActivityId, p * replicas);
  b->mirror = g_new (SimActivityId, p * replicas);
  for (int i = 0; i < p * replicas; i++)
    b->mirror[i] = G_MAXUINT32;
  b->tp_pred1 = g_new (double, p);
  for (int s = 0; s < p; s++)
    b->tp_pred1[s] = -1;
  b->amax_gpus = g_new0 (int *, p);
  b->amax_n = g_new0 (int, p);
  b->amax_bytes = g_new0 (double, 2 * p);
  b->amax_s = g_new0 (double, 2 * p);
  b->tp_amax_s = g_new (double, p);
  for (int s = 0; s < p; s++)
    b->tp_amax_s[s] = -1;
  /* per stage: up and down the ranks, forward and backward */
  b->n_sends = replicas * p * 4;
  b->dp_mirror = (alone & MIRROR_DP) && dp_mirrored (b, full);
  b->tp_gpus = g_new (int, (gsize) replicas * p * plan->cp * plan->tp);
  for (int r = 0, k = 0; r < replicas; r++)
    for (int s = 0; s < p; s++)
      for (int c = 0; c < plan->cp; c++)
        for (int t = 0; t < plan->tp; t++)
          b->tp_gpus[k++] = gpu_of (b, t, c, r, s);
  b->sends = g_new0 (SendGroup, b->n_sends);
  /* One replica simulated stands for the slowest: a slow GPU of any
   * replica slows that one's stage, and the others wait for it at the
   * gradient reduction.  With every replica simulated, each its own. */
  b->stage_scale = g_new (double, (gsize) replicas * p);
  spread = 1.0 + sim_variability_slowdown (plan->gpu_variation, sim_plan_world_size (plan));
  for (int r = 0; r < replicas; r++)
    for (int s = 0; s < p; s++) {
      double f = spread;
      for (int d = full ? r : 0; plan->n_slow > 0 && d < (full ? r + 1 : plan->dp); d++)
        f = MAX (f, sim_plan_slow_factor (plan, topo->gpus_per_node, s, d));
      b->stage_scale[r * p + s] = f;
    }
  b->grads = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  /* not where other collectives run beside every pass (context
   * parallelism's blocks on the TP groups' NVLink, ZeRO-2/3's per-pass
   * gathers and reductions) */
  b->alone = 0;
  apart = plan->cp > 1 && (alone & (ALONE_CP | ALONE_TP)) && cp_apart (b);
  /* the context-parallel blocks: without a pipeline, whose sends would
   * share their NICs, and where they leave the TP groups' links alone
   * (the gradient buckets, which meet them only as the last backward
   * runs, alone_exact sees) */
  if ((alone & ALONE_CP) && plan->cp > 1 && p == 1 && (plan->tp == 1 || apart) &&
      (plan->zero < 2 || (plan->dp == 1 && !experts_sharded (b))))
    b->alone |= ALONE_CP;
  if ((alone & ALONE_TP) && plan->tp > 1 && (plan->cp == 1 || apart) &&
      (plan->zero < 2 || (plan->dp == 1 && !experts_sharded (b))))
    b->alone |= ALONE_TP;
  /* the sends: not with every replica of many simulated, whose sends share
   * the spine (more than ALONE_SHARED groups on a link: sim_iter_alone_drop) */
  if ((alone & ALONE_PP) && p > 1 && b->cost.pp_bytes > 0 &&
      (plan->zero < 2 || (plan->dp == 1 && !experts_sharded (b))) && 2 * replicas <= ALONE_SHARED)
    b->alone |= ALONE_PP;
  /* and the gradient buckets only without a pipeline: the sends of the
   * tail cross the buckets' rails (or NVLink, with the TP collectives
   * of the tail) as the buckets leave, so they meet (sim_iter_alone_drop) */
  if ((alone & ALONE_DP) && plan->zero < 2 && p == 1 && (plan->dp * plan->cp > 1 || plan->edp > 1))
    b->alone |= ALONE_DP;
  if (b->alone) {
    guint groups;
    b->tp_groups = replicas * p * plan->cp;
    b->dp_groups = b->tp_groups + replicas * p * 4;
    b->cp_groups = b->dp_groups + p * plan->tp + p * plan->etp * plan->ep;
    groups = (guint) (b->cp_groups + replicas * p * plan->tp);
    b->alone_delays = g_ptr_array_new_full (groups, (GDestroyNotify) g_array_unref);
    if (sc->alone_links->len < groups)
      g_ptr_array_set_size (sc->alone_links, (gint) groups);
    for (guint i = 0; i < groups; i++)
      g_ptr_array_add (b->alone_delays, g_array_new (FALSE, FALSE, sizeof (AloneDelay)));
    b->alone_seq = g_new0 (guint32, groups);
    b->alone_memo = g_new0 (AloneMemo, groups);
  }
}

/* frees what b owns; safe on a zeroed builder and twice */
void
sim_iter_builder_clear (SimIterBuilder *b)
{
  g_clear_pointer (&b->grads, g_ptr_array_unref);
  g_clear_pointer (&b->alone_delays, g_ptr_array_unref);
  g_clear_pointer (&b->alone_seq, g_free);
  g_clear_pointer (&b->alone_memo, g_free);
  g_clear_pointer (&b->tp_pred1, g_free);
  for (int i = 0; b->amax_gpus != NULL && i < b->plan->pp; i++)
    g_free (b->amax_gpus[i]);
  g_clear_pointer (&b->amax_gpus, g_free);
  g_clear_pointer (&b->amax_n, g_free);
  g_clear_pointer (&b->amax_bytes, g_free);
  g_clear_pointer (&b->amax_s, g_free);
  g_clear_pointer (&b->tp_amax_s, g_free);
  g_clear_pointer (&b->tp_gpus, g_free);
  g_clear_pointer (&b->stage_scale, g_free);
  for (int i = 0; b->sends != NULL && i < b->n_sends; i++)
    g_free (b->sends[i].g);
  g_clear_pointer (&b->sends, g_free);
  g_clear_pointer (&b->stage_end, g_free);
  g_clear_pointer (&b->mirror, g_free);
  g_clear_pointer (&b->passes, g_free);
  g_clear_pointer (&b->stream, g_free);
  g_clear_pointer (&b->rs_last, g_free);
  g_clear_pointer (&b->rs_start, g_free);
  g_clear_pointer (&b->ag_join, g_free);
  g_clear_error (&b->error);
  g_clear_pointer (&b->lc_of, g_free);
  g_clear_pointer (&b->rec_dense_of, g_free);
  g_clear_pointer (&b->rec_moe_of, g_free);
  g_clear_pointer (&b->moe_of, g_free);
  g_clear_pointer (&b->first_of, g_free);
  g_clear_pointer (&b->ep_layer_s, g_free);
  /* the scratch's are its owner's */
  b->sc = NULL, b->e = NULL, b->net = NULL, b->spans = NULL;
  b->act_span = b->edges = NULL, b->is_compute = NULL, b->choices = b->nodes_seen = NULL;
}

void
sim_iter_scratch_clear (Scratch *sc)
{
  g_clear_pointer (&sc->alone_links, g_ptr_array_unref);
  g_clear_pointer (&sc->alone_s, g_hash_table_unref);
  g_clear_pointer (&sc->choices, g_hash_table_unref);
  g_clear_pointer (&sc->nodes_seen, g_hash_table_unref);
  sim_vec_clear (&sc->edges);
  sim_vec_clear (&sc->is_compute);
  sim_vec_clear (&sc->act_span);
  g_clear_pointer (&sc->spans, g_array_unref);
  /* the network holds the engine: it goes first */
  g_clear_pointer (&sc->net, sim_network_free);
  g_clear_pointer (&sc->e, sim_engine_free);
}



/* ---- activities, and the spans and edges recorded beside them ---- */

static guint32
new_span (SimIterBuilder *b, SimSpanKind kind, int stage, int replica, int mb, int chunk)
{
  Span s = { kind, stage, replica, mb, chunk, -1, -1, FALSE };
  g_array_append_val (b->spans, s);
  return b->spans->len - 1;
}

static void
mark_from (SimIterBuilder *b, guint32 first, guint32 span)
{
  guint32 n = sim_engine_n_activities (b->e);
  guint8 no = 0;
  for (guint32 a = first; a < n; a++) {
    sim_vec_push (b->act_span, span);
    sim_vec_push (b->is_compute, no);
  }
}

static void
dep (SimIterBuilder *b, SimActivityId after, SimActivityId before)
{
  sim_engine_add_dep (b->e, after, before);
  sim_vec_push (b->edges, after);
  sim_vec_push (b->edges, before);
}

static SimActivityId
compute (SimIterBuilder *b, int stream, double seconds, guint32 span)
{
  guint32 first = sim_engine_n_activities (b->e);
  SimActivityId a = sim_engine_add_compute (b->e, stream, sim_time_from_s (seconds), span);
  mark_from (b, first, span);
  b->is_compute->data[a] = 1;
  return a;
}

static SimActivityId
gate (SimIterBuilder *b, guint32 span)
{
  guint32 first = sim_engine_n_activities (b->e);
  SimActivityId a = sim_engine_add_delay (b->e, 0, span);
  mark_from (b, first, span);
  return a;
}

/* ---- groups and collectives ---- */

static int
gpu_of (const SimIterBuilder *b, int tp, int cp, int dp, int pp)
{
  int c[SIM_DIM_COUNT];
  c[SIM_DIM_TP] = tp, c[SIM_DIM_CP] = cp, c[SIM_DIM_DP] = dp, c[SIM_DIM_PP] = pp;
  return sim_plan_rank_of (b->plan, c);
}

/* the dp x cp ranks of TP rank `tp` in `stage`, which hold the same
 * parameters, dp-major, into g (room for dp x cp); returns how many */
static int
dp_group (const SimIterBuilder *b, int tp, int stage, int *g)
{
  const SimPlan *p = b->plan;
  int n = 0;
  for (int d = 0; d < p->dp; d++)
    for (int c = 0; c < p->cp; c++)
      g[n++] = gpu_of (b, tp, c, d, stage);
  return n;
}

/* bytes per gradient element on the wire: fp32 when the plan keeps the
 * gradients or their accumulation wider than bf16 (its recipe, or
 * --grad-reduce-in-fp32), or under torchtitan,
 * whose FSDP2 mixed-precision policy reduces in fp32
 * (training.mixed_precision_reduce, default and only choice "float32",
 * torchtitan/config_manager.py @9dec370) */
static int
grad_wire_bytes (const SimPlan *p)
{
  int pb, gb, mb, ob, ab;
  sim_plan_state_bytes (p, &pb, &gb, &mb, &ob, &ab);
  return gb + ab > 2 || p->framework == SIM_FRAMEWORK_TORCHTITAN ? 4 : 2;
}

static const SimCollChoice *
choose (SimIterBuilder *b, SimCollOp op, const int *gpus, int n, double bytes)
{
  const SimTopology *t = b->topo;
  ChoiceKey key = { op, n, 0, n > 1 ? gpus[1] - gpus[0] : 0, bytes };
  SimCollChoice *c = NULL;
  if (n <= 32) {
    /* a small group's distinct nodes by scanning (cheaper than hashing) */
    int seen[32];
    for (int i = 0; i < n; i++) {
      int node = sim_topology_gpu (t, gpus[i])->node, j = 0;
      while (j < key.nodes && seen[j] != node)
        j++;
      if (j == key.nodes)
        seen[key.nodes++] = node;
    }
  } else {
    g_hash_table_remove_all (b->nodes_seen);
    for (int i = 0; i < n; i++)
      if (g_hash_table_add (b->nodes_seen, GINT_TO_POINTER (sim_topology_gpu (t, gpus[i])->node + 1)))
        key.nodes++;
  }
  /* groups of one shape behave alike on a regular cluster */
  b->fresh_choice = NULL;
  c = g_hash_table_lookup (b->choices, &key);
  if (c != NULL)
    return c;
  c = g_new0 (SimCollChoice, 1);
  if (!sim_collective_choose (b->net, op, gpus, n, bytes, SIM_ALGO_AUTO, SIM_PROTO_AUTO, c,
                              b->error != NULL ? NULL : &b->error)) {
    c->algo = SIM_ALGO_RING;
    c->proto = SIM_PROTO_SIMPLE;
    c->alone_t = SIM_TIME_MAX;
  }
  g_hash_table_insert (b->choices, g_memdup2 (&key, sizeof key), c);
  /* made for these very gpus: its alone_t is theirs (alone_delay) */
  b->fresh_choice = c;
  return c;
}

/* `count` back-to-back collectives of `bytes` merged into one: the bytes
 * and the latency add up */
static void
coll (SimIterBuilder *b, SimCollOp op, const int *gpus, int n, double bytes, int count,
      guint32 span, SimActivityId *start, SimActivityId *join)
{
  guint32 first = sim_engine_n_activities (b->e);
  SimCollChoice c = *choose (b, op, gpus, n, bytes);
  c.latency_s *= count;
  *join = sim_collective_add (b->net, op, gpus, n, bytes * count, &c, span, start);
  mark_from (b, first, span);
}


/* the AloneKind of a group's span kind */
static AloneKind
alone_kind (SimSpanKind kind)
{
  return kind == SIM_SPAN_TP   ? ALONE_KIND_TP
         : kind == SIM_SPAN_PP ? ALONE_KIND_PP
         : kind == SIM_SPAN_CP ? ALONE_KIND_CP
                               : ALONE_KIND_DP;
}

/* the collective (as sim_collective_add adds it with choose()'s choice,
 * `count` merged into one as coll() merges them) of group gi as one delay
 * of its time alone on the network, after `after` (G_MAXUINT32: none),
 * recorded for alone_exact; the group's links are those of all its
 * collectives.  The choice and the time are worked out once per group,
 * operation, count and bytes.  G_MAXUINT32, adding nothing, where this one
 * of the group is to run as flows (b->alone_off) */
static SimActivityId
alone_delay (SimIterBuilder *b, int gi, SimCollOp op, const int *gpus, int n, double bytes,
             int count, guint32 span, SimActivityId after)
{
  AloneKey key = { gi, op, count, bytes };
  gint64 off = (gint64) gi << 32 | b->alone_seq[gi]++;
  AloneMemo *mm = &b->alone_memo[gi];
  const AloneTime *x;
  guint32 first = sim_engine_n_activities (b->e);
  AloneDelay d;
  if (b->alone_off != NULL && g_hash_table_contains (b->alone_off, &off))
    return G_MAXUINT32;
  if (mm->x != NULL && mm->op == op && mm->count == count && mm->bytes == bytes)
    x = mm->x;
  else
    x = g_hash_table_lookup (b->sc->alone_s, &key);
  if (x == NULL) {
    /* a collective of the group not seen before: its time, and its links
     * added to the group's */
    /* choose() as coll() and pp_send() call it (a send's on its first
     * pair: the pairs are alike) */
    const SimCollChoice *chosen = choose (b, op, gpus, op == SIM_OP_SENDRECV ? 2 : n, bytes);
    SimCollChoice c = *chosen;
    GArray *links = g_ptr_array_index (b->sc->alone_links, gi);
    if (links == NULL)
      links = g_ptr_array_index (b->sc->alone_links, gi) = g_array_new (FALSE, FALSE, sizeof (int));
    AloneTime *t = g_new (AloneTime, 1);
    c.latency_s *= count;
    /* one collective whose choice was just simulated on these gpus: that
     * simulation's time is this one's (the same collective on the same
     * idle network), so it is only built, for its links */
    if (count == 1 && op != SIM_OP_SENDRECV && chosen == b->fresh_choice && c.alone_t != SIM_TIME_MAX)
      t->t = sim_collective_alone_chosen (b->net, op, gpus, n, bytes, &c, links, &t->acts);
    else
      t->t = sim_collective_alone_counted (b->net, op, gpus, n, bytes * count, &c, links, &t->acts);
    g_hash_table_insert (b->sc->alone_s, g_memdup2 (&key, sizeof key), t);
    x = t;
  }
  mm->op = op, mm->count = count, mm->bytes = bytes, mm->x = x;
  d.act = sim_engine_add_delay (b->e, x->t, span);
  b->alone_saved += x->acts > 0 ? x->acts - 1 : 0;
  {
    AloneKind k = alone_kind (sim_iter_group_kind (b, gi));
    guint64 *by = g_array_index (b->spans, Span, span).mb >= 0 ? &b->alone_saved_by[k].per_mb
                                                                : &b->alone_saved_by[k].once;
    *by += x->acts > 0 ? x->acts - 1 : 0;
  }
  d.seq = (guint32) (off & 0xffffffff);
  mark_from (b, first, span);
  if (after != G_MAXUINT32)
    dep (b, d.act, after);
  g_array_append_val ((GArray *) g_ptr_array_index (b->alone_delays, gi), d);
  return d.act;
}

/* the TP collectives of one pass on every TP group of the stage, after
 * `after`; returns the activity that ends them all.  With ALONE_TP and
 * outside the tail each group's is one delay of its time alone
 * (alone_exact says whether that was exact) */
static SimActivityId
tp_colls (SimIterBuilder *b, int replica, int stage, int count, SimActivityId after, int mb,
          int chunk)
{
  const SimPlan *p = b->plan;
  guint32 span;
  SimActivityId end;
  if (p->tp < 2 || count == 0)
    return after;
  span = new_span (b, SIM_SPAN_TP, stage, replica, mb, chunk);
  /* one group needs no gate of its own: its collective's end is the end */
  end = p->cp > 1 ? gate (b, span) : G_MAXUINT32;
  for (int c = 0; c < p->cp; c++) {
    SimActivityId s, j;
    const int *g = &b->tp_gpus[((gsize) (replica * p->pp + stage) * p->cp + c) * p->tp];
    /* with sequence parallelism, half are all_gathers, half reduce_scatters:
     * the same ring traffic, (t-1)/t S each */
    SimCollOp op = p->sequence_parallel ? SIM_OP_ALL_GATHER : SIM_OP_ALL_REDUCE;
    if ((b->alone & ALONE_TP) && !b->tail &&
        (j = alone_delay (b, (replica * p->pp + stage) * p->cp + c, op, g, p->tp, b->cost.tp_bytes,
                          count, span, after)) !=
            G_MAXUINT32) {
      s = j;
    } else {
      coll (b, op, g, p->tp, b->cost.tp_bytes, count, span, &s, &j);
      dep (b, s, after);
    }
    if (end == G_MAXUINT32)
      return j;
    dep (b, end, j);
  }
  return end;
}

/* context parallel: K and V blocks travel around each CP ring beside the
 * attention; the pass cannot end before they have */
static void
cp_flows (SimIterBuilder *b, int replica, int stage, double bytes, SimActivityId after,
          SimActivityId end, int mb, int chunk)
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
    /* (cp - 1) steps of one block each: the ring of an all_gather; with
     * ALONE_CP outside the tail one delay of its time alone */
    if ((b->alone & ALONE_CP) && !b->tail &&
        (j = alone_delay (b, b->cp_groups + (replica * p->pp + stage) * p->tp + t, SIM_OP_ALL_GATHER, g,
                          p->cp, bytes * p->cp / (p->cp - 1.0), 1, span, after)) != G_MAXUINT32) {
      dep (b, end, j);
      continue;
    }
    coll (b, SIM_OP_ALL_GATHER, g, p->cp, bytes * p->cp / (p->cp - 1.0), 1, span, &s, &j);
    dep (b, s, after);
    dep (b, end, j);
  }
}

static int edp_group (const SimIterBuilder *b, int r, int stage, int *g);
static int expert_groups (const SimIterBuilder *b);

/* ZeRO's collective of one pass: `bytes` over the dp x cp ranks holding
 * the same parameters (one group per TP rank, when dp x cp > 1) and
 * `expert_bytes` over the routed experts' expert data-parallel groups (those
 * the simulated replicas' ranks meet, when edp > 1), all from one start
 * gate after `after` (into start_out) to one end gate, which it returns */
/* the TP ranks whose data-parallel collectives are built: rank 0 alone
 * where it stands for every rank (dp_mirrored), else all */
static int
dp_traffic_ranks (const SimIterBuilder *b)
{
  return b->dp_mirror ? 1 : b->plan->tp;
}

static SimActivityId
dp_coll (SimIterBuilder *b, SimCollOp op, int stage, double bytes, double expert_bytes,
         SimActivityId after, SimActivityId *start_out, int mb, int chunk)
{
  const SimPlan *p = b->plan;
  guint32 span = new_span (b, SIM_SPAN_DP, stage, 0, mb, chunk);
  SimActivityId start = gate (b, span), end = gate (b, span);
  g_autofree int *g = g_new (int, MAX (p->dp * p->cp, p->edp));
  if (after != G_MAXUINT32)
    dep (b, start, after);
  for (int t = 0; t < dp_traffic_ranks (b) && p->dp * p->cp > 1 && bytes > 0; t++) {
    SimActivityId st, j;
    int n = dp_group (b, t, stage, g);
    coll (b, op, g, n, bytes, 1, span, &st, &j);
    dep (b, st, start);
    dep (b, end, j);
  }
  for (int r = 0; expert_bytes > 0 && p->edp > 1 && r < expert_groups (b); r++) {
    SimActivityId st, j;
    int n = edp_group (b, r, stage, g);
    coll (b, op, g, n, expert_bytes, 1, span, &st, &j);
    dep (b, st, start);
    dep (b, end, j);
  }
  if (start_out != NULL)
    *start_out = start;
  return end;
}

/* how long the TP collectives of one pass take alone on the network, and
 * the ZeRO collective of `bytes` over the data-parallel group: what the
 * compute beside them is slowed for */
static double
tp_pred_s (SimIterBuilder *b, int stage, int count)
{
  const SimPlan *p = b->plan;
  if (p->tp < 2 || count == 0)
    return 0;
  if (b->tp_pred1[stage] < 0)
    b->tp_pred1[stage] = choose (b, p->sequence_parallel ? SIM_OP_ALL_GATHER : SIM_OP_ALL_REDUCE,
                                 &b->tp_gpus[(gsize) stage * p->cp * p->tp], p->tp,
                                 b->cost.tp_bytes)->predicted_s;
  return count * b->tp_pred1[stage];
}

static double
dp_pred_s (SimIterBuilder *b, SimCollOp op, int stage, double bytes)
{
  const SimPlan *p = b->plan;
  g_autofree int *g = g_new (int, p->dp * p->cp);
  int n = dp_group (b, 0, stage, g);
  return choose (b, op, g, n, bytes)->predicted_s;
}

/* the same over the expert data-parallel group of stage rank 0 (0 when
 * there is none to reduce over) */
static double
edp_pred_s (SimIterBuilder *b, SimCollOp op, int stage, double bytes)
{
  const SimPlan *p = b->plan;
  g_autofree int *g = NULL;
  int n;
  if (p->edp < 2 || bytes <= 0)
    return 0;
  g = g_new (int, p->edp);
  n = edp_group (b, 0, stage, g);
  return choose (b, op, g, n, bytes)->predicted_s;
}

/* compute of `seconds` with `comm_s` of communication kernels beside it:
 * while both run, the compute loses comm-slowdown of its speed to the
 * SMs and memory bandwidth the NCCL kernels take */
static double
slowed (const SimIterBuilder *b, double seconds, double comm_s)
{
  return seconds + b->gpu->eff.comm_slowdown * MIN (seconds, comm_s);
}

/* the GPU of rank r of stage s's tp x cp x dp GPUs, counted tp fastest,
 * then cp, then dp: the order Megatron-Core's MoE parallel folding
 * counts the expert ranks in (etp fastest, then ep, then edp) */
static int
stage_rank_gpu (const SimIterBuilder *b, int r, int stage)
{
  const SimPlan *p = b->plan;
  return gpu_of (b, r % p->tp, (r / p->tp) % p->cp, r / (p->tp * p->cp), stage);
}

/* the expert data-parallel group of stage rank r (the ranks holding the
 * same experts), into g (room for edp); returns how many */
static int
edp_group (const SimIterBuilder *b, int r, int stage, int *g)
{
  const SimPlan *p = b->plan;
  int inner = r % (p->etp * p->ep);
  for (int j = 0; j < p->edp; j++)
    g[j] = stage_rank_gpu (b, inner + j * p->etp * p->ep, stage);
  return p->edp;
}

/* how many expert data-parallel groups the simulated replicas' ranks of a
 * stage meet: the group of stage rank r is r mod (etp x ep), so ranks 0,
 * 1, ... up to that many stand for one group each */
static int
expert_groups (const SimIterBuilder *b)
{
  const SimPlan *p = b->plan;
  return MIN (p->tp * p->cp * b->replicas, p->etp * p->ep);
}

/* DeepEP's dispatch and combine of one MoE layer on stage s's expert-
 * parallel group g of n GPUs (sim-plan.h, SIM_DISPATCHER_DEEPEP): per
 * deepseek-ai/DeepEP's normal kernels and the DeepSeek-V3 report (section
 * 3.2.2), each token goes over the network once to every other node that
 * holds one of its experts, to the GPU of the same index there, which
 * forwards it over NVLink to the GPUs of its experts; the two hops run at
 * once, so each of dispatch and combine takes the longer of the two
 * all-to-alls: among the same-index GPUs of the group's nodes, of the
 * tokens times the nodes they reach (all of a token's experts within
 * topk_groups groups under group-limited routing, the groups spread
 * evenly over the nodes, DeepSeek-V3's node-limited routing; else its k
 * experts at random), and among a node's GPUs, of every expert's copy.
 * Under FP8 training the dispatch sends FP8 with a 4-byte scale per 128
 * values (the report's section 3.3.4, DeepEP's FP8 dispatch) and the
 * combine BF16; a backward sends BF16 both ways, and the layer's time is
 * the mean of its forward's and its backward's.  On one node, the NVLink
 * hop alone. */
static double
deepep_layer_s (SimIterBuilder *b, const int *g, int n)
{
  const SimModel *m = b->model;
  const SimPlan *p = b->plan;
  const SimTopology *t = b->topo;
  /* the values of the GPU's tokens (the busiest GPU's: a2a_bytes is
   * their k copies in BF16, times the load) */
  double k = (double) m->moe.top_k, unit = b->cost.a2a_bytes / (2 * k);
  double fp8 = p->fp8 != SIM_FP8_OFF ? 1 + 4.0 / 128 : 2;
  g_autofree int *rail = g_new (int, n), *local = g_new (int, n);
  int nodes = 0, here = 0;
  double reach, fwd, bwd;
  for (int i = 0; i < n; i++) {
    int node = sim_topology_gpu (t, g[i])->node, j = 0;
    while (j < nodes && sim_topology_gpu (t, rail[j])->node != node)
      j++;
    if (j == nodes)
      rail[nodes++] = g[i];
    if (node == sim_topology_gpu (t, g[0])->node)
      local[here++] = g[i];
  }
  if (m->moe.groups > 0 && m->moe.topk_groups > 0 && m->moe.groups % (guint64) nodes == 0)
    reach = sim_cost_nodes_reached ((double) m->moe.groups, (double) m->moe.topk_groups, nodes);
  else
    reach = sim_cost_nodes_reached ((double) m->moe.experts, k, nodes);
#define HOP(e)                                                                                   \
  MAX (nodes > 1 ? choose (b, SIM_OP_ALLTOALL, rail, nodes, unit * (e) * reach)->predicted_s : 0, \
       here > 1 ? choose (b, SIM_OP_ALLTOALL, local, here, unit * (e) * k)->predicted_s : 0)
  fwd = HOP (fp8) + HOP (2.0);
  bwd = 2 * HOP (2.0);
#undef HOP
  return (fwd + bwd) / 2;
}

/* Where the MoE layers sit (each chunk's layers, sim_plan_chunk_layers
 * and sim_plan_chunk_first_layer).  And per stage the token all-to-alls of one MoE
 * layer's forward: dispatch and combine over the expert-parallel group
 * (ranks etp apart) and, with etp > 1, the all-gather of the routed
 * tokens and the reduce-scatter of the experts' output over the expert
 * tensor-parallel group, each for its time alone on the network.  The
 * backward sends the same (the gradients of both all-to-alls and the
 * transposed gather). */
static void
moe_init (SimIterBuilder *b)
{
  const SimPlan *p = b->plan;
  const SimModel *m = b->model;
  int pp = p->pp, v = p->virtual_stages;
  b->moe_of = g_new0 (int, pp * v);
  b->ep_layer_s = g_new0 (double, pp);
  if (!sim_model_is_moe (m))
    return;
  for (int c = 0; c < v; c++)
    for (int s = 0; s < pp; s++) {
      int layer = b->first_of[s * v + c];
      for (int l = 0; l < b->lc_of[s * v + c]; l++)
        b->moe_of[s * v + c] += sim_model_layer_is_moe (m, (guint64) (layer + l)) ? 1 : 0;
    }
  b->moe_layer_params = (double) sim_model_moe_layer_dense_sharded (m) / p->tp +
                        (double) sim_model_moe_layer_dense_replicated (m);
  b->expert_layer_params = (double) m->moe.experts / p->ep *
                           ((double) sim_model_expert_params_sharded (m) / p->etp +
                            (double) sim_model_expert_params_replicated (m));
  for (int s = 0; s < pp; s++) {
    int n = MAX (p->ep, p->etp);
    g_autofree int *g = g_new (int, n);
    double t = 0;
    if (p->ep > 1) {
      for (int e = 0; e < p->ep; e++)
        g[e] = stage_rank_gpu (b, e * p->etp, s);
      t += p->moe_dispatcher == SIM_DISPATCHER_DEEPEP
               ? deepep_layer_s (b, g, p->ep)
               : 2 * choose (b, SIM_OP_ALLTOALL, g, p->ep, b->cost.a2a_bytes)->predicted_s;
    }
    if (p->etp > 1) {
      for (int e = 0; e < p->etp; e++)
        g[e] = stage_rank_gpu (b, e, s);
      t += choose (b, SIM_OP_ALL_GATHER, g, p->etp, b->cost.etp_bytes)->predicted_s +
           choose (b, SIM_OP_REDUCE_SCATTER, g, p->etp, b->cost.etp_bytes)->predicted_s;
    }
    b->ep_layer_s[s] = t;
  }
}

/* ---- phase 1: the passes ---- */

/* one pass being built: where it runs and what runs beside it */
typedef struct {
  const SimPipeOp *op;
  int replica, stage, stream;
  int index; /* in the stage's program order */
  int mb, chunk;
  int lc;               /* layers in the chunk */
  int nm;               /* of which mixture-of-experts layers */
  int rd, rm;           /* the dense and MoE layers recomputed in full (--recompute full) */
  int first_layer;      /* the chunk's first layer in the model */
  /* --overlap-moe-expert-parallel-comm and a pass of the other direction
   * next to this one in program order (the steady state of 1F1B, where
   * Megatron-Core's combined 1F1B pairs a forward with a backward): the
   * all-to-alls run beside the compute instead of after it */
  gboolean ep_beside;
  gboolean first_chunk; /* holds the embedding */
  gboolean last_chunk;  /* holds the output head */
  guint32 gspan;        /* the pass's bookkeeping gates */
  double side_s;        /* ZeRO-3 collectives beside the compute, alone on the network */
  double cp_bytes;      /* K and V a forward sends around the CP ring */
} PassCtx;

/* the parameters of a pass's chunk that ZeRO shards over dp x cp: every
 * dense layer's and the dense part of each MoE layer (attention, router,
 * shared experts) */
static double
zero_dense_params (const SimIterBuilder *b, const PassCtx *pc)
{
  return (pc->lc - pc->nm) * b->layer_params + pc->nm * b->moe_layer_params;
}

/* whether op is the pass after which its micro-batch's gradients are
 * final: its weight-gradient pass where the schedule splits the backward,
 * else its backward */
static gboolean
grads_pass (const SimIterBuilder *b, const SimPipeOp *op)
{
  return op->kind == (sim_schedule_splits_backward (b->plan->schedule) ? SIM_PASS_WEIGHT
                                                                       : SIM_PASS_BACKWARD);
}

/* ... and of the step's last micro-batch: the pass that finalises them */
static gboolean
finalises (const SimIterBuilder *b, const SimPipeOp *op)
{
  return grads_pass (b, op) && op->micro_batch + 1 == b->plan->micro_batches;
}

static void
pass_ctx_init (PassCtx *pc, SimIterBuilder *b, int replica, int stage, int index,
               const SimPipeOp *op)
{
  const SimPlan *p = b->plan;
  pc->op = op;
  pc->replica = replica, pc->stage = stage, pc->index = index;
  pc->stream = b->stream[replica * p->pp + stage];
  pc->mb = (int) op->micro_batch, pc->chunk = op->chunk;
  pc->lc = b->lc_of[stage * p->virtual_stages + op->chunk];
  pc->nm = b->moe_of[stage * p->virtual_stages + op->chunk];
  pc->rd = b->rec_dense_of[stage * p->virtual_stages + op->chunk];
  pc->rm = b->rec_moe_of[stage * p->virtual_stages + op->chunk];
  pc->first_layer = b->first_of[stage * p->virtual_stages + op->chunk];
  pc->ep_beside = FALSE;
  pc->first_chunk = sim_plan_chunk_is_first (p, stage, op->chunk);
  pc->last_chunk = sim_plan_chunk_is_last (p, stage, op->chunk);
  pc->gspan = new_span (b, SIM_SPAN_GATE, stage, replica, pc->mb, pc->chunk);
  pc->cp_bytes = pc->lc * (p->cp - 1) * b->cost.cp_kv_bytes;
  /* ZeRO-3 collectives beside this pass's compute: the next pass's
   * parameter all-gather, and in a backward the gradient reduce-scatter */
  pc->side_s = 0;
  if (p->zero >= 3 && zero_sharded (b)) {
    /* the dense parameters (of the MoE layers too) over dp x cp, the
     * routed experts' over their expert data-parallel group */
    double dense = zero_dense_params (b, pc), experts = pc->nm * b->expert_layer_params;
    if (p->dp * p->cp > 1)
      pc->side_s = dp_pred_s (b, SIM_OP_ALL_GATHER, stage, dense * 2);
    pc->side_s += edp_pred_s (b, SIM_OP_ALL_GATHER, stage, experts * 2);
    if (grads_pass (b, op)) {
      /* under LoRA only the adapters have gradients */
      double grads = p->lora_rank > 0 ? pc->lc * b->grad_params : dense;
      if (p->dp * p->cp > 1)
        pc->side_s += dp_pred_s (b, SIM_OP_REDUCE_SCATTER, stage, grads * grad_wire_bytes (p));
      pc->side_s += edp_pred_s (b, SIM_OP_REDUCE_SCATTER, stage, experts * grad_wire_bytes (p));
    }
  } else if (p->dp * p->cp > 1 && p->overlap) {
    /* --overlap-grad-reduce: the chunk's gradients are reduced bucket by
     * bucket beside the backward that finalises them (its last micro-
     * batch); --overlap-param-gather: its parameters are gathered beside
     * the first forward (of the next step, which repeats this one); the
     * NCCL kernels slow that compute as any other collective's do */
    if (finalises (b, op))
      pc->side_s = dp_pred_s (b, p->zero >= 1 ? SIM_OP_REDUCE_SCATTER : SIM_OP_ALL_REDUCE, stage,
                              pc->lc * b->grad_params * grad_wire_bytes (p));
    else if (op->kind == SIM_PASS_FORWARD && op->micro_batch == 0 && p->zero >= 1 &&
             p->overlap_param_gather > 0)
      /* the parameters the optimizer changed (under LoRA the adapters) */
      pc->side_s = dp_pred_s (b, SIM_OP_ALL_GATHER, stage,
                              pc->lc * b->grad_params * (p->fp8_params > 0 ? 1 : 2));
  }
}

/* Whether the TP collectives of the compute of `span` run beside it:
 * --tp-comm-overlap, which with torchtitan is async TP, Inductor's
 * micro-pipelining of an all-gather into the matmul that reads it and of
 * a matmul into the reduce-scatter of its output.  The forward's (and a
 * recomputed forward's) collectives are each paired so; the backward's are
 * not: the data gradient's reduce-scatter is not a pattern the pass fuses
 * (pytorch/pytorch issue 149946) and the all-gathered output gradient
 * feeds two matmuls, so torchtitan's backward waits for its collectives
 * as without async TP.  Transformer Engine's userbuffers overlap both
 * directions. */
static gboolean
tp_beside (const SimIterBuilder *b, guint32 span)
{
  if (b->plan->tp_comm_overlap <= 0)
    return FALSE;
  return b->plan->framework != SIM_FRAMEWORK_TORCHTITAN ||
         g_array_index (b->spans, Span, span).kind != SIM_SPAN_BACKWARD;
}

/* compute of `seconds` on the pass's stream, slowed by `side_s` of other
 * collectives and, where they run beside it (tp_beside), by its
 * `tp_count` TP collectives */
static SimActivityId
pass_compute (SimIterBuilder *b, const PassCtx *pc, double seconds, double side_s, int tp_count,
              guint32 span)
{
  double comm_s = side_s + (tp_beside (b, span) ? tp_pred_s (b, pc->stage, tp_count) : 0);
  double scale = b->stage_scale[pc->replica * b->plan->pp + pc->stage];
  return compute (b, pc->stream, slowed (b, seconds * scale, comm_s), span);
}

/* pass_compute after `after`, then its TP collectives (beside it with
 * --tp-comm-overlap); returns the gate that joins both */
static SimActivityId
compute_with_tp (SimIterBuilder *b, const PassCtx *pc, double seconds, double side_s, int tp_count,
                 guint32 span, SimActivityId after)
{
  SimActivityId a = pass_compute (b, pc, seconds, side_s, tp_count, span);
  SimActivityId y, join;
  dep (b, a, after);
  y = tp_colls (b, pc->replica, pc->stage, tp_count, tp_beside (b, span) ? after : a,
                pc->mb, pc->chunk);
  join = gate (b, pc->gspan);
  dep (b, join, y);
  dep (b, join, a);
  return join;
}

/* an expert-parallel span of `seconds` of the pass, after a and y */
static SimActivityId
ep_delay (SimIterBuilder *b, const PassCtx *pc, double seconds, SimActivityId a, SimActivityId y)
{
  guint32 span = new_span (b, SIM_SPAN_EP, pc->stage, pc->replica, pc->mb, pc->chunk);
  guint32 first = sim_engine_n_activities (b->e);
  SimActivityId x = sim_engine_add_delay (b->e, sim_time_from_s (seconds), span);
  mark_from (b, first, span);
  dep (b, x, a);
  if (y != a)
    dep (b, x, y);
  return x;
}

/* the token all-to-alls of `layers` MoE layers of the pass, after both
 * `a` and `y` (its compute and its TP collectives), for their time alone
 * on the network: Megatron-Core's all-to-all dispatcher runs them between
 * the attention and the experts, on the critical path (no overlap with
 * compute); returns their end, or G_MAXUINT32 when there are none */
static SimActivityId
ep_comm (SimIterBuilder *b, const PassCtx *pc, int layers, SimActivityId a, SimActivityId y)
{
  if (layers == 0 || b->ep_layer_s[pc->stage] <= 0)
    return G_MAXUINT32;
  return ep_delay (b, pc, layers * b->ep_layer_s[pc->stage], a, y);
}

/* ep_comm after `after`, joined into one gate with it */
static SimActivityId
then_ep (SimIterBuilder *b, const PassCtx *pc, int layers, SimActivityId after)
{
  SimActivityId x = ep_comm (b, pc, layers, after, after);
  return x == G_MAXUINT32 ? after : x;
}

/* What one MoE layer's all-to-alls leave exposed under Megatron-Core's
 * combined 1F1B, which pairs a layer's forward with another micro-batch's
 * backward of a layer and runs (TransformerLayerSchedulePlan.run in
 * megatron/core/models/common/model_chunk_schedule_plan.py):
 *   communication: combine bwd | dispatch fwd, dispatch bwd | combine fwd
 *   compute:       attn fwd    | mlp bwd,      mlp fwd      | attn bwd
 * so each all-to-all hides behind one compute node of the other direction:
 * a forward's dispatch behind the backward's experts, its combine behind
 * the backward's attention; a backward's combine behind the forward's
 * attention, its dispatch behind the forward's experts.  Each phase takes
 * the longer of the two, so what a pass adds to its own compute is, per
 * layer, the all-to-all time beyond the compute it hides behind; the pair
 * of passes then takes the sum of the four phases' maxima.  One all-to-all
 * is half of ep_layer_s (a dispatch and a combine, with etp > 1 their
 * gather and reduce-scatter). */
static double
ep_exposed_s (const SimIterBuilder *b, const PassCtx *pc)
{
  const SimLayerCost *c = &b->cost;
  double one = b->ep_layer_s[pc->stage] / 2;
  gboolean bwd = pc->op->kind != SIM_PASS_FORWARD;
  /* the other direction's attention and experts */
  double attn = bwd ? c->moe_attn_fwd_s : c->moe_attn_bwd_s;
  double mlp = bwd ? c->moe_fwd_s - c->moe_attn_fwd_s : c->moe_bwd_s - c->moe_attn_bwd_s;
  return MAX (0.0, one - attn) + MAX (0.0, one - mlp);
}

/* what `layers` MoE layers' all-to-alls leave exposed beside the paired
 * pass (ep_exposed_s), after a and y; G_MAXUINT32 when nothing is */
static SimActivityId
ep_exposed (SimIterBuilder *b, const PassCtx *pc, int layers, SimActivityId a, SimActivityId y)
{
  double exposed = layers * ep_exposed_s (b, pc);
  if (layers == 0 || exposed <= 0)
    return G_MAXUINT32;
  return ep_delay (b, pc, exposed, a, y);
}

/* compute_with_tp after `after`, and the all-to-alls of `layers` MoE
 * layers: after it, or with pc->ep_beside beside it (their kernels
 * slowing it as any collective's do), what the compute of the pass
 * paired with it cannot hide following it (ep_exposed_s); returns what
 * joins them */
static SimActivityId
compute_with_ep (SimIterBuilder *b, const PassCtx *pc, double seconds, double side_s, int tp_count,
                 guint32 span, SimActivityId after, int layers)
{
  SimActivityId j, x;
  if (!pc->ep_beside || layers == 0 || b->ep_layer_s[pc->stage] <= 0)
    return then_ep (b, pc, layers, compute_with_tp (b, pc, seconds, side_s, tp_count, span, after));
  j = compute_with_tp (b, pc, seconds, side_s + layers * b->ep_layer_s[pc->stage], tp_count, span,
                       after);
  x = ep_exposed (b, pc, layers, j, j);
  return x == G_MAXUINT32 ? j : x;
}

/* ZeRO-3: the chunk's parameters are gathered before each pass, at most
 * one pass ahead of the compute */
static void
zero3_gather (SimIterBuilder *b, const PassCtx *pc, Pass *pass, SimActivityId *ag_prev,
              SimActivityId prev_gate)
{
  SimActivityId *slot = &b->ag_join[pc->stage * b->passes_per_stage + pc->index];
  if (pc->replica == 0) {
    SimActivityId st;
    *slot = dp_coll (b, SIM_OP_ALL_GATHER, pc->stage, zero_dense_params (b, pc) * 2,
                     pc->nm * b->expert_layer_params * 2, *ag_prev, &st, pc->mb, pc->chunk);
    if (prev_gate != G_MAXUINT32)
      dep (b, st, prev_gate);
    *ag_prev = *slot;
  }
  dep (b, pass->gate, *slot);
}

/* ZeRO-2/3: every backward reduce-scatters its chunk's gradients at once
 * (a partition cannot accumulate the whole gradient) */
static void
zero2_reduce_scatter (SimIterBuilder *b, const PassCtx *pc, Pass *pass)
{
  SimActivityId *slot = &b->rs_start[pc->stage * b->passes_per_stage + pc->index];
  if (pc->replica == 0) {
    int wire = grad_wire_bytes (b->plan);
    SimActivityId end = dp_coll (b, SIM_OP_REDUCE_SCATTER, pc->stage,
                                 zero_dense_params (b, pc) * wire,
                                 pc->nm * b->expert_layer_params * wire, b->rs_last[pc->stage],
                                 slot, pc->mb, pc->chunk);
    b->rs_last[pc->stage] = end;
  }
  dep (b, *slot, pass->end);
}

/* FP8 delayed scaling (Transformer Engine's DelayedScaling, reduce_amax on
 * by default): at the exit of the outermost fp8_autocast, once per model
 * chunk's forward, and in the backward of the chunk's first FP8 module (its
 * last to run), TE concatenates the amaxes of the chunk's FP8 tensors and
 * all-reduces them (MAX) over the autocast's fp8_group with async_op=False,
 * on the compute stream, before the next kernel (transformer_engine/
 * pytorch/fp8.py, FP8GlobalStateManager.reduce_and_update_fp8_tensors;
 * module/base.py, reduce_and_update_bwd_fp8_tensors).  Megatron-Core passes
 * its amax reduction group, TP x DP x CP of the stage, or TP x CP with
 * --tp-only-amax-red (megatron/core/parallel_state.py,
 * get_amax_reduction_group(with_context_parallel=True)).  The message: 4
 * bytes per FP8 tensor, 3 per GEMM forward (input, weight, output) and 2
 * backward (TE's fp8_meta, num_gemms x 3 and x 2); the GEMMs of a dense
 * layer are 4 (QKV, projection, FC1, FC2), of a MoE layer the attention's
 * 2 and 2 per local routed or shared expert.  A few hundred bytes: the
 * all-reduce's latency, taken as its time alone (choose()).  Not with
 * PyTorch FSDP (its FP8 is not Megatron's), nor under the other recipes,
 * whose scales need no reduction over data-parallel ranks. */
static gboolean
amax_reduced (const SimIterBuilder *b)
{
  const SimPlan *p = b->plan;
  return p->fp8 != SIM_FP8_OFF && p->fp8_recipe == SIM_FP8_DELAYED &&
         p->framework == SIM_FRAMEWORK_MEGATRON &&
         p->tp * p->cp * (p->tp_only_amax_red ? 1 : p->dp) > 1;
}

/* Per-tensor current scaling and NVFP4 under sequence parallelism:
 * Transformer Engine all-reduces (MAX) the amax of each column-parallel
 * linear's input and of each row-parallel linear's output gradient over
 * the TP group before the cast, since the cast tensor is then all-gathered
 * and every rank must scale it alike (set_quantizer_amax_reduction_group,
 * transformer_engine/pytorch/module/_common.py; its callers in linear.py
 * and layernorm_linear.py @d0067d0, since 77fa1e59; the all-reduce and
 * its wait on the compute stream in Float8CurrentScalingQuantizer::
 * quantize_impl, pytorch/csrc/quantizer.cpp).  Per layer: the QKV and FC1
 * inputs forward and the projection's and FC2's output gradients backward,
 * 2 each; an MoE layer's experts are no sequence-parallel linears (the
 * dispatcher moves their tokens), so 1 each; a full recomputation repeats
 * the forward's (a selective one, whose recomputed modules may quantize
 * again, is not counted).  One 4-byte all-reduce each: its latency
 * (choose()). */
static gboolean
tp_amax_reduced (const SimIterBuilder *b)
{
  const SimPlan *p = b->plan;
  gboolean current = p->fp8 != SIM_FP8_OFF && p->fp8_recipe == SIM_FP8_CURRENT;
  return (current || p->fp4 != SIM_FP4_OFF) && p->framework == SIM_FRAMEWORK_MEGATRON &&
         p->tp > 1 && p->sequence_parallel > 0;
}

/* the TP amax all-reduces of a pass (tp_amax_reduced), a delay after
 * `after` that `end` waits for */
static void
tp_amax_reduce (SimIterBuilder *b, const PassCtx *pc, SimActivityId after, SimActivityId end)
{
  const SimPlan *p = b->plan;
  gboolean bwd = pc->op->kind != SIM_PASS_FORWARD;
  int s = pc->stage;
  double n = 2.0 * (pc->lc - pc->nm) + pc->nm;
  guint32 first, span;
  SimActivityId x;
  if (bwd && p->recompute == SIM_RECOMPUTE_FULL)
    n += 2.0 * pc->rd + pc->rm;
  if (b->tp_amax_s[s] < 0)
    b->tp_amax_s[s] = choose (b, SIM_OP_ALL_REDUCE, &b->tp_gpus[(gsize) s * p->cp * p->tp], p->tp, 4.0)
                          ->predicted_s;
  span = new_span (b, SIM_SPAN_TP, s, pc->replica, pc->mb, pc->chunk);
  first = sim_engine_n_activities (b->e);
  x = sim_engine_add_delay (b->e, sim_time_from_s (n * b->tp_amax_s[s]), span);
  mark_from (b, first, span);
  dep (b, x, after);
  dep (b, end, x);
}

/* the amax all-reduce of a pass, a delay after `after` that `end` waits
 * for; nothing without FP8 delayed scaling (or current scaling's and
 * NVFP4's TP reductions, tp_amax_reduce) or for a chunk without layers */
static void
amax_reduce (SimIterBuilder *b, const PassCtx *pc, SimActivityId after, SimActivityId end)
{
  const SimPlan *p = b->plan;
  const SimMoe *moe = &b->model->moe;
  gboolean bwd = pc->op->kind != SIM_PASS_FORWARD;
  int s = pc->stage, k = 2 * s + (bwd ? 1 : 0);
  double gemms, bytes;
  guint32 first, span;
  SimActivityId x;
  if (pc->lc > 0 && tp_amax_reduced (b))
    tp_amax_reduce (b, pc, after, end);
  if (!amax_reduced (b) || pc->lc == 0)
    return;
  gemms = 4.0 * (pc->lc - pc->nm);
  if (pc->nm > 0)
    gemms += pc->nm * (2.0 + 2.0 * ((double) moe->experts / MAX (p->ep, 1) + (double) moe->shared_experts));
  bytes = 4.0 * (bwd ? 2 : 3) * gemms;
  if (b->amax_gpus[s] == NULL) {
    int dp = p->tp_only_amax_red ? 1 : p->dp, n = 0;
    /* the stage's ranks of replica 0's group: with --tp-only-amax-red the
     * TP x CP ranks of each replica reduce among themselves, alike */
    b->amax_gpus[s] = g_new (int, (gsize) p->tp * p->cp * dp);
    for (int d = 0; d < dp; d++)
      for (int c = 0; c < p->cp; c++)
        for (int t = 0; t < p->tp; t++)
          b->amax_gpus[s][n++] = gpu_of (b, t, c, d, s);
    b->amax_n[s] = n;
  }
  if (b->amax_bytes[k] != bytes) {
    b->amax_bytes[k] = bytes;
    b->amax_s[k] = choose (b, SIM_OP_ALL_REDUCE, b->amax_gpus[s], b->amax_n[s], bytes)->predicted_s;
  }
  span = new_span (b, SIM_SPAN_DP, s, pc->replica, pc->mb, pc->chunk);
  first = sim_engine_n_activities (b->e);
  x = sim_engine_add_delay (b->e, sim_time_from_s (b->amax_s[k]), span);
  mark_from (b, first, span);
  dep (b, x, after);
  dep (b, end, x);
}

/* the last chunk's work beyond its layers (sim_cost_tail_s); and the TP
 * collectives its multi-token-prediction modules add */
static double
tail_s (const SimIterBuilder *b, gboolean backward)
{
  return sim_cost_tail_s (&b->cost, b->plan, backward);
}

static int
tail_tp_colls (const SimIterBuilder *b, const PassCtx *pc)
{
  return pc->last_chunk ? MAX (b->plan->mtp_layers, 0) * b->cost.mtp_tp_colls : 0;
}

static void
build_forward (SimIterBuilder *b, const PassCtx *pc, Pass *pass)
{
  const SimLayerCost *c = &b->cost;
  int nd = pc->lc - pc->nm;
  int tp_count = nd * c->tp_colls_fwd + pc->nm * c->moe_tp_colls_fwd + tail_tp_colls (b, pc);
  double t = nd * c->layer_fwd_s + pc->nm * c->moe_fwd_s +
             (pc->first_chunk ? c->embed_fwd_s + c->offload_fwd_s : 0) +
             (pc->last_chunk ? tail_s (b, FALSE) : 0);
  double beside = pc->ep_beside ? pc->nm * b->ep_layer_s[pc->stage] : 0;
  SimActivityId a, y, x;
  pass->compute_span = new_span (b, SIM_SPAN_FORWARD, pc->stage, pc->replica, pc->mb, pc->chunk);
  a = pass_compute (b, pc, t, pc->side_s + beside, tp_count, pass->compute_span);
  dep (b, a, pass->gate);
  y = tp_colls (b, pc->replica, pc->stage, tp_count, tp_beside (b, pass->compute_span) ? pass->gate : a,
                pc->mb, pc->chunk);
  cp_flows (b, pc->replica, pc->stage, pc->cp_bytes, pass->gate, pass->end, pc->mb, pc->chunk);
  dep (b, pass->end, y);
  dep (b, pass->end, a);
  x = pc->ep_beside ? ep_exposed (b, pc, pc->nm, a, y) : ep_comm (b, pc, pc->nm, a, y);
  if (x != G_MAXUINT32)
    dep (b, pass->end, x);
  /* after the compute and what the pass waits for beside it */
  if ((amax_reduced (b) || tp_amax_reduced (b)) && pc->lc > 0) {
    SimActivityId j = gate (b, pc->gspan);
    dep (b, j, a);
    dep (b, j, y);
    if (x != G_MAXUINT32)
      dep (b, j, x);
    amax_reduce (b, pc, j, pass->end);
  }
}

/* the recomputation before a backward, after `after`; returns its end */
static SimActivityId
build_recompute (SimIterBuilder *b, const PassCtx *pc, Pass *pass, SimActivityId after)
{
  const SimLayerCost *c = &b->cost;
  gboolean full = b->plan->recompute == SIM_RECOMPUTE_FULL;
  /* full: the layers --recompute-method picks; selective: every layer's
   * recomputed modules */
  int nd = full ? pc->rd : pc->lc - pc->nm, nm = full ? pc->rm : pc->nm;
  double t = nd * c->layer_recompute_s + nm * c->moe_recompute_s;
  SimActivityId r;
  pass->has_recompute = TRUE;
  pass->recompute_span = new_span (b, SIM_SPAN_RECOMPUTE, pc->stage, pc->replica, pc->mb,
                                   pc->chunk);
  /* full recomputation runs the layers' whole forward again, TP
   * collectives included */
  if (full)
    return then_ep (b, pc, nm,
                    compute_with_tp (b, pc, t, pc->side_s,
                                     nd * c->tp_colls_fwd + nm * c->moe_tp_colls_fwd,
                                     pass->recompute_span, after));
  /* selective: the recomputed modules' TP collectives (a dense MLP's,
   * the shared experts'), and a whole MoE layer's all-to-alls */
  {
    int colls = nd * c->recompute_tp_colls + pc->nm * c->moe_recompute_tp_colls;
    int moe = (b->plan->recompute_modules & SIM_RECOMPUTE_MOE) ? pc->nm : 0;
    if (colls > 0 || moe > 0)
      return then_ep (b, pc, moe,
                      compute_with_tp (b, pc, t, pc->side_s, colls, pass->recompute_span, after));
  }
  r = pass_compute (b, pc, t, pc->side_s, 0, pass->recompute_span);
  dep (b, r, after);
  return r;
}

/* the parameters whose gradients layer l of the chunk finalises: the
 * layer's, plus the head and final norm after the last layer and the
 * embedding after the first */
/* the head and final norm's parameters (last: the chunk's last layer) and
 * the embedding's (first: its first layer), whose gradients finish there */
static double
edge_grad_params (const SimIterBuilder *b, gboolean last, gboolean first)
{
  const SimModel *m = b->model;
  double params = 0;
  if (last)
    params += (double) sim_model_final_norm_params (m) +
              (double) (m->tied_embeddings && sim_plan_ends_share_rank (b->plan)
                            ? 0
                            : sim_model_embedding_params (m)) /
                  b->plan->tp;
  /* multi-token prediction: the modules' norms and eh_proj, and the last
   * stage's own copy of an untied input embedding (the ledger's) */
  if (last && b->plan->mtp_layers > 0) {
    double sharded = (double) sim_model_mtp_extra_sharded (m);
    params += b->plan->mtp_layers *
              (sharded / b->plan->tp + (double) sim_model_mtp_extra_params (m) - sharded);
    if (!sim_plan_ends_share_rank (b->plan) && !m->tied_embeddings)
      params += (double) sim_model_embedding_params (m) / b->plan->tp;
  }
  if (first)
    params += (double) sim_model_embedding_params (m) / b->plan->tp +
              (double) sim_model_position_params (m);
  return params;
}

static double
layer_grad_params (const SimIterBuilder *b, const PassCtx *pc, int l, gboolean moe)
{
  /* LoRA: the adapters only; the frozen embedding, output layer and norms
   * have no gradient */
  if (b->plan->lora_rank > 0)
    return b->grad_params;
  return (moe ? b->moe_layer_params : b->layer_params) +
         edge_grad_params (b, pc->last_chunk && l == pc->lc - 1, pc->first_chunk && l == 0);
}

/* the last backward of a chunk, layer by layer, so that gradient buckets
 * can leave while the rest is still computing; returns its end */
static SimActivityId
backward_by_layer (SimIterBuilder *b, const PassCtx *pc, guint32 span, SimActivityId after,
                   GArray *grads)
{
  const SimLayerCost *c = &b->cost;
  if (pc->lc == 0) {
    /* a chunk of the embedding or the output layer alone (Megatron-Core's
     * account-for-embedding/loss split with one counted layer per chunk):
     * its backward finalises those weights' gradients */
    GradEntry ge;
    after = compute_with_ep (b, pc, (pc->last_chunk ? tail_s (b, TRUE) : 0) + (pc->first_chunk ? c->embed_bwd_s : 0),
                             pc->side_s, 0, span, after, 0);
    ge.ready = after;
    ge.params = edge_grad_params (b, pc->last_chunk, pc->first_chunk);
    ge.expert_params = 0;
    g_array_append_val (grads, ge);
    return after;
  }
  for (int l = pc->lc - 1; l >= 0; l--) {
    gboolean moe = pc->nm > 0 && sim_model_layer_is_moe (b->model, (guint64) (pc->first_layer + l));
    gboolean tail = pc->last_chunk && l == pc->lc - 1;
    double t = (moe ? c->moe_bwd_s : c->layer_bwd_s) + (tail ? tail_s (b, TRUE) : 0) +
               (pc->first_chunk && l == 0 ? c->embed_bwd_s + c->offload_bwd_s : 0);
    GradEntry ge;
    after = compute_with_ep (b, pc, t, pc->side_s / pc->lc,
                             (moe ? c->moe_tp_colls_fwd : c->tp_colls_fwd) + (tail ? tail_tp_colls (b, pc) : 0),
                             span, after, moe ? 1 : 0);
    ge.ready = after;
    ge.params = layer_grad_params (b, pc, l, moe);
    ge.expert_params = moe ? b->expert_layer_params : 0;
    g_array_append_val (grads, ge);
  }
  return after;
}

/* the weight-gradient seconds of the pass's chunk (sim-cost.h) */
static double
weight_s (const SimIterBuilder *b, const PassCtx *pc)
{
  const SimLayerCost *c = &b->cost;
  return (pc->lc - pc->nm) * c->layer_bwd_w_s + pc->nm * c->moe_bwd_w_s +
         (pc->last_chunk ? sim_cost_tail_w_s (c) : 0);
}

/* a backward, its recomputation first; grads: non-NULL to finalise the
 * chunk's gradients layer by layer into it */
static void
build_backward (SimIterBuilder *b, const PassCtx *pc, Pass *pass, GArray *grads)
{
  const SimLayerCost *c = &b->cost;
  const SimPlan *p = b->plan;
  SimActivityId y = pass->gate;
  if ((c->layer_recompute_s > 0 || c->moe_recompute_s > 0) &&
      (p->recompute != SIM_RECOMPUTE_FULL || pc->rd + pc->rm > 0))
    y = build_recompute (b, pc, pass, y);
  pass->compute_span = new_span (b, SIM_SPAN_BACKWARD, pc->stage, pc->replica, pc->mb, pc->chunk);
  if (grads != NULL) {
    y = backward_by_layer (b, pc, pass->compute_span, y, grads);
  } else {
    int nd = pc->lc - pc->nm;
    double t = nd * c->layer_bwd_s + pc->nm * c->moe_bwd_s +
               (pc->first_chunk ? c->embed_bwd_s + c->offload_bwd_s : 0) +
               (pc->last_chunk ? tail_s (b, TRUE) : 0);
    /* split: the input gradient, its weight gradient a pass of its own */
    if (sim_schedule_splits_backward (p->schedule))
      t -= weight_s (b, pc);
    y = compute_with_ep (b, pc, t, pc->side_s,
                         nd * c->tp_colls_fwd + pc->nm * c->moe_tp_colls_fwd + tail_tp_colls (b, pc),
                         pass->compute_span, y, pc->nm);
  }
  cp_flows (b, pc->replica, pc->stage, 2 * pc->cp_bytes, pass->gate, pass->end, pc->mb, pc->chunk);
  dep (b, pass->end, y);
  amax_reduce (b, pc, y, pass->end);
  if (p->zero >= 2 && zero_sharded (b) && grads_pass (b, pc->op))
    zero2_reduce_scatter (b, pc, pass);
}

/* a weight-gradient pass (sim-schedule.h): the weight-gradient GEMMs of
 * the chunk's layers, and of the output layer on the last chunk; no
 * collective waits in it (the inputs and output gradients it multiplies
 * were kept by the forward and the input-gradient pass); grads: non-NULL
 * to finalise the chunk's gradients layer by layer into it */
static void
build_weight (SimIterBuilder *b, const PassCtx *pc, Pass *pass, GArray *grads)
{
  const SimLayerCost *c = &b->cost;
  const SimPlan *p = b->plan;
  SimActivityId y = pass->gate;
  pass->compute_span = new_span (b, SIM_SPAN_WEIGHT, pc->stage, pc->replica, pc->mb, pc->chunk);
  if (grads == NULL) {
    y = pass_compute (b, pc, weight_s (b, pc), pc->side_s, 0, pass->compute_span);
    dep (b, y, pass->gate);
  } else if (pc->lc == 0) {
    /* a chunk of the embedding or the output layer alone */
    GradEntry ge = { 0 };
    y = pass_compute (b, pc, weight_s (b, pc), pc->side_s, 0, pass->compute_span);
    dep (b, y, pass->gate);
    ge.ready = y;
    ge.params = edge_grad_params (b, pc->last_chunk, pc->first_chunk);
    g_array_append_val (grads, ge);
  } else {
    for (int l = pc->lc - 1; l >= 0; l--) {
      gboolean moe = pc->nm > 0 && sim_model_layer_is_moe (b->model, (guint64) (pc->first_layer + l));
      double t = (moe ? c->moe_bwd_w_s : c->layer_bwd_w_s) +
                 (pc->last_chunk && l == pc->lc - 1 ? sim_cost_tail_w_s (c) : 0);
      SimActivityId a = pass_compute (b, pc, t, pc->side_s / pc->lc, 0, pass->compute_span);
      GradEntry ge;
      dep (b, a, y);
      y = a;
      ge.ready = y;
      ge.params = layer_grad_params (b, pc, l, moe);
      ge.expert_params = moe ? b->expert_layer_params : 0;
      g_array_append_val (grads, ge);
    }
  }
  dep (b, pass->end, y);
  if (p->zero >= 2 && zero_sharded (b))
    zero2_reduce_scatter (b, pc, pass);
}

/* one pass after the stage's previous one (prev_end, prev_gate: none is
 * G_MAXUINT32); ag_prev: the stage's last ZeRO-3 gather */
static void
build_pass (SimIterBuilder *b, const PassCtx *pc, Pass *pass, GArray *grads, SimActivityId prev_end,
            SimActivityId *ag_prev, SimActivityId prev_gate)
{
  const SimPlan *p = b->plan;
  pass->op = *pc->op;
  pass->gate = gate (b, pc->gspan);
  if (prev_end != G_MAXUINT32)
    dep (b, pass->gate, prev_end);
  pass->end = gate (b, pc->gspan);
  /* a weight gradient reads no parameter */
  if (p->zero >= 3 && zero_sharded (b) && pc->op->kind != SIM_PASS_WEIGHT)
    zero3_gather (b, pc, pass, ag_prev, prev_gate);
  switch ((SimPassKind) pc->op->kind) {
  case SIM_PASS_FORWARD: build_forward (b, pc, pass); break;
  case SIM_PASS_BACKWARD: build_backward (b, pc, pass, grads); break;
  case SIM_PASS_WEIGHT: build_weight (b, pc, pass, grads); break;
  }
  if (pc->op->paired) {
    g_array_index (b->spans, Span, pass->compute_span).paired = TRUE;
    if (pass->has_recompute)
      g_array_index (b->spans, Span, pass->recompute_span).paired = TRUE;
  }
}

/* replica r's stage s, pass by pass in program order, and the gradient
 * entries it finalises */
void
sim_iter_build_stage_program (SimIterBuilder *b, int r, int s)
{
  const SimPlan *plan = b->plan;
  int p = plan->pp, m = (int) plan->micro_batches;
  g_autoptr (GArray) order = sim_schedule_stage (plan->schedule, p, s, m, plan->virtual_stages);
  Pass *ps = b->passes + (gsize) (r * p + s) * b->passes_per_stage;
  GArray *ge = g_array_new (FALSE, FALSE, sizeof (GradEntry));
  SimActivityId prev = G_MAXUINT32, ag_prev = G_MAXUINT32, prev_gate = G_MAXUINT32;

  g_ptr_array_add (b->grads, ge);
  b->stream[r * p + s] = sim_engine_add_stream (b->e);
  b->tail = FALSE;
  for (guint i = 0; i < order->len; i++) {
    const SimPipeOp *op = &g_array_index (order, SimPipeOp, i);
    PassCtx pc;
    /* the last backward of each chunk is the one that finalises its
     * grads; ZeRO-2/3 reduce them per pass instead */
    gboolean by_layer = finalises (b, op) && plan->overlap && plan->zero < 2;
    pass_ctx_init (&pc, b, r, s, (int) i, op);
    /* from the first backward that finalises gradients on (the tail),
     * the gradient reduction may run beside the TP collectives and the
     * pipeline sends: flows (sim_iter_alone_exact) */
    b->tail = b->tail || (op->kind == SIM_PASS_BACKWARD && (int) op->micro_batch == m - 1);
    ps[i].tail = b->tail;
    /* DualPipeV's F&B pairs, and Megatron-Core's combined 1F1B */
    pc.ep_beside = op->paired ||
                   (plan->moe_a2a_overlap > 0 &&
                    ((i > 0 && g_array_index (order, SimPipeOp, i - 1).kind != op->kind) ||
                     (i + 1 < order->len && g_array_index (order, SimPipeOp, i + 1).kind != op->kind)));
    build_pass (b, &pc, &ps[i], by_layer ? ge : NULL, prev, &ag_prev, prev_gate);
    prev = ps[i].end;
    prev_gate = ps[i].gate;
  }
  b->stage_end[r * p + s] = prev;
  if (!plan->overlap && plan->zero < 2) {
    /* all gradients at once, after the whole backward */
    const SimStageMemory *sm = &g_array_index (b->ledger->stages, SimStageMemory, s);
    GradEntry all = { prev, sim_iter_trainable_dense (b->model, plan, sm), (double) sm->expert_params };
    g_array_append_val (ge, all);
  }
}

/* ---- phase 2: the pipeline sends ---- */

/* where each (chunk, micro-batch, direction) sits in one stage's program:
 * slot[(chunk * m + mb) * 2 + backward] = the pass's index, -1 if absent */
static void
index_stage (const SimIterBuilder *b, const Pass *ps, int *slot)
{
  int m = (int) b->plan->micro_batches;
  for (int i = 0; i < b->passes_per_stage; i++)
    slot[i] = -1;
  for (int i = 0; i < b->passes_per_stage; i++)
    if (ps[i].op.kind != SIM_PASS_WEIGHT)
      slot[(ps[i].op.chunk * m + (int) ps[i].op.micro_batch) * 2 +
           (ps[i].op.kind == SIM_PASS_BACKWARD ? 1 : 0)] = i;
}

/* the send of a pass of replica's stage `from` (of a backward: `backward`;
 * in the tail: `tail`) to stage `to`, after `after` and before `before` */
static void
pp_send (SimIterBuilder *b, int replica, int from, int to, gboolean backward, gboolean tail,
         SimActivityId after, SimActivityId before, int mb, int chunk)
{
  const SimPlan *p = b->plan;
  guint32 span;
  if (b->cost.pp_bytes <= 0) {
    /* nothing to send (an idealised cost model): a plain dependency */
    dep (b, before, after);
    return;
  }
  span = new_span (b, SIM_SPAN_PP, from, replica, mb, chunk);
  /* every TP and CP rank sends its shard to its peer in the next stage,
   * all at once: where the pairs are alike (one choice: choose() keys on
   * their shape), one latency, a flow per pair and one join */
  {
    /* the pairs of (replica, from, direction) are worked out once: `to`
     * follows from them (pp_next) */
    int dir = ((replica * p->pp + from) * 2 + (to > from ? 1 : 0)) * 2 + (backward ? 1 : 0);
    SendGroup *sg = &b->sends[dir];
    int n = 2 * p->tp * p->cp, k = 0;
    const int *g;
    const SimCollChoice *c0;
    gboolean alike;
    if (sg->g == NULL) {
      sg->g = g_new (int, n);
      sg->n = n;
      sg->alike = TRUE;
      for (int t = 0; t < p->tp; t++)
        for (int c = 0; c < p->cp; c++) {
          sg->g[k] = gpu_of (b, t, c, replica, from);
          sg->g[k + 1] = gpu_of (b, t, c, replica, to);
          if (k == 0)
            sg->c0 = choose (b, SIM_OP_SENDRECV, sg->g, 2, b->cost.pp_bytes);
          else
            sg->alike = sg->alike && choose (b, SIM_OP_SENDRECV, sg->g + k, 2, b->cost.pp_bytes) == sg->c0;
          k += 2;
        }
    }
    g = sg->g, c0 = sg->c0, alike = sg->alike;
    /* and with ALONE_PP outside the tail, as one delay of their time
     * alone (sim_iter_alone_exact) */
    if (alike && (b->alone & ALONE_PP) && !tail) {
      int gi = b->tp_groups + dir;
      SimActivityId d = alone_delay (b, gi, SIM_OP_SENDRECV, g, n, b->cost.pp_bytes, 1, span, after);
      if (d != G_MAXUINT32) {
        dep (b, before, d);
        return;
      }
    }
    for (k = 0; k < n; k += alike ? n : 2) {
      guint32 first = sim_engine_n_activities (b->e);
      SimActivityId s, j;
      j = sim_collective_add (b->net, SIM_OP_SENDRECV, g + k, alike ? n : 2, b->cost.pp_bytes,
                              alike ? c0 : choose (b, SIM_OP_SENDRECV, g + k, 2, b->cost.pp_bytes),
                              span, &s);
      mark_from (b, first, span);
      dep (b, s, after);
      dep (b, before, j);
    }
  }
}

/* the stage a pass of stage s hands its output to, and that pass's chunk;
 * -1 for the last forward and the last backward */
static int
pp_next (const SimPlan *p, int s, const SimPipeOp *op, int *to_chunk)
{
  int c = op->chunk, v = p->virtual_stages;
  *to_chunk = c;
  if (op->kind == SIM_PASS_WEIGHT)
    return -1;
  if (p->schedule == SIM_SCHEDULE_DUALPIPE) {
    /* DualPipe: the first copy down the ranks, the second up */
    gboolean down = (op->kind == SIM_PASS_FORWARD) == (c == 0);
    if (down)
      return s < p->pp - 1 ? s + 1 : -1;
    return s > 0 ? s - 1 : -1;
  }
  if (sim_schedule_is_v (p->schedule)) {
    /* down the ranks on chunk 0, back up on chunk 1 (the turn, and the
     * backward's, on the last rank without a send) */
    gboolean down = (op->kind == SIM_PASS_FORWARD) == (c == 0);
    if (down && s < p->pp - 1)
      return s + 1;
    if (!down && s > 0)
      return s - 1;
    if (down) {
      *to_chunk = 1 - c;
      return s;
    }
    return -1;
  }
  if (op->kind == SIM_PASS_FORWARD) {
    if (s < p->pp - 1)
      return s + 1;
    if (c < v - 1) {
      *to_chunk = c + 1;
      return 0;
    }
  } else {
    if (s > 0)
      return s - 1;
    if (c > 0) {
      *to_chunk = c - 1;
      return p->pp - 1;
    }
  }
  return -1;
}

void
sim_iter_build_pipeline_sends (SimIterBuilder *b)
{
  int p = b->plan->pp, m = (int) b->plan->micro_batches, n = b->passes_per_stage;
  /* the pass tables of one replica, indexed by (stage, chunk, mb, direction) */
  g_autofree int *slot = g_new (int, (gsize) p * n);
  for (int r = 0; r < b->replicas; r++) {
    Pass *ps = b->passes + (gsize) r * p * n;
    for (int s = 0; s < p; s++)
      index_stage (b, ps + (gsize) s * n, slot + (gsize) s * n);
    for (int s = 0; s < p; s++)
      for (int i = 0; i < n; i++) {
        Pass *src = ps + (gsize) s * n + i;
        int mb = (int) src->op.micro_batch, tc, k;
        int to = pp_next (b->plan, s, &src->op, &tc);
        if (to < 0)
          continue;
        gboolean bwd = src->op.kind == SIM_PASS_BACKWARD;
        k = slot[(gsize) to * n + (tc * m + mb) * 2 + (bwd ? 1 : 0)];
        if (k >= 0 && to == s)
          /* the V's turn on the last rank: no send */
          dep (b, ps[(gsize) to * n + k].gate, src->end);
        else if (k >= 0)
          pp_send (b, r, s, to, bwd, src->tail, src->end, ps[(gsize) to * n + k].gate, mb,
                   src->op.chunk);
      }
  }
}

/* ---- phase 3: gradients, optimizer, parameter gather ---- */

static double
bucket_params (const SimPlan *p)
{
  return MAX (BUCKET_PARAMS, 1e6 * p->dp);
}

/* a gradient bucket's reduction or a parameter gather over `group`, in
 * alone group gi: with ALONE_DP one delay of its time alone (sim_iter_alone_exact),
 * else its flows; *start and *join as coll() gives them */
static void
dp_coll_or_alone (SimIterBuilder *b, int gi, SimCollOp op, const int *group, int n, double bytes,
                  guint32 span, SimActivityId *start, SimActivityId *join)
{
  if ((b->alone & ALONE_DP) &&
      (*join = alone_delay (b, gi, op, group, n, bytes, 1, span, G_MAXUINT32)) != G_MAXUINT32) {
    *start = *join;
    return;
  }
  coll (b, op, group, n, bytes, 1, span, start, join);
}

/* one bucket's reduction over `group` (n GPUs) in stage s, once the
 * bucket's last entry k is final in every replica simulated and after
 * the group's previous bucket (*prev, updated) */
static void
bucket_coll (SimIterBuilder *b, int s, guint k, double bytes, const int *group, int n,
             int gi, guint32 span, SimActivityId *prev)
{
  const SimPlan *plan = b->plan;
  SimActivityId st, j;
  dp_coll_or_alone (b, gi, plan->zero >= 1 ? SIM_OP_REDUCE_SCATTER : SIM_OP_ALL_REDUCE, group, n,
                    bytes, span, &st, &j);
  for (int r = 0; r < b->replicas; r++) {
    GArray *ger = g_ptr_array_index (b->grads, r * plan->pp + s);
    dep (b, st, g_array_index (ger, GradEntry, k).ready);
  }
  if (*prev != G_MAXUINT32)
    dep (b, st, *prev);
  *prev = j;
}

/* one bucket's reduction, one collective per TP rank over the dp x cp
 * ranks that hold the same parameters (prev: per TP rank) */
static void
build_bucket (SimIterBuilder *b, int s, guint k, double bytes, int *group, SimActivityId *prev)
{
  guint32 span = new_span (b, SIM_SPAN_DP, s, 0, -1, -1);
  for (int t = 0; t < dp_traffic_ranks (b); t++)
    bucket_coll (b, s, k, bytes, group, dp_group (b, t, s, group), b->dp_groups + s * b->plan->tp + t,
                 span, &prev[t]);
}

/* the routed experts' gradients of one bucket (entries up to k), one
 * collective per expert data-parallel group that a simulated replica's
 * GPU is in (prev: per group, by its stage rank modulo etp x ep) */
static void
build_expert_bucket (SimIterBuilder *b, int s, guint k, double bytes, int *group,
                     SimActivityId *prev)
{
  const SimPlan *plan = b->plan;
  int inner = plan->etp * plan->ep;
  guint32 span = new_span (b, SIM_SPAN_DP, s, 0, -1, -1);
  for (int r = 0; r < expert_groups (b); r++)
    bucket_coll (b, s, k, bytes, group, edp_group (b, r, s, group),
                 b->dp_groups + plan->pp * plan->tp + s * inner + r, span, &prev[r]);
}

/* stage s's gradients in buckets, in readiness order: with `experts` the
 * routed experts' over their expert data-parallel groups (Megatron-Core
 * buckets them apart from the rest), else the rest over dp x cp; appends
 * to `last` what the optimizer waits for */
static void
build_grad_buckets (SimIterBuilder *b, int s, gboolean experts, GArray *last)
{
  const SimPlan *plan = b->plan;
  GArray *ge0 = g_ptr_array_index (b->grads, s);
  double bucket = bucket_params (plan), acc = 0;
  int wire = grad_wire_bytes (plan);
  int chains = experts ? plan->etp * plan->ep : plan->tp; /* one per group */
  g_autofree int *group = g_new (int, experts ? plan->edp : plan->dp * plan->cp);
  g_autofree SimActivityId *prev = g_new (SimActivityId, chains);

  for (int x = 0; x < chains; x++)
    prev[x] = G_MAXUINT32;
  for (guint k = 0; k < ge0->len; k++) {
    const GradEntry *e = &g_array_index (ge0, GradEntry, k);
    acc += experts ? e->expert_params : e->params;
    if ((acc < bucket && k + 1 < ge0->len) || acc <= 0)
      continue;
    if (experts)
      build_expert_bucket (b, s, k, acc * wire, group, prev);
    else
      build_bucket (b, s, k, acc * wire, group, prev);
    acc = 0;
  }
  for (int x = 0; x < chains; x++)
    if (prev[x] != G_MAXUINT32)
      g_array_append_val (last, prev[x]);
}

/* the optimizer step on each replica of stage s, once every gradient is
 * reduced (after each activity in `last`) */
static void
build_optimizer (SimIterBuilder *b, int s, const GArray *last)
{
  const SimPlan *plan = b->plan;
  int p = plan->pp;
  const SimStageMemory *sm = &g_array_index (b->ledger->stages, SimStageMemory, s);
  double local = sim_iter_trainable_dense (b->model, plan, sm) + (double) sm->expert_params;
  /* ZeRO-1/2: each rank steps its shard: of the routed experts' over the
   * expert data-parallel group, of the rest over dp x cp */
  if (plan->zero >= 1 && plan->zero < 3)
    local = sim_iter_trainable_dense (b->model, plan, sm) / (plan->dp * plan->cp) +
            (double) sm->expert_params / plan->edp;
  for (int r = 0; r < b->replicas; r++) {
    guint32 span = new_span (b, SIM_SPAN_OPTIMIZER, s, r, -1, -1);
    SimActivityId o = compute (b, b->stream[r * p + s],
                               b->cost.optimizer_s_per_param * local * b->stage_scale[r * p + s], span);
    dep (b, o, b->stage_end[r * p + s]);
    for (guint k = 0; k < last->len; k++)
      dep (b, o, g_array_index (last, SimActivityId, k));
    b->stage_end[r * p + s] = o;
  }
}

/* ZeRO-1/2: each rank updated its shard; the parameters are gathered back
 * after the optimizer */
static void
build_param_gather (SimIterBuilder *b, int s)
{
  const SimPlan *plan = b->plan;
  guint32 span = new_span (b, SIM_SPAN_DP, s, 0, -1, -1);
  const SimStageMemory *sm = &g_array_index (b->ledger->stages, SimStageMemory, s);
  double params = sim_iter_trainable_dense (b->model, plan, sm), experts = (double) sm->expert_params;
  g_autofree int *group = g_new (int, MAX (plan->dp * plan->cp, plan->edp));
  /* --overlap-param-gather: Megatron gathers bucket by bucket as the
   * next forward reaches each; only the first bucket holds it up */
  if (plan->overlap_param_gather > 0) {
    params = MIN (params, bucket_params (plan));
    experts = MIN (experts, bucket_params (plan));
  }
  /* the routed experts' shards come back over their expert data-parallel
   * groups */
  if (experts > 0 && plan->edp > 1) {
    int inner = plan->etp * plan->ep;
    for (int r = 0; r < expert_groups (b); r++) {
      SimActivityId st, j;
      int n = edp_group (b, r, s, group);
      dp_coll_or_alone (b, b->dp_groups + plan->pp * plan->tp + s * inner + r,
                        SIM_OP_ALL_GATHER, group, n, experts * (plan->fp8_params > 0 ? 1 : 2), span,
                        &st, &j);
      for (int q = 0; q < b->replicas; q++)
        dep (b, st, b->stage_end[q * plan->pp + s]);
    }
  }
  for (int t = 0; t < dp_traffic_ranks (b); t++) {
    SimActivityId st, j;
    int n = dp_group (b, t, s, group);
    /* --fp8-params: the weights are gathered in FP8, one byte each */
    dp_coll_or_alone (b, b->dp_groups + s * plan->tp + t, SIM_OP_ALL_GATHER, group, n,
                      params * (plan->fp8_params > 0 ? 1 : 2), span, &st, &j);
    for (int r = 0; r < b->replicas; r++)
      dep (b, st, b->stage_end[r * plan->pp + s]);
  }
}

/* DualPipe: rank s holds block s of one copy of the model and rank
 * p - 1 - s the same block of the other, and after the step's last
 * backward each adds the other's gradients of it to its own
 * (deepseek-ai/DualPipe examples/example_dualpipe.py: p0.grad +=
 * p1all[pp_size - 1 - rank]): one chunk's gradients sent each way between
 * the two ranks, every TP and CP rank with its peer at once, taken as the
 * time alone of one pair's exchange, after both stages' last pass and
 * before either optimizer step.  Built once per pair, by its first stage,
 * before either stage's optimizer moves stage_end. */
static void
dualpipe_mirror (SimIterBuilder *b, int s, GArray *last)
{
  const SimPlan *plan = b->plan;
  int p = plan->pp, mirror = p - 1 - s;
  const SimStageMemory *sm = &g_array_index (b->ledger->stages, SimStageMemory, s);
  double params = (sim_iter_trainable_dense (b->model, plan, sm) + (double) sm->expert_params) / 2;
  for (int r = 0; r < b->replicas; r++) {
    SimActivityId *x = &b->mirror[r * p + MIN (s, mirror)];
    if (*x == G_MAXUINT32) {
      int g[2] = { gpu_of (b, 0, 0, r, s), gpu_of (b, 0, 0, r, mirror) };
      double t = choose (b, SIM_OP_SENDRECV, g, 2, params * grad_wire_bytes (plan))->predicted_s;
      guint32 span = new_span (b, SIM_SPAN_DP, s, r, -1, -1);
      guint32 first = sim_engine_n_activities (b->e);
      *x = sim_engine_add_delay (b->e, sim_time_from_s (t), span);
      mark_from (b, first, span);
      dep (b, *x, b->stage_end[r * p + s]);
      dep (b, *x, b->stage_end[r * p + mirror]);
    }
    g_array_append_val (last, *x);
  }
}

/* stage s after its last backward: gradients, optimizer, ZeRO gather */
void
sim_iter_build_stage_update (SimIterBuilder *b, int s)
{
  const SimPlan *plan = b->plan;
  int shards = plan->dp * plan->cp;
  g_autoptr (GArray) last = g_array_new (FALSE, FALSE, sizeof (SimActivityId));
  /* (an idealised cost model, with nothing to send, exchanges nothing) */
  if (plan->schedule == SIM_SCHEDULE_DUALPIPE && b->cost.pp_bytes > 0)
    dualpipe_mirror (b, s, last);
  if (plan->zero >= 2 && b->rs_last[s] != G_MAXUINT32)
    g_array_append_val (last, b->rs_last[s]);
  if (shards > 1 && plan->zero < 2)
    build_grad_buckets (b, s, FALSE, last);
  if (sim_model_is_moe (b->model) && plan->edp > 1 && plan->zero < 2)
    build_grad_buckets (b, s, TRUE, last);
  build_optimizer (b, s, last);
  if (plan->zero >= 1 && plan->zero < 3 && shards > 1)
    build_param_gather (b, s);
}

