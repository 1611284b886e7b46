/* sim-iteration-private.h — what the parts of the iteration builder share
 * (sim-iteration.c and its seams: -build.c the activities of a plan,
 * -shortcuts.c the collectives run as delays of their time alone,
 * -analysis.c the finished run read back, -steady.c the steady state
 * extrapolated).  Internal to libsim: not installed. */
#pragma once

#include "sim-iteration.h"
#include "sim-collective.h"
#include "sim-network.h"
#include "sim-schedule.h"
#include "sim-vec.h"

G_BEGIN_DECLS

/* Megatron's gradient bucket: max(40M, 1M x dp) parameters
 * (megatron/core/distributed/distributed_data_parallel.py, bucket_size) */
#define BUCKET_PARAMS 40000000.0

typedef struct {
  SimSpanKind kind;
  int stage, replica, mb, chunk;
  SimTime start, end;
  gboolean paired; /* SimSpan.paired */
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
  GArray *spans;          /* Span */
  U32Vec act_span;        /* per activity: its span */
  U8Vec is_compute;       /* per activity */
  U32Vec edges;           /* SimActivityId pairs (after, before) */
  GHashTable *choices;    /* ChoiceKey -> SimCollChoice */
  GHashTable *nodes_seen; /* scratch of choose(): the nodes of one group */
  GHashTable *alone_s;    /* AloneKey -> SimTime *: a collective's time alone */
  GPtrArray *alone_links; /* GArray of int per group, NULL until its first delay */
} Scratch;

enum { ALONE_TP = 1, ALONE_PP = 2, ALONE_DP = 4, ALONE_CP = 16 };
/* the kinds of group those flags name, for what is counted per kind */
typedef enum { ALONE_KIND_TP, ALONE_KIND_PP, ALONE_KIND_DP, ALONE_KIND_CP, ALONE_KINDS } AloneKind;
/* the ALONE_ flag of a kind */
static inline int
alone_flag (AloneKind k)
{
  static const int flag[ALONE_KINDS] = {
    [ALONE_KIND_TP] = ALONE_TP, [ALONE_KIND_PP] = ALONE_PP,
    [ALONE_KIND_DP] = ALONE_DP, [ALONE_KIND_CP] = ALONE_CP,
  };
  return flag[k];
}
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
  Scratch *sc; /* borrowed: e ... nodes_seen below are its */
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
  /* of each chunk's layers, those full recomputation runs again, dense
   * and MoE [s * v + c] (sim_plan_chunk_recomputed) */
  int *rec_dense_of, *rec_moe_of;
  double moe_layer_params, expert_layer_params;
  double *ep_layer_s;
  GError *error; /* the first collective no algorithm could run */
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
  SimActivityId *mirror;    /* DualPipe: [r * pp + s], the exchange of its copies' gradients */
  GPtrArray *grads;         /* [r * pp + s]: GArray of GradEntry, in readiness order */
  /* TP collectives and pipeline sends as one delay each of their time
   * alone (alone_exact), by group: the TP group of replica r, stage s and
   * CP rank c is [(r * pp + s) * cp + c]; the sends of replica r's stage s
   * up (u 0) or down (u 1) the ranks, forward (d 0) or backward (d 1), are
 * [tp_groups + ((r * pp + s) * 2 + u) * 2 + d];
   * the gradient buckets and parameter gathers of stage s over the
   * data-parallel group of TP rank t are [dp_groups + s * tp + t], and
   * over expert data-parallel group x [dp_groups + pp * tp + s * etp * ep
   * + x]; the context-parallel blocks of replica r's stage s and TP rank t
   * [cp_groups + (r * pp + s) * tp + t].
   * Each group's links are in sc->alone_links, its delays (in program
   * order) here. */
  int alone;                    /* ALONE_TP | ALONE_PP | ALONE_DP | ALONE_CP */
  gboolean tail;                /* the current pass is a tail one: flows all the same */
  int tp_groups, dp_groups;     /* where the sends' groups begin, and the buckets' */
  int cp_groups;                /* and the context-parallel blocks' */
  GPtrArray *alone_delays;      /* GArray of AloneDelay */
  guint32 *alone_seq;           /* per group: its collectives or sends so far */
  GHashTable *alone_off;        /* borrowed: (group << 32 | seq) of those taken as flows */
  AloneMemo *alone_memo;        /* per group: its last collective's key and time alone */
  guint64 alone_saved;          /* the activities the delays stand for, less theirs */
  struct {
    guint64 once;               /* the same by kind: of no micro-batch */
    guint64 per_mb;             /* and of a micro-batch */
  } alone_saved_by[ALONE_KINDS];
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
  /* per stage: one TP all-reduce of an amax (4 bytes) under current
   * scaling or NVFP4 with sequence parallelism (tp_amax_reduced); < 0 not
   * yet chosen */
  double *tp_amax_s;
  SendGroup *sends;
  int n_sends;
  /* the GPUs of each TP group, tp of them from [((r * pp + s) * cp + c) * tp] */
  int *tp_gpus;
  /* [r * pp + s]: how many times the nominal time the stage's compute
   * takes: the expected slowest of the job's GPUs (sim-variability.h), or
   * a slow GPU of the stage (--slow-gpu, --slow-node) where slower */
  double *stage_scale;
} SimIterBuilder;

