/* sim-xml.c — see sim-xml.h */
#include "sim-xml.h"

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/relaxng.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "sim-error.h"
#include "sim-input.h"
#include "sim-schemas.h"
#include "sim-units.h"

/* messages stay one bounded line: a million-digit value must not make a
 * megabyte of stderr */
#define MAX_MESSAGE 240

typedef struct {
  const char *file;
  GString *first; /* the first error only: later ones are usually fallout */
} ErrorSink;

/* what sim_xml_load keeps in doc->_private: the text, for finding an
 * attribute in its start tag, and where each line and start tag begins */
typedef struct {
  char *text;
  gsize len;
  GArray *line_starts; /* guint32 byte offsets, line 1 first */
  GArray *tags;        /* guint32 byte offset of each start tag's '<', in document order */
} DocText;

/* the state of one parse, in the parser context's _private */
typedef struct {
  guint n_started; /* elements so far; node->_private is the count, from 1 */
  long refused_line; /* a DOCTYPE or ENTITY declaration seen by the parser */
} ParseState;

static void
doc_text_free (DocText *t)
{
  if (t == NULL)
    return;
  g_free (t->text);
  g_clear_pointer (&t->line_starts, g_array_unref);
  g_clear_pointer (&t->tags, g_array_unref);
  g_free (t);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (DocText, doc_text_free)

/* at most max characters of a UTF-8 string, then "..." (new string) */
static char *
shorten (const char *s, gsize max)
{
  const char *end = s;
  g_autofree char *cut = NULL;
  for (gsize i = 0; i < max && *end != '\0'; i++)
    end = g_utf8_next_char (end);
  if (*end == '\0')
    return g_strdup (s);
  cut = g_strndup (s, (gsize) (end - s));
  return g_strconcat (cut, "...", NULL);
}

char *
sim_xml_shorten (const char *value)
{
  if (value == NULL)
    return g_strdup ("");
  if (!g_utf8_validate (value, -1, NULL))
    return g_strdup ("(not UTF-8)");
  return shorten (value, SIM_XML_MAX_QUOTE);
}

/* g_set_error with the message cut to MAX_MESSAGE characters */
G_GNUC_PRINTF (3, 4) static void
set_error (GError **error, int code, const char *fmt, ...)
{
  g_autofree char *msg = NULL;
  va_list ap;
  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  if (g_utf8_validate (msg, -1, NULL) && g_utf8_strlen (msg, -1) > MAX_MESSAGE) {
    g_autofree char *cut = g_utf8_substring (msg, 0, MAX_MESSAGE);
    g_set_error (error, SIM_ERROR, code, "%s...", cut);
  } else if (strlen (msg) > MAX_MESSAGE) {
    msg[MAX_MESSAGE] = '\0';
    g_set_error (error, SIM_ERROR, code, "%s...", msg);
  } else {
    g_set_error_literal (error, SIM_ERROR, code, msg);
  }
}

/* libxml2's wording for a well-formedness error, made to read like ours:
 * one line saying what was expected, no advice about parser flags the user
 * cannot set, names cut short.  Two keep libxml2's words first ("premature
 * end of data", "input is not proper UTF-8"): tests/data/bad/MANIFEST pins
 * them. */
static char *
tidy_message (const xmlError *err)
{
  g_autofree char *msg = g_strstrip (g_strdup (err->message != NULL ? err->message : "malformed XML"));
  g_autofree char *s1 = err->str1 != NULL ? sim_xml_shorten (err->str1) : g_strdup ("?");
  g_autofree char *s2 = err->str2 != NULL ? sim_xml_shorten (err->str2) : g_strdup ("?");
  g_autofree char *first = NULL;
  char *nl = strchr (msg, '\n');
  if (nl != NULL)
    *nl = '\0';
  g_strstrip (msg);

  switch (err->code) {
  case XML_ERR_DOCUMENT_EMPTY:
  case XML_ERR_DOCUMENT_START:
    return g_strdup ("expected an XML document starting with '<'");
  case XML_ERR_DOCUMENT_END:
    return g_strdup ("expected nothing after the end of the root element");
  case XML_ERR_TAG_NAME_MISMATCH:
    return g_strdup_printf ("expected </%s> to close the tag opened on line %d, got </%s>", s1,
                            err->int1, s2);
  case XML_ERR_TAG_NOT_FINISHED:
    return g_strdup_printf ("premature end of data in tag %s line %d: expected </%s> before the end of the file",
                            s1, err->int1, s1);
  case XML_ERR_INVALID_ENCODING:
    return g_strdup ("input is not proper UTF-8: expected UTF-8 text");
  case XML_ERR_INVALID_CHAR:
    /* libxml2 2.9 files bad UTF-8 under this code too */
    if (strstr (msg, "not proper UTF-8") != NULL)
      return g_strdup ("input is not proper UTF-8: expected UTF-8 text");
    return g_strdup ("expected only characters XML allows (no control characters)");
  case XML_ERR_INVALID_CHARREF:
  case XML_ERR_INVALID_DEC_CHARREF:
  case XML_ERR_INVALID_HEX_CHARREF:
    return g_strdup ("expected only characters XML allows (no control characters)");
  case XML_ERR_UNDECLARED_ENTITY:
  case XML_WAR_UNDECLARED_ENTITY:
  case XML_ERR_ENTITYREF_SEMICOL_MISSING:
  case XML_ERR_ENTITYREF_NO_NAME:
    return g_strdup ("expected no entity references other than &amp; &lt; &gt; &quot; &apos;");
  case XML_ERR_LT_IN_ATTRIBUTE:
    return g_strdup ("expected no '<' in an attribute value (write &lt;)");
  case XML_ERR_ATTRIBUTE_NOT_STARTED:
  case XML_ERR_ATTRIBUTE_WITHOUT_VALUE:
    return g_strdup ("expected name=\"value\" for each attribute");
  case XML_ERR_ATTRIBUTE_NOT_FINISHED:
    if (strstr (msg, "too long") != NULL)
      return g_strdup ("expected an attribute value of at most 10,000,000 characters");
    return g_strdup ("expected a closing quote after the attribute value");
  case XML_ERR_ATTRIBUTE_REDEFINED:
    return g_strdup_printf ("expected each attribute once, got %s twice", s1);
  case XML_ERR_GT_REQUIRED:
    return g_strdup ("expected '>' or '/>' to close the start tag");
  case XML_ERR_LTSLASH_REQUIRED:
  case XML_ERR_NOT_WELL_BALANCED:
    return g_strdup ("expected a closing tag for every element");
  case XML_ERR_NAME_REQUIRED:
    return g_strdup ("expected an element or attribute name");
  case XML_ERR_NAME_TOO_LONG:
    return g_strdup ("expected names of at most 50,000 characters");
  case XML_ERR_SPACE_REQUIRED:
    return g_strdup ("expected whitespace between attributes");
  case XML_ERR_COMMENT_NOT_FINISHED:
  case XML_ERR_HYPHEN_IN_COMMENT:
    return g_strdup ("expected '-->' to close the comment, and no '--' inside it");
  case XML_ERR_PI_NOT_FINISHED:
  case XML_ERR_PI_NOT_STARTED:
  case XML_ERR_RESERVED_XML_NAME:
    return g_strdup ("expected a processing instruction closed by '?>', and the XML declaration only first");
  case XML_ERR_CDATA_NOT_FINISHED:
    return g_strdup ("expected ']]>' to close the CDATA section");
  default:
    break;
  }
  if (strstr (msg, "xcessive depth") != NULL)
    return g_strdup ("expected at most 256 levels of nested elements");
  if (msg[0] != '\0' && g_ascii_isupper (msg[0]) && !g_ascii_isupper (msg[1]))
    msg[0] = g_ascii_tolower (msg[0]);
  /* whatever else libxml2 says, bounded */
  first = shorten (msg, 120);
  if (g_str_has_prefix (first, "expect"))
    return g_steal_pointer (&first);
  return g_strconcat ("expected well-formed XML: ", first, NULL);
}

/* a RELAX NG message as one bounded line; it names elements and attributes,
 * and says "expect" itself more often than not */
static char *
tidy_valid_message (const xmlError *err)
{
  g_autofree char *msg = g_strstrip (g_strdup (err->message != NULL ? err->message : "invalid"));
  g_autofree char *cut = NULL;
  char *nl = strchr (msg, '\n');
  if (nl != NULL)
    *nl = '\0';
  g_strstrip (msg);
  if (msg[0] != '\0' && g_ascii_isupper (msg[0]) && !g_ascii_isupper (msg[1]))
    msg[0] = g_ascii_tolower (msg[0]);
  cut = shorten (msg, 160);
  if (strstr (cut, "xpect") != NULL)
    return g_steal_pointer (&cut);
  return g_strconcat ("expected the documented format: ", cut, NULL);
}

static void
collect (ErrorSink *sink, const xmlError *err, gboolean validating)
{
  g_autofree char *msg = NULL;

  if (sink->first != NULL || err == NULL)
    return;
  /* warnings do not stop a parse and are not ours to print */
  if (err->level == XML_ERR_WARNING)
    return;
  msg = validating ? tidy_valid_message (err) : tidy_message (err);
  sink->first = g_string_new (NULL);
  g_string_printf (sink->first, "%s:%d: %s", sink->file, err->line > 0 ? err->line : 1, msg);
}

static void
collect_error_compat (void *data, xmlError *err)
{
  collect (data, err, FALSE);
}

static void
collect_valid_error (void *data, xmlError *err)
{
  collect (data, err, TRUE);
}

/* libxml2 also reports some errors through its generic handler, which
 * prints to stderr: stdout and stderr belong to sim */
static void
silent (void *data, const char *fmt, ...)
{
}

/* the line holding byte offset off: a binary search of the line starts */
static long
line_of (const DocText *t, gsize off)
{
  guint lo = 0, hi = t->line_starts->len;
  while (hi - lo > 1) {
    guint mid = lo + (hi - lo) / 2;
    if (g_array_index (t->line_starts, guint32, mid) <= off)
      lo = mid;
    else
      hi = mid;
  }
  return (long) lo + 1;
}

static GArray *
index_lines (const char *buf, gsize len)
{
  GArray *starts = g_array_new (FALSE, FALSE, sizeof (guint32));
  guint32 zero = 0;
  const char *p = buf, *end = buf + len;
  g_array_append_val (starts, zero);
  while (p < end && (p = memchr (p, '\n', (gsize) (end - p))) != NULL) {
    guint32 next = (guint32) (++p - buf);
    g_array_append_val (starts, next);
  }
  return starts;
}

static gboolean
is_utf8_name (const char *enc, gsize n)
{
  static const char *const ok[] = { "UTF-8", "UTF8", "US-ASCII", "ASCII" };
  for (guint i = 0; i < G_N_ELEMENTS (ok); i++)
    if (n == strlen (ok[i]) && g_ascii_strncasecmp (enc, ok[i], n) == 0)
      return TRUE;
  return FALSE;
}

/* the encoding declaration of <?xml ... ?> at buf, if any, must name UTF-8 */
static gboolean
check_declared_encoding (const char *path, const char *buf, gsize len, GError **error)
{
  const char *end = NULL, *enc = NULL;
  g_autofree char *decl = NULL;
  g_autofree char *name = NULL;
  g_autofree char *shown = NULL;
  gsize n = 0;
  char q = 0;

  if (len < 6 || strncmp (buf, "<?xml", 5) != 0 || !g_ascii_isspace (buf[5]))
    return TRUE;
  end = g_strstr_len (buf, (gssize) MIN (len, 1024), "?>");
  if (end == NULL)
    return TRUE; /* libxml2 says what is wrong with it */
  decl = g_strndup (buf, (gsize) (end - buf));
  enc = strstr (decl, "encoding");
  if (enc == NULL)
    return TRUE;
  enc += strlen ("encoding");
  while (g_ascii_isspace (*enc))
    enc++;
  if (*enc == '=')
    enc++;
  while (g_ascii_isspace (*enc))
    enc++;
  if (*enc == '"' || *enc == '\'')
    q = *enc++;
  while (enc[n] != '\0' && enc[n] != q && !g_ascii_isspace (enc[n]))
    n++;
  if (is_utf8_name (enc, n))
    return TRUE;
  name = g_strndup (enc, n);
  shown = sim_xml_shorten (name);
  set_error (error, SIM_ERROR_XML, "%s:1: expected encoding=\"UTF-8\" (the only encoding sim reads), got '%s'",
             path, shown);
  return FALSE;
}

/* The checks on the raw bytes, made before libxml2 runs (see sim-xml.h):
 * UTF-8 only, no DOCTYPE or ENTITY, at most SIM_XML_MAX_ATTRIBUTES
 * attributes per start tag.  Records where each start tag begins.  A
 * document that is malformed in other ways passes to libxml2, which says
 * what is wrong. */
static gboolean
prescan (const char *path, DocText *t, GError **error)
{
  const char *buf = t->text;
  gsize len = t->len, i = 0;
  const char *nul = memchr (buf, '\0', len);

  if (nul != NULL) {
    set_error (error, SIM_ERROR_XML,
               "%s:%ld: expected UTF-8 text, got a NUL byte (UTF-16 and UTF-32 are not read)", path,
               line_of (t, (gsize) (nul - buf)));
    return FALSE;
  }
  if (len >= 3 && (guchar) buf[0] == 0xef && (guchar) buf[1] == 0xbb && (guchar) buf[2] == 0xbf)
    i = 3;
  if (!check_declared_encoding (path, buf + i, len - i, error))
    return FALSE;

  while (i < len) {
    const char *lt = memchr (buf + i, '<', len - i);
    const char *close = NULL;
    gsize at, j;
    int attrs = 0;
    char q = 0;

    if (lt == NULL)
      break;
    at = (gsize) (lt - buf);
    if (len - at >= 4 && strncmp (lt, "<!--", 4) == 0) {
      close = g_strstr_len (lt + 4, (gssize) (len - at - 4), "-->");
      i = close != NULL ? (gsize) (close - buf) + 3 : len;
      continue;
    }
    if (len - at >= 9 && strncmp (lt, "<![CDATA[", 9) == 0) {
      close = g_strstr_len (lt + 9, (gssize) (len - at - 9), "]]>");
      i = close != NULL ? (gsize) (close - buf) + 3 : len;
      continue;
    }
    if (len - at >= 2 && lt[1] == '?') {
      close = g_strstr_len (lt + 2, (gssize) (len - at - 2), "?>");
      i = close != NULL ? (gsize) (close - buf) + 2 : len;
      continue;
    }
    if ((len - at >= 9 && strncmp (lt, "<!DOCTYPE", 9) == 0) ||
        (len - at >= 8 && strncmp (lt, "<!ENTITY", 8) == 0)) {
      set_error (error, SIM_ERROR_XML,
                 "%s:%ld: expected no DOCTYPE or ENTITY declarations (they are refused for safety)",
                 path, line_of (t, at));
      return FALSE;
    }
    if (len - at < 2 || lt[1] == '!' || lt[1] == '/') {
      i = at + 1;
      continue;
    }
    /* a start tag: count its attributes by their '=' outside quotes (a name
     * cannot hold '=', a value cannot hold '<') */
    {
      guint32 off = (guint32) at;
      g_array_append_val (t->tags, off);
    }
    for (j = at + 1; j < len; j++) {
      char c = buf[j];
      if (c == '<')
        break;
      if (q != 0) {
        if (c == q)
          q = 0;
        continue;
      }
      if (c == '"' || c == '\'')
        q = c;
      else if (c == '>')
        break;
      else if (c == '=' && ++attrs > SIM_XML_MAX_ATTRIBUTES) {
        gsize n = 0;
        g_autofree char *name = NULL;
        g_autofree char *shown = NULL;
        while (at + 1 + n < len && n < 200 && !g_ascii_isspace (buf[at + 1 + n]) &&
               buf[at + 1 + n] != '>' && buf[at + 1 + n] != '/')
          n++;
        name = g_strndup (buf + at + 1, n);
        shown = sim_xml_shorten (g_utf8_validate (name, -1, NULL) ? name : "?");
        set_error (error, SIM_ERROR_XML, "%s:%ld: expected at most %d attributes on <%s>", path,
                   line_of (t, at), SIM_XML_MAX_ATTRIBUTES, shown);
        return FALSE;
      }
    }
    i = j < len && buf[j] == '<' ? j : j + 1;
  }
  return TRUE;
}

/* a DOCTYPE reached the parser (the prescan missed it): stop before its
 * internal subset is read */
static void
refuse_dtd (void *ctx)
{
  xmlParserCtxt *ctxt = ctx;
  ParseState *st = ctxt->_private;
  if (st->refused_line == 0)
    st->refused_line = ctxt->input != NULL && ctxt->input->line > 0 ? ctxt->input->line : 1;
  xmlStopParser (ctxt);
}

static void
on_internal_subset (void *ctx, const xmlChar *name, const xmlChar *external_id,
                    const xmlChar *system_id)
{
  refuse_dtd (ctx);
}

static void
on_entity_decl (void *ctx, const xmlChar *name, int type, const xmlChar *public_id,
                const xmlChar *system_id, xmlChar *content)
{
  refuse_dtd (ctx);
}

/* numbers each element in document order, which is the order of the
 * prescan's start tags */
static void
on_start_element (void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri,
                  int nb_namespaces, const xmlChar **namespaces, int nb_attributes,
                  int nb_defaulted, const xmlChar **attributes)
{
  xmlParserCtxt *ctxt = ctx;
  ParseState *st = ctxt->_private;
  xmlSAX2StartElementNs (ctx, localname, prefix, uri, nb_namespaces, namespaces, nb_attributes,
                         nb_defaulted, attributes);
  st->n_started++;
  if (ctxt->node != NULL && ctxt->node->name == localname)
    ctxt->node->_private = GUINT_TO_POINTER (st->n_started);
}

static xmlRelaxNG *
load_schema (const char *schema_path, GError **error)
{
  const SimSchemaText *text = sim_schemas;
  xmlRelaxNGParserCtxt *pctx = NULL;
  xmlRelaxNG *schema = NULL;

  while (text->name != NULL && strcmp (text->name, schema_path) != 0)
    text++;
  if (text->name == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "internal schema %s is missing", schema_path);
    return NULL;
  }
  pctx = xmlRelaxNGNewMemParserCtxt (text->text, (int) text->size_bytes);
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
  doc_text_free (doc->_private);
  xmlFreeDoc (doc);
}

