/* tests for sim-table: the narrow table that sim compare and sim sweep
 * print, and the counts under a sweep's, from rows made by hand, against
 * lines derived by hand */
#include <glib.h>

#include "sim-sweep.h"
#include "sim-table.h"

/* text's lines against want, one by one, then their count */
static void
assert_lines (const char *text, const char *const *want, guint n)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint i = 0;
  g_assert_true (g_str_has_suffix (text, "\n"));
  for (; lines[i] != NULL && lines[i + 1] != NULL; i++) {
    g_assert_cmpuint (i, <, n);
    g_assert_cmpstr (lines[i], ==, want[i]);
  }
  g_assert_cmpuint (i, ==, n);
}

/* the narrow table of rows against want */
static void
assert_narrow (const SimTableRow *rows, guint n, gboolean scale, const char *const *want, guint n_want)
{
  g_autofree char *text = sim_table_narrow (rows, n, scale);
  assert_lines (text, want, n_want);
}

/* Three rows of sim compare.
 *
 * Widths: MFU is the widest MFU of the rows with a time, "29.1% FP8", 9;
 * limit the widest limit, "compute", 7.  The columns after the plan take
 * 6 + 2 + 8 + 9 + 10 + 9 + 1 + 7 + 10 + 2 = 64, so the plan column is
 * 100 - 64 - 7 = 29 wide (its longest plan, 71 characters, is longer).
 * Each line: rank right in 4, two spaces, the plan left in 29, two
 * spaces, peak GB in 7 (%.1f), step s in 8 (%.3f), tokens/s in 9, MFU in
 * 9, bubble in 5 and "%", then exposed s left in 9, two spaces, limit.
 *
 * 1: PP and DP are both 0.135, the largest: the first named, PP.
 * ~2: a tie with the best; EP 0.300 is the largest, past TP 0.263; its
 *   plan cut after commas into lines of at most 29 columns:
 *   "tp=4,pp=8,mb=2," (15; with "schedule=interleaved," 36), then
 *   "schedule=interleaved,v=2," (25; with "recompute=full," 40), then
 *   "recompute=full,fp8=hybrid," (26; with "sp=on" 31), then "sp=on",
 *   each continuation under the plan column (6 spaces).
 * -: does not fit and has no time: "-" in step s, tokens/s, MFU, bubble
 *   and exposed s, each in its column's width. */
static void
test_narrow (void)
{
  const SimTableRow rows[] = {
    { .rank = "1", .label = "tp=8,pp=4", .peak_gb = 45.2, .has_time = TRUE, .step_s = 121.678,
      .tokens = "68,941", .mfu = "52.4%", .bubble = 0.044, .tp_s = 0.010, .cp_s = 0, .pp_s = 0.135,
      .dp_s = 0.135, .ep_s = 0, .limit = "compute" },
    { .rank = "~2", .label = "tp=4,pp=8,mb=2,schedule=interleaved,v=2,recompute=full,fp8=hybrid,sp=on",
      .peak_gb = 32.7, .has_time = TRUE, .step_s = 109.612, .tokens = "76,530", .mfu = "29.1% FP8",
      .bubble = 0.113, .tp_s = 0.263, .cp_s = 0.1, .pp_s = 0.2, .dp_s = 0.05, .ep_s = 0.3, .limit = "comm*" },
    { .rank = "-", .label = "tp=1,pp=1", .peak_gb = 479.8, .has_time = FALSE, .limit = "OOM A" },
  };
  const char *want[] = {
    "rank  plan                           peak GB   step s  tokens/s       MFU bubble exposed s  limit",
    "   1  tp=8,pp=4                         45.2  121.678    68,941     52.4%   4.4% PP 0.135   compute",
    "  ~2  tp=4,pp=8,mb=2,                   32.7  109.612    76,530 29.1% FP8  11.3% EP 0.300   comm*",
    "      schedule=interleaved,v=2,",
    "      recompute=full,fp8=hybrid,",
    "      sp=on",
    "   -  tp=1,pp=1                        479.8        -         -         -      - -          OOM A",
  };
  assert_narrow (rows, G_N_ELEMENTS (rows), FALSE, want, G_N_ELEMENTS (want));
}

/* Two rows of sim sweep --scale.
 *
 * Widths: MFU 5 (the least), limit 7; with the GPUs and E columns (11)
 * the columns after the plan take 6 + 2 + 8 + 9 + 10 + 5 + 1 + 7 + 10 + 2
 * + 11 = 71, leaving 100 - 71 - 7 = 22; the longest plan, 9, is shorter,
 * and the column is the least, 14.  GPUs in 5 and E in 4 come before
 * exposed s.  Row 1 exposes no communication: "0"; row ~2's largest is
 * DP. */
static void
test_narrow_scale (void)
{
  const SimTableRow rows[] = {
    { .rank = "1", .label = "tp=8,dp=1", .peak_gb = 60.0, .has_time = TRUE, .step_s = 9.904,
      .tokens = "846,981", .mfu = "38.7%", .gpus = 8, .e = "1.00", .limit = "compute" },
    { .rank = "~2", .label = "tp=8,dp=2", .peak_gb = 61.5, .has_time = TRUE, .step_s = 5.2,
      .tokens = "806,596", .mfu = "36.9%", .dp_s = 0.004, .gpus = 16, .e = "0.93", .limit = "comm" },
  };
  const char *want[] = {
    "rank  plan            peak GB   step s  tokens/s   MFU bubble  GPUs    E exposed s  limit",
    "   1  tp=8,dp=1          60.0    9.904   846,981 38.7%   0.0%     8 1.00 0          compute",
    "  ~2  tp=8,dp=2          61.5    5.200   806,596 36.9%   0.0%    16 0.93 DP 0.004   comm",
  };
  assert_narrow (rows, G_N_ELEMENTS (rows), TRUE, want, G_N_ELEMENTS (want));
}

/* The counts under a sweep's table, of five rows: two simulated (one of
 * them screened), one neither (not yet run: counted as a layout alone),
 * and two pruned, for reasons listed in the order they first occur with
 * their counts right in 6. */
static void
test_counts (void)
{
  SimSweepRow rows[5] = { { 0 } };
  g_autoptr (GPtrArray) all = g_ptr_array_new ();
  const char *want[] = {
    "5 layouts: 2 simulated (1 screened from shorter runs), 2 pruned before simulation:",
    "       1  out of memory, case A",
    "       1  dominated",
  };
  g_autofree char *text = NULL;
  rows[0].simulated = TRUE;
  rows[1].simulated = TRUE, rows[1].screened = TRUE;
  rows[3].pruned = "out of memory, case A";
  rows[4].pruned = "dominated";
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    g_ptr_array_add (all, &rows[i]);
  text = sim_table_sweep_counts (all);
  assert_lines (text, want, G_N_ELEMENTS (want));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/table/narrow", test_narrow);
  g_test_add_func ("/table/narrow-scale", test_narrow_scale);
  g_test_add_func ("/table/counts", test_counts);
  return g_test_run ();
}
