#include "sim-json.h"

#include <math.h>

void
sim_json_init (SimJson *j, gboolean pretty)
{
  j->out = g_string_new (NULL);
  j->depth = 0;
  j->need_comma = FALSE;
  j->pretty = pretty;
}

char *
sim_json_finish (SimJson *j)
{
  g_string_append_c (j->out, '\n');
  return g_string_free (g_steal_pointer (&j->out), FALSE);
}

static void
escape (GString *s, const char *v)
{
  g_string_append_c (s, '"');
  for (const unsigned char *p = (const unsigned char *) v; *p; p++) {
    switch (*p) {
    case '"': g_string_append (s, "\\\""); break;
    case '\\': g_string_append (s, "\\\\"); break;
    case '\n': g_string_append (s, "\\n"); break;
    case '\r': g_string_append (s, "\\r"); break;
    case '\t': g_string_append (s, "\\t"); break;
    default:
      if (*p < 0x20)
        g_string_append_printf (s, "\\u%04x", *p);
      else
        g_string_append_c (s, (char) *p);
    }
  }
  g_string_append_c (s, '"');
}

static void
prefix (SimJson *j, const char *key)
{
  if (j->need_comma)
    g_string_append_c (j->out, ',');
  if (j->pretty && j->depth > 0) {
    g_string_append_c (j->out, '\n');
    for (int i = 0; i < j->depth; i++)
      g_string_append (j->out, "  ");
  }
  if (key != NULL) {
    escape (j->out, key);
    g_string_append (j->out, j->pretty ? ": " : ":");
  }
  j->need_comma = TRUE;
}

static void
open_container (SimJson *j, const char *key, char c)
{
  prefix (j, key);
  g_string_append_c (j->out, c);
  j->depth++;
  j->need_comma = FALSE;
}

static void
close_container (SimJson *j, char c)
{
  gboolean empty = !j->need_comma;
  j->depth--;
  if (j->pretty && !empty) {
    g_string_append_c (j->out, '\n');
    for (int i = 0; i < j->depth; i++)
      g_string_append (j->out, "  ");
  }
  g_string_append_c (j->out, c);
  j->need_comma = TRUE;
}

void sim_json_begin_object (SimJson *j, const char *key) { open_container (j, key, '{'); }
void sim_json_end_object (SimJson *j) { close_container (j, '}'); }
void sim_json_begin_array (SimJson *j, const char *key) { open_container (j, key, '['); }
void sim_json_end_array (SimJson *j) { close_container (j, ']'); }

void
sim_json_string (SimJson *j, const char *key, const char *value)
{
  prefix (j, key);
  if (value == NULL)
    g_string_append (j->out, "null");
  else
    escape (j->out, value);
}

void
sim_json_uint (SimJson *j, const char *key, guint64 value)
{
  prefix (j, key);
  g_string_append_printf (j->out, "%" G_GUINT64_FORMAT, value);
}

void
sim_json_int (SimJson *j, const char *key, gint64 value)
{
  prefix (j, key);
  g_string_append_printf (j->out, "%" G_GINT64_FORMAT, value);
}

void
sim_json_double (SimJson *j, const char *key, double value)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  prefix (j, key);
  if (!isfinite (value)) {
    g_string_append (j->out, "null");
    return;
  }
  g_string_append (j->out, g_ascii_dtostr (buf, sizeof buf, value));
}

void
sim_json_bool (SimJson *j, const char *key, gboolean value)
{
  prefix (j, key);
  g_string_append (j->out, value ? "true" : "false");
}

void
sim_json_null (SimJson *j, const char *key)
{
  prefix (j, key);
  g_string_append (j->out, "null");
}
