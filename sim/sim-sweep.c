/* sim-sweep.c — see sim-sweep.h */
#include "sim-sweep.h"
#include "sim-sweep-private.h"

#include "sim-calibration.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim-balance.h"
#include "sim-calibration.h"
#include "sim-cost.h"
#include "sim-error.h"
#include "sim-input.h"
#include "sim-iteration.h"
#include "sim-json.h"
#include "sim-json-read.h"
#include "sim-memory.h"
#include "sim-plan.h"
#include "sim-report.h"
#include "sim-run.h"

typedef SimSweepRow Row;

/* The sweep's threads live as long as the sweep, across its phases (the
 * duplicate check, the first look, the waves, the leaders), so that each
 * keeps its warm engine (sim-engine.c's spare per thread), routes and
 * memory from one phase to the next: a thread's first whole simulation
 * of a leader took about twice as long as the same one again.  A phase
 * pushes jobs and waits for its batch of them. */
typedef struct {
  GMutex lock;
  GCond done;
  int left; /* jobs pushed and not yet done */
} Batch;

typedef struct {
  GFunc fn;
  gpointer data, user;
  Batch *batch;
} Job;

static void batch_wait (Batch *b);

/* the leaders a sweep simulates exactly ahead of sim_sweep_rank, at most */
#define SWEEP_AHEAD_MAX 4

struct _SimSweep {
  GPtrArray *topos;      /* SimTopology*, by node count index */
  GArray *node_counts;   /* int */
  const SimModel *model;
  guint64 global_batch;
  guint64 seq_len;       /* tokens per sequence; 0: the model's */
  double gpu_variation;  /* the plans' gpu-variation; < 0: their default */
  char *routing;         /* the experts' routing every plan is given (plan items,
                          * ",moe-imbalance=1.2,..."); NULL: the plans' own */
  /* set by sim_sweep_enumerate: the items every enumerated label carries
   * after its global batch (the sequence, the spread of GPU speeds and the
   * routing, as plan items: ",seq=8192,..." or ""), and the plan they
   * make, which each layout's plan starts from (NULL where they do not
   * parse, as no label then would); the recompute-modules of the
   * selective recomputation it tries, or NULL */
  char *shared;
  SimPlanRequest *shared_request;
  char *modules;
  int fp8_modes[2];      /* SimFp8 values to try, -1 for none */
  int fp4_mode;          /* 0: no FP4 layouts; 1: FP4 alone; 2: FP4 beside fp8_modes */
  SimSweepConstraints constraints;
  char *headroom_reason; /* the pruning reason of --min-headroom, or NULL */
  GPtrArray *rows;
  guint layouts;         /* enumerated, before sim_sweep_keep_shard */
  gint done;
  gint simulated;        /* rows whose simulation ran, for progress */
  int total;
  SimSweepProgress progress;
  gpointer progress_data;
  int keep;              /* sim_sweep_set_keep: 0 simulates every layout that fits */
  int threads;           /* sim_sweep_set_threads' or sim_sweep_run's */
  GThreadPool *pool;     /* its threads, NULL until the first job (job_push) */
  GHashTable *want_runs; /* Row*: the leaders whose full run sim_sweep_rank keeps */
  GHashTable *runs;      /* Row* -> SimRun*: those runs, then the best's alone */
  GMutex runs_lock;
  /* leaders simulated exactly ahead of sim_sweep_rank while the waves run
   * (ahead_of_rank): Row* -> SimRun* (NULL when it failed), under
   * runs_lock; their jobs, of ahead_batch while ahead_live */
  GHashTable *ahead;
  GPtrArray *leaders;    /* the best rows simulated so far, best first, at most keep */
  Batch ahead_batch;
  gboolean ahead_live;
  Job ahead_jobs[SWEEP_AHEAD_MAX];
  int n_ahead;
  int ahead_used;        /* leaders the last sim_sweep_rank took from sw->ahead */
};

typedef SimSweep Sweep;

guint64
sim_sweep_default_global_batch (const SimModel *model, int gpus)
{
  if (model->default_global_batch > 0)
    return model->default_global_batch;
  return SIM_SWEEP_SEQUENCES_PER_GPU * (guint64) MAX (gpus, 1);
}

SimSweep *
sim_sweep_new (const SimModel *model, guint64 global_batch)
{
  SimSweep *sw = g_new0 (SimSweep, 1);
  sw->topos = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_topology_free);
  sw->node_counts = g_array_new (FALSE, FALSE, sizeof (int));
  sw->model = model;
  sw->global_batch = global_batch;
  sw->fp8_modes[0] = SIM_FP8_OFF;
  sw->fp8_modes[1] = -1;
  sw->gpu_variation = -1;
  sw->rows = g_ptr_array_new_with_free_func (sim_run_summary_free);
  sw->want_runs = g_hash_table_new (g_direct_hash, g_direct_equal);
  sw->runs = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, (GDestroyNotify) sim_run_free);
  g_mutex_init (&sw->runs_lock);
  sw->ahead = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, (GDestroyNotify) sim_run_free);
  sw->leaders = g_ptr_array_new ();
  return sw;
}

void
sim_sweep_set_fp8 (SimSweep *sw, SimFp8 fp8, gboolean with_bf16)
{
  sw->fp8_modes[0] = with_bf16 ? SIM_FP8_OFF : (int) fp8;
  sw->fp8_modes[1] = with_bf16 && fp8 != SIM_FP8_OFF ? (int) fp8 : -1;
}

void
sim_sweep_set_fp4 (SimSweep *sw, gboolean with_others)
{
  sw->fp4_mode = with_others ? 2 : 1;
}

static gboolean
divides (guint64 a, guint64 b)
{
  return a > 0 && b % a == 0;
}

static int
compare_int (gconstpointer a, gconstpointer b)
{
  int x = *(const int *) a, y = *(const int *) b;
  return (x > y) - (x < y);
}

/* a list sorted and without repeats, so that the enumeration order (and so
 * every row's index) does not depend on how the user wrote it */
static int
sorted_choices (int *list, int n)
{
  int k = 0;
  qsort (list, (size_t) n, sizeof *list, compare_int);
  for (int i = 0; i < n; i++)
    if (k == 0 || list[i] != list[k - 1])
      list[k++] = list[i];
  return k;
}

void
sim_sweep_set_constraints (SimSweep *sw, const SimSweepConstraints *c)
{
  g_return_if_fail (c->n_tp >= 0 && c->n_tp <= SIM_SWEEP_MAX_CHOICES);
  g_return_if_fail (c->n_cp >= 0 && c->n_cp <= SIM_SWEEP_MAX_CHOICES);
  g_return_if_fail (c->n_pp >= 0 && c->n_pp <= SIM_SWEEP_MAX_CHOICES);
  g_return_if_fail (c->n_ep >= 0 && c->n_ep <= SIM_SWEEP_MAX_CHOICES);
  g_return_if_fail (c->n_etp >= 0 && c->n_etp <= SIM_SWEEP_MAX_CHOICES);
  g_return_if_fail (c->min_headroom >= 0 && c->min_headroom < 1);
  sw->constraints = *c;
  sw->constraints.n_tp = sorted_choices (sw->constraints.tp, c->n_tp);
  sw->constraints.n_cp = sorted_choices (sw->constraints.cp, c->n_cp);
  sw->constraints.n_pp = sorted_choices (sw->constraints.pp, c->n_pp);
  sw->constraints.n_ep = sorted_choices (sw->constraints.ep, c->n_ep);
  sw->constraints.n_etp = sorted_choices (sw->constraints.etp, c->n_etp);
  g_clear_pointer (&sw->headroom_reason, g_free);
  if (c->min_headroom > 0)
    sw->headroom_reason = g_strdup_printf ("fits with less than %g%% of usable memory free (--min-headroom)",
                                           100 * c->min_headroom);
}

gboolean
sim_sweep_check_experts (const SimModel *m, const SimSweepConstraints *c, GError **error)
{
  if (!sim_model_is_moe (m) && (c->n_ep > 0 || c->n_etp > 0)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: %s has no mixture-of-experts layers",
                 c->n_ep > 0 ? "ep" : "etp", m->name);
    return FALSE;
  }
  for (int i = 0; i < c->n_ep; i++)
    if (!divides ((guint64) c->ep[i], m->moe.experts)) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                   "--ep %d must divide the %" G_GUINT64_FORMAT " routed experts of %s, so each "
                   "expert-parallel rank holds whole experts", c->ep[i], m->moe.experts, m->name);
      return FALSE;
    }
  for (int i = 0; i < c->n_etp; i++)
    if (!divides ((guint64) c->etp[i], m->moe.ffn_hidden)) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--etp %d must divide the expert width %" G_GUINT64_FORMAT " of %s",
                   c->etp[i], m->moe.ffn_hidden, m->name);
      return FALSE;
    }
  return TRUE;
}

const SimSweepConstraints *
sim_sweep_constraints (const SimSweep *sw)
{
  return &sw->constraints;
}

/* the first value of a dimension: the user's smallest, or 1 */
static int
first_choice (const int *list, int n)
{
  return n > 0 ? list[0] : 1;
}

/* the value after v: the next of the user's list, or the default range's
 * (v * 2 where it is powers of two, else v + 1); G_MAXINT after the last */
static int
next_choice (const int *list, int n, int v, gboolean pow2)
{
  if (n == 0)
    return pow2 ? v * 2 : v + 1;
  for (int i = 0; i < n; i++)
    if (list[i] > v)
      return list[i];
  return G_MAXINT;
}

void
sim_sweep_free (SimSweep *sw)
{
  if (sw == NULL)
    return;
  /* the leaders simulated ahead of sim_sweep_rank (ahead_of_rank) read the
   * rows, the clusters and the model: a sweep freed without ranking waits
   * for them first */
  if (sw->ahead_live)
    batch_wait (&sw->ahead_batch);
  g_ptr_array_unref (sw->rows);
  g_ptr_array_unref (sw->topos);
  g_free (sw->headroom_reason);
  g_free (sw->routing);
  g_free (sw->shared);
  sim_plan_request_free (sw->shared_request);
  g_free (sw->modules);
  g_array_unref (sw->node_counts);
  g_hash_table_unref (sw->want_runs);
  g_hash_table_unref (sw->runs);
  g_hash_table_unref (sw->ahead);
  g_ptr_array_unref (sw->leaders);
  g_mutex_clear (&sw->runs_lock);
  if (sw->pool != NULL)
    g_thread_pool_free (sw->pool, FALSE, TRUE);
  g_free (sw);
}

