/* tests for sim-nccl: the parser of nccl-tests output.
 *
 * The ten files under tests/validation/data/nccl-tests/ are raw outputs from
 * public sources (SOURCES.md there).  For each, the expectations below were
 * copied by hand from the file: the op it names (UNKNOWN where the text names
 * none: the op is then known only from SOURCES.md), its device lines, its row
 * count and the numbers of its first and last rows. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "sim-error.h"
#include "sim-nccl.h"

typedef struct {
  guint64 size_bytes, count;
  double time_us, algbw, busbw, time_us_inplace, busbw_inplace;
  int line;
} Expect;

typedef struct {
  const char *file;
  SimCollOp op;         /* as named in the text */
  int ranks;            /* device lines */
  const char *gpu_name; /* NULL: no device lines */
  guint rows;
  double avg_busbw;     /* NAN: no footer */
  Expect first, last;
  SimCollOp true_op;    /* from SOURCES.md, for the busbw check */
  int true_ranks;
} Case;

static const Case cases[] = {
  { "h100x8-allreduce-dgxc-benchmarking.txt", SIM_OP_UNKNOWN, 8, "NVIDIA H100 80GB HBM3", 32,
    159.151,
    { 8, 2, 13.67, 0.00, 0.00, 13.03, 0.00, 16 },
    { G_GUINT64_CONSTANT (17179869184), 4294967296, 62648, 274.23, 479.90, 62636, 479.99, 47 },
    SIM_OP_ALL_REDUCE, 8 },
  /* the command is on a "> " markdown quote line */
  { "h100x16-2node-a3mega-tcpxo-allreduce-gcp.txt", SIM_OP_ALL_REDUCE, 16,
    "NVIDIA H100 80GB HBM3", 31, 70.742,
    { 8, 2, 135.8, 0.00, 0.00, 123.5, 0.00, 32 },
    { G_GUINT64_CONSTANT (8589934592), 2147483648, 47535, 180.71, 338.82, 47743, 337.35, 62 },
    SIM_OP_ALL_REDUCE, 16 },
  /* all_gather with "redop none"; count is per rank, size / (4 B x 16) */
  { "h200x16-2node-a3ultra-rdma-allgather-gcp.txt", SIM_OP_UNKNOWN, 16, "NVIDIA H200", 24,
    121.902,
    { 1024, 16, 28.70, 0.04, 0.03, 27.82, 0.03, 25 },
    { G_GUINT64_CONSTANT (8589934592), 134217728, 24739, 347.22, 325.52, 24244, 332.16, 48 },
    SIM_OP_ALL_GATHER, 16 },
  /* every line prefixed "(head, rank=0, pid=3808) [1,0]<stdout>:" */
  { "h200x16-2node-a3ultra-rdma-allgather-skypilot.txt", SIM_OP_UNKNOWN, 16, "NVIDIA H200", 24,
    122.073,
    { 1024, 16, 28.39, 0.04, 0.03, 28.07, 0.03, 28 },
    { G_GUINT64_CONSTANT (8589934592), 134217728, 24724, 347.44, 325.72, 24214, 332.58, 51 },
    SIM_OP_ALL_GATHER, 16 },
  /* nccl-tests 2.18: "# Collective test starting: all_reduce_perf", 2 decimals above 1 ms */
  { "h200x16-2node-spectrumx-roce-allreduce-g8x2proc-ncclt2.18.txt", SIM_OP_ALL_REDUCE, 16,
    "NVIDIA H200", 25, 178.222,
    { 1024, 256, 45.06, 0.02, 0.04, 43.74, 0.04, 27 },
    { G_GUINT64_CONSTANT (17179869184), 4294967296, 66326.9, 259.02, 485.66, 66345.5, 485.52,
      51 },
    SIM_OP_ALL_REDUCE, 16 },
  { "a100x8-allreduce-g8-singleproc-blog.txt", SIM_OP_ALL_REDUCE, 8, "NVIDIA A100-SXM4-80GB", 30,
    66.2058,
    { 8, 2, 40.12, 0.00, 0.00, 38.85, 0.00, 17 },
    { G_GUINT64_CONSTANT (4294967296), 1073741824, 32336, 132.82, 232.44, 32455, 231.59, 46 },
    SIM_OP_ALL_REDUCE, 8 },
  /* Open MPI help lines before the first row and before the last */
  { "a100x8-allreduce-mpirun-np8-blog.txt", SIM_OP_ALL_REDUCE, 8, "NVIDIA A100-SXM4-80GB", 30,
    72.7724,
    { 8, 2, 20.26, 0.00, 0.00, 17.74, 0.00, 18 },
    { G_GUINT64_CONSTANT (4294967296), 1073741824, 32285, 133.03, 232.81, 32268, 232.93, 48 },
    SIM_OP_ALL_REDUCE, 8 },
  /* "0: " prefix; no nThread line, devices, first header line or footer */
  { "h100x16-2node-p5-efa-allreduce-awsome.txt", SIM_OP_UNKNOWN, 0, NULL, 32, NAN,
    { 8, 2, 69.12, 0.00, 0.00, 72.43, 0.00, 3 },
    { G_GUINT64_CONSTANT (17179869184), 4294967296, 66132, 259.78, 487.09, 66109, 487.26, 34 },
    SIM_OP_ALL_REDUCE, 16 },
  { "a100x16-2node-p4de-efa-allreduce-awsome.txt", SIM_OP_UNKNOWN, 0, NULL, 29, NAN,
    { 8, 2, 164.3, 0.00, 0.00, 163.3, 0.00, 3 },
    { G_GUINT64_CONSTANT (2147483648), 536870912, 51406, 41.78, 78.33, 51406, 78.33, 31 },
    SIM_OP_ALL_REDUCE, 16 },
  /* "[1,0]<stdout>:" prefix; no devices, footer without a final "#" */
  { "h100x8-p5-allreduce-awsbatch.txt", SIM_OP_UNKNOWN, 0, NULL, 32, 156.742,
    { 8, 2, 12.90, 0.00, 0.00, 12.87, 0.00, 4 },
    { G_GUINT64_CONSTANT (17179869184), 4294967296, 62239, 276.03, 483.05, 62200, 483.35, 35 },
    SIM_OP_ALL_REDUCE, 8 },
};

