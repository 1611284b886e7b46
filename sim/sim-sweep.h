/* sim-sweep.h — every layout of a job, pruned, simulated and ranked.
 *
 * Enumeration: every TP x CP x PP x DP factorisation of the GPUs (TP within a
 * node, dividing the heads and KV heads; PP dividing the layers), micro-batch
 * sizes 1, 2, 4, 8, the 1F1B and interleaved schedules (v = 2, 3, 4, as the
 * layers allow) and with a pipeline ZB-H1, ZB-V, DualPipeV and DualPipe
 * where their plans resolve (sim-schedule.h), no or full recomputation,
 * ZeRO 0-3.  For a model with
 * mixture-of-experts layers also every expert split of Megatron-Core's MoE
 * parallel folding: ep each divisor of the routed experts and etp 1 and tp
 * (dividing the expert width), with etp x ep dividing tp x cp x dp (ZeRO-2
 * and 3 shard the routed experts over their expert data-parallel group);
 * such a row's plan names ep and etp.  Before anything is
 * simulated, layouts are pruned when they are invalid, dominated (GPipe:
 * 1F1B's time with more memory; selective recomputation under fused
 * attention: none's memory and one more attention forward (Megatron-Core
 * checkpoints the core whatever its kernel); TP > 1 without sequence
 * parallelism: the same traffic with more memory) or out of memory by the
 * ledger.
 *
 * The rest are simulated on a GLib thread pool; each layout's result has its
 * own slot, so the ranking is the same for any thread count.  With a top K
 * (sim_sweep_set_keep), those whose compute alone cannot beat the K-th
 * best of their GPU count are not simulated.  A long 1F1B
 * or interleaved layout is screened from the steady state of three shorter
 * runs, proven periodic (sim_iteration_run_steady: equal to the whole run
 * within a millionth per period), and the top K are then simulated in full.
 */
#pragma once

#include <glib.h>

#include "sim-model.h"
#include "sim-run.h"
#include "sim-topology.h"

G_BEGIN_DECLS

/* a sweep's row is a run's summary (sim-run.h), pruned or simulated; it
 * carries its plan as a value (plan, unresolved, until it is pruned, and
 * global_batch), set by sim_sweep_enumerate or read back by
 * sim_sweep_merge: its label is the same plan as text, for tables, files
 * and charts only */
typedef SimRunSummary SimSweepRow;

typedef struct _SimSweep SimSweep;

/* a sweep of model's layouts; global_batch 0: the model's published batch
 * (where it has none, SIM_SWEEP_SEQUENCES_PER_GPU sequences per GPU of each
 * cluster size, the same for every layout).  Free with sim_sweep_free. */
#define SIM_SWEEP_SEQUENCES_PER_GPU SIM_PLAN_SEQUENCES_PER_GPU
SimSweep *sim_sweep_new (const SimModel *model, guint64 global_batch);
/* the global batch a sweep, and sim compare, run a layout of `gpus` GPUs at
 * when none is given: the model's published batch, else
 * SIM_SWEEP_SEQUENCES_PER_GPU sequences per GPU (one batch for every layout
 * of that size, so that their step times compare) */
guint64 sim_sweep_default_global_batch (const SimModel *model, int gpus);
void sim_sweep_free (SimSweep *sw);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimSweep, sim_sweep_free)

/* a cluster of `nodes` nodes to enumerate on (the sweep owns topo) */
void sim_sweep_add_cluster (SimSweep *sw, SimTopology *topo, int nodes);
/* the precision of the enumerated layouts: fp8 alone, or (with_bf16) BF16
 * and fp8 side by side, ranked together (sim sweep --fp8 both); before
 * sim_sweep_enumerate; default BF16 alone */
void sim_sweep_set_fp8 (SimSweep *sw, SimFp8 fp8, gboolean with_bf16);
/* NVFP4 layouts (fp4=e2m1): alone, or (with_others) beside the precisions
 * sim_sweep_set_fp8 chose, ranked together (sim sweep --fp4 both); before
 * sim_sweep_enumerate; default none */
