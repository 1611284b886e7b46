/* sim-network.c — see sim-network.h */
#include "sim-network.h"

#include <string.h>

struct _SimNetwork {
  const SimTopology *topo;
  SimEngine *engine;
  int link_base;           /* engine id of topology link 0, direction a->b */
  double latency_scale[4]; /* per-hop collective latency scale by SimLinkKind, 0: as tuned */
  /* adjacency in CSR: for vertex v, arcs [adj_off[v], adj_off[v+1]) */
  int *adj_off;
  int *adj_to;
  int *adj_link;           /* engine link id in the direction v -> to */
  guint8 *gpu;             /* per vertex: 1 for a GPU (the searches ask it of every
                            * neighbour of a switch; the vertex array is wide) */
  GHashTable *cache;       /* (src << 32 | dst) -> offset + 1 into routes */
  GArray *routes;          /* int: [hops, latency bits (2 ints), link ids...] */
  /* BFS scratch */
  int *prev_arc;
  int *queue;
  guint32 *seen;
  guint32 *next_to_dst;  /* t + 1 where the vertex, a forwarding neighbour of vertex t, may
                          * be t's parent when t is the search's target (search) */
  int marked;            /* the target whose neighbours next_to_dst marks, -1: none */
  guint32 *next_to_src;  /* gen where the vertex is a neighbour of the source */
  guint32 *in_chain;     /* gen where the vertex's parent is already known (search) */
  guint32 gen;
  /* a copy on an engine of its own, for collectives tried alone */
  SimNetwork *idle;
  SimEngine *idle_engine;
};

static void
build (SimNetwork *net)
{
  const SimTopology *t = net->topo;
  int nv = (int) t->vertices->len;
  int nl = (int) t->links->len;
  g_autofree int *deg = g_new0 (int, nv + 1);
  g_autofree int *fill = g_new0 (int, nv);

  net->link_base = sim_engine_n_links (net->engine);
  for (int i = 0; i < nl; i++) {
    const SimLink *l = &g_array_index (t->links, SimLink, i);
    sim_engine_add_link (net->engine, l->bw_bytes_per_s);
    sim_engine_add_link (net->engine, l->bw_bytes_per_s);
    deg[l->a]++;
    deg[l->b]++;
  }
  net->adj_off = g_new0 (int, nv + 1);
  for (int v = 0; v < nv; v++)
    net->adj_off[v + 1] = net->adj_off[v] + deg[v];
  net->adj_to = g_new (int, 2 * nl + 1);
  net->adj_link = g_new (int, 2 * nl + 1);
  for (int i = 0; i < nl; i++) {
    const SimLink *l = &g_array_index (t->links, SimLink, i);
    int pa = net->adj_off[l->a] + fill[l->a]++;
    int pb = net->adj_off[l->b] + fill[l->b]++;
    net->adj_to[pa] = l->b;
    net->adj_link[pa] = net->link_base + 2 * i;
    net->adj_to[pb] = l->a;
    net->adj_link[pb] = net->link_base + 2 * i + 1;
  }
  net->gpu = g_new (guint8, MAX (nv, 1));
  for (int v = 0; v < nv; v++)
    net->gpu[v] = g_array_index (t->vertices, SimVertex, v).kind == SIM_VERTEX_GPU;
  net->prev_arc = g_new (int, nv);
  net->queue = g_new (int, nv);
  net->seen = g_new0 (guint32, nv);
  net->next_to_dst = g_new0 (guint32, nv);
  net->marked = -1;
  net->next_to_src = g_new0 (guint32, nv);
  net->in_chain = g_new0 (guint32, nv);
}

SimNetwork *
sim_network_new (const SimTopology *topo, SimEngine *engine)
{
  SimNetwork *net = g_new0 (SimNetwork, 1);
  net->topo = topo;
  net->engine = engine;
  memcpy (net->latency_scale, topo->coll_latency_scale, sizeof net->latency_scale);
  net->cache = g_hash_table_new (g_int64_hash, g_int64_equal);
  net->routes = g_array_new (FALSE, FALSE, sizeof (int));
  build (net);
  return net;
}

static void
key_free (gpointer p)
{
  g_free (p);
}

void
sim_network_free (SimNetwork *net)
{
  if (net == NULL)
    return;
  {
    GHashTableIter it;
    gpointer k;
    g_hash_table_iter_init (&it, net->cache);
    while (g_hash_table_iter_next (&it, &k, NULL))
      key_free (k);
  }
  g_hash_table_unref (net->cache);
  g_array_unref (net->routes);
  g_free (net->adj_off);
  g_free (net->adj_to);
  g_free (net->adj_link);
  g_free (net->gpu);
  g_free (net->prev_arc);
  g_free (net->queue);
  g_free (net->seen);
  g_free (net->next_to_dst);
  g_free (net->next_to_src);
  g_free (net->in_chain);
  if (net->idle != NULL) {
    sim_network_free (net->idle);
    sim_engine_free (net->idle_engine);
  }
  g_free (net);
}

