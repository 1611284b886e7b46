/* tests for microbench/mb-common: the GPU-free half of the microbenchmarks.
 *
 * Every expected number is worked by hand in the comment beside it.  The CSV
 * writer is checked by reading its output back with sim's own parser
 * (sim_microbench_parse_text), and the human nccl-tests table with the parser of
 * `sim validate --nccl` (sim_nccl_parse_text), so the programs cannot drift
 * from what sim reads. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "mb-common.h"
#include "sim-microbench.h"
#include "sim-error.h"
#include "sim-nccl.h"

/* everything written to f, as a string */
static char *
slurp (FILE *f)
{
  char *text;
  rewind (f);
  text = mb_read_stream (f);
  g_assert_nonnull (text);
  return text;
}

static void
assert_rel (double actual, double expected, double rel)
{
  g_assert_cmpfloat_with_epsilon (actual, expected, fabs (expected) * rel);
}

/* ---- median -------------------------------------------------------------- */

static void
test_median_odd (void)
{
  const double v[] = { 3, 1, 2 };
  /* sorted 1 2 3: the middle one */
  g_assert_cmpfloat (mb_median (v, 3), ==, 2);
  g_assert_cmpfloat (mb_median (v, 1), ==, 3);
}

static void
test_median_even (void)
{
  const double v[] = { 4, 1, 3, 2 };
  /* sorted 1 2 3 4: (2 + 3) / 2 */
  g_assert_cmpfloat (mb_median (v, 4), ==, 2.5);
}

static void
test_median_unsorted (void)
{
  double v[] = { 176.3, 9.5, 1e4, 176.3, -1, 180.0, 175.0 };
  /* sorted -1 9.5 175 176.3 176.3 180 1e4: the fourth; an outlier does not move it */
  g_assert_cmpfloat (mb_median (v, G_N_ELEMENTS (v)), ==, 176.3);
  /* the input is left as it was */
  g_assert_cmpfloat (v[0], ==, 176.3);
  g_assert_cmpfloat (v[2], ==, 1e4);
  g_assert_true (isnan (mb_median (v, 0)));
}

/* ---- sizes --------------------------------------------------------------- */

static void
test_sizes_pow2 (void)
{
  size_t n = 99;
  g_autofree uint64_t *hbm = mb_sizes_pow2 (UINT64_C (64) << 20, UINT64_C (4) << 30, &n);
  g_autofree uint64_t *nccl = NULL, *odd = NULL, *top = NULL;

  /* 2^26 .. 2^32: 7 sizes */
  g_assert_cmpuint (n, ==, 7);
  g_assert_cmpuint (hbm[0], ==, UINT64_C (67108864));
  g_assert_cmpuint (hbm[6], ==, UINT64_C (4294967296));
  /* 8 B .. 8 GiB, 2^3 .. 2^33: 31 sizes, as nccl-tests -b 8 -e 8G -f 2 */
  nccl = mb_sizes_pow2 (8, UINT64_C (8) << 30, &n);
  g_assert_cmpuint (n, ==, 31);
  g_assert_cmpuint (nccl[30], ==, UINT64_C (8589934592));
  /* 3 .. 20: starts at the next power of two, 4 8 16 */
  odd = mb_sizes_pow2 (3, 20, &n);
  g_assert_cmpuint (n, ==, 3);
  g_assert_cmpuint (odd[0], ==, 4);
  g_assert_cmpuint (odd[2], ==, 16);
  /* 2^63 is the last power of two; doubling it must not wrap to 0 */
  top = mb_sizes_pow2 (UINT64_C (1) << 63, UINT64_MAX, &n);
  g_assert_cmpuint (n, ==, 1);
  g_assert_null (mb_sizes_pow2 (0, 8, &n));
  g_assert_cmpuint (n, ==, 0);
  g_assert_null (mb_sizes_pow2 (16, 8, &n));
  g_assert_null (mb_sizes_pow2 (5, 7, &n));
}

