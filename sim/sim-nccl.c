/* sim-nccl.c — see sim-nccl.h for the formats accepted. */
#include "sim-nccl.h"

#include <math.h>
#include <string.h>

#include "sim-error.h"
#include "sim-input.h"

/* print rounding: algbw has two decimals, time four significant digits */
#define ALGBW_REL_TOL 0.02
#define ALGBW_ABS_TOL_GBPS 0.02

static const struct {
  SimCollOp op;
  const char *name;    /* as sim_coll_op_name() */
  const char *compact; /* lowercase, no separators: what op_parse compares */
} ops[] = {
  { SIM_OP_ALL_REDUCE, "all_reduce", "allreduce" },
  { SIM_OP_ALL_GATHER, "all_gather", "allgather" },
  { SIM_OP_REDUCE_SCATTER, "reduce_scatter", "reducescatter" },
  { SIM_OP_BROADCAST, "broadcast", "broadcast" },
  { SIM_OP_REDUCE, "reduce", "reduce" },
  { SIM_OP_SENDRECV, "sendrecv", "sendrecv" },
  { SIM_OP_ALLTOALL, "all_to_all", "alltoall" },
};

/* the data types nccl-tests prints (test_typenames), old NCCL 1 names
 * included, and both fp8 spellings */
static const char *const type_names[] = {
  "int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double",
  "bfloat16", "f8e4m3", "f8e5m2", "fp8_e4m3", "fp8_e5m2", "fp8e4m3", "fp8e5m2",
  "char", "int",
};

gboolean
sim_nccl_op_parse (const char *name, SimCollOp *out)
{
  g_autofree char *lower = NULL;
  g_autoptr (GString) compact = g_string_new (NULL);
  const char *base;

  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);

  base = strrchr (name, '/');
  base = base != NULL ? base + 1 : name;
  lower = g_ascii_strdown (base, -1);
  /* binaries built with MPI are sometimes renamed all_reduce_perf_mpi */
  if (g_str_has_suffix (lower, "_mpi"))
    lower[strlen (lower) - 4] = '\0';
  if (g_str_has_suffix (lower, "_perf"))
    lower[strlen (lower) - 5] = '\0';
  for (const char *p = lower; *p != '\0'; p++)
    if (*p != '_' && *p != '-')
      g_string_append_c (compact, *p);

  for (guint i = 0; i < G_N_ELEMENTS (ops); i++) {
    if (strcmp (compact->str, ops[i].compact) == 0) {
      *out = ops[i].op;
      return TRUE;
    }
  }
  return FALSE;
}

void
sim_nccl_result_free (SimNcclResult *r)
{
  if (r == NULL)
    return;
  g_free (r->path);
  g_free (r->gpu_name);
  if (r->rows != NULL)
    g_array_unref (r->rows);
  g_free (r);
}

static gboolean
is_type_name (const char *tok)
{
  for (guint i = 0; i < G_N_ELEMENTS (type_names); i++)
    if (strcmp (tok, type_names[i]) == 0)
      return TRUE;
  return FALSE;
}

static gboolean
parse_uint (const char *tok, guint64 *out)
{
  guint64 v = 0;

  if (*tok == '\0')
    return FALSE;
  for (const char *p = tok; *p != '\0'; p++) {
    if (!g_ascii_isdigit (*p))
      return FALSE;
    if (v > (G_MAXUINT64 - (guint64) (*p - '0')) / 10)
      return FALSE;
    v = v * 10 + (guint64) (*p - '0');
  }
  *out = v;
  return TRUE;
}

/* the size column, which a launcher may glue to its prefix when the number
 * fills the 12-character field ("[1,0]<stdout>:123456789012") */
static gboolean
parse_size (const char *tok, guint64 *out)
{
  const char *p = tok + strlen (tok);

  while (p > tok && g_ascii_isdigit (p[-1]))
    p--;
  if (p != tok && strchr (":>])", p[-1]) == NULL)
    return FALSE;
  return parse_uint (p, out);
}

