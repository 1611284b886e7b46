/* sim-report.h — the text report and the JSON document of one run.
 * Both read finished inputs and results; neither writes files. */
#pragma once

#include <glib.h>

#include "sim-iteration.h"
#include "sim-json.h"
#include "sim-memory.h"
#include "sim-model.h"
#include "sim-plan.h"
#include "sim-run.h"
#include "sim-topology.h"

G_BEGIN_DECLS

/* Each returns new text (caller g_free()s); never fails; any thread. */
char *sim_report_text (const SimRun *run);
/* sim_report_text within 100 columns (wide FALSE), or with its tables and
 * time lines unwrapped (wide TRUE, sim --wide) */
char *sim_report_text_wide (const SimRun *run, gboolean wide);
/* The sections of the text report, in the order it prints them: the title
 * line; warnings about the GPU type's missing measurements; the cluster,
 * model, plan and the defaults applied ("Defaults ..."); the memory table
 * by stage; the capacity and usable memory; the verdict (with the reason
 * and the remedies when out of memory); the step time (its first line, and
 * for an out-of-memory plan the time if memory allowed); the error band of
 * the step time (its validation against published runs); what was
 * simulated and the seconds per step of each stage; the critical path; the
 * time to train; the diagnosis (a plan that fits).  The sections of the
 * time are empty without a time simulation, as are the warnings, the time
 * to train and the diagnosis when there is nothing to say. */
typedef enum {
  SIM_REPORT_TITLE,
  SIM_REPORT_WARNINGS,
  SIM_REPORT_SETUP,
  SIM_REPORT_MEMORY,
  SIM_REPORT_CAPACITY,
  SIM_REPORT_VERDICT,
  SIM_REPORT_TIME,
  SIM_REPORT_ERROR_BAND,
  SIM_REPORT_TIME_TABLE,
  SIM_REPORT_CRITICAL_PATH,
  SIM_REPORT_TRAIN,
  SIM_REPORT_DIAGNOSIS,
  SIM_REPORT_N_SECTIONS
} SimReportSection;
/* one section exactly as sim_report_text_wide prints it (the report is
 * their concatenation), possibly "" and possibly starting with a blank
 * line; new text, caller g_free()s; never fails; any thread */
char *sim_report_section (const SimRun *run, SimReportSection section, gboolean wide);
/* the time to train on run->train_tokens (sim_run_train_estimate) as one
 * sentence, or NULL when no tokens were given */
char *sim_report_train_text (const SimRun *run);
/* the step time's validation as the report prints it under the step
 * time, one unwrapped sentence each: the error band of the cluster's GPU
 * generation on published runs (or that it has none), and for a
 * mixture-of-experts model the error on that generation's published MoE
 * runs (or that there are none); new text, caller g_free()s */
char *sim_report_error_band_sentence (const SimTopology *t);
char *sim_report_moe_band_sentence (const SimTopology *t);
char *sim_report_framework_band_sentence (const SimTopology *t, const SimPlan *p);
/* the sentences a plan's step time carries, in the order every output
 * prints them: a mixture-of-experts model's MoE band in place of the dense
 * one where the cluster file states it (else the dense band and that no
 * MoE run was predicted), then the framework's band where it has one; a
 * new array of new strings */
GPtrArray *sim_report_band_sentences (const SimTopology *t, const SimModel *m, const SimPlan *p);
/* under the bands, one unwrapped sentence each: what the spread of GPU
 * speeds adds to the step (sim_run_variability), NULL without a time; and
 * the straggler what-if of --slow-gpu / --slow-node (the step against the
 * same plan with none slow, and who waits), NULL without slow GPUs; new
 * text, caller g_free()s */
char *sim_report_variability_sentence (const SimRun *run);
char *sim_report_straggler_sentence (const SimRun *run);
/* the kernels of one layer and of the output layer, one micro-batch on
 * one GPU of the resolved plan p (sim_cost_layer_kernels), as `sim
 * kernels` prints them: a header, each pass's kernels with their shape or
 * bytes, GFLOP, milliseconds and rate, runs of the same kernel as one row,
 * each pass's shares and whether the host keeps up, and with
 * recomputation what it repeats; at most 100 columns; new text, caller
 * g_free()s; any thread */
char *sim_report_kernels (const SimModel *m, const SimPlan *p, const SimGpuType *g);
/* the list k (SimKernel) as CSV, one row per kernel: pass, name, role,
 * kind, m, n, k, batch, kernels, bytes, flop, seconds; new text */
char *sim_report_kernels_csv (const GArray *k);
/* one remedy as the report writes it: "--zero 3  why: peak ... fits" */
char *sim_report_remedy_text (const SimRemedy *r);
/* the fastest layout of the job that fits, as the report words it after
 * the remedies (a new string), or NULL when run has none searched
 * (SimRun.fastest_fit) */
char *sim_report_fastest_fit_text (const SimRun *run);
/* schema "sim-result/1", pretty-printed, ends with a newline */
char *sim_report_json (const SimRun *run);
/* the resolved plan as the object "plan" of j: degrees, batch, schedule,
 * options, rank order and the defaults applied (sim-result/1, sim compare);
 * appends to j, never fails */
void sim_report_json_plan (SimJson *j, const SimPlan *p);

/* the fields of a summary that every table's JSON shares: status
 * (sim_run_summary_status), oom_case, peak and usable bytes, and with a
 * time screened, step, tokens/s, MFU, bubble, compute, exposed TP/CP/PP/DP/EP
 * (the mean of the stages, as the report's stage table's mean row), wall
 * and scaling efficiency */
void sim_report_summary_json (SimJson *j, const SimRunSummary *s);

/* runs side by side (SimRun*, in the order given; schema "sim-runs/2"):
 * rank (1, 2 ... among the runs that fit, null for the rest), label, plan,
 * status, peak, time, scaling efficiency against ref (may be
 * NULL), wall; extra (may be NULL) becomes "notes".  New text, caller
 * g_free()s; never fails; any thread. */
char *sim_report_runs_json (const char *command, const char *topology, const char *model,
                            GPtrArray *runs, const SimRun *ref, GPtrArray *extra);

G_END_DECLS
