/* sim-iteration.c — see sim-iteration.h
 *
 * Two halves.  The builder (SimIterBuilder) turns a plan into activities
 * on a private engine in three phases: each replica's passes in program
 * order, the pipeline sends between stages, then per stage the gradient
 * reduction, the optimizer step and the ZeRO parameter all-gather.  The
 * analysis reads the finished run back: per-stage time and activation
 * memory, their averages, the critical path, throughput and FLOPs. */
#include "sim-iteration.h"
#include "sim-variability.h"

#include <math.h>
#include <string.h>

#include "sim-activation.h"
#include "sim-collective.h"
#include "sim-error.h"
#include "sim-schedule.h"
#include "sim-vec.h"

/* Megatron's gradient bucket: max(40M, 1M x dp) parameters
 * (megatron/core/distributed/distributed_data_parallel.py, bucket_size) */
#define BUCKET_PARAMS 40000000.0

typedef struct {
  SimSpanKind kind;
  int stage, replica, mb, chunk;
  SimTime start, end;
} Span;

typedef struct {
  SimActivityId gate; /* start: waits for program order and inputs */
  SimActivityId end;  /* end of the pass, its TP collectives included */
  guint32 compute_span;
  guint32 recompute_span;
  gboolean has_recompute;
  gboolean tail; /* from the stage's first backward that finalises gradients on */
  SimPipeOp op;
} Pass;

typedef struct {
  SimActivityId ready; /* the activity after which these parameters' gradients are final */
  double params;
  double expert_params; /* of routed experts, reduced over the expert data-parallel group */
} GradEntry;

typedef SIM_VEC (guint32) U32Vec;
typedef SIM_VEC (guint8) U8Vec;

/* What one run builds on and the next run of the same plan (but for its
 * micro-batch count: the steady state's runs, the rebuild with TP flows)
 * can keep: the engine and network with their allocations and routes, the
 * arrays the analysis reads, the collective choices, and the TP groups'
 * times alone and links (indexed by group: the same plan shape) */
typedef struct {
  SimEngine *e;
  SimNetwork *net;
  GArray *spans;       /* Span */
  U32Vec act_span;     /* per activity: its span */
  U8Vec is_compute;    /* per activity */
  U32Vec edges;        /* SimActivityId pairs (after, before) */
  GHashTable *choices; /* ChoiceKey -> SimCollChoice */
  GHashTable *nodes_seen; /* scratch of choose(): the nodes of one group */
  GHashTable *alone_s;    /* AloneKey -> SimTime *: a collective's time alone */
  GPtrArray *alone_links; /* GArray of int per group, NULL until its first delay */
} Scratch;

enum { ALONE_TP = 1, ALONE_PP = 2, ALONE_DP = 4, ALONE_CP = 16 };
/* with the shortcuts (not the reference, --exact): TP rank 0's
 * data-parallel collectives stand for every rank's where dp_mirrored */
enum { MIRROR_DP = 8 };
/* runs with delays after the first that something met (run_on) */
#define ALONE_ROUNDS 2
/* runs with any delays, before one with every flow (run_on) */
#define ALONE_RUNS 4
/* the most groups of delays on one link (alone_exact) */
#define ALONE_SHARED 4

/* one collective or send of a group taken as a delay, and its place among
 * the group's (delays or not), which names it from one build to the next */
typedef struct {
  SimActivityId act;
  guint32 seq;
} AloneDelay;

/* a collective's time alone on the network, and the activities its flows
 * would have been (sim_collective_alone_counted) */
typedef struct {
  SimTime t;
  guint32 acts;
} AloneTime;

/* the last collective of a group whose time alone was looked up, and that
 * time: the same key pass after pass spares the hash */
typedef struct {
  SimCollOp op;
  int count;
  double bytes;
  const AloneTime *x; /* NULL: none yet */
} AloneMemo;

/* the sends of one stage in one direction: the GPUs in (from, to) pairs,
 * every TP and CP rank's, the choice of the first pair, and whether all
 * pairs chose alike */
typedef struct {
  int *g;
  int n;
  const SimCollChoice *c0;
  gboolean alike;
} SendGroup;

/* One run: the engine it builds on, the spans and edges it records for
 * the analysis, and each replica's passes.  Per (replica r, stage s)
 * arrays are indexed [r * pp + s]. */