/* any entity declaration or reference left in the tree (there should be
 * none: no DTD gets through) */
static gboolean
has_entities (xmlNode *n)
{
  for (; n != NULL; n = n->next) {
    if (n->type == XML_ENTITY_REF_NODE || n->type == XML_ENTITY_DECL || n->type == XML_DTD_NODE)
      return TRUE;
    if (n->type == XML_ELEMENT_NODE && has_entities (n->children))
      return TRUE;
  }
  return FALSE;
}

xmlDoc *
sim_xml_load (const char *path, GError **error)
{
  g_autoptr (DocText) t = g_new0 (DocText, 1);
  xmlDoc *doc = NULL;
  ErrorSink sink = { path, NULL };
  ParseState st = { 0, 0 };
  xmlParserCtxt *ctxt = NULL;
  gsize lead = 0;

  if (!sim_input_read (path, SIM_XML_MAX_BYTES, &t->text, &t->len, error))
    return NULL;
  while (lead < t->len && g_ascii_isspace (t->text[lead]))
    lead++;
  if (lead == t->len) {
    set_error (error, SIM_ERROR_XML, "%s:1: expected an XML document, got an empty file", path);
    return NULL;
  }
  if (t->text[lead] != '<' &&
      !(t->len >= 3 && (guchar) t->text[0] == 0xef && (guchar) t->text[1] == 0xbb)) {
    set_error (error, SIM_ERROR_XML,
               "%s:1: expected an XML document starting with '<', this is not XML", path);
    return NULL;
  }
  if (t->len > G_MAXINT) {
    set_error (error, SIM_ERROR_XML, "%s:1: expected a smaller file", path);
    return NULL;
  }
  t->line_starts = index_lines (t->text, t->len);
  t->tags = g_array_new (FALSE, FALSE, sizeof (guint32));
  if (!prescan (path, t, error))
    return NULL;

  ctxt = xmlNewParserCtxt ();
  if (ctxt == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: out of memory", path);
    return NULL;
  }
  ctxt->_private = &st;
  ctxt->sax->internalSubset = on_internal_subset;
  ctxt->sax->externalSubset = on_internal_subset;
  ctxt->sax->entityDecl = on_entity_decl;
  ctxt->sax->startElementNs = on_start_element;
  xmlSetStructuredErrorFunc (&sink, collect_error_compat);
  xmlSetGenericErrorFunc (NULL, silent);
  /* no XML_PARSE_NOENT, XML_PARSE_DTDLOAD or XML_PARSE_HUGE: see sim-xml.h */
  doc = xmlCtxtReadMemory (ctxt, t->text, (int) t->len, path, NULL,
                           XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_NOERROR |
                               XML_PARSE_IGNORE_ENC | XML_PARSE_BIG_LINES);
  xmlSetStructuredErrorFunc (NULL, NULL);
  xmlSetGenericErrorFunc (NULL, NULL);
  xmlFreeParserCtxt (ctxt);
  if (st.refused_line > 0 ||
      (doc != NULL && (doc->intSubset != NULL || doc->extSubset != NULL || has_entities (doc->children)))) {
    set_error (error, SIM_ERROR_XML,
               "%s:%ld: expected no DOCTYPE or ENTITY declarations (they are refused for safety)",
               path, st.refused_line > 0 ? st.refused_line : 1);
    if (sink.first != NULL)
      g_string_free (sink.first, TRUE);
    xmlFreeDoc (doc);
    return NULL;
  }
  if (doc == NULL || sink.first != NULL) {
    if (sink.first != NULL)
      set_error (error, SIM_ERROR_XML, "%s", sink.first->str);
    else
      set_error (error, SIM_ERROR_XML, "%s:1: expected well-formed XML", path);
    if (sink.first != NULL)
      g_string_free (sink.first, TRUE);
    xmlFreeDoc (doc);
    return NULL;
  }
  doc->_private = g_steal_pointer (&t);
  return doc;
}

