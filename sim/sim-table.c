/* sim-table.c — the ranked tables of sim compare and sim sweep (sim-table.h) */
#include <math.h>
#include <string.h>

#include "sim-format.h"
#include "sim-memory.h"
#include "sim-sweep.h"
#include "sim-table.h"

/* an MFU for a table: of the peak of the precision the linear layers run
 * at, "37.6% FP8", or "52.4%" for BF16 */
static char *
mfu_text (double mfu, const char *precision)
{
  return g_str_equal (precision, "fp8")   ? g_strdup_printf ("%.1f%% FP8", 100 * mfu)
         : g_str_equal (precision, "fp4") ? g_strdup_printf ("%.1f%% FP4", 100 * mfu)
                                          : g_strdup_printf ("%.1f%%", 100 * mfu);
}

/* the same of a run, from its MFU of the BF16 peak (sim_run_mfu_gemm_peak) */
static char *
mfu_cell (const SimRun *r, double mfu_bf16)
{
  const char *precision = NULL;
  double m = sim_run_mfu_gemm_peak (r->topo, r->plan, mfu_bf16, &precision);
  return mfu_text (m, precision);
}

/* what the wide table's units and columns mean, under it (E with scale) */
static void
append_wide_legend (GString *out, gboolean scale)
{
  g_string_append (out, "peak GB: per GPU, on the busiest pipeline stage (GB = 10^9 bytes); TP s, CP s, PP s,\n"
                        "DP s: communication exposed, not hidden behind compute (seconds per step); limit: what\n"
                        "bounds the step (memory when it does not fit, else compute or communication); MFU:\n"
                        "of the dense peak of the precision the linear layers run at, BF16 unless the row\n"
                        "says FP8 or FP4; BF16 MFU: of the BF16 peak, for every row; ~: within the best's\n"
                        "error band of it, a difference the validation cannot tell from none\n");
  if (scale)
    g_string_append (out, "E: scaling efficiency, tokens/s per GPU against the smallest layout that fits\n");
}

/* what the narrow table's units and columns mean, under it (E with scale) */
static void
append_narrow_legend (GString *out, gboolean scale)
{
  g_string_append (out, "peak GB: per GPU, on the busiest pipeline stage (GB = 10^9 bytes); exposed s: the\n"
                        "largest of the TP, CP, PP, DP and EP (experts' all-to-all) communication not\n"
                        "hidden behind compute (seconds per step; --wide shows each); limit: what bounds\n"
                        "the step, compute or comm (communication), or OOM and its case when it does not\n"
                        "fit; tight: fits only without the fragmentation allowance; *: from the steady\n"
                        "state of shorter runs;\n"
                        "MFU: of the dense peak of the precision the linear layers run at, BF16 unless the\n"
                        "row says FP8 or FP4 (--wide and the JSON also give every row's MFU of the BF16 peak);\n"
                        "~: within the best's error band of it, a difference the validation cannot tell\n"
                        "from none\n");
  if (scale)
    g_string_append (out, "E: scaling efficiency, tokens/s per GPU against the smallest layout that fits\n");
}

/* a plan string cut after commas into lines of at most w columns (an
 * item longer than w alone on its line) */
static GPtrArray *
plan_lines (const char *label, int w)
{
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) items = g_strsplit (label, ",", -1);
  g_autoptr (GString) line = g_string_new (NULL);
  for (guint i = 0; items[i] != NULL; i++) {
    g_autofree char *item = g_strconcat (items[i], items[i + 1] != NULL ? "," : "", NULL);
    if (line->len > 0 && (int) (line->len + strlen (item)) > w) {
      g_ptr_array_add (lines, g_strdup (line->str));
      g_string_truncate (line, 0);
    }
    g_string_append (line, item);
  }
  g_ptr_array_add (lines, g_strdup (line->str));
  return lines;
}

/* the narrow table's exposed s: the largest exposed communication of a
 * row, "PP 0.135", or "0" when none is exposed; of equal ones the first
 * of TP, CP, PP, DP and EP */