static gboolean
is_int (const char *tok)
{
  guint64 v;
  return parse_uint (tok[0] == '-' ? tok + 1 : tok, &v);
}

/* a non-negative finite decimal as nccl-tests prints it: 40.12, 13552, 0e+00 */
static gboolean
parse_number (const char *tok, double *out)
{
  char *end = NULL;
  double v;

  if (!g_ascii_isdigit (tok[0]) && !(tok[0] == '.' && g_ascii_isdigit (tok[1])))
    return FALSE;
  if (tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X'))
    return FALSE;
  v = g_ascii_strtod (tok, &end);
  if (end == tok || *end != '\0' || !isfinite (v) || v < 0)
    return FALSE;
  *out = v;
  return TRUE;
}

static gboolean
looks_numeric (const char *tok)
{
  return g_ascii_isdigit (tok[0]) || tok[0] == '-' || tok[0] == '+' || tok[0] == '.';
}

static GPtrArray *
split_tokens (const char *line)
{
  GPtrArray *toks = g_ptr_array_new_with_free_func (g_free);
  const char *p = line;

  while (*p != '\0') {
    const char *start;
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p == '\0')
      break;
    start = p;
    while (*p != '\0' && *p != ' ' && *p != '\t')
      p++;
    g_ptr_array_add (toks, g_strndup (start, (gsize) (p - start)));
  }
  return toks;
}

/* the index of the type token of a data row, or -1: a type name with two
 * whole numbers before it, none of the tokens up to there in a # comment */
static int
find_type_token (GPtrArray *toks)
{
  for (guint i = 2; i < toks->len; i++) {
    const char *t = g_ptr_array_index (toks, i);
    guint64 v;
    gboolean comment = FALSE;

    if (!is_type_name (t))
      continue;
    if (!parse_uint (g_ptr_array_index (toks, i - 1), &v) ||
        !parse_size (g_ptr_array_index (toks, i - 2), &v))
      continue;
    for (guint j = 0; j <= i - 2; j++)
      if (strchr (g_ptr_array_index (toks, j), '#') != NULL)
        comment = TRUE;
    if (comment)
      return -1;
    return (int) i;
  }
  return -1;
}

/* one group of four: time algbw busbw #wrong */
static gboolean
parse_group (const char *path, int lineno, const char *which, char **col, guint64 size_bytes,
             double *time_us, double *algbw, double *busbw, GError **error)
{
  double wrong, expected;

  if (!parse_number (col[0], time_us) || (*time_us == 0 && size_bytes > 0)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s:%d: expected the %s time in microseconds (a positive number), found '%s'",
                 path, lineno, which, col[0]);
    return FALSE;
  }
  if (!parse_number (col[1], algbw)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s:%d: expected the %s algbw in GB/s (a number), found '%s'", path, lineno,
                 which, col[1]);
    return FALSE;
  }
  if (!parse_number (col[2], busbw)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s:%d: expected the %s busbw in GB/s (a number), found '%s'", path, lineno,
                 which, col[2]);
    return FALSE;
  }
  if (strcmp (col[3], "N/A") != 0 && !parse_number (col[3], &wrong)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s:%d: expected the %s #wrong column (a count, an error such as 0e+00, or N/A), "
                 "found '%s'",
                 path, lineno, which, col[3]);
    return FALSE;
  }
  if (size_bytes == 0)
    return TRUE;
  /* a column shifted or mistyped by hand shows up here: nccl-tests prints
   * algbw = size / time with GB = 1e9 */
  expected = (double) size_bytes / (*time_us * 1e3);
  if (fabs (*algbw - expected) > MAX (ALGBW_REL_TOL * expected, ALGBW_ABS_TOL_GBPS)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s:%d: expected the %s algbw to be size/time = %" G_GUINT64_FORMAT
                 " B / %g us = %.2f GB/s, found %s",
                 path, lineno, which, size_bytes, *time_us, expected, col[1]);
    return FALSE;
  }
  return TRUE;
}

