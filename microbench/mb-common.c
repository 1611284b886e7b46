/* mb-common.c — see mb-common.h.  Plain C11: no GLib, no CUDA, no POSIX. */
#include "mb-common.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void
set_err (char *err, size_t err_len, const char *fmt, ...)
{
  va_list ap;
  if (err == NULL || err_len == 0)
    return;
  va_start (ap, fmt);
  vsnprintf (err, err_len, fmt, ap);
  va_end (ap);
}

/* ---- statistics ---------------------------------------------------------- */

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

double
mb_median (const double *v, size_t n)
{
  double *s, r;
  if (n == 0 || (s = malloc (n * sizeof *s)) == NULL)
    return NAN;
  memcpy (s, v, n * sizeof *s);
  qsort (s, n, sizeof *s, cmp_double);
  r = n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  free (s);
  return r;
}

/* ---- sizes --------------------------------------------------------------- */

uint64_t *
mb_sizes_pow2 (uint64_t min_bytes, uint64_t max_bytes, size_t *n_out)
{
  uint64_t p = 1, *out;
  size_t n = 0;

  *n_out = 0;
  if (min_bytes == 0 || min_bytes > max_bytes)
    return NULL;
  while (p < min_bytes && p <= UINT64_MAX / 2)
    p <<= 1;
  if (p < min_bytes || p > max_bytes)
    return NULL;
  out = malloc (64 * sizeof *out);
  if (out == NULL)
    return NULL;
  for (;;) {
    out[n++] = p;
    /* stop before the shift overflows as well as past max */
    if (p > UINT64_MAX / 2 || p * 2 > max_bytes)
      break;
    p *= 2;
  }
  *n_out = n;
  return out;
}

static const struct {
  const char *unit;
  uint64_t factor;
} byte_units[] = {
  { "", 1 },
  { "B", 1 },
  { "KiB", UINT64_C (1) << 10 },
  { "MiB", UINT64_C (1) << 20 },
  { "GiB", UINT64_C (1) << 30 },
  { "TiB", UINT64_C (1) << 40 },
  { "kB", UINT64_C (1000) },
  { "MB", UINT64_C (1000000) },
  { "GB", UINT64_C (1000000000) },
  { "TB", UINT64_C (1000000000000) },
};

/* a whole number of at most 19 digits; returns the first byte after it or
 * NULL when there is no digit or it overflows */
static const char *
parse_whole (const char *p, uint64_t *out)
{
  uint64_t v = 0;
  const char *start = p;
  while (*p >= '0' && *p <= '9') {
    if (v > (UINT64_MAX - (uint64_t) (*p - '0')) / 10)
      return NULL;
    v = v * 10 + (uint64_t) (*p - '0');
    p++;
  }
  if (p == start)
    return NULL;
  *out = v;
  return p;
}

int
mb_parse_bytes (const char *text, uint64_t *out, char *err, size_t err_len)
{
  uint64_t v;
  const char *unit = parse_whole (text, &v);

  if (unit == NULL) {
    set_err (err, err_len, "expected a size in bytes such as 8, 64MiB or 4GiB, got '%s'", text);
    return -1;
  }
  for (size_t i = 0; i < sizeof byte_units / sizeof byte_units[0]; i++) {
    if (strcmp (unit, byte_units[i].unit) != 0)
      continue;
    if (v > UINT64_MAX / byte_units[i].factor) {
      set_err (err, err_len, "size '%s' is too large", text);
      return -1;
    }
    *out = v * byte_units[i].factor;
    return 0;
  }
  set_err (err, err_len,
           "unknown unit in '%s': expected B, KiB, MiB, GiB, TiB (powers of 2) or kB, MB, GB, TB "
           "(powers of 10)",
           text);
  return -1;
}

/* ---- GEMM shapes --------------------------------------------------------- */

MbShape *
mb_gemm_grid (uint64_t lo, uint64_t hi, size_t *n_out)
{
  size_t nv = 0, n = 0;
  uint64_t *v = mb_sizes_pow2 (lo, hi, &nv);
  MbShape *s;

  *n_out = 0;
  if (v == NULL)
    return NULL;
  s = calloc (nv * nv * nv, sizeof *s);
  if (s == NULL) {
    free (v);
    return NULL;
  }
  for (size_t i = 0; i < nv; i++)
    for (size_t j = 0; j < nv; j++)
      for (size_t l = 0; l < nv; l++) {
        strcpy (s[n].name, "grid");
        s[n].m = v[i], s[n].n = v[j], s[n].k = v[l];
        n++;
      }
  free (v);
  *n_out = n;
  return s;
}

static int
is_space (char c)
{
  return c == ' ' || c == '\t' || c == '\r';
}

/* the field [p, end) with surrounding blanks removed, as a NUL-terminated
 * copy in buf; -1 when it does not fit */
