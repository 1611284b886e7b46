/* sim-config.h — a training framework's own config read into a plan:
 * torchtitan's TOML (its train_configs), NeMo's YAML (megatron_gpt
 * config: trainer: and model:) and Megatron-Bridge's YAML (a ConfigContainer
 * written out: model:, train:, dataset:, ddp:, comm_overlap:,
 * mixed_precision:).
 *
 * Each key the config sets is either mapped to sim's plan options (the
 * same values the equivalent flags give), or listed: ignored (it does not
 * change the step: logging, checkpoints, the learning rate), or not
 * modelled (it would, and sim has no option for it).  Nothing is dropped
 * without a line.  Flags given on the command line win over the config. */
#pragma once

#include <glib.h>

#include "sim-plan.h"

G_BEGIN_DECLS

typedef struct {
  char *path;
  char *format;        /* "torchtitan TOML", "NeMo YAML" or "Megatron-Bridge YAML" */
  char *model;         /* a shipped model's name the config names (torchtitan's flavor), or NULL */
  GPtrArray *items;    /* char*: "key=value" plan items, in the config's order */
  GPtrArray *ignored;  /* char*: "section.key" read and ignored (no effect on the step) */
  GPtrArray *unmapped; /* char*: "section.key = value: why" that sim does not model */
  /* torchtitan: the data-parallel degree is "the rest" (-1) and the
   * global batch is the local batch times it: known once the GPUs are */
  int dp_rest;          /* 1: dp = GPUs / (tp x cp x pp) x replicate ... */
  guint64 local_batch;  /* > 0: global batch = local batch x dp (no accumulation) */
} SimConfig;

/* Read the config at path (a TOML file by its .toml name, else YAML),
 * at most 1 MiB.  Returns a new SimConfig (sim_config_free), or NULL with
 * SIM_ERROR_IO or SIM_ERROR_USAGE "PATH:LINE: expected ..." (one line) for
 * what the reader does not take (a TOML or YAML construct beyond the
 * configs' own: multi-line strings, anchors, flow mappings) or a value of
 * the wrong kind; any thread. */
SimConfig *sim_config_load (const char *path, GError **error);
void sim_config_free (SimConfig *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimConfig, sim_config_free)

/* Set on req every item of c that req was not given (sim_plan_request_given),
 * with the data-parallel degree and global batch that follow from gpus
 * (the cluster's GPU count) where the config leaves them to the job.
 * FALSE with SIM_ERROR_USAGE "PATH: KEY: ..." when an item is not a value
 * sim takes. */
gboolean sim_config_apply (const SimConfig *c, SimPlanRequest *req, int gpus, GError **error);

/* the lines the report lists under Defaults for c: what it set (with the
 * data-parallel degree and global batch plan, resolved, took from it), and
 * what it read but ignored or does not model (a new array of char*) */
GPtrArray *sim_config_notes (const SimConfig *c, const SimPlan *plan);

G_END_DECLS
