/* sim-units.h — the one parser of quantities at the XML/CLI boundary.
 *
 * A quantity is a decimal number followed by a unit, with at most one space
 * between them: "80GiB", "400Gb/s", "989.4TFLOP/s", "1.5 us".
 *
 * Prefixes: k M G T P E are powers of 10^3 (k is lowercase: "K" alone is
 * rejected because people use it for both 10^3 and 2^10); Ki Mi Gi Ti Pi Ei are
 * powers of 2^10.  "B" is a byte, "b" is a bit.  A missing or unknown unit is
 * an error, and so are NaN, infinity and negative numbers.
 *
 * Results are SI base units: bytes, bytes per second, FLOP per second,
 * seconds.  Display units live in sim-format.h only.
 *
 * Errors are SIM_ERROR_UNIT with a message that does not name the file: the
 * caller prefixes "file:line: ".  Every function here is pure: any thread.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* sizes: B with decimal or binary prefixes; rounded to a whole byte */
gboolean sim_units_parse_bytes (const char *text, guint64 *out_bytes, GError **error);

/* bandwidth per direction: B/s or b/s families ("50GB/s", "400Gb/s") */
gboolean sim_units_parse_bandwidth (const char *text, double *out_bytes_per_s, GError **error);

/* compute rate: FLOP/s with decimal prefixes ("989.4TFLOP/s") */
gboolean sim_units_parse_flop_rate (const char *text, double *out_flop_per_s, GError **error);

/* a count with an optional decimal suffix: K 10^3, M 10^6, B or G 10^9,
 * T 10^12 ("15T" tokens); a positive finite number below 10^18 */
gboolean sim_units_parse_count (const char *text, double *out, GError **error);

/* time: ns, us (or µs), ms, s */
gboolean sim_units_parse_time (const char *text, double *out_s, GError **error);

/* Call f for each item of "key=value,key,key=value" (blanks around items
 * ignored, empty items skipped; value NULL for a bare key); stops at the
 * first FALSE and returns it, with the error f set; TRUE otherwise. */
typedef gboolean (*SimKeyValueFunc) (const char *key, const char *value, gpointer data,
                                     GError **error);
gboolean sim_units_foreach_key_value (const char *text, SimKeyValueFunc f, gpointer data,
                                      GError **error);

G_END_DECLS