/* LoRA: one layer's adapter parameters on one TP rank, the only ones with
 * gradients to reduce and an optimizer step (sim-iteration.c) */
double sim_iter_lora_rank_params (const SimModel *m, const SimPlan *p);
/* the parameters of stage sm (per GPU) that have gradients and an
 * optimizer step, less the routed experts': all of them, or under LoRA the
 * adapters of its layers (the frozen base, embedding and output layer have
 * neither): what its gradients reduce */
double sim_iter_trainable_dense (const SimModel *m, const SimPlan *p, const SimStageMemory *sm);

/* a span runs from its first activity's start to its last one's end */
void sim_iter_spans_from_activities (SimIterBuilder *b);

/* the span activity a belongs to */
Span *sim_iter_span_of (SimIterBuilder *b, SimActivityId a);

/* b set up for plan on topo (the engine and network of sc, kept between
 * runs), nothing built yet */
void sim_iter_builder_init (SimIterBuilder *b, const SimTopology *topo, const SimModel *model,
                            const SimPlan *plan, const SimMemory *ledger, gboolean full,
                            const SimLayerCost *cost, int alone, Scratch *sc);

/* frees what b owns; safe on a zeroed builder and twice */
void sim_iter_builder_clear (SimIterBuilder *b);

/* stage s after its last backward: gradients, optimizer, ZeRO gather */
void sim_iter_build_stage_update (SimIterBuilder *b, int s);

/* replica r's stage s, pass by pass in program order, and the gradient
 * entries it finalises */
void sim_iter_build_stage_program (SimIterBuilder *b, int r, int s);

/* phase 2: the sends between the stages, after every pass is built */
void sim_iter_build_pipeline_sends (SimIterBuilder *b);

/* the finished run of b read into it: per-stage time and memory, their
 * averages, the critical path, throughput */
void sim_iter_analyse (SimIteration *it, SimIterBuilder *b);

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
gboolean sim_iter_alone_exact (SimIterBuilder *b, GArray *culprits);

/* Before the run: the kinds of shortcut (ALONE_ flags) not worth a run,
 * because what they would meet is built in.  A link of more than
 * ALONE_SHARED groups (the spine under many replicas' sends) makes the
 * check pair by pair too dear; a link of two bucket groups (the routed
 * experts' and the rest's, leaving together) or of both TP groups and
 * sends (a pipeline inside one node) and a flow of another kind on a TP group's or
 * a stage's sends' links (context-parallel blocks beside every pass) mean
 * they meet all the time; a send or TP collective of the tail (flows, next
 * to the gradient reduction: sim_iter_build_stage_program) on a bucket group's
 * links means the buckets meet them.  0: run it. */
int sim_iter_alone_drop (const SimIterBuilder *b);

/* how many delays the build took */
guint64 sim_iter_alone_count (const SimIterBuilder *b);

/* 64-bit keys of two small halves (group << 32 | seq) mixed (g_int64_hash folds the halves with xor,
 * which makes small groups and small seqs collide) */
guint sim_iter_key_hash (gconstpointer p);

/* qsort order of gint64 */
int sim_iter_int64_cmp (gconstpointer pa, gconstpointer pb);

/* tokens/s, FLOPs, MFU and HFU of it's step */
void sim_iter_throughput (SimIteration *it, const SimModel *model, const SimPlan *plan,
                          const SimGpuType *gpu);

/* the per-stage means of it's p stages */
void sim_iter_stage_averages (SimIteration *it, int p);

/* sim_iteration_run_with_cost on sc */
SimIteration *sim_iter_run_on (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
                               const SimMemory *ledger, gboolean full, const SimLayerCost *cost,
                               gboolean shortcut, Scratch *sc, GError **error);

/* What b would count built again with only the delays of `keep` (ALONE_
 * flags) and the rest as flows, before any run (nothing taken off as a
 * culprit): each delay given up becomes the activities its flows are
 * (sim_collective_alone_counted), in its own span, which alone_saved_by
 * holds by kind and by micro-batch.  Gives the activities of no
 * micro-batch (`once`) and of the micro-batches (`rest`), and returns
 * whether the delays kept would be worth a run (shortcut_worth) */
gboolean sim_iter_rebuilt_counts (const SimIterBuilder *b, int keep, guint64 *once, guint64 *rest);

/* builds the iteration into *b (initialised here); FALSE with error set */
gboolean sim_iter_build (SimIterBuilder *b, const SimTopology *topo, const SimModel *model,
                         const SimPlan *plan, const SimMemory *ledger, gboolean full,
                         const SimLayerCost *cost, int alone, Scratch *sc, GError **error);

/* frees what sc keeps between runs */
void sim_iter_scratch_clear (Scratch *sc);

/* what group gi's delays are: SIM_SPAN_TP, _PP, _DP or _CP */
SimSpanKind sim_iter_group_kind (const SimIterBuilder *b, int gi);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Scratch, sim_iter_scratch_clear)
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SimIterBuilder, sim_iter_builder_clear)

G_END_DECLS
