/* cmd-common.c — argument scanning shared by the subcommands */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sim-format.h"
#include "sim-error.h"
#include "sim-io.h"
#include "sim-paths.h"
#include "sim-plan.h"
#include "sim-units.h"
#include "viz-html.h"

/* the plan options' names, read off sim_plan_help ("  --[no-]x ..." or
 * "  --x VALUE ..."), with their "no-" forms */
static void
add_plan_names (GPtrArray *names)
{
  g_autofree char *help = sim_plan_help ();
  g_auto (GStrv) lines = g_strsplit (help, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++) {
    const char *l = g_strchug (lines[i]);
    gsize n = 0;
    if (!g_str_has_prefix (l, "--"))
      continue;
    l += 2;
    if (g_str_has_prefix (l, "[no-]"))
      l += 5;
    while (l[n] != '\0' && l[n] != ' ')
      n++;
    g_ptr_array_add (names, g_strndup (l, n));
  }
}

/* "unknown option '--tpp'; did you mean --tp? see sim --help" */
static void
unknown_option (const char *key, const SimCliOption *options, gboolean plan, const char *command,
                GError **error)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *hint = NULL;
  const char *near = NULL;
  for (const SimCliOption *p = options; p->name != NULL; p++)
    g_ptr_array_add (names, g_strdup (p->name));
  if (plan)
    add_plan_names (names);
  near = sim_paths_closest (key, (const char *const *) names->pdata, names->len);
  hint = near != NULL ? g_strdup_printf ("did you mean --%s? ", near) : g_strdup ("");
  if (command == NULL)
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "unknown option '--%s'; %ssee sim --help", key, hint);
  else
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s: unknown option '--%s'; %ssee sim %s --help", command,
                 key, hint, command);
}

/* --racks was given (sim_cli_parse_plan): the cluster file must be of racks */
static gboolean racks_given;