static int
field_copy (const char *p, const char *end, char *buf, size_t len)
{
  while (p < end && is_space (*p))
    p++;
  while (end > p && is_space (end[-1]))
    end--;
  if ((size_t) (end - p) >= len)
    return -1;
  memcpy (buf, p, (size_t) (end - p));
  buf[end - p] = '\0';
  return 0;
}

static int
positive_whole (const char *s, uint64_t *out)
{
  const char *end = parse_whole (s, out);
  return end != NULL && *end == '\0' && *out > 0 ? 0 : -1;
}

MbShape *
mb_shapes_parse (const char *path, const char *text, size_t *n_out, char *err, size_t err_len)
{
  static const char *const cols[] = { "name", "m", "n", "k" };
  MbShape *s = NULL;
  size_t n = 0, cap = 0;
  int lineno = 0, seen_line = 0;
  const char *p = text;

  *n_out = 0;
  while (*p != '\0') {
    const char *eol = strchr (p, '\n'), *q = p, *f[5];
    char line[256], field[4][MB_SHAPE_NAME_MAX];
    int nf = 1;
    uint64_t mnk[3];

    if (eol == NULL)
      eol = p + strlen (p);
    lineno++;
    if (field_copy (p, eol, line, sizeof line) != 0) {
      set_err (err, err_len, "%s:%d: expected a line name,m,n,k, got a line of %zu bytes", path,
               lineno, (size_t) (eol - p));
      free (s);
      return NULL;
    }
    p = *eol == '\n' ? eol + 1 : eol;
    if (line[0] == '\0' || line[0] == '#')
      continue;
    /* the column line that `sim shapes` prints first */
    if (!seen_line++ && strcmp (line, "name,m,n,k") == 0)
      continue;
    f[0] = line;
    for (q = line; *q != '\0'; q++)
      if (*q == ',' && nf < 5)
        f[nf++] = q + 1;
    if (nf != 4) {
      set_err (err, err_len, "%s:%d: expected 4 comma-separated fields name,m,n,k, got '%s'", path,
               lineno, line);
      free (s);
      return NULL;
    }
    f[4] = line + strlen (line) + 1;
    for (int i = 0; i < 4; i++) {
      if (field_copy (f[i], f[i + 1] - 1, field[i], sizeof field[i]) != 0 || field[i][0] == '\0' ||
          (i > 0 && positive_whole (field[i], &mnk[i - 1]) != 0)) {
        set_err (err, err_len, "%s:%d: column %s: expected %s, got '%s'", path, lineno, cols[i],
                 i == 0 ? "a name of 1 to 63 characters" : "a positive whole number", line);
        free (s);
        return NULL;
      }
    }
    if (n == cap) {
      MbShape *grown;
      cap = cap == 0 ? 32 : cap * 2;
      if ((grown = realloc (s, cap * sizeof *s)) == NULL) {
        set_err (err, err_len, "%s: out of memory", path);
        free (s);
        return NULL;
      }
      s = grown;
    }
    memcpy (s[n].name, field[0], sizeof s[n].name);
    s[n].m = mnk[0], s[n].n = mnk[1], s[n].k = mnk[2];
    n++;
  }
  if (n == 0) {
    set_err (err, err_len, "%s: expected at least one line name,m,n,k, found none", path);
    free (s);
    return NULL;
  }
  *n_out = n;
  return s;
}

size_t
mb_shapes_unique (MbShape *s, size_t n)
{
  size_t out = 0;
  for (size_t i = 0; i < n; i++) {
    int dup = 0;
    for (size_t j = 0; j < out && !dup; j++)
      dup = s[j].m == s[i].m && s[j].n == s[i].n && s[j].k == s[i].k;
    if (!dup)
      s[out++] = s[i];
  }
  return out;
}

/* ---- files and commands -------------------------------------------------- */

char *
mb_read_stream (FILE *f)
{
  size_t len = 0, cap = 4096, got;
  char *buf = malloc (cap), *grown;

  if (buf == NULL)
    return NULL;
  while ((got = fread (buf + len, 1, cap - len - 1, f)) > 0) {
    len += got;
    if (cap - len - 1 == 0) {
      if ((grown = realloc (buf, cap * 2)) == NULL) {
        free (buf);
        return NULL;
      }
      buf = grown;
      cap *= 2;
    }
  }
  buf[len] = '\0';
  return buf;
}

char *
mb_read_file (const char *path, char *err, size_t err_len)
{
  FILE *f = fopen (path, "rb");
  char *text;

  if (f == NULL) {
    set_err (err, err_len, "%s: cannot read: %s", path, strerror (errno));
    return NULL;
  }
  text = mb_read_stream (f);
  if (text == NULL || ferror (f)) {
    set_err (err, err_len, "%s: cannot read: %s", path, text == NULL ? "out of memory" : strerror (errno));
    free (text);
    text = NULL;
  }
  fclose (f);
  return text;
}