void
sim_sweep_add_cluster (SimSweep *sw, SimTopology *topo, int nodes)
{
  g_ptr_array_add (sw->topos, topo);
  g_array_append_val (sw->node_counts, nodes);
}

void
sim_sweep_set_seq_len (SimSweep *sw, guint64 seq_len)
{
  sw->seq_len = seq_len;
}

void
sim_sweep_set_gpu_variation (SimSweep *sw, double sigma)
{
  sw->gpu_variation = sigma;
}

gboolean
sim_sweep_set_routing (SimSweep *sw, double imbalance, double capacity, gboolean pad, GError **error)
{
  g_autoptr (GString) items = g_string_new (NULL);
  g_autoptr (SimPlanRequest) check = sim_plan_request_new ();
  if (imbalance <= 0 && capacity <= 0 && !pad)
    return TRUE;
  if (imbalance > 0)
    g_string_append_printf (items, ",moe-imbalance=%g", imbalance);
  if (capacity > 0)
    g_string_append_printf (items, ",moe-expert-capacity-factor=%g", capacity);
  if (pad)
    g_string_append (items, ",moe-pad-expert-input-to-capacity=true");
  /* the plans' own checks of the values (items + 1: without the first
   * comma), and a mixture-of-experts model for them */
  if (!sim_plan_request_parse_string (check, items->str + 1, error))
    return FALSE;
  /* what every layout's plan would refuse, refused once, in its words
   * (sim_plan_resolve) */
  if (!sim_model_is_moe (sw->model)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: %s has no mixture-of-experts layers",
                 imbalance > 0  ? "moe-imbalance"
                 : capacity > 0 ? "moe-expert-capacity-factor"
                                : "moe-pad-expert-input-to-capacity",
                 sw->model->name);
    return FALSE;
  }
  if (pad && capacity <= 0 && sw->model->moe.capacity_factor <= 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--moe-pad-expert-input-to-capacity: expected a capacity, --moe-expert-capacity-factor "
                 "(dropless experts have none to pad to)");
    return FALSE;
  }
  g_free (sw->routing);
  sw->routing = g_string_free (g_steal_pointer (&items), FALSE);
  return TRUE;
}

const SimTopology *
sim_sweep_cluster (const SimSweep *sw, int nodes)
{
  for (guint i = 0; i < sw->node_counts->len; i++)
    if (g_array_index (sw->node_counts, int, i) == nodes)
      return g_ptr_array_index (sw->topos, i);
  return NULL;
}

GPtrArray *
sim_sweep_rows (const SimSweep *sw)
{
  return sw->rows;
}

/* a row of label text alone: the dominated layouts, pruned as they are
 * made, whose request is never built */
static void
add (Sweep *sw, int nodes, const char *reason, const char *fmt, ...) G_GNUC_PRINTF (4, 5);

static void
add (Sweep *sw, int nodes, const char *reason, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *label = NULL;
  Row *r;
  va_start (ap, fmt);
  label = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  r = sim_run_summary_new ((int) sw->rows->len, label, nodes);
  r->pruned = reason != NULL ? g_strdup (reason) : NULL;
  g_ptr_array_add (sw->rows, r);
}

/* the label of an enumerated layout, for output: the plan string
 * layout_request's request is the value of */
static char *
layout_label (const Sweep *sw, const SimSweepLayout *l)
{
  g_autofree char *split = l->ep > 0 ? g_strdup_printf (",ep=%d,etp=%d%s", l->ep, l->etp,
                                                        l->moe_a2a_overlap ? ",overlap-moe-expert-parallel-comm" : "")
                                     : NULL;
  g_autofree char *vs = l->virtual_stages > 0 ? g_strdup_printf (",v=%d", l->virtual_stages) : NULL;
  g_autofree char *fs = l->fp4 != SIM_FP4_OFF ? g_strdup_printf (",fp4=%s", sim_fp4_name (l->fp4))
                        : l->fp8 != SIM_FP8_OFF ? g_strdup_printf (",fp8=%s", sim_fp8_name (l->fp8))
                                                : NULL;
  g_autofree char *rc = l->recompute == SIM_RECOMPUTE_SELECTIVE
                            ? g_strdup_printf ("selective,recompute-modules=%s", sw->modules)
                            : NULL;
  return g_strdup_printf ("tp=%d,cp=%d,pp=%d,dp=%d%s,mb=%d,gb=%" G_GUINT64_FORMAT "%s,schedule=%s%s,recompute=%s,zero=%d%s",
                          l->tp, l->cp, l->pp, l->dp, split != NULL ? split : "", l->micro_batch,
                          l->global_batch, sw->shared, sim_schedule_name (l->schedule), vs != NULL ? vs : "",
                          rc != NULL ? rc : sim_recompute_name (l->recompute), l->zero, fs != NULL ? fs : "");
}

/* The request of an enumerated layout as parsing its label would make it
 * (the same values, the same options given), set item by item on a copy
 * of the sweep's shared items; NULL where an item is refused */
static SimPlanRequest *
layout_request (const Sweep *sw, const SimSweepLayout *l)
{
  g_autoptr (SimPlanRequest) p = NULL;
  if (sw->shared_request == NULL)
    return NULL;
  p = sim_plan_request_copy (sw->shared_request);
  if (!sim_plan_request_set_number (p, "tp", (guint64) l->tp, NULL) ||
      !sim_plan_request_set_number (p, "cp", (guint64) l->cp, NULL) ||
      !sim_plan_request_set_number (p, "pp", (guint64) l->pp, NULL) ||
      !sim_plan_request_set_number (p, "dp", (guint64) l->dp, NULL) ||
      (l->ep > 0 && (!sim_plan_request_set_number (p, "ep", (guint64) l->ep, NULL) ||
                     !sim_plan_request_set_number (p, "etp", (guint64) l->etp, NULL))) ||
      (l->moe_a2a_overlap && !sim_plan_request_set_number (p, "overlap-moe-expert-parallel-comm", 1, NULL)) ||
      !sim_plan_request_set_number (p, "micro-batch", l->micro_batch, NULL) ||
      !sim_plan_request_set_number (p, "global-batch", l->global_batch, NULL) ||
      !sim_plan_request_set_number (p, "schedule", l->schedule, NULL) ||
      (l->virtual_stages > 0 && !sim_plan_request_set_number (p, "virtual-stages", l->virtual_stages, NULL)) ||
      !sim_plan_request_set_number (p, "recompute", l->recompute, NULL) ||
      (l->recompute == SIM_RECOMPUTE_SELECTIVE && !sim_plan_request_set (p, "recompute-modules", sw->modules, NULL, NULL)) ||
      !sim_plan_request_set_number (p, "zero", l->zero, NULL) ||
      (l->fp8 != SIM_FP8_OFF && !sim_plan_request_set_number (p, "fp8", l->fp8, NULL)) ||
      (l->fp4 != SIM_FP4_OFF && !sim_plan_request_set_number (p, "fp4", l->fp4, NULL)))
    return NULL;
  return g_steal_pointer (&p);
}

/* a row of an enumerated layout: its label from it, and it kept */
static void
add_layout (Sweep *sw, int nodes, const char *reason, const SimSweepLayout *l)
{
  g_autofree char *label = layout_label (sw, l);
  Row *r = sim_run_summary_new ((int) sw->rows->len, label, nodes);
  r->enumerated = *l;
  r->pruned = reason != NULL ? g_strdup (reason) : NULL;
  g_ptr_array_add (sw->rows, r);
}

/* r pruned for reason (taken): a pruned layout is not run again, so the
 * row drops its request (a sweep holds up to hundreds of thousands of
 * rows, and a request is about a kilobyte); it keeps its global batch */
static void
prune (Row *r, char *reason)
{
  r->pruned = reason;
  g_clear_pointer (&r->request, sim_plan_request_free);
}

/* what a layout is once resolved: two spellings of one plan (an option
 * given that the defaults would have chosen anyway) share a key */
static char *
resolved_key (const SimPlan *p, int nodes)
{
  g_autofree char *order = sim_plan_order_string (p);
  return g_strdup_printf ("%d:%d,%d,%d,%d,%d,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%d,%d,%d,%d,%d,%d,%d,%s,"
                          "%" G_GUINT64_FORMAT ",%u,%d,%g,%g,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%u,%d,%s,%d,%g,%d,%d",
                          nodes, p->tp, p->cp, p->pp, p->dp, p->micro_batch, p->global_batch, p->seq_len,
                          (int) p->schedule, p->virtual_stages, (int) p->recompute, p->sequence_parallel,
                          p->flash_attention, p->zero, (int) p->recipe, order, p->lora_rank,
                          p->lora_targets, p->qlora, p->context_reserve_bytes, p->fragmentation,
                          p->overlap, (int) p->framework, p->tp_comm_overlap, p->torch_compile, p->overlap_param_gather,
                          p->attention_kernel, (int) p->fp8, p->fp8_params, p->ep, p->etp,
                          p->first_stage_layers, p->last_stage_layers, p->embedding_in_split,
                          p->loss_in_split, (int) p->fp4, p->recompute_modules, p->mtp_layers,
                          p->layout != NULL ? p->layout->text : "", p->moe_a2a_overlap, p->moe_imbalance,
                          (int) p->recompute_method, p->recompute_num_layers);
}

/* rows [first, last) of the sweep: one task of a pool */
typedef struct {
  guint first, last;
} Slice;

/* rows handed to a thread at a time where each takes tens of microseconds
 * (a label resolved, a row's first look), about what a hand-over costs */
#define ROW_SLICE 32

static void
run_job (gpointer data, gpointer unused)
{
  Job *j = data;
  j->fn (j->data, j->user);
  g_mutex_lock (&j->batch->lock);
  if (--j->batch->left == 0)
    g_cond_broadcast (&j->batch->done);
  g_mutex_unlock (&j->batch->lock);
}

static void
batch_init (Batch *b)
{
  g_mutex_init (&b->lock);
  g_cond_init (&b->done);
  b->left = 0;
}

/* fn (data, user) on one of sw->threads threads, as job j of batch b */
static void
job_push (Sweep *sw, Batch *b, Job *j, GFunc fn, gpointer data, gpointer user)
{
  if (sw->pool == NULL)
    sw->pool = g_thread_pool_new (run_job, NULL, MAX (sw->threads, 1), TRUE, NULL);
  else if (g_thread_pool_get_max_threads (sw->pool) != MAX (sw->threads, 1))
    g_thread_pool_set_max_threads (sw->pool, MAX (sw->threads, 1), NULL);
  *j = (Job) { fn, data, user, b };
  g_mutex_lock (&b->lock);
  b->left++;
  g_mutex_unlock (&b->lock);
  g_thread_pool_push (sw->pool, j, NULL);
}