static void
check_row (const SimNcclRow *row, const Expect *e)
{
  g_assert_cmpuint (row->size_bytes, ==, e->size_bytes);
  g_assert_cmpuint (row->count, ==, e->count);
  g_assert_cmpfloat_with_epsilon (row->time_us, e->time_us, 1e-9);
  g_assert_cmpfloat_with_epsilon (row->algbw_GBps, e->algbw, 1e-9);
  g_assert_cmpfloat_with_epsilon (row->busbw_GBps, e->busbw, 1e-9);
  g_assert_cmpfloat_with_epsilon (row->time_us_inplace, e->time_us_inplace, 1e-9);
  g_assert_cmpfloat_with_epsilon (row->busbw_GBps_inplace, e->busbw_inplace, 1e-9);
  g_assert_cmpint (row->line, ==, e->line);
}

static void
test_file (gconstpointer data)
{
  const Case *c = data;
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (SIM_SOURCE_DIR, "tests", "validation", "data",
                                            "nccl-tests", c->file, NULL);
  g_autoptr (SimNcclResult) r = sim_nccl_parse_file (path, &error);
  double factor = sim_coll_op_busbw_factor (c->true_op, c->true_ranks);

  g_assert_no_error (error);
  g_assert_nonnull (r);
  g_assert_cmpstr (r->path, ==, path);
  g_assert_cmpstr (sim_coll_op_name (r->op), ==, sim_coll_op_name (c->op));
  g_assert_cmpint (r->ranks, ==, c->ranks);
  g_assert_cmpstr (r->gpu_name, ==, c->gpu_name);
  g_assert_cmpuint (r->rows->len, ==, c->rows);
  if (isnan (c->avg_busbw))
    g_assert_true (isnan (r->avg_busbw_GBps));
  else
    g_assert_cmpfloat_with_epsilon (r->avg_busbw_GBps, c->avg_busbw, 1e-9);
  check_row (&g_array_index (r->rows, SimNcclRow, 0), &c->first);
  check_row (&g_array_index (r->rows, SimNcclRow, r->rows->len - 1), &c->last);

  /* sizes double from row to row (-f 2), and every printed busbw is the
   * printed algbw times the bus factor of the collective in SOURCES.md, within
   * rounding: 0.005 on busbw plus factor x 0.005 on algbw */
  for (guint i = 0; i < r->rows->len; i++) {
    const SimNcclRow *row = &g_array_index (r->rows, SimNcclRow, i);
    if (i > 0)
      g_assert_cmpuint (row->size_bytes, ==,
                        2 * g_array_index (r->rows, SimNcclRow, i - 1).size_bytes);
    g_assert_cmpfloat (fabs (row->busbw_GBps - factor * row->algbw_GBps), <=,
                       0.005 + factor * 0.005 + 1e-9);
  }
}

