/* sim-bands.h — error bands: how a GPU generation's efficiency constants
 * predicted sets of published runs.
 *
 * A band is one set of published runs predicted with the constants of a
 * cluster file's <efficiency> (sim-topology.h SimEfficiency), none of
 * which set a constant: the mean |step-time error|, the mean signed error,
 * the runs and the runs within 15 %.  The report prints them under the step
 * time (sim-report.c) and sim_run_error_band picks the one a plan's figures
 * carry.  Each kind is a set of runs and the tool that predicts them:
 *
 *   fitted      the runs the constants were fitted on, each predicted with
 *               its model family left out (tools/fit-efficiency.py --lofo);
 *               on Blackwell, that generation's runs, which no fit used
 *               (tools/blackwell-check.py)
 *   heldout     later runs that no fit used (tools/heldout-check.py)
 *   moe         mixture-of-experts runs (tools/moe-check.py)
 *   fsdp        PyTorch FSDP runs, the band of --framework fsdp
 *               (tools/fsdp-check.py)
 *   torchtitan  torchtitan's runs, the band of --framework torchtitan
 *               (tools/pytorch-native-check.py)
 *
 * fitted and heldout state no bias or runs within 15 % (0 here).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  double error;    /* mean |step-time error|, a fraction; 0: no band */
  double bias;     /* mean signed error (negative: sim optimistic) */
  guint64 rows;    /* the runs */
  guint64 within;  /* the runs within 15 % */
} SimBand;

/* the bands of one GPU generation's constants, one per kind; a kind the
 * cluster states none of is all zero */
typedef struct {
  SimBand fitted;
  SimBand heldout;
  SimBand moe;
  SimBand fsdp;
  SimBand torchtitan;
} SimBands;

G_END_DECLS
