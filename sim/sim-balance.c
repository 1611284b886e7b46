/* sim-balance.c — see sim-balance.h */
#include "sim-balance.h"

#include <math.h>

/* one layer's compute per micro-batch: forward, backward, recomputation */
static double
layer_s (const SimModel *m, const SimLayerCost *c, guint64 layer)
{
  if (sim_model_layer_is_moe (m, layer))
    return c->moe_fwd_s + c->moe_bwd_s + c->moe_recompute_s;
  return c->layer_fwd_s + c->layer_bwd_s + c->layer_recompute_s;
}

/* what the first virtual stage adds to its layers (the embedding) and the
 * last (the output layer and loss, and each MTP module, its layer too) */
static double
head_s (const SimLayerCost *c)
{
  return c->embed_fwd_s + c->embed_bwd_s;
}

static double
tail_s (const SimModel *m, const SimPlan *p, const SimLayerCost *c)
{
  return sim_cost_tail_s (c, p, FALSE) + sim_cost_tail_s (c, p, TRUE) +
         MAX (p->mtp_layers, 0) * layer_s (m, c, m->layers);
}

/* virtual stage k's compute (k = sim_plan_virtual_stage) under the plan */
static double
virtual_stage_s (const SimModel *m, const SimPlan *p, const SimLayerCost *c, int stage, int chunk)
{
  guint64 first = sim_plan_chunk_first_layer (p, m, stage, chunk);
  guint64 n = sim_plan_chunk_layers (p, m, stage, chunk);
  int offset = sim_plan_chunk_rank_offset (p, m, stage, chunk);
  double s = 0;
  for (guint64 i = 0; i < n; i++) {
    s += layer_s (m, c, first + i);
    /* a layer full recomputation leaves alone (--recompute-method) */
    if (p->recompute == SIM_RECOMPUTE_FULL &&
        sim_plan_layer_recompute (p, offset, (int) i) == SIM_LAYER_KEPT)
      s -= sim_model_layer_is_moe (m, first + i) ? c->moe_recompute_s : c->layer_recompute_s;
  }
  if (sim_plan_chunk_is_first (p, stage, chunk))
    s += head_s (c);
  if (sim_plan_chunk_is_last (p, stage, chunk))
    s += tail_s (m, p, c);
  return s;
}

void
sim_balance_stage_s (const SimModel *model, const SimPlan *plan, const SimLayerCost *cost, double *out)
{
  for (int s = 0; s < plan->pp; s++) {
    out[s] = 0;
    for (int k = 0; k < MAX (plan->virtual_stages, 1); k++)
      out[s] += virtual_stage_s (model, plan, cost, s, k);
  }
}

/* whether n parts of at most cap each hold all L layers, filling each part
 * in turn as far as it goes; counts[] receives the parts' layers */
static gboolean
fits_in (const double *w, guint64 L, guint n, double head, double tail, double cap, guint64 *counts)
{
  guint64 i = 0;
  for (guint k = 0; k < n; k++) {
    double budget = cap - (k == 0 ? head : 0) - (k == n - 1 ? tail : 0), sum = 0;
    guint64 start = i;
    if (budget < 0)
      return FALSE;
    while (i < L && sum + w[i] <= budget)
      sum += w[i++];
    counts[k] = i - start;
  }
  return i == L;
}

double
sim_balance_partition (const double *w, guint64 L, guint n, double head, double tail, guint64 *counts)
{
  double lo = 0, hi = head + tail;
  for (guint64 i = 0; i < L; i++)
    hi += w[i];
  for (guint64 i = 0; i < L; i++)
    lo = MAX (lo, w[i]);
  lo = MAX (lo, MAX (head, tail));
  /* the smallest cap that fits, to a relative millionth of a millionth */
  hi *= 1 + 1e-12;
  for (int iter = 0; iter < 200 && hi - lo > 1e-12 * hi; iter++) {
    double mid = (lo + hi) / 2;
    if (fits_in (w, L, n, head, tail, mid, counts))
      hi = mid;
    else
      lo = mid;
  }
  fits_in (w, L, n, head, tail, hi, counts);
  {
    /* the parts' largest compute as cut (at most hi) */
    double worst = 0;
    guint64 i = 0;
    for (guint k = 0; k < n; k++) {
      double sum = (k == 0 ? head : 0) + (k == n - 1 ? tail : 0);
      for (guint64 j = 0; j < counts[k]; j++)
        sum += w[i++];
      worst = MAX (worst, sum);
    }
    return worst;
  }
}

/* "t*N" for N decoder layers ("t" for one, nothing for none) */
static void
append_layers (GString *s, guint64 n)
{
  if (n == 1)
    g_string_append_c (s, 't');
  else if (n > 1)
    g_string_append_printf (s, "t*%" G_GUINT64_FORMAT, n);
}

static char *
layout_string (const guint64 *counts, guint n, guint64 mtp)
{
  GString *s = g_string_new ("E");
  append_layers (s, counts[0]);
  if (n > 1) {
    g_string_append_c (s, '|');
    /* the middle stages, runs of equal ones folded: "(t*4|)*14" */
    for (guint k = 1; k + 1 < n;) {
      guint r = 1;
      while (k + r + 1 < n && counts[k + r] == counts[k])
        r++;
      if (r > 1) {
        g_string_append_c (s, '(');
        append_layers (s, counts[k]);
        g_string_append_printf (s, "|)*%u", r);
      } else {
        append_layers (s, counts[k]);
        g_string_append_c (s, '|');
      }
      k += r;
    }
    append_layers (s, counts[n - 1]);
  }
  for (guint64 i = 0; i < mtp; i++)
    g_string_append_c (s, 'm');
  g_string_append_c (s, 'L');
  return g_string_free (s, FALSE);
}

char *
sim_balance_layout (const SimModel *model, const SimPlan *plan, const SimLayerCost *cost,
                    double gain, double *now_s, double *max_s)
{
  int v = MAX (plan->virtual_stages, 1);
  guint n = (guint) plan->pp * (guint) v;
  guint64 L = model->layers;
  g_autofree double *w = NULL;
  g_autofree guint64 *counts = NULL;
  double now = 0, best;
  if (plan->pp < 2)
    return NULL;
  for (int s = 0; s < plan->pp; s++)
    for (int k = 0; k < v; k++)
      now = MAX (now, virtual_stage_s (model, plan, cost, s, k));
  w = g_new (double, L);
  for (guint64 i = 0; i < L; i++)
    w[i] = layer_s (model, cost, i);
  counts = g_new0 (guint64, n);
  best = sim_balance_partition (w, L, n, head_s (cost), tail_s (model, plan, cost), counts);
  if (now_s != NULL)
    *now_s = now;
  if (max_s != NULL)
    *max_s = best;
  if (!(best <= (1 - gain) * now))
    return NULL;
  return layout_string (counts, n, (guint64) MAX (plan->mtp_layers, 0));
}