/* *is_row FALSE (and TRUE returned) for a line that is not a data row */
static gboolean
parse_row (const char *path, int lineno, const char *line, SimNcclRow *row, gboolean *is_row,
           GError **error)
{
  g_autoptr (GPtrArray) toks = split_tokens (line);
  char **rest;
  guint n, idx = 0, left;
  int ti = find_type_token (toks);
  double algbw_inplace = NAN;

  *is_row = FALSE;
  if (ti < 0)
    return TRUE;
  *is_row = TRUE;

  memset (row, 0, sizeof *row);
  row->line = lineno;
  row->time_us_inplace = NAN;
  row->busbw_GBps_inplace = NAN;
  parse_size (g_ptr_array_index (toks, ti - 2), &row->size_bytes);
  parse_uint (g_ptr_array_index (toks, ti - 1), &row->count);

  rest = (char **) toks->pdata + ti + 1;
  n = toks->len - (guint) ti - 1;
  /* redop is a word (sum, none, ...), missing in some old formats */
  if (idx < n && !looks_numeric (rest[idx]) && strcmp (rest[idx], "N/A") != 0)
    idx++;
  /* root is there when one column more than four (or eight) remain, or when
   * negative (-1: no root), which no time can be */
  left = n - idx;
  if (left == 5 || left == 9 || (left > 0 && rest[idx][0] == '-')) {
    if (!is_int (rest[idx])) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                   "%s:%d: expected the root rank (a whole number) after the type, found '%s'",
                   path, lineno, rest[idx]);
      return FALSE;
    }
    idx++;
    left--;
  }
  if (left != 4 && left != 8) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s:%d: expected time, algbw, busbw and #wrong, out of place and optionally in "
                 "place (4 or 8 columns after type, redop and root), found %u",
                 path, lineno, left);
    return FALSE;
  }
  if (!parse_group (path, lineno, "out-of-place", rest + idx, row->size_bytes, &row->time_us,
                    &row->algbw_GBps, &row->busbw_GBps, error))
    return FALSE;
  if (left == 8 &&
      !parse_group (path, lineno, "in-place", rest + idx + 4, row->size_bytes,
                    &row->time_us_inplace, &algbw_inplace, &row->busbw_GBps_inplace, error))
    return FALSE;
  return TRUE;
}

/* an op named on this line: "..._perf" (a binary, a path, or "# Collective
 * test starting: all_reduce_perf") or "Collective test ...: AllReduce" */
static gboolean
find_op (const char *line, SimCollOp *op, char **found)
{
  const char *p = line;
  const char *colon;

  while ((p = strstr (p, "_perf")) != NULL) {
    const char *start = p;
    const char *end = p + 5;
    g_autofree char *name = NULL;

    if (g_str_has_prefix (end, "_mpi"))
      end += 4;
    p += 5;
    if (g_ascii_isalnum (*end) || *end == '_')
      continue;
    while (start > line && (g_ascii_isalnum (start[-1]) || start[-1] == '_'))
      start--;
    name = g_strndup (start, (gsize) (end - start));
    if (sim_nccl_op_parse (name, op)) {
      *found = g_steal_pointer (&name);
      return TRUE;
    }
  }
  if (strstr (line, "Collective test") != NULL && (colon = strrchr (line, ':')) != NULL) {
    g_autofree char *name = g_strstrip (g_strdup (colon + 1));
    if (*name != '\0' && sim_nccl_op_parse (name, op)) {
      *found = g_steal_pointer (&name);
      return TRUE;
    }
  }
  return FALSE;
}

/* "#  Rank  3 Group  0 Pid 6902 on host device  3 [0000:0c:00] NVIDIA H100 80GB HBM3";
 * the GPU name, possibly empty, is returned in *gpu */
