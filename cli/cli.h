/* cli.h — the subcommands of the sim command line (cli/cmd-*.c) and what
 * they share (cli/cmd-common.c).  Files under cli/ parse arguments, call
 * the library (sim/, viz/) and print; they compute nothing a test would
 * want to check.  Each subcommand returns the exit status: 0 yes (the plan
 * fits, a layout fits, within --max-error), 1 no (out of memory, over
 * --max-error), or on error it sets error and returns 2. */
#pragma once

#include <glib.h>

#include "sim-plan.h"
#include "sim-run.h"
#include "sim-topology.h"

G_BEGIN_DECLS

int sim_cmd_run (int argc, char **argv, GError **error);
int sim_cmd_collective (int argc, char **argv, GError **error);
int sim_cmd_validate (int argc, char **argv, GError **error);
int sim_cmd_compare (int argc, char **argv, GError **error);
int sim_cmd_sweep (int argc, char **argv, GError **error);
int sim_cmd_shapes (int argc, char **argv, GError **error);
int sim_cmd_calibrate (int argc, char **argv, GError **error);

/* shared by the subcommands: "--key value" / "--key=value" scanning */
typedef struct {
  const char *name;
  gboolean takes_value;
  char **value;        /* for options with a value */
  gboolean *flag;      /* for flags */
  GPtrArray *list;     /* for repeatable options: every value, in order */
} SimCliOption;

gboolean sim_cli_parse (int argc, char **argv, int first, const SimCliOption *options,
                        const char *command, GError **error);
/* the same, and any option that is not in options but is a plan option
 * (sim-plan.h) is set on plan; command NULL: the plain sim command */
gboolean sim_cli_parse_plan (int argc, char **argv, int first, const SimCliOption *options,
                             const char *command, SimPlan *plan, GError **error);
/* a topology by name or path, resized to nodes (> 0) and, when calibration
 * is not NULL, with that calibration applied */
SimTopology *sim_cli_load_topology (const char *name, int nodes, const char *calibration, GError **error);

/* --json FILE|-: the text to FILE, whole or not at all (error prefixed
 * "--json: "), or to stdout for "-", which ends the command (*done) */
gboolean sim_cli_write_json (const char *json, const char *text, gboolean *done, GError **error);
/* whether --json FILE|- could be written (sim_output_check), before any
 * work is done; the error is prefixed "--json: " */
gboolean sim_cli_check_json (const char *json, GError **error);

gboolean sim_cli_int (const char *flag, const char *value, int min, int max, int *out,
                      GError **error);

/* the comparison table of sim compare: runs in the order given
 * (SimRun*), then the usable memory and the legend */
void sim_cli_print_runs (GString *out, GPtrArray *runs);
/* what the columns of the compare and sweep tables mean (E with scale) */
void sim_cli_print_legend (GString *out, gboolean scale);

G_END_DECLS