static char *
largest_exposed (const SimTableRow *r)
{
  const char *name = "TP";
  double s = r->tp_s;
  if (r->cp_s > s)
    name = "CP", s = r->cp_s;
  if (r->pp_s > s)
    name = "PP", s = r->pp_s;
  if (r->dp_s > s)
    name = "DP", s = r->dp_s;
  if (r->ep_s > s)
    name = "EP", s = r->ep_s;
  return s > 0 ? g_strdup_printf ("%s %.3f", name, s) : g_strdup ("0");
}

static void
append_narrow (GString *out, const SimTableRow *rows, guint n, gboolean scale)
{
  /* the columns after the plan; the plan takes what is left of 100 */
  int mw = 5, lw = 5, longest = 4, w = 0, fixed = 0;
  for (guint i = 0; i < n; i++) {
    longest = MAX (longest, (int) strlen (rows[i].label));
    lw = MAX (lw, (int) strlen (rows[i].limit));
    if (rows[i].has_time)
      mw = MAX (mw, (int) strlen (rows[i].mfu));
  }
  fixed = 6 + 2 + 8 + 9 + 10 + mw + 1 + 7 + 10 + 2 + (scale ? 11 : 0);
  w = MAX (MIN (longest, SIM_TABLE_COLUMNS - fixed - lw), 14);
  g_string_append_printf (out, "%4s  %-*s  %7s %8s %9s %*s %6s ", "rank", w, "plan", "peak GB", "step s", "tokens/s",
                          mw, "MFU", "bubble");
  if (scale)
    g_string_append_printf (out, "%5s %4s ", "GPUs", "E");
  g_string_append_printf (out, "%-9s  %s\n", "exposed s", "limit");
  for (guint i = 0; i < n; i++) {
    const SimTableRow *r = &rows[i];
    g_autoptr (GPtrArray) lines = plan_lines (r->label, w);
    g_string_append_printf (out, "%4s  %-*s  %7.1f ", r->rank, w, (const char *) g_ptr_array_index (lines, 0),
                            r->peak_gb);
    if (r->has_time) {
      g_autofree char *exposed = largest_exposed (r);
      g_string_append_printf (out, "%8.3f %9s %*s %5.1f%% ", r->step_s, r->tokens, mw, r->mfu, 100 * r->bubble);
      if (scale)
        g_string_append_printf (out, "%5d %4s ", r->gpus, r->e);
      g_string_append_printf (out, "%-9s  %s\n", exposed, r->limit);
    } else {
      g_string_append_printf (out, "%8s %9s %*s %6s ", "-", "-", mw, "-", "-");
      if (scale)
        g_string_append_printf (out, "%5d %4s ", r->gpus, "-");
      g_string_append_printf (out, "%-9s  %s\n", "-", r->limit);
    }
    for (guint k = 1; k < lines->len; k++)
      g_string_append_printf (out, "%4s  %s\n", "", (const char *) g_ptr_array_index (lines, k));
  }
}

char *
sim_table_narrow (const SimTableRow *rows, guint n, gboolean scale)
{
  GString *out = g_string_new (NULL);
  append_narrow (out, rows, n, scale);
  return g_string_free (out, FALSE);
}

/* ---- sim compare ---- */

/* the usable memory every plan of the table shares, in GB and GiB */
static void
append_usable (GString *out, guint64 usable)
{
  g_autofree char *gb = sim_format_gb (usable);
  g_autofree char *gib = sim_format_gib (usable);
  g_string_append_printf (out, "usable memory per GPU: %s (%s)\n", gb, gib);
}

/* a run's rank: its position, "~" where tied with the best, "-" when it
 * does not fit */
static char *
run_rank (const SimRun *r, guint i, const gboolean *tie)
{
  return r->memory->fits ? g_strdup_printf ("%s%u", tie[i] ? "~" : "", i + 1) : g_strdup ("-");
}

/* the columns of a row with a time, from its summary; mfu is new, and it
 * and the row's other new strings go to keep */
static void
row_time (SimTableRow *row, const SimRunSummary *s, char *mfu, GPtrArray *keep)
{
  char *t = NULL;
  row->has_time = TRUE;
  row->step_s = s->step_s;
  g_ptr_array_add (keep, t = sim_format_count ((guint64) llround (s->tokens_per_s)));
  row->tokens = t;
  g_ptr_array_add (keep, mfu);
  row->mfu = mfu;
  row->bubble = s->bubble;
  row->tp_s = s->tp_s;
  row->cp_s = s->cp_s;
  row->pp_s = s->pp_s;
  row->dp_s = s->dp_s;
  row->ep_s = s->ep_s;
}