static void
expect_error (const char *text, const char *message)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimNcclResult) r = sim_nccl_parse_text ("bad.txt", text, &error);

  g_assert_null (r);
  g_assert_error (error, SIM_ERROR, SIM_ERROR_USAGE);
  if (g_test_verbose ())
    g_test_message ("%s", error->message);
  g_assert_cmpstr (error->message, ==, message);
}

static void
test_bad_empty (void)
{
  expect_error ("",
                "bad.txt: expected nccl-tests output (size, count, type, ... rows), found none");
}

static void
test_bad_no_rows (void)
{
  expect_error ("# nThread 1 nGpus 8 minBytes 8 maxBytes 4294967296\n"
                "#       size         count      type   redop    root     time   algbw   busbw\n"
                "# Avg bus bandwidth    : 66.2058\n",
                "bad.txt: expected nccl-tests output (size, count, type, ... rows), found none");
}

static void
test_bad_number (void)
{
  /* the letter O in the time of the second row */
  expect_error ("     8     2     float     sum      -1    40.12    0.00    0.00      0\n"
                "    16     4     float     sum      -1    4O.12    0.00    0.00      0\n",
                "bad.txt:2: expected the out-of-place time in microseconds (a positive number), "
                "found '4O.12'");
  expect_error ("0:     8     2     float     sum      -1    40.12    0.00    0.00      0    "
                "38.85    fast    0.00      0\n",
                "bad.txt:1: expected the in-place algbw in GB/s (a number), found 'fast'");
  expect_error ("   8   2   float   sum   -1   40.12   0.00   0.00\n",
                "bad.txt:1: expected time, algbw, busbw and #wrong, out of place and optionally in "
                "place (4 or 8 columns after type, redop and root), found 3");
}

static void
test_bad_algbw (void)
{
  /* 1 GiB in 8247.6 us is 130.19 GB/s; 230.19 is a typo */
  expect_error ("  1073741824   268435456   float   sum   -1   8247.6  230.19  227.83   0\n",
                "bad.txt:1: expected the out-of-place algbw to be size/time = 1073741824 B / "
                "8247.6 us = 130.19 GB/s, found 230.19");
}

static void
test_bad_two_ops (void)
{
  expect_error ("./all_reduce_perf -b 8 -e 8\n"
                "     8     2     float     sum      -1    40.12    0.00    0.00      0\n"
                "./all_gather_perf -b 8 -e 8\n",
                "bad.txt:3: expected one collective per file, found all_gather_perf after "
                "all_reduce_perf on line 1");
}

static void
test_bad_file (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimNcclResult) r = sim_nccl_parse_file ("/nonexistent/nccl.txt", &error);

  g_assert_null (r);
  g_assert_error (error, SIM_ERROR, SIM_ERROR_IO);
}

static void
test_formats (void)
{
  /* old format (NVIDIA/nccl#583 era): no root, float error column, no
   * in-place group; N/A #wrong; CRLF line ends; a glued launcher prefix */
  const char *text =
    "#       size         count    type   redop     time   algbw   busbw  error\n"
    "           8             2   float     sum    43.29    0.00    0.00  0e+00\r\n"
    "[1,0]<stdout>:123456789012   30864197253   float   sum  -1  1000000  123.46  216.05  N/A\n"
    "        1024           512  bfloat16  sum  -1  10.00  0.10  0.18  0  10.00  0.10  0.18  0\n";
  g_autoptr (GError) error = NULL;
  g_autoptr (SimNcclResult) r = sim_nccl_parse_text ("ok.txt", text, &error);
  const SimNcclRow *row;

  g_assert_no_error (error);
  g_assert_cmpuint (r->rows->len, ==, 3);
  row = &g_array_index (r->rows, SimNcclRow, 0);
  g_assert_cmpuint (row->size_bytes, ==, 8);
  g_assert_cmpfloat_with_epsilon (row->time_us, 43.29, 1e-9);
  g_assert_true (isnan (row->time_us_inplace));
  g_assert_true (isnan (row->busbw_GBps_inplace));
  row = &g_array_index (r->rows, SimNcclRow, 1);
  g_assert_cmpuint (row->size_bytes, ==, G_GUINT64_CONSTANT (123456789012));
  g_assert_cmpint (row->line, ==, 3);
  row = &g_array_index (r->rows, SimNcclRow, 2);
  g_assert_cmpuint (row->count, ==, 512);
  g_assert_cmpfloat_with_epsilon (row->busbw_GBps_inplace, 0.18, 1e-9);
  g_assert_cmpint (r->op, ==, SIM_OP_UNKNOWN);
  g_assert_cmpint (r->ranks, ==, 0);
  g_assert_null (r->gpu_name);
}

