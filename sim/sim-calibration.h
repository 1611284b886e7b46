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

SimCalibration *sim_calibration_load (const char *path, GError **error);
void sim_calibration_free (SimCalibration *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimCalibration, sim_calibration_free)

void sim_calibration_apply (const SimCalibration *c, SimTopology *topo);

/* the XML text of a calibration */
char *sim_calibration_to_xml (const SimCalibration *c, const char *date, const char *source);

G_END_DECLS
