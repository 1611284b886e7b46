/* sim-calibration.h — measured rates replacing a GPU's data-sheet figures.
 *
 * A calibration file (sim/calibration.rng; written by `sim calibrate`) holds
 * what the microbenchmarks measured on one GPU: HBM bandwidth, GEMM rates by
 * shape, and the bandwidth transfers reached per link kind.  Applied to a
 * topology it replaces the GPU types' HBM bandwidth and GEMM table and caps
 * the links of each kind at the achieved bandwidth. */
#pragma once

#include <glib.h>

#include "sim-microbench.h"
#include "sim-nccl.h"
#include "sim-topology.h"

G_BEGIN_DECLS

typedef struct {
  char *path;
  char *gpu;
  double hbm_bw_bytes_per_s;       /* 0: not calibrated */
  GArray *gemm;                    /* SimGemmPoint */
  double link_bw[4];               /* by SimLinkKind, 0: not calibrated */
  double link_latency_scale[4];    /* by SimLinkKind: measured / NCCL-tuned per-hop latency, 0: not calibrated */
} SimCalibration;

/* a new SimCalibration (free with sim_calibration_free), or NULL with
 * SIM_ERROR_IO, SIM_ERROR_XML or SIM_ERROR_UNIT ("file:line: ..."); any
 * thread (see sim-xml.h) */
SimCalibration *sim_calibration_load (const char *path, GError **error);
/* NULL is ignored */
void sim_calibration_free (SimCalibration *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimCalibration, sim_calibration_free)

/* Writes into topo, to every GPU type whatever c's gpu name (one GPU type
 * per cluster) and to every link of a calibrated kind: part of loading a
 * topology (sim_calibration_load_topology), before anything reads it.
 * Never fails; not thread-safe on a shared topology. */
void sim_calibration_apply (const SimCalibration *c, SimTopology *topo);

/* the XML text of a calibration (caller g_free()s); never fails; any thread */
char *sim_calibration_to_xml (const SimCalibration *c, const char *date, const char *source);

/* A topology as a user gives it: the file (sim_topology_load, resized to
 * nodes > 0), each GPU type's <gpu-type calibration> file, then the
 * calibration file `calibration` (may be NULL).  After this nothing writes
 * into it.  A new topology (sim_topology_free), or NULL with the loaders'
 * errors; any thread (see sim-xml.h). */
SimTopology *sim_calibration_load_topology (const char *path, int nodes, const char *calibration,
                                            GError **error);
/* the same with part of a node: gpus_per_node > 0 keeps that many GPUs of
 * each node (sim_topology_load_part, sim --gpus) */
SimTopology *sim_calibration_load_topology_part (const char *path, int nodes, int gpus_per_node,
                                                 const char *calibration, GError **error);
/* The cluster a job runs on, as the command line takes it: the topology
 * `name` (a path, or a name in topologies/: sim_paths_resolve) at `nodes`
 * nodes (0: the file's), or at `gpus` GPUs (0: whole nodes; else 1, 2, 4
 * or 8 GPUs of one node, whole compute trays of a rack-scale node, or a
 * multiple of a node), with calibration applied (NULL: none), checked to
 * hold one GPU type.  A new topology, or NULL with SIM_ERROR_USAGE (a GPU
 * count no node divides, nodes and gpus that disagree) or the loaders'
 * errors; any thread. */
SimTopology *sim_calibration_load_cluster (const char *name, int nodes, int gpus,
                                           const char *calibration, GError **error);

/* ---- fitting measurements into a calibration (sim calibrate) ---- */

/* the bf16 GEMM rows of a microbenchmark file become c's GEMM table;
 * returns how many */
guint sim_calibration_fit_gemm (SimCalibration *c, const SimMicrobench *b);
/* the highest HBM rate of a microbenchmark file becomes c's bandwidth */
void sim_calibration_fit_hbm (SimCalibration *c, const SimMicrobench *b);
/* the all_reduce rows of a microbenchmark file as an nccl-tests result
 * (free with sim_nccl_result_free) */
SimNcclResult *sim_calibration_nccl_from_bench (const SimMicrobench *b, const char *path);
/* the achieved bandwidth of link kind `kind`: the mean all_reduce bus
 * bandwidth from 256 MiB up (the largest size when none is that large).
 * FALSE with SIM_ERROR_USAGE when measured has no row. */
gboolean sim_calibration_fit_link (SimCalibration *c, SimLinkKind kind, const SimNcclResult *measured,
                                   GError **error);

typedef struct {
  double scale;      /* measured / NCCL-tuned per-hop latency; 0: none from 0.01 to 100 fits */
  int rows;          /* the latency-bound sizes (up to 64 KiB) fitted on */
  double before;     /* median simulated / measured time as tuned */
  double after;      /* and with the fitted scale */
} SimLatencyFit;

/* The per-hop collective latency of link kind `kind` that makes the median
 * of simulated / measured time over measured's all_reduce rows up to 64 KiB
 * 1 on topo (measured->ranks GPUs).  topo is not written: each try runs on
 * a network of its own.  FALSE with SIM_ERROR_USAGE (no such rows) or the
 * collective's errors; any thread. */
gboolean sim_calibration_fit_latency (const SimTopology *topo, const SimNcclResult *measured,
                                      SimLinkKind kind, SimLatencyFit *fit, GError **error);

G_END_DECLS
