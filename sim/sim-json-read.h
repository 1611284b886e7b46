/* sim-json-read.h — a small JSON reader, for the files sim writes itself
 * (sim sweep --merge reads the shards' JSON).  Parses the whole text into a
 * tree; errors name the line. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum { SIM_JNULL, SIM_JBOOL, SIM_JNUMBER, SIM_JSTRING, SIM_JARRAY, SIM_JOBJECT } SimJsonType;

typedef struct _SimJsonValue SimJsonValue;
struct _SimJsonValue {
  SimJsonType type;
  gboolean boolean;
  double number;
  char *string;
  GPtrArray *items;   /* SimJsonValue*, arrays and object values */
  GPtrArray *keys;    /* char*, objects */
};

SimJsonValue *sim_json_parse (const char *path_for_messages, const char *text, GError **error);
void sim_json_value_free (SimJsonValue *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimJsonValue, sim_json_value_free)

/* member of an object, or NULL */
const SimJsonValue *sim_json_get (const SimJsonValue *obj, const char *key);
double sim_json_get_number (const SimJsonValue *obj, const char *key, double fallback);
const char *sim_json_get_string (const SimJsonValue *obj, const char *key);
gboolean sim_json_get_bool (const SimJsonValue *obj, const char *key, gboolean fallback);

G_END_DECLS
