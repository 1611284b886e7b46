/* sim-table.h — the ranked tables of sim compare and sim sweep, as text.
 * The narrow table fits SIM_TABLE_COLUMNS (its plan column wrapping after
 * commas, the largest exposed communication in one column); the wide one
 * (--wide, sim sweep --merge) gives every plan whole and every kind of
 * exposed communication its column.  The command line prints these and
 * the --html page embeds them.  Each returns a new string (g_free());
 * never fails; any thread. */
#pragma once

#include <glib.h>

#include "sim-run.h"

G_BEGIN_DECLS

/* the narrow tables' width, and what the command line fits its help to */
#define SIM_TABLE_COLUMNS 100

/* one row of the narrow table that compare and sweep share; strings are
 * borrowed */
typedef struct {
  const char *rank;      /* "1", "~2" (tied with the best), or "-": does not fit */
  const char *label;     /* the plan, cut after commas when too long */
  double peak_gb;
  gboolean has_time;     /* FALSE: "-" in every column of the step */
  double step_s;
  const char *tokens;    /* tokens/s, with thousands separators */
  const char *mfu;       /* "50.8%", "37.6% FP8" or "-" */
  double bubble;         /* fraction of the step */
  /* communication exposed, not hidden behind compute, seconds per step:
   * tensor, context, pipeline, data and expert parallel */
  double tp_s, cp_s, pp_s, dp_s, ep_s;
  int gpus;              /* with scale */
  const char *e;         /* with scale: "0.93" or "-" */
  const char *limit;     /* "compute", "comm", "OOM A", with " tight" or "*" */
} SimTableRow;

/* the lines of the narrow table of n rows, header first, with the GPUs
 * and E columns when scale; no legend */
char *sim_table_narrow (const SimTableRow *rows, guint n, gboolean scale);

/* the table of sim compare: runs (SimRun*) in the order given, ranked by
 * their position ("~" where sim_run_ties ties them), then the usable
 * memory where every plan shares it and the legend; narrow unless wide */
char *sim_table_compare (GPtrArray *runs, gboolean wide);

/* the table of sim sweep: the first top rows of ranked (SimSweepRow*, as
 * sim_sweep_rank orders them) that have a time, or the line saying why
 * there are none, then the legend; the GPUs and the scaling efficiency E
 * when scale.  Narrow unless wide, where every plan is given whole (sim
 * sweep --merge's table). */
char *sim_table_sweep (GPtrArray *ranked, int top, gboolean scale, gboolean wide);

/* the counts under a sweep's table: how many of rows (SimSweepRow*,
 * every layout of the sweep) were simulated, screened from shorter runs
 * and pruned, then how many were pruned for each reason, in the order
 * the reasons first occur */
char *sim_table_sweep_counts (GPtrArray *rows);

/* whether rows' (SimSweepRow*) global batches differ (a sweep with --scale
 * of a model that publishes none: 8 sequences per GPU of each node
 * count), so that the narrow table, the charts and the page show each
 * plan's (sim_sweep_compact_label's keep_gb) */
gboolean sim_table_rows_differ_in_gb (GPtrArray *rows);

G_END_DECLS
