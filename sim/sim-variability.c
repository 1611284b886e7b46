/* sim-variability.c — the expected slowest of N GPUs */
#include "sim-variability.h"

#include <math.h>

/* log Phi(x), accurate where Phi is near 1 (log1p of the upper tail) */
static double
log_phi (double x)
{
  if (x > 0)
    return log1p (-0.5 * erfc (x / G_SQRT2));
  return log (0.5 * erfc (-x / G_SQRT2));
}

/* Simpson's rule over [-10, 10] in steps of 0.0125: Phi^n and 1 - Phi^n
 * are smooth, and below -10 or above 10 what is left is under 1e-20 for
 * any n an int holds */
static double
expected_max (int n)
{
  const double lo = -10.0, hi = 10.0;
  const int steps = 1600;
  double h = (hi - lo) / steps, sum = 0;
  if (n <= 1)
    return 0.0;
  for (int i = 0; i <= steps; i++) {
    double x = lo + i * h;
    double ln = n * log_phi (x); /* log Phi(x)^n = log P(M <= x) */
    /* E[M] = int_0^inf P(M > x) dx - int_-inf^0 P(M <= x) dx */
    double f = x > 0 ? -expm1 (ln) : -exp (ln);
    double w = (i == 0 || i == steps) ? 1 : (i % 2 ? 4 : 2);
    /* the integrand jumps by 1 at 0, a panel boundary (i = steps / 2,
     * weight 2): each half's end point there weighs 1 */
    if (i == steps / 2)
      f = 0.5 * (-expm1 (ln) - exp (ln));
    sum += w * f;
  }
  return sum * h / 3;
}

/* Every run of a plan asks for the same n (a steady state builds four or
 * five runs, a sweep thousands): the last values asked, by n, direct-
 * mapped; the value is the quadrature's whatever the cache holds */
#define CACHE 64
static struct {
  int n;
  double value;
} cache[CACHE];
G_LOCK_DEFINE_STATIC (cache);

double
sim_normal_expected_max (int n)
{
  double v;
  gboolean hit;
  if (n <= 1)
    return 0.0;
  G_LOCK (cache);
  hit = cache[n % CACHE].n == n;
  v = cache[n % CACHE].value;
  G_UNLOCK (cache);
  if (hit)
    return v;
  v = expected_max (n);
  G_LOCK (cache);
  cache[n % CACHE].n = n, cache[n % CACHE].value = v;
  G_UNLOCK (cache);
  return v;
}

double
sim_variability_slowdown (double sigma, int gpus)
{
  if (!(sigma > 0) || gpus <= 1)
    return 0.0;
  return sigma * sim_normal_expected_max (gpus);
}
