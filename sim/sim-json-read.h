/* sim-json-read.h — a small JSON reader, for the files sim writes itself
 * (sim sweep --merge reads the shards' JSON).  Parses the whole text into a
 * tree; errors name the line.
 *
 * The input is untrusted: it is RFC 8259 JSON only (no hex, "inf" or "nan";
 * numbers finite), at most 64 levels deep, with no member name twice in an
 * object, no \u0000 and no lone surrogate in a string (so every string is
 * NUL-free UTF-8 when the text is UTF-8).  The reader checks only syntax: a
 * caller checks the type of every member it reads (sim_json_get returns any
 * type; the typed getters hide a wrong type behind their fallback). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum { SIM_JNULL, SIM_JBOOL, SIM_JNUMBER, SIM_JSTRING, SIM_JARRAY, SIM_JOBJECT } SimJsonType;

typedef struct _SimJsonValue SimJsonValue;
struct _SimJsonValue {
  SimJsonType type;
  int line;           /* where the value starts, for messages */
  gboolean boolean;
  double number;
  char *string;
  GPtrArray *items;   /* SimJsonValue*, arrays and object values */
  GPtrArray *keys;    /* char*, objects */
};

/* a new tree (free with sim_json_value_free), or NULL with SIM_ERROR_USAGE
 * "PATH:LINE: expected ..."; any thread */
SimJsonValue *sim_json_parse (const char *path_for_messages, const char *text, GError **error);
void sim_json_value_free (SimJsonValue *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimJsonValue, sim_json_value_free)

/* member of an object (owned by obj), or NULL when obj is not an object or
 * has no such key; the typed getters return fallback (or NULL) also when
 * the member has another type; any thread */
const SimJsonValue *sim_json_get (const SimJsonValue *obj, const char *key);
double sim_json_get_number (const SimJsonValue *obj, const char *key, double fallback);
const char *sim_json_get_string (const SimJsonValue *obj, const char *key);

G_END_DECLS
