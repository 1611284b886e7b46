#include "sim-schedule.h"

/* the program being written: every schedule has a forward and a backward
 * per micro-batch and chunk (and a weight gradient where it splits the
 * backward), so its length is known before it is written */
typedef struct {
  SimPipeOp *op;
  guint n;
} Program;

static void
push_kind (Program *a, SimPassKind kind, int chunk, int mb)
{
  SimPipeOp op = { (guint8) kind, (guint16) chunk, (guint32) mb };
  a->op[a->n++] = op;
}

static void
push (Program *a, gboolean backward, int chunk, int mb)
{
  push_kind (a, backward ? SIM_PASS_BACKWARD : SIM_PASS_FORWARD, chunk, mb);
}

gboolean
sim_schedule_splits_backward (SimSchedule schedule)
{
  return schedule == SIM_SCHEDULE_ZB_H1;
}

guint
sim_schedule_passes (SimSchedule schedule, int m, int v)
{
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
  }
  g_assert (prog.n == len);
  return out;
}
