/* cmd-list.c — `sim list models|topologies|gpus`: what ships with sim, and
 * how big it is, so that --model and --topology can be given by name.
 *
 *   sim list topologies   name, GPUs (nodes x GPUs per node), GPU, description
 *   sim list models       name, parameters, layers, hidden size, active
 *                         parameters (mixture-of-experts models), description
 *   sim list gpus         each GPU type of the shipped cluster files: HBM,
 *                         BF16 peak, and the files that define it
 *
 * A file that does not load is listed with its error, not fatal: the list
 * is for finding your way.  Exit status 0, or 2 on a usage error. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sim-error.h"
#include "sim-format.h"
#include "sim-model.h"
#include "sim-paths.h"
#include "sim-topology.h"

static const char *usage =
    "usage: sim list models|topologies|gpus [--wide]\n"
    "\n"
    "Lists what ships with sim, by the names --model and --topology take:\n"
    "  models      each model file: parameters, layers, hidden size, and the\n"
    "              parameters one token uses (mixture-of-experts models)\n"
    "  topologies  each cluster file: GPUs (nodes x GPUs per node) and GPU type;\n"
    "              --nodes N or --gpus N uses part of one, or more\n"
    "  gpus        each GPU type in the cluster files: HBM and dense BF16 peak\n";

/* text cut to what is left of the line, with "..." when cut */
static void
append_cut (GString *out, const char *text, gboolean wide)
{
  gsize col = out->len - (strrchr (out->str, '\n') != NULL ? (gsize) (strrchr (out->str, '\n') - out->str) + 1 : 0);
  gsize room = col < SIM_CLI_COLUMNS ? SIM_CLI_COLUMNS - col : 0;
  if (wide || strlen (text) <= room)
    g_string_append (out, text);
  else if (room > 3)
    g_string_append_printf (out, "%.*s...", (int) (room - 3), text);
  g_string_append_c (out, '\n');
}

static void
list_topologies (GString *out, gboolean wide)
{
  g_autoptr (GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) names = sim_paths_list ("topologies", paths);
  g_string_append_printf (out, "%-14s %6s  %-9s %-15s %s\n", "name", "GPUs", "layout", "GPU type", "description");
  for (guint i = 0; i < names->len; i++) {
    g_autoptr (GError) local = NULL;
    g_autoptr (SimTopology) t = sim_topology_load (g_ptr_array_index (paths, i), 0, &local);
    g_autofree char *layout = NULL;
    if (t == NULL) {
      g_string_append_printf (out, "%-14s %6s  %-9s %-15s ", (const char *) g_ptr_array_index (names, i), "-", "-",
                              "-");
      append_cut (out, local->message, wide);
      continue;
    }
    layout = t->gpus_per_node > 0 ? g_strdup_printf ("%d x %d", t->n_nodes, t->gpus_per_node)
                                  : g_strdup_printf ("%d nodes", t->n_nodes);
    g_string_append_printf (out, "%-14s %6d  %-9s %-15s ", (const char *) g_ptr_array_index (names, i),
                            sim_topology_n_gpus (t), layout, sim_topology_gpu_type (t, 0)->id);
    append_cut (out, t->description, wide);
  }
  g_string_append (out, "\nlayout: nodes x GPUs per node; --nodes N and --gpus N resize a cluster file\n");
}

static void
list_models (GString *out, gboolean wide)
{
  g_autoptr (GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) names = sim_paths_list ("models", paths);
  g_string_append_printf (out, "%-24s %11s %7s %7s %9s  %s\n", "name", "parameters", "layers", "hidden", "active",
                          "description");
  for (guint i = 0; i < names->len; i++) {
    g_autoptr (GError) local = NULL;
    g_autoptr (SimModel) m = sim_model_load (g_ptr_array_index (paths, i), &local);
    g_autofree char *params = NULL;
    g_autofree char *active = NULL;
    if (m == NULL) {
      g_string_append_printf (out, "%-24s %11s %7s %7s %9s  ", (const char *) g_ptr_array_index (names, i), "-", "-",
                              "-", "-");
      append_cut (out, local->message, wide);
      continue;
    }
    params = sim_format_billions (sim_model_param_count (m));
    active = sim_model_is_moe (m) ? sim_format_billions (sim_model_param_count_active (m)) : g_strdup ("-");
    g_string_append_printf (out, "%-24s %11s %7" G_GUINT64_FORMAT " %7" G_GUINT64_FORMAT " %9s  ",
                            (const char *) g_ptr_array_index (names, i), params, m->layers, m->hidden, active);
    append_cut (out, m->description != NULL ? m->description : "", wide);
  }
  g_string_append (out, "\nparameters: exact count, in billions (B = 10^9); active: the parameters one token's\n"
                        "forward pass reads in a mixture-of-experts model (-: dense, all of them)\n");
}

