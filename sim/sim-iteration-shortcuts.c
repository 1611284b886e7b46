/* sim-iteration-shortcuts.c — collectives run as one delay of their time
 * alone where no other flow meets them, and the rounds that find the ones
 * something met (sim-iteration-private.h) */
#include "sim-iteration-private.h"

#include <math.h>
#include <string.h>

#include "sim-activation.h"
#include "sim-collective.h"
#include "sim-error.h"
#include "sim-schedule.h"
#include "sim-variability.h"

#define D_START(b, d) sim_engine_start ((b)->e, (d)->act)
#define D_END(b, d) sim_engine_end ((b)->e, (d)->act)

/* a delay of group gi that something met: to run as flows next time */
static void
culprit (GArray *out, guint gi, const AloneDelay *d)
{
  gint64 key = (gint64) gi << 32 | d->seq;
  g_array_append_val (out, key);
}

/* group gi's delays (in program order) that start before the previous
 * ends, both of each such pair into out */
static void
delays_overlap (const SimIterBuilder *b, guint gi, const GArray *d, GArray *out)
{
  for (guint i = 1; i < d->len; i++) {
    const AloneDelay *x = &g_array_index (d, AloneDelay, i - 1), *y = x + 1;
    if (D_START (b, y) < D_END (b, x)) {
      culprit (out, gi, x);
      culprit (out, gi, y);
    }
  }
}

/* two groups' delays (each in order, one after another): those of either
 * that run while one of the other does, with it, into out (zero-length
 * ones never do) */
static void
groups_overlap (const SimIterBuilder *b, guint gx, const GArray *x, guint gy, const GArray *y,
                GArray *out)
{
  guint i = 0, j = 0;
  const AloneDelay *last_x = NULL, *last_y = NULL; /* the latest-ending so far */
  while (i < x->len || j < y->len) {
    const AloneDelay *a;
    gboolean from_x;
    if (j >= y->len)
      from_x = TRUE;
    else if (i >= x->len)
      from_x = FALSE;
    else
      from_x = D_START (b, &g_array_index (x, AloneDelay, i)) <=
               D_START (b, &g_array_index (y, AloneDelay, j));
    a = from_x ? &g_array_index (x, AloneDelay, i++) : &g_array_index (y, AloneDelay, j++);
    if (D_END (b, a) <= D_START (b, a))
      continue;
    if (from_x) {
      if (last_y != NULL && D_START (b, a) < D_END (b, last_y)) {
        culprit (out, gx, a);
        culprit (out, gy, last_y);
      }
      if (last_x == NULL || D_END (b, a) > D_END (b, last_x))
        last_x = a;
    } else {
      if (last_x != NULL && D_START (b, a) < D_END (b, last_x)) {
        culprit (out, gy, a);
        culprit (out, gx, last_x);
      }
      if (last_y == NULL || D_END (b, a) > D_END (b, last_y))
        last_y = a;
    }
  }
}

/* group gi's delay (in order, one after another) that a flow from fs to fe
 * meets, if any, into out */
static void
flow_meets (const SimIterBuilder *b, guint gi, const GArray *d, SimTime fs, SimTime fe,
            GArray *out)
{
  guint lo = 0, hi = d->len;
  const AloneDelay *x;
  /* the group's last delay starting before the flow ends; the ones before
   * it end before it starts */
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (D_START (b, &g_array_index (d, AloneDelay, mid)) < fe)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0)
    return;
  x = &g_array_index (d, AloneDelay, lo - 1);
  if (D_END (b, x) > fs && D_END (b, x) > D_START (b, x))
    culprit (out, gi, x);
}

/* what group gi's delays are: SIM_SPAN_TP, _PP, _DP or _CP */
SimSpanKind
sim_iter_group_kind (const SimIterBuilder *b, int gi)
{
  return gi < b->tp_groups   ? SIM_SPAN_TP
         : gi < b->dp_groups ? SIM_SPAN_PP
         : gi < b->cp_groups ? SIM_SPAN_DP
                             : SIM_SPAN_CP;
}

