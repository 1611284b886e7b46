/* sim-format.h — display units, for reports only.
 * GB is 10^9 bytes and GiB is 2^30 bytes; both are always labelled. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* each returns a new string (caller g_free()s); never fails; any thread */
char *sim_format_gb (guint64 bytes);     /* "58.83 GB" */
char *sim_format_gib (guint64 bytes);    /* "54.79 GiB" */
char *sim_format_count (guint64 n);      /* "70,553,706,496" */
char *sim_format_billions (guint64 n);   /* "70.55 B" */
/* appends text, which starts at column col, wrapped at width columns with
 * continuation lines indented by indent; a number (and an operator such as
 * "x" or ">") never ends a line: it stays with the word after it, its unit */
void sim_format_append_wrapped (GString *out, const char *text, int col, int indent, int width);

G_END_DECLS