static void
string_free (gpointer s)
{
  g_string_free (s, TRUE);
}

static void
list_gpus (GString *out, gboolean wide)
{
  g_autoptr (GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) names = sim_paths_list ("topologies", paths);
  g_autoptr (GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (string_free);

  for (guint i = 0; i < names->len; i++) {
    g_autoptr (SimTopology) t = sim_topology_load (g_ptr_array_index (paths, i), 0, NULL);
    for (guint k = 0; t != NULL && k < t->gpu_types->len; k++) {
      const SimGpuType *g = g_ptr_array_index (t->gpu_types, k);
      guint at = 0;
      while (at < ids->len && !g_str_equal (g_ptr_array_index (ids, at), g->id))
        at++;
      if (at == ids->len) {
        g_autofree char *gib = sim_format_gib (g->hbm_capacity_bytes);
        double bf16 = g->peak_flop_per_s[SIM_DTYPE_BF16] > 0 ? g->peak_flop_per_s[SIM_DTYPE_BF16]
                                                             : g->peak_flop_per_s[SIM_DTYPE_FP16];
        g_ptr_array_add (ids, g_strdup (g->id));
        g_ptr_array_add (lines, g_strdup_printf ("%-15s %-29.29s  %10s %5.0f TFLOP/s  ", g->id, g->name, gib,
                                                 bf16 / 1e12));
        g_ptr_array_add (files, g_string_new (NULL));
      }
      {
        GString *f = g_ptr_array_index (files, at);
        g_string_append_printf (f, "%s%s", f->len > 0 ? ", " : "", (const char *) g_ptr_array_index (names, i));
      }
    }
  }
  g_string_append_printf (out, "%-15s %-29s  %10s %13s  %s\n", "id (gpu-type)", "name", "HBM", "BF16 peak",
                          "cluster files");
  for (guint i = 0; i < ids->len; i++) {
    g_string_append (out, g_ptr_array_index (lines, i));
    append_cut (out, ((GString *) g_ptr_array_index (files, i))->str, wide);
  }
  g_string_append (out, "\nHBM: the physical capacity (GiB = 2^30 bytes); BF16 peak: dense, without sparsity\n");
}

int
sim_cmd_list (int argc, char **argv, GError **error)
{
  static const char *const what[] = { "models", "topologies", "gpus" };
  g_autoptr (GString) out = g_string_new (NULL);
  gboolean help = FALSE, wide = FALSE;
  const char *kind = NULL;
  const SimCliOption options[] = {
    { "help", FALSE, NULL, &help, NULL }, { "wide", FALSE, NULL, &wide, NULL },
    { NULL, FALSE, NULL, NULL, NULL },
  };
  int first = 2;

  if (argc > 2 && !g_str_has_prefix (argv[2], "-")) {
    kind = argv[2];
    first = 3;
  }
  if (!sim_cli_parse (argc, argv, first, options, "list", error))
    return 2;
  if (help) {
    fputs (usage, stdout);
    return 0;
  }
  if (kind == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "list: expected what to list: models, topologies or gpus; see sim list --help");
    return 2;
  }
  /* "topology", "model", "gpu" too */
  for (guint i = 0; i < G_N_ELEMENTS (what); i++)
    if (g_str_equal (kind, what[i]) || (strlen (kind) >= 3 && g_str_has_prefix (what[i], kind)) ||
        (g_str_equal (what[i], "topologies") && g_str_equal (kind, "topology")))
      kind = what[i];
  if (g_str_equal (kind, "models"))
    list_models (out, wide);
  else if (g_str_equal (kind, "topologies"))
    list_topologies (out, wide);
  else if (g_str_equal (kind, "gpus"))
    list_gpus (out, wide);
  else {
    const char *near = sim_paths_closest (kind, what, G_N_ELEMENTS (what));
    g_autofree char *hint = near != NULL ? g_strdup_printf ("did you mean %s? ", near) : g_strdup ("");
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "list: unknown list '%s', expected models, topologies or gpus; %ssee sim list --help", kind, hint);
    return 2;
  }
  fputs (out->str, stdout);
  return 0;
}
