#include "sim-schedule.h"

/* the program being written: every schedule has a forward and a backward
 * per micro-batch and chunk (and a weight gradient where it splits the
 * backward), so its length is known before it is written */
typedef struct {
  SimPipeOp *op;
  guint n;
} Program;

static void
push_pair (Program *a, SimPassKind kind, int chunk, int mb, gboolean paired)
{
  SimPipeOp op = { (guint8) kind, (guint8) paired, (guint16) chunk, (guint32) mb };
  a->op[a->n++] = op;
}

static void
push_kind (Program *a, SimPassKind kind, int chunk, int mb)
{
  push_pair (a, kind, chunk, mb, FALSE);
}

static void
push (Program *a, gboolean backward, int chunk, int mb)
{
  push_kind (a, backward ? SIM_PASS_BACKWARD : SIM_PASS_FORWARD, chunk, mb);
}

gboolean
sim_schedule_splits_backward (SimSchedule schedule)
{
  return schedule == SIM_SCHEDULE_ZB_H1 || sim_schedule_chunks (schedule) == 2;
}

int
sim_schedule_chunks (SimSchedule schedule)
{
  if (sim_schedule_is_v (schedule) || schedule == SIM_SCHEDULE_DUALPIPE)
    return 2;
  return schedule == SIM_SCHEDULE_INTERLEAVED ? 0 : 1;
}

gboolean
sim_schedule_is_v (SimSchedule schedule)
{
  return schedule == SIM_SCHEDULE_ZB_V || schedule == SIM_SCHEDULE_DUALPIPE_V;
}

guint
sim_schedule_passes (SimSchedule schedule, int m, int v)
{
  if (sim_schedule_is_v (schedule))
    return 6u * (guint) m;
  if (schedule == SIM_SCHEDULE_DUALPIPE)
    return 3u * (guint) m; /* m / 2 a direction */
  if (sim_schedule_splits_backward (schedule))
    return 3u * (guint) m;
  return 2u * (guint) m * (guint) (schedule == SIM_SCHEDULE_INTERLEAVED ? v : 1);
}

/* ZB-H1 (sim-schedule.h): the forwards, backwards and weight gradients
 * done so far, each section stopping when the forwards (or backwards) run
 * out, as the authors' loops do when m < p; W takes the oldest pending */
static void
zb_h1 (Program *a, int p, int s, int m)
{
  int f = 0, bk = 0, w = 0;
  for (int i = 0; i < p - s - 1 && f < m; i++)
    push_kind (a, SIM_PASS_FORWARD, 0, f++);
  for (int i = 0; i < s && f < m; i++) {
    push_kind (a, SIM_PASS_FORWARD, 0, f++);
    push_kind (a, SIM_PASS_BACKWARD, 0, bk++);
  }
  while (f < m) {
    push_kind (a, SIM_PASS_FORWARD, 0, f++);
    push_kind (a, SIM_PASS_BACKWARD, 0, bk++);
    push_kind (a, SIM_PASS_WEIGHT, 0, w++);
  }
  while (bk < m) {
    push_kind (a, SIM_PASS_BACKWARD, 0, bk++);
    push_kind (a, SIM_PASS_WEIGHT, 0, w++);
  }
  while (w < m)
    push_kind (a, SIM_PASS_WEIGHT, 0, w++);
}

/* ZB-V (sim-schedule.h): counts of forwards, input and weight gradients
 * per chunk; built for max(2p - 1, m) micro-batches and the passes of
 * those beyond m dropped, as torch.distributed.pipelining does */
