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
 *
 * Tools write the bands, not people: they live in a band file,
 * topologies/bands.xml (schema topologies/bands.rng, format in
 * topologies/README.md), as named sets of one <band> per kind.  A cluster
 * file's <efficiency bands="NAME"> names its set, the topology's own name
 * where it gives none.  The set is looked up in the bands.xml beside the
 * cluster file, then in the shipped topologies folder's (sim-paths.h); a
 * cluster file that no band file names keeps the band attributes its
 * <efficiency> may carry (NAME-error and so on, the form before the band
 * file: sim-topology.c). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  double error;    /* mean |step-time error|, a fraction; 0: no band */
  double bias;     /* mean signed error (negative: sim optimistic) */
  guint64 rows;    /* the runs */
  guint64 within;  /* the runs within 15 % */
  gboolean has_bias; /* bias is stated: always for the kinds that state
                      * within (sim_band_kind_has_bias), where given for
                      * fitted and heldout */
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

typedef enum {
  SIM_BAND_FITTED,
  SIM_BAND_HELDOUT,
  SIM_BAND_MOE,
  SIM_BAND_FSDP,
  SIM_BAND_TORCHTITAN,
  SIM_BAND_KINDS
} SimBandKind;

/* the band file's name, in a cluster file's folder and the shipped one */
#define SIM_BANDS_FILE "bands.xml"

/* the kind's name in the band file ("fitted", "heldout", "moe", "fsdp",
 * "torchtitan"): static; any thread */
const char *sim_band_kind_name (SimBandKind kind);
/* TRUE for the kinds that state a bias and the runs within 15 % (moe,
 * fsdp, torchtitan); any thread */
gboolean sim_band_kind_has_bias (SimBandKind kind);
/* the band of that kind in bands (owned by bands); any thread */
SimBand *sim_bands_get (SimBands *bands, SimBandKind kind);

/* Read the band file at path, every set checked, and the set called name:
 * TRUE with *found and *out set (all zero when not found), or FALSE with
 * SIM_ERROR_IO (unreadable, not a regular file) or SIM_ERROR_XML (not
 * well-formed, a value out of range, a set named twice, a kind twice in a
 * set, anything bands.rng refuses), "file:line: ... expected ...".  Any
 * thread (see sim-xml.h). */
gboolean sim_bands_read (const char *path, const char *name, SimBands *out, gboolean *found,
                         GError **error);
/* The set called name for the cluster file at cluster_path: the bands.xml
 * beside it, where there is one, then the shipped one; the first that holds
 * a set of that name gives it.  TRUE with *found and *out set (all zero,
 * *found FALSE, when neither file names it or neither exists), or FALSE
 * with the error of a band file that does not read (sim_bands_read).  Any
 * thread. */
gboolean sim_bands_lookup (const char *cluster_path, const char *name, SimBands *out, gboolean *found,
                           GError **error);

G_END_DECLS
