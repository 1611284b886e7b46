#include "sim-gemm.h"

#include <math.h>
#include <string.h>

/* the sorted distinct values of one coordinate */
static int
distinct (const GArray *pts, int axis, double *out, int cap)
{
  int n = 0;
  for (guint i = 0; i < pts->len; i++) {
    const SimGemmPoint *p = &g_array_index (pts, SimGemmPoint, i);
    double v = axis == 0 ? p->m : axis == 1 ? p->n : p->k;
    int j = 0;
    while (j < n && out[j] < v)
      j++;
    if (j < n && out[j] == v)
      continue;
    if (n == cap)
      return -1;
    memmove (out + j + 1, out + j, (gsize) (n - j) * sizeof (double));
    out[j] = v;
    n++;
  }
  return n;
}

static const SimGemmPoint *
find (const GArray *pts, double m, double n, double k)
{
  for (guint i = 0; i < pts->len; i++) {
    const SimGemmPoint *p = &g_array_index (pts, SimGemmPoint, i);
    if (p->m == m && p->n == n && p->k == k)
      return p;
  }
  return NULL;
}

/* the bracketing index and weight of x in the sorted axis (log2 space) */
static void
bracket (const double *axis, int n, double x, int *i0, double *w)
{
  double lx = log2 (x);
  if (n == 1 || x <= axis[0]) {
    *i0 = 0;
    *w = 0;
    return;
  }
  if (x >= axis[n - 1]) {
    *i0 = n - 2;
    *w = 1;
    return;
  }
  for (int i = 0; i + 1 < n; i++)
    if (x <= axis[i + 1]) {
      *i0 = i;
      *w = (lx - log2 (axis[i])) / (log2 (axis[i + 1]) - log2 (axis[i]));
      return;
    }
  *i0 = n - 2;
  *w = 1;
}

static double
curve_rate (const GArray *pts, double m, double n, double k)
{
  /* points sorted by size; equal sizes averaged */
  double x = cbrt (m * n * k);
  const SimGemmPoint *lo = NULL, *hi = NULL;
  double xlo = 0, xhi = 0;
  for (guint i = 0; i < pts->len; i++) {
    const SimGemmPoint *p = &g_array_index (pts, SimGemmPoint, i);
    double xp = cbrt (p->m * p->n * p->k);
    if (xp <= x && (lo == NULL || xp > xlo)) {
      lo = p;
      xlo = xp;
    }
    if (xp >= x && (hi == NULL || xp < xhi)) {
      hi = p;
      xhi = xp;
    }
  }
  if (lo == NULL)
    return hi->flop_per_s;
  if (hi == NULL || xhi == xlo)
    return lo->flop_per_s;
  return lo->flop_per_s +
         (hi->flop_per_s - lo->flop_per_s) * (log2 (x) - log2 (xlo)) / (log2 (xhi) - log2 (xlo));
}

/* a full grid of the table's points, perhaps with a few extra shapes (a
 * best shape measured on its own): the index of sim_gemm_prepare */
typedef struct {
  const GArray *src;  /* the table indexed, and its length then */
  guint len;
  int nm, nn, nk;     /* 0: not a grid (the size curve applies) */
  double M[64], N[64], K[64];
  double rate[];      /* nm * nn * nk, m slowest */
} Grid;

/* the grid of pts, when every combination of the values that several
 * points share is present; NULL otherwise */
static Grid *
grid_new (const GArray *pts)
{
  g_autoptr (GArray) grid = g_array_new (FALSE, FALSE, sizeof (SimGemmPoint));
  double M[64], N[64], K[64];
  int nm, nn, nk;
  Grid *g;
  for (guint i = 0; i < pts->len; i++) {
    const SimGemmPoint *p = &g_array_index (pts, SimGemmPoint, i);
    int sm = 0, sn = 0, sk = 0;
    for (guint j = 0; j < pts->len; j++) {
      const SimGemmPoint *q = &g_array_index (pts, SimGemmPoint, j);
      sm += q->m == p->m, sn += q->n == p->n, sk += q->k == p->k;
    }
    if (sm > 1 && sn > 1 && sk > 1)
      g_array_append_val (grid, *p);
  }
  nm = distinct (grid, 0, M, 64);
  nn = distinct (grid, 1, N, 64);
  nk = distinct (grid, 2, K, 64);
  if (!(nm > 1 && nn > 1 && nk > 1 && (guint) (nm * nn * nk) == grid->len))
    return NULL;
  g = g_malloc0 (sizeof (Grid) + sizeof (double) * (gsize) grid->len);
  g->nm = nm, g->nn = nn, g->nk = nk;
  memcpy (g->M, M, sizeof M);
  memcpy (g->N, N, sizeof N);
  memcpy (g->K, K, sizeof K);
  /* a shape measured twice leaves another out: NAN, which grid_rate
   * skips as it skipped the missing point before */
  for (int a = 0; a < nm; a++)
    for (int b = 0; b < nn; b++)
      for (int c = 0; c < nk; c++) {
        const SimGemmPoint *p = find (grid, M[a], N[b], K[c]);
        g->rate[(a * nn + b) * nk + c] = p != NULL ? p->flop_per_s : NAN;
      }
  return g;
}

static double
grid_rate (const Grid *g, double m, double n, double k)
{
  int im, in, ik;
  double wm, wn, wk, r = 0;
  bracket (g->M, g->nm, m, &im, &wm);
  bracket (g->N, g->nn, n, &in, &wn);
  bracket (g->K, g->nk, k, &ik, &wk);
  for (int a = 0; a < 2; a++)
    for (int b = 0; b < 2; b++)
      for (int c = 0; c < 2; c++) {
        int xm = MIN (im + a, g->nm - 1), xn = MIN (in + b, g->nn - 1), xk = MIN (ik + c, g->nk - 1);
        double w = (a ? wm : 1 - wm) * (b ? wn : 1 - wn) * (c ? wk : 1 - wk);
        double rate = g->rate[(xm * g->nn + xn) * g->nk + xk];
        if (w > 0 && !isnan (rate))
          r += w * rate;
      }
  return r;
}

void
sim_gemm_prepare (SimGpuType *gpu)
{
  Grid *g = NULL;
  g_clear_pointer (&gpu->gemm_grid, g_free);
  if (gpu->gemm == NULL)
    return;
  g = grid_new (gpu->gemm);
  if (g == NULL)
    g = g_malloc0 (sizeof (Grid)); /* the size curve */
  g->src = gpu->gemm;
  g->len = gpu->gemm->len;
  gpu->gemm_grid = g;
}

double
sim_gemm_rate (const SimGpuType *gpu, double m, double n, double k)
{
  const GArray *pts = gpu->gemm;
  const Grid *g = gpu->gemm_grid;
  g_autofree Grid *own = NULL;
  if (pts == NULL || pts->len == 0)
    return gpu->peak_flop_per_s[SIM_DTYPE_BF16];
  if (g == NULL || g->src != pts || g->len != pts->len)
    g = own = grid_new (pts); /* not prepared: the same answer, slower */
  if (g != NULL && g->nm > 0)
    return grid_rate (g, m, n, k);
  return curve_rate (pts, m, n, k);
}

double
sim_gemm_time (const SimGpuType *gpu, double m, double n, double k)
{
  if (m <= 0 || n <= 0 || k <= 0)
    return 0;
  return 2.0 * m * n * k / sim_gemm_rate (gpu, m, n, k);
}
