/* cli.h — the subcommands of the sim command line (cli/cmd-*.c) and what
 * they share (cli/cmd-common.c).  Files under cli/ parse arguments, call
 * the library (sim/, viz/) and print; they compute nothing a test would
 * want to check.  Each subcommand returns the exit status: 0 yes (the plan
 * fits, a layout fits, within --max-error), 1 no (out of memory, over
 * --max-error), or on error it sets error and returns 2. */
#pragma once

#include <glib.h>

#include "sim-io.h"
#include "sim-plan.h"
#include "sim-run.h"
#include "sim-table.h"
#include "sim-topology.h"

G_BEGIN_DECLS

int sim_cmd_run (int argc, char **argv, GError **error);
int sim_cmd_collective (int argc, char **argv, GError **error);
int sim_cmd_validate (int argc, char **argv, GError **error);
int sim_cmd_compare (int argc, char **argv, GError **error);
int sim_cmd_sweep (int argc, char **argv, GError **error);
int sim_cmd_shapes (int argc, char **argv, GError **error);
int sim_cmd_kernels (int argc, char **argv, GError **error);
int sim_cmd_calibrate (int argc, char **argv, GError **error);
int sim_cmd_list (int argc, char **argv, GError **error);
int sim_cmd_topology (int argc, char **argv, GError **error);

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
 * (sim-plan.h) is set on req; command NULL: the plain sim command */
gboolean sim_cli_parse_plan (int argc, char **argv, int first, const SimCliOption *options,
                             const char *command, SimPlanRequest *req, GError **error);
/* a topology by name or path, resized to nodes (> 0) or to gpus (> 0: a
 * multiple of a node, or 1, 2, 4 or 8 GPUs of one node) and, when
 * calibration is not NULL, with that calibration applied.  The file's
 * warnings (sim-topology.h) go to stderr, "sim: warning: ...", once per
 * process. */
SimTopology *sim_cli_load_topology (const char *name, int nodes, int gpus, const char *calibration,
                                    GError **error);
/* the --nodes/--gpus that would give want GPUs of topo's kind, as a
 * phrase, or NULL when none would (or want is what topo has); g_free() */
char *sim_cli_fit_hint (const SimTopology *topo, int want);

/* what fits a terminal: tables (sim-table.h) and help at most
 * SIM_CLI_COLUMNS wide unless --wide; option lists keep their flags in a
 * column this wide */
#define SIM_CLI_COLUMNS SIM_TABLE_COLUMNS
#define SIM_CLI_FLAG_COLUMN 37
/* text appended as words from column col, wrapped at width with the
 * continuation lines indented; a number stays on the line of its unit */
void sim_cli_append_wrapped (GString *out, const char *text, int col, int indent, int width);
/* an option list ("  --flag VALUE<pad> description" lines, as
 * sim_plan_help) with the descriptions wrapped under their column (as is
 * when wide) and bare N placeholders named; new text, g_free() */
char *sim_cli_format_options (const char *table, gboolean wide);

/* --json FILE|-: the text to FILE, whole or not at all (error prefixed
 * "--json: "), or to stdout for "-", which ends the command (*done) */
gboolean sim_cli_write_json (const char *json, const char *text, gboolean *done, GError **error);
/* whether --json FILE|- could be written (sim_output_check), before any
 * work is done; the error is prefixed "--json: " */
gboolean sim_cli_check_json (const char *json, GError **error);

/* whether --html FILE could be written: a name ending in .html
 * (viz_check_html_path) and sim_output_check, before any work is done;
 * the error is prefixed "--html: " */
gboolean sim_cli_check_html (const char *path, GError **error);
gboolean sim_cli_int (const char *flag, const char *value, int min, int max, int *out,
                      GError **error);

/* --train-tokens COUNT and --gpu-hour-price PRICE (either may be NULL):
 * *tokens and *price, 0 when not given; FALSE with SIM_ERROR_USAGE or
 * SIM_ERROR_UNIT */
gboolean sim_cli_parse_training (const char *tokens_s, const char *price_s, double *tokens, double *price,
                                 GError **error);

G_END_DECLS
