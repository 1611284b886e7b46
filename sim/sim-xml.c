/* sim-xml.c — see sim-xml.h */
#include "sim-xml.h"

#include <gio/gio.h>
#include <libxml/parser.h>
#include <libxml/relaxng.h>
#include <math.h>
#include <string.h>

#include "sim-error.h"
#include "sim-units.h"

typedef struct {
  const char *file;
  GString *first; /* the first error only: later ones are usually fallout */
} ErrorSink;

/* libxml2's wording, made to read like ours: one line, lowercase, no
 * advice about parser flags the user cannot set */
static char *
tidy_message (const char *raw)
{
  g_autofree char *msg = g_strstrip (g_strdup (raw != NULL ? raw : "malformed XML"));
  char *nl = strchr (msg, '\n');
  if (nl != NULL)
    *nl = '\0';
  g_strstrip (msg);
  if (strstr (msg, "xcessive depth") != NULL)
    return g_strdup ("expected at most 256 levels of nested elements");
  if (g_str_equal (msg, "Document is empty") || g_str_has_prefix (msg, "Start tag expected"))
    return g_strdup ("expected an XML document starting with '<'");
  if (msg[0] != '\0' && g_ascii_isupper (msg[0]) && !g_ascii_isupper (msg[1]))
    msg[0] = g_ascii_tolower (msg[0]);
  return g_steal_pointer (&msg);
}

static void
collect_error (void *data, const xmlError *err)
{
  ErrorSink *sink = data;
  g_autofree char *msg = NULL;

  if (sink->first != NULL || err == NULL)
    return;
  msg = tidy_message (err->message);
  sink->first = g_string_new (NULL);
  g_string_printf (sink->first, "%s:%d: %s", sink->file, err->line > 0 ? err->line : 1, msg);
}

/* libxml2 also reports some errors through its generic handler, which
 * prints to stderr: stdout and stderr belong to sim */
static void
silent (void *data, const char *fmt, ...)
{
}

static void
collect_error_compat (void *data, xmlError *err)
{
  collect_error (data, err);
}

/* the line of the first "<!DOCTYPE" or "<!ENTITY", or 0 */
static int
find_dtd_line (const char *buf, gsize len)
{
  int line = 1;
  for (gsize i = 0; i < len; i++) {
    if (buf[i] == '\n')
      line++;
    else if (buf[i] == '<' && i + 2 < len && buf[i + 1] == '!' &&
             (strncmp (buf + i, "<!DOCTYPE", MIN (9, len - i)) == 0 ||
              strncmp (buf + i, "<!ENTITY", MIN (8, len - i)) == 0))
      return line;
  }
  return 0;
}

static xmlRelaxNG *
load_schema (const char *schema_path, GError **error)
{
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (GError) local = NULL;
  xmlRelaxNGParserCtxt *pctx = NULL;
  xmlRelaxNG *schema = NULL;
  gsize size = 0;
  const char *data = NULL;

  bytes = g_resources_lookup_data (schema_path, G_RESOURCE_LOOKUP_FLAGS_NONE, &local);
  if (bytes == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "internal schema %s is missing: %s",
                 schema_path, local->message);
    return NULL;
  }
  data = g_bytes_get_data (bytes, &size);
  pctx = xmlRelaxNGNewMemParserCtxt (data, (int) size);
  schema = xmlRelaxNGParse (pctx);
  xmlRelaxNGFreeParserCtxt (pctx);
  if (schema == NULL)
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "internal schema %s does not compile",
                 schema_path);
  return schema;
}

void
sim_xml_free (xmlDoc *doc)
{
  if (doc == NULL)
    return;
  g_free (doc->_private);
  xmlFreeDoc (doc);
}

xmlDoc *
sim_xml_load (const char *path, GError **error)
{
  g_autofree char *buf = NULL;
  g_autoptr (GError) local = NULL;
  xmlDoc *doc = NULL;
  gsize len = 0;
  ErrorSink sink = { path, NULL };
  xmlParserCtxt *ctxt = NULL;
  int dtd_line = 0;
  gsize lead = 0;

  if (g_file_test (path, G_FILE_TEST_IS_DIR)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: is a directory, expected an XML file", path);
    return NULL;
  }
  if (!g_file_get_contents (path, &buf, &len, &local)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: cannot read: %s", path, local->message);
    return NULL;
  }
  if (len > SIM_XML_MAX_BYTES) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML, "%s:1: expected an XML file under %u MiB",
                 path, SIM_XML_MAX_BYTES >> 20);
    return NULL;
  }
  while (lead < len && g_ascii_isspace (buf[lead]))
    lead++;
  if (lead == len) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML, "%s:1: expected an XML document, got an empty file", path);
    return NULL;
  }
  if (buf[lead] != '<' && !(len >= 3 && (guchar) buf[0] == 0xef && (guchar) buf[1] == 0xbb)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                 "%s:1: expected an XML document starting with '<', this is not XML", path);
    return NULL;
  }
  dtd_line = find_dtd_line (buf, len);
  if (dtd_line > 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                 "%s:%d: expected no DOCTYPE or ENTITY declarations (they are refused for safety)",
                 path, dtd_line);
    return NULL;
  }

  ctxt = xmlNewParserCtxt ();
  if (ctxt == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: out of memory", path);
    return NULL;
  }
  xmlSetStructuredErrorFunc (&sink, collect_error_compat);
  xmlSetGenericErrorFunc (NULL, silent);
  doc = xmlCtxtReadMemory (ctxt, buf, (int) len, path, NULL,
                           XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_NOERROR);
  xmlSetStructuredErrorFunc (NULL, NULL);
  xmlSetGenericErrorFunc (NULL, NULL);
  xmlFreeParserCtxt (ctxt);
  if (doc == NULL || sink.first != NULL) {
    if (sink.first != NULL)
      g_set_error (error, SIM_ERROR, SIM_ERROR_XML, "%s", sink.first->str);
    else
      g_set_error (error, SIM_ERROR, SIM_ERROR_XML, "%s:1: expected well-formed XML", path);
    if (sink.first != NULL)
      g_string_free (sink.first, TRUE);
    sim_xml_free (doc);
    return NULL;
  }
  /* the text, for finding the line of an attribute in a multi-line tag */
  doc->_private = g_steal_pointer (&buf);
  return doc;
}

