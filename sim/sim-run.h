/* sim-run.h — one layout evaluated: plan, memory ledger, remedies, time.
 * What the single run, `sim compare` and `sim sweep` share. */
#pragma once

#include <glib.h>

#include "sim-iteration.h"
#include "sim-memory.h"

G_BEGIN_DECLS

typedef struct _SimFastestFit SimFastestFit;

typedef struct {
  const SimTopology *topo; /* the cluster and model it ran on (not owned) */
  const SimModel *model;
  char *label;          /* the plan as the user wrote it, or as the sweep made it */
  SimPlan *plan;        /* resolved */
  SimMemory *memory;
  GPtrArray *remedies;  /* SimRemedy* */
  SimIteration *time;   /* NULL when not simulated */
  gboolean extrapolated;/* time from the steady state of shorter runs (SIM_RUN_STEADY) */
  double train_tokens;  /* > 0: the report adds the time to train on them */
  double gpu_hour_price;/* > 0: and the cost at this price per GPU-hour */
  /* with slow GPUs, nodes or links (plan->n_slow or n_slow_links > 0)
   * and a time: the step of the same plan with none slow, for what they
   * cost, and that iteration (for what each kind of communication
   * exposed); 0 and NULL otherwise */
  double straggler_base_step_s;
  SimIteration *straggler_base;
  /* a plan that does not fit: the fastest layout of its job that does,
   * where the caller searched for one (sim_sweep_fastest_fit); else NULL */
  SimFastestFit *fastest_fit;
  /* TRUE: the plan does not fit and sim did not search unasked, the
   * cluster being larger than SIM_RUN_SEARCH_MAX_GPUS GPUs */
  gboolean search_skipped;
} SimRun;

/* What the spread of GPU speeds adds to the step (sim-variability.h): the
 * job's GPUs, the fraction by which the expected slowest computes longer
 * than nominal, and the seconds that adds to the step: the compute on its
 * critical path (forward, backward, recomputation, optimizer) less what
 * it would be at nominal speed, c x s / (1 + s).  FALSE when the run was
 * not simulated; any thread. */
typedef struct {
  double sigma;     /* the plan's per-GPU spread (one standard deviation) */
  int gpus;
  double slowdown;  /* sigma x E[max of gpus standard normals] */
  double added_s;
} SimVariability;
gboolean sim_run_variability (const SimRun *run, SimVariability *out);

/* With slow GPUs or links: the communication a step exposes beyond the
 * same plan's with none slow, kind by kind, "DP +0.412 s, PP +0.013 s"
 * (the kinds grown by a millisecond or more; "none" where none did); NULL
 * without them or a time.  New string. */
char *sim_run_exposed_added_text (const SimRun *run);

/* The error band a plan's step time carries, the one every output uses:
 * the mean |step-time error| on the published runs most like it that the
 * cluster file states (sim-topology.h SimEfficiency): a mixture-of-experts
 * model's MoE band, a --framework fsdp plan's FSDP band, a --framework
 * torchtitan plan's torchtitan band, else the band on
 * runs no fit saw, else the fitted runs' band; error 0 (basis "none")
 * where the file states none.  A value x reads as x (1 - error) ..
 * x (1 + error).  Any thread. */
typedef struct {
  double error;        /* fraction: 0.05 is +/-5 % */
  const char *basis;   /* "moe", "fsdp", "torchtitan", "heldout", "fitted" or "none", static */
} SimErrorBand;
void sim_run_error_band (const SimRun *run, SimErrorBand *out);

/* The booking answer: training on `tokens` at the run's simulated rate.
 * days = tokens / (tokens/s) / 86400; GPU-hours = days x 24 x GPUs;
 * cost = GPU-hours x price (0 when price is 0); each with its range from
 * the error band (sim_run_error_band: lo = x (1 - error), hi = x (1 +
 * error)).  FALSE when the run was not simulated or does not fit (no rate
 * to train at); any thread. */
typedef struct {
  double tokens;
  double days, days_lo, days_hi;
  double gpu_hours, gpu_hours_lo, gpu_hours_hi;
  double cost, cost_lo, cost_hi;
  double band;         /* the error band's fraction the ranges use */
} SimTrainEstimate;
gboolean sim_run_train_estimate (const SimRun *run, double tokens, double price,
                                 SimTrainEstimate *out);

typedef enum {
  SIM_RUN_TIME = 1 << 0,        /* simulate the iteration */
  SIM_RUN_FULL = 1 << 1,        /* every replica */
  SIM_RUN_REMEDIES = 1 << 2,    /* try remedies when it does not fit */
  SIM_RUN_STEADY = 1 << 3,      /* long 1F1B/interleaved runs from their steady state
                                 * (sim_iteration_run_steady): no spans, no timelines */
  SIM_RUN_REFERENCE = 1 << 4,   /* every micro-batch and every collective's flows, no
                                 * shortcut (sim_iteration_run_reference; not with
                                 * SIM_RUN_STEADY) */
} SimRunFlags;

