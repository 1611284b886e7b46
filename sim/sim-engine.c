/* sim-engine.c — see sim-engine.h */
#include "sim-engine.h"

#include "sim-error.h"
#include "sim-vec.h"

typedef enum { KIND_COMPUTE, KIND_DELAY, KIND_FLOW } Kind;
typedef enum { ST_WAITING, ST_QUEUED, ST_RUNNING, ST_LATENCY, ST_DONE } State;
typedef enum { EV_DONE, EV_FLOW_BYTES } EventType;

typedef struct {
  guint8 kind;
  guint8 state;
  guint32 tag;
  gint32 index;       /* stream (compute) or flow (flow) */
  guint32 pending;    /* predecessors not finished */
  guint32 succ_off;
  guint32 succ_len;
  gint32 next_queued; /* FIFO link on its stream */
  SimTime duration;   /* compute, delay; the latency of a flow */
  SimTime start;
  SimTime end;
} Activity;

typedef struct {
  double bytes_left;
  double rate;
  double max_rate;
  SimTime last;
  guint32 path_off;
  guint32 path_len;
  guint32 version;
  guint32 activity;
  guint32 mark;
  gboolean active;
  gboolean frozen;
} Flow;

/* one hop of a flow's path, threaded into its link's list of active flows */
typedef struct {
  gint32 link;
  gint32 flow;
  gint32 prev;
  gint32 next;
} Hop;

typedef struct {
  double bw;
  double cap_left;
  gint32 head;
  guint32 n_unfrozen;
  guint32 mark;
  guint32 n_flows; /* flows added across it since the last reset */
} Link;

typedef struct {
  gint32 head;
  gint32 tail;
  gboolean busy;
} Stream;

typedef struct {
  SimTime time;
  guint64 seq;
  guint32 activity;
  guint32 version;
  guint32 type;
} Event;

struct _SimEngine {
  SIM_VEC (Activity) activities;
  SIM_VEC (Flow) flows;
  SIM_VEC (Hop) hops;
  SIM_VEC (Link) links; /* one direction each */
  SIM_VEC (Stream) streams;
  SIM_VEC (guint32) deps; /* pairs: after, before */
  SIM_VEC (guint32) succ; /* CSR successors, built by run */
  SIM_VEC (guint32) fill; /* run's scratch: successors placed per activity */
  Event *heap;
  gsize heap_len;
  gsize heap_cap;
  guint64 seq;
  SimTime now;
  guint64 events;
  guint64 reshares;
  guint32 generation;
  /* scratch for resharing, sized once per run */
  SIM_VEC (gint32) comp_links;
  SIM_VEC (gint32) comp_flows;
  SIM_VEC (gint32) touched; /* the links flows were added on since the last reset */
  /* flows started or finished at the current instant, whose components
   * are reshared once when the instant is over (reshare_pending) */
  SIM_VEC (gint32) pending; /* flow indices */
  gboolean ran;
};

/* The last engine freed on a thread, emptied, for the next one made
 * there: a sweep's or a steady state's estimates one after another reuse
 * its allocations instead of growing them from nothing (page faults and
 * copies were two fifths of an estimate's time, bench-estimate under
 * perf); one per thread, freed with the thread */
static void engine_release (SimEngine *e);
static GPrivate spare_engine = G_PRIVATE_INIT ((GDestroyNotify) engine_release);

SimEngine *
sim_engine_new (void)
{
  SimEngine *e = g_private_get (&spare_engine);
  if (e != NULL) {
    g_private_set (&spare_engine, NULL);
    return e;
  }
  return g_new0 (SimEngine, 1);
}

static void
engine_release (SimEngine *e)
{
  if (e == NULL)
    return;
  sim_vec_clear (&e->activities);
  sim_vec_clear (&e->flows);
  sim_vec_clear (&e->hops);
  sim_vec_clear (&e->links);
  sim_vec_clear (&e->streams);
  sim_vec_clear (&e->deps);
  sim_vec_clear (&e->touched);
  sim_vec_clear (&e->succ);
  sim_vec_clear (&e->fill);
  g_free (e->heap);
  sim_vec_clear (&e->comp_links);
  sim_vec_clear (&e->comp_flows);
  sim_vec_clear (&e->pending);
  g_free (e);
}