static gboolean
parse_device_line (const char *line, char **gpu)
{
  const char *p = strchr (line, '#');
  const char *dev, *bracket;
  guint64 v;
  g_autoptr (GPtrArray) toks = NULL;

  if (p == NULL)
    return FALSE;
  toks = split_tokens (p + 1);
  if (toks->len < 2 || strcmp (g_ptr_array_index (toks, 0), "Rank") != 0 ||
      !parse_uint (g_ptr_array_index (toks, 1), &v))
    return FALSE;
  *gpu = NULL;
  dev = strstr (p, " device ");
  if (dev != NULL && (bracket = strchr (dev, ']')) != NULL)
    *gpu = g_strstrip (g_strdup (bracket + 1));
  return TRUE;
}

/* "# Avg bus bandwidth    : 66.2058" */
static gboolean
parse_avg (const char *line, double *out)
{
  const char *p = strstr (line, "Avg bus bandwidth");
  g_autofree char *num = NULL;

  if (p == NULL || (p = strchr (p, ':')) == NULL)
    return FALSE;
  num = g_strstrip (g_strdup (p + 1));
  return parse_number (num, out);
}

SimNcclResult *
sim_nccl_parse_text (const char *path_for_messages, const char *text, GError **error)
{
  g_autoptr (SimNcclResult) r = NULL;
  g_auto (GStrv) lines = NULL;
  g_autofree char *op_text = NULL;
  int op_line = 0;
  const char *path = path_for_messages;

  g_return_val_if_fail (path_for_messages != NULL, NULL);
  g_return_val_if_fail (text != NULL, NULL);

  r = g_new0 (SimNcclResult, 1);
  r->path = g_strdup (path);
  r->op = SIM_OP_UNKNOWN;
  r->avg_busbw_GBps = NAN;
  r->rows = g_array_new (FALSE, TRUE, sizeof (SimNcclRow));

  lines = g_strsplit (text, "\n", -1);
  for (int i = 0; lines[i] != NULL; i++) {
    char *line = lines[i];
    gsize len = strlen (line);
    int lineno = i + 1;
    SimNcclRow row;
    gboolean is_row = FALSE;
    SimCollOp op;
    g_autofree char *name = NULL;
    char *gpu = NULL;
    double avg;

    if (len > 0 && line[len - 1] == '\r')
      line[len - 1] = '\0';

    if (!parse_row (path, lineno, line, &row, &is_row, error))
      return NULL;
    if (is_row) {
      g_array_append_val (r->rows, row);
      continue;
    }

    if (find_op (line, &op, &name)) {
      if (op_text == NULL) {
        r->op = op;
        op_text = g_steal_pointer (&name);
        op_line = lineno;
      } else if (op != r->op) {
        /* rows of two collectives in one file cannot share one op */
        g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                     "%s:%d: expected one collective per file, found %s after %s on line %d",
                     path, lineno, name, op_text, op_line);
        return NULL;
      }
    }

    /* the device block of the first run only: a second run would count twice */
    if (r->rows->len == 0 && parse_device_line (line, &gpu)) {
      r->ranks++;
      if (r->gpu_name == NULL && gpu != NULL && *gpu != '\0')
        r->gpu_name = g_steal_pointer (&gpu);
      g_free (gpu);
      continue;
    }

    if (isnan (r->avg_busbw_GBps) && parse_avg (line, &avg))
      r->avg_busbw_GBps = avg;
  }

  if (r->rows->len == 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s: expected nccl-tests output (size, count, type, ... rows), found none", path);
    return NULL;
  }
  return g_steal_pointer (&r);
}

SimNcclResult *
sim_nccl_parse_file (const char *path, GError **error)
{
  g_autofree char *buf = NULL;
  gsize len = 0;

  g_return_val_if_fail (path != NULL, NULL);

  if (g_file_test (path, G_FILE_TEST_IS_DIR)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO,
                 "%s: is a directory, expected nccl-tests output", path);
    return NULL;
  }
  /* a regular file of bounded size: never a FIFO, a device or /dev/zero */
  if (!sim_input_read (path, SIM_INPUT_MAX_BYTES, &buf, &len, error))
    return NULL;
  if (memchr (buf, '\0', len) != NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s: expected nccl-tests text output, found a NUL byte", path);
    return NULL;
  }
  return sim_nccl_parse_text (path, buf, error);
}
