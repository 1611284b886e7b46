/* main.c — the sim command line: a table of subcommands (cli.h).
 *
 * Exit status as grep and diff: 0 the answer is yes (the plan fits; for
 * compare and sweep, at least one layout fits), 1 it is no (out of memory;
 * validate: over --max-error), 2 bad input or an error.
 * stdout carries results only; errors are one line on stderr, "sim: ...".
 * SIGINT, SIGTERM and SIGHUP remove the temporary files
 * of outputs being written (sim-io.h) before the process dies of the
 * signal. */
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>

#include "cli.h"
#include "sim-io.h"
#include "sim-paths.h"

static const struct {
  const char *name;
  int (*run) (int argc, char **argv, GError **error);
} commands[] = {
  { "collective", sim_cmd_collective },
  { "validate", sim_cmd_validate },
  { "compare", sim_cmd_compare },
  { "sweep", sim_cmd_sweep },
  { "shapes", sim_cmd_shapes },
  { "kernels", sim_cmd_kernels },
  { "calibrate", sim_cmd_calibrate },
  { "list", sim_cmd_list },
  { "topology", sim_cmd_topology },
};

/* async-signal-safe only: unlink the temporary files, then die of the same
 * signal (SA_RESETHAND restored the default action; the signal is delivered
 * when the handler returns) */
static void
on_signal (int sig)
{
  int saved = errno;
  sim_output_remove_temps ();
  raise (sig);
  errno = saved;
}

static void
install_handlers (void)
{
  const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
  for (guint i = 0; i < G_N_ELEMENTS (sigs); i++) {
    struct sigaction sa = { 0 }, old = { 0 };
    /* a signal the parent ignores (a job started with nohup or in the
     * background of a script) stays ignored */
    if (sigaction (sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
      continue;
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset (&sa.sa_mask);
    sigaction (sigs[i], &sa, NULL);
  }
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  int (*run) (int, char **, GError **) = sim_cmd_run;
  int rc;

  setlocale (LC_ALL, "C");
  install_handlers ();
  for (guint i = 0; argc > 1 && i < G_N_ELEMENTS (commands); i++)
    if (g_str_equal (argv[1], commands[i].name))
      run = commands[i].run;
  /* a word where a subcommand goes that is close to one: a misspelling */
  if (run == sim_cmd_run && argc > 1 && argv[1][0] != '-') {
    const char *names[G_N_ELEMENTS (commands)];
    const char *near = NULL;
    for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
      names[i] = commands[i].name;
    near = sim_paths_closest (argv[1], names, G_N_ELEMENTS (commands));
    if (near != NULL) {
      fprintf (stderr, "sim: unknown command '%s'; did you mean sim %s? see sim --help\n", argv[1], near);
      return 2;
    }
  }
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