/* the narrow row of run i; its new strings go to keep */
static void
compare_row (SimTableRow *row, const SimRun *r, guint i, const gboolean *tie, GPtrArray *keep)
{
  g_autoptr (SimRunSummary) s = sim_run_summary_new ((int) i, r->label, 0);
  const char *wall = sim_run_wall (r);
  char *t = NULL;
  sim_run_summary_fill (s, r);
  g_ptr_array_add (keep, t = run_rank (r, i, tie));
  row->rank = t;
  row->label = r->label;
  row->peak_gb = r->memory->peak_bytes / 1e9;
  /* no MFU for a plan that cannot run, as in the report */
  if (s->has_time)
    row_time (row, s, s->fits ? mfu_text (s->mfu_gemm, s->gemm_precision) : g_strdup ("-"), keep);
  g_ptr_array_add (keep, t = !r->memory->fits
                                 ? g_strdup_printf ("OOM %s", sim_oom_case_name (r->memory->oom_case))
                                 : g_strdup_printf ("%s%s%s", g_str_equal (wall, "communication") ? "comm" : wall,
                                                    r->memory->tight ? " tight" : "", r->extrapolated ? "*" : ""));
  row->limit = t;
}

/* --wide: every plan string whole, however long, in a column w wide */
static void
append_compare_wide (GString *out, GPtrArray *runs, const gboolean *tie, int w)
{
  g_string_append_printf (out, "%4s  %-*s  %-5s %7s %8s %9s %9s %8s %6s %6s %6s %6s %6s %6s  %s\n", "rank", w,
                          "plan", "fits", "peak GB", "step s", "tokens/s", "MFU", "BF16 MFU", "bubble", "TP s", "CP s",
                          "PP s", "DP s", "EP s", "limit");
  for (guint i = 0; i < runs->len; i++) {
    const SimRun *r = g_ptr_array_index (runs, i);
    const SimIteration *it = r->time;
    g_autofree char *fits = r->memory->tight  ? g_strdup ("tight")
                            : r->memory->fits ? g_strdup ("yes")
                                            : g_strdup_printf ("OOM %s", sim_oom_case_name (r->memory->oom_case));
    g_autofree char *rank = run_rank (r, i, tie);
    g_autofree char *tok = it != NULL ? sim_format_count ((guint64) llround (it->tokens_per_s)) : g_strdup ("-");
    /* no MFU for a plan that cannot run, as in the report */
    g_autofree char *mfu = it != NULL && r->memory->fits ? mfu_cell (r, it->mfu) : g_strdup ("-");
    g_autofree char *bf16 = it != NULL && r->memory->fits ? g_strdup_printf ("%.1f%%", 100 * it->mfu) : g_strdup ("-");
    g_string_append_printf (out, "%4s  %-*s  %-5s %7.1f ", rank, w, r->label, fits, r->memory->peak_bytes / 1e9);
    if (it != NULL)
      g_string_append_printf (out, "%8.3f %9s %9s %8s %5.1f%% %6.3f %6.3f %6.3f %6.3f %6.3f ", it->step_s, tok, mfu,
                              bf16, 100 * it->bubble_fraction, it->exposed_tp_s, it->exposed_cp_s, it->exposed_pp_s,
                              it->exposed_dp_s, it->exposed_ep_s);
    else
      g_string_append_printf (out, "%8s %9s %9s %8s %6s %6s %6s %6s %6s %6s ", "-", "-", "-", "-", "-", "-", "-", "-",
                              "-", "-");
    g_string_append_printf (out, " %s%s\n", sim_run_wall (r), r->extrapolated ? " (screened)" : "");
  }
}

