/* sim-calibration.h — measured rates replacing a GPU's data-sheet figures.
 *
 * A calibration file (sim/calibration.rng; written by `sim calibrate`) holds
 * what the microbenchmarks measured on one GPU: HBM bandwidth, GEMM rates by
 * shape, and the bandwidth transfers reached per link kind.  Applied to a
 * topology it replaces the GPU types' HBM bandwidth and GEMM table and caps
 * the links of each kind at the achieved bandwidth. */
#pragma once

#include <glib.h>

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
 * per cluster) and to every link of a calibrated kind: call it while the
 * topology is being loaded, before anything reads it (sim_topology_load
 * does for <gpu-type calibration>).  Never fails; not thread-safe on a
 * shared topology. */
void sim_calibration_apply (const SimCalibration *c, SimTopology *topo);

/* the XML text of a calibration (caller g_free()s); never fails; any thread */
char *sim_calibration_to_xml (const SimCalibration *c, const char *date, const char *source);

G_END_DECLS