static void
test_sizes_parse_bytes (void)
{
  char err[256];
  uint64_t v = 0;
  const char *bad[] = { "", "x", "4K", "4 GiB", "-1", "1.5GiB", "20000000000TiB", "99999999999999999999" };

  g_assert_cmpint (mb_parse_bytes ("8", &v, err, sizeof err), ==, 0);
  g_assert_cmpuint (v, ==, 8);
  g_assert_cmpint (mb_parse_bytes ("8B", &v, err, sizeof err), ==, 0);
  g_assert_cmpuint (v, ==, 8);
  /* 64 x 2^20 */
  g_assert_cmpint (mb_parse_bytes ("64MiB", &v, err, sizeof err), ==, 0);
  g_assert_cmpuint (v, ==, UINT64_C (67108864));
  g_assert_cmpint (mb_parse_bytes ("8GiB", &v, err, sizeof err), ==, 0);
  g_assert_cmpuint (v, ==, UINT64_C (8589934592));
  /* k = 10^3, G = 10^9 */
  g_assert_cmpint (mb_parse_bytes ("1kB", &v, err, sizeof err), ==, 0);
  g_assert_cmpuint (v, ==, 1000);
  g_assert_cmpint (mb_parse_bytes ("2GB", &v, err, sizeof err), ==, 0);
  g_assert_cmpuint (v, ==, UINT64_C (2000000000));
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    err[0] = '\0';
    g_assert_cmpint (mb_parse_bytes (bad[i], &v, err, sizeof err), ==, -1);
    g_assert_cmpuint (strlen (err), >, 0);
  }
  g_assert_nonnull (strstr (err, "expected"));
}

/* ---- GEMM shapes --------------------------------------------------------- */

static void
test_grid (void)
{
  size_t n = 0;
  g_autofree MbShape *g = mb_gemm_grid (256, 16384, &n);
  g_autofree MbShape *one = NULL;

  /* 256 512 1024 2048 4096 8192 16384: 7 values, 7^3 = 343 triples */
  g_assert_cmpuint (n, ==, 343);
  g_assert_cmpstr (g[0].name, ==, "grid");
  g_assert_cmpuint (g[0].m, ==, 256);
  g_assert_cmpuint (g[0].k, ==, 256);
  /* k varies fastest */
  g_assert_cmpuint (g[1].m, ==, 256);
  g_assert_cmpuint (g[1].n, ==, 256);
  g_assert_cmpuint (g[1].k, ==, 512);
  /* index 7 * 7 = 49: the second m */
  g_assert_cmpuint (g[49].m, ==, 512);
  g_assert_cmpuint (g[342].m, ==, 16384);
  g_assert_cmpuint (g[342].n, ==, 16384);
  g_assert_cmpuint (g[342].k, ==, 16384);
  /* all distinct */
  g_assert_cmpuint (mb_shapes_unique (g, n), ==, 343);
  one = mb_gemm_grid (256, 256, &n);
  g_assert_cmpuint (n, ==, 1);
  g_assert_null (mb_gemm_grid (300, 500, &n));
}

/* the output of `sim shapes --model llama3-70b --tp 8`, with a comment,
 * blank lines and CRLF line ends added */
static const char *llama_shapes =
    "name,m,n,k\n"
    "qkv,8192,1280,8192\n"
    "qkv_dgrad,8192,8192,1280\r\n"
    "qkv_wgrad,8192,1280,8192\n"
    "\n"
    "# attention output projection\n"
    "attn_out,8192,8192,1024\n"
    "attn_out_dgrad,8192,1024,8192\n"
    "attn_out_wgrad,1024,8192,8192\n"
    "mlp_up,8192,7168,8192\n"
    "mlp_up_dgrad,8192,8192,7168\n"
    "mlp_up_wgrad,8192,7168,8192\n"
    "mlp_down,8192,8192,3584\n"
    "mlp_down_dgrad,8192,3584,8192\n"
    "mlp_down_wgrad,3584,8192,8192\n"
    "output,8192,16032,8192\n"
    "output_dgrad,8192,8192,16032\n"
    " output_wgrad , 8192 ,16032,8192";