/* until every job of b is done; then b is cleared */
static void
batch_wait (Batch *b)
{
  g_mutex_lock (&b->lock);
  while (b->left > 0)
    g_cond_wait (&b->done, &b->lock);
  g_mutex_unlock (&b->lock);
  g_mutex_clear (&b->lock);
  g_cond_clear (&b->done);
}

/* fn (slice, user) for rows [0, n) in slices of `per`, and wait;
 * slices and jobs: room for n / per + 1 */
static void
run_slices (Sweep *sw, GFunc fn, gpointer user, Slice *slices, Job *jobs, guint n, guint per)
{
  Batch b;
  batch_init (&b);
  for (guint i = 0, k = 0; i < n; i += per, k++) {
    slices[k] = (Slice) { i, MIN (i + per, n) };
    job_push (sw, &b, &jobs[k], fn, &slices[k], user);
  }
  batch_wait (&b);
}

/* the resolved keys of a slice of rows (dedupe) */
typedef struct {
  Sweep *sw;
  char **keys;
} Keys;

/* the request of the layout the enumeration chose for a row (NULL where
 * an item is refused); the enumeration's rows are made with their
 * layouts, so a label is never parsed back */
static SimPlanRequest *
enumerated_request (const Sweep *sw, const Row *r)
{
  return r->enumerated.tp > 0 ? layout_request (sw, &r->enumerated) : NULL;
}

/* each row of a slice not pruned when it was made: its global batch and
 * its resolved key; the row gets its plan only when prepare first looks at
 * it (a sweep makes up to hundreds of thousands of rows, most of which
 * the memory check prunes, and a plan is about a kilobyte) */
static void
work_keys (gpointer data, gpointer user)
{
  const Slice *sl = data;
  Keys *k = user;
  for (guint i = sl->first; i < sl->last; i++) {
    Row *r = g_ptr_array_index (k->sw->rows, i);
    g_autoptr (SimPlanRequest) req = NULL;
    g_autoptr (SimPlan) plan = NULL;
    if (r->pruned != NULL || (req = enumerated_request (k->sw, r)) == NULL)
      continue;
    r->global_batch = (guint64) sim_plan_request_value (req, "global-batch");
    if ((plan = sim_plan_resolve (req, sim_sweep_cluster (k->sw, r->nodes), k->sw->model, NULL)) != NULL)
      k->keys[i] = resolved_key (plan, r->nodes);
  }
}

/* the rows not yet pruned that resolve to the plan of an earlier row are
 * pruned, so that no layout is listed (or simulated) twice; done at
 * enumeration, so that every shard agrees.  The keys are worked out on
 * sw->threads threads, compared in row order */
static void
dedupe (Sweep *sw)
{
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint n = sw->rows->len;
  Keys k = { sw, g_new0 (char *, n + 1) };
  g_autofree Slice *slices = g_new (Slice, n / ROW_SLICE + 1);
  g_autofree Job *jobs = g_new (Job, n / ROW_SLICE + 1);
  run_slices (sw, work_keys, &k, slices, jobs, n, ROW_SLICE);
  for (guint i = 0; i < n; i++) {
    Row *r = g_ptr_array_index (sw->rows, i);
    if (k.keys[i] == NULL)
      continue;
    if (g_hash_table_contains (seen, k.keys[i])) {
      g_free (k.keys[i]);
      prune (r, g_strdup ("the same layout as one listed before it, spelt differently"));
      continue;
    }
    g_hash_table_add (seen, k.keys[i]);
  }
  g_free (k.keys);
}

/* one expert split: ep, etp and the combined 1F1B (a layout's
 * SimSweepLayout fields of the same names) */
typedef struct {
  int ep, etp;
  gboolean overlap;
} ExpertSplit;

/* the expert splits of a tp x cp x dp stage (ExpertSplit): for a model
 * with mixture-of-experts layers every ep dividing the routed experts and
 * etp dividing the expert width (the user's lists, or every divisor and 1
 * and tp), with etp x ep dividing the stage's GPUs (Megatron-Core's MoE
 * parallel folding; sim_plan_resolve checks the rest); for a dense model
 * one empty split, ep and etp 0 (the label writes none) */
static GArray *
expert_splits (const Sweep *sw, int tp, int cp, int dp)
{
  const SimSweepConstraints *c = &sw->constraints;
  const SimMoe *e = &sw->model->moe;
  GArray *splits = g_array_new (FALSE, FALSE, sizeof (ExpertSplit));
  guint64 stage = (guint64) tp * (guint64) cp * (guint64) dp;
  int etps[SIM_SWEEP_MAX_CHOICES] = { 1, tp }, n_etp = tp > 1 ? 2 : 1;
  if (!sim_model_is_moe (sw->model)) {
    ExpertSplit none = { 0, 0, FALSE };
    g_array_append_val (splits, none);
    return splits;
  }
  if (c->n_etp > 0) {
    memcpy (etps, c->etp, sizeof etps);
    n_etp = c->n_etp;
  }
  for (int i = 0; i < n_etp; i++) {
    guint64 etp = (guint64) etps[i];
    if (!divides (etp, e->ffn_hidden))
      continue;
    for (int ep = first_choice (c->ep, c->n_ep); (guint64) ep <= e->experts;
         ep = next_choice (c->ep, c->n_ep, ep, FALSE)) {
      if (!divides ((guint64) ep, e->experts) || !divides (etp * (guint64) ep, stage))
        continue;
      ExpertSplit split = { ep, (int) etp, FALSE };
      g_array_append_val (splits, split);
      /* with an all-to-all, also Megatron-Core's combined 1F1B, which hides
       * it behind the adjacent micro-batch's compute (the recipes' choice on
       * H100: moe_training.md) */
      if (ep > 1) {
        split.overlap = TRUE;
        g_array_append_val (splits, split);
      }
    }
  }
  return splits;
}

/* the pipeline schedules a sweep tries: 1F1B, the interleaved one with 2,
 * 3 or 4 chunks per rank, and with a pipeline the zero-bubble ones and
 * DeepSeek's (sim-schedule.h), each where its plan resolves */
static const struct {
  SimSchedule schedule;
  int v;
} schedules[] = {
  { SIM_SCHEDULE_1F1B, 1 },  { SIM_SCHEDULE_INTERLEAVED, 2 }, { SIM_SCHEDULE_INTERLEAVED, 3 },
  { SIM_SCHEDULE_INTERLEAVED, 4 }, { SIM_SCHEDULE_ZB_H1, 1 },   { SIM_SCHEDULE_ZB_V, 2 },
  { SIM_SCHEDULE_DUALPIPE_V, 2 },  { SIM_SCHEDULE_DUALPIPE, 2 },
};

/* whether schedule s with v chunks per rank runs on pp stages, m
 * micro-batches per replica and the model's layers (sim_plan_resolve's
 * conditions): the interleaved one needs v dividing each stage's layers
 * and m a multiple of pp; the V-shaped ones a layer in each of 2 pp
 * chunks, DualPipeV m >= 2 pp; DualPipe an even pp, an even m >= 2 pp */
static gboolean
schedule_fits (SimSchedule s, int v, int pp, guint64 m, guint64 layers)
{
  guint64 p = (guint64) pp;
  switch (s) {
  case SIM_SCHEDULE_1F1B:
    return TRUE;
  case SIM_SCHEDULE_INTERLEAVED:
    return pp >= 2 && layers % (p * (guint64) v) == 0 && m % p == 0;
  case SIM_SCHEDULE_ZB_H1:
    return pp >= 2;
  case SIM_SCHEDULE_ZB_V:
    return pp >= 2 && layers >= 2 * p;
  case SIM_SCHEDULE_DUALPIPE_V:
    return pp >= 2 && layers >= 2 * p && m >= 2 * p;
  case SIM_SCHEDULE_DUALPIPE:
    return pp >= 2 && pp % 2 == 0 && m % 2 == 0 && m >= 2 * p && layers >= p;
  case SIM_SCHEDULE_GPIPE:
    break;
  }
  return FALSE;
}

