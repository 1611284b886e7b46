/* main.c — the sim command line: a table of subcommands (cli.h).
 *
 * stdout carries results only; errors are one line on stderr, "sim: ...",
 * and exit status 2. */
#include <errno.h>
#include <locale.h>
#include <stdio.h>

#include "cli.h"

static const struct {
  const char *name;
  int (*run) (int argc, char **argv, GError **error);
} commands[] = {
  { "collective", sim_cmd_collective },
  { "validate", sim_cmd_validate },
  { "compare", sim_cmd_compare },
  { "sweep", sim_cmd_sweep },
  { "shapes", sim_cmd_shapes },
  { "calibrate", sim_cmd_calibrate },
};

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  int (*run) (int, char **, GError **) = sim_cmd_run;
  int rc;

  setlocale (LC_ALL, "C");
  for (guint i = 0; argc > 1 && i < G_N_ELEMENTS (commands); i++)
    if (g_str_equal (argv[1], commands[i].name))
      run = commands[i].run;
  rc = run (argc, argv, &error);
  if (error != NULL) {
    fprintf (stderr, "sim: %s\n", error->message);
    return 2;
  }
  if (fflush (stdout) != 0 || ferror (stdout)) {
    fprintf (stderr, "sim: cannot write to standard output: %s\n", g_strerror (errno));
    return 2;
  }
  return rc;
}