SimNetwork *
sim_network_idle (SimNetwork *net)
{
  if (net->idle == NULL) {
    net->idle_engine = sim_engine_new ();
    net->idle = sim_network_new (net->topo, net->idle_engine);
  }
  sim_engine_reset (net->idle_engine);
  return net->idle;
}

const SimTopology *
sim_network_topology (const SimNetwork *net)
{
  return net->topo;
}

SimEngine *
sim_network_engine (const SimNetwork *net)
{
  return net->engine;
}

static const SimVertex *
vertex (const SimNetwork *net, int v)
{
  return &g_array_index (net->topo->vertices, SimVertex, v);
}

static gboolean
is_gpu (const SimNetwork *net, int v)
{
  return net->gpu[v];
}

/* the first arc of u's to v */
static int
arc_to (const SimNetwork *net, int u, int v)
{
  for (int a = net->adj_off[u]; a < net->adj_off[u + 1]; a++)
    if (net->adj_to[a] == v)
      return a;
  return -1;
}

/* Whether u could be discovered before the vertex whose parent is being
 * sought: the source links to it (it is discovered first, at level 1), or
 * it has a forwarding (non-GPU) neighbour outside the chain.  A vertex
 * whose forwarding neighbours are all in the chain is discovered only
 * through the chain, after the vertex, so it cannot be its parent. */
static gboolean
viable (const SimNetwork *net, int u, guint32 gen)
{
  if (net->next_to_src[u] == gen)
    return TRUE;
  for (int b = net->adj_off[u]; b < net->adj_off[u + 1]; b++)
    if (!is_gpu (net, net->adj_to[b]) && net->in_chain[net->adj_to[b]] != gen)
      return TRUE;
  return FALSE;
}

/* The breadth-first search from vs to vd in which GPUs do not forward,
 * leaving prev_arc along the path; FALSE when vd cannot be reached.
 *
 * Two shortcuts, each giving the path the full search gives:
 * - a vertex's parent in the search tree is the first of its possible
 *   parents to be discovered (they alone discover it, and the first
 *   discovered is the first expanded).  Where a vertex has one possible
 *   parent (a GPU's only NIC, a NIC's only leaf switch), that is its
 *   parent, found without searching: walking back from vd while this
 *   holds gives a chain;
 * - the search then stops as soon as one possible parent of the chain's
 *   last vertex is discovered, instead of when that vertex is discovered.
 * On a fat tree the chain reaches the target's leaf switch and the search
 * stops at the first spine: a few hundred steps instead of the whole
 * fabric.  Not when vs links to vd directly (vs is expanded first). */
static gboolean
search (SimNetwork *net, int vs, int vd, guint32 gen)
{
  int chain[16];
  int n_chain = 0, target = vd, qh = 0, qt = 0;
  gboolean marks = FALSE;

  for (int a = net->adj_off[vs]; a < net->adj_off[vs + 1]; a++)
    net->next_to_src[net->adj_to[a]] = gen;
  if (net->next_to_src[vd] != gen) {
    for (;;) {
      int cand = -1, n_cand = 0;
      net->in_chain[target] = gen;
      if (net->next_to_src[target] == gen || n_chain == (int) G_N_ELEMENTS (chain))
        break;
      for (int a = net->adj_off[target]; a < net->adj_off[target + 1] && n_cand < 2; a++) {
        int u = net->adj_to[a];
        if (is_gpu (net, u) || net->in_chain[u] == gen || !viable (net, u, gen))
          continue;
        if (cand < 0)
          cand = u, n_cand = 1;
        else if (u != cand)
          n_cand = 2; /* a second possible parent (parallel links count once) */
      }
      if (n_cand != 1)
        break;
      chain[n_chain++] = target;
      target = cand;
    }
    /* the possible parents of the chain's last vertex: its forwarding
     * neighbours outside the chain (marked once for a run of searches
     * towards one target, as fabrics route many pairs into one leaf; the
     * chain is left out where the marks are read) */
    if (net->marked != target) {
      for (int a = net->adj_off[target]; a < net->adj_off[target + 1]; a++)
        if (!is_gpu (net, net->adj_to[a]))
          net->next_to_dst[net->adj_to[a]] = (guint32) target + 1;
      net->marked = target;
    }
    marks = TRUE;
  }

  net->queue[qt++] = vs;
  net->seen[vs] = gen;
  net->prev_arc[vs] = -1;
  while (qh < qt && net->seen[target] != gen) {
    int v = net->queue[qh++];
    /* only the source may send through its own links: GPUs do not forward */
    if (v != vs && is_gpu (net, v))
      continue;
    for (int a = net->adj_off[v]; a < net->adj_off[v + 1]; a++) {
      int w = net->adj_to[a];
      if (net->seen[w] == gen)
        continue;
      net->seen[w] = gen;
      net->prev_arc[w] = a;
      net->queue[qt++] = w;
      if (marks && net->next_to_dst[w] == (guint32) target + 1 && net->in_chain[w] != gen &&
          w != target) {
        /* the target hangs off w by w's first arc to it */
        net->seen[target] = gen;
        net->prev_arc[target] = arc_to (net, w, target);
        break;
      }
    }
  }
  if (net->seen[target] != gen)
    return FALSE;
  /* the chain back down to vd, each by its parent's first arc to it */
  for (int i = n_chain - 1; i >= 0; i--) {
    int parent = i + 1 < n_chain ? chain[i + 1] : target;
    net->seen[chain[i]] = gen;
    net->prev_arc[chain[i]] = arc_to (net, parent, chain[i]);
  }
  return TRUE;
}