void sim_sweep_set_fp4 (SimSweep *sw, gboolean with_others);
const SimTopology *sim_sweep_cluster (const SimSweep *sw, int nodes);
/* tokens per sequence of the enumerated layouts (each plan then says
 * seq=N); before sim_sweep_enumerate; default 0: the model's */
void sim_sweep_set_seq_len (SimSweep *sw, guint64 seq_len);
/* the spread of GPU speeds every layout is simulated with (the plan's
 * gpu-variation, sim-variability.h), from 0 to 0.2; < 0 (the default):
 * the plans' own default.  Before sim_sweep_enumerate. */
void sim_sweep_set_gpu_variation (SimSweep *sw, double sigma);
/* how every layout routes its tokens to the experts, as a plan's
 * moe-imbalance (> 0: the busiest GPU's routed tokens over the mean),
 * moe-expert-capacity-factor (> 0: tokens an expert takes at most, over
 * its even share; the rest dropped) and moe-pad-expert-input-to-capacity;
 * 0, 0, FALSE (the default): the plans' own (the model's).  FALSE with
 * SIM_ERROR_USAGE for a value a plan refuses, for a model without experts,
 * and for padding without a capacity.  Before sim_sweep_enumerate. */
gboolean sim_sweep_set_routing (SimSweep *sw, double imbalance, double capacity, gboolean pad,
                                GError **error);

/* the most values a constraint list holds */
#define SIM_SWEEP_MAX_CHOICES 32

/* What the user allows (sim sweep --tp 1,2,4 --pp ... --cp ... --ep ...
 * --etp ... --min-headroom 10%).  A list of n values (n 0: the default range) replaces
 * the range that dimension is enumerated over: each value is still checked as
 * the default ones are (TP within a node, dividing the heads; PP dividing
 * the layers ...), so a value that cannot divide the job gives no row.
 * min_headroom is a fraction of usable memory (0 <= f < 1) that a layout's
 * peak must leave free: a layout that fits with less is pruned before it is
 * simulated, "less than P% of usable memory free (--min-headroom)". */
typedef struct {
  int tp[SIM_SWEEP_MAX_CHOICES], n_tp;
  int cp[SIM_SWEEP_MAX_CHOICES], n_cp;
  int pp[SIM_SWEEP_MAX_CHOICES], n_pp;
  /* expert parallel and expert tensor parallel (a model with
   * mixture-of-experts layers; default: ep every divisor of the experts,
   * etp 1 and tp) */
  int ep[SIM_SWEEP_MAX_CHOICES], n_ep;
  int etp[SIM_SWEEP_MAX_CHOICES], n_etp;
  double min_headroom;
  /* the pipeline schedules tried, bit 1 << SimSchedule each (--schedule
   * LIST); 0: every one the sweep tries */
  guint schedules;
} SimSweepConstraints;

/* before sim_sweep_enumerate; the lists are copied, sorted and deduplicated;
 * default: no constraint */
void sim_sweep_set_constraints (SimSweep *sw, const SimSweepConstraints *c);
/* the expert lists of c against model m: none for a model without
 * mixture-of-experts layers, each ep dividing the routed experts, each etp
 * the expert width (sim shapes checks its --ep and --etp so too); FALSE
 * with SIM_ERROR_USAGE, one line naming the option; any thread */
gboolean sim_sweep_check_experts (const SimModel *m, const SimSweepConstraints *c, GError **error);
/* the constraints in force, lists sorted (borrowed) */
const SimSweepConstraints *sim_sweep_constraints (const SimSweep *sw);

/* the threads that sim_sweep_enumerate resolves the layouts on (1 by
 * default; sim_sweep_run sets its own) */
void sim_sweep_set_threads (SimSweep *sw, int threads);

/* enumerate every layout on every cluster added; the rows, in order
 * (SimSweepRow*, owned by the sweep) */
void sim_sweep_enumerate (SimSweep *sw);
GPtrArray *sim_sweep_rows (const SimSweep *sw);
/* keep only rows i with i % shards == shard - 1 */
void sim_sweep_keep_shard (SimSweep *sw, int shard, int shards);