int
mb_shell_quote (char *dst, size_t dst_len, const char *text)
{
  size_t len = strlen (dst);
#define PUT(c)                                                                                    \
  do {                                                                                            \
    if (len + 1 >= dst_len)                                                                       \
      return -1;                                                                                  \
    dst[len++] = (c);                                                                             \
    dst[len] = '\0';                                                                              \
  } while (0)
  PUT ('\'');
  for (const char *p = text; *p != '\0'; p++) {
    if (*p == '\'') {
      /* close the quote, an escaped quote, reopen */
      PUT ('\'');
      PUT ('\\');
      PUT ('\'');
      PUT ('\'');
    } else {
      PUT (*p);
    }
  }
  PUT ('\'');
#undef PUT
  return 0;
}

/* ---- the CSV ------------------------------------------------------------- */

static void
put_value (FILE *f, const char *key, const char *v)
{
  fprintf (f, "# %s: ", key);
  if (v == NULL || *v == '\0')
    v = "-";
  for (; *v != '\0'; v++)
    fputc (*v == '\n' || *v == '\r' ? ' ' : *v, f);
  fputc ('\n', f);
}

int
mb_write_header (FILE *f, const MbHeader *h)
{
  fputs ("# sim-microbench/1\n", f);
  put_value (f, "program", h->program);
  put_value (f, "gpu", h->gpu);
  put_value (f, "driver", h->driver);
  put_value (f, "cuda", h->cuda);
  put_value (f, "cublas", h->cublas);
  put_value (f, "nccl", h->nccl);
  put_value (f, "clocks", h->clocks);
  put_value (f, "date", h->date);
  fputs ("kind,op,dtype,m,n,k,bytes,gpus,time_us,rate_per_s\n", f);
  return ferror (f) ? -1 : 0;
}

static void
put_count (FILE *f, uint64_t v)
{
  if (v > 0)
    fprintf (f, "%" PRIu64, v);
  fputc (',', f);
}

int
mb_write_row (FILE *f, const MbRow *r)
{
  /* sim_microbench_parse_text refuses these; better no row than a file sim rejects */
  if (!(r->time_us > 0) || !isfinite (r->time_us) || !(r->rate_per_s >= 0) ||
      !isfinite (r->rate_per_s) || r->gpus < 1)
    return -1;
  fprintf (f, "%s,%s,%s,", r->kind, r->op, r->dtype);
  put_count (f, r->m);
  put_count (f, r->n);
  put_count (f, r->k);
  put_count (f, r->bytes);
  fprintf (f, "%d,%.6g,%.6g\n", r->gpus, r->time_us, r->rate_per_s);
  return ferror (f) ? -1 : 0;
}

void
mb_format_utc (long long t, char *buf, size_t buf_len)
{
  time_t tt = (time_t) t;
  struct tm *g = gmtime (&tt);
  if (buf_len == 0)
    return;
  if (g == NULL || strftime (buf, buf_len, "%Y-%m-%dT%H:%M:%SZ", g) == 0)
    snprintf (buf, buf_len, "-");
}

int
mb_parse_nvidia_version (const char *text, char *out, size_t out_len)
{
  const char *p = strstr (text, "NVRM version:");
  if (p == NULL)
    return -1;
  p += strlen ("NVRM version:");
  while (*p != '\0' && *p != '\n') {
    const char *start;
    int dots = 0, ok = 1;
    while (*p == ' ' || *p == '\t')
      p++;
    start = p;
    while (*p != '\0' && *p != '\n' && *p != ' ' && *p != '\t') {
      if (*p == '.')
        dots++;
      else if (*p < '0' || *p > '9')
        ok = 0;
      p++;
    }
    if (ok && dots > 0 && p > start && start[0] != '.' && (size_t) (p - start) < out_len) {
      memcpy (out, start, (size_t) (p - start));
      out[p - start] = '\0';
      return 0;
    }
  }
  return -1;
}

/* ---- rates --------------------------------------------------------------- */

double
mb_gemm_flop_per_s (uint64_t m, uint64_t n, uint64_t k, double time_us)
{
  if (!(time_us > 0))
    return 0;
  return 2.0 * (double) m * (double) n * (double) k / (time_us * 1e-6);
}

const char *
mb_hbm_op_name (MbHbmOp op)
{
  return op == MB_HBM_COPY ? "copy" : "triad";
}

double
mb_hbm_bytes_per_s (MbHbmOp op, uint64_t array_bytes, double time_us)
{
  double arrays = op == MB_HBM_COPY ? 2 : 3;
  if (!(time_us > 0))
    return 0;
  return arrays * (double) array_bytes / (time_us * 1e-6);
}

