/* cmd-common.c — argument scanning shared by the subcommands */
#include <string.h>

#include "sim-commands.h"
#include "sim-error.h"

gboolean
sim_cli_parse (int argc, char **argv, int first, const SimCliOption *options, const char *command,
               GError **error)
{
  for (int i = first; i < argc; i++) {
    const char *arg = argv[i];
    const char *eq = strchr (arg, '=');
    g_autofree char *key = NULL;
    const SimCliOption *o = NULL;

    if (!g_str_has_prefix (arg, "--") || arg[2] == '\0') {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s: unexpected argument '%s'; see sim %s --help",
                   command, arg, command);
      return FALSE;
    }
    key = eq != NULL ? g_strndup (arg + 2, (gsize) (eq - arg - 2)) : g_strdup (arg + 2);
    for (const SimCliOption *p = options; p->name != NULL; p++)
      if (g_str_equal (p->name, key))
        o = p;
    if (o == NULL) {
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
    g_free (*o->value);
    *o->value = g_strdup (eq != NULL ? eq + 1 : argv[++i]);
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