void
sim_sweep_enumerate (SimSweep *sw)
{
  const SimModel *m = sw->model;
  const SimSweepConstraints *c = &sw->constraints;
  int zero_max = 3;
  guint64 seq = sw->seq_len > 0 ? sw->seq_len : m->seq_len;
  /* the sequence and the spread of GPU speeds only when given, in every plan */
  g_autofree char *seq_part = sw->seq_len > 0 ? g_strdup_printf (",seq=%" G_GUINT64_FORMAT, sw->seq_len) : g_strdup ("");
  g_autofree char *var_part = sw->gpu_variation >= 0 ? g_strdup_printf ("%s,gpu-variation=%g", seq_part, sw->gpu_variation)
                                                     : g_strdup (seq_part);
  /* a mixture-of-experts or latent-attention model also tries the
   * recomputation between none and full that Megatron-Bridge's recipes
   * for them use: the modules whose saved tensors are large and whose
   * forward is cheap (the OOM remedies' choice, sim-memory.c) */
  guint cheap = sim_plan_cheap_recompute_modules (m);
  /* and the experts' routing, when given: the items every layout shares,
   * parsed once */
  g_free (sw->shared);
  sw->shared = g_strconcat (var_part, sw->routing != NULL ? sw->routing : "", NULL);
  sim_plan_request_free (sw->shared_request);
  sw->shared_request = sim_plan_request_new ();
  if (sw->shared[0] != '\0' && !sim_plan_request_parse_string (sw->shared_request, sw->shared + 1, NULL))
    g_clear_pointer (&sw->shared_request, sim_plan_request_free);
  g_free (sw->modules);
  sw->modules = cheap != 0 ? sim_recompute_modules_string (cheap, "+") : NULL;
  for (guint ni = 0; ni < sw->node_counts->len; ni++) {
    int nodes = g_array_index (sw->node_counts, int, ni);
    const SimTopology *t = g_ptr_array_index (sw->topos, ni);
    int G = sim_topology_n_gpus (t), gpn = t->gpus_per_node > 0 ? t->gpus_per_node : G;
    for (int tp = first_choice (c->tp, c->n_tp); tp <= G; tp = next_choice (c->tp, c->n_tp, tp, TRUE)) {
      if (!divides ((guint64) tp, m->heads) || !divides ((guint64) tp, m->kv_heads) || G % tp)
        continue;
      /* CP beyond 4 only when asked for: its ring grows with it */
      for (int cp = first_choice (c->cp, c->n_cp); cp <= (c->n_cp > 0 ? G : 4);
           cp = next_choice (c->cp, c->n_cp, cp, TRUE)) {
        if (G % (tp * cp) || !divides ((guint64) cp, seq))
          continue;
        for (int pp = first_choice (c->pp, c->n_pp); pp <= G / (tp * cp);
             pp = next_choice (c->pp, c->n_pp, pp, FALSE)) {
          int dp;
          g_autoptr (GArray) splits = NULL;
          /* a pp that does not divide the layers runs uneven stages, as
           * plain sim resolves them (the first and last stages give up
           * one layer first, as Llama 3 405B's 126 layers on pp 8 or 16),
           * under every schedule but the interleaved one, which needs the
           * division (schedule_fits) */
          if ((G / (tp * cp)) % pp || (guint64) pp > m->layers)
            continue;
          dp = G / (tp * cp * pp);
          splits = expert_splits (sw, tp, cp, dp);
          for (int mb = 1; mb <= 8; mb *= 2) {
            /* for a model that publishes none, 8 sequences per GPU (a batch
             * per layout let the smaller ones look faster); it divides
             * every mb x dp (mb <= 8, dp divides G) into (8 / mb) tp cp pp
             * micro-batches, a multiple of pp as the interleaved schedule
             * asks */
            guint64 gb = sw->global_batch > 0 ? sw->global_batch
                                              : sim_sweep_default_global_batch (m, G);
            if (gb % (guint64) (mb * dp))
              continue;
            for (guint si = 0; si < G_N_ELEMENTS (schedules); si++) {
              SimSchedule sc = schedules[si].schedule;
              int v = schedules[si].v;
              guint64 mbs = gb / (guint64) (mb * dp);
              if (!schedule_fits (sc, v, pp, mbs, m->layers) ||
                  (c->schedules != 0 && !(c->schedules & (1u << sc))))
                continue;
              /* rc 0: none, 1: full, 2: selective of the cheap modules */
              for (int rc = 0; rc < (cheap != 0 ? 3 : 2); rc++)
                for (int z = 0; z <= zero_max; z++)
                  for (guint x = 0; x < splits->len; x++)
                    for (int f = 0; f < 3; f++) {
                      /* f 0, 1: the FP8 modes (BF16 when off); 2: NVFP4 */
                      const char *tpn = tp > gpn ? "tensor parallelism across nodes" : NULL;
                      const ExpertSplit *split = &g_array_index (splits, ExpertSplit, x);
                      SimSweepLayout l;
                      if (f < 2 ? sw->fp8_modes[f] < 0 || sw->fp4_mode == 1 : sw->fp4_mode == 0)
                        continue;
                      if (z > 0 && dp * cp == 1)
                        continue;
                      /* the combined 1F1B refuses full recomputation */
                      if (rc == 1 && split->overlap)
                        continue;
                      l = (SimSweepLayout) {
                        .global_batch = gb,
                        .tp = tp, .cp = cp, .pp = pp, .dp = dp,
                        .ep = split->ep, .etp = split->etp,
                        .moe_a2a_overlap = (guint8) split->overlap,
                        .micro_batch = (guint8) mb,
                        .schedule = (guint8) sc,
                        .virtual_stages = (guint8) (sc == SIM_SCHEDULE_INTERLEAVED ? v : 0),
                        .recompute = (guint8) (rc == 0 ? SIM_RECOMPUTE_NONE
                                               : rc == 1 ? SIM_RECOMPUTE_FULL
                                                         : SIM_RECOMPUTE_SELECTIVE),
                        .zero = (guint8) z,
                        .fp8 = (guint8) (f < 2 ? sw->fp8_modes[f] : SIM_FP8_OFF),
                        .fp4 = (guint8) (f == 2 ? SIM_FP4_E2M1 : SIM_FP4_OFF),
                      };
                      add_layout (sw, nodes, tpn, &l);
                    }
            }
            /* the dominated choices, counted so the user sees them go */
            add (sw, nodes, "GPipe: the time of 1F1B with more memory",
                 "tp=%d,cp=%d,pp=%d,dp=%d,mb=%d,schedule=gpipe", tp, cp, pp, dp, mb);
            add (sw, nodes, "selective recomputation under fused attention: none's memory, one more attention forward",
                 "tp=%d,cp=%d,pp=%d,dp=%d,mb=%d,recompute=selective", tp, cp, pp, dp, mb);
            if (tp > 1)
              add (sw, nodes, "no sequence parallelism with tp > 1: the same traffic, more memory",
                   "tp=%d,cp=%d,pp=%d,dp=%d,mb=%d,no-sequence-parallel", tp, cp, pp, dp, mb);
          }
        }
      }
    }
  }
  dedupe (sw);
  sw->layouts = sw->rows->len;
}

/* one simulation of a prepared row's plan; steady: the steady state
 * extrapolated from shorter runs where it is proven periodic
 * (sim_iteration_run_steady) */
static SimRun *
simulate (const SimTopology *t, const SimModel *m, const Row *r, gboolean steady, GError **error)
{
  return sim_run_evaluate (t, m, r->request, r->label,
                           SIM_RUN_TIME | (steady ? SIM_RUN_STEADY : 0), error);
}

/* a peak that leaves less of usable memory free than --min-headroom asks */
static gboolean
short_of_headroom (const Sweep *sw, guint64 peak_bytes, guint64 usable_bytes)
{
  double h = sw->constraints.min_headroom;
  return h > 0 && (double) usable_bytes - (double) peak_bytes < h * (double) usable_bytes;
}

/* The row becomes label and its request `given` (resolved as q) when q
 * fits with the sweep's headroom: its label, request, resolved plan and
 * memory are replaced; otherwise it keeps them (label, given and q are
 * freed either way) */
static void
adopt (Sweep *sw, Row *r, const SimTopology *t, char *label, SimPlanRequest *given, SimPlan *q,
       SimPlan **plan, SimMemory **mem)
{
  g_autoptr (SimMemory) m = sim_memory_compute (t, sw->model, q);
  if (!m->fits || short_of_headroom (sw, m->peak_bytes, m->usable_bytes)) {
    g_free (label);
    sim_plan_request_free (given);
    sim_plan_free (q);
    return;
  }
  g_free (r->label);
  r->label = label;
  /* the amended label (",layout=..." or ",cuda-graph-scope=..." after the
   * enumerated one) is no longer the enumerated layout's: the row goes by
   * its label and the request given here */
  r->enumerated = (SimSweepLayout) { 0 };
  sim_run_summary_set_request (r, given);
  sim_plan_free (*plan);
  *plan = q;
  sim_memory_free (*mem);
  *mem = g_steal_pointer (&m);
}

/* r's request with one more option, key=value, as the row would carry
 * it: *label its label with ",key=value" (for output), *given that
 * request and *q the same resolved on t; FALSE (nothing set) where it
 * does not resolve.  A row that takes it (adopt) goes by that request, no
 * longer by its SimSweepLayout */
static gboolean
amend (const Sweep *sw, const Row *r, const SimTopology *t, const char *key, const char *value,
       char **label, SimPlanRequest **given, SimPlan **q)
{
  g_autoptr (SimPlanRequest) g = sim_plan_request_copy (r->request);
  g_autoptr (SimPlan) resolved = NULL;
  if (!sim_plan_request_set (g, key, value, NULL, NULL))
    return FALSE;
  if ((resolved = sim_plan_resolve (g, t, sw->model, NULL)) == NULL)
    return FALSE;
  *label = g_strdup_printf ("%s,%s=%s", r->label, key, value);
  *given = g_steal_pointer (&g);
  *q = g_steal_pointer (&resolved);
  return TRUE;
}

/* A pipeline whose stages compute unevenly (the last holds the output
 * layer and loss, and any multi-token-prediction layers) is swept with the
 * layout that evens its virtual stages where that lowers the slowest by
 * 5 % or more and still fits (sim-balance.h): the row's label gains it, as
 * a team would set --pipeline-model-parallel-layout for that split.  Rows
 * that split the layers themselves keep their split; a row prepared again
 * (the leaders' exact re-simulation) has its layout already. */
static void
balance (Sweep *sw, Row *r, const SimTopology *t, SimPlan **plan, SimMemory **mem, SimLayerCost *c,
         gboolean *costed)
{
  const SimPlan *p = *plan;
  g_autofree char *layout = NULL, *label = NULL;
  g_autoptr (SimPlanRequest) given = NULL;
  g_autoptr (SimPlan) q = NULL;
  if (p->pp < 2 || p->layout != NULL || p->first_stage_layers > 0 || p->last_stage_layers > 0 ||
      p->embedding_in_split || p->loss_in_split)
    return;
  sim_cost_layer (sw->model, p, sim_topology_gpu_type (t, 0), c);
  *costed = TRUE;
  layout = sim_balance_layout (sw->model, p, c, 0.05, NULL, NULL);
  if (layout == NULL || !amend (sw, r, t, "layout", layout, &label, &given, &q))
    return;
  adopt (sw, r, t, g_steal_pointer (&label), g_steal_pointer (&given), g_steal_pointer (&q), plan,
         mem);
}

/* A row whose layer passes the host launches more slowly than the GPU
 * runs them (sim-cost.c wall()) is swept under CUDA graphs where they
 * shorten its layers and it still fits with their static buffers: the
 * row's label gains the scope NVIDIA's recipes capture (attn and mlp for
 * a dense layer; attn, moe_router and moe_preprocess for an MoE one), as a
 * team would set --cuda-graph-scope for that layout.  Only under
 * Megatron's framework and without full recomputation (sim-plan.c
 * resolve_cuda_graphs).  eager holds the row's layer costs when costed
 * (balance's: they do not depend on the pipeline layout). */
