/* sim-commands.h — the subcommands of the sim command line.
 * Each returns the exit status; on error it sets error and returns 2. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

int sim_cmd_collective (int argc, char **argv, GError **error);
int sim_cmd_validate (int argc, char **argv, GError **error);

/* shared by the subcommands: "--key value" / "--key=value" scanning */
typedef struct {
  const char *name;
  gboolean takes_value;
  char **value;        /* for options with a value */
  gboolean *flag;      /* for flags */
} SimCliOption;

gboolean sim_cli_parse (int argc, char **argv, int first, const SimCliOption *options,
                        const char *command, GError **error);
gboolean sim_cli_int (const char *flag, const char *value, int min, int max, int *out,
                      GError **error);

G_END_DECLS
