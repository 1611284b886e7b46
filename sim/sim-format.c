#include "sim-format.h"

#include <string.h>

char *
sim_format_gb (guint64 bytes)
{
  return g_strdup_printf ("%.2f GB", (double) bytes / 1e9);
}

char *
sim_format_gib (guint64 bytes)
{
  return g_strdup_printf ("%.2f GiB", (double) bytes / 1073741824.0);
}

char *
sim_format_count (guint64 n)
{
  g_autofree char *digits = g_strdup_printf ("%" G_GUINT64_FORMAT, n);
  GString *s = g_string_new (NULL);
  gsize len = strlen (digits);
  for (gsize i = 0; i < len; i++) {
    if (i > 0 && (len - i) % 3 == 0)
      g_string_append_c (s, ',');
    g_string_append_c (s, digits[i]);
  }
  return g_string_free (s, FALSE);
}

char *
sim_format_billions (guint64 n)
{
  if (n >= 1000000000u)
    return g_strdup_printf ("%.2f B", (double) n / 1e9);
  return g_strdup_printf ("%.1f M", (double) n / 1e6);
}

/* whether a word is a number, kept on the line of the word after it (its
 * unit: "400 Gb/s", "45.2 GB", "4 mb") */
static gboolean
is_number (const char *w)
{
  gsize n = strlen (w);
  /* an operator ("> 1", "x 8") stays with what follows it too */
  if (g_str_equal (w, ">") || g_str_equal (w, "<") || g_str_equal (w, "=") || g_str_equal (w, "x") ||
      g_str_equal (w, ">=") || g_str_equal (w, "<="))
    return TRUE;
  if (n > 0 && w[0] == '(')
    w++, n--;
  return n > 0 && g_ascii_isdigit (w[n - 1]) && (g_ascii_isdigit (w[0]) || w[0] == '+' || w[0] == '-');
}

void
sim_format_append_wrapped (GString *out, const char *text, int col, int indent, int width)
{
  g_auto (GStrv) words = g_strsplit (text, " ", -1);
  for (guint i = 0; words[i] != NULL; i++) {
    int len = (int) strlen (words[i]);
    /* the number and its unit as one piece */
    if (is_number (words[i]) && words[i + 1] != NULL)
      len += 1 + (int) strlen (words[i + 1]);
    if (i > 0 && col + 1 + len > width) {
      g_string_append_printf (out, "\n%*s", indent, "");
      col = indent;
    } else if (i > 0) {
      g_string_append_c (out, ' ');
      col++;
    }
    g_string_append (out, words[i]);
    col += (int) strlen (words[i]);
    if (is_number (words[i]) && words[i + 1] != NULL) {
      i++;
      g_string_append_printf (out, " %s", words[i]);
      col += 1 + (int) strlen (words[i]);
    }
  }
}
