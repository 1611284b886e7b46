#include "sim-json-read.h"

#include <math.h>
#include <string.h>

#include "sim-error.h"

typedef struct {
  const char *path;
  const char *p;
  const char *start;
  GError **error;
} P;

static int
line_of (const P *ps)
{
  int l = 1;
  for (const char *q = ps->start; q < ps->p; q++)
    l += *q == '\n';
  return l;
}

static gboolean
fail (P *ps, const char *what)
{
  if (ps->error != NULL && *ps->error == NULL)
    g_set_error (ps->error, SIM_ERROR, SIM_ERROR_USAGE, "%s:%d: expected %s", ps->path, line_of (ps), what);
  return FALSE;
}

static void
ws (P *ps)
{
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
    ps->p++;
}

void
sim_json_value_free (SimJsonValue *v)
{
  if (v == NULL)
    return;
  g_free (v->string);
  g_clear_pointer (&v->items, g_ptr_array_unref);
  g_clear_pointer (&v->keys, g_ptr_array_unref);
  g_free (v);
}

static SimJsonValue *value (P *ps, int depth);

static char *
string (P *ps)
{
  GString *s = g_string_new (NULL);
  ps->p++;
  while (*ps->p != '"') {
    if (*ps->p == '\0' || (guchar) *ps->p < 0x20) {
      g_string_free (s, TRUE);
      fail (ps, "a closing '\"'");
      return NULL;
    }
    if (*ps->p == '\\') {
      ps->p++;
      switch (*ps->p) {
      case '"': g_string_append_c (s, '"'); break;
      case '\\': g_string_append_c (s, '\\'); break;
      case '/': g_string_append_c (s, '/'); break;
      case 'n': g_string_append_c (s, '\n'); break;
      case 't': g_string_append_c (s, '\t'); break;
      case 'r': g_string_append_c (s, '\r'); break;
      case 'b': g_string_append_c (s, '\b'); break;
      case 'f': g_string_append_c (s, '\f'); break;
      case 'u': {
        char hex[5] = { 0 };
        gunichar c;
        for (int i = 0; i < 4; i++) {
          if (!g_ascii_isxdigit (ps->p[1 + i])) {
            g_string_free (s, TRUE);
            fail (ps, "four hex digits after \\u");
            return NULL;
          }
          hex[i] = ps->p[1 + i];
        }
        c = (gunichar) g_ascii_strtoull (hex, NULL, 16);
        g_string_append_unichar (s, c);
        ps->p += 4;
        break;
      }
      default:
        g_string_free (s, TRUE);
        fail (ps, "a valid escape");
        return NULL;
      }
      ps->p++;
      continue;
    }
    g_string_append_c (s, *ps->p++);
  }
  ps->p++;
  return g_string_free (s, FALSE);
}

static SimJsonValue *
value (P *ps, int depth)
{
  g_autoptr (SimJsonValue) v = g_new0 (SimJsonValue, 1);
  ws (ps);
  if (depth > 64) {
    fail (ps, "at most 64 levels of nesting");
    return NULL;
  }
  switch (*ps->p) {
  case '{':
    v->type = SIM_JOBJECT;
    v->items = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_json_value_free);
    v->keys = g_ptr_array_new_with_free_func (g_free);
    ps->p++;
    ws (ps);
    if (*ps->p == '}') {
      ps->p++;
      return g_steal_pointer (&v);
    }
    while (TRUE) {
      char *k;
      SimJsonValue *item;
      ws (ps);
      if (*ps->p != '"') {
        fail (ps, "a member name in double quotes");
        return NULL;
      }
      if ((k = string (ps)) == NULL)
        return NULL;
      g_ptr_array_add (v->keys, k);
      ws (ps);
      if (*ps->p != ':') {
        fail (ps, "':' after a member name");
        return NULL;
      }
      ps->p++;
      if ((item = value (ps, depth + 1)) == NULL)
        return NULL;
      g_ptr_array_add (v->items, item);
      ws (ps);
      if (*ps->p == ',') {
        ps->p++;
        continue;
      }
      if (*ps->p == '}') {
        ps->p++;
        return g_steal_pointer (&v);
      }
      fail (ps, "',' or '}'");
      return NULL;
    }
  case '[':
    v->type = SIM_JARRAY;
    v->items = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_json_value_free);
    ps->p++;
    ws (ps);
    if (*ps->p == ']') {
      ps->p++;
      return g_steal_pointer (&v);
    }
    while (TRUE) {
      SimJsonValue *item = value (ps, depth + 1);
      if (item == NULL)
        return NULL;
      g_ptr_array_add (v->items, item);
      ws (ps);
      if (*ps->p == ',') {
        ps->p++;
        continue;
      }
      if (*ps->p == ']') {
        ps->p++;
        return g_steal_pointer (&v);
      }
      fail (ps, "',' or ']'");
      return NULL;
    }
  case '"':
    v->type = SIM_JSTRING;
    if ((v->string = string (ps)) == NULL)
      return NULL;
    return g_steal_pointer (&v);
  case 't':
  case 'f':
  case 'n': {
    const char *words[] = { "true", "false", "null" };
    for (guint i = 0; i < 3; i++)
      if (strncmp (ps->p, words[i], strlen (words[i])) == 0) {
        ps->p += strlen (words[i]);
        v->type = i == 2 ? SIM_JNULL : SIM_JBOOL;
        v->boolean = i == 0;
        return g_steal_pointer (&v);
      }
    fail (ps, "a value");
    return NULL;
  }
  default: {
    char *end = NULL;
    if (*ps->p != '-' && !g_ascii_isdigit (*ps->p)) {
      fail (ps, "a value");
      return NULL;
    }
    v->type = SIM_JNUMBER;
    v->number = g_ascii_strtod (ps->p, &end);
    if (end == ps->p || !isfinite (v->number)) {
      fail (ps, "a number");
      return NULL;
    }
    ps->p = end;
    return g_steal_pointer (&v);
  }
  }
}

SimJsonValue *
sim_json_parse (const char *path, const char *text, GError **error)
{
  P ps = { path, text, text, error };
  SimJsonValue *v = value (&ps, 0);
  if (v == NULL)
    return NULL;
  ws (&ps);
  if (*ps.p != '\0') {
    sim_json_value_free (v);
    fail (&ps, "the end of the document");
    return NULL;
  }
  return v;
}

const SimJsonValue *
sim_json_get (const SimJsonValue *obj, const char *key)
{
  if (obj == NULL || obj->type != SIM_JOBJECT)
    return NULL;
  for (guint i = 0; i < obj->keys->len; i++)
    if (g_str_equal (g_ptr_array_index (obj->keys, i), key))
      return g_ptr_array_index (obj->items, i);
  return NULL;
}

double
sim_json_get_number (const SimJsonValue *obj, const char *key, double fallback)
{
  const SimJsonValue *v = sim_json_get (obj, key);
  return v != NULL && v->type == SIM_JNUMBER ? v->number : fallback;
}

const char *
sim_json_get_string (const SimJsonValue *obj, const char *key)
{
  const SimJsonValue *v = sim_json_get (obj, key);
  return v != NULL && v->type == SIM_JSTRING ? v->string : NULL;
}

gboolean
sim_json_get_bool (const SimJsonValue *obj, const char *key, gboolean fallback)
{
  const SimJsonValue *v = sim_json_get (obj, key);
  return v != NULL && v->type == SIM_JBOOL ? v->boolean : fallback;
}