void
sim_engine_free (SimEngine *e)
{
  if (e == NULL)
    return;
  SimEngine *spare = g_private_get (&spare_engine);
  /* the larger kept (a network's idle copy has a small one) */
  if (spare != NULL && spare->activities.cap >= e->activities.cap) {
    engine_release (e);
    return;
  }
  engine_release (spare);
  /* kept as new: no link, no stream, nothing added */
  sim_engine_reset (e);
  sim_vec_truncate (&e->links);
  g_private_set (&spare_engine, e);
}

int
sim_engine_add_stream (SimEngine *e)
{
  Stream s = { -1, -1, FALSE };
  sim_vec_push (&e->streams, s);
  return (int) e->streams.len - 1;
}

int
sim_engine_add_link (SimEngine *e, double bw_bytes_per_s)
{
  Link l = { bw_bytes_per_s, 0.0, -1, 0, 0, 0 };
  g_return_val_if_fail (bw_bytes_per_s > 0, -1);
  sim_vec_push (&e->links, l);
  return (int) e->links.len - 1;
}

int
sim_engine_n_links (const SimEngine *e)
{
  return (int) e->links.len;
}

void
sim_engine_reset (SimEngine *e)
{
  sim_vec_truncate (&e->activities);
  sim_vec_truncate (&e->flows);
  sim_vec_truncate (&e->hops);
  sim_vec_truncate (&e->streams);
  sim_vec_truncate (&e->deps);
  /* only links that flows crossed changed (a network may have many more) */
  for (guint i = 0; i < e->touched.len; i++) {
    Link *l = &e->links.data[e->touched.data[i]];
    l->cap_left = 0.0;
    l->head = -1;
    l->n_unfrozen = 0;
    l->mark = 0;
    l->n_flows = 0;
  }
  sim_vec_truncate (&e->touched);
  sim_vec_truncate (&e->pending);
  e->heap_len = 0;
  e->seq = 0;
  e->now = 0;
  e->events = 0;
  e->reshares = 0;
  e->generation = 0;
  e->ran = FALSE;
}

static SimActivityId
add_activity (SimEngine *e, Kind kind, gint32 index, SimTime duration, guint32 tag)
{
  Activity a = { 0 };
  a.kind = kind;
  a.state = ST_WAITING;
  a.tag = tag;
  a.index = index;
  a.next_queued = -1;
  a.duration = duration;
  a.start = -1;
  a.end = -1;
  sim_vec_push (&e->activities, a);
  return e->activities.len - 1;
}

SimActivityId
sim_engine_add_compute (SimEngine *e, int stream, SimTime duration, guint32 tag)
{
  g_return_val_if_fail (stream >= 0 && (guint) stream < e->streams.len, 0);
  return add_activity (e, KIND_COMPUTE, stream, MAX (duration, 0), tag);
}

SimActivityId
sim_engine_add_delay (SimEngine *e, SimTime duration, guint32 tag)
{
  return add_activity (e, KIND_DELAY, -1, MAX (duration, 0), tag);
}

SimActivityId
sim_engine_add_flow (SimEngine *e, const int *links, int n_links, double bytes,
                     double max_rate_bytes_per_s, SimTime latency, guint32 tag)
{
  Flow f = { 0 };
  f.bytes_left = MAX (bytes, 0.0);
  f.max_rate = max_rate_bytes_per_s > 0 ? max_rate_bytes_per_s : 0.0;
  f.path_off = e->hops.len;
  f.path_len = (guint32) n_links;
  f.activity = e->activities.len;
  for (int i = 0; i < n_links; i++) {
    Hop h = { links[i], (gint32) e->flows.len, -1, -1 };
    g_return_val_if_fail (links[i] >= 0 && (guint) links[i] < e->links.len, 0);
    sim_vec_push (&e->hops, h);
    if (e->links.data[links[i]].n_flows++ == 0)
      sim_vec_push (&e->touched, links[i]);
  }
  sim_vec_push (&e->flows, f);
  return add_activity (e, KIND_FLOW, (gint32) e->flows.len - 1, MAX (latency, 0), tag);
}

