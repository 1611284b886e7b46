/* cmd-common.c — argument scanning shared by the subcommands */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sim-error.h"
#include "sim-io.h"
#include "sim-plan.h"

gboolean
sim_cli_parse_plan (int argc, char **argv, int first, const SimCliOption *options,
                    const char *command, SimPlan *plan, GError **error)
{
  for (int i = first; i < argc; i++) {
    const char *arg = argv[i];
    const char *eq = strchr (arg, '=');
    g_autofree char *key = NULL;
    const SimCliOption *o = NULL;

    if (!g_str_has_prefix (arg, "--") || arg[2] == '\0') {
      if (command == NULL)
        g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "unexpected argument '%s'; see sim --help", arg);
      else
        g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s: unexpected argument '%s'; see sim %s --help",
                     command, arg, command);
      return FALSE;
    }
    key = eq != NULL ? g_strndup (arg + 2, (gsize) (eq - arg - 2)) : g_strdup (arg + 2);
    for (const SimCliOption *p = options; p->name != NULL; p++)
      if (g_str_equal (p->name, key))
        o = p;
    if (o == NULL && plan != NULL) {
      /* a plan option (sim-plan.h), with its value when it takes one */
      const char *value = eq != NULL ? eq + 1 : NULL;
      gboolean is_plan = FALSE;
      if (eq == NULL && sim_plan_key_takes_value (key)) {
        if (i + 1 >= argc) {
          g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: expected a value after it", key);
          return FALSE;
        }
        value = argv[++i];
      }
      if (sim_plan_set (plan, key, value, &is_plan, error))
        continue;
      if (is_plan)
        return FALSE;
      g_clear_error (error);
    }
    if (o == NULL) {
      if (command == NULL)
        g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "unknown option '--%s'; see sim --help", key);
      else
        g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s: unknown option '--%s'; see sim %s --help",
                     command, key, command);
      return FALSE;
    }
    if (!o->takes_value) {
      if (eq != NULL) {
        g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: expected no value", key);
        return FALSE;
      }
      *o->flag = TRUE;
      continue;
    }
    if (eq == NULL && i + 1 >= argc) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: expected a value after it", key);
      return FALSE;
    }
    if (o->list != NULL) {
      g_ptr_array_add (o->list, g_strdup (eq != NULL ? eq + 1 : argv[++i]));
      continue;
    }
    g_free (*o->value);
    *o->value = g_strdup (eq != NULL ? eq + 1 : argv[++i]);
  }
  return TRUE;
}

gboolean
sim_cli_parse (int argc, char **argv, int first, const SimCliOption *options, const char *command,
               GError **error)
{
  return sim_cli_parse_plan (argc, argv, first, options, command, NULL, error);
}

gboolean
sim_cli_check_json (const char *json, GError **error)
{
  if (g_str_equal (json, "-") || sim_output_check (json, FALSE, error))
    return TRUE;
  g_prefix_error (error, "--json: ");
  return FALSE;
}

gboolean
sim_cli_write_json (const char *json, const char *text, gboolean *done, GError **error)
{
  *done = g_str_equal (json, "-");
  if (*done) {
    fputs (text, stdout);
    return TRUE;
  }
  if (!sim_write_file (json, text, error)) {
    g_prefix_error (error, "--json: ");
    return FALSE;
  }
  return TRUE;
}

gboolean
sim_cli_int (const char *flag, const char *value, int min, int max, int *out, GError **error)
{
  guint64 v = 0;
  if (value == NULL || !g_ascii_string_to_unsigned (value, 10, (guint64) min, (guint64) max, &v, NULL)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: expected a whole number from %d to %d, got '%s'",
                 flag, min, max, value != NULL ? value : "nothing");
    return FALSE;
  }
  *out = (int) v;
  return TRUE;
}

#include "sim-calibration.h"
#include "sim-paths.h"