static void
test_shapes_good (void)
{
  char err[256] = "";
  size_t n = 0;
  g_autofree MbShape *s = mb_shapes_parse ("sim shapes", llama_shapes, &n, err, sizeof err);

  g_assert_nonnull (s);
  g_assert_cmpstr (err, ==, "");
  g_assert_cmpuint (n, ==, 15);
  g_assert_cmpstr (s[0].name, ==, "qkv");
  g_assert_cmpuint (s[0].m, ==, 8192);
  g_assert_cmpuint (s[0].n, ==, 1280);
  g_assert_cmpuint (s[0].k, ==, 8192);
  g_assert_cmpstr (s[1].name, ==, "qkv_dgrad");
  g_assert_cmpuint (s[1].k, ==, 1280);
  /* blanks around fields and a last line without '\n' */
  g_assert_cmpstr (s[14].name, ==, "output_wgrad");
  g_assert_cmpuint (s[14].n, ==, 16032);
  /* qkv_wgrad = qkv, mlp_up_wgrad = mlp_up and output_wgrad = output as
   * (m, n, k): 15 - 3 = 12 distinct, first names kept */
  n = mb_shapes_unique (s, n);
  g_assert_cmpuint (n, ==, 12);
  g_assert_cmpstr (s[2].name, ==, "attn_out");
  g_assert_cmpstr (s[11].name, ==, "output_dgrad");
}

