/* sim-units.c — see sim-units.h for the grammar. */
#include "sim-units.h"

#include <math.h>
#include <string.h>

#include "sim-error.h"

typedef enum {
  KIND_BYTES,
  KIND_BANDWIDTH,
  KIND_FLOP_RATE,
  KIND_TIME,
} Kind;

static const char *
kind_example (Kind kind)
{
  switch (kind) {
  case KIND_BYTES: return "a size such as 80GiB, 512MB or 4096B";
  case KIND_BANDWIDTH: return "a bandwidth such as 450GB/s or 400Gb/s";
  case KIND_FLOP_RATE: return "a rate such as 989.4TFLOP/s";
  case KIND_TIME: return "a time such as 500ns, 1.5us, 2ms or 1s";
  }
  return "a quantity";
}

/* a multiplier for a prefix at the start of unit; sets *len to its length */
static gboolean
parse_prefix (const char *unit, gboolean allow_binary, double *mult, gsize *len)
{
  static const struct { char c; double dec; double bin; } table[] = {
    { 'k', 1e3, 0x1p10 }, { 'M', 1e6, 0x1p20 }, { 'G', 1e9, 0x1p30 },
    { 'T', 1e12, 0x1p40 }, { 'P', 1e15, 0x1p50 }, { 'E', 1e18, 0x1p60 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (table); i++) {
    if (unit[0] != table[i].c)
      continue;
    if (unit[1] == 'i') {
      if (!allow_binary)
        return FALSE;
      *mult = table[i].bin;
      *len = 2;
      return TRUE;
    }
    *mult = table[i].dec;
    *len = 1;
    return TRUE;
  }
  /* binary kibi is written Ki; accept it although plain K is refused */
  if (unit[0] == 'K' && unit[1] == 'i' && allow_binary) {
    *mult = 0x1p10;
    *len = 2;
    return TRUE;
  }
  *mult = 1.0;
  *len = 0;
  return TRUE;
}

/* the number part: digits, optional fraction, optional exponent */
static gboolean
split_number (const char *text, double *value, const char **unit)
{
  const char *p = text;
  gboolean digits = FALSE;

  while (g_ascii_isdigit (*p)) {
    p++;
    digits = TRUE;
  }
  if (*p == '.') {
    p++;
    while (g_ascii_isdigit (*p)) {
      p++;
      digits = TRUE;
    }
  }
  if (!digits)
    return FALSE;
  /* an exponent only when digits follow: "1e9B" but not "1EB" (exabyte) */
  if ((*p == 'e' || *p == 'E')) {
    const char *q = p + 1;
    if (*q == '+' || *q == '-')
      q++;
    if (g_ascii_isdigit (*q)) {
      while (g_ascii_isdigit (*q))
        q++;
      p = q;
    }
  }
  {
    g_autofree char *num = g_strndup (text, (gsize) (p - text));
    *value = g_ascii_strtod (num, NULL);
  }
  if (*p == ' ')
    p++;
  *unit = p;
  return TRUE;
}

/* the number times its unit must still be a finite double: "95e300GB/s"
 * is finite as a number and infinite in bytes/s */
static gboolean
finish (Kind kind, const char *text, double v, double *out, GError **error)
{
  if (!isfinite (v)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_UNIT, "expected %s, got the out-of-range number '%s'",
                 kind_example (kind), text);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

static gboolean
parse_quantity (const char *text, Kind kind, double *out, GError **error)
{
  double value = 0.0;
  double mult = 1.0;
  gsize plen = 0;
  const char *unit = NULL;
  const char *rest = NULL;

  if (text == NULL || *text == '\0') {
    g_set_error (error, SIM_ERROR, SIM_ERROR_UNIT, "expected %s, got an empty value",
                 kind_example (kind));
    return FALSE;
  }
  if (text[0] == '-') {
    g_set_error (error, SIM_ERROR, SIM_ERROR_UNIT, "expected %s, got a negative value '%s'",
                 kind_example (kind), text);
    return FALSE;
  }
  if (!split_number (text[0] == '+' ? text + 1 : text, &value, &unit)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_UNIT, "expected %s, got '%s'", kind_example (kind),
                 text);
    return FALSE;
  }
  if (!isfinite (value)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_UNIT, "expected %s, got the out-of-range number '%s'",
                 kind_example (kind), text);
    return FALSE;
  }
  if (*unit == '\0') {
    g_set_error (error, SIM_ERROR, SIM_ERROR_UNIT, "expected %s, got '%s' with no unit",
                 kind_example (kind), text);
    return FALSE;
  }

  switch (kind) {
  case KIND_TIME:
    if (g_str_equal (unit, "s"))
      mult = 1.0;
    else if (g_str_equal (unit, "ms"))
      mult = 1e-3;
    else if (g_str_equal (unit, "us") || g_str_equal (unit, "\xc2\xb5s"))
      mult = 1e-6;
    else if (g_str_equal (unit, "ns"))
      mult = 1e-9;
    else
      goto unknown;
    return finish (kind, text, value * mult, out, error);

  case KIND_FLOP_RATE:
    if (!parse_prefix (unit, FALSE, &mult, &plen))
      goto unknown;
    if (!g_str_equal (unit + plen, "FLOP/s"))
      goto unknown;
    return finish (kind, text, value * mult, out, error);

  case KIND_BYTES:
  case KIND_BANDWIDTH: {
    double per_unit = 1.0;
    if (!parse_prefix (unit, TRUE, &mult, &plen))
      goto unknown;
    rest = unit + plen;
    if (rest[0] == 'B')
      per_unit = 1.0;
    else if (rest[0] == 'b' && kind == KIND_BANDWIDTH)
      per_unit = 1.0 / 8.0;
    else if (rest[0] == 'b') {
      g_set_error (error, SIM_ERROR, SIM_ERROR_UNIT,
                   "expected %s in bytes (B), got '%s' in bits (b)", kind_example (kind), text);
      return FALSE;
    } else
      goto unknown;
    rest++;
    if (kind == KIND_BANDWIDTH && !g_str_equal (rest, "/s"))
      goto unknown;
    if (kind == KIND_BYTES && *rest != '\0')
      goto unknown;
    return finish (kind, text, value * mult * per_unit, out, error);
  }
  }

unknown:
  g_set_error (error, SIM_ERROR, SIM_ERROR_UNIT, "expected %s, got '%s' with unknown unit '%s'",
               kind_example (kind), text, unit);
  return FALSE;
}