gboolean
sim_xml_validate (xmlDoc *doc, const char *path, const char *schema_path, GError **error)
{
  ErrorSink sink = { path, NULL };
  xmlRelaxNG *schema = NULL;
  xmlRelaxNGValidCtxt *vctxt = NULL;
  int rc = 0;

  schema = load_schema (schema_path, error);
  if (schema == NULL)
    return FALSE;
  vctxt = xmlRelaxNGNewValidCtxt (schema);
  xmlRelaxNGSetValidStructuredErrors (vctxt, collect_error_compat, &sink);
  xmlSetGenericErrorFunc (NULL, silent);
  rc = xmlRelaxNGValidateDoc (vctxt, doc);
  xmlSetGenericErrorFunc (NULL, NULL);
  xmlRelaxNGFreeValidCtxt (vctxt);
  xmlRelaxNGFree (schema);
  if (rc == 0)
    return TRUE;
  if (sink.first != NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML, "%s", sink.first->str);
    g_string_free (sink.first, TRUE);
  } else {
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML, "%s:1: expected a document in the documented format",
                 path);
  }
  return FALSE;
}

/* The line of attribute name in node's start tag.  libxml2 numbers a node
 * by the line where its start tag ends; a tag spread over several lines
 * should report the line that holds the attribute. */
long
sim_xml_attr_line (xmlNode *node, const char *name)
{
  long end = xmlGetLineNo (node);
  const char *text = node->doc != NULL ? node->doc->_private : NULL;
  g_autofree char *tag = NULL;
  g_autofree char *attr = NULL;
  g_auto (GStrv) lines = NULL;
  long start = end;

  if (text == NULL || end <= 0)
    return end;
  lines = g_strsplit (text, "\n", (int) end + 1);
  if (g_strv_length (lines) < (guint) end)
    return end;
  tag = g_strconcat ("<", (const char *) node->name, NULL);
  while (start > 1 && start > end - 64 && strstr (lines[start - 1], tag) == NULL)
    start--;
  if (name == NULL)
    return start;
  attr = g_strconcat (name, "=", NULL);
  for (long l = start; l <= end; l++) {
    const char *hit = strstr (lines[l - 1], attr);
    /* a whole attribute name, not the tail of a longer one */
    while (hit != NULL && hit > lines[l - 1] && !g_ascii_isspace (hit[-1]))
      hit = strstr (hit + 1, attr);
    if (hit != NULL)
      return l;
  }
  return start;
}

static void
attr_error (GError **error, const char *file, xmlNode *node, const char *name, const char *what,
            const char *detail)
{
  g_set_error (error, SIM_ERROR, SIM_ERROR_XML, "%s:%ld: attribute %s of <%s>: expected %s%s%s",
               file, sim_xml_attr_line (node, name), name, (const char *) node->name, what,
               detail != NULL ? ", " : "", detail != NULL ? detail : "");
}

gboolean
sim_xml_get_string (const char *file, xmlNode *node, const char *name, char **out,
                    GError **error)
{
  xmlChar *v = xmlGetProp (node, (const xmlChar *) name);
  if (v == NULL) {
    attr_error (error, file, node, name, "a value", "it is missing");
    return FALSE;
  }
  *out = g_strdup ((const char *) v);
  xmlFree (v);
  return TRUE;
}

gboolean
sim_xml_get_uint (const char *file, xmlNode *node, const char *name, guint64 min, guint64 max,
                  guint64 *out, GError **error)
{
  g_autofree char *v = NULL;
  g_autofree char *what = NULL;
  if (!sim_xml_get_string (file, node, name, &v, error))
    return FALSE;
  if (!g_ascii_string_to_unsigned (g_strstrip (v), 10, min, max, out, NULL)) {
    what = g_strdup_printf ("a whole number from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT,
                            min, max);
    g_autofree char *got = g_strdup_printf ("got '%s'", v);
    attr_error (error, file, node, name, what, got);
    return FALSE;
  }
  return TRUE;
}