static void
graphs (Sweep *sw, Row *r, const SimTopology *t, SimPlan **plan, SimMemory **mem, SimLayerCost *eager,
        gboolean costed)
{
  const SimPlan *p = *plan;
  const SimGpuType *g = sim_topology_gpu_type (t, 0);
  gboolean moe = sim_model_is_moe (sw->model), bound = FALSE;
  /* the layers each SimLayerPass runs in */
  double n_moe = (double) sim_model_moe_layers (sw->model);
  double n[SIM_LAYER_PASSES] = { [SIM_LAYER_FWD] = sw->model->layers - n_moe,
                                 [SIM_LAYER_BWD] = sw->model->layers - n_moe,
                                 [SIM_MOE_LAYER_FWD] = n_moe,
                                 [SIM_MOE_LAYER_BWD] = n_moe };
  SimLayerCost with;
  g_autofree char *label = NULL;
  g_autoptr (SimPlanRequest) given = NULL;
  g_autoptr (SimPlan) q = NULL;
  double before = 0, after = 0;
  if (p->cuda_graph_impl != SIM_CUDA_GRAPH_NONE || p->framework != SIM_FRAMEWORK_MEGATRON ||
      p->recompute == SIM_RECOMPUTE_FULL)
    return;
  if (!costed)
    sim_cost_layer (sw->model, p, g, eager);
  for (int i = 0; i < SIM_LAYER_PASSES; i++)
    bound |= n[i] > 0 && eager->host_s[i] > eager->gpu_s[i];
  if (!bound)
    return;
  if (!amend (sw, r, t, "cuda-graph-scope", moe ? "attn+moe_router+moe_preprocess" : "attn+mlp",
              &label, &given, &q))
    return;
  sim_cost_layer (sw->model, q, g, &with);
  /* the layers' forward and backward, each kind by its count */
  for (int i = 0; i < SIM_LAYER_PASSES; i++) {
    before += n[i] * MAX (eager->host_s[i], eager->gpu_s[i]);
    after += n[i] * MAX (with.host_s[i], with.gpu_s[i]);
  }
  if (after < before)
    adopt (sw, r, t, g_steal_pointer (&label), g_steal_pointer (&given), g_steal_pointer (&q), plan,
           mem);
}

/* a row's first look: prune by validity and memory; returns whether it
 * is still to be simulated, with its compute-alone bound in r->bound_s */
static gboolean
prepare (Sweep *sw, Row *r)
{
  const SimTopology *t = sim_sweep_cluster (sw, r->nodes);
  g_autoptr (GError) error = NULL;
  g_autoptr (SimPlan) plan = NULL;
  g_autoptr (SimMemory) mem = NULL;
  SimLayerCost cost;
  gboolean costed = FALSE;

  if (r->pruned != NULL)
    return FALSE;
  if (r->request == NULL)
    sim_run_summary_set_request (r, enumerated_request (sw, r));
  if (r->request == NULL || (plan = sim_plan_resolve (r->request, t, sw->model, &error)) == NULL) {
    prune (r, g_strdup ("invalid: a constraint of the layout fails"));
    return FALSE;
  }
  r->gpus = sim_plan_world_size (plan);
  mem = sim_memory_compute (t, sw->model, plan);
  r->peak_bytes = mem->peak_bytes;
  r->usable_bytes = mem->usable_bytes;
  if (!mem->fits) {
    g_free (r->oom_case);
    r->oom_case = g_strdup (sim_oom_case_name (mem->oom_case));
    prune (r, g_strdup_printf ("out of memory, case %s", r->oom_case));
    return FALSE;
  }
  if (short_of_headroom (sw, mem->peak_bytes, mem->usable_bytes)) {
    prune (r, g_strdup (sw->headroom_reason));
    return FALSE;
  }
  balance (sw, r, t, &plan, &mem, &cost, &costed);
  graphs (sw, r, t, &plan, &mem, &cost, costed);
  r->fits = TRUE;
  r->tight = mem->tight;
  r->peak_bytes = mem->peak_bytes;
  /* once: the leaders' full re-simulation prepares them again */
  if (sw->keep > 0 && r->bound_s == 0) {
    r->bound_s = sim_iteration_bound_s (t, sw->model, plan, mem);
    r->bound_tokens_per_s = r->bound_s > 0 ? (double) plan->global_batch * (double) plan->seq_len / r->bound_s
                                           : G_MAXDOUBLE;
  }
  return TRUE;
}

static void row_result (Sweep *sw, Row *r, SimRun *taken, const GError *error, SimRun **kept);

/* simulate a prepared row, a long run from its steady state unless exact;
 * kept (may be NULL) gets the run where the row keeps its time */
static void
simulate_row (Sweep *sw, Row *r, gboolean exact, SimRun **kept)
{
  g_autoptr (GError) error = NULL;
  SimRun *run = simulate (sim_sweep_cluster (sw, r->nodes), sw->model, r, !exact, &error);
  row_result (sw, r, run, error, kept);
}

/* the row's result from its run (taken; NULL: it failed with error) */
static void
row_result (Sweep *sw, Row *r, SimRun *taken, const GError *error, SimRun **kept)
{
  g_autoptr (SimRun) run = taken;
  if (run == NULL) {
    prune (r, g_strdup_printf ("simulation failed: %s", error != NULL ? error->message : "unknown"));
    r->fits = FALSE;
    return;
  }
  /* counted once a row, whose leader may be simulated again in full */
  if (!r->simulated)
    g_atomic_int_inc (&sw->simulated);
  sim_run_summary_fill (r, run);
  r->peak_bytes = run->memory->peak_bytes;
  r->simulated = TRUE;
  /* the timeline's peak can differ from the ledger's: the constraint holds
   * for the peak the row reports */
  if (short_of_headroom (sw, r->peak_bytes, r->usable_bytes)) {
    prune (r, g_strdup (sw->headroom_reason));
    r->fits = r->has_time = r->simulated = r->screened = FALSE;
    return;
  }
  if (kept != NULL)
    *kept = g_steal_pointer (&run);
}

/* evaluate one row: prune by validity and memory, then simulate */
static void
evaluate (Sweep *sw, Row *r, gboolean exact)
{
  if (prepare (sw, r))
    simulate_row (sw, r, exact, NULL);
}

static void
progress_one (Sweep *sw)
{
  int done = g_atomic_int_add (&sw->done, 1) + 1;
  if (sw->progress != NULL)
    sw->progress (done, g_atomic_int_get (&sw->simulated), sw->total, sw->progress_data);
}

/* the pool's two jobs: a first look at every row of a slice (with keep,
 * the simulation waits for the waves), or a simulation */
static void
work (gpointer data, gpointer user)
{
  Sweep *sw = user;
  const Slice *sl = data;
  for (guint i = sl->first; i < sl->last; i++) {
    Row *r = g_ptr_array_index (sw->rows, i);
    if (sw->keep <= 0)
      evaluate (sw, r, FALSE);
    else if (prepare (sw, r))
      continue; /* counted when simulated or bounded */
    progress_one (sw);
  }
}

void
sim_sweep_keep_shard (SimSweep *sw, int shard, int shards)
{
  g_autoptr (GPtrArray) keep = g_ptr_array_new_with_free_func (sim_run_summary_free);
  if (shards <= 1)
    return;
  for (guint i = 0; i < sw->rows->len; i++) {
    Row *r = g_ptr_array_index (sw->rows, i);
    if ((int) (i % (guint) shards) == shard - 1)
      g_ptr_array_add (keep, r);
    else
      sim_run_summary_free (r);
  }
  g_ptr_array_set_free_func (sw->rows, NULL);
  g_ptr_array_unref (sw->rows);
  sw->rows = g_steal_pointer (&keep);
}

void
sim_sweep_set_keep (SimSweep *sw, int keep)
{
  sw->keep = MAX (keep, 0);
}

int
sim_sweep_keep (const SimSweep *sw)
{
  return sw->keep;
}

void
sim_sweep_set_threads (SimSweep *sw, int threads)
{
  sw->threads = MAX (threads, 1);
}

/* prepared rows by bound, then enumeration order */
static int
by_bound (gconstpointer pa, gconstpointer pb)
{
  const Row *a = *(const Row *const *) pa, *b = *(const Row *const *) pb;
  if (a->bound_s != b->bound_s)
    return a->bound_s < b->bound_s ? -1 : 1;
  return a->index - b->index;
}

/* the keep-th best throughput simulated at each GPU count: gpus -> GArray
 * of double, best first, at most keep */
static void
note_best (GHashTable *best, int keep, const Row *r)
{
  GArray *a;
  guint i;
  /* a layout that fits only without the fragmentation allowance ranks
   * after every one that fits with it: it sets no bar */
  if (!r->has_time || !r->fits || r->tight)
    return;
  a = g_hash_table_lookup (best, GINT_TO_POINTER (r->gpus));
  if (a == NULL) {
    a = g_array_new (FALSE, FALSE, sizeof (double));
    g_hash_table_insert (best, GINT_TO_POINTER (r->gpus), a);
  }
  for (i = 0; i < a->len && g_array_index (a, double, i) >= r->tokens_per_s; i++)
    ;
  if ((int) i < keep) {
    g_array_insert_val (a, i, r->tokens_per_s);
    if ((int) a->len > keep)
      g_array_set_size (a, (guint) keep);
  }
}

/* whether r's best possible throughput is below the keep-th best at its
 * GPU count */
static gboolean
beaten (GHashTable *best, int keep, const Row *r)
{
  GArray *a = g_hash_table_lookup (best, GINT_TO_POINTER (r->gpus));
  return a != NULL && (int) a->len == keep && r->bound_tokens_per_s < g_array_index (a, double, keep - 1);
}

/* the waves in flight: a wave's rows still being simulated, by wave,
 * counted under the lock of the batch their jobs belong to */
typedef struct {
  Sweep *sw;
  Batch batch;
  int *left;
} Waves;

typedef struct {
  Row *row;
  int wave;
} Task;

static void
work_wave (gpointer data, gpointer user)
{
  Task *t = data;
  Waves *w = user;
  simulate_row (w->sw, t->row, FALSE, NULL);
  progress_one (w->sw);
  g_mutex_lock (&w->batch.lock);
  if (--w->left[t->wave] == 0)
    g_cond_broadcast (&w->batch.done);
  g_mutex_unlock (&w->batch.lock);
}

static int by_work (gconstpointer pa, gconstpointer pb);

/* the rows simulated so far that rank best (tokens/s, then enumeration
 * order), at most keep, as sim_sweep_rank's leaders will be */
static void
note_leader (Sweep *sw, Row *r)
{
  GPtrArray *l = sw->leaders;
  guint i;
  if (!r->has_time || !r->fits || r->tight)
    return;
  for (i = 0; i < l->len; i++) {
    const Row *o = g_ptr_array_index (l, i);
    if (r->tokens_per_s > o->tokens_per_s || (r->tokens_per_s == o->tokens_per_s && r->index < o->index))
      break;
  }
  if ((int) i >= sw->keep)
    return;
  g_ptr_array_insert (l, (int) i, r);
  if ((int) l->len > sw->keep)
    g_ptr_array_set_size (l, (guint) sw->keep);
}