gboolean
sim_units_parse_bytes (const char *text, guint64 *out_bytes, GError **error)
{
  double v = 0.0;
  if (!parse_quantity (text, KIND_BYTES, &v, error))
    return FALSE;
  /* 2^62 bytes is four exbibytes: anything larger is a typo, not a GPU */
  if (v >= 0x1p62) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_UNIT, "expected %s, got the absurdly large '%s'",
                 kind_example (KIND_BYTES), text);
    return FALSE;
  }
  *out_bytes = (guint64) llround (v);
  return TRUE;
}

gboolean
sim_units_parse_bandwidth (const char *text, double *out_bytes_per_s, GError **error)
{
  return parse_quantity (text, KIND_BANDWIDTH, out_bytes_per_s, error);
}

gboolean
sim_units_parse_flop_rate (const char *text, double *out_flop_per_s, GError **error)
{
  return parse_quantity (text, KIND_FLOP_RATE, out_flop_per_s, error);
}

gboolean
sim_units_parse_time (const char *text, double *out_s, GError **error)
{
  return parse_quantity (text, KIND_TIME, out_s, error);
}

gboolean
sim_units_foreach_key_value (const char *text, SimKeyValueFunc f, gpointer data, GError **error)
{
  g_auto (GStrv) items = g_strsplit (text, ",", -1);
  for (guint i = 0; items[i] != NULL; i++) {
    g_autofree char *item = g_strstrip (g_strdup (items[i]));
    char *eq = strchr (item, '=');
    if (*item == '\0')
      continue;
    if (eq != NULL)
      *eq = '\0';
    if (!f (item, eq != NULL ? eq + 1 : NULL, data, error))
      return FALSE;
  }
  return TRUE;
}

gboolean
sim_units_parse_count (const char *text, double *out, GError **error)
{
  char *end = NULL;
  double v = g_ascii_strtod (text, &end);
  double scale = 1;
  if (end != text && *end != '\0' && end[1] == '\0') {
    switch (*end) {
    case 'k': case 'K': scale = 1e3; end++; break;
    case 'M': scale = 1e6; end++; break;
    case 'B': case 'G': scale = 1e9; end++; break;
    case 'T': scale = 1e12; end++; break;
    default: break;
    }
  }
  v *= scale;
  if (end == text || *end != '\0' || !isfinite (v) || v <= 0 || v >= 1e18) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_UNIT,
                 "expected a positive count such as 15T, 300B or 2.5e12, got '%.40s'", text);
    return FALSE;
  }
  *out = v;
  return TRUE;
}
