#include "sim-schedule.h"

/* the program being written: every schedule has a forward and a backward
 * per micro-batch and chunk, so its length is known before it is written */
typedef struct {
  SimPipeOp *op;
  guint n;
} Program;

static void
push (Program *a, gboolean backward, int chunk, int mb)
{
  SimPipeOp op = { (guint8) backward, (guint16) chunk, (guint32) mb };
  a->op[a->n++] = op;
}

GArray *
sim_schedule_stage (SimSchedule schedule, int p, int s, int m, int v)
{
  guint len = 2u * (guint) m * (guint) (schedule == SIM_SCHEDULE_INTERLEAVED ? v : 1);
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
  }
  g_assert (prog.n == len);
  return out;
}
