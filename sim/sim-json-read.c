/* sim-json-read.c — see sim-json-read.h */
#include "sim-json-read.h"

#include <math.h>
#include <string.h>

#include "sim-error.h"

typedef struct {
  const char *path;
  const char *p;
  int line; /* of p; only ws() steps over newlines, so it counts them */
  GError **error;
} P;

static gboolean
fail (P *ps, const char *what)
{
  if (ps->error != NULL && *ps->error == NULL)
    g_set_error (ps->error, SIM_ERROR, SIM_ERROR_USAGE, "%s:%d: expected %s", ps->path, ps->line,
                 what);
  return FALSE;
}

static void
ws (P *ps)
{
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
    ps->line += *ps->p++ == '\n';
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

/* the four hex digits after ps->p (at the 'u'); ps->p is left on the last */
static gboolean
hex4 (P *ps, gunichar *c)
{
  char hex[5] = { 0 };
  for (int i = 0; i < 4; i++) {
    if (!g_ascii_isxdigit (ps->p[1 + i]))
      return fail (ps, "four hex digits after \\u");
    hex[i] = ps->p[1 + i];
  }
  *c = (gunichar) g_ascii_strtoull (hex, NULL, 16);
  ps->p += 4;
  return TRUE;
}

/* the length of a JSON number at p (RFC 8259: -?int frac? exp?), 0 when
 * there is none; strtod alone would also take hex, "inf" and "nan" */
static gsize
number_length (const char *p)
{
  const char *q = p;
  if (*q == '-')
    q++;
  if (*q == '0')
    q++;
  else if (*q >= '1' && *q <= '9')
    while (g_ascii_isdigit (*q))
      q++;
  else
    return 0;
  if (*q == '.') {
    if (!g_ascii_isdigit (q[1]))
      return 0;
    q++;
    while (g_ascii_isdigit (*q))
      q++;
  }
  if (*q == 'e' || *q == 'E') {
    q++;
    if (*q == '+' || *q == '-')
      q++;
    if (!g_ascii_isdigit (*q))
      return 0;
    while (g_ascii_isdigit (*q))
      q++;
  }
  return (gsize) (q - p);
}

/* whether obj already has member key: a file that says one thing twice is
 * not one sim wrote, and the reader would see only the first */
static gboolean
has_key (const SimJsonValue *obj, GHashTable **seen, const char *key)
{
  /* a few members: a scan; many: a set, so that a big object stays linear */
  if (*seen == NULL && obj->keys->len >= 16) {
    *seen = g_hash_table_new (g_str_hash, g_str_equal);
    for (guint i = 0; i < obj->keys->len; i++)
      g_hash_table_add (*seen, g_ptr_array_index (obj->keys, i));
  }
  if (*seen != NULL)
    return g_hash_table_contains (*seen, key);
  for (guint i = 0; i < obj->keys->len; i++)
    if (g_str_equal (g_ptr_array_index (obj->keys, i), key))
      return TRUE;
  return FALSE;
}

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
        gunichar c = 0;
        if (!hex4 (ps, &c)) {
          g_string_free (s, TRUE);
          return NULL;
        }
        /* a surrogate pair is one character; a lone half, or NUL, would
         * give a string C cannot hold or that is not UTF-8 */
        if (c >= 0xD800 && c <= 0xDBFF) {
          gunichar lo = 0;
          if (ps->p[1] != '\\' || ps->p[2] != 'u') {
            g_string_free (s, TRUE);
            fail (ps, "a low surrogate \\u escape after a high one");
            return NULL;
          }
          ps->p += 2;
          if (!hex4 (ps, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
            g_string_free (s, TRUE);
            fail (ps, "a low surrogate \\u escape after a high one");
            return NULL;
          }
          c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
        } else if (c >= 0xDC00 && c <= 0xDFFF) {
          g_string_free (s, TRUE);
          fail (ps, "a high surrogate before a low one");
          return NULL;
        } else if (c == 0) {
          g_string_free (s, TRUE);
          fail (ps, "no \\u0000 in a string");
          return NULL;
        }
        g_string_append_unichar (s, c);
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
  g_autoptr (GHashTable) seen = NULL;
  ws (ps);
  v->line = ps->line;
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
      if (has_key (v, &seen, k)) {
        g_free (k);
        fail (ps, "each member name once in an object");
        return NULL;
      }
      g_ptr_array_add (v->keys, k);
      if (seen != NULL)
        g_hash_table_add (seen, k);
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
    gsize n;
    if (*ps->p != '-' && !g_ascii_isdigit (*ps->p)) {
      fail (ps, "a value");
      return NULL;
    }
    n = number_length (ps->p);
    v->type = SIM_JNUMBER;
    v->number = n > 0 ? g_ascii_strtod (ps->p, NULL) : NAN;
    if (!isfinite (v->number)) {
      fail (ps, "a finite number");
      return NULL;
    }
    ps->p += n;
    return g_steal_pointer (&v);
  }
  }
}

SimJsonValue *
sim_json_parse (const char *path, const char *text, GError **error)
{
  P ps = { path, text, 1, error };
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