typedef struct {
  const SimTopology *topo;
  const SimModel *model;
  const SimPlan *plan;
  const SimMemory *ledger;
  const SimGpuType *gpu;
  Scratch *sc;  /* borrowed: e ... nodes_seen below are its */
  SimEngine *e;
  SimNetwork *net;
  GArray *spans;
  U32Vec *act_span;
  U8Vec *is_compute;
  U32Vec *edges;
  GHashTable *choices;
  GHashTable *nodes_seen;
  /* the choice choose() just made by simulating, NULL when it came from
   * choices: the candidates ran on that call's gpus */
  const SimCollChoice *fresh_choice;
  SimLayerCost cost; /* owned, as is everything below */
  int replicas;
  int *lc_of;          /* layers of each chunk [s * v + c] (sim_plan_chunk_layers) */
  double layer_params; /* per TP rank */
  double grad_params;  /* of which trainable (all of them but under LoRA) */
  /* mixture of experts: the MoE layers of each chunk [s * v + c] and the
   * first layer's index; a MoE layer's parameters per GPU outside the
   * routed experts (reduced over dp x cp) and of its routed experts
   * (reduced over the expert data-parallel group); per stage, the
   * dispatch and combine all-to-alls (and expert TP gather and
   * reduce-scatter) of one MoE layer's forward, alone on the network */
  int *moe_of, *first_of;
  double moe_layer_params, expert_layer_params;
  double *ep_layer_s;
  GError *error;       /* the first collective no algorithm could run */
  /* ZeRO-2/3: per-pass collectives, created with replica 0 and shared by
   * every replica (they span all of them), indexed [stage][pass] */
  SimActivityId *ag_join;
  SimActivityId *rs_start;
  SimActivityId *rs_last; /* per stage: the last gradient reduce-scatter */
  int passes_per_stage;
  /* the data-parallel collectives of TP ranks 1 .. tp-1 mirror rank 0's
   * (dp_mirrored): only rank 0's are built */
  gboolean dp_mirror;
  int *stream;              /* [r * pp + s] */
  Pass *passes;             /* [(r * pp + s) * passes_per_stage + i], program order */
  SimActivityId *stage_end; /* [r * pp + s]: the stage's last activity so far */
  GPtrArray *grads;         /* [r * pp + s]: GArray of GradEntry, in readiness order */
  /* TP collectives and pipeline sends as one delay each of their time
   * alone (alone_exact), by group: the TP group of replica r, stage s and
   * CP rank c is [(r * pp + s) * cp + c]; the sends of replica r's stage s
   * forward (d 0) or backward (d 1) are [tp_groups + (r * pp + s) * 2 + d];
   * the gradient buckets and parameter gathers of stage s over the
   * data-parallel group of TP rank t are [dp_groups + s * tp + t], and
   * over expert data-parallel group x [dp_groups + pp * tp + s * etp * ep
   * + x]; the context-parallel blocks of replica r's stage s and TP rank t
   * [cp_groups + (r * pp + s) * tp + t].
   * Each group's links are in sc->alone_links, its delays (in program
   * order) here. */
  int alone;                /* ALONE_TP | ALONE_PP | ALONE_DP | ALONE_CP */
  gboolean tail;            /* the current pass is a tail one: flows all the same */
  int tp_groups, dp_groups; /* where the sends' groups begin, and the buckets' */
  int cp_groups;            /* and the context-parallel blocks' */
  GPtrArray *alone_delays;  /* GArray of AloneDelay */
  guint32 *alone_seq;       /* per group: its collectives or sends so far */
  GHashTable *alone_off;    /* borrowed: (group << 32 | seq) of those taken as flows */
  AloneMemo *alone_memo;    /* per group: its last collective's key and time alone */
  guint64 alone_saved;      /* the activities the delays stand for, less theirs */
  guint64 alone_saved_by[5][2]; /* the same by kind (the bit of its flag, ALONE_TP 0 ..
                                 * ALONE_CP 4), of no micro-batch [0] or of one [1] */
  /* memos of what every pass asks again: per stage, the predicted time of
   * one TP collective (tp_pred_s; < 0: not yet); per (replica r, stage s,
   * direction d) [(r * pp + s) * 2 + d], the GPU pairs of its sends and
   * their choice (pp_send; NULL: not yet) */
  double *tp_pred1;
  /* FP8 delayed scaling's amax all-reduce (amax_reduce): per stage, its
   * group's GPUs (NULL: not yet) and how many, and the last (bytes, time)
   * asked, forward [2 s] and backward [2 s + 1] */
  int **amax_gpus;
  int *amax_n;
  double *amax_bytes, *amax_s;
  SendGroup *sends;
  int n_sends;
  /* the GPUs of each TP group, tp of them from [((r * pp + s) * cp + c) * tp] */
  int *tp_gpus;
  /* [r * pp + s]: how many times the nominal time the stage's compute
   * takes: the expected slowest of the job's GPUs (sim-variability.h), or
   * a slow GPU of the stage (--slow-gpu, --slow-node) where slower */
  double *stage_scale;
} SimIterBuilder;

const char *
sim_span_kind_name (SimSpanKind k)
{
  static const char *names[] = { "forward", "backward", "recompute", "optimizer", "tp",
                                 "cp",      "pp",       "dp",        "ep",       "gate" };
  return k < SIM_SPAN_KINDS ? names[k] : "?";
}

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

/* 64-bit keys of two small halves (group << 32 | seq) mixed (g_int64_hash folds the halves with xor,
 * which makes small groups and small seqs collide) */
static guint
key_hash (gconstpointer p)
{
  guint64 x = *(const guint64 *) p * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15);
  return (guint) (x >> 32);
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

/* LoRA: one layer's adapter parameters on one TP rank, the only ones with
 * gradients to reduce and an optimizer step (sim-cost.c lora_adapters): a
 * column-parallel projection's A (in x r) whole and B (r x out/tp); a
 * row-parallel one's A (in/tp x r) and B (r x out) whole */
static double
lora_rank_params (const SimModel *m, const SimPlan *p)
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
static double
trainable_dense (const SimModel *m, const SimPlan *p, const SimStageMemory *sm)
{
  if (p->lora_rank > 0)
    return (double) sm->layers * lora_rank_params (m, p);
  return (double) (sm->params - sm->expert_params);
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

static void
builder_init (SimIterBuilder *b, const SimTopology *topo, const SimModel *model,
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
  for (int s = 0; s < p; s++)
    for (int c = 0; c < v; c++)
      b->lc_of[s * v + c] = (int) (sim_plan_chunk_layers (plan, model, s, c) +
                                   sim_plan_chunk_mtp_layers (plan, s, c));
  b->layer_params = (double) sim_model_layer_params_sharded (model) / plan->tp +
                    (double) sim_model_layer_params_replicated (model);
  b->grad_params = plan->lora_rank > 0 ? lora_rank_params (model, plan) : b->layer_params;
  if (cost != NULL)
    b->cost = *cost;
  else
    sim_cost_layer (model, plan, b->gpu, &b->cost);
  moe_init (b);

  /* a forward and a backward per micro-batch and chunk */
  b->passes_per_stage = 2 * (int) plan->micro_batches * v;
  b->ag_join = g_new (SimActivityId, (gsize) p * b->passes_per_stage);
  b->rs_start = g_new (SimActivityId, (gsize) p * b->passes_per_stage);
  b->rs_last = g_new (SimActivityId, p);
  for (int s = 0; s < p; s++)
    b->rs_last[s] = G_MAXUINT32;
  b->stream = g_new (int, p *replicas);
  b->passes = g_new0 (Pass, (gsize) replicas * p * b->passes_per_stage);
  b->stage_end = g_new (SimActivityId, p * replicas);
  b->tp_pred1 = g_new (double, p);
  for (int s = 0; s < p; s++)
    b->tp_pred1[s] = -1;
  b->amax_gpus = g_new0 (int *, p);
  b->amax_n = g_new0 (int, p);
  b->amax_bytes = g_new0 (double, 2 * p);
  b->amax_s = g_new0 (double, 2 * p);
  b->n_sends = replicas * p * 2;
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
   * the spine (more than ALONE_SHARED groups on a link: alone_drop) */
  if ((alone & ALONE_PP) && p > 1 && b->cost.pp_bytes > 0 &&
      (plan->zero < 2 || (plan->dp == 1 && !experts_sharded (b))) && 2 * replicas <= ALONE_SHARED)
    b->alone |= ALONE_PP;
  /* and the gradient buckets only without a pipeline: the sends of the
   * tail cross the buckets' rails (or NVLink, with the TP collectives
   * of the tail) as the buckets leave, so they meet (alone_drop) */
  if ((alone & ALONE_DP) && plan->zero < 2 && p == 1 && (plan->dp * plan->cp > 1 || plan->edp > 1))
    b->alone |= ALONE_DP;
  if (b->alone) {
    guint groups;
    b->tp_groups = replicas * p * plan->cp;
    b->dp_groups = b->tp_groups + replicas * p * 2;
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
static void
builder_clear (SimIterBuilder *b)
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
  g_clear_pointer (&b->tp_gpus, g_free);
  g_clear_pointer (&b->stage_scale, g_free);
  for (int i = 0; b->sends != NULL && i < b->n_sends; i++)
    g_free (b->sends[i].g);
  g_clear_pointer (&b->sends, g_free);
  g_clear_pointer (&b->stage_end, g_free);
  g_clear_pointer (&b->passes, g_free);
  g_clear_pointer (&b->stream, g_free);
  g_clear_pointer (&b->rs_last, g_free);
  g_clear_pointer (&b->rs_start, g_free);
  g_clear_pointer (&b->ag_join, g_free);
  g_clear_error (&b->error);
  g_clear_pointer (&b->lc_of, g_free);
  g_clear_pointer (&b->moe_of, g_free);
  g_clear_pointer (&b->first_of, g_free);
  g_clear_pointer (&b->ep_layer_s, g_free);
  /* the scratch's are its owner's */
  b->sc = NULL, b->e = NULL, b->net = NULL, b->spans = NULL;
  b->act_span = b->edges = NULL, b->is_compute = NULL, b->choices = b->nodes_seen = NULL;
}

static void
scratch_clear (Scratch *sc)
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

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Scratch, scratch_clear)

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SimIterBuilder, builder_clear)