SimTopology *
sim_cli_load_topology (const char *name, int nodes, const char *calibration, GError **error)
{
  g_autofree char *path = sim_paths_resolve (name, "topologies", error);
  g_autoptr (SimTopology) t = NULL;
  if (path == NULL || (t = sim_calibration_load_topology (path, nodes, calibration, error)) == NULL)
    return NULL;
  /* every subcommand models one GPU type per cluster (sim_plan_resolve
   * checks it too, for library users) */
  if (!sim_topology_check_one_gpu_type (t, error))
    return NULL;
  return g_steal_pointer (&t);
}

/* ---- tables shared by compare and sweep ---- */

#include <math.h>

#include "sim-format.h"
#include "sim-json.h"
#include "sim-report.h"
#include "sim-run.h"

/* what every table's units and columns mean, under it */
void
sim_cli_print_legend (GString *out, gboolean scale)
{
  g_string_append (out, "peak GB: per GPU, on the busiest pipeline stage (GB = 10^9 bytes); TP s, CP s, PP s,\n"
                        "DP s: communication exposed, not hidden behind compute (seconds per step); limit: what\n"
                        "bounds the step (memory when it does not fit, else compute or communication)\n");
  if (scale)
    g_string_append (out, "E: scaling efficiency, tokens/s per GPU against the smallest layout that fits\n");
}

void
sim_cli_print_runs (GString *out, GPtrArray *runs)
{
  gsize w = 4;
  guint64 usable = 0;
  gboolean same_usable = TRUE;
  for (guint i = 0; i < runs->len; i++) {
    const SimRun *r = g_ptr_array_index (runs, i);
    w = MAX (w, strlen (r->label));
    if (i > 0 && r->memory->usable_bytes != usable)
      same_usable = FALSE;
    usable = r->memory->usable_bytes;
  }
  w = MIN (w, 72);
  g_string_append_printf (out, "%4s  %-*s  %-5s %7s %8s %9s %6s %6s %6s %6s %6s %6s  %s\n", "rank", (int) w, "plan",
                          "fits", "peak GB", "step s", "tokens/s", "MFU", "bubble", "TP s", "CP s", "PP s", "DP s",
                          "limit");
  for (guint i = 0; i < runs->len; i++) {
    const SimRun *r = g_ptr_array_index (runs, i);
    const SimIteration *it = r->time;
    g_autofree char *fits = r->memory->tight  ? g_strdup ("tight")
                            : r->memory->fits ? g_strdup ("yes")
                                            : g_strdup_printf ("OOM %s", sim_oom_case_name (r->memory->oom_case));
    g_autofree char *rank = r->memory->fits ? g_strdup_printf ("%u", i + 1) : g_strdup ("-");
    g_autofree char *tok = it != NULL ? sim_format_count ((guint64) llround (it->tokens_per_s)) : g_strdup ("-");
    /* no MFU for a plan that cannot run, as in the report */
    g_autofree char *mfu = it != NULL && r->memory->fits ? g_strdup_printf ("%.1f%%", 100 * it->mfu) : g_strdup ("-");
    g_string_append_printf (out, "%4s  %-*.*s  %-5s %7.1f ", rank, (int) w, (int) w, r->label, fits,
                            r->memory->peak_bytes / 1e9);
    if (it != NULL)
      g_string_append_printf (out, "%8.3f %9s %6s %5.1f%% %6.3f %6.3f %6.3f %6.3f ", it->step_s, tok, mfu,
                              100 * it->bubble_fraction, it->exposed_tp_s, it->exposed_cp_s, it->exposed_pp_s,
                              it->exposed_dp_s);
    else
      g_string_append_printf (out, "%8s %9s %6s %6s %6s %6s %6s %6s ", "-", "-", "-", "-", "-", "-", "-", "-");
    g_string_append_printf (out, " %s%s\n", sim_run_wall (r), r->extrapolated ? " (screened)" : "");
  }
  g_string_append_c (out, '\n');
  if (same_usable && runs->len > 0) {
    g_autofree char *gb = sim_format_gb (usable);
    g_autofree char *gib = sim_format_gib (usable);
    g_string_append_printf (out, "usable memory per GPU: %s (%s)\n", gb, gib);
  }
  sim_cli_print_legend (out, FALSE);
}
