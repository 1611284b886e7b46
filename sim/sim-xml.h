/* sim-xml.h — safe loading of the project's XML inputs.
 *
 * A document is refused before libxml2 sees it when it is not a regular
 * file of at most SIM_XML_MAX_BYTES (sim_input_read), when it is not UTF-8
 * (or its ASCII subset: a NUL byte, which every UTF-16 or UTF-32 file
 * holds, or an encoding declaration other than UTF-8/US-ASCII), when it
 * declares a DOCTYPE or ENTITY, or when a start tag holds more than
 * SIM_XML_MAX_ATTRIBUTES attributes (libxml2 2.9 checks duplicate
 * attributes pairwise: 200,000 of them took minutes).  Those checks read
 * the raw bytes, which is sound because only UTF-8 gets through the first.
 *
 * libxml2 then parses with no network (XML_PARSE_NONET), without DTD
 * loading or entity substitution (neither XML_PARSE_DTDLOAD nor
 * XML_PARSE_NOENT), without XML_PARSE_HUGE (its own limits on names, text
 * and depth stay on) and ignoring the encoding declaration; a DOCTYPE that
 * reaches it stops the parser from the SAX callback before the internal
 * subset is read, and a document that still holds a DTD is refused.  That
 * closes the door on external entities and entity-expansion bombs however
 * the text is encoded.
 *
 * Readers check what they read themselves (so a message names the attribute,
 * its line and what was expected), then sim_xml_validate() checks the whole
 * document against the RELAX NG schema compiled into the binary (GResource),
 * which catches what no reader looks at: unknown elements and attributes.
 * All errors are one line, "file:line: ... expected ...", of bounded length:
 * libxml2's messages are reworded and quoted values cut to 40 characters.
 *
 * Threads: each document belongs to one thread.  libxml2 2.9 initialises
 * its globals on first use without a lock, so load one document (or call
 * xmlInitParser) on one thread before loading on several.
 */
#pragma once

#include <glib.h>
#include <libxml/tree.h>

G_BEGIN_DECLS

/* The largest XML input.  The shipped files are at most 21 kB; a
 * 16,384-GPU cluster in the graph form, written out device by device (a
 * GPU, its NIC and three links each, no comments) is 5.6 MB.  8 MiB holds
 * that with room and keeps a parse under a second and ~100 MB. */
#define SIM_XML_MAX_BYTES (8u << 20)
/* the most attributes on one element: the schemas use at most 8 */
#define SIM_XML_MAX_ATTRIBUTES 64
/* the most characters of a quoted value in a message */
#define SIM_XML_MAX_QUOTE 40

/* Parse path.  Returns a new document (free with sim_xml_free) or NULL with
 * SIM_ERROR_IO (unreadable, not a regular file, over SIM_XML_MAX_BYTES) or
 * SIM_ERROR_XML (not UTF-8, a DTD, too many attributes, not well-formed).
 * The document keeps its text and an index of line starts (doc->_private)
 * and each element its start tag's number (node->_private): both belong to
 * sim-xml, for sim_xml_attr_line. */
xmlDoc *sim_xml_load (const char *path, GError **error);
void sim_xml_free (xmlDoc *doc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (xmlDoc, sim_xml_free)

/* Check doc against the schema compiled into sim named schema_path
 * ("topology.rng", see sim-schemas.h): FALSE with SIM_ERROR_XML naming the
 * first violation (SIM_ERROR_IO if no such schema: a build bug). */
gboolean sim_xml_validate (xmlDoc *doc, const char *path, const char *schema_path, GError **error);

/* the line of attribute name (or, for NULL, of the start of the tag);
 * O(length of the tag + log lines) for a node of sim_xml_load */
long sim_xml_attr_line (xmlNode *node, const char *name);

/* value as a message quotes it: at most SIM_XML_MAX_QUOTE characters, then
 * "..." (caller g_free()s; NULL gives "") */
char *sim_xml_shorten (const char *value);

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
