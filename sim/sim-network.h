/* sim-network.h — the topology's links as engine resources, and routes.
 *
 * Every full-duplex topology link becomes two engine links, one per
 * direction, each with the link's bandwidth per direction.  A route between
 * two GPUs is a shortest path in hops (ties broken by link order, so routes
 * are deterministic) that never passes through another GPU: GPUs are
 * endpoints, not routers.  Its latency is the sum of the links' latencies
 * and of the switches and NICs it traverses.  Routes are cached.
 *
 * A network borrows its topology and engine, which must outlive it, and
 * belongs to the engine's thread (sim-engine.h); nothing here fails.
 */
#pragma once

#include <glib.h>

#include "sim-engine.h"
#include "sim-topology.h"

G_BEGIN_DECLS

typedef struct _SimNetwork SimNetwork;

/* adds two engine links per topology link to engine; free with
 * sim_network_free (NULL is ignored) */
SimNetwork *sim_network_new (const SimTopology *topo, SimEngine *engine);
void sim_network_free (SimNetwork *net);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimNetwork, sim_network_free)

/* a network of the same topology, with its topology's latency scales, on
 * an engine of its own that is idle (reset, sim_engine_reset) at each call:
 * for trying a collective alone.  Owned by net, created on first use, and
 * valid until the next call or sim_network_free(net); never fails */
SimNetwork *sim_network_idle (SimNetwork *net);

/* the borrowed topology and engine */
const SimTopology *sim_network_topology (const SimNetwork *net);
SimEngine *sim_network_engine (const SimNetwork *net);

/* Route from GPU src to GPU dst (GPU numbers): engine link ids in order.
 * Returns the number of hops (0 when src == dst), -1 when there is no route.
 * *links points into the network's route table, which grows: it is valid
 * until the next sim_network_route() call that computes a new route, so
 * copy it (sim_engine_add_flow does) before asking for another. */
int sim_network_route (SimNetwork *net, int src, int dst, const int **links, double *latency_s);

/* the engine link from a GPU to the NVSwitch of its node and back, or -1 */
int sim_network_gpu_to_switch (SimNetwork *net, int gpu);
int sim_network_switch_to_gpu (SimNetwork *net, int gpu);
/* the NVSwitch vertex of a GPU's node (owned by the topology), or NULL */
const SimVertex *sim_network_gpu_switch (SimNetwork *net, int gpu);

/* the per-hop collective latency scale of a link kind (0: NCCL's tuned
 * latency), from the topology's calibration unless set here: a fit tries
 * scales on a network of its own and leaves the topology as loaded.  One
 * thread per network. */
void sim_network_set_latency_scale (SimNetwork *net, SimLinkKind kind, double scale);
double sim_network_latency_scale (const SimNetwork *net, SimLinkKind kind);

G_END_DECLS