gboolean
sim_xml_get_bool (const char *file, xmlNode *node, const char *name, gboolean *out,
                  GError **error)
{
  g_autofree char *v = NULL;
  if (!sim_xml_get_string (file, node, name, &v, error))
    return FALSE;
  if (g_str_equal (v, "true"))
    *out = TRUE;
  else if (g_str_equal (v, "false"))
    *out = FALSE;
  else {
    g_autofree char *got = g_strdup_printf ("got '%s'", v);
    attr_error (error, file, node, name, "true or false", got);
    return FALSE;
  }
  return TRUE;
}

gboolean
sim_xml_get_double (const char *file, xmlNode *node, const char *name, double min, double max,
                    double *out, GError **error)
{
  g_autofree char *v = NULL;
  char *end = NULL;
  double d = 0;
  if (!sim_xml_get_string (file, node, name, &v, error))
    return FALSE;
  d = g_ascii_strtod (v, &end);
  if (end == v || *end != '\0' || !isfinite (d) || d < min || d > max) {
    g_autofree char *what = g_strdup_printf ("a number from %g to %g", min, max);
    g_autofree char *got = g_strdup_printf ("got '%s'", v);
    attr_error (error, file, node, name, what, got);
    return FALSE;
  }
  *out = d;
  return TRUE;
}

typedef gboolean (*QuantityParser) (const char *text, double *out, GError **error);

static gboolean
get_quantity (const char *file, xmlNode *node, const char *name, QuantityParser parse,
              gboolean allow_zero, double *out, GError **error)
{
  g_autofree char *v = NULL;
  g_autoptr (GError) local = NULL;
  if (!sim_xml_get_string (file, node, name, &v, error))
    return FALSE;
  if (!parse (v, out, &local)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_UNIT, "%s:%ld: attribute %s of <%s>: %s", file,
                 sim_xml_attr_line (node, name), name, (const char *) node->name, local->message);
    return FALSE;
  }
  if (!allow_zero && *out <= 0.0) {
    g_autofree char *got = g_strdup_printf ("got '%s'", v);
    attr_error (error, file, node, name, "a value above zero", got);
    return FALSE;
  }
  return TRUE;
}

gboolean
sim_xml_get_bytes (const char *file, xmlNode *node, const char *name, guint64 *out,
                   GError **error)
{
  g_autofree char *v = NULL;
  g_autoptr (GError) local = NULL;
  if (!sim_xml_get_string (file, node, name, &v, error))
    return FALSE;
  if (!sim_units_parse_bytes (v, out, &local)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_UNIT, "%s:%ld: attribute %s of <%s>: %s", file,
                 sim_xml_attr_line (node, name), name, (const char *) node->name, local->message);
    return FALSE;
  }
  if (*out == 0) {
    g_autofree char *got = g_strdup_printf ("got '%s'", v);
    attr_error (error, file, node, name, "a size above zero", got);
    return FALSE;
  }
  return TRUE;
}

gboolean
sim_xml_get_bandwidth (const char *file, xmlNode *node, const char *name, double *out,
                       GError **error)
{
  return get_quantity (file, node, name, sim_units_parse_bandwidth, FALSE, out, error);
}

gboolean
sim_xml_get_flop_rate (const char *file, xmlNode *node, const char *name, double *out,
                       GError **error)
{
  return get_quantity (file, node, name, sim_units_parse_flop_rate, FALSE, out, error);
}

gboolean
sim_xml_get_time (const char *file, xmlNode *node, const char *name, double *out,
                  GError **error)
{
  return get_quantity (file, node, name, sim_units_parse_time, TRUE, out, error);
}

xmlNode *
sim_xml_require (const char *file, xmlNode *parent, const char *name, GError **error)
{
  xmlNode *n = sim_xml_first_element (parent, name);
  if (n == NULL)
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML, "%s:%ld: <%s>: expected a <%s> element inside",
                 file, sim_xml_attr_line (parent, NULL), (const char *) parent->name, name);
  return n;
}

gboolean
sim_xml_is (xmlNode *node, const char *name)
{
  return node != NULL && node->type == XML_ELEMENT_NODE &&
         g_str_equal ((const char *) node->name, name);
}

xmlNode *
sim_xml_next_element (xmlNode *node, const char *name)
{
  for (xmlNode *n = node != NULL ? node->next : NULL; n != NULL; n = n->next)
    if (n->type == XML_ELEMENT_NODE && (name == NULL || sim_xml_is (n, name)))
      return n;
  return NULL;
}

xmlNode *
sim_xml_first_element (xmlNode *parent, const char *name)
{
  for (xmlNode *n = parent != NULL ? parent->children : NULL; n != NULL; n = n->next)
    if (n->type == XML_ELEMENT_NODE && (name == NULL || sim_xml_is (n, name)))
      return n;
  return NULL;
}
