/* sim-json.h — a small streaming JSON writer (GLib has none).
 * Output is deterministic: keys in the order written, doubles with %.17g
 * trimmed by g_ascii_dtostr, integers exact. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  GString *out;
  int depth;
  gboolean need_comma;
  gboolean pretty;
} SimJson;

/* A SimJson lives on the stack: init, write, finish.  Nothing fails; the
 * writer is not checked for balance.  One SimJson per thread. */
void sim_json_init (SimJson *j, gboolean pretty);
/* returns the text, with a final newline (caller g_free()s); j is spent */
char *sim_json_finish (SimJson *j);

void sim_json_begin_object (SimJson *j, const char *key);
void sim_json_end_object (SimJson *j);
void sim_json_begin_array (SimJson *j, const char *key);
void sim_json_end_array (SimJson *j);
/* key is NULL inside arrays */
void sim_json_string (SimJson *j, const char *key, const char *value); /* NULL writes null */
void sim_json_uint (SimJson *j, const char *key, guint64 value);
void sim_json_int (SimJson *j, const char *key, gint64 value);
void sim_json_double (SimJson *j, const char *key, double value);
void sim_json_bool (SimJson *j, const char *key, gboolean value);
void sim_json_null (SimJson *j, const char *key);

G_END_DECLS