static void
work_ahead (gpointer data, gpointer user)
{
  Sweep *sw = user;
  Row *r = data;
  SimRun *run = simulate (sim_sweep_cluster (sw, r->nodes), sw->model, r, FALSE, NULL);
  g_mutex_lock (&sw->runs_lock);
  g_hash_table_insert (sw->ahead, r, run);
  g_mutex_unlock (&sw->runs_lock);
}

static gboolean
pushed_ahead (const Sweep *sw, const Row *r)
{
  for (int i = 0; i < sw->n_ahead; i++)
    if (sw->ahead_jobs[i].data == r)
      return TRUE;
  return FALSE;
}

/* sim_sweep_rank re-simulates the leaders exactly, the costliest first
 * (by_work), and waits for the last: with several threads the costliest
 * often sets the phase's length alone while the other threads idle (on
 * Llama-3-70B on dgx8x4, one interleaved layout's exact run took 153 ms of
 * a 160 ms phase).  So once the waves have filled the leaders, the
 * costliest screened leaders, one per thread, are simulated exactly while
 * the waves still run, at most SWEEP_AHEAD_MAX a sweep.  Their runs wait in
 * sw->ahead and serve only rows that are still leaders at the end: an
 * exact simulation is the same whenever it runs, so the answer does not
 * depend on them.  Only once the last wave is composed: earlier, the
 * waves (lowest bound first) have yet to find the leaders (on that sweep,
 * four layouts that led halfway lost to later ones).  Not with one
 * thread, where it would only move work. */
static void
ahead_of_rank (Sweep *sw)
{
  g_autoptr (GPtrArray) costly = NULL;
  if (sw->threads < 2 || (int) sw->leaders->len < sw->keep)
    return;
  costly = g_ptr_array_new ();
  for (guint i = 0; i < sw->leaders->len; i++) {
    Row *r = g_ptr_array_index (sw->leaders, i);
    if (r->screened)
      g_ptr_array_add (costly, r);
  }
  g_ptr_array_sort (costly, by_work);
  for (guint i = 0; i < costly->len && (int) i < sw->threads && sw->n_ahead < SWEEP_AHEAD_MAX; i++) {
    Row *r = g_ptr_array_index (costly, i);
    if (pushed_ahead (sw, r))
      continue;
    if (!sw->ahead_live) {
      batch_init (&sw->ahead_batch);
      sw->ahead_live = TRUE;
    }
    job_push (sw, &sw->ahead_batch, &sw->ahead_jobs[sw->n_ahead++], work_ahead, r, sw);
  }
}

void
sim_sweep_run (SimSweep *sw, int threads, SimSweepProgress progress, gpointer data)
{
  /* one row a task where each is simulated (their costs differ widely) */
  guint per = sw->keep > 0 ? ROW_SLICE : 1;
  g_autofree Slice *slices = g_new (Slice, sw->rows->len / per + 1);
  g_autofree Job *jobs = g_new (Job, sw->rows->len / per + 1);
  g_autoptr (GPtrArray) order = NULL;
  g_autoptr (GHashTable) best = NULL;
  g_autofree char *reason = NULL;
  g_autofree Task *tasks = NULL;
  g_autofree int *first = NULL; /* each wave's first task */
  Waves w = { sw };
  guint next = 0;
  int waves = 0, composed = 0;

  sw->threads = MAX (threads, 1);
  sw->total = (int) sw->rows->len;
  sw->done = 0;
  sw->simulated = 0;
  sw->progress = progress;
  sw->progress_data = data;
  g_ptr_array_set_size (sw->leaders, 0);
  run_slices (sw, work, sw, slices, jobs, sw->rows->len, per);
  if (sw->keep <= 0)
    return;

  /* the waves, lowest bound first; wave n is composed from the results of
   * waves 0 .. n - 2, so that the threads simulate wave n - 1 while it is
   * (what is simulated then depends on the results alone, not on which
   * thread finished first) */
  order = g_ptr_array_new ();
  for (guint i = 0; i < sw->rows->len; i++) {
    Row *r = g_ptr_array_index (sw->rows, i);
    if (r->pruned == NULL && r->fits && !r->simulated)
      g_ptr_array_add (order, r);
  }
  g_ptr_array_sort (order, by_bound);
  best = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, (GDestroyNotify) g_array_unref);
  reason = g_strdup_printf ("its compute alone is slower than the top %d at its GPU count", sw->keep);
  tasks = g_new (Task, order->len + 1);
  first = g_new0 (int, order->len + 2);
  w.left = g_new0 (int, order->len + 2);
  g_free (jobs);
  jobs = g_new (Job, order->len + 1);
  batch_init (&w.batch);
  for (;;) {
    /* compose waves up to two ahead of the last one noted */
    while (composed < waves + 2 && next < order->len) {
      int n = 0;
      first[composed] = (int) next;
      for (; next < order->len && n < SIM_SWEEP_WAVE; next++) {
        Row *r = g_ptr_array_index (order, next);
        tasks[next].row = r;
        tasks[next].wave = -1;
        if (beaten (best, sw->keep, r)) {
          prune (r, g_strdup (reason));
          progress_one (sw);
        } else {
          tasks[next].wave = composed;
          n++;
        }
      }
      first[composed + 1] = (int) next;
      g_mutex_lock (&w.batch.lock);
      w.left[composed] = n;
      g_mutex_unlock (&w.batch.lock);
      for (int i = first[composed]; i < first[composed + 1]; i++)
        if (tasks[i].wave == composed)
          job_push (sw, &w.batch, &jobs[i], work_wave, &tasks[i], &w);
      composed++;
    }
    if (waves == composed)
      break;
    /* the oldest wave in flight, whole, then its results */
    g_mutex_lock (&w.batch.lock);
    while (w.left[waves] > 0)
      g_cond_wait (&w.batch.done, &w.batch.lock);
    g_mutex_unlock (&w.batch.lock);
    for (int i = first[waves]; i < first[waves + 1]; i++)
      if (tasks[i].wave == waves) {
        note_best (best, sw->keep, tasks[i].row);
        note_leader (sw, tasks[i].row);
      }
    /* once every wave is composed, the leaders can change only by the
     * waves in flight */
    if (next >= order->len)
      ahead_of_rank (sw);
    waves++;
  }
  batch_wait (&w.batch);
  g_free (w.left);
}

void
sim_sweep_rank_rows (GPtrArray *rows)
{
  sim_run_summaries_rank (rows);
  sim_run_summaries_efficiency (rows);
  sim_run_summaries_ties (rows);
}

/* a leader simulated in full; the run kept where sim_sweep_rank wants it */
static void
work_exact (gpointer data, gpointer user)
{
  Sweep *sw = user;
  Row *r = data;
  SimRun *run = NULL;
  if (!prepare (sw, r))
    return;
  simulate_row (sw, r, TRUE, g_hash_table_contains (sw->want_runs, r) ? &run : NULL);
  if (run != NULL) {
    g_mutex_lock (&sw->runs_lock);
    g_hash_table_insert (sw->runs, r, run);
    g_mutex_unlock (&sw->runs_lock);
  }
}

/* the leaders whose full runs sim_sweep_rank keeps until it knows the
 * best (a full run holds its spans and memory timelines) */
#define SWEEP_KEEP_RUNS 4

/* the costliest first, so that no thread is left with a long one at the
 * end: the most pipeline passes (each adds its own sends, gates and
 * collectives; a steady state's activities mislead here, as its short runs
 * may go without shortcuts that the whole run takes: Llama-3-70B on
 * dgx8x4, tp 4 cp 2 pp 2, 1F1B estimated at 642,218 activities and run
 * whole in 45,476, interleaved v 4 at 326,741 and 320,658), then the
 * estimated activities (ties: enumeration order) */
static int
by_work (gconstpointer pa, gconstpointer pb)
{
  const Row *a = *(const Row *const *) pa, *b = *(const Row *const *) pb;
  if (a->passes != b->passes)
    return a->passes > b->passes ? -1 : 1;
  if (a->whole_activities != b->whole_activities)
    return a->whole_activities > b->whole_activities ? -1 : 1;
  return a->index - b->index;
}

GPtrArray *
sim_sweep_rank (SimSweep *sw, int exact)
{
  GPtrArray *ranked = g_ptr_array_new ();
  int redone = 0;
  g_autofree Job *jobs = NULL;
  Batch batch;
  for (guint i = 0; i < sw->rows->len; i++)
    g_ptr_array_add (ranked, g_ptr_array_index (sw->rows, i));
  sim_run_summaries_rank (ranked);
  /* the leaders, simulated in full where they were screened, each in its
   * own row: the ranking after is the same for any thread count */
  g_autoptr (GPtrArray) redo = g_ptr_array_new ();
  g_hash_table_remove_all (sw->want_runs);
  g_hash_table_remove_all (sw->runs);
  sw->ahead_used = 0;
  for (guint i = 0; i < ranked->len && redone < exact; i++) {
    Row *r = g_ptr_array_index (ranked, i);
    if (!r->has_time)
      break;
    if (r->screened) {
      g_ptr_array_add (redo, r);
      /* the first few keep their runs: the best's is sim_sweep_take_run's */
      if (redone < SWEEP_KEEP_RUNS)
        g_hash_table_add (sw->want_runs, r);
    }
    redone++;
  }
  g_ptr_array_sort (redo, by_work);
  jobs = g_new (Job, redo->len + 1);
  batch_init (&batch);
  for (guint i = 0; i < redo->len; i++)
    if (!pushed_ahead (sw, g_ptr_array_index (redo, i)))
      job_push (sw, &batch, &jobs[i], work_exact, g_ptr_array_index (redo, i), sw);
  batch_wait (&batch);
  /* the leaders simulated ahead (ahead_of_rank): their runs, as
   * work_exact's; those no longer leaders are dropped */
  if (sw->ahead_live) {
    batch_wait (&sw->ahead_batch);
    sw->ahead_live = FALSE;
    for (guint i = 0; i < redo->len; i++) {
      Row *r = g_ptr_array_index (redo, i);
      SimRun *run = NULL, *kept = NULL;
      if (!g_hash_table_steal_extended (sw->ahead, r, NULL, (gpointer *) &run))
        continue;
      if (run == NULL) {
        /* it failed: again, for its error */
        work_exact (r, sw);
        continue;
      }
      row_result (sw, r, run, NULL, g_hash_table_contains (sw->want_runs, r) ? &kept : NULL);
      if (kept != NULL)
        g_hash_table_insert (sw->runs, r, kept);
      sw->ahead_used++;
    }
    g_hash_table_remove_all (sw->ahead);
    sw->n_ahead = 0;
  }
  sim_sweep_rank_rows (ranked);
  /* only the best's run is asked for */
  if (ranked->len > 0) {
    SimRun *best = NULL;
    g_hash_table_steal_extended (sw->runs, g_ptr_array_index (ranked, 0), NULL, (gpointer *) &best);
    g_hash_table_remove_all (sw->runs);
    if (best != NULL)
      g_hash_table_insert (sw->runs, g_ptr_array_index (ranked, 0), best);
  }
  return ranked;
}