static void
zb_v (Program *a, int p, int s, int m)
{
  int n = MAX (2 * p - 1, m), f[2] = { 0, 0 }, bk[2] = { 0, 0 }, w[2];
#define OP(kind, c, mb) G_STMT_START { if ((mb) < m) push_kind (a, kind, c, mb); } G_STMT_END
#define F(c) G_STMT_START { OP (SIM_PASS_FORWARD, c, f[c]); f[c]++; } G_STMT_END
#define BW(c) G_STMT_START { OP (SIM_PASS_BACKWARD, c, bk[c]); OP (SIM_PASS_WEIGHT, c, bk[c]); bk[c]++; } G_STMT_END
  for (int i = 0; i < 2 * (p - s) - 1; i++)
    F (0);
  for (int i = 0; i < s; i++) {
    F (1);
    F (0);
  }
  for (int i = 0; i < p - s; i++) {
    F (1);
    BW (1);
  }
  while (f[1] < f[0] || f[0] < n) {
    if (f[0] < n)
      F (0);
    BW (0);
    F (1);
    BW (1);
  }
  w[0] = bk[0], w[1] = bk[1];
  for (int i = 0; i < s; i++) {
    OP (SIM_PASS_BACKWARD, 0, bk[0]);
    bk[0]++;
    OP (SIM_PASS_BACKWARD, 1, bk[1]);
    bk[1]++;
  }
  for (int i = 0; i < p - s; i++) {
    OP (SIM_PASS_BACKWARD, 0, bk[0]);
    bk[0]++;
    OP (SIM_PASS_WEIGHT, 0, w[0]);
    w[0]++;
  }
  for (; w[1] < bk[1]; w[1]++)
    OP (SIM_PASS_WEIGHT, 1, w[1]);
  for (; w[0] < bk[0]; w[0]++)
    OP (SIM_PASS_WEIGHT, 0, w[0]);
#undef BW
#undef F
#undef OP
}

/* DualPipeV's program state: forwards and input gradients per chunk, and
 * the weight gradients held back, oldest first */
typedef struct {
  Program *a;
  int f[2], b[2];
  int *wq_chunk, *wq_mb, wq_head, wq_tail;
} Dual;

static void
dual_f (Dual *d, int c, gboolean paired)
{
  push_pair (d->a, SIM_PASS_FORWARD, c, d->f[c]++, paired);
}

/* a whole backward (its B and W back to back), or with zb its input
 * gradient alone, its W held back */
static void
dual_b (Dual *d, int c, gboolean zb, gboolean paired)
{
  int mb = d->b[c]++;
  push_pair (d->a, SIM_PASS_BACKWARD, c, mb, paired);
  if (!zb) {
    push_pair (d->a, SIM_PASS_WEIGHT, c, mb, paired);
    return;
  }
  d->wq_chunk[d->wq_tail] = c, d->wq_mb[d->wq_tail] = mb;
  d->wq_tail++;
}

static void
dual_w (Dual *d)
{
  if (d->wq_head == d->wq_tail)
    return;
  push_kind (d->a, SIM_PASS_WEIGHT, d->wq_chunk[d->wq_head], d->wq_mb[d->wq_head]);
  d->wq_head++;
}

/* DualPipeV (sim-schedule.h), step by step as ScheduleDualPipeV's
 * _calculate_single_rank_operations: F&B pairs a forward of one chunk
 * with the whole backward of the other */