int
sim_network_route (SimNetwork *net, int src, int dst, const int **links, double *latency_s)
{
  gint64 key = ((gint64) src << 32) | (guint32) dst;
  gpointer hit = g_hash_table_lookup (net->cache, &key);
  int vs = g_array_index (net->topo->gpus, int, src);
  int vd = g_array_index (net->topo->gpus, int, dst);
  int off = 0, hops = 0;
  double lat = 0.0;
  guint32 gen;

  if (hit == NULL) {
    gen = ++net->gen;
    if (src != dst && !search (net, vs, vd, gen))
      return -1;
    /* walk back from dst to count hops and sum latencies */
    for (int v = vd; v != vs; ) {
      int a = net->prev_arc[v];
      int from = 0;
      const SimLink *l = &g_array_index (net->topo->links, SimLink, (net->adj_link[a] - net->link_base) / 2);
      hops++;
      lat += l->latency_s;
      from = l->a == v ? l->b : l->a;
      if (from != vs)
        lat += vertex (net, from)->latency_s;
      v = from;
    }
    off = (int) net->routes->len;
    {
      int header[3] = { hops, 0, 0 };
      memcpy (&header[1], &lat, sizeof (double));
      g_array_append_vals (net->routes, header, 3);
    }
    g_array_set_size (net->routes, net->routes->len + (guint) hops);
    {
      int i = hops;
      for (int v = vd; v != vs; ) {
        int a = net->prev_arc[v];
        const SimLink *l = &g_array_index (net->topo->links, SimLink, (net->adj_link[a] - net->link_base) / 2);
        g_array_index (net->routes, int, off + 3 + --i) = net->adj_link[a];
        v = l->a == v ? l->b : l->a;
      }
    }
    {
      gint64 *k = g_new (gint64, 1);
      *k = key;
      g_hash_table_insert (net->cache, k, GINT_TO_POINTER (off + 1));
    }
  } else {
    off = GPOINTER_TO_INT (hit) - 1;
  }
  hops = g_array_index (net->routes, int, off);
  memcpy (&lat, &g_array_index (net->routes, int, off + 1), sizeof (double));
  if (links != NULL)
    *links = &g_array_index (net->routes, int, off + 3);
  if (latency_s != NULL)
    *latency_s = lat;
  return hops;
}

static int
switch_arc (SimNetwork *net, int gpu)
{
  int v = g_array_index (net->topo->gpus, int, gpu);
  for (int a = net->adj_off[v]; a < net->adj_off[v + 1]; a++) {
    int w = net->adj_to[a];
    if (vertex (net, w)->kind != SIM_VERTEX_NVSWITCH)
      continue;
    return net->adj_link[a];
  }
  return -1;
}

int
sim_network_gpu_to_switch (SimNetwork *net, int gpu)
{
  return switch_arc (net, gpu);
}

int
sim_network_switch_to_gpu (SimNetwork *net, int gpu)
{
  int out = switch_arc (net, gpu);
  if (out < 0)
    return -1;
  /* directions of one topology link are adjacent ids: base + 2i, base + 2i + 1 */
  return ((out - net->link_base) % 2 == 0) ? out + 1 : out - 1;
}

const SimVertex *
sim_network_gpu_switch (SimNetwork *net, int gpu)
{
  int v = g_array_index (net->topo->gpus, int, gpu);
  for (int a = net->adj_off[v]; a < net->adj_off[v + 1]; a++)
    if (vertex (net, net->adj_to[a])->kind == SIM_VERTEX_NVSWITCH)
      return vertex (net, net->adj_to[a]);
  return NULL;
}

void
sim_network_set_latency_scale (SimNetwork *net, SimLinkKind kind, double scale)
{
  net->latency_scale[kind] = scale;
}

double
sim_network_latency_scale (const SimNetwork *net, SimLinkKind kind)
{
  return net->latency_scale[kind];
}
