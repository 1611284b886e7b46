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
                    const char *command, SimPlan *plan, GError **error)
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
      /* Megatron-LM's --recompute-modules and --cuda-graph-scope take
       * their names as separate words (nargs): the words up to the next
       * flag, joined */
      if (eq == NULL && (g_str_equal (key, "recompute-modules") || g_str_equal (key, "cuda-graph-scope")) &&
          i + 1 < argc &&
          !g_str_has_prefix (argv[i + 1], "-")) {
        g_autoptr (GString) joined = g_string_new (value);
        while (i + 1 < argc && !g_str_has_prefix (argv[i + 1], "-"))
          g_string_append_printf (joined, ",%s", argv[++i]);
        if (sim_plan_set (plan, key, joined->str, &is_plan, error))
          continue;
        return FALSE;
      }
      if (sim_plan_set (plan, key, value, &is_plan, error))
        continue;
      if (is_plan)
        return FALSE;
      g_clear_error (error);
    }
    if (o == NULL) {
      unknown_option (key, options, plan != NULL, command, error);
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

/* ---- tables shared by compare and sweep ---- */

#include <math.h>

#include "sim-json.h"
#include "sim-report.h"
#include "sim-run.h"

char *
sim_cli_mfu_cell (const SimRun *r, double mfu_bf16)
{
  const char *precision = NULL;
  double m = sim_run_mfu_gemm_peak (r->topo, r->plan, mfu_bf16, &precision);
  return sim_cli_mfu_text (m, precision);
}

char *
sim_cli_mfu_text (double mfu, const char *precision)
{
  return g_str_equal (precision, "fp8")   ? g_strdup_printf ("%.1f%% FP8", 100 * mfu)
         : g_str_equal (precision, "fp4") ? g_strdup_printf ("%.1f%% FP4", 100 * mfu)
                                          : g_strdup_printf ("%.1f%%", 100 * mfu);
}

/* what every table's units and columns mean, under it */
void
sim_cli_print_legend (GString *out, gboolean scale)
{
  g_string_append (out, "peak GB: per GPU, on the busiest pipeline stage (GB = 10^9 bytes); TP s, CP s, PP s,\n"
                        "DP s: communication exposed, not hidden behind compute (seconds per step); limit: what\n"
                        "bounds the step (memory when it does not fit, else compute or communication); MFU:\n"
                        "of the dense peak of the precision the linear layers run at, BF16 unless the row\n"
                        "says FP8 or FP4; BF16 MFU: of the BF16 peak, for every row; ~: within the best's\n"
                        "error band of it, a difference the validation cannot tell from none\n");
  if (scale)
    g_string_append (out, "E: scaling efficiency, tokens/s per GPU against the smallest layout that fits\n");
}

/* a plan string cut after commas into lines of at most w columns */
static GPtrArray *
plan_lines (const char *label, int w)
{
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) items = g_strsplit (label, ",", -1);
  g_autoptr (GString) line = g_string_new (NULL);
  for (guint i = 0; items[i] != NULL; i++) {
    g_autofree char *item = g_strconcat (items[i], items[i + 1] != NULL ? "," : "", NULL);
    if (line->len > 0 && (int) (line->len + strlen (item)) > w) {
      g_ptr_array_add (lines, g_strdup (line->str));
      g_string_truncate (line, 0);
    }
    g_string_append (line, item);
  }
  g_ptr_array_add (lines, g_strdup (line->str));
  return lines;
}