static void
dualpipe_v (Program *a, int p, int s, int m)
{
  g_autofree int *qc = g_new (int, 2 * (gsize) m), *qm = g_new (int, 2 * (gsize) m);
  Dual d = { .a = a, .wq_chunk = qc, .wq_mb = qm };
  gboolean zb = FALSE;
  for (int i = 0; i < 2 * (p - s - 1); i++)
    dual_f (&d, 0, FALSE);
  for (int i = 0; i < s + 1; i++) {
    dual_f (&d, 0, FALSE);
    dual_f (&d, 1, FALSE);
  }
  for (int i = 0; i < p - s - 1; i++) {
    dual_b (&d, 1, TRUE, FALSE);
    dual_w (&d);
    dual_f (&d, 1, FALSE);
  }
  for (int i = 0; i < m - 2 * p + s + 1; i++) {
    /* the last rank's first pair is not overlapped, "to further reduce
     * bubble size" */
    gboolean pair = !(i == 0 && s == p - 1);
    dual_f (&d, 0, pair);
    dual_b (&d, 1, FALSE, pair);
    dual_f (&d, 1, TRUE);
    dual_b (&d, 0, FALSE, TRUE);
  }
  for (int i = 0; i < p - s - 1; i++) {
    dual_b (&d, 1, FALSE, FALSE);
    dual_f (&d, 1, TRUE);
    dual_b (&d, 0, FALSE, TRUE);
  }
  for (int i = 0; i < s + 1; i++) {
    if (i == (s + 1) / 2 && s % 2 == 1)
      zb = TRUE;
    dual_b (&d, 1, zb, FALSE);
    if (i == (s + 1) / 2 && s % 2 == 0)
      zb = TRUE;
    dual_b (&d, 0, zb, FALSE);
  }
  for (int i = 0; i < p - s - 1; i++) {
    dual_w (&d);
    dual_b (&d, 0, zb, FALSE);
  }
  for (int i = 0; i < s + 1; i++)
    dual_w (&d);
  /* every weight gradient held back has run */
  g_assert (d.wq_head == d.wq_tail);
}

GArray *
sim_schedule_stage (SimSchedule schedule, int p, int s, int m, int v)
{
  guint len = sim_schedule_passes (schedule, m, v);
  GArray *out = g_array_sized_new (FALSE, FALSE, sizeof (SimPipeOp), len);
  Program prog, *a = &prog;
  g_array_set_size (out, len);
  prog.op = (SimPipeOp *) (gpointer) out->data, prog.n = 0;
  switch (schedule) {
  case SIM_SCHEDULE_GPIPE:
    for (int i = 0; i < m; i++)
      push (a, FALSE, 0, i);
    for (int i = 0; i < m; i++)
      push (a, TRUE, 0, i);
    break;
  case SIM_SCHEDULE_1F1B: {
    int warm = MIN (p - s - 1, m);
    for (int i = 0; i < warm; i++)
      push (a, FALSE, 0, i);
    for (int i = 0; i < m - warm; i++) {
      push (a, FALSE, 0, warm + i);
      push (a, TRUE, 0, i);
    }
    for (int i = m - warm; i < m; i++)
      push (a, TRUE, 0, i);
    break;
  }
  case SIM_SCHEDULE_INTERLEAVED: {
    int total = m * v;
    int warm = m == p ? total : MIN ((p - s - 1) * 2 + (v - 1) * p, total);
#define FCHUNK(k) (((k) / p) % v)
#define BCHUNK(k) (v - 1 - ((k) / p) % v)
#define MB(k) (((k) / (p * v)) * p + (k) % p)
    for (int k = 0; k < warm; k++)
      push (a, FALSE, FCHUNK (k), MB (k));
    for (int i = 0; i < total - warm; i++) {
      push (a, FALSE, FCHUNK (warm + i), MB (warm + i));
      push (a, TRUE, BCHUNK (i), MB (i));
    }
    for (int k = total - warm; k < total; k++)
      push (a, TRUE, BCHUNK (k), MB (k));
#undef FCHUNK
#undef BCHUNK
#undef MB
    break;
  }
  case SIM_SCHEDULE_ZB_H1:
    zb_h1 (a, p, s, m);
    break;
  case SIM_SCHEDULE_ZB_V:
    zb_v (a, p, s, m);
    break;
  case SIM_SCHEDULE_DUALPIPE_V:
    dualpipe_v (a, p, s, m);
    break;
  case SIM_SCHEDULE_DUALPIPE: {
    /* DualPipeV's program on half the ranks, a phase a direction: on the
     * second half of the ranks phase 0 is the second copy's */
    guint from = a->n;
    dualpipe_v (a, p / 2, MIN (s, p - 1 - s), m / 2);
    if (s >= p / 2)
      for (guint i = from; i < a->n; i++)
        a->op[i].chunk = (guint16) (1 - a->op[i].chunk);
    break;
  }
  }
  g_assert (prog.n == len);
  return out;
}
