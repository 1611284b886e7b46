/* sim-iteration.h — one training iteration, simulated.
 *
 * The workload of one step becomes an engine graph: for every pipeline
 * stage, its passes (forward or backward of one model chunk for one
 * micro-batch) in the schedule's program order (sim-schedule.h), each a
 * compute activity on the stage's stream (all of a chunk's layers, costs
 * from sim-cost.h) followed by its tensor-parallel collectives (as NCCL
 * runs them, on the GPUs of each TP group: sim-collective.h); pipeline
 * sends between stages (one per TP rank, 1/t of the activation each);
 * context-parallel K/V exchange beside the attention; data-parallel
 * gradient buckets (40M parameters, Megatron's default) reduced as the last
 * micro-batch's backward produces them, layer by layer, then the optimizer
 * step and, with ZeRO, the parameter all-gather.
 *
 * The TP and CP ranks of a stage compute in lockstep, so one stream stands
 * for them; their traffic is simulated GPU by GPU.  In the symmetry-reduced
 * mode (the default) only data-parallel replica 0 computes, and the
 * gradient collectives, which span all replicas, run on every replica's
 * GPUs from replica 0's timing; full fidelity simulates every replica.
 *
 * Results: step time, throughput, MFU and HFU (model FLOPs of sim-cost.h,
 * against the dense bf16 peak), and for every stage of replica 0 the time
 * spent computing, in exposed communication by kind (the compute stream
 * waits for it) and idle in the pipeline bubble; the critical path's
 * composition; spans for charts; activation memory over time (allocated
 * when a forward pass starts, freed when its backward ends), whose peak
 * replaces the ledger's in-flight estimate.
 */
#pragma once

#include <glib.h>

#include "sim-cost.h"
#include "sim-engine.h"
#include "sim-memory.h"

G_BEGIN_DECLS

typedef enum {
  SIM_SPAN_FORWARD,
  SIM_SPAN_BACKWARD,
  SIM_SPAN_RECOMPUTE,
  SIM_SPAN_OPTIMIZER,
  SIM_SPAN_TP,
  SIM_SPAN_CP,
  SIM_SPAN_PP,
  SIM_SPAN_DP,
  SIM_SPAN_EP,       /* a mixture-of-experts layer's token all-to-alls */
  SIM_SPAN_GATE,     /* bookkeeping, never reported */
  /* a weight-gradient pass of a schedule that splits the backward
   * (sim-schedule.h): drawn apart, summed with the backward everywhere a
   * time is reported (stage sums, critical path) */
  SIM_SPAN_WEIGHT,
  SIM_SPAN_KINDS
} SimSpanKind;

typedef struct {
  SimSpanKind kind;
  int stage;
  int replica;
  int micro_batch;  /* -1 when not tied to one */
  int chunk;
  SimTime start;
  SimTime end;
  /* a pass that runs together with the one beside it (DualPipeV's F&B):
   * its communication hides behind the other's compute */
  gboolean paired;
} SimSpan;

typedef struct {
  SimTime time;
  guint64 activation_bytes;
} SimMemPoint;

typedef struct {
  int stage;
  double forward_s, backward_s, recompute_s, optimizer_s;
  double exposed_tp_s, exposed_cp_s, exposed_pp_s, exposed_dp_s, exposed_ep_s;
  double bubble_s;
  guint64 peak_activation_bytes;
  guint64 peak_bytes;             /* ledger states + timeline activations */
  GArray *memory;                 /* SimMemPoint, replica 0 */
} SimStageTime;

typedef struct {
  double step_s;
  double tokens_per_s;
  double model_flop;              /* whole job, one iteration */
  double hardware_flop;           /* model + recomputation */
  double model_tflops_per_gpu;
  double hardware_tflops_per_gpu;
  double mfu, hfu;                /* fractions of the dense bf16 peak */
  double bubble_fraction;         /* mean over stages of bubble / step */
  double compute_s;               /* mean over stages */
  double exposed_tp_s, exposed_cp_s, exposed_pp_s, exposed_dp_s, exposed_ep_s;
  double critical_s[SIM_SPAN_KINDS]; /* the critical path, by kind */
  GArray *stages;                 /* SimStageTime */
  GArray *spans;                  /* SimSpan of replica 0 (and DP collectives) */
  gboolean symmetric;
  gboolean dp_mirrored;           /* TP rank 0's data-parallel collectives stood for every
                                   * rank's (the builder's dp_mirrored) */
  guint32 activities;             /* simulated (all runs, when extrapolated) */
  guint64 events;
  /* sim_iteration_run_steady: the micro-batch counts of the three runs the
   * steady state was extrapolated from; all 0 when simulated whole */
  guint64 steady_micro_batches[3];
  gboolean gemm_table;            /* FALSE: no measured GEMM table, peak assumed */
} SimIteration;