void
sim_engine_add_dep (SimEngine *e, SimActivityId after, SimActivityId before)
{
  g_return_if_fail (after < e->activities.len && before < e->activities.len);
  sim_vec_push (&e->deps, after);
  sim_vec_push (&e->deps, before);
}

/* ---- event heap, ordered by (time, seq) ---- */

static gboolean
event_less (const Event *a, const Event *b)
{
  return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void
push_event (SimEngine *e, SimTime time, guint32 activity, guint32 version, EventType type)
{
  Event ev = { time, e->seq++, activity, version, type };
  gsize i;
  if (e->heap_len == e->heap_cap) {
    e->heap_cap = MAX (64, e->heap_cap * 2);
    e->heap = g_renew (Event, e->heap, e->heap_cap);
  }
  i = e->heap_len++;
  while (i > 0) {
    gsize parent = (i - 1) / 2;
    if (!event_less (&ev, &e->heap[parent]))
      break;
    e->heap[i] = e->heap[parent];
    i = parent;
  }
  e->heap[i] = ev;
}

/* the earliest event, out of the heap: the hole at the root goes down to
 * a leaf by the earlier child (one comparison a level), and the last
 * event comes up from there (seldom far: it came from the bottom) */
static Event
pop_event (SimEngine *e)
{
  Event top = e->heap[0];
  Event last = e->heap[--e->heap_len];
  gsize n = e->heap_len, i = 0, l;
  if (n == 0)
    return top;
  while ((l = 2 * i + 1) < n) {
    if (l + 1 < n && event_less (&e->heap[l + 1], &e->heap[l]))
      l++;
    e->heap[i] = e->heap[l];
    i = l;
  }
  while (i > 0) {
    gsize parent = (i - 1) / 2;
    if (!event_less (&last, &e->heap[parent]))
      break;
    e->heap[i] = e->heap[parent];
    i = parent;
  }
  e->heap[i] = last;
  return top;
}

/* ---- max-min fair sharing ---- */

#define ACT(e, i) (&(e)->activities.data[(i)])
#define FLOW(e, i) (&(e)->flows.data[(i)])
#define HOP(e, i) (&(e)->hops.data[(i)])
#define LINK(e, i) (&(e)->links.data[(i)])

static void
link_insert (SimEngine *e, gint32 hop)
{
  Hop *h = HOP (e, hop);
  Link *l = LINK (e, h->link);
  h->prev = -1;
  h->next = l->head;
  if (l->head >= 0)
    HOP (e, l->head)->prev = hop;
  l->head = hop;
}

static void
link_remove (SimEngine *e, gint32 hop)
{
  Hop *h = HOP (e, hop);
  if (h->prev >= 0)
    HOP (e, h->prev)->next = h->next;
  else
    LINK (e, h->link)->head = h->next;
  if (h->next >= 0)
    HOP (e, h->next)->prev = h->prev;
  h->prev = h->next = -1;
}

/* Recompute the rates of every active flow connected (through shared links)
 * to the links of flow `seed`, by progressive filling; reschedule the
 * completion of each flow whose rate changed.  Flows elsewhere are not
 * touched: their shares cannot change. */
static void
reshare (SimEngine *e, gint32 seed)
{
  Flow *sf = FLOW (e, seed);
  guint32 gen = ++e->generation;
  gsize nl = 0, nf = 0, qh = 0;
  gsize unfrozen = 0;

  for (guint32 k = 0; k < sf->path_len; k++) {
    Link *l = LINK (e, HOP (e, sf->path_off + k)->link);
    if (l->mark != gen) {
      l->mark = gen;
      e->comp_links.data[nl++] = HOP (e, sf->path_off + k)->link;
    }
  }
  if (sf->active && sf->mark != gen) {
    sf->mark = gen;
    e->comp_flows.data[nf++] = seed;
  }
  /* breadth first over links, then the flows on them, then their links */
  while (qh < nl) {
    Link *l = LINK (e, e->comp_links.data[qh++]);
    for (gint32 hi = l->head; hi >= 0; hi = HOP (e, hi)->next) {
      gint32 fi = HOP (e, hi)->flow;
      Flow *f = FLOW (e, fi);
      if (f->mark == gen)
        continue;
      f->mark = gen;
      e->comp_flows.data[nf++] = fi;
      for (guint32 k = 0; k < f->path_len; k++) {
        gint32 li = HOP (e, f->path_off + k)->link;
        if (LINK (e, li)->mark != gen) {
          LINK (e, li)->mark = gen;
          e->comp_links.data[nl++] = li;
        }
      }
    }
  }

  for (gsize i = 0; i < nl; i++) {
    Link *l = LINK (e, e->comp_links.data[i]);
    l->cap_left = l->bw;
    l->n_unfrozen = 0;
  }
  for (gsize i = 0; i < nf; i++) {
    Flow *f = FLOW (e, e->comp_flows.data[i]);
    f->bytes_left -= f->rate * sim_time_to_s (e->now - f->last);
    if (f->bytes_left < 0)
      f->bytes_left = 0;
    f->last = e->now;
    f->frozen = FALSE;
    for (guint32 k = 0; k < f->path_len; k++)
      LINK (e, HOP (e, f->path_off + k)->link)->n_unfrozen++;
  }
  unfrozen = nf;
  e->reshares += nf;

  while (unfrozen > 0) {
    double best = G_MAXDOUBLE;
    gint32 best_link = -1, best_flow = -1;
    for (gsize i = 0; i < nl; i++) {
      Link *l = LINK (e, e->comp_links.data[i]);
      if (l->n_unfrozen > 0) {
        double share = MAX (l->cap_left, 0.0) / l->n_unfrozen;
        if (share < best) {
          best = share;
          best_link = e->comp_links.data[i];
        }
      }
    }
    for (gsize i = 0; i < nf; i++) {
      Flow *f = FLOW (e, e->comp_flows.data[i]);
      if (!f->frozen && (f->max_rate > 0 && f->max_rate < best)) {
        best = f->max_rate;
        best_flow = e->comp_flows.data[i];
        best_link = -1;
      }
    }
    for (gsize i = 0; i < nf; i++) {
      gint32 fi = e->comp_flows.data[i];
      Flow *f = FLOW (e, fi);
      gboolean hit = FALSE;
      if (f->frozen)
        continue;
      if (best_flow >= 0)
        hit = fi == best_flow;
      else
        for (guint32 k = 0; k < f->path_len && !hit; k++)
          hit = HOP (e, f->path_off + k)->link == best_link;
      if (!hit)
        continue;
      f->frozen = TRUE;
      unfrozen--;
      if (f->rate != best) {
        f->rate = best;
        f->version++;
        if (best > 0)
          push_event (e, sim_time_add (e->now, sim_time_from_s (f->bytes_left / best)), f->activity, f->version,
                      EV_FLOW_BYTES);
      }
      for (guint32 k = 0; k < f->path_len; k++) {
        Link *l = LINK (e, HOP (e, f->path_off + k)->link);
        l->cap_left -= best;
        l->n_unfrozen--;
      }
    }
  }
}

/* ---- activity life cycle ---- */

static void make_ready (SimEngine *e, guint32 a);

static void
stream_kick (SimEngine *e, gint32 si)
{
  Stream *s = &e->streams.data[si];
  Activity *a = NULL;
  guint32 id;
  if (s->busy || s->head < 0)
    return;
  id = (guint32) s->head;
  a = ACT (e, id);
  s->head = a->next_queued;
  if (s->head < 0)
    s->tail = -1;
  s->busy = TRUE;
  a->state = ST_RUNNING;
  a->start = e->now;
  push_event (e, sim_time_add (e->now, a->duration), id, 0, EV_DONE);
}

static void
finish (SimEngine *e, guint32 id)
{
  Activity *a = ACT (e, id);
  a->state = ST_DONE;
  a->end = e->now;
  if (a->kind == KIND_COMPUTE) {
    e->streams.data[a->index].busy = FALSE;
    stream_kick (e, a->index);
  }
  for (guint32 k = 0; k < a->succ_len; k++) {
    guint32 s = e->succ.data[a->succ_off + k];
    Activity *sa = ACT (e, s);
    if (--sa->pending == 0)
      make_ready (e, s);
  }
}

static void
make_ready (SimEngine *e, guint32 id)
{
  Activity *a = ACT (e, id);
  switch (a->kind) {
  case KIND_COMPUTE: {
    Stream *s = &e->streams.data[a->index];
    a->state = ST_QUEUED;
    a->next_queued = -1;
    if (s->tail >= 0)
      ACT (e, s->tail)->next_queued = (gint32) id;
    else
      s->head = (gint32) id;
    s->tail = (gint32) id;
    stream_kick (e, a->index);
    break;
  }
  case KIND_DELAY:
    a->state = ST_RUNNING;
    a->start = e->now;
    push_event (e, sim_time_add (e->now, a->duration), id, 0, EV_DONE);
    break;
  case KIND_FLOW: {
    Flow *f = FLOW (e, a->index);
    a->state = ST_RUNNING;
    a->start = e->now;
    f->last = e->now;
    if (f->bytes_left <= 0 || (f->path_len == 0 && f->max_rate <= 0)) {
      a->state = ST_LATENCY;
      push_event (e, sim_time_add (e->now, a->duration), id, 0, EV_DONE);
    } else if (f->path_len == 0) {
      /* no shared link: only its own cap limits it */
      f->rate = f->max_rate;
      push_event (e, sim_time_add (e->now, sim_time_from_s (f->bytes_left / f->rate)), id, f->version,
                  EV_FLOW_BYTES);
      f->active = FALSE;
    } else {
      f->active = TRUE;
      for (guint32 k = 0; k < f->path_len; k++)
        link_insert (e, (gint32) (f->path_off + k));
      sim_vec_push (&e->pending, a->index);
    }
    break;
  }
  }
}

static void
flow_bytes_done (SimEngine *e, guint32 id, guint32 version)
{
  Activity *a = ACT (e, id);
  Flow *f = FLOW (e, a->index);
  if (a->state != ST_RUNNING || version != f->version)
    return; /* superseded by a later share */
  f->bytes_left = 0;
  f->rate = 0;
  if (f->active) {
    f->active = FALSE;
    for (guint32 k = 0; k < f->path_len; k++)
      link_remove (e, (gint32) (f->path_off + k));
    sim_vec_push (&e->pending, a->index);
  }
  a->state = ST_LATENCY;
  push_event (e, sim_time_add (e->now, a->duration), id, 0, EV_DONE);
}

/* The max-min fair shares at an instant depend only on the flows active
 * then, so the flows that start and finish at one instant are reshared
 * together once it is over: one progressive filling per component, not one
 * per flow (no time passes between them, so no flow's progress changes).
 * A seed whose links were all in a component already reshared in this
 * flush is skipped. */
static void
reshare_pending (SimEngine *e)
{
  guint32 start = e->generation + 1;
  for (guint i = 0; i < e->pending.len; i++) {
    gint32 seed = e->pending.data[i];
    Flow *f = FLOW (e, seed);
    gboolean covered = TRUE;
    for (guint32 k = 0; k < f->path_len && covered; k++)
      covered = LINK (e, HOP (e, f->path_off + k)->link)->mark >= start;
    if (!covered)
      reshare (e, seed);
  }
  sim_vec_truncate (&e->pending);
}

gboolean
sim_engine_run (SimEngine *e, GError **error)
{
  guint32 n = e->activities.len;
  guint32 n_deps = e->deps.len / 2;
  const guint32 *d = e->deps.data;
  guint32 done = 0;

  g_return_val_if_fail (!e->ran, FALSE);
  e->ran = TRUE;

  /* successors in CSR form */
  for (guint32 k = 0; k < n_deps; k++) {
    ACT (e, d[2 * k + 1])->succ_len++;
    ACT (e, d[2 * k])->pending++;
  }
  {
    guint32 off = 0;
    for (guint32 i = 0; i < n; i++) {
      ACT (e, i)->succ_off = off;
      off += ACT (e, i)->succ_len;
    }
  }
  sim_vec_room (&e->succ, n_deps);
  sim_vec_room (&e->fill, n);
  memset (e->fill.data, 0, (gsize) n * sizeof *e->fill.data);
  for (guint32 k = 0; k < n_deps; k++) {
    Activity *b = ACT (e, d[2 * k + 1]);
    e->succ.data[b->succ_off + e->fill.data[d[2 * k + 1]]++] = d[2 * k];
  }
  sim_vec_room (&e->comp_links, e->links.len);
  sim_vec_room (&e->comp_flows, e->flows.len);

  sim_vec_truncate (&e->pending);
  e->now = 0;
  for (guint32 i = 0; i < n; i++)
    if (ACT (e, i)->pending == 0 && ACT (e, i)->state == ST_WAITING)
      make_ready (e, i);
  reshare_pending (e);

  while (e->heap_len > 0) {
    Event ev = pop_event (e);
    e->now = ev.time;
    e->events++;
    if (ev.type == EV_FLOW_BYTES)
      flow_bytes_done (e, ev.activity, ev.version);
    else
      finish (e, ev.activity);
    if (e->pending.len > 0 && (e->heap_len == 0 || e->heap[0].time != e->now))
      reshare_pending (e);
  }
  for (guint32 i = 0; i < n; i++)
    done += ACT (e, i)->state == ST_DONE;
  if (done != n) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "%u of %u activities never started: their dependencies form a cycle", n - done, n);
    return FALSE;
  }
  if (e->now == SIM_TIME_MAX) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "the step would take longer than %.0f days, more than sim's clock can represent",
                 sim_time_to_s (SIM_TIME_MAX) / 86400.0);
    return FALSE;
  }
  return TRUE;
}