/* the options a plan may give for sim_sweep_fastest_fit to search its
 * job: those the sweep enumerates or sets for the whole job (the
 * framework and recipe only as the sweep's own, checked apart) */
static const char *const fastest_fit_keys[] = {
  "tp", "cp", "pp", "dp", "ep", "etp", "micro-batch", "global-batch", "seq-len", "schedule",
  "virtual-stages", "layers-per-virtual-stage", "first-stage-layers", "last-stage-layers",
  "pipeline-model-parallel-layout", "account-for-embedding-in-pipeline-split",
  "account-for-loss-in-pipeline-split", "recompute", "recompute-modules", "recompute-method",
  "recompute-num-layers", "sequence-parallel",
  "zero", "fp8", "fp4", "gpu-variation", "framework", "recipe", "moe-imbalance",
  "moe-expert-capacity-factor", "moe-pad-expert-input-to-capacity", NULL,
};

char *
sim_sweep_compact_label (const char *label, gboolean keep_gb)
{
  static const char *const dropped[] = { "cp=1", "schedule=1f1b", "recompute=none" };
  g_auto (GStrv) items = g_strsplit (label, ",", -1);
  g_autoptr (GPtrArray) kept = g_ptr_array_new ();
  for (guint i = 0; items[i] != NULL; i++) {
    /* what every row of the sweep shares, which its title says */
    gboolean drop = (!keep_gb && g_str_has_prefix (items[i], "gb=")) ||
                    g_str_has_prefix (items[i], "seq=") || g_str_has_prefix (items[i], "gpu-variation=") ||
                    g_str_has_prefix (items[i], "moe-imbalance=") ||
                    g_str_has_prefix (items[i], "moe-expert-capacity-factor=") ||
                    g_str_has_prefix (items[i], "moe-pad-expert-input-to-capacity=");
    for (guint k = 0; k < G_N_ELEMENTS (dropped); k++)
      drop |= g_str_equal (items[i], dropped[k]);
    if (!drop)
      g_ptr_array_add (kept, items[i]);
  }
  g_ptr_array_add (kept, NULL);
  return g_strjoinv (",", (char **) kept->pdata);
}

/* a plan string as flags, less what the job fixes and sim's defaults */
static char *
fit_flags (const char *label)
{
  g_autofree char *text = sim_sweep_compact_label (label, FALSE);
  char *flags = sim_plan_string_flags (text, NULL);
  /* the sweep's own labels are plan strings: never NULL */
  return flags != NULL ? flags : g_strdup (text);
}

SimFastestFit *
sim_sweep_fastest_fit (SimTopology *topo, const SimRun *run, int threads,
                       SimSweepProgress progress, gpointer data)
{
  const SimPlan *p = run->plan;
  g_autoptr (SimSweep) sw = NULL;
  g_autoptr (GPtrArray) ranked = NULL;
  SimFastestFit *f;
  int simulated = 0;
  if (p->framework != SIM_FRAMEWORK_MEGATRON || p->recipe != SIM_RECIPE_BF16_ADAM ||
      !sim_plan_given_within (p, fastest_fit_keys)) {
    sim_topology_free (topo);
    return NULL;
  }
  sw = sim_sweep_new (run->model, p->global_batch);
  if (sim_plan_given (p, "seq-len"))
    sim_sweep_set_seq_len (sw, p->seq_len);
  if (sim_plan_given (p, "gpu-variation"))
    sim_sweep_set_gpu_variation (sw, p->gpu_variation);
  /* the experts' routing the plan gives (its resolved values otherwise
   * come from the model, as every layout's will) */
  if (!sim_sweep_set_routing (sw, sim_plan_given (p, "moe-imbalance") ? p->moe_imbalance : 0,
                              sim_plan_given (p, "moe-expert-capacity-factor") ? p->moe_capacity_factor : 0,
                              sim_plan_given (p, "moe-pad-expert-input-to-capacity") && p->moe_pad_to_capacity,
                              NULL)) {
    sim_topology_free (topo);
    return NULL;
  }
  if (p->fp4 != SIM_FP4_OFF)
    sim_sweep_set_fp4 (sw, FALSE);
  else if (p->fp8 != SIM_FP8_OFF)
    sim_sweep_set_fp8 (sw, p->fp8, FALSE);
  sim_sweep_add_cluster (sw, topo, topo->n_nodes);
  sim_sweep_set_threads (sw, threads);
  sim_sweep_enumerate (sw);
  sim_sweep_set_keep (sw, 1);
  sim_sweep_run (sw, threads, progress, data);
  ranked = sim_sweep_rank (sw, 1);
  for (guint i = 0; i < ranked->len; i++)
    simulated += ((const Row *) g_ptr_array_index (ranked, i))->has_time;
  f = g_new0 (SimFastestFit, 1);
  f->layouts = (int) sw->layouts;
  f->simulated = simulated;
  f->time_change = NAN;
  for (guint i = 0; i < ranked->len && f->row == NULL; i++) {
    const Row *r = g_ptr_array_index (ranked, i);
    if (!r->has_time || !r->fits)
      break;
    if (r->tight)
      continue;
    f->row = sim_run_summary_copy (r);
    f->flags = fit_flags (r->label);
    if (run->time != NULL)
      f->time_change = run->time->tokens_per_s / r->tokens_per_s - 1.0;
  }
  return f;
}

gboolean
sim_sweep_offer_fastest_fit (SimRun *run, const char *topology, int nodes, int gpus,
                             const char *calibration, const char *efficiency, gboolean force,
                             int threads, SimSweepProgress progress, gpointer data, GError **error)
{
  SimTopology *t;
  if (run->memory->fits || run->time == NULL)
    return TRUE;
  if (!force && sim_topology_n_gpus (run->topo) > SIM_RUN_SEARCH_MAX_GPUS) {
    run->search_skipped = TRUE;
    return TRUE;
  }
  if ((t = sim_calibration_load_cluster (topology, nodes, gpus, calibration, error)) == NULL)
    return FALSE;
  if (efficiency != NULL && !sim_topology_set_efficiency (t, efficiency, error)) {
    sim_topology_free (t);
    return FALSE;
  }
  sim_fastest_fit_free (run->fastest_fit);
  run->fastest_fit = sim_sweep_fastest_fit (t, run, threads, progress, data);
  return TRUE;
}

/* ---- a sweep as sim sweep is asked for it ---- */

/* --tp 1,2,4,8: the sizes allowed, into list (at most
 * SIM_SWEEP_MAX_CHOICES) */
gboolean
sim_sweep_parse_choices (const char *flag, const char *value, const char *sep, int *list, int *n,
                         GError **error)
{
  g_auto (GStrv) items = NULL;
  if (value == NULL)
    return TRUE;
  items = g_strsplit (value, sep, -1);
  *n = 0;
  for (guint i = 0; items[i] != NULL; i++) {
    guint64 v = 0;
    if (*n == SIM_SWEEP_MAX_CHOICES || !g_ascii_string_to_unsigned (items[i], 10, 1, 1 << 20, &v, NULL)) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                   "--%s: expected a comma-separated list of at most %d positive integers such as "
                   "1,2,4,8, got '%.60s'", flag, SIM_SWEEP_MAX_CHOICES, value);
      return FALSE;
    }
    list[(*n)++] = (int) v;
  }
  if (*n == 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--%s: expected a comma-separated list of positive integers such as 1,2,4,8, got ''", flag);
    return FALSE;
  }
  return TRUE;
}

/* --min-headroom 10% (or 10): a fraction from 0 to 0.99 */
gboolean
sim_sweep_parse_schedules (const char *value, const char *sep, guint *bits, GError **error)
{
  g_auto (GStrv) parts = NULL;
  guint out = 0;
  if (value == NULL)
    return TRUE;
  parts = g_strsplit (value, sep, -1);
  for (guint i = 0; parts[i] != NULL; i++) {
    int k = 0;
    while (k <= SIM_SCHEDULE_DUALPIPE && !g_str_equal (parts[i], sim_schedule_name ((SimSchedule) k)))
      k++;
    if (k > SIM_SCHEDULE_DUALPIPE) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                   "--schedule: expected 1f1b, interleaved, zb-h1, zb-v, dualpipe-v or dualpipe joined "
                   "by '%s', got '%.40s'", sep, parts[i]);
      return FALSE;
    }
    out |= 1u << k;
  }
  *bits = out;
  return TRUE;
}

gboolean
sim_sweep_parse_headroom (const char *value, double *fraction, GError **error)
{
  g_autofree char *digits = NULL;
  double v = 0;
  char *end = NULL;
  if (value == NULL)
    return TRUE;
  digits = g_strdup (value);
  if (g_str_has_suffix (digits, "%"))
    digits[strlen (digits) - 1] = '\0';
  v = g_ascii_strtod (digits, &end);
  if (digits[0] == '\0' || end == NULL || *end != '\0' || !(v >= 0 && v < 100)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--min-headroom: expected a percentage of usable memory from 0 to below 100, such as 10%%, got '%.40s'",
                 value);
    return FALSE;
  }
  *fraction = v / 100;
  return TRUE;
}

/* the constraints as text, for the shard file's options: shards of one
 * sweep agree on them */