static void
test_shapes_bad (void)
{
  static const struct {
    const char *text;
    const char *message;
  } cases[] = {
    /* line 4: blank lines count */
    { "name,m,n,k\nqkv,1,2,3\n\nbad,1,x,3\n", "t.csv:4: column n: expected a positive whole number" },
    { "a,1,2\n", "t.csv:1: expected 4 comma-separated fields" },
    { "a,1,2,3,4\n", "t.csv:1: expected 4 comma-separated fields" },
    { "# c\na,0,1,1\n", "t.csv:2: column m: expected a positive whole number" },
    { "a,1,1,-1\n", "t.csv:1: column k: expected a positive whole number" },
    { ",1,1,1\n", "t.csv:1: column name: expected a name" },
    { "a_name_far_longer_than_the_sixty_three_characters_that_fit_in_a_shape,1,1,1\n",
      "t.csv:1: column name: expected a name of 1 to 63 characters" },
    /* the column line only counts as such first */
    { "a,1,1,1\nname,m,n,k\n", "t.csv:2: column m: expected a positive whole number" },
    { "name,m,n,k\n\n", "t.csv: expected at least one line name,m,n,k, found none" },
    { "", "t.csv: expected at least one line" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    char err[256] = "";
    size_t n = 7;
    MbShape *s = mb_shapes_parse ("t.csv", cases[i].text, &n, err, sizeof err);
    g_assert_null (s);
    g_assert_cmpuint (n, ==, 0);
    if (!g_str_has_prefix (err, cases[i].message))
      g_error ("case %u: expected a message starting '%s', got '%s'", i, cases[i].message, err);
  }
}

/* ---- the CSV ------------------------------------------------------------- */

static void
test_csv_round_trip (void)
{
  const MbHeader h = {
    "gemm", "NVIDIA H100 80GB HBM3\n", "550.54.15", "12040", "120400", NULL, "sm 1980 MHz, memory 2619 MHz",
    "2026-11-29T12:00:00Z",
  };
  /* the three example rows of sim-microbench.h */
  const MbRow rows[] = {
    { "gemm", "matmul", "bf16", 4096, 4096, 4096, 0, 1, 176.3, 7.79e14 },
    { "hbm", "triad", "float", 0, 0, 0, UINT64_C (4294967296), 1, 4400.1, 2.93e12 },
    { "nccl", "all_reduce", "float", 0, 0, 0, 1048576, 8, 27.4, 6.70e10 },
  };
  const MbRow bad = { "gemm", "matmul", "bf16", 1, 1, 1, 0, 1, 0, 1 };
  FILE *f = tmpfile ();
  g_autofree char *text = NULL;
  g_autoptr (SimMicrobench) b = NULL;
  g_autoptr (GError) error = NULL;
  const SimMicrobenchRow *r;

  g_assert_nonnull (f);
  g_assert_cmpint (mb_write_header (f, &h), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    g_assert_cmpint (mb_write_row (f, &rows[i]), ==, 0);
  /* a zero time is refused and writes nothing: sim would reject the file */
  g_assert_cmpint (mb_write_row (f, &bad), ==, -1);
  text = slurp (f);
  fclose (f);

  g_assert_true (g_str_has_prefix (text, "# sim-microbench/1\n# program: gemm\n"));
  /* empty fields exactly as in sim-microbench.h */
  g_assert_nonnull (strstr (text, "\nkind,op,dtype,m,n,k,bytes,gpus,time_us,rate_per_s\n"
                                  "gemm,matmul,bf16,4096,4096,4096,,1,176.3,7.79e+14\n"
                                  "hbm,triad,float,,,,4294967296,1,4400.1,2.93e+12\n"
                                  "nccl,all_reduce,float,,,,1048576,8,27.4,6.7e+10\n"));

  b = sim_microbench_parse_text ("mb.csv", text, &error);
  g_assert_no_error (error);
  g_assert_nonnull (b);
  g_assert_cmpstr (sim_microbench_header (b, "program"), ==, "gemm");
  /* the newline in the name became a blank, then stripped */
  g_assert_cmpstr (sim_microbench_header (b, "gpu"), ==, "NVIDIA H100 80GB HBM3");
  g_assert_cmpstr (sim_microbench_header (b, "driver"), ==, "550.54.15");
  g_assert_cmpstr (sim_microbench_header (b, "cuda"), ==, "12040");
  g_assert_cmpstr (sim_microbench_header (b, "cublas"), ==, "120400");
  g_assert_cmpstr (sim_microbench_header (b, "nccl"), ==, "-");
  g_assert_cmpstr (sim_microbench_header (b, "clocks"), ==, "sm 1980 MHz, memory 2619 MHz");
  g_assert_cmpstr (sim_microbench_header (b, "date"), ==, "2026-11-29T12:00:00Z");
  g_assert_cmpuint (b->rows->len, ==, 3);

  r = &g_array_index (b->rows, SimMicrobenchRow, 0);
  g_assert_cmpstr (r->kind, ==, "gemm");
  g_assert_cmpstr (r->op, ==, "matmul");
  g_assert_cmpstr (r->dtype, ==, "bf16");
  g_assert_cmpfloat (r->m, ==, 4096);
  g_assert_cmpfloat (r->k, ==, 4096);
  g_assert_cmpfloat (r->bytes, ==, 0);
  g_assert_cmpint (r->gpus, ==, 1);
  g_assert_cmpfloat_with_epsilon (r->time_us, 176.3, 1e-9);
  assert_rel (r->rate_per_s, 7.79e14, 1e-12);

  r = &g_array_index (b->rows, SimMicrobenchRow, 1);
  g_assert_cmpstr (r->op, ==, "triad");
  g_assert_cmpfloat (r->m, ==, 0);
  g_assert_cmpfloat (r->bytes, ==, 4294967296.0);

  r = &g_array_index (b->rows, SimMicrobenchRow, 2);
  g_assert_cmpstr (r->kind, ==, "nccl");
  g_assert_cmpint (r->gpus, ==, 8);
  g_assert_cmpfloat (r->bytes, ==, 1048576);
  assert_rel (r->rate_per_s, 6.70e10, 1e-12);
}

static void
test_csv_date (void)
{
  char buf[32];
  mb_format_utc (0, buf, sizeof buf);
  g_assert_cmpstr (buf, ==, "1970-01-01T00:00:00Z");
  /* calendar.timegm((2026, 11, 29, 12, 0, 0)) = 1795953600 */
  mb_format_utc (1795953600LL, buf, sizeof buf);
  g_assert_cmpstr (buf, ==, "2026-11-29T12:00:00Z");
}

static void
test_csv_driver_version (void)
{
  char v[32] = "";
  g_assert_cmpint (mb_parse_nvidia_version ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  "
                                            "Tue Mar  5 22:23:49 UTC 2024\nGCC version:  gcc 12\n",
                                            v, sizeof v),
                   ==, 0);
  g_assert_cmpstr (v, ==, "550.54.15");
  /* the open kernel module names its architecture after "for" */
  g_assert_cmpint (mb_parse_nvidia_version ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                            "570.86.15  Release Build  (dvs-builder@U16)  Thu Jan 23",
                                            v, sizeof v),
                   ==, 0);
  g_assert_cmpstr (v, ==, "570.86.15");
  g_assert_cmpint (mb_parse_nvidia_version ("GCC version: 12.2\n", v, sizeof v), ==, -1);
  g_assert_cmpint (mb_parse_nvidia_version ("NVRM version: none here\n1.2.3", v, sizeof v), ==, -1);
}