/* The compiled schemas, one per resource path, kept for the life of the
 * process: compiling one costs more than validating a cluster file against
 * it.  One lock guards the table and every validation, so that no two
 * threads share a schema's validation at once. */
G_LOCK_DEFINE_STATIC (schemas);
static GHashTable *schemas; /* schema path -> xmlRelaxNG * */

gboolean
sim_xml_validate (xmlDoc *doc, const char *path, const char *schema_path, GError **error)
{
  ErrorSink sink = { path, NULL };
  xmlRelaxNG *schema = NULL;
  xmlRelaxNGValidCtxt *vctxt = NULL;
  int rc = 0;

  G_LOCK (schemas);
  if (schemas == NULL)
    schemas = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) xmlRelaxNGFree);
  schema = g_hash_table_lookup (schemas, schema_path);
  if (schema == NULL && (schema = load_schema (schema_path, error)) != NULL)
    g_hash_table_insert (schemas, g_strdup (schema_path), schema);
  if (schema == NULL) {
    G_UNLOCK (schemas);
    return FALSE;
  }
  vctxt = xmlRelaxNGNewValidCtxt (schema);
  xmlRelaxNGSetValidStructuredErrors (vctxt, collect_valid_error, &sink);
  xmlSetGenericErrorFunc (NULL, silent);
  rc = xmlRelaxNGValidateDoc (vctxt, doc);
  xmlSetGenericErrorFunc (NULL, NULL);
  xmlRelaxNGFreeValidCtxt (vctxt);
  G_UNLOCK (schemas);
  if (rc == 0)
    return TRUE;
  if (sink.first != NULL) {
    set_error (error, SIM_ERROR_XML, "%s", sink.first->str);
    g_string_free (sink.first, TRUE);
  } else {
    set_error (error, SIM_ERROR_XML, "%s:1: expected a document in the documented format", path);
  }
  return FALSE;
}