static void
test_op_names (void)
{
  struct { const char *name; SimCollOp op; } ok[] = {
    { "all_reduce", SIM_OP_ALL_REDUCE },
    { "allreduce", SIM_OP_ALL_REDUCE },
    { "all_reduce_perf", SIM_OP_ALL_REDUCE },
    { "/opt/nccl-tests/build/all_reduce_perf", SIM_OP_ALL_REDUCE },
    { "AllReduce", SIM_OP_ALL_REDUCE },
    { "all_gather_perf_mpi", SIM_OP_ALL_GATHER },
    { "reduce_scatter", SIM_OP_REDUCE_SCATTER },
    { "broadcast_perf", SIM_OP_BROADCAST },
    { "reduce_perf", SIM_OP_REDUCE },
    { "sendrecv", SIM_OP_SENDRECV },
    { "alltoall_perf", SIM_OP_ALLTOALL },
  };
  const char *bad[] = { "", "gather_perf", "hypercube_perf", "all", "unknown", "_perf" };
  SimCollOp op;

  for (guint i = 0; i < G_N_ELEMENTS (ok); i++) {
    op = SIM_OP_UNKNOWN;
    g_assert_true (sim_nccl_op_parse (ok[i].name, &op));
    g_assert_cmpint (op, ==, ok[i].op);
  }
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    g_assert_false (sim_nccl_op_parse (bad[i], &op));
  for (int o = SIM_OP_ALL_REDUCE; o < SIM_OP_UNKNOWN; o++) {
    g_assert_true (sim_nccl_op_parse (sim_coll_op_name (o), &op));
    g_assert_cmpint (op, ==, o);
  }
  g_assert_cmpstr (sim_coll_op_name (SIM_OP_REDUCE_SCATTER), ==, "reduce_scatter");
  g_assert_cmpstr (sim_coll_op_name (SIM_OP_UNKNOWN), ==, "unknown");
}

static void
test_busbw_factor (void)
{
  /* all_reduce n=8: 2*7/8 = 1.75; all_gather n=16: 15/16 = 0.9375 */
  g_assert_cmpfloat_with_epsilon (sim_coll_op_busbw_factor (SIM_OP_ALL_REDUCE, 8), 1.75, 1e-12);
  g_assert_cmpfloat_with_epsilon (sim_coll_op_busbw_factor (SIM_OP_ALL_GATHER, 16), 0.9375, 1e-12);
  /* reduce_scatter and alltoall as all_gather: n=4 gives 0.75; all_reduce n=16 gives 1.875 */
  g_assert_cmpfloat_with_epsilon (sim_coll_op_busbw_factor (SIM_OP_REDUCE_SCATTER, 4), 0.75, 1e-12);
  g_assert_cmpfloat_with_epsilon (sim_coll_op_busbw_factor (SIM_OP_ALLTOALL, 4), 0.75, 1e-12);
  g_assert_cmpfloat_with_epsilon (sim_coll_op_busbw_factor (SIM_OP_ALL_REDUCE, 16), 1.875, 1e-12);
  g_assert_cmpfloat_with_epsilon (sim_coll_op_busbw_factor (SIM_OP_BROADCAST, 8), 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (sim_coll_op_busbw_factor (SIM_OP_REDUCE, 8), 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (sim_coll_op_busbw_factor (SIM_OP_SENDRECV, 2), 1.0, 1e-12);
  g_assert_true (isnan (sim_coll_op_busbw_factor (SIM_OP_UNKNOWN, 8)));
  g_assert_true (isnan (sim_coll_op_busbw_factor (SIM_OP_ALL_REDUCE, 0)));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree char *name = g_strdup (cases[i].file);
    g_autofree char *test_path = NULL;
    /* GTest paths: no dots */
    *strrchr (name, '.') = '\0';
    g_strdelimit (name, ".", '_');
    test_path = g_strconcat ("/nccl/file/", name, NULL);
    g_test_add_data_func (test_path, &cases[i], test_file);
  }
  g_test_add_func ("/nccl/bad/empty", test_bad_empty);
  g_test_add_func ("/nccl/bad/no-rows", test_bad_no_rows);
  g_test_add_func ("/nccl/bad/number", test_bad_number);
  g_test_add_func ("/nccl/bad/algbw", test_bad_algbw);
  g_test_add_func ("/nccl/bad/two-ops", test_bad_two_ops);
  g_test_add_func ("/nccl/bad/file", test_bad_file);
  g_test_add_func ("/nccl/formats", test_formats);
  g_test_add_func ("/nccl/op-names", test_op_names);
  g_test_add_func ("/nccl/busbw-factor", test_busbw_factor);
  return g_test_run ();
}