static void
test_shell_quote (void)
{
  char buf[64] = "sim shapes --model ";
  char tiny[4] = "";
  g_assert_cmpint (mb_shell_quote (buf, sizeof buf, "a'b c"), ==, 0);
  /* ' closes, \' is a quote, ' reopens */
  g_assert_cmpstr (buf, ==, "sim shapes --model 'a'\\''b c'");
  g_assert_cmpint (mb_shell_quote (tiny, sizeof tiny, "abc"), ==, -1);
}

/* ---- rates --------------------------------------------------------------- */

static void
test_rates_gemm (void)
{
  /* 2 x 4096^3 = 137438953472 FLOP in 176.3 us: 7.7957e14 FLOP/s (sim-microbench.h's 7.79e14) */
  assert_rel (mb_gemm_flop_per_s (4096, 4096, 4096, 176.3), 7.79574324855e14, 1e-9);
  /* 2 x 8192 x 1280 x 8192 = 1.717986918e11 FLOP in 100 us: 1.717986918e15 */
  assert_rel (mb_gemm_flop_per_s (8192, 1280, 8192, 100), 1.7179869184e15, 1e-12);
  g_assert_cmpfloat (mb_gemm_flop_per_s (1, 1, 1, 0), ==, 0);
}

static void
test_rates_hbm (void)
{
  /* copy of 1 GiB in 1 ms: 2 x 2^30 / 1e-3 = 2.147483648e12 B/s */
  assert_rel (mb_hbm_bytes_per_s (MB_HBM_COPY, UINT64_C (1) << 30, 1000), 2.147483648e12, 1e-12);
  /* triad of 1 GiB in 1 ms: 3 x 2^30 / 1e-3 = 3.221225472e12 B/s */
  assert_rel (mb_hbm_bytes_per_s (MB_HBM_TRIAD, UINT64_C (1) << 30, 1000), 3.221225472e12, 1e-12);
  /* sim-microbench.h's row: triad of 4 GiB in 4400.1 us: 3 x 2^32 / 4.4001e-3 = 2.92832e12 */
  assert_rel (mb_hbm_bytes_per_s (MB_HBM_TRIAD, UINT64_C (4) << 30, 4400.1), 2.928320240e12, 1e-9);
  g_assert_cmpstr (mb_hbm_op_name (MB_HBM_COPY), ==, "copy");
  g_assert_cmpstr (mb_hbm_op_name (MB_HBM_TRIAD), ==, "triad");
}

static void
test_rates_busbw_factors (void)
{
  /* n = 8: all_reduce 2 x 7/8 = 1.75, all_gather / reduce_scatter 7/8, sendrecv 1 */
  g_assert_cmpfloat_with_epsilon (mb_nccl_busbw_factor (MB_NCCL_ALL_REDUCE, 8), 1.75, 1e-15);
  g_assert_cmpfloat_with_epsilon (mb_nccl_busbw_factor (MB_NCCL_ALL_GATHER, 8), 0.875, 1e-15);
  g_assert_cmpfloat_with_epsilon (mb_nccl_busbw_factor (MB_NCCL_REDUCE_SCATTER, 8), 0.875, 1e-15);
  g_assert_cmpfloat (mb_nccl_busbw_factor (MB_NCCL_SENDRECV, 8), ==, 1);
  /* n = 2: all_reduce 2 x 1/2 = 1, all_gather 1/2; n = 1: no bus traffic */
  g_assert_cmpfloat (mb_nccl_busbw_factor (MB_NCCL_ALL_REDUCE, 2), ==, 1);
  g_assert_cmpfloat (mb_nccl_busbw_factor (MB_NCCL_ALL_GATHER, 2), ==, 0.5);
  g_assert_cmpfloat (mb_nccl_busbw_factor (MB_NCCL_ALL_REDUCE, 1), ==, 0);
  g_assert_true (isnan (mb_nccl_busbw_factor (MB_NCCL_ALL_REDUCE, 0)));
  /* the same factors as sim's reader of nccl-tests output */
  for (int op = 0; op < MB_NCCL_N_OPS; op++) {
    SimCollOp sop = SIM_OP_UNKNOWN;
    g_assert_true (sim_nccl_op_parse (mb_nccl_op_name ((MbNcclOp) op), &sop));
    g_assert_cmpint (mb_nccl_op_parse (mb_nccl_op_name ((MbNcclOp) op)), ==, op);
    for (int n = 1; n <= 16; n++)
      g_assert_cmpfloat_with_epsilon (mb_nccl_busbw_factor ((MbNcclOp) op, n),
                                      sim_coll_op_busbw_factor (sop, n), 1e-15);
  }
  g_assert_cmpint (mb_nccl_op_parse ("allreduce"), ==, -1);
}