/* the end of the attribute name starting at p (names hold no space, '='
 * or quote) */
static const char *
name_end (const char *p, const char *end)
{
  while (p < end && !g_ascii_isspace (*p) && *p != '=' && *p != '>' && *p != '/' && *p != '"' &&
         *p != '\'')
    p++;
  return p;
}

/* The line of attribute name in node's start tag, found in the text from
 * where the prescan saw the tag begin: the tag's own length, not the file's.
 * libxml2 numbers a node by the line where its start tag ends; a tag spread
 * over several lines should report the line that holds the attribute. */
long
sim_xml_attr_line (xmlNode *node, const char *name)
{
  const DocText *t = node != NULL && node->doc != NULL ? node->doc->_private : NULL;
  guint k = node != NULL ? GPOINTER_TO_UINT (node->_private) : 0;
  gsize at, nlen;
  const char *p, *end;

  if (node == NULL)
    return 1;
  if (t == NULL || k == 0 || k > t->tags->len || node->type != XML_ELEMENT_NODE)
    return MAX (xmlGetLineNo (node), 1);
  at = g_array_index (t->tags, guint32, k - 1);
  nlen = strlen ((const char *) node->name);
  p = t->text + at + 1;
  end = t->text + t->len;
  /* the prescan and libxml2 disagree about this tag: trust libxml2's line */
  if ((gsize) (end - p) < nlen || strncmp (p, (const char *) node->name, nlen) != 0 ||
      name_end (p, end) != p + nlen)
    return MAX (xmlGetLineNo (node), 1);
  if (name == NULL)
    return line_of (t, at);
  p += nlen;
  /* attributes: name = "value", until '>' */
  for (;;) {
    const char *n0, *n1;
    while (p < end && g_ascii_isspace (*p))
      p++;
    if (p >= end || *p == '>' || *p == '/' || *p == '<')
      break;
    n0 = p;
    n1 = name_end (p, end);
    if (n1 == n0)
      break;
    if ((gsize) (n1 - n0) == strlen (name) && strncmp (n0, name, (gsize) (n1 - n0)) == 0)
      return line_of (t, (gsize) (n0 - t->text));
    p = n1;
    while (p < end && g_ascii_isspace (*p))
      p++;
    if (p >= end || *p != '=')
      break;
    p++;
    while (p < end && g_ascii_isspace (*p))
      p++;
    if (p >= end || (*p != '"' && *p != '\''))
      break;
    {
      const char *close = memchr (p + 1, *p, (gsize) (end - p - 1));
      if (close == NULL)
        break;
      p = close + 1;
    }
  }
  return line_of (t, at);
}

