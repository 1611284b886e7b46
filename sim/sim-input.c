/* sim-input.c — see sim-input.h */
#include "sim-input.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim-error.h"

static gboolean
fail_read (const char *path, int err, GError **error)
{
  g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: cannot read: %s", path, g_strerror (err));
  return FALSE;
}

static gboolean
too_big (const char *path, gsize max_bytes, GError **error)
{
  g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: expected a file under %" G_GSIZE_FORMAT " MiB",
               path, max_bytes >> 20 ? max_bytes >> 20 : 1);
  return FALSE;
}

gboolean
sim_input_read (const char *path, gsize max_bytes, char **contents, gsize *length, GError **error)
{
  struct stat st;
  GString *buf = NULL;
  int fd, flags;

  *contents = NULL;
  if (length != NULL)
    *length = 0;
  fd = open (path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return fail_read (path, errno, error);
  if (fstat (fd, &st) != 0) {
    int err = errno;
    close (fd);
    return fail_read (path, err, error);
  }
  if (!S_ISREG (st.st_mode)) {
    close (fd);
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: expected a regular file, this is %s", path,
                 S_ISDIR (st.st_mode) ? "a directory" : S_ISFIFO (st.st_mode) ? "a pipe"
                 : S_ISCHR (st.st_mode) || S_ISBLK (st.st_mode) ? "a device" : "not a file");
    return FALSE;
  }
  if ((guint64) st.st_size > max_bytes) {
    close (fd);
    return too_big (path, max_bytes, error);
  }
  flags = fcntl (fd, F_GETFL);
  if (flags >= 0)
    (void) fcntl (fd, F_SETFL, flags & ~O_NONBLOCK);
  /* read to the end, not to st_size: the file may grow (or be /proc-like) */
  buf = g_string_sized_new ((gsize) st.st_size + 1);
  for (;;) {
    char chunk[65536];
    gssize n = read (fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int err = errno;
      close (fd);
      g_string_free (buf, TRUE);
      return fail_read (path, err, error);
    }
    if (n == 0)
      break;
    if (buf->len + (gsize) n > max_bytes) {
      close (fd);
      g_string_free (buf, TRUE);
      return too_big (path, max_bytes, error);
    }
    g_string_append_len (buf, chunk, n);
  }
  close (fd);
  if (length != NULL)
    *length = buf->len;
  *contents = g_string_free (buf, FALSE);
  return TRUE;
}