void
sim_cli_print_narrow (GString *out, const SimCliRow *rows, guint n, gboolean scale)
{
  /* the columns after the plan; the plan takes what is left of 100 */
  int mw = 5, lw = 5, longest = 4, w = 0, fixed = 0;
  for (guint i = 0; i < n; i++) {
    longest = MAX (longest, (int) strlen (rows[i].label));
    lw = MAX (lw, (int) strlen (rows[i].limit));
    if (rows[i].has_time)
      mw = MAX (mw, (int) strlen (rows[i].mfu));
  }
  fixed = 6 + 2 + 8 + 9 + 10 + mw + 1 + 7 + 10 + 2 + (scale ? 11 : 0);
  w = MAX (MIN (longest, SIM_CLI_COLUMNS - fixed - lw), 14);
  g_string_append_printf (out, "%4s  %-*s  %7s %8s %9s %*s %6s ", "rank", w, "plan", "peak GB", "step s", "tokens/s",
                          mw, "MFU", "bubble");
  if (scale)
    g_string_append_printf (out, "%5s %4s ", "GPUs", "E");
  g_string_append_printf (out, "%-9s  %s\n", "exposed s", "limit");
  for (guint i = 0; i < n; i++) {
    const SimCliRow *r = &rows[i];
    g_autoptr (GPtrArray) lines = plan_lines (r->label, w);
    g_string_append_printf (out, "%4s  %-*s  %7.1f ", r->rank, w, (const char *) g_ptr_array_index (lines, 0),
                            r->peak_gb);
    if (r->has_time) {
      const char *names[] = { "TP", "CP", "PP", "DP", "EP" };
      int k = 0;
      g_autofree char *exposed = NULL;
      for (int d = 1; d < 5; d++)
        if (r->exposed_s[d] > r->exposed_s[k])
          k = d;
      exposed = r->exposed_s[k] > 0 ? g_strdup_printf ("%s %.3f", names[k], r->exposed_s[k]) : g_strdup ("0");
      g_string_append_printf (out, "%8.3f %9s %*s %5.1f%% ", r->step_s, r->tokens, mw, r->mfu, 100 * r->bubble);
      if (scale)
        g_string_append_printf (out, "%5d %4s ", r->gpus, r->e);
      g_string_append_printf (out, "%-9s  %s\n", exposed, r->limit);
    } else {
      g_string_append_printf (out, "%8s %9s %*s %6s ", "-", "-", mw, "-", "-");
      if (scale)
        g_string_append_printf (out, "%5d %4s ", r->gpus, "-");
      g_string_append_printf (out, "%-9s  %s\n", "-", r->limit);
    }
    for (guint k = 1; k < lines->len; k++)
      g_string_append_printf (out, "%4s  %s\n", "", (const char *) g_ptr_array_index (lines, k));
  }
}

void
sim_cli_print_narrow_legend (GString *out, gboolean scale)
{
  g_string_append (out, "peak GB: per GPU, on the busiest pipeline stage (GB = 10^9 bytes); exposed s: the\n"
                        "largest of the TP, CP, PP, DP and EP (experts' all-to-all) communication not\n"
                        "hidden behind compute (seconds per step; --wide shows each); limit: what bounds\n"
                        "the step, compute or comm (communication), or OOM and its case when it does not\n"
                        "fit; tight: fits only without the fragmentation allowance; *: from the steady\n"
                        "state of shorter runs;\n"
                        "MFU: of the dense peak of the precision the linear layers run at, BF16 unless the\n"
                        "row says FP8 or FP4 (--wide and the JSON also give every row's MFU of the BF16 peak);\n"
                        "~: within the best's error band of it, a difference the validation cannot tell\n"
                        "from none\n");
  if (scale)
    g_string_append (out, "E: scaling efficiency, tokens/s per GPU against the smallest layout that fits\n");
}

/* the usable memory every plan of the table shares, in GB and GiB */
static void
append_usable (GString *out, guint64 usable)
{
  g_autofree char *gb = sim_format_gb (usable);
  g_autofree char *gib = sim_format_gib (usable);
  g_string_append_printf (out, "usable memory per GPU: %s (%s)\n", gb, gib);
}