/* Rank only the best `keep` layouts of each GPU count exactly (sim sweep
 * --top K); 0 (the default): simulate every layout that fits.  With keep
 * > 0, sim_sweep_run computes each fitting layout's lower bound from its
 * compute alone (sim_iteration_bound_s), simulates the layouts in order of
 * that bound, lowest first, in waves of SIM_SWEEP_WAVE, and prunes from
 * each wave every layout whose bound is slower than the keep-th best time
 * simulated at its GPU count in the waves before the one before it ("its
 * compute alone is slower than the top K ..."; one wave is simulated while
 * the next is composed): its step cannot beat those, so the top `keep` of each GPU count, and the scaling
 * efficiencies against the best of the fewest GPUs, are those of
 * simulating everything.  The waves are fixed in size and composed from
 * whole waves' results, so what is simulated does not depend on the
 * thread count or on which thread finished first.  Before sim_sweep_run. */
#define SIM_SWEEP_WAVE 16
void sim_sweep_set_keep (SimSweep *sw, int keep);
/* what sim_sweep_set_keep set (0: every layout that fits is simulated) */
int sim_sweep_keep (const SimSweep *sw);

/* evaluate every row on `threads` threads; progress (may be NULL) is called
 * from the worker threads after each row with the rows done, how many of
 * them were simulated (the others pruned by a bound, or out of memory by
 * the ledger) and the total */
typedef void (*SimSweepProgress) (int done, int simulated, int total, gpointer data);
void sim_sweep_run (SimSweep *sw, int threads, SimSweepProgress progress, gpointer data);

/* the rows with a time first, by tokens/s (ties: the lower peak memory
 * first, sim_run_rank), then the rest in enumeration order; the top
 * `exact` screened leaders are simulated in full first (0: none), on
 * sim_sweep_run's threads; scaling efficiencies are filled in.  A new
 * array of borrowed rows. */
GPtrArray *sim_sweep_rank (SimSweep *sw, int exact);

/* the run of row, the best that sim_sweep_rank ranked, where it simulated
 * that row in full (SIM_RUN_TIME, as sim_run_evaluate gives it for a copy
 * of the row's plan on its cluster), taken over by the caller (free with
 * sim_run_free); NULL otherwise, or when taken already */
SimRun *sim_sweep_take_run (SimSweep *sw, const SimSweepRow *row);

/* What sim offers for run's plan when it does not fit (and was timed):
 * the fastest layout of its job that fits (sim_sweep_fastest_fit, into
 * run->fastest_fit) on the cluster loaded again as
 * sim_calibration_load_cluster (topology, nodes, gpus, calibration) with
 * the efficiency overrides (NULL: none) applied, when `force` or the
 * cluster has at most SIM_RUN_SEARCH_MAX_GPUS GPUs; beyond, it sets
 * run->search_skipped.  Nothing for a plan that fits.  FALSE with the
 * loader's error; any thread. */
gboolean sim_sweep_offer_fastest_fit (SimRun *run, const char *topology, int nodes, int gpus,
                                      const char *calibration, const char *efficiency,
                                      gboolean force, int threads, SimSweepProgress progress,
                                      gpointer data, GError **error);

/* a sweep row's plan string as the narrow table shows it (a new string):
 * without the sequence length and the spread of GPU speeds (the sweep's
 * own, the same for every row), the global batch unless keep_gb, and
 * sim's defaults cp=1, schedule=1f1b and recompute=none */
char *sim_sweep_compact_label (const char *label, gboolean keep_gb);

/* The fastest layout of run's job that fits on its GPUs, offered when
 * run's plan does not fit: the sweep that sim sweep --top 1 runs, of
 * run's model on topo (taken over and freed: run's cluster at its size,
 * loaded again by the caller), at run's global batch, and at the sequence
 * length, spread of GPU speeds and FP8 or FP4 precision its plan gave, on
 * `threads` threads, progress (may be NULL) as sim_sweep_run calls it.
 * Returns a new SimFastestFit (free with sim_fastest_fit_free), its row
 * NULL when no layout fits (not counting those that fit only without the
 * fragmentation allowance); NULL when the plan gave an option the sweep
 * does not enumerate or carry (a framework other than Megatron-Core, another
 * recipe, LoRA, its own memory allowances, slow GPUs ...): its layouts
 * would not be the job the user asked about. */