static void
test_rates_busbw (void)
{
  /* sim-microbench.h's row: 1 MiB all_reduce on 8 GPUs in 27.4 us:
   * algbw = 1048576 / 27.4e-6 = 3.82692e10 B/s, busbw x 1.75 = 6.69711e10 */
  assert_rel (mb_nccl_algbw (1048576, 27.4), 3.826919708e10, 1e-9);
  assert_rel (mb_nccl_busbw (MB_NCCL_ALL_REDUCE, 8, 1048576, 27.4), 6.697109489e10, 1e-9);
  /* 8 GiB all_gather on 8 GPUs in 24739 us: 8589934592 / 0.024739 = 3.47222e11 algbw,
   * x 7/8 = 3.03820e11 busbw */
  assert_rel (mb_nccl_busbw (MB_NCCL_ALL_GATHER, 8, UINT64_C (8589934592), 24739), 3.038195872e11, 1e-9);
}

static void
test_rates_counts (void)
{
  uint64_t sc = 0, rc = 0;
  /* all_reduce 8 B of float: 2 elements in and out */
  g_assert_cmpuint (mb_nccl_counts (MB_NCCL_ALL_REDUCE, 8, 8, 4, &sc, &rc), ==, 8);
  g_assert_cmpuint (sc, ==, 2);
  g_assert_cmpuint (rc, ==, 2);
  /* 6 B: one whole float, 4 B run */
  g_assert_cmpuint (mb_nccl_counts (MB_NCCL_ALL_REDUCE, 8, 6, 4, &sc, &rc), ==, 4);
  /* all_gather 8 B on 8 ranks: 2 elements, 0 per rank: skipped */
  g_assert_cmpuint (mb_nccl_counts (MB_NCCL_ALL_GATHER, 8, 8, 4, &sc, &rc), ==, 0);
  g_assert_cmpuint (sc, ==, 0);
  /* all_gather 1024 B on 16 ranks: 256 elements, 16 sent per rank, 256 received */
  g_assert_cmpuint (mb_nccl_counts (MB_NCCL_ALL_GATHER, 16, 1024, 4, &sc, &rc), ==, 1024);
  g_assert_cmpuint (sc, ==, 16);
  g_assert_cmpuint (rc, ==, 256);
  /* reduce_scatter 1000 B on 8 ranks: 250 elements -> 31 per rank, 248 sent,
   * 31 x 8 x 4 = 992 B run */
  g_assert_cmpuint (mb_nccl_counts (MB_NCCL_REDUCE_SCATTER, 8, 1000, 4, &sc, &rc), ==, 992);
  g_assert_cmpuint (sc, ==, 248);
  g_assert_cmpuint (rc, ==, 31);
  /* sendrecv: the whole buffer each way */
  g_assert_cmpuint (mb_nccl_counts (MB_NCCL_SENDRECV, 2, 4096, 4, &sc, &rc), ==, 4096);
  g_assert_cmpuint (sc, ==, 1024);
  g_assert_cmpuint (rc, ==, 1024);
}