guint32
sim_engine_n_activities (const SimEngine *e)
{
  return e->activities.len;
}

SimTime
sim_engine_start (const SimEngine *e, SimActivityId a)
{
  return e->activities.data[a].start;
}

SimTime
sim_engine_end (const SimEngine *e, SimActivityId a)
{
  return e->activities.data[a].end;
}

guint32
sim_engine_link_flows (const SimEngine *e, int link)
{
  g_return_val_if_fail (link >= 0 && (guint) link < e->links.len, 0);
  return e->links.data[link].n_flows;
}

int
sim_engine_flow_n_links (const SimEngine *e, SimActivityId a)
{
  const Activity *x = &e->activities.data[a];
  return x->kind == KIND_FLOW ? (int) e->flows.data[x->index].path_len : 0;
}

void
sim_engine_flow_links (SimEngine *e, GArray *links)
{
  /* a generation of its own: reshare's marks compare against later ones */
  guint32 gen = ++e->generation;
  for (guint32 f = 0; f < e->flows.len; f++) {
    const Flow *x = FLOW (e, f);
    for (guint32 k = 0; k < x->path_len; k++) {
      gint32 l = HOP (e, x->path_off + k)->link;
      if (LINK (e, l)->mark != gen) {
        LINK (e, l)->mark = gen;
        g_array_append_val (links, l);
      }
    }
  }
}

guint32
sim_engine_n_flows (const SimEngine *e)
{
  return e->flows.len;
}

SimActivityId
sim_engine_flow_activity (const SimEngine *e, guint32 i)
{
  g_return_val_if_fail (i < e->flows.len, G_MAXUINT32);
  return e->flows.data[i].activity;
}

int
sim_engine_flow_link (const SimEngine *e, SimActivityId a, int i)
{
  const Activity *x = &e->activities.data[a];
  const Flow *f = &e->flows.data[x->index];
  g_return_val_if_fail (x->kind == KIND_FLOW && i >= 0 && (guint32) i < f->path_len, -1);
  return e->hops.data[f->path_off + (guint32) i].link;
}

guint32
sim_engine_tag (const SimEngine *e, SimActivityId a)
{
  return e->activities.data[a].tag;
}

SimTime
sim_engine_now (const SimEngine *e)
{
  return e->now;
}

guint64
sim_engine_events (const SimEngine *e)
{
  return e->events;
}

guint64
sim_engine_reshares (const SimEngine *e)
{
  return e->reshares;
}