SimFastestFit *sim_sweep_fastest_fit (SimTopology *topo, const SimRun *run, int threads,
                                      SimSweepProgress progress, gpointer data);

/* ---- a sweep as sim sweep is asked for it (the command line, the C API) ---- */

/* what a sweep is asked: sim sweep's options, parsed */
typedef struct {
  const char *topology;    /* the cluster as the user named it: a path or a name in topologies/ */
  int nodes;               /* 0: the file's node count */
  int gpus;                /* 0: whole nodes (sim_calibration_load_cluster) */
  const char *calibration; /* NULL: none */
  guint64 global_batch;    /* 0: the model's, else SIM_SWEEP_SEQUENCES_PER_GPU per GPU */
  int seq_len;             /* 0: the model's */
  double gpu_variation;    /* < 0: the plans' default */
  double moe_imbalance;    /* sim_sweep_set_routing's: 0 the plans' own */
  double moe_capacity_factor;
  gboolean moe_pad;
  gboolean scale;          /* also 1, 2, 4 ... nodes */
  int max_nodes;           /* at most this many nodes; 0: no cap */
  SimSweepConstraints constraints;
  const char *fp8;         /* off, hybrid, e4m3 or both; NULL: not given (off) */
  const char *fp4;         /* off, e2m1 or both; NULL: not given (off) */
} SimSweepAsk;

/* value, a list of positive integers separated by sep ("1,2,4,8" with
 * ","), into list (at most SIM_SWEEP_MAX_CHOICES; *n how many); NULL value:
 * nothing, TRUE.  FALSE with SIM_ERROR_USAGE naming --flag. */
gboolean sim_sweep_parse_choices (const char *flag, const char *value, const char *sep, int *list,
                                  int *n, GError **error);
/* value, schedule names (sim_schedule_name) separated by sep, into the
 * bits 1 << SimSchedule of *bits; NULL value: nothing, TRUE.  FALSE with
 * SIM_ERROR_USAGE naming --schedule and the names. */
gboolean sim_sweep_parse_schedules (const char *value, const char *sep, guint *bits, GError **error);
/* "10%" or "10": a fraction of usable memory from 0 to below 1 into
 * *fraction; NULL value: nothing, TRUE; FALSE with SIM_ERROR_USAGE */
gboolean sim_sweep_parse_headroom (const char *value, double *fraction, GError **error);
/* A sweep of model as ask says, enumerated on `threads` threads: its
 * cluster (with scale at 1, 2, 4 ... nodes and at its full size; at most
 * max_nodes), constraints, sequence, spread of GPU speeds and precisions;
 * *max_nodes is the largest cluster's node count.  A new sweep, or NULL
 * with SIM_ERROR_USAGE (an FP8 or FP4 choice the GPU lacks, an expert list
 * the model cannot take) or the cluster loader's error. */
SimSweep *sim_sweep_prepare (const SimModel *model, const SimSweepAsk *ask, int threads, int *max_nodes,
                             GError **error);
/* the options text of the sweep's JSON (sim_sweep_json's `options`): every
 * option of ask that shapes the enumeration or the results, and keep
 * (sim_sweep_set_keep's), so that --merge joins only shards of one sweep */
char *sim_sweep_options_text (const SimSweep *sw, const SimSweepAsk *ask, int keep);

/* rank rows read back from shard files the same way (no simulation) */
void sim_sweep_rank_rows (GPtrArray *rows);

/* The shard file of a sweep (schema sim-sweep/3), a new string: the
 * topology as the user named it, the model, `options` (the caller's
 * canonical text "k=v,k=v" of every option that shapes the enumeration or
 * the results, such as the node count, global batch, scaling and
 * calibration; "" when none), written as an object, a value that is a whole
 * number as a number), the number of layouts enumerated before
 * sim_sweep_keep_shard, the shard and the shard count, and the rows: for a
 * whole sweep (shards 1) in the table's order with their rank (1, 2 ...
 * among the rows with a time, null for the rest), a shard's by index with
 * rank null; each with its status ("fits", "tight" or "oom",
 * sim_run_summary_status) and sim_report_summary_json's fields.  --merge
 * accepts shards only when all of these but the shard agree. */