static const char *const nccl_names[MB_NCCL_N_OPS] = {
  "all_reduce",
  "all_gather",
  "reduce_scatter",
  "sendrecv",
};

const char *
mb_nccl_op_name (MbNcclOp op)
{
  return op < MB_NCCL_N_OPS ? nccl_names[op] : "unknown";
}

int
mb_nccl_op_parse (const char *name)
{
  for (int i = 0; i < MB_NCCL_N_OPS; i++)
    if (strcmp (name, nccl_names[i]) == 0)
      return i;
  return -1;
}

double
mb_nccl_busbw_factor (MbNcclOp op, int n)
{
  if (n < 1)
    return NAN;
  switch (op) {
  case MB_NCCL_ALL_REDUCE:
    return 2.0 * (n - 1) / n;
  case MB_NCCL_ALL_GATHER:
  case MB_NCCL_REDUCE_SCATTER:
    return (double) (n - 1) / n;
  case MB_NCCL_SENDRECV:
    return 1.0;
  default:
    return NAN;
  }
}

double
mb_nccl_algbw (uint64_t bytes, double time_us)
{
  if (!(time_us > 0))
    return 0;
  return (double) bytes / (time_us * 1e-6);
}

double
mb_nccl_busbw (MbNcclOp op, int n, uint64_t bytes, double time_us)
{
  return mb_nccl_algbw (bytes, time_us) * mb_nccl_busbw_factor (op, n);
}

uint64_t
mb_nccl_counts (MbNcclOp op, int n, uint64_t bytes, size_t type_bytes, uint64_t *send_count,
                uint64_t *recv_count)
{
  uint64_t total = type_bytes > 0 ? bytes / type_bytes : 0, per;

  *send_count = *recv_count = 0;
  if (n < 1 || total == 0)
    return 0;
  switch (op) {
  case MB_NCCL_ALL_GATHER:
  case MB_NCCL_REDUCE_SCATTER:
    per = total / (uint64_t) n;
    if (per == 0)
      return 0;
    *send_count = op == MB_NCCL_ALL_GATHER ? per : per * (uint64_t) n;
    *recv_count = op == MB_NCCL_ALL_GATHER ? per * (uint64_t) n : per;
    return per * (uint64_t) n * type_bytes;
  default:
    *send_count = *recv_count = total;
    return total * type_bytes;
  }
}

/* ---- the human table ----------------------------------------------------- */

void
mb_nccl_table_begin (FILE *f, MbNcclOp op, int n_ranks)
{
  fprintf (f, "# Collective test starting: %s_perf\n", mb_nccl_op_name (op));
  fprintf (f, "# nThread 1 nGpus %d (one process, ncclCommInitAll; microbench/collectives)\n",
           n_ranks);
  fprintf (f, "#\n# Using devices\n");
}

void
mb_nccl_table_rank (FILE *f, int rank, long pid, const char *host, int device, const char *bus_id,
                    const char *gpu_name)
{
  fprintf (f, "#  Rank %2d Group  0 Pid %6ld on %10s device %2d [%s] %s\n", rank, pid, host, device,
           bus_id, gpu_name);
}

void
mb_nccl_table_columns (FILE *f)
{
  fprintf (f, "#\n");
  fprintf (f, "#%61s\n", "out-of-place");
  fprintf (f, "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size", "count", "type", "redop",
           "root", "time", "algbw", "busbw", "#wrong");
  fprintf (f, "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)", "(elements)", "", "", "",
           "(us)", "(GB/s)", "(GB/s)", "");
}

void
mb_nccl_table_row (FILE *f, MbNcclOp op, int n, uint64_t bytes, uint64_t count, const char *type,
                   double time_us)
{
  char t[32];
  double algbw = mb_nccl_algbw (bytes, time_us) / 1e9;
  double busbw = algbw * mb_nccl_busbw_factor (op, n);
  const char *redop = op == MB_NCCL_ALL_GATHER ? "none" : "sum";

  /* nccl-tests keeps the time column 7 wide by dropping decimals */
  if (time_us >= 10000.0)
    snprintf (t, sizeof t, "%7.0f", time_us);
  else if (time_us >= 100.0)
    snprintf (t, sizeof t, "%7.1f", time_us);
  else
    snprintf (t, sizeof t, "%7.2f", time_us);
  fprintf (f, "%12" PRIu64 "  %12" PRIu64 "  %8s  %6s  %6d  %7s  %6.2f  %6.2f  %6s\n", bytes, count,
           type, redop, -1, t, algbw, busbw, "N/A");
}

void
mb_nccl_table_end (FILE *f, double avg_busbw_GBps)
{
  fprintf (f, "# Avg bus bandwidth    : %g \n#\n", avg_busbw_GBps);
}