void
sim_cli_print_runs (GString *out, GPtrArray *runs, gboolean wide)
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
  g_autofree gboolean *tie = g_new0 (gboolean, runs->len + 1);
  sim_run_ties (runs, tie);
  if (!wide) {
    g_autofree SimCliRow *rows = g_new0 (SimCliRow, runs->len);
    g_autoptr (GPtrArray) keep = g_ptr_array_new_with_free_func (g_free);
    for (guint i = 0; i < runs->len; i++) {
      const SimRun *r = g_ptr_array_index (runs, i);
      const SimIteration *it = r->time;
      SimCliRow *row = &rows[i];
      const char *wall = sim_run_wall (r);
      row->rank = r->memory->fits ? g_strdup_printf ("%s%u", tie[i] ? "~" : "", i + 1) : g_strdup ("-");
      g_ptr_array_add (keep, (char *) row->rank);
      row->label = r->label;
      row->peak_gb = r->memory->peak_bytes / 1e9;
      row->has_time = it != NULL;
      if (it != NULL) {
        row->step_s = it->step_s;
        row->tokens = sim_format_count ((guint64) llround (it->tokens_per_s));
        g_ptr_array_add (keep, (char *) row->tokens);
        row->mfu = r->memory->fits ? sim_cli_mfu_cell (r, it->mfu) : g_strdup ("-");
        g_ptr_array_add (keep, (char *) row->mfu);
        row->bubble = it->bubble_fraction;
        row->exposed_s[0] = it->exposed_tp_s;
        row->exposed_s[1] = it->exposed_cp_s;
        row->exposed_s[2] = it->exposed_pp_s;
        row->exposed_s[3] = it->exposed_dp_s;
        row->exposed_s[4] = it->exposed_ep_s;
      }
      row->limit = !r->memory->fits ? g_strdup_printf ("OOM %s", sim_oom_case_name (r->memory->oom_case))
                   : g_strdup_printf ("%s%s%s", g_str_equal (wall, "communication") ? "comm" : wall,
                                      r->memory->tight ? " tight" : "", r->extrapolated ? "*" : "");
      g_ptr_array_add (keep, (char *) row->limit);
    }
    sim_cli_print_narrow (out, rows, runs->len, FALSE);
    g_string_append_c (out, '\n');
    if (same_usable && runs->len > 0)
      append_usable (out, usable);
    sim_cli_print_narrow_legend (out, FALSE);
    return;
  }
  /* --wide: every plan string whole, however long */
  g_string_append_printf (out, "%4s  %-*s  %-5s %7s %8s %9s %9s %8s %6s %6s %6s %6s %6s %6s  %s\n", "rank", (int) w,
                          "plan", "fits", "peak GB", "step s", "tokens/s", "MFU", "BF16 MFU", "bubble", "TP s", "CP s",
                          "PP s", "DP s", "EP s", "limit");
  for (guint i = 0; i < runs->len; i++) {
    const SimRun *r = g_ptr_array_index (runs, i);
    const SimIteration *it = r->time;
    g_autofree char *fits = r->memory->tight  ? g_strdup ("tight")
                            : r->memory->fits ? g_strdup ("yes")
                                            : g_strdup_printf ("OOM %s", sim_oom_case_name (r->memory->oom_case));
    g_autofree char *rank = r->memory->fits ? g_strdup_printf ("%s%u", tie[i] ? "~" : "", i + 1) : g_strdup ("-");
    g_autofree char *tok = it != NULL ? sim_format_count ((guint64) llround (it->tokens_per_s)) : g_strdup ("-");
    /* no MFU for a plan that cannot run, as in the report */
    g_autofree char *mfu = it != NULL && r->memory->fits ? sim_cli_mfu_cell (r, it->mfu) : g_strdup ("-");
    g_autofree char *bf16 = it != NULL && r->memory->fits ? g_strdup_printf ("%.1f%%", 100 * it->mfu) : g_strdup ("-");
    g_string_append_printf (out, "%4s  %-*s  %-5s %7.1f ", rank, (int) w, r->label, fits,
                            r->memory->peak_bytes / 1e9);
    if (it != NULL)
      g_string_append_printf (out, "%8.3f %9s %9s %8s %5.1f%% %6.3f %6.3f %6.3f %6.3f %6.3f ", it->step_s, tok, mfu,
                              bf16, 100 * it->bubble_fraction, it->exposed_tp_s, it->exposed_cp_s, it->exposed_pp_s,
                              it->exposed_dp_s, it->exposed_ep_s);
    else
      g_string_append_printf (out, "%8s %9s %9s %8s %6s %6s %6s %6s %6s %6s ", "-", "-", "-", "-", "-", "-", "-", "-",
                              "-", "-");
    g_string_append_printf (out, " %s%s\n", sim_run_wall (r), r->extrapolated ? " (screened)" : "");
  }
  g_string_append_c (out, '\n');
  if (same_usable && runs->len > 0)
    append_usable (out, usable);
  sim_cli_print_legend (out, FALSE);
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