char *sim_sweep_json (const SimSweep *sw, const char *topology, const char *options, int shard,
                      int shards);
/* the same for rows that are a whole sweep of rows->len layouts (options
 * ""), for tests and fuzzing */
char *sim_sweep_rows_json (GPtrArray *rows, const char *topology, const char *model, int shard,
                           int shards);

/* how many of the leaders the last sim_sweep_rank re-simulated exactly
 * were simulated ahead of it, while the last waves ran (with two threads
 * or more: the costliest leaders, one per thread, once every wave is
 * composed); their times are those of simulating them in sim_sweep_rank */
int sim_sweep_ahead_used (const SimSweep *sw);

/* The rows as CSV (RFC 4180, a new string): a header line, then one line
 * per row in the order given (sim_sweep_rank's, for the table's order):
 * rank (1 .. among the rows with a time, else empty), index, plan, nodes,
 * gpus, status (fits, tight or oom), peak_bytes, usable_bytes, then, for
 * rows with a time, step_s, tokens_per_s, mfu and bubble_fraction
 * (fractions), compute_s, exposed_tp_s, exposed_cp_s, exposed_pp_s,
 * exposed_dp_s, exposed_ep_s and limit (the wall), empty otherwise; pruned, the reason or empty.  SI units, numbers
 * as the JSON writes them (shortest round trip). */
char *sim_sweep_rows_csv (GPtrArray *rows);

/* the largest shard file --merge reads */
#define SIM_SWEEP_MERGE_MAX_BYTES (64u << 20)

/* The shard files of one sweep, read back and checked (sim_sweep_merge). */
typedef struct {
  char *topology, *model, *options;
  int exact_top;        /* how many of each GPU count's best the shards simulated
                         * for certain (sim_sweep_set_keep); 0: all */
  guint layouts;        /* enumerated, over all shards */
  int shards;
  GPtrArray *rows;      /* SimSweepRow*, owned, by index: 0 .. layouts - 1 */
} SimSweepMerged;

void sim_sweep_merged_free (SimSweepMerged *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimSweepMerged, sim_sweep_merged_free)

/* Read the n shard files at paths (sim_input_read, at most
 * SIM_SWEEP_MERGE_MAX_BYTES each: regular files only, never blocking) and
 * merge them.  A shard file is input from elsewhere (a job array, a shared
 * disk), so everything is checked: the schema; the type of every member of
 * the file and of every row; that every plan string parses
 * (sim_plan_request_parse_string, once: a row carries the request it
 * gives, SimRunSummary.request, unless pruned, and its global batch);
 * that every number is finite, non-negative and, for counts, an integer;
 * that the files are shards 1 .. N of one sweep (same topology, model,
 * options, layouts and N), each once; that every row belongs to its shard
 * (index % N = shard - 1) and that the rows are the layouts 0 .. layouts - 1,
 * each once, with no layout (plan and node count) twice.
 *
 * Returns a new SimSweepMerged (free with sim_sweep_merged_free), or NULL
 * with SIM_ERROR_IO (unreadable, not a regular file, too big) or
 * SIM_ERROR_USAGE "PATH:LINE: expected ..." (or "PATH: expected ..." for
 * what no one line holds, such as a missing shard): one line, of bounded
 * length, whatever the input.  Any thread. */
SimSweepMerged *sim_sweep_merge (const char *const *paths, guint n, GError **error);

/* sim_sweep_merge's checks on one file's text (path names it in messages),
 * the rows appended to rows (SimSweepRow*, free with sim_run_summary_free);
 * *topology and *model are set from the first file and checked against
 * later ones.  Kept for the sweep fuzz target; --merge uses
 * sim_sweep_merge. */
gboolean sim_sweep_rows_read (const char *path, const char *text, char **topology, char **model,
                              GPtrArray *rows, GError **error);

G_END_DECLS