/* ---- activities, and the spans and edges recorded beside them ---- */

static guint32
new_span (SimIterBuilder *b, SimSpanKind kind, int stage, int replica, int mb, int chunk)
{
  Span s = { kind, stage, replica, mb, chunk, -1, -1 };
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

/* bytes per gradient element on the wire: fp32 when the recipe keeps the
 * gradients or their accumulation wider than bf16, or under torchtitan,
 * whose FSDP2 mixed-precision policy reduces in fp32
 * (training.mixed_precision_reduce, default and only choice "float32",
 * torchtitan/config_manager.py @9dec370) */
static int
grad_wire_bytes (const SimPlan *p)
{
  int pb, gb, mb, ob, ab;
  sim_recipe_bytes (p->recipe, &pb, &gb, &mb, &ob, &ab);
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

static SimSpanKind group_kind (const SimIterBuilder *b, int gi);

/* the bit of a kind's ALONE_ flag */
static int
kind_bit (SimSpanKind kind)
{
  return kind == SIM_SPAN_TP ? 0 : kind == SIM_SPAN_PP ? 1 : kind == SIM_SPAN_CP ? 4 : 2;
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
  b->alone_saved_by[kind_bit (group_kind (b, gi))][g_array_index (b->spans, Span, span).mb >= 0] +=
    x->acts > 0 ? x->acts - 1 : 0;
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
  b->first_of = g_new0 (int, pp * v);
  b->ep_layer_s = g_new0 (double, pp);
  if (!sim_model_is_moe (m))
    return;
  for (int c = 0; c < v; c++)
    for (int s = 0; s < pp; s++) {
      int layer = (int) sim_plan_chunk_first_layer (p, m, s, c);
      b->first_of[s * v + c] = layer;
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
      t += 2 * choose (b, SIM_OP_ALLTOALL, g, p->ep, b->cost.a2a_bytes)->predicted_s;
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
  pc->first_layer = b->first_of[stage * p->virtual_stages + op->chunk];
  pc->ep_beside = FALSE;
  pc->first_chunk = stage == 0 && op->chunk == 0;
  pc->last_chunk = stage == p->pp - 1 && op->chunk == p->virtual_stages - 1;
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
    if (op->backward) {
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
    if (op->backward && op->micro_batch + 1 == p->micro_batches)
      pc->side_s = dp_pred_s (b, p->zero >= 1 ? SIM_OP_REDUCE_SCATTER : SIM_OP_ALL_REDUCE, stage,
                              pc->lc * b->grad_params * grad_wire_bytes (p));
    else if (!op->backward && op->micro_batch == 0 && p->zero >= 1 && p->overlap_param_gather > 0)
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
  gboolean bwd = pc->op->backward;
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

/* the amax all-reduce of a pass, a delay after `after` that `end` waits
 * for; nothing without FP8 delayed scaling or for a chunk without layers */
static void
amax_reduce (SimIterBuilder *b, const PassCtx *pc, SimActivityId after, SimActivityId end)
{
  const SimPlan *p = b->plan;
  const SimMoe *moe = &b->model->moe;
  int s = pc->stage, k = 2 * s + (pc->op->backward ? 1 : 0);
  double gemms, bytes;
  guint32 first, span;
  SimActivityId x;
  if (!amax_reduced (b) || pc->lc == 0)
    return;
  gemms = 4.0 * (pc->lc - pc->nm);
  if (pc->nm > 0)
    gemms += pc->nm * (2.0 + 2.0 * ((double) moe->experts / MAX (p->ep, 1) + (double) moe->shared_experts));
  bytes = 4.0 * (pc->op->backward ? 2 : 3) * gemms;
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
  if (amax_reduced (b) && pc->lc > 0) {
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
  int nd = pc->lc - pc->nm;
  double t = nd * c->layer_recompute_s + pc->nm * c->moe_recompute_s;
  SimActivityId r;
  pass->has_recompute = TRUE;
  pass->recompute_span = new_span (b, SIM_SPAN_RECOMPUTE, pc->stage, pc->replica, pc->mb,
                                   pc->chunk);
  /* full recomputation runs the whole forward again, TP collectives included */
  if (b->plan->recompute == SIM_RECOMPUTE_FULL)
    return then_ep (b, pc, pc->nm,
                    compute_with_tp (b, pc, t, pc->side_s,
                                     nd * c->tp_colls_fwd + pc->nm * c->moe_tp_colls_fwd,
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
              (double) (m->tied_embeddings && b->plan->pp == 1 ? 0
                                                               : sim_model_embedding_params (m)) /
                  b->plan->tp;
  /* multi-token prediction: the modules' norms and eh_proj, and the last
   * stage's own copy of an untied input embedding (the ledger's) */
  if (last && b->plan->mtp_layers > 0) {
    double sharded = (double) sim_model_mtp_extra_sharded (m);
    params += b->plan->mtp_layers *
              (sharded / b->plan->tp + (double) sim_model_mtp_extra_params (m) - sharded);
    if (b->plan->pp > 1 && !m->tied_embeddings)
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

/* a backward, its recomputation first; grads: non-NULL to finalise the
 * chunk's gradients layer by layer into it */
static void
build_backward (SimIterBuilder *b, const PassCtx *pc, Pass *pass, GArray *grads)
{
  const SimLayerCost *c = &b->cost;
  const SimPlan *p = b->plan;
  SimActivityId y = pass->gate;
  if (c->layer_recompute_s > 0 || c->moe_recompute_s > 0)
    y = build_recompute (b, pc, pass, y);
  pass->compute_span = new_span (b, SIM_SPAN_BACKWARD, pc->stage, pc->replica, pc->mb, pc->chunk);
  if (grads != NULL) {
    y = backward_by_layer (b, pc, pass->compute_span, y, grads);
  } else {
    int nd = pc->lc - pc->nm;
    double t = nd * c->layer_bwd_s + pc->nm * c->moe_bwd_s +
               (pc->first_chunk ? c->embed_bwd_s + c->offload_bwd_s : 0) +
               (pc->last_chunk ? tail_s (b, TRUE) : 0);
    y = compute_with_ep (b, pc, t, pc->side_s,
                         nd * c->tp_colls_fwd + pc->nm * c->moe_tp_colls_fwd + tail_tp_colls (b, pc),
                         pass->compute_span, y, pc->nm);
  }
  cp_flows (b, pc->replica, pc->stage, 2 * pc->cp_bytes, pass->gate, pass->end, pc->mb, pc->chunk);
  dep (b, pass->end, y);
  amax_reduce (b, pc, y, pass->end);
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
  if (p->zero >= 3 && zero_sharded (b))
    zero3_gather (b, pc, pass, ag_prev, prev_gate);
  if (!pc->op->backward)
    build_forward (b, pc, pass);
  else
    build_backward (b, pc, pass, grads);
}

/* replica r's stage s, pass by pass in program order, and the gradient
 * entries it finalises */
static void
build_stage_program (SimIterBuilder *b, int r, int s)
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
    gboolean by_layer = op->backward && (int) op->micro_batch == m - 1 && plan->overlap &&
                        plan->zero < 2;
    pass_ctx_init (&pc, b, r, s, (int) i, op);
    /* from the first backward that finalises gradients on (the tail),
     * the gradient reduction may run beside the TP collectives and the
     * pipeline sends: flows (alone_exact) */
    b->tail = b->tail || (op->backward && (int) op->micro_batch == m - 1);
    ps[i].tail = b->tail;
    pc.ep_beside = plan->moe_a2a_overlap > 0 &&
                   ((i > 0 && g_array_index (order, SimPipeOp, i - 1).backward != op->backward) ||
                    (i + 1 < order->len && g_array_index (order, SimPipeOp, i + 1).backward != op->backward));
    build_pass (b, &pc, &ps[i], by_layer ? ge : NULL, prev, &ag_prev, prev_gate);
    prev = ps[i].end;
    prev_gate = ps[i].gate;
  }
  b->stage_end[r * p + s] = prev;
  if (!plan->overlap && plan->zero < 2) {
    /* all gradients at once, after the whole backward */
    const SimStageMemory *sm = &g_array_index (b->ledger->stages, SimStageMemory, s);
    GradEntry all = { prev, trainable_dense (b->model, plan, sm), (double) sm->expert_params };
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
    slot[(ps[i].op.chunk * m + (int) ps[i].op.micro_batch) * 2 + (ps[i].op.backward ? 1 : 0)] = i;
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
    SendGroup *sg = &b->sends[(replica * p->pp + from) * 2 + (backward ? 1 : 0)];
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
     * alone (alone_exact) */
    if (alike && (b->alone & ALONE_PP) && !tail) {
      int gi = b->tp_groups + (replica * p->pp + from) * 2 + (backward ? 1 : 0);
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
  if (!op->backward) {
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

static void
build_pipeline_sends (SimIterBuilder *b)
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
        k = slot[(gsize) to * n + (tc * m + mb) * 2 + (src->op.backward ? 1 : 0)];
        if (k >= 0)
          pp_send (b, r, s, to, src->op.backward, src->tail, src->end, ps[(gsize) to * n + k].gate,
                   mb, src->op.chunk);
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
 * alone group gi: with ALONE_DP one delay of its time alone (alone_exact),
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
  double local = trainable_dense (b->model, plan, sm) + (double) sm->expert_params;
  /* ZeRO-1/2: each rank steps its shard: of the routed experts' over the
   * expert data-parallel group, of the rest over dp x cp */
  if (plan->zero >= 1 && plan->zero < 3)
    local = trainable_dense (b->model, plan, sm) / (plan->dp * plan->cp) +
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
  double params = trainable_dense (b->model, plan, sm), experts = (double) sm->expert_params;
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

/* stage s after its last backward: gradients, optimizer, ZeRO gather */
static void
build_stage_update (SimIterBuilder *b, int s)
{
  const SimPlan *plan = b->plan;
  int shards = plan->dp * plan->cp;
  g_autoptr (GArray) last = g_array_new (FALSE, FALSE, sizeof (SimActivityId));
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

static Span *
span_of (SimIterBuilder *b, SimActivityId a)
{
  return &g_array_index (b->spans, Span, b->act_span->data[a]);
}

/* a span runs from its first activity's start to its last one's end */
static void
spans_from_activities (SimIterBuilder *b)
{
  for (guint32 a = 0; a < b->act_span->len; a++) {
    Span *sp = span_of (b, a);
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
    SimSpan o = { sp->kind, sp->stage, sp->replica, sp->mb, sp->chunk, sp->start, sp->end };
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
  while (c != G_MAXUINT32 && span_of (b, c)->kind == SIM_SPAN_GATE && guard++ < 1000000) {
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
    const Span *sp = span_of (b, a);
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
  const Span *cs = c != G_MAXUINT32 ? span_of (b, c) : NULL;
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
    switch (span_of (b, a)->kind) {
    case SIM_SPAN_FORWARD: st->forward_s += d; break;
    case SIM_SPAN_BACKWARD: st->backward_s += d; break;
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

/* full recomputation: the whole layer comes back, one layer at a time,
 * until the backward of this pass ends: approximate by the pass's span */
static void
recompute_events (GArray *ev, SimIterBuilder *b, const Span *rc, gint64 bytes)
{
  mem_event (ev, rc->start, bytes);
  for (guint k = 0; k < b->spans->len; k++) {
    const Span *bw = &g_array_index (b->spans, Span, k);
    if (bw->kind == SIM_SPAN_BACKWARD && bw->stage == rc->stage && bw->replica == 0 &&
        bw->mb == rc->mb && bw->chunk == rc->chunk) {
      mem_event (ev, bw->end, -bytes);
      break;
    }
  }
}

/* activation memory of stage s, replica 0: allocated when a forward pass
 * starts, freed when its backward ends; one layer's recomputation set
 * while its backward runs */
static GArray *
stage_mem_events (SimIterBuilder *b, const StageIndex *x, int s,
                  const SimActivations *layer_act, const SimActivations *moe_act,
                  const SimActivations *emb_act, const SimActivations *out_act)
{
  const SimPlan *plan = b->plan;
  GArray *ev = g_array_new (FALSE, FALSE, sizeof (MemEvent));
  gint64 transient = (gint64) MAX (layer_act->transient_bytes,
                                   moe_act != NULL ? moe_act->transient_bytes : 0);
  /* with CPU offloading (pp 1: the one chunk holds every layer) each pass
   * holds the chunk's offloading peak throughout, the ledger's figure */
  SimOffload off = { 0 };
  gboolean offload = plan->cpu_offload_layers > 0 && plan->pp == 1;
  if (offload)
    sim_memory_offload_model (b->model, plan, layer_act, moe_act, NULL, NULL, 0, &off);
  /* the stage's spans of a chunk: the optimizer's and the DP collectives'
   * hold no activations */
  for (guint i = 0; i < x->chunked[s]->len; i++) {
    const Span *sp = &g_array_index (b->spans, Span, g_array_index (x->chunked[s], guint32, i));
    gboolean first = s == 0 && sp->chunk == 0;
    gboolean last = s == plan->pp - 1 && sp->chunk == plan->virtual_stages - 1;
    gint64 bytes;
    int nm;
    nm = b->moe_of[s * plan->virtual_stages + sp->chunk];
    if (offload)
      bytes = (gint64) off.peak_bytes;
    else
      bytes = (gint64) (b->lc_of[s * plan->virtual_stages + sp->chunk] - nm) *
                  (gint64) layer_act->saved_bytes +
              (nm > 0 ? (gint64) nm * (gint64) moe_act->saved_bytes : 0);
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
    } else if (sp->kind == SIM_SPAN_BACKWARD) {
      mem_event (ev, sp->end, -bytes);
      if (transient > 0 && plan->recompute == SIM_RECOMPUTE_SELECTIVE) {
        mem_event (ev, sp->start, transient);
        mem_event (ev, sp->end, -transient);
      }
    } else if (sp->kind == SIM_SPAN_RECOMPUTE && transient > 0 &&
               plan->recompute == SIM_RECOMPUTE_FULL) {
      recompute_events (ev, b, sp, transient);
    }
  }
  return ev;
}

/* the timeline of stage s into st->memory, with its peak */
static void
stage_memory (SimStageTime *st, SimIterBuilder *b, const StageIndex *x, int s,
              const SimActivations *layer_act, const SimActivations *moe_act,
              const SimActivations *emb_act, const SimActivations *out_act)
{
  g_autoptr (GArray) ev = stage_mem_events (b, x, s, layer_act, moe_act, emb_act, out_act);
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

static void
stage_averages (SimIteration *it, int p)
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
      it->critical_s[s->kind] += sim_time_to_s (sim_engine_end (e, a) - sim_engine_start (e, a));
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

static void
throughput (SimIteration *it, const SimModel *model, const SimPlan *plan, const SimGpuType *gpu)
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
  if (plan->recompute == SIM_RECOMPUTE_FULL)
    it->hardware_flop += it->model_flop / 3 - (1 + mtp) * 2.0 * h * (double) model->vocab * gbs * S -
                         mtp * 4.0 * h * h * gbs * S;
  else if (plan->recompute == SIM_RECOMPUTE_SELECTIVE) {
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

static void
analyse (SimIteration *it, SimIterBuilder *b)
{
  const SimPlan *plan = b->plan;
  g_auto (Preds) pr = { 0 };
  g_auto (StageIndex) x = { 0 };
  SimActivationConfig cfg;
  g_autoptr (SimActivations) layer_act = NULL;
  g_autoptr (SimActivations) emb_act = NULL;
  g_autoptr (SimActivations) out_act = NULL;
  g_autoptr (SimActivations) moe_act = NULL;

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
  stage_index_build (&x, b);
  for (int s = 0; s < plan->pp; s++) {
    SimStageTime st = { 0 };
    st.stage = s;
    stage_time (&st, b, &pr, &x, s);
    stage_memory (&st, b, &x, s, layer_act, moe_act, emb_act, out_act);
    g_array_append_val (it->stages, st);
  }
  stage_averages (it, plan->pp);
  critical_path (it, b, &pr);
  throughput (it, b->model, plan, b->gpu);
}

/* ---- the run ---- */

SimIteration *
sim_iteration_run (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
                   const SimMemory *ledger, gboolean full, GError **error)
{
  return sim_iteration_run_with_cost (topo, model, plan, ledger, full, NULL, error);
}

#define D_START(b, d) sim_engine_start ((b)->e, (d)->act)
#define D_END(b, d) sim_engine_end ((b)->e, (d)->act)

/* a delay of group gi that something met: to run as flows next time */
static void
culprit (GArray *out, guint gi, const AloneDelay *d)
{
  gint64 key = (gint64) gi << 32 | d->seq;
  g_array_append_val (out, key);
}

/* group gi's delays (in program order) that start before the previous
 * ends, both of each such pair into out */
static void
delays_overlap (const SimIterBuilder *b, guint gi, const GArray *d, GArray *out)
{
  for (guint i = 1; i < d->len; i++) {
    const AloneDelay *x = &g_array_index (d, AloneDelay, i - 1), *y = x + 1;
    if (D_START (b, y) < D_END (b, x)) {
      culprit (out, gi, x);
      culprit (out, gi, y);
    }
  }
}

/* two groups' delays (each in order, one after another): those of either
 * that run while one of the other does, with it, into out (zero-length
 * ones never do) */
static void
groups_overlap (const SimIterBuilder *b, guint gx, const GArray *x, guint gy, const GArray *y,
                GArray *out)
{
  guint i = 0, j = 0;
  const AloneDelay *last_x = NULL, *last_y = NULL; /* the latest-ending so far */
  while (i < x->len || j < y->len) {
    const AloneDelay *a;
    gboolean from_x;
    if (j >= y->len)
      from_x = TRUE;
    else if (i >= x->len)
      from_x = FALSE;
    else
      from_x = D_START (b, &g_array_index (x, AloneDelay, i)) <=
               D_START (b, &g_array_index (y, AloneDelay, j));
    a = from_x ? &g_array_index (x, AloneDelay, i++) : &g_array_index (y, AloneDelay, j++);
    if (D_END (b, a) <= D_START (b, a))
      continue;
    if (from_x) {
      if (last_y != NULL && D_START (b, a) < D_END (b, last_y)) {
        culprit (out, gx, a);
        culprit (out, gy, last_y);
      }
      if (last_x == NULL || D_END (b, a) > D_END (b, last_x))
        last_x = a;
    } else {
      if (last_x != NULL && D_START (b, a) < D_END (b, last_x)) {
        culprit (out, gy, a);
        culprit (out, gx, last_x);
      }
      if (last_y == NULL || D_END (b, a) > D_END (b, last_y))
        last_y = a;
    }
  }
}

/* group gi's delay (in order, one after another) that a flow from fs to fe
 * meets, if any, into out */
static void
flow_meets (const SimIterBuilder *b, guint gi, const GArray *d, SimTime fs, SimTime fe,
            GArray *out)
{
  guint lo = 0, hi = d->len;
  const AloneDelay *x;
  /* the group's last delay starting before the flow ends; the ones before
   * it end before it starts */
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (D_START (b, &g_array_index (d, AloneDelay, mid)) < fe)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0)
    return;
  x = &g_array_index (d, AloneDelay, lo - 1);
  if (D_END (b, x) > fs && D_END (b, x) > D_START (b, x))
    culprit (out, gi, x);
}

/* what group gi's delays are: SIM_SPAN_TP, _PP, _DP or _CP */
static SimSpanKind
group_kind (const SimIterBuilder *b, int gi)
{
  return gi < b->tp_groups   ? SIM_SPAN_TP
         : gi < b->dp_groups ? SIM_SPAN_PP
         : gi < b->cp_groups ? SIM_SPAN_DP
                             : SIM_SPAN_CP;
}

/* how many delays the build took */
static guint64
alone_count (const SimIterBuilder *b)
{
  guint64 n = 0;
  for (guint gi = 0; gi < b->alone_delays->len; gi++)
    n += ((const GArray *) g_ptr_array_index (b->alone_delays, gi))->len;
  return n;
}

static int
int64_cmp (gconstpointer pa, gconstpointer pb)
{
  gint64 x = *(const gint64 *) pa, y = *(const gint64 *) pb;
  return (x > y) - (x < y);
}

static int
link_group_cmp (gconstpointer pa, gconstpointer pb)
{
  const int *x = pa, *y = pb;
  return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* which ALONE_ flag groups of `kind` are under */
static int
kind_flag (SimSpanKind kind)
{
  return kind == SIM_SPAN_TP   ? ALONE_TP
         : kind == SIM_SPAN_PP ? ALONE_PP
         : kind == SIM_SPAN_CP ? ALONE_CP
                               : ALONE_DP;
}

/* The groups' links: lg gets (link, group) pairs sorted by link, off[l]
 * .. off[l + 1] the range of link l's (nl + 1 entries); returns whether a
 * flow crosses any of them */
static gboolean
alone_links (const SimIterBuilder *b, GArray *lg, guint *off)
{
  int nl = sim_engine_n_links (b->e);
  gboolean flows = FALSE;
  for (guint gi = 0; gi < b->alone_delays->len; gi++) {
    const GArray *links = g_ptr_array_index (b->sc->alone_links, gi);
    if (links == NULL || ((const GArray *) g_ptr_array_index (b->alone_delays, gi))->len == 0)
      continue;
    for (guint i = 0; i < links->len; i++) {
      int x[2] = { g_array_index (links, int, i), (int) gi };
      g_array_append_val (lg, x);
      flows = flows || sim_engine_link_flows (b->e, x[0]) > 0;
    }
  }
  g_array_sort (lg, link_group_cmp);
  memset (off, 0, ((gsize) nl + 1) * sizeof *off);
  for (guint i = 0; i < lg->len; i++)
    off[((const int *) (gconstpointer) lg->data)[2 * i] + 1]++;
  for (int l = 0; l < nl; l++)
    off[l + 1] += off[l];
  return flows;
}

/* Before the run: the kinds of shortcut (ALONE_ flags) not worth a run,
 * because what they would meet is built in.  A link of more than
 * ALONE_SHARED groups (the spine under many replicas' sends) makes the
 * check pair by pair too dear; a link of two bucket groups (the routed
 * experts' and the rest's, leaving together) or of both TP groups and
 * sends (a pipeline inside one node) and a flow of another kind on a TP group's or
 * a stage's sends' links (context-parallel blocks beside every pass) mean
 * they meet all the time; a send or TP collective of the tail (flows, next
 * to the gradient reduction: build_stage_program) on a bucket group's
 * links means the buckets meet them.  0: run it. */
static int
alone_drop (const SimIterBuilder *b)
{
  int nl = sim_engine_n_links (b->e), drop = 0;
  g_autoptr (GArray) lg = g_array_new (FALSE, FALSE, 2 * sizeof (int)); /* (link, group) */
  g_autofree guint *off = g_new (guint, (gsize) nl + 1);
  gboolean flows = alone_links (b, lg, off);
  const int *LG = (const int *) (gconstpointer) lg->data;

  for (int l = 0; l < nl; l++) {
    if (off[l + 1] - off[l] > ALONE_SHARED)
      for (guint i = off[l]; i < off[l + 1]; i++)
        drop |= kind_flag (group_kind (b, LG[2 * i + 1]));
    for (guint i = off[l]; i + 1 < off[l + 1]; i++) {
      SimSpanKind x = group_kind (b, LG[2 * i + 1]), y = group_kind (b, LG[2 * i + 3]);
      if (x != SIM_SPAN_DP && y != SIM_SPAN_DP && x != y)
        drop |= ALONE_PP;
      if (x == SIM_SPAN_DP && y == SIM_SPAN_DP)
        drop |= ALONE_DP;
    }
  }
  for (guint32 f = 0; flows && f < sim_engine_n_flows (b->e); f++) {
    SimActivityId a = sim_engine_flow_activity (b->e, f);
    int n = sim_engine_flow_n_links (b->e, a);
    SimSpanKind kind = n > 0 ? span_of ((SimIterBuilder *) b, a)->kind : SIM_SPAN_GATE;
    for (int i = 0; i < n; i++) {
      int l = sim_engine_flow_link (b->e, a, i);
      for (guint k = off[l]; k < off[l + 1]; k++) {
        SimSpanKind own = group_kind (b, LG[2 * k + 1]);
        if (own == SIM_SPAN_DP ? kind != SIM_SPAN_DP : kind != SIM_SPAN_DP && kind != own)
          drop |= kind_flag (own);
      }
    }
  }
  return drop & b->alone;
}

/* After the run: whether it is the run with every collective's flows.  It
 * is while nothing shares a link with a delay while it runs: until the
 * first such moment the two runs are the same instant by instant; with
 * none, they are the same throughout.  What could share: another delay of
 * its own group (the collectives of a TP group follow one another, each
 * pass waiting for its own; a bucket group's are chained; a stage's sends
 * in one direction usually do), a delay of another group crossing one of
 * its links (the sends that reach a stage from both sides arrive by the
 * same rails), a flow crossing one.  The delays met go into culprits
 * (group << 32 | seq, repeats possible). */
static gboolean
alone_exact (SimIterBuilder *b, GArray *culprits)
{
  int nl = sim_engine_n_links (b->e);
  g_autoptr (GArray) lg = g_array_new (FALSE, FALSE, 2 * sizeof (int)); /* (link, group) */
  g_autofree guint *off = g_new (guint, (gsize) nl + 1);
  g_autoptr (GArray) keys = g_array_new (FALSE, FALSE, sizeof (gint64)); /* group pairs */
  gboolean flows = alone_links (b, lg, off);
  const int *LG = (const int *) (gconstpointer) lg->data;

  for (guint gi = 0; gi < b->alone_delays->len; gi++)
    delays_overlap (b, gi, g_ptr_array_index (b->alone_delays, gi), culprits);
  /* groups sharing a link, each pair once */
  for (int l = 0; l < nl; l++)
    for (guint i = off[l]; i < off[l + 1]; i++)
      for (guint j = i + 1; j < off[l + 1]; j++) {
        gint64 key = (gint64) LG[2 * i + 1] << 32 | LG[2 * j + 1];
        g_array_append_val (keys, key);
      }
  g_array_sort (keys, int64_cmp);
  for (guint k = 0; k < keys->len; k++) {
    gint64 key = g_array_index (keys, gint64, k);
    guint gx = (guint) (key >> 32), gy = (guint) (key & 0xffffffff);
    if (k == 0 || key != g_array_index (keys, gint64, k - 1))
      groups_overlap (b, gx, g_ptr_array_index (b->alone_delays, gx), gy,
                      g_ptr_array_index (b->alone_delays, gy), culprits);
  }
  for (guint32 f = 0; flows && f < sim_engine_n_flows (b->e); f++) {
    SimActivityId a = sim_engine_flow_activity (b->e, f);
    int n = sim_engine_flow_n_links (b->e, a);
    for (int i = 0; i < n; i++) {
      int l = sim_engine_flow_link (b->e, a, i);
      for (guint k = off[l]; k < off[l + 1]; k++) {
        guint gi = (guint) LG[2 * k + 1];
        flow_meets (b, gi, g_ptr_array_index (b->alone_delays, gi), sim_engine_start (b->e, a),
                    sim_engine_end (b->e, a), culprits);
      }
    }
  }
  return culprits->len == 0;
}

#undef D_START
#undef D_END

/* builds the iteration into *b (initialised here); FALSE with error set */
static gboolean
build (SimIterBuilder *b, const SimTopology *topo, const SimModel *model, const SimPlan *plan,
       const SimMemory *ledger, gboolean full, const SimLayerCost *cost, int alone, Scratch *sc,
       GError **error)
{
  builder_init (b, topo, model, plan, ledger, full, cost, alone, sc);
  for (int r = 0; r < b->replicas; r++)
    for (int s = 0; s < plan->pp; s++)
      build_stage_program (b, r, s);
  build_pipeline_sends (b);
  for (int s = 0; s < plan->pp; s++)
    build_stage_update (b, s);
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
static gboolean
rebuilt_counts (const SimIterBuilder *b, int keep, guint64 *once, guint64 *rest)
{
  guint64 saved = 0;
  *once = *rest = 0;
  for (guint32 a = 0; a < b->act_span->len; a++)
    *once += span_of ((SimIterBuilder *) b, a)->mb < 0;
  *rest = b->act_span->len - *once;
  for (int k = 0; k < 5; k++) {
    if (keep & (1 << k)) {
      saved += b->alone_saved_by[k][0] + b->alone_saved_by[k][1];
    } else {
      *once += b->alone_saved_by[k][0];
      *rest += b->alone_saved_by[k][1];
    }
  }
  return 4 * saved >= *once + *rest;
}

/* sim_iteration_run_with_cost on sc */
static SimIteration *
run_on (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
        const SimMemory *ledger, gboolean full, const SimLayerCost *cost, gboolean shortcut,
        Scratch *sc, GError **error)
{
  g_auto (SimIterBuilder) b = { 0 };
  SimIteration *it;
  gboolean ran = FALSE;
  g_autoptr (GHashTable) off = g_hash_table_new_full (key_hash, g_int64_equal, g_free, NULL);
  g_autoptr (GArray) culprits = g_array_new (FALSE, FALSE, sizeof (gint64));
  guint64 spent_activities = 0, spent_events = 0; /* of runs not kept */

  /* TP collectives, pipeline sends and gradient buckets as one delay each
   * where that is exact: first all of them (but those not worth a run:
   * alone_drop); then, a few times at most, all but those something met in
   * the run before, as flows (alone_exact); when that does not settle, the
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
    if (!build (&b, topo, model, plan, ledger, full, cost,
                (masks[level] & ~drop) | (shortcut ? MIRROR_DP : 0), sc, error))
      return NULL;
    if (b.alone == 0)
      break;
    d = alone_drop (&b);
    /* before the first run: delays that stand for less than a quarter of
     * the run's activities are not worth the risk of a second run (where
     * something meets one) that would cost more than one without them
     * (shortcut_worth); where some are dropped, what the build without
     * them would count says so without making it (rebuilt_counts: were
     * more dropped there, fewer still would be left) */
    if (runs == 0 && (d == 0 ? !shortcut_worth (&b) : !rebuilt_counts (&b, b.alone & ~d, &once, &rest))) {
      level = 3;
      builder_clear (&b);
      memset (&b, 0, sizeof b);
      continue;
    }
    if (d == 0) {
      if (!sim_engine_run (b.e, error))
        return NULL;
      exact = alone_exact (&b, culprits);
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
    g_array_sort (culprits, int64_cmp);
    for (guint i = 0; i < culprits->len; i++)
      if (i == 0 || g_array_index (culprits, gint64, i) != g_array_index (culprits, gint64, i - 1))
        g_hash_table_add (off, g_memdup2 (&g_array_index (culprits, gint64, i), sizeof (gint64)));
    if (d == 0 && (culprits->len == 0 || rounds > ALONE_ROUNDS ||
                   (guint64) g_hash_table_size (off) * 10 > alone_count (&b))) {
      do
        level++;
      while (level < 3 && (masks[level] & b.alone) == (masks[level - 1] & b.alone));
      rounds = 0;
      g_hash_table_remove_all (off);
    }
    if (runs >= ALONE_RUNS)
      level = 3;
    g_array_set_size (culprits, 0);
    builder_clear (&b);
    memset (&b, 0, sizeof b);
  }
  if (!ran && !sim_engine_run (b.e, error))
    return NULL;

  spans_from_activities (&b);
  it = g_new0 (SimIteration, 1);
  it->symmetric = !full;
  it->dp_mirrored = b.dp_mirror;
  it->gemm_table = b.gpu->gemm != NULL && b.gpu->gemm->len > 0;
  analyse (it, &b);
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
  return run_on (topo, model, plan, ledger, full, cost, TRUE, &sc, error);
}

SimIteration *
sim_iteration_run_reference (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
                             const SimMemory *ledger, gboolean full, GError **error)
{
  g_auto (Scratch) sc = { 0 };
  return run_on (topo, model, plan, ledger, full, NULL, FALSE, &sc, error);
}

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
 * periodic once every stage has a steady pair (m >= p); interleaved once
 * the warm-up is not the whole program (m > p).  FALSE when the schedule
 * has no steady phase. */
static gboolean
steady_counts (const SimPlan *p, guint64 *m1, guint64 *k)
{
  guint64 pp = (guint64) p->pp;
  if (p->schedule == SIM_SCHEDULE_1F1B) {
    *k = 1;
    *m1 = MAX (pp, 2);
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
 * may then be off by, per period, is that millionth), and the activation
 * peaks are equal.  The critical path's composition is not checked: it may
 * switch between paths of equal length from one run to the next. */
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
  SimPlan q = *plan; /* shallow: read only, and never freed */
  guint64 once, rest;
  int alone = ALONE_TP | ALONE_PP | ALONE_DP | ALONE_CP, keep;
  q.micro_batches = m;
  q.global_batch = m * q.micro_batch * (guint64) q.dp;
  if (!build (&b, topo, model, &q, ledger, full, NULL, alone | MIRROR_DP, sc, error))
    return FALSE;
  /* as the runs will be built: without the shortcuts not worth a run
   * (run_on drops them before running; the gradient buckets' flows, when
   * dropped, can outweigh every micro-batch's work), counted from this
   * build (rebuilt_counts) */
  keep = b.alone;
  if (keep != 0)
    keep &= ~alone_drop (&b);
  if (!rebuilt_counts (&b, keep, &once, &rest))
    rebuilt_counts (&b, 0, &once, &rest);
  probe[0] = (double) once;
  probe[1] = (double) rest / (double) m;
  return TRUE;
}

/* one run of m micro-batches, the rest of the plan as given */
static SimIteration *
steady_run (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
            const SimMemory *ledger, gboolean full, guint64 m, Scratch *sc, GError **error)
{
  SimPlan q = *plan; /* shallow: read only, and never freed */
  q.micro_batches = m;
  q.global_batch = m * q.micro_batch * (guint64) q.dp;
  return run_on (topo, model, &q, ledger, full, NULL, TRUE, sc, error);
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
    return run_on (topo, model, plan, ledger, full, NULL, TRUE, &sc, error);
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
  stage_averages (it, plan->pp);
  throughput (it, model, plan, sim_topology_gpu_type (topo, 0));
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

double
sim_iteration_bound_s (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
                       const SimMemory *ledger)
{
  int p = plan->pp, v = plan->virtual_stages;
  double m = (double) plan->micro_batches, before_f = 0, before_b = 0, opt0 = 0, bound = 0;
  SimLayerCost c;

  sim_cost_layer (model, plan, sim_topology_gpu_type (topo, 0), &c);
  for (int s = 0; s < p; s++) {
    const SimStageMemory *sm = &g_array_index (ledger->stages, SimStageMemory, s);
    double local = (double) sm->params, work = 0, fmin = G_MAXDOUBLE, bmin = G_MAXDOUBLE, opt;
    for (int k = 0; k < v; k++) {
      int lc = (int) (sim_plan_chunk_layers (plan, model, s, k) + sim_plan_chunk_mtp_layers (plan, s, k));
      int nm = 0, nd;
      gboolean first = s == 0 && k == 0, last = s == p - 1 && k == v - 1;
      guint64 layer = sim_plan_chunk_first_layer (plan, model, s, k);
      double f, r = 0, bw;
      if (sim_model_is_moe (model))
        for (int l = 0; l < lc; l++)
          nm += sim_model_layer_is_moe (model, layer + (guint64) l) ? 1 : 0;
      nd = lc - nm;
      /* as build_forward, build_recompute and build_backward charge them */
      f = nd * c.layer_fwd_s + nm * c.moe_fwd_s + (first ? c.embed_fwd_s + c.offload_fwd_s : 0) +
          (last ? sim_cost_tail_s (&c, plan, FALSE) : 0);
      if (c.layer_recompute_s > 0 || c.moe_recompute_s > 0)
        r = nd * c.layer_recompute_s + nm * c.moe_recompute_s;
      bw = r + nd * c.layer_bwd_s + nm * c.moe_bwd_s +
           (first ? c.embed_bwd_s + c.offload_bwd_s : 0) +
           (last ? sim_cost_tail_s (&c, plan, TRUE) : 0);
      work += m * (f + bw);
      fmin = MIN (fmin, f);
      bmin = MIN (bmin, bw);
    }
    /* as build_optimizer steps each rank's shard */
    local = trainable_dense (model, plan, sm) + (double) sm->expert_params;
    if (plan->zero >= 1 && plan->zero < 3)
      local = trainable_dense (model, plan, sm) / (plan->dp * plan->cp) +
              (double) sm->expert_params / plan->edp;
    opt = c.optimizer_s_per_param * local;
    if (s == 0)
      opt0 = opt;
    bound = MAX (bound, before_f + work + MAX (opt, before_b + opt0));
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
