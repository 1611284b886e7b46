/* sim-io.h — writing output files whole or not at all, and as a set.
 *
 * Rules for every output path:
 * - a regular file (new or existing) is written to a temporary file in the
 *   same directory, which is renamed over it; an existing file keeps its
 *   mode, a new one gets 0666 & ~umask;
 * - a symbolic link is followed on purpose: the temporary file goes next to
 *   the file it points to and replaces that file, so the link stays a link;
 * - an existing character device (/dev/null, a terminal) or FIFO (a pipe,
 *   /dev/stdout into one) is written through, opened by the name given
 *   with O_WRONLY | O_NOCTTY, never created, truncated or replaced; a FIFO
 *   is opened without blocking, so one with no reader is an error ("a FIFO
 *   with no reader") rather than a hang;
 * - a directory, a socket or a block device is refused.
 * Every write and the final close are checked.
 *
 * A SimOutputSet holds several outputs: each is staged (written to its
 * temporary file, or for a device to an anonymous temporary file) and only
 * sim_output_set_commit makes them visible, devices first, then the
 * renames.  A failure before the renames leaves every target unchanged and
 * removes every temporary file and every directory the set created.
 *
 * Temporary files are named ".sim-tmp-PID-XXXXXX".  While they exist their
 * names are registered so that a signal handler can remove them
 * (sim_output_remove_temps); staging in a directory first removes the
 * temporary files there whose process is gone (kill (pid, 0) fails with
 * ESRCH; only meaningful on a local file system).
 *
 * Errors are SIM_ERROR_IO: "PATH: cannot write: REASON", with PATH as the
 * caller named it. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* the prefix of every temporary file, followed by "PID-" */
#define SIM_OUTPUT_TEMP_PREFIX ".sim-tmp-"

typedef struct _SimOutputSet SimOutputSet;

/* an empty set (free with sim_output_set_free); never fails */
SimOutputSet *sim_output_set_new (void);
/* aborts the set unless it was committed; NULL is ignored */
void sim_output_set_free (SimOutputSet *set);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimOutputSet, sim_output_set_free)

/* Whether path could be written, without changing anything: the target (a
 * symbolic link followed) is absent, a regular file, a character device or
 * a FIFO,
 * and its directory exists and is writable.  With parents, missing
 * directories above path are allowed when the nearest existing one is a
 * writable directory (they would be made by sim_output_set_mkdir).  FALSE
 * with SIM_ERROR_IO; any thread. */
gboolean sim_output_check (const char *path, gboolean parents, GError **error);

/* dir and its missing parents, made now (mode 0777 & ~umask) and removed
 * again if the set is aborted.  FALSE with SIM_ERROR_IO, "DIR: cannot
 * create: REASON". */
gboolean sim_output_set_mkdir (SimOutputSet *set, const char *dir, GError **error);

/* stage contents (len bytes, -1 for a NUL-terminated string) for path.
 * FALSE with SIM_ERROR_IO (nothing staged), or SIM_ERROR_USAGE when the set
 * already holds the same file under another name. */
gboolean sim_output_set_add (SimOutputSet *set, const char *path, const char *contents, gssize len,
                             GError **error);

/* stage path and return the file descriptor of its temporary file for the
 * caller to write (with sim_output_write_all); the set owns it: never close
 * it.  -1 with the errors of sim_output_set_add. */
int sim_output_set_open (SimOutputSet *set, const char *path, GError **error);

/* make every staged output visible; FALSE with SIM_ERROR_IO and the set
 * aborted.  A device written before a later failure stays written, and a
 * failed rename (which needs the directory to change under the run) leaves
 * the earlier renames done. */
gboolean sim_output_set_commit (SimOutputSet *set, GError **error);

/* remove every temporary file and created directory; the targets are left
 * as they were.  Idempotent. */
void sim_output_set_abort (SimOutputSet *set);

/* write all of data to fd, retrying short writes and EINTR: 0, or the errno
 * of the failure (EIO for a write of nothing); any thread */
int sim_output_write_all (int fd, const void *data, gsize len);

/* unlink the temporary files of this process that exist now; only
 * async-signal-safe calls, for a SIGINT/SIGTERM handler */
void sim_output_remove_temps (void);

/* one output written alone: sim_output_set_add and commit; FALSE with
 * SIM_ERROR_IO; any thread, one writer per path */
gboolean sim_write_file (const char *path, const char *contents, GError **error);

G_END_DECLS