gboolean
sim_cli_parse_plan (int argc, char **argv, int first, const SimCliOption *options,
                    const char *command, SimPlanRequest *req, GError **error)
{
  for (int i = first; i < argc; i++) {
    /* -h, the one short option, as everywhere else */
    const char *arg = g_str_equal (argv[i], "-h") ? "--help" : argv[i];
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
    /* --racks N counts the nodes of a cluster file whose node is a rack
     * (gb200-nvl72.xml): --nodes N under the name the rack file's reader
     * thinks in; sim_cli_load_topology refuses it for a file of servers */
    if (o == NULL && g_str_equal (key, "racks"))
      for (const SimCliOption *p = options; p->name != NULL; p++)
        if (g_str_equal (p->name, "nodes"))
          o = p;
    if (o != NULL && o->value != NULL && *o->value != NULL && g_str_equal (o->name, "nodes") &&
        (racks_given || g_str_equal (key, "racks"))) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--racks and --nodes count the same racks; give one of them");
      return FALSE;
    }
    if (o != NULL && g_str_equal (key, "racks"))
      racks_given = TRUE;
    if (o == NULL && req != NULL) {
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
      /* Megatron-LM's --recompute-modules and --cuda-graph-scope take
       * their names as separate words (nargs): the words up to the next
       * flag, joined */
      if (eq == NULL && (g_str_equal (key, "recompute-modules") || g_str_equal (key, "cuda-graph-scope")) &&
          i + 1 < argc &&
          !g_str_has_prefix (argv[i + 1], "-")) {
        g_autoptr (GString) joined = g_string_new (value);
        while (i + 1 < argc && !g_str_has_prefix (argv[i + 1], "-"))
          g_string_append_printf (joined, ",%s", argv[++i]);
        if (sim_plan_request_set (req, key, joined->str, &is_plan, error))
          continue;
        return FALSE;
      }
      if (sim_plan_request_set (req, key, value, &is_plan, error))
        continue;
      if (is_plan)
        return FALSE;
      g_clear_error (error);
    }
    if (o == NULL) {
      unknown_option (key, options, req != NULL, command, error);
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
sim_cli_check_html (const char *path, GError **error)
{
  if (viz_check_html_path (path, error) && sim_output_check (path, FALSE, error))
    return TRUE;
  g_prefix_error (error, "--html: ");
  return FALSE;
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

SimTopology *
sim_cli_load_topology (const char *name, int nodes, int gpus, const char *calibration, GError **error)
{
  static gboolean warned = FALSE;
  g_autoptr (SimTopology) t = sim_calibration_load_cluster (name, nodes, gpus, calibration, error);
  if (t == NULL)
    return NULL;
  /* a rack holds one NVLink domain of 36 or 72 GPUs (GB200 NVL36/NVL72);
   * a node of 8 is a server */
  if (racks_given && t->file_gpus_per_node < 36) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--racks: a node of %s is a server of %d GPUs, not a rack; give --nodes", name,
                 t->file_gpus_per_node);
    return NULL;
  }
  /* doubts, not errors: stderr, once per command (a sweep loads its file
   * once per cluster size) */
  if (!warned && t->warnings != NULL) {
    for (guint i = 0; i < t->warnings->len; i++)
      fprintf (stderr, "sim: warning: %s\n", (const char *) g_ptr_array_index (t->warnings, i));
    warned = TRUE;
  }
  return g_steal_pointer (&t);
}

char *
sim_cli_fit_hint (const SimTopology *topo, int want)
{
  int gpn = topo->gpus_per_node > 0 ? topo->file_gpus_per_node : 0;
  if (want <= 0 || gpn <= 0 || want == sim_topology_n_gpus (topo))
    return NULL;
  if (want % gpn == 0)
    return g_strdup_printf ("--nodes %d (or --gpus %d) runs it on %d GPUs of %s", want / gpn, want, want,
                            topo->name);
  if (want < gpn && (want == 1 || want == 2 || want == 4 || want == 8))
    return g_strdup_printf ("--gpus %d runs it on %d GPU%s of one %s node", want, want, want == 1 ? "" : "s",
                            topo->name);
  return NULL;
}

/* ---- text that fits a terminal ---- */

void
sim_cli_append_wrapped (GString *out, const char *text, int col, int indent, int width)
{
  sim_format_append_wrapped (out, text, col, indent, width);
}

/* what goes after a plan flag whose sim_plan_help placeholder is a bare N */
static const struct {
  const char *flag, *placeholder;
} placeholders[] = {
  { "--order", "ORDER" },
  { "--lora-targets", "LIST" },
  { "--context-reserve", "SIZE" },
  { "--fragmentation", "FRACTION" },
  { "--recompute-modules", "NAMES" },
  { "--cuda-graph-scope", "NAMES" },
  { "--pipeline-model-parallel-layout", "LAYOUT" },
};

char *
sim_cli_format_options (const char *table, gboolean wide)
{
  g_auto (GStrv) lines = g_strsplit (table, "\n", -1);
  GString *out = g_string_new (NULL);
  for (guint i = 0; lines[i] != NULL; i++) {
    const char *l = lines[i];
    g_autofree char *flag = NULL;
    const char *desc = NULL;
    if (lines[i + 1] == NULL && *l == '\0')
      break;
    if (!g_str_has_prefix (l, "  --") || strlen (l) <= SIM_CLI_FLAG_COLUMN) {
      g_string_append_printf (out, "%s\n", l);
      continue;
    }
    /* "  FLAG<padding> DESC", or a flag longer than its column and one space */
    if (l[SIM_CLI_FLAG_COLUMN - 1] == ' ' && l[SIM_CLI_FLAG_COLUMN - 2] == ' ') {
      flag = g_strstrip (g_strndup (l, SIM_CLI_FLAG_COLUMN));
      desc = l + SIM_CLI_FLAG_COLUMN;
    } else {
      const char *sp = strchr (l + 2, ' ');
      if (sp != NULL && !g_str_has_prefix (l + 2, "--[no-]"))
        sp = strchr (sp + 1, ' ');
      if (sp == NULL) {
        g_string_append_printf (out, "%s\n", l);
        continue;
      }
      flag = g_strndup (l + 2, (gsize) (sp - l - 2));
      desc = sp + 1;
    }
    for (guint k = 0; k < G_N_ELEMENTS (placeholders); k++) {
      g_autofree char *bare = g_strconcat (placeholders[k].flag, " N", NULL);
      if (g_str_equal (flag, bare)) {
        g_free (flag);
        flag = g_strconcat (placeholders[k].flag, " ", placeholders[k].placeholder, NULL);
      }
    }
    if (wide) {
      g_string_append_printf (out, "  %-*s %s\n", SIM_CLI_FLAG_COLUMN - 3, flag, desc);
      continue;
    }
    if ((int) strlen (flag) > SIM_CLI_FLAG_COLUMN - 3) {
      /* a flag wider than its column: its values wrapped at the '|', the
       * description under the column */
      g_auto (GStrv) alts = g_strsplit (flag, "|", -1);
      int col = 2;
      g_string_append (out, "  ");
      for (guint k = 0; alts[k] != NULL; k++) {
        int len = (int) strlen (alts[k]) + (alts[k + 1] != NULL);
        if (k > 0 && col + len > SIM_CLI_COLUMNS) {
          g_string_append (out, "\n      ");
          col = 6;
        }
        g_string_append_printf (out, "%s%s", alts[k], alts[k + 1] != NULL ? "|" : "");
        col += len;
      }
      g_string_append_printf (out, "\n%*s", SIM_CLI_FLAG_COLUMN, "");
    } else {
      g_string_append_printf (out, "  %-*s ", SIM_CLI_FLAG_COLUMN - 3, flag);
    }
    sim_cli_append_wrapped (out, desc, SIM_CLI_FLAG_COLUMN, SIM_CLI_FLAG_COLUMN, SIM_CLI_COLUMNS);
    g_string_append_c (out, '\n');
  }
  return g_string_free (out, FALSE);
}

gboolean
sim_cli_parse_training (const char *tokens_s, const char *price_s, double *tokens, double *price,
                        GError **error)
{
  *tokens = 0, *price = 0;
  if (tokens_s != NULL && !sim_units_parse_count (tokens_s, tokens, error)) {
    g_prefix_error (error, "--train-tokens: ");
    return FALSE;
  }
  if (price_s != NULL) {
    /* a price per GPU-hour in any currency, written as a plain number */
    char *end = NULL;
    *price = g_ascii_strtod (price_s[0] == '$' ? price_s + 1 : price_s, &end);
    if (end == NULL || *end != '\0' || !(*price > 0) || *price > 1e6) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                   "--gpu-hour-price: expected a price per GPU-hour such as 2.50, got '%.40s'", price_s);
      return FALSE;
    }
    if (tokens_s == NULL) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--gpu-hour-price needs --train-tokens (what is trained)");
      return FALSE;
    }
  }
  return TRUE;
}
