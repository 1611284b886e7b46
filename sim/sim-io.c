#include "sim-io.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "sim-error.h"

static gboolean
fail (const char *path, int err, GError **error)
{
  g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: cannot write: %s", path, g_strerror (err));
  return FALSE;
}

gboolean
sim_write_file (const char *path, const char *contents, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *tmp = NULL;
  gsize len = strlen (contents);
  gsize done = 0;
  int fd = -1;

  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    return fail (path, EISDIR, error);
  if (!g_file_test (dir, G_FILE_TEST_IS_DIR))
    return fail (path, ENOENT, error);
  tmp = g_build_filename (dir, ".sim-XXXXXX", NULL);
  fd = g_mkstemp (tmp);
  if (fd < 0)
    return fail (path, errno, error);
  while (done < len) {
    gssize n = write (fd, contents + done, len - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      close (fd);
      g_unlink (tmp);
      return fail (path, err, error);
    }
    done += (gsize) n;
  }
  if (fsync (fd) != 0 || close (fd) != 0) {
    int err = errno;
    g_unlink (tmp);
    return fail (path, err, error);
  }
  /* the file is private to its creator until renamed: give it the usual mode */
  g_chmod (tmp, 0644);
  if (g_rename (tmp, path) != 0) {
    int err = errno;
    g_unlink (tmp);
    return fail (path, err, error);
  }
  return TRUE;
}