char *
sim_table_compare (GPtrArray *runs, gboolean wide)
{
  GString *out = g_string_new (NULL);
  gsize w = 4;
  guint64 usable = 0;
  gboolean same_usable = TRUE;
  g_autofree gboolean *tie = g_new0 (gboolean, runs->len + 1);
  for (guint i = 0; i < runs->len; i++) {
    const SimRun *r = g_ptr_array_index (runs, i);
    w = MAX (w, strlen (r->label));
    if (i > 0 && r->memory->usable_bytes != usable)
      same_usable = FALSE;
    usable = r->memory->usable_bytes;
  }
  sim_run_ties (runs, tie);
  if (wide) {
    append_compare_wide (out, runs, tie, (int) w);
  } else {
    g_autofree SimTableRow *rows = g_new0 (SimTableRow, MAX (runs->len, 1));
    g_autoptr (GPtrArray) keep = g_ptr_array_new_with_free_func (g_free);
    for (guint i = 0; i < runs->len; i++)
      compare_row (&rows[i], g_ptr_array_index (runs, i), i, tie, keep);
    append_narrow (out, rows, runs->len, FALSE);
  }
  g_string_append_c (out, '\n');
  if (same_usable && runs->len > 0)
    append_usable (out, usable);
  if (wide)
    append_wide_legend (out, FALSE);
  else
    append_narrow_legend (out, FALSE);
  return g_string_free (out, FALSE);
}

/* ---- sim sweep ---- */

/* what an empty table says: no layout fits, or there was none to try (no
 * split of the GPUs into tp x cp x pp x dp suits the global batch and the
 * layers, as with a model's published batch of 1024 on a 72-GPU rack) */
static const char *
empty_table_line (GPtrArray *ranked)
{
  return ranked->len > 0
             ? "(no layout fits in GPU memory on this cluster: see the counts below)"
             : "(no layout to try: no split of the GPUs into tp x cp x pp x dp divides the global\n"
               " batch into micro-batches and the layers into stages: give --global-batch, a multiple\n"
               " of the GPU count for one, or --nodes)";
}

/* a row's rank among the n shown before it: "~" where tied with the best */
static char *
row_rank (const SimSweepRow *r, int n)
{
  return g_strdup_printf ("%s%d", r->tie ? "~" : "", n + 1);
}

/* the wide table: the ranked layouts that have a time, every plan whole;
 * the GPU count and the scaling efficiency E only with scale, where they
 * differ from row to row */
static void
append_sweep_wide (GString *out, GPtrArray *ranked, int top, gboolean scale)
{
  gsize w = 4;
  int shown = 0;
  for (guint i = 0; i < ranked->len && (int) i < top; i++)
    w = MAX (w, strlen (((SimSweepRow *) g_ptr_array_index (ranked, i))->label));
  g_string_append_printf (out, "%4s  %-*s ", "rank", (int) w, "plan");
  if (scale)
    g_string_append_printf (out, "%5s ", "GPUs");
  g_string_append_printf (out, "%7s %8s %9s %9s %8s %6s %6s %6s %6s %6s %6s ", "peak GB", "step s", "tokens/s",
                          "MFU", "BF16 MFU", "bubble", "TP s", "CP s", "PP s", "DP s", "EP s");
  if (scale)
    g_string_append_printf (out, "%5s ", "E");
  g_string_append (out, " limit\n");
  for (guint i = 0; i < ranked->len && shown < top; i++) {
    const SimSweepRow *r = g_ptr_array_index (ranked, i);
    g_autofree char *tok = NULL, *rank = NULL, *mfu = NULL;
    if (!r->has_time)
      break;
    tok = sim_format_count ((guint64) llround (r->tokens_per_s));
    rank = row_rank (r, shown++);
    g_string_append_printf (out, "%4s  %-*s ", rank, (int) w, r->label);
    if (scale)
      g_string_append_printf (out, "%5d ", r->gpus);
    mfu = mfu_text (r->mfu_gemm, r->gemm_precision);
    g_string_append_printf (out, "%7.1f %8.3f %9s %9s %7.1f%% %5.1f%% %6.3f %6.3f %6.3f %6.3f %6.3f ",
                            r->peak_bytes / 1e9, r->step_s, tok, mfu, 100 * r->mfu, 100 * r->bubble, r->tp_s, r->cp_s,
                            r->pp_s, r->dp_s, r->ep_s);
    if (scale)
      g_string_append_printf (out, "%5.2f ", r->e);
    g_string_append_printf (out, " %s%s\n", r->wall != NULL ? r->wall : "-", r->screened ? " (screened)" : "");
  }
  if (shown == 0) {
    g_auto (GStrv) lines = g_strsplit (empty_table_line (ranked), "\n", -1);
    for (guint i = 0; lines[i] != NULL; i++)
      g_string_append_printf (out, "      %s\n", lines[i]);
  }
  g_string_append_c (out, '\n');
  append_wide_legend (out, scale);
}

