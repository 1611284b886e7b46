/* sim-error.h — the one error domain of libsim.
 *
 * Every runtime failure (bad input, impossible plan, I/O) is reported as a
 * GError in SIM_ERROR.  Messages are lowercase, have no final period and, for
 * input files, start with "file:line: ".  The CLI maps every code below to
 * exit status 2 except SIM_ERROR_IO on output, which is also 2: a planning tool
 * never half-succeeds.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define SIM_ERROR (sim_error_quark ())
/* never fails; any thread */
GQuark sim_error_quark (void);

typedef enum {
  SIM_ERROR_UNIT,      /* a quantity without a unit, or with an unknown one */
  SIM_ERROR_XML,       /* malformed XML, schema violation, bad attribute value */
  SIM_ERROR_TOPOLOGY,  /* a well-formed topology that cannot be used (no route, ...) */
  SIM_ERROR_MODEL,     /* a well-formed model that cannot be used */
  SIM_ERROR_PLAN,      /* a layout that does not fit the topology or model */
  SIM_ERROR_USAGE,     /* bad command-line flag or value */
  SIM_ERROR_IO,        /* a file that cannot be read or written */
} SimError;

G_END_DECLS
