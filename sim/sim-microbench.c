#include "sim-microbench.h"

#include "sim-input.h"

#include <math.h>
#include <string.h>

#include "sim-error.h"

static void
row_clear (gpointer p)
{
  SimMicrobenchRow *r = p;
  g_free (r->kind);
  g_free (r->op);
  g_free (r->dtype);
}

void
sim_microbench_free (SimMicrobench *b)
{
  if (b == NULL)
    return;
  g_free (b->path);
  g_clear_pointer (&b->header, g_hash_table_unref);
  g_clear_pointer (&b->rows, g_array_unref);
  g_free (b);
}

const char *
sim_microbench_header (const SimMicrobench *b, const char *key)
{
  return g_hash_table_lookup (b->header, key);
}

static gboolean
number (const char *path, int line, const char *field, const char *text, gboolean optional,
        double *out, GError **error)
{
  char *end = NULL;
  double v;
  if (*text == '\0' && optional) {
    *out = 0;
    return TRUE;
  }
  v = g_ascii_strtod (text, &end);
  if (end == text || *end != '\0' || !isfinite (v) || v < 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s:%d: column %s: expected a number of at least 0, got '%s'",
                 path, line, field, text);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

SimMicrobench *
sim_microbench_parse_text (const char *path, const char *text, GError **error)
{
  g_autoptr (SimMicrobench) b = g_new0 (SimMicrobench, 1);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  gboolean magic = FALSE, columns = FALSE;
  static const char *expect = "kind,op,dtype,m,n,k,bytes,gpus,time_us,rate_per_s";

  b->path = g_strdup (path);
  b->header = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  b->rows = g_array_new (FALSE, TRUE, sizeof (SimMicrobenchRow));
  g_array_set_clear_func (b->rows, row_clear);
  for (int i = 0; lines[i] != NULL; i++) {
    char *l = g_strstrip (lines[i]);
    int line = i + 1;
    if (*l == '\0')
      continue;
    if (l[0] == '#') {
      char *colon = NULL;
      l = g_strstrip (l + 1);
      if (g_str_equal (l, "sim-microbench/1")) {
        magic = TRUE;
        continue;
      }
      colon = strchr (l, ':');
      if (colon != NULL) {
        *colon = '\0';
        g_hash_table_insert (b->header, g_strdup (g_strstrip (l)), g_strdup (g_strstrip (colon + 1)));
      }
      continue;
    }
    if (!magic) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s:%d: expected the line '# sim-microbench/1' first", path, line);
      return NULL;
    }
    if (!columns) {
      if (!g_str_equal (l, expect)) {
        g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s:%d: expected the column line '%s'", path, line, expect);
        return NULL;
      }
      columns = TRUE;
      continue;
    }
    {
      g_auto (GStrv) f = g_strsplit (l, ",", -1);
      SimMicrobenchRow r = { 0 };
      double gpus = 0;
      if (g_strv_length (f) != 10) {
        g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s:%d: expected 10 comma-separated fields, got %u", path,
                     line, g_strv_length (f));
        return NULL;
      }
      if (!number (path, line, "m", f[3], TRUE, &r.m, error) || !number (path, line, "n", f[4], TRUE, &r.n, error) ||
          !number (path, line, "k", f[5], TRUE, &r.k, error) ||
          !number (path, line, "bytes", f[6], TRUE, &r.bytes, error) ||
          !number (path, line, "gpus", f[7], FALSE, &gpus, error) ||
          !number (path, line, "time_us", f[8], FALSE, &r.time_us, error) ||
          !number (path, line, "rate_per_s", f[9], FALSE, &r.rate_per_s, error))
        return NULL;
      if (!g_str_equal (f[0], "gemm") && !g_str_equal (f[0], "hbm") && !g_str_equal (f[0], "nccl")) {
        g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s:%d: column kind: expected gemm, hbm or nccl, got '%s'",
                     path, line, f[0]);
        return NULL;
      }
      if (g_str_equal (f[0], "gemm") && (r.m <= 0 || r.n <= 0 || r.k <= 0)) {
        g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s:%d: a gemm row needs m, n and k", path, line);
        return NULL;
      }
      if (r.time_us <= 0 || gpus < 1) {
        g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s:%d: expected a time above 0 and at least 1 GPU", path, line);
        return NULL;
      }
      r.kind = g_strdup (f[0]);
      r.op = g_strdup (f[1]);
      r.dtype = g_strdup (f[2]);
      r.gpus = (int) gpus;
      r.line = line;
      g_array_append_val (b->rows, r);
    }
  }
  if (!magic || b->rows->len == 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s: expected a sim-microbench/1 CSV with at least one row", path);
    return NULL;
  }
  return g_steal_pointer (&b);
}

SimMicrobench *
sim_microbench_parse_file (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  if (!sim_input_read (path, SIM_INPUT_MAX_BYTES, &text, NULL, error))
    return NULL;
  return sim_microbench_parse_text (path, text, error);
}