/* how many delays the build took */
guint64
sim_iter_alone_count (const SimIterBuilder *b)
{
  guint64 n = 0;
  for (guint gi = 0; gi < b->alone_delays->len; gi++)
    n += ((const GArray *) g_ptr_array_index (b->alone_delays, gi))->len;
  return n;
}

int
sim_iter_int64_cmp (gconstpointer pa, gconstpointer pb)
{
  gint64 x = *(const gint64 *) pa, y = *(const gint64 *) pb;
  return (x > y) - (x < y);
}

static int
link_group_cmp (gconstpointer pa, gconstpointer pb)
{
  const int *x = pa, *y = pb;
  return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* which ALONE_ flag groups of `kind` are under */
static int
kind_flag (SimSpanKind kind)
{
  return kind == SIM_SPAN_TP   ? ALONE_TP
         : kind == SIM_SPAN_PP ? ALONE_PP
         : kind == SIM_SPAN_CP ? ALONE_CP
                               : ALONE_DP;
}

/* The groups' links: lg gets (link, group) pairs sorted by link, off[l]
 * .. off[l + 1] the range of link l's (nl + 1 entries); returns whether a
 * flow crosses any of them */
static gboolean
alone_links (const SimIterBuilder *b, GArray *lg, guint *off)
{
  int nl = sim_engine_n_links (b->e);
  gboolean flows = FALSE;
  for (guint gi = 0; gi < b->alone_delays->len; gi++) {
    const GArray *links = g_ptr_array_index (b->sc->alone_links, gi);
    if (links == NULL || ((const GArray *) g_ptr_array_index (b->alone_delays, gi))->len == 0)
      continue;
    for (guint i = 0; i < links->len; i++) {
      int x[2] = { g_array_index (links, int, i), (int) gi };
      g_array_append_val (lg, x);
      flows = flows || sim_engine_link_flows (b->e, x[0]) > 0;
    }
  }
  g_array_sort (lg, link_group_cmp);
  memset (off, 0, ((gsize) nl + 1) * sizeof *off);
  for (guint i = 0; i < lg->len; i++)
    off[((const int *) (gconstpointer) lg->data)[2 * i] + 1]++;
  for (int l = 0; l < nl; l++)
    off[l + 1] += off[l];
  return flows;
}

/* Before the run: the kinds of shortcut (ALONE_ flags) not worth a run,
 * because what they would meet is built in.  A link of more than
 * ALONE_SHARED groups (the spine under many replicas' sends) makes the
 * check pair by pair too dear; a link of two bucket groups (the routed
 * experts' and the rest's, leaving together) or of both TP groups and
 * sends (a pipeline inside one node) and a flow of another kind on a TP group's or
 * a stage's sends' links (context-parallel blocks beside every pass) mean
 * they meet all the time; a send or TP collective of the tail (flows, next
 * to the gradient reduction: sim_iter_build_stage_program) on a bucket group's
 * links means the buckets meet them.  0: run it. */
int
sim_iter_alone_drop (const SimIterBuilder *b)
{
  int nl = sim_engine_n_links (b->e), drop = 0;
  g_autoptr (GArray) lg = g_array_new (FALSE, FALSE, 2 * sizeof (int)); /* (link, group) */
  g_autofree guint *off = g_new (guint, (gsize) nl + 1);
  gboolean flows = alone_links (b, lg, off);
  const int *LG = (const int *) (gconstpointer) lg->data;

  for (int l = 0; l < nl; l++) {
    if (off[l + 1] - off[l] > ALONE_SHARED)
      for (guint i = off[l]; i < off[l + 1]; i++)
        drop |= kind_flag (sim_iter_group_kind (b, LG[2 * i + 1]));
    for (guint i = off[l]; i + 1 < off[l + 1]; i++) {
      SimSpanKind x = sim_iter_group_kind (b, LG[2 * i + 1]), y = sim_iter_group_kind (b, LG[2 * i + 3]);
      if (x != SIM_SPAN_DP && y != SIM_SPAN_DP && x != y)
        drop |= ALONE_PP;
      if (x == SIM_SPAN_DP && y == SIM_SPAN_DP)
        drop |= ALONE_DP;
    }
  }
  for (guint32 f = 0; flows && f < sim_engine_n_flows (b->e); f++) {
    SimActivityId a = sim_engine_flow_activity (b->e, f);
    int n = sim_engine_flow_n_links (b->e, a);
    SimSpanKind kind = n > 0 ? sim_iter_span_of ((SimIterBuilder *) b, a)->kind : SIM_SPAN_GATE;
    for (int i = 0; i < n; i++) {
      int l = sim_engine_flow_link (b->e, a, i);
      for (guint k = off[l]; k < off[l + 1]; k++) {
        SimSpanKind own = sim_iter_group_kind (b, LG[2 * k + 1]);
        if (own == SIM_SPAN_DP ? kind != SIM_SPAN_DP : kind != SIM_SPAN_DP && kind != own)
          drop |= kind_flag (own);
      }
    }
  }
  return drop & b->alone;
}

/* After the run: whether it is the run with every collective's flows.  It
 * is while nothing shares a link with a delay while it runs: until the
 * first such moment the two runs are the same instant by instant; with
 * none, they are the same throughout.  What could share: another delay of
 * its own group (the collectives of a TP group follow one another, each
 * pass waiting for its own; a bucket group's are chained; a stage's sends
 * in one direction usually do), a delay of another group crossing one of
 * its links (the sends that reach a stage from both sides arrive by the
 * same rails), a flow crossing one.  The delays met go into culprits
 * (group << 32 | seq, repeats possible). */
gboolean
sim_iter_alone_exact (SimIterBuilder *b, GArray *culprits)
{
  int nl = sim_engine_n_links (b->e);
  g_autoptr (GArray) lg = g_array_new (FALSE, FALSE, 2 * sizeof (int)); /* (link, group) */
  g_autofree guint *off = g_new (guint, (gsize) nl + 1);
  g_autoptr (GArray) keys = g_array_new (FALSE, FALSE, sizeof (gint64)); /* group pairs */
  gboolean flows = alone_links (b, lg, off);
  const int *LG = (const int *) (gconstpointer) lg->data;

  for (guint gi = 0; gi < b->alone_delays->len; gi++)
    delays_overlap (b, gi, g_ptr_array_index (b->alone_delays, gi), culprits);
  /* groups sharing a link, each pair once */
  for (int l = 0; l < nl; l++)
    for (guint i = off[l]; i < off[l + 1]; i++)
      for (guint j = i + 1; j < off[l + 1]; j++) {
        gint64 key = (gint64) LG[2 * i + 1] << 32 | LG[2 * j + 1];
        g_array_append_val (keys, key);
      }
  g_array_sort (keys, sim_iter_int64_cmp);
  for (guint k = 0; k < keys->len; k++) {
    gint64 key = g_array_index (keys, gint64, k);
    guint gx = (guint) (key >> 32), gy = (guint) (key & 0xffffffff);
    if (k == 0 || key != g_array_index (keys, gint64, k - 1))
      groups_overlap (b, gx, g_ptr_array_index (b->alone_delays, gx), gy,
                      g_ptr_array_index (b->alone_delays, gy), culprits);
  }
  for (guint32 f = 0; flows && f < sim_engine_n_flows (b->e); f++) {
    SimActivityId a = sim_engine_flow_activity (b->e, f);
    int n = sim_engine_flow_n_links (b->e, a);
    for (int i = 0; i < n; i++) {
      int l = sim_engine_flow_link (b->e, a, i);
      for (guint k = off[l]; k < off[l + 1]; k++) {
        guint gi = (guint) LG[2 * k + 1];
        flow_meets (b, gi, g_ptr_array_index (b->alone_delays, gi), sim_engine_start (b->e, a),
                    sim_engine_end (b->e, a), culprits);
      }
    }
  }
  return culprits->len == 0;
}

#undef D_START
#undef D_END

