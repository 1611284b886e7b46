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

char *
sim_format_rate (double bytes_per_s)
{
  return g_strdup_printf ("%g GB/s", bytes_per_s / 1e9);
}
