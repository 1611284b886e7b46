/* sim-input.h — reading a file the user named: a regular file, of bounded
 * size, read whole.
 *
 * Every input file sim reads (cluster and model XML, calibration includes,
 * --calibration, sweep --merge, nccl-tests logs) goes through here, so that
 * a device node, a FIFO or a huge file is refused in one clear line instead
 * of hanging or filling memory.  The open never blocks (O_NONBLOCK, cleared
 * once the file is known to be regular).  Errors are SIM_ERROR_IO:
 * "PATH: cannot read: REASON" or "PATH: expected a regular file ..." or
 * "PATH: expected a file under N MiB". */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* the largest input file any reader accepts */
#define SIM_INPUT_MAX_BYTES (16u << 20)

/* reads PATH whole into *contents (NUL-terminated, g_free it) and its length
 * into *length (may be NULL); refuses anything but a regular file and files
 * over max_bytes; FALSE with SIM_ERROR_IO; any thread */
gboolean sim_input_read (const char *path, gsize max_bytes, char **contents, gsize *length,
                         GError **error);

G_END_DECLS