gboolean
sim_table_rows_differ_in_gb (GPtrArray *rows)
{
  guint64 first = 0;
  for (guint i = 0; i < rows->len; i++) {
    guint64 gb = ((const SimSweepRow *) g_ptr_array_index (rows, i))->global_batch;
    if (gb == 0)
      continue; /* a pruned row's plan names no global batch */
    if (first == 0)
      first = gb;
    else if (gb != first)
      return TRUE;
  }
  return FALSE;
}

/* the narrow row of the n-th layout shown; its new strings go to keep */
static void
sweep_row (SimTableRow *row, const SimSweepRow *r, guint n, gboolean keep_gb, GPtrArray *keep)
{
  char *t = NULL;
  g_ptr_array_add (keep, t = row_rank (r, (int) n));
  row->rank = t;
  g_ptr_array_add (keep, t = sim_sweep_compact_label (r->label, keep_gb));
  row->label = t;
  row->peak_gb = r->peak_bytes / 1e9;
  row_time (row, r, mfu_text (r->mfu_gemm, r->gemm_precision), keep);
  row->gpus = r->gpus;
  g_ptr_array_add (keep, t = isnan (r->e) ? g_strdup ("-") : g_strdup_printf ("%.2f", r->e));
  row->e = t;
  g_ptr_array_add (keep, t = g_strdup_printf ("%s%s", r->wall == NULL                         ? "-"
                                                      : g_str_equal (r->wall, "communication") ? "comm"
                                                                                               : r->wall,
                                              r->screened ? "*" : ""));
  row->limit = t;
}

char *
sim_table_sweep (GPtrArray *ranked, int top, gboolean scale, gboolean wide)
{
  GString *out = g_string_new (NULL);
  g_autofree SimTableRow *rows = NULL;
  g_autoptr (GPtrArray) keep = NULL;
  gboolean keep_gb = FALSE;
  guint n = 0;
  if (wide) {
    append_sweep_wide (out, ranked, top, scale);
    return g_string_free (out, FALSE);
  }
  keep_gb = sim_table_rows_differ_in_gb (ranked);
  keep = g_ptr_array_new_with_free_func (g_free);
  rows = g_new0 (SimTableRow, MAX (ranked->len, 1));
  for (guint i = 0; i < ranked->len && (int) n < top; i++) {
    const SimSweepRow *r = g_ptr_array_index (ranked, i);
    if (!r->has_time)
      break;
    sweep_row (&rows[n], r, n, keep_gb, keep);
    n++;
  }
  if (n > 0)
    append_narrow (out, rows, n, scale);
  else
    g_string_append_printf (out, "%s\n", empty_table_line (ranked));
  g_string_append_c (out, '\n');
  append_narrow_legend (out, scale);
  return g_string_free (out, FALSE);
}

char *
sim_table_sweep_counts (GPtrArray *rows)
{
  GString *out = g_string_new (NULL);
  g_autoptr (GHashTable) reasons = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) order = g_ptr_array_new ();
  int simulated = 0, screened = 0, pruned = 0;
  for (guint i = 0; i < rows->len; i++) {
    const SimSweepRow *r = g_ptr_array_index (rows, i);
    if (r->pruned != NULL) {
      gpointer n = g_hash_table_lookup (reasons, r->pruned);
      if (n == NULL)
        g_ptr_array_add (order, r->pruned);
      g_hash_table_insert (reasons, r->pruned, GINT_TO_POINTER (GPOINTER_TO_INT (n) + 1));
      pruned++;
    } else if (r->simulated) {
      simulated++;
      screened += r->screened;
    }
  }
  g_string_append_printf (out, "%u layouts: %d simulated (%d screened from shorter runs), %d pruned before "
                          "simulation:\n", rows->len, simulated, screened, pruned);
  for (guint i = 0; i < order->len; i++)
    g_string_append_printf (out, "  %6d  %s\n", GPOINTER_TO_INT (g_hash_table_lookup (reasons, g_ptr_array_index (order, i))),
                            (const char *) g_ptr_array_index (order, i));
  return g_string_free (out, FALSE);
}