/* The plan req asks for, resolved (sim_plan_resolve) and evaluated; req is
 * only read.  Returns a new SimRun (free with sim_run_free), or NULL with
 * the error of sim_plan_resolve (SIM_ERROR_PLAN, SIM_ERROR_TOPOLOGY) or of
 * sim_iteration_run.  Any thread with shared const topo and model (sim
 * sweep evaluates several at once). */
SimRun *sim_run_evaluate (const SimTopology *topo, const SimModel *model, const SimPlanRequest *req,
                          const char *label, guint flags, GError **error);
/* NULL is ignored */
void sim_run_free (SimRun *run);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimRun, sim_run_free)

/* Diagnosis lines a person can act on, from the three walls (memory,
 * compute, communication; docs/ARCHITECTURE.md): which wall binds, the
 * out-of-memory case with the remedies that apply, and the pipeline bubble.
 * `reference` (may be NULL) is the smallest layout that fits, for the
 * scaling efficiency E = t1 k1 / (k tk).  Returns a new array of char*
 * (caller g_ptr_array_unref()s); never fails; any thread. */
GPtrArray *sim_run_diagnose (const SimRun *run, const SimRun *reference);

/* E = (tokens/s per GPU) / (the reference's tokens/s per GPU); NAN when
 * either was not simulated or reference is NULL; any thread */
double sim_run_scaling_efficiency (const SimRun *run, const SimRun *reference);

/* the wall that binds: "memory", "compute" or "communication", or "none"
 * when the run fits but was not simulated (static strings); any thread */
const char *sim_run_wall (const SimRun *run);

/* One layout of sim sweep's enumeration as the values it chose, from
 * which the sweep writes the row's label and builds its plan (sim-sweep.c,
 * layout_label and layout_plan) without parsing the label again.  tp 0
 * where a row has none: the summaries of runs, the rows read back from
 * files, a sweep's dominated layouts (pruned as they are made) and the
 * rows whose label the sweep amended, which go by their label.  Small: a
 * sweep holds up to hundreds of thousands of rows. */
typedef struct {
  guint64 global_batch;
  gint32 tp, cp, pp, dp;
  gint32 ep, etp;           /* the expert split; 0 and 0 for a dense model (none written) */
  guint8 moe_a2a_overlap;   /* 1: overlap-moe-expert-parallel-comm written */
  guint8 micro_batch;
  guint8 schedule;          /* SimSchedule */
  guint8 virtual_stages;    /* v written when > 0 (the interleaved schedule) */
  guint8 recompute;         /* SimRecompute; selective with the sweep's recompute-modules */
  guint8 zero;
  guint8 fp8;               /* SimFp8, written when not off */
  guint8 fp4;               /* SimFp4, written when not off */
} SimSweepLayout;

/* One layout in a table (sim compare, sim sweep): what a run gives, in a
 * few numbers, and why it was not simulated when it was not.  Filled from a
 * run by sim_run_summary_fill, or read back from a sweep's shard file. */
typedef struct {
  int index;             /* the order it was given or enumerated in */
  char *label;           /* the plan string, as tables, files and charts show it */
  /* the request label writes, as a value (sim_plan_resolve it): a sweep's
   * row gets it when the sweep first looks at it (after the enumeration's
   * duplicates are pruned), when its label changes or when it is read
   * back from a shard file (sim_run_summary_set_request), and drops it
   * once pruned (a pruned layout is not run again, and a sweep holds up to
   * hundreds of thousands of rows); NULL in the summaries of runs.  Owned;
   * read-only once set. */
  SimPlanRequest *request;
  /* a sweep's row: the layout its label writes, as values (request is
   * built from it, not from label); tp 0 where the row goes by its label */
  SimSweepLayout enumerated;
  guint64 global_batch;  /* sequences per step the request gives, kept when it is
                          * dropped; 0 where it gives none (a sweep's dominated
                          * layouts, pruned as they are made) */
  int nodes;
  char *pruned;          /* why it was not simulated, or NULL */
  gboolean simulated, fits, screened, has_time;
  gboolean tight;        /* fits only without the fragmentation allowance (SimMemory) */
  char *oom_case;        /* "A", "B", "C" or NULL */
  guint64 peak_bytes, usable_bytes;
  int gpus;
  double step_s, tokens_per_s, mfu, bubble, compute_s;
  double mfu_gemm;       /* MFU of the dense peak of gemm_precision (sim_run_mfu_gemm_peak) */
  const char *gemm_precision; /* "bf16", "fp8" or "fp4", static */
  double band;           /* the step's error band (sim_run_error_band), a fraction */
  gboolean tie;          /* sim_run_summaries_ties: within the best's band of it */
  double tp_s, cp_s, pp_s, dp_s, ep_s; /* exposed communication, the mean of the stages */
  char *wall;            /* the diagnosis' wall */
  double e;              /* scaling efficiency against the smallest layout that fits; NAN without one */
  double bound_s;        /* sim sweep: a lower bound of the step from the compute alone
                          * (sim_iteration_bound_s), 0 when not computed; not saved */
  double bound_tokens_per_s; /* and the throughput's upper bound that follows */
  double whole_activities; /* the activities of simulating it whole, estimated from a
                            * steady state's runs (for scheduling); not saved */
  double passes;         /* forward-backward pairs of one replica: micro-batches x
                          * virtual stages x stages (for scheduling); not saved */
} SimRunSummary;