static void
attr_error (GError **error, const char *file, xmlNode *node, const char *name, const char *what,
            const char *detail)
{
  set_error (error, SIM_ERROR_XML, "%s:%ld: attribute %s of <%s>: expected %s%s%s", file,
             sim_xml_attr_line (node, name), name, (const char *) node->name, what,
             detail != NULL ? ", " : "", detail != NULL ? detail : "");
}

/* "got 'VALUE'", the value cut short */
static char *
got (const char *value)
{
  g_autofree char *shown = sim_xml_shorten (value);
  return g_strdup_printf ("got '%s'", shown);
}

/* a unit parser's message quotes the whole value: quote it shortened */
static void
unit_error (GError **error, const char *file, xmlNode *node, const char *name, const char *value,
            const char *message)
{
  g_autoptr (GString) msg = g_string_new (message);
  g_autofree char *shown = sim_xml_shorten (value);
  if (strlen (value) > strlen (shown))
    g_string_replace (msg, value, shown, 0);
  set_error (error, SIM_ERROR_UNIT, "%s:%ld: attribute %s of <%s>: %s", file,
             sim_xml_attr_line (node, name), name, (const char *) node->name, msg->str);
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
    g_autofree char *detail = got (v);
    what = g_strdup_printf ("a whole number from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT,
                            min, max);
    attr_error (error, file, node, name, what, detail);
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
    g_autofree char *detail = got (v);
    attr_error (error, file, node, name, "true or false", detail);
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
    g_autofree char *detail = got (v);
    attr_error (error, file, node, name, what, detail);
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
    unit_error (error, file, node, name, v, local->message);
    return FALSE;
  }
  if (!allow_zero && *out <= 0.0) {
    g_autofree char *detail = got (v);
    attr_error (error, file, node, name, "a value above zero", detail);
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
    unit_error (error, file, node, name, v, local->message);
    return FALSE;
  }
  if (*out == 0) {
    g_autofree char *detail = got (v);
    attr_error (error, file, node, name, "a size above zero", detail);
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
    set_error (error, SIM_ERROR_XML, "%s:%ld: <%s>: expected a <%s> element inside", file,
               sim_xml_attr_line (parent, NULL), (const char *) parent->name, name);
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