static char *
constraints_text (const SimSweepConstraints *c, int cap)
{
  const int *lists[] = { c->tp, c->cp, c->pp, c->ep, c->etp };
  const int ns[] = { c->n_tp, c->n_cp, c->n_pp, c->n_ep, c->n_etp };
  const char *names[] = { "tp", "cp", "pp", "ep", "etp" };
  GString *s = g_string_new (NULL);
  for (int k = 0; k < 5; k++) {
    /* the expert lists only when given, so a dense sweep's text is as before */
    if (k >= 3 && ns[k] == 0)
      continue;
    g_string_append_printf (s, ",%s=", names[k]);
    if (ns[k] == 0)
      g_string_append (s, "any");
    for (int i = 0; i < ns[k]; i++)
      g_string_append_printf (s, "%s%d", i > 0 ? "/" : "", lists[k][i]);
  }
  /* the schedules only when given, so a text without them is as before */
  for (int k = 0, n = 0; k <= SIM_SCHEDULE_DUALPIPE; k++)
    if (c->schedules & (1u << k))
      g_string_append_printf (s, "%s%s", n++ == 0 ? ",schedule=" : "/", sim_schedule_name ((SimSchedule) k));
  if (cap > 0)
    g_string_append_printf (s, ",max-nodes=%d", cap);
  else
    g_string_append (s, ",max-nodes=any");
  g_string_append_printf (s, ",min-headroom=%g%%", 100 * c->min_headroom);
  return g_string_free (s, FALSE);
}

/* the cluster at nodes (0: as the file says; at most cap nodes when cap >
 * 0), or with --scale at 1, 2, 4 ... nodes and at its full size;
 * *max_nodes is the full size */
static gboolean
add_clusters (SimSweep *sw, const char *topo_path, int nodes, int gpus, const char *calibration,
              gboolean scale, int cap, int *max_nodes, GError **error)
{
  SimTopology *t = sim_calibration_load_cluster (topo_path, nodes, gpus, calibration, error);
  if (t == NULL)
    return FALSE;
  /* --max-nodes: the largest cluster a booking may get */
  if (cap > 0 && t->n_nodes > cap) {
    sim_topology_free (t);
    if ((t = sim_calibration_load_cluster (topo_path, cap, 0, calibration, error)) == NULL)
      return FALSE;
  }
  *max_nodes = t->n_nodes;
  /* a part of one node does not scale */
  if (!scale || t->gpus_per_node < t->file_gpus_per_node) {
    sim_sweep_add_cluster (sw, t, *max_nodes);
    return TRUE;
  }
  sim_topology_free (t);
  for (int n = 1; n <= *max_nodes; n *= 2) {
    SimTopology *tn = sim_calibration_load_cluster (topo_path, n, 0, calibration, error);
    if (tn == NULL)
      return FALSE;
    sim_sweep_add_cluster (sw, tn, n);
    if (n < *max_nodes && n * 2 > *max_nodes) {
      tn = sim_calibration_load_cluster (topo_path, *max_nodes, 0, calibration, error);
      if (tn == NULL)
        return FALSE;
      sim_sweep_add_cluster (sw, tn, *max_nodes);
    }
  }
  return TRUE;
}

SimSweep *
sim_sweep_prepare (const SimModel *model, const SimSweepAsk *ask, int threads, int *max_nodes,
                   GError **error)
{
  g_autoptr (SimSweep) sw = NULL;
  const char *fp8_s = ask->fp8, *fp4_s = ask->fp4, *topology = ask->topology;
  if (!sim_sweep_check_experts (model, &ask->constraints, error))
    return NULL;
  sw = sim_sweep_new (model, ask->global_batch);
  sim_sweep_set_constraints (sw, &ask->constraints);
  sim_sweep_set_seq_len (sw, (guint64) ask->seq_len);
  sim_sweep_set_gpu_variation (sw, ask->gpu_variation);
  if (!sim_sweep_set_routing (sw, ask->moe_imbalance, ask->moe_capacity_factor, ask->moe_pad, error))
    return NULL;
  if (!add_clusters (sw, topology, ask->nodes, ask->gpus, ask->calibration, ask->scale, ask->max_nodes,
                     max_nodes, error))
    return NULL;
  if (fp8_s != NULL) {
    /* off, hybrid, e4m3, or both: BF16 and hybrid FP8 ranked together */
    static const char *names[] = { "off", "hybrid", "e4m3", "both" };
    int k = -1;
    const SimGpuType *g = sim_topology_gpu_type (sim_sweep_cluster (sw, *max_nodes), 0);
    for (int i = 0; i < 4; i++)
      if (g_str_equal (fp8_s, names[i]))
        k = i;
    if (k < 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--fp8: expected one of off, hybrid, e4m3, both, got '%.40s'", fp8_s);
      return NULL;
    }
    if (k > 0 && (g == NULL || g->peak_flop_per_s[SIM_DTYPE_FP8] <= 0)) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--fp8: %s has no FP8 tensor cores (its cluster file gives no fp8 peak)",
                   g != NULL ? g->name : topology);
      return NULL;
    }
    sim_sweep_set_fp8 (sw, k == 3 ? SIM_FP8_HYBRID : (SimFp8) k, k == 3);
  }
  if (fp4_s != NULL && !g_str_equal (fp4_s, "off")) {
    /* e2m1: NVFP4 layouts alone; both: beside the --fp8 choice */
    const SimGpuType *g = sim_topology_gpu_type (sim_sweep_cluster (sw, *max_nodes), 0);
    if (!g_str_equal (fp4_s, "e2m1") && !g_str_equal (fp4_s, "both")) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--fp4: expected one of off, e2m1, both, got '%.40s'", fp4_s);
      return NULL;
    }
    if (g == NULL || g->peak_flop_per_s[SIM_DTYPE_FP4] <= 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--fp4: %s has no FP4 tensor cores (its cluster file gives no fp4 peak)",
                   g != NULL ? g->name : topology);
      return NULL;
    }
    if (g_str_equal (fp4_s, "e2m1") && fp8_s != NULL && !g_str_equal (fp8_s, "off")) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                   "--fp4 e2m1: expected --fp8 off with it (FP4 layouts alone); --fp4 both ranks them beside the --fp8 ones");
      return NULL;
    }
    sim_sweep_set_fp4 (sw, g_str_equal (fp4_s, "both"));
  }
  sim_sweep_set_threads (sw, threads);
  sim_sweep_enumerate (sw);
  return g_steal_pointer (&sw);
}

char *
sim_sweep_options_text (const SimSweep *sw, const SimSweepAsk *ask, int keep)
{
  g_autofree char *limits = constraints_text (sim_sweep_constraints (sw), ask->max_nodes);
  /* the sequence only when given, so that other sweeps' text is as before */
  g_autofree char *seq_text = ask->seq_len > 0 ? g_strdup_printf (",seq-len=%d", ask->seq_len) : g_strdup ("");
  /* and the spread of GPU speeds only when given */
  g_autofree char *var_text = ask->gpu_variation >= 0 ? g_strdup_printf (",gpu-variation=%g", ask->gpu_variation)
                                                      : g_strdup ("");
  /* and how many of each GPU count's best were simulated for certain
   * (sim_sweep_set_keep): the merge ranks at most that many exactly */
  g_autofree char *exact = keep > 0 ? g_strdup_printf (",exact-top=%d", keep) : g_strdup (",exact-top=all");
  /* and FP4 only when given, for the same reason */
  g_autofree char *fp4_text = ask->fp4 != NULL ? g_strdup_printf (",fp4=%s", ask->fp4) : g_strdup ("");
  /* and the experts' routing (sim_sweep_set_routing's items), the same */
  const char *routing = sw->routing != NULL ? sw->routing : "";
  return g_strdup_printf ("nodes=%d,global-batch=%" G_GUINT64_FORMAT "%s%s,scale=%s,calibration=%s,fp8=%s%s%s%s%s",
                          ask->nodes, ask->global_batch, seq_text, var_text, ask->scale ? "yes" : "no",
                          ask->calibration != NULL ? ask->calibration : "",
                          ask->fp8 != NULL ? ask->fp8 : "off", fp4_text, routing, limits, exact);
}

SimRun *
sim_sweep_take_run (SimSweep *sw, const SimSweepRow *row)
{
  SimRun *run = NULL;
  g_hash_table_steal_extended (sw->runs, row, NULL, (gpointer *) &run);
  return run;
}

/* ---- CSV ---- */

/* a field, quoted when it holds a comma, a quote or a line break */
static void
csv_field (GString *out, const char *text, gboolean last)
{
  if (text != NULL && strpbrk (text, ",\"\r\n") != NULL) {
    g_string_append_c (out, '"');
    for (const char *p = text; *p != '\0'; p++) {
      if (*p == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *p);
    }
    g_string_append_c (out, '"');
  } else if (text != NULL) {
    g_string_append (out, text);
  }
  g_string_append_c (out, last ? '\n' : ',');
}

static void
csv_double (GString *out, gboolean has, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  csv_field (out, has && isfinite (v) ? g_ascii_dtostr (buf, sizeof buf, v) : NULL, FALSE);
}

char *
sim_sweep_rows_csv (GPtrArray *rows)
{
  GString *out = g_string_new ("rank,index,plan,nodes,gpus,status,peak_bytes,usable_bytes,step_s,tokens_per_s,"
                               "mfu,mfu_gemm_peak,gemm_precision,bubble_fraction,compute_s,exposed_tp_s,exposed_cp_s,exposed_pp_s,"
                               "exposed_dp_s,exposed_ep_s,limit,pruned\n");
  int rank = 0;
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = g_ptr_array_index (rows, i);
    gboolean t = r->has_time;
    g_string_append_printf (out, t ? "%d," : ",", ++rank);
    if (!t)
      rank--;
    g_string_append_printf (out, "%d,", r->index);
    csv_field (out, r->label, FALSE);
    g_string_append_printf (out, "%d,%d,%s,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",", r->nodes, r->gpus,
                            sim_run_summary_status (r), r->peak_bytes, r->usable_bytes);
    csv_double (out, t, r->step_s);
    csv_double (out, t, r->tokens_per_s);
    csv_double (out, t, r->mfu);
    csv_double (out, t, r->mfu_gemm);
    csv_field (out, t ? r->gemm_precision : NULL, FALSE);
    csv_double (out, t, r->bubble);
    csv_double (out, t, r->compute_s);
    csv_double (out, t, r->tp_s);
    csv_double (out, t, r->cp_s);
    csv_double (out, t, r->pp_s);
    csv_double (out, t, r->dp_s);
    csv_double (out, t, r->ep_s);
    csv_field (out, t ? r->wall : NULL, FALSE);
    csv_field (out, r->pruned, TRUE);
  }
  return g_string_free (out, FALSE);
}

char *
sim_sweep_json (const SimSweep *sw, const char *topo, const char *options, int shard, int shards)
{
  return sim_sweep_write_json (sw->rows, topo, sw->model->name, options != NULL ? options : "", sw->layouts,
                     shard, shards);
}

int
sim_sweep_ahead_used (const SimSweep *sw)
{
  return sw->ahead_used;
}