/* ledger gives the static bytes per stage; full: every replica computes.
 * plan must be resolved and ledger computed from it.  Returns a new
 * SimIteration (free with sim_iteration_free), or NULL with SIM_ERROR_USAGE
 * (a collective no algorithm can run on its group) or SIM_ERROR_PLAN (the
 * engine found a dependency cycle: a bug).  Builds and runs a private
 * engine, so any thread with shared const inputs (sim sweep runs several
 * at once). */
SimIteration *sim_iteration_run (const SimTopology *topo, const SimModel *model,
                                 const SimPlan *plan, const SimMemory *ledger, gboolean full,
                                 GError **error);
/* The same results, with every collective simulated as its flows: the
 * reference for the one shortcut sim_iteration_run takes, each TP
 * collective and pipeline send as one delay of its time alone on the
 * network wherever nothing (a gradient bucket, another send, another
 * group) meets it while it runs, which it checks after the run, running
 * again with those met as flows, then without the sends' shortcut, then
 * without any (sim --exact; the same ownership, errors and threads) */
SimIteration *sim_iteration_run_reference (const SimTopology *topo, const SimModel *model,
                                           const SimPlan *plan, const SimMemory *ledger,
                                           gboolean full, GError **error);
/* the same with given per-layer costs instead of sim_cost_layer(), for
 * idealised checks (a pp_bytes of 0 makes pipeline sends free); the same
 * ownership, errors and threads */
SimIteration *sim_iteration_run_with_cost (const SimTopology *topo, const SimModel *model,
                                           const SimPlan *plan, const SimMemory *ledger,
                                           gboolean full, const SimLayerCost *cost,
                                           GError **error);
/* The same results as sim_iteration_run (the step within a millionth of
 * its growth per period extrapolated), faster for long 1F1B and
 * interleaved runs: runs of m1, m1 + k, m1 + 2k, ... micro-batches (k = 1
 * for 1F1B, p for interleaved; m1 = p or 2p) are simulated until three in
 * a row (k or 2k apart) grow the step and every per-stage sum by equal
 * amounts with equal activation peaks; the last is then extended by the
 * remaining periods (steady_micro_batches says from which runs).  The
 * runs are made only where three cost less than the whole run, in
 * activities as a build of the first counts them; when no period shows
 * while they still cost less, the whole run is simulated.  An extrapolated result has no spans and no
 * memory timelines (empty arrays): charts need the whole run; its
 * activities and events count every run made.  The same ownership,
 * errors and threads as sim_iteration_run. */
SimIteration *sim_iteration_run_steady (const SimTopology *topo, const SimModel *model,
                                        const SimPlan *plan, const SimMemory *ledger,
                                        gboolean full, GError **error);
/* A lower bound of the step sim_iteration_run (and _reference, _steady)
 * would simulate for the same inputs, from the compute alone, without
 * building or running anything: every stage computes its passes one after
 * another on one stream, each at least its compute's unslowed time (the
 * recomputation before a backward included), then its optimizer step; its
 * first pass waits for the forward of a micro-batch's chunk through every
 * stage before it, and its last (a backward) is followed by the backward
 * of that chunk through every stage before it and then stage 0's
 * optimizer step.  So the step is at least, over stages s,
 *   sum_{j<s} F_j + work_s + max(opt_s, sum_{j<s} B_j + opt_0)
 * with F_j, B_j stage j's shortest chunk forward and (recomputation and)
 * backward, all times 1 + the spread of GPU speeds' slowdown
 * (sim-variability.h), which every stage's compute takes at least.
 * Under DualPipe a rank's chunks each see half of the micro-batches and
 * no stage waits for a fill (the last takes the second copy's first);
 * where the schedule splits the backward (ZB-H1, ZB-V, DualPipeV,
 * DualPipe) a stage's last passes may be weight gradients that nothing
 * follows, so the drain is its own optimizer step alone.
 * Communication, the pipeline sends and the compute's slow-down
 * beside collectives only add to it.  plan resolved, ledger computed from
 * it; any thread. */
double sim_iteration_bound_s (const SimTopology *topo, const SimModel *model, const SimPlan *plan,
                              const SimMemory *ledger);
/* NULL is ignored */
void sim_iteration_free (SimIteration *it);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimIteration, sim_iteration_free)

/* a static string; any thread */
const char *sim_span_kind_name (SimSpanKind k);

G_END_DECLS
