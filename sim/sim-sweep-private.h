/* sim-sweep-private.h — what the parts of sim-sweep share (sim-sweep.c the
 * enumeration, the runs and the ranking; -shards.c the JSON file of the
 * rows, read back and merged).  Internal to libsim: not installed. */
#pragma once

#include "sim-sweep.h"

G_BEGIN_DECLS

/* the sim-sweep/3 document of `rows` (SimSweepRow *) of a sweep of
 * `layouts` layouts of `model` on `topo`, asked with `options` ("k=v,..."),
 * shard `shard` of `shards`; a new string */
char *sim_sweep_write_json (GPtrArray *rows, const char *topo, const char *model, const char *options,
                            guint layouts, int shard, int shards);

G_END_DECLS