/* The fastest layout of a run's job that fits on its GPUs, which
 * sim_sweep_fastest_fit finds for a plan that does not fit. */
struct _SimFastestFit {
  SimRunSummary *row;   /* its plan string (whole), memory and time; NULL: none fits */
  char *flags;          /* the flags that set it, less what the job fixes (the global batch,
                         * the sequence length, the spread of GPU speeds) and sim's
                         * defaults (cp 1, schedule 1f1b, recompute none) */
  int layouts;          /* the job's layouts enumerated */
  int simulated;        /* of them simulated (the others pruned) */
  double time_change;   /* time per token against the run's plan if memory allowed (as
                         * SimRemedy's); NAN when that plan was not simulated */
};
void sim_fastest_fit_free (SimFastestFit *f);
/* the most GPUs sim searches for the fastest layout that fits unasked:
 * on 2 cores the search took 0.3 s on 64 GPUs (Llama 3 70B on dgx8x4),
 * 0.7 to 17 s on 256 and 47 s on 512 (Llama 3.1 405B on dgx-h100), and
 * grows with the GPUs: beyond, the report says how to ask for it */
#define SIM_RUN_SEARCH_MAX_GPUS 256

/* a new summary (free with sim_run_summary_free) of label, index and nodes,
 * e NAN, nothing else yet */
SimRunSummary *sim_run_summary_new (int index, const char *label, int nodes);
void sim_run_summary_free (gpointer summary);
/* a new copy of s (free with sim_run_summary_free) */
SimRunSummary *sim_run_summary_copy (const SimRunSummary *s);
/* req (taken over; may be NULL) as s's request, the global batch it gives
 * as s->global_batch; the request s held is freed */
void sim_run_summary_set_request (SimRunSummary *s, SimPlanRequest *req);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimRunSummary, sim_run_summary_free)
/* the memory and, when the run has one, the time of run into s; any thread */
void sim_run_summary_fill (SimRunSummary *s, const SimRun *run);
/* MFU of the dense peak of the precision the linear layers' GEMMs run
 * at, from mfu_bf16 (of the dense BF16 peak, as SimIteration gives it):
 * NVIDIA's FP8 recipes quote MFU against the FP8 peak (dgxc-benchmarking
 * READMEs, "peak 1979 FP8"), an FP4 plan against the dense FP4 peak; a
 * BF16 plan's is mfu_bf16.  *precision (may be NULL): "bf16", "fp8" or
 * "fp4", static; any thread */
double sim_run_mfu_gemm_peak (const SimTopology *t, const SimPlan *p, double mfu_bf16,
                              const char **precision);
/* what an MFU of precision's peak says after it: " of the FP8 peak", " of
 * the FP4 peak", or "" for bf16 (static) */
const char *sim_run_gemm_peak_words (const char *precision);
/* the verdict as one word: "fits", "tight" (fits only without the
 * fragmentation allowance) or "oom" (static) */
const char *sim_run_summary_status (const SimRunSummary *s);
/* the ranking's order, < 0 when a ranks before b: the layouts that fit
 * first, those simulated (with a time) before the others, those that fit
 * only without the fragmentation allowance (tight) after the others, each
 * by tokens/s (without a time: 0), equal tokens/s by
 * lower peak memory; then those that do not fit, by peak memory; remaining
 * ties by index; pure */
int sim_run_summary_cmp (const SimRunSummary *a, const SimRunSummary *b);
/* sort summaries by sim_run_summary_cmp */
void sim_run_summaries_rank (GPtrArray *summaries);
void sim_run_summaries_efficiency (GPtrArray *ranked);
/* mark the ranked rows (sim_run_summaries_rank's order) that fit, have a
 * time and are within the best's error band of it, (best - tokens/s) /
 * best <= its band: a difference the validation cannot tell from none.
 * The best itself is not marked. */
void sim_run_summaries_ties (GPtrArray *ranked);
/* the same for runs ranked by sim_run_rank: tie[i] for runs[i] */
void sim_run_ties (GPtrArray *runs, gboolean *tie);
/* sort runs (SimRun*) in the order of their summaries (above), ties in the
 * order given */
void sim_run_rank (GPtrArray *runs);

G_END_DECLS
