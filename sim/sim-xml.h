/* sim-xml.h — safe loading of the project's XML inputs.
 *
 * libxml2 runs with no network (XML_PARSE_NONET), without DTD loading and
 * without entity substitution; a document that declares a DTD at all is
 * refused, which closes the door on external entities and on entity-expansion
 * bombs.  Files larger than SIM_XML_MAX_BYTES are refused before parsing.
 *
 * Readers check what they read themselves (so a message names the attribute,
 * its line and what was expected), then sim_xml_validate() checks the whole
 * document against the RELAX NG schema compiled into the binary (GResource),
 * which catches what no reader looks at: unknown elements and attributes.
 * All errors are "file:line: what was expected".
 *
 * Threads: each document belongs to one thread.  libxml2 2.9 initialises
 * its globals on first use without a lock, so load one document (or call
 * xmlInitParser) on one thread before loading on several.
 */
#pragma once

#include <glib.h>
#include <libxml/tree.h>

G_BEGIN_DECLS

#define SIM_XML_MAX_BYTES (16u * 1024u * 1024u)

/* Parse path.  Returns a new document (free with sim_xml_free) or NULL with
 * SIM_ERROR_IO (unreadable, a directory) or SIM_ERROR_XML (too large, a
 * DTD, not well-formed). */
xmlDoc *sim_xml_load (const char *path, GError **error);
void sim_xml_free (xmlDoc *doc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (xmlDoc, sim_xml_free)

/* Check doc against the schema resource schema_path ("/sim/topology.rng"):
 * FALSE with SIM_ERROR_XML naming the first violation (SIM_ERROR_IO if the
 * resource is missing: a build bug). */
gboolean sim_xml_validate (xmlDoc *doc, const char *path, const char *schema_path, GError **error);

/* the line of attribute name (or, for NULL, of the start of the tag) */
long sim_xml_attr_line (xmlNode *node, const char *name);

/* the first child element called name, or NULL with a "file:line: expected"
 * SIM_ERROR_XML; the node is owned by the document */
xmlNode *sim_xml_require (const char *file, xmlNode *parent, const char *name, GError **error);

/* Attribute readers: each reports "file:line: attribute NAME of <elem> ..."
 * on failure: SIM_ERROR_XML for a missing or malformed value, SIM_ERROR_UNIT
 * for a quantity (bytes, bandwidth, flop rate, time) without a known unit.
 * file is the path used in messages; *out of get_string is new (caller
 * g_free()s). */
gboolean sim_xml_get_string (const char *file, xmlNode *node, const char *name,
                             char **out, GError **error);
gboolean sim_xml_get_uint (const char *file, xmlNode *node, const char *name, guint64 min,
                           guint64 max, guint64 *out, GError **error);
gboolean sim_xml_get_bool (const char *file, xmlNode *node, const char *name, gboolean *out,
                           GError **error);
gboolean sim_xml_get_double (const char *file, xmlNode *node, const char *name, double min,
                             double max, double *out, GError **error);
gboolean sim_xml_get_bytes (const char *file, xmlNode *node, const char *name, guint64 *out,
                            GError **error);
gboolean sim_xml_get_bandwidth (const char *file, xmlNode *node, const char *name, double *out,
                                GError **error);
gboolean sim_xml_get_flop_rate (const char *file, xmlNode *node, const char *name, double *out,
                                GError **error);
gboolean sim_xml_get_time (const char *file, xmlNode *node, const char *name, double *out,
                           GError **error);

/* iteration helpers over element children; NULL at the end; never fail */
xmlNode *sim_xml_first_element (xmlNode *parent, const char *name);
xmlNode *sim_xml_next_element (xmlNode *node, const char *name);
gboolean sim_xml_is (xmlNode *node, const char *name);

G_END_DECLS