/* the stderr table reads back with the parser of `sim validate --nccl` */
static void
test_nccl_table (void)
{
  FILE *f = tmpfile ();
  g_autofree char *text = NULL;
  g_autoptr (SimNcclResult) r = NULL;
  g_autoptr (GError) error = NULL;
  const SimNcclRow *row;

  g_assert_nonnull (f);
  mb_nccl_table_begin (f, MB_NCCL_ALL_GATHER, 8);
  for (int g = 0; g < 8; g++)
    mb_nccl_table_rank (f, g, 4242, "node0", g, "0000:18:00.0", "NVIDIA H200");
  mb_nccl_table_columns (f);
  /* 8 B on 8 ranks is skipped by the program; 1 KiB: per-rank count 32 */
  mb_nccl_table_row (f, MB_NCCL_ALL_GATHER, 8, 1024, 32, "float", 25.5);
  /* 64 MiB in 500 us: "500.0", algbw 67108864 / 500e-6 = 134.22 GB/s */
  mb_nccl_table_row (f, MB_NCCL_ALL_GATHER, 8, UINT64_C (67108864), 2097152, "float", 500.0);
  /* 8 GiB in 24739.4 us is printed "24739" */
  mb_nccl_table_row (f, MB_NCCL_ALL_GATHER, 8, UINT64_C (8589934592), 268435456, "float", 24739.4);
  mb_nccl_table_end (f, 101.5);
  text = slurp (f);
  fclose (f);

  r = sim_nccl_parse_text ("table", text, &error);
  g_assert_no_error (error);
  g_assert_nonnull (r);
  g_assert_cmpint (r->op, ==, SIM_OP_ALL_GATHER);
  g_assert_cmpint (r->ranks, ==, 8);
  g_assert_cmpstr (r->gpu_name, ==, "NVIDIA H200");
  g_assert_cmpfloat_with_epsilon (r->avg_busbw_GBps, 101.5, 1e-9);
  g_assert_cmpuint (r->rows->len, ==, 3);
  row = &g_array_index (r->rows, SimNcclRow, 0);
  g_assert_cmpuint (row->size_bytes, ==, 1024);
  g_assert_cmpuint (row->count, ==, 32);
  g_assert_cmpfloat_with_epsilon (row->time_us, 25.5, 1e-9);
  g_assert_true (isnan (row->time_us_inplace));
  row = &g_array_index (r->rows, SimNcclRow, 1);
  g_assert_cmpfloat_with_epsilon (row->time_us, 500, 1e-9);
  g_assert_cmpfloat_with_epsilon (row->algbw_GBps, 134.22, 1e-9);
  /* 134.2177 x 7/8 = 117.44 */
  g_assert_cmpfloat_with_epsilon (row->busbw_GBps, 117.44, 1e-9);
  row = &g_array_index (r->rows, SimNcclRow, 2);
  g_assert_cmpfloat (row->time_us, ==, 24739);
  /* 8589934592 / 24739.4e-6 = 347.2168 GB/s, x 7/8 = 303.8147: "347.22", "303.81" */
  g_assert_cmpfloat_with_epsilon (row->algbw_GBps, 347.22, 1e-9);
  g_assert_cmpfloat_with_epsilon (row->busbw_GBps, 303.81, 1e-9);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/microbench/median/odd", test_median_odd);
  g_test_add_func ("/microbench/median/even", test_median_even);
  g_test_add_func ("/microbench/median/unsorted", test_median_unsorted);
  g_test_add_func ("/microbench/sizes/pow2", test_sizes_pow2);
  g_test_add_func ("/microbench/sizes/parse-bytes", test_sizes_parse_bytes);
  g_test_add_func ("/microbench/shapes/grid", test_grid);
  g_test_add_func ("/microbench/shapes/good", test_shapes_good);
  g_test_add_func ("/microbench/shapes/bad", test_shapes_bad);
  g_test_add_func ("/microbench/csv/round-trip", test_csv_round_trip);
  g_test_add_func ("/microbench/csv/date", test_csv_date);
  g_test_add_func ("/microbench/csv/driver-version", test_csv_driver_version);
  g_test_add_func ("/microbench/csv/shell-quote", test_shell_quote);
  g_test_add_func ("/microbench/rates/gemm", test_rates_gemm);
  g_test_add_func ("/microbench/rates/hbm", test_rates_hbm);
  g_test_add_func ("/microbench/rates/busbw-factors", test_rates_busbw_factors);
  g_test_add_func ("/microbench/rates/busbw", test_rates_busbw);
  g_test_add_func ("/microbench/rates/nccl-counts", test_rates_counts);
  g_test_add_func ("/microbench/nccl-table/round-trip", test_nccl_table);
  return g_test_run ();
}
