#include "sim-io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim-error.h"

/* ---- the registry of live temporary files, read by a signal handler ---- */

/* fixed buffers, so that the handler never reads freed memory; a name that
 * does not fit is still written, only not removed on a signal */
#define LIVE_SLOTS 128
static char live_path[LIVE_SLOTS][PATH_MAX];
static atomic_int live_used[LIVE_SLOTS];
static gboolean live_reserved[LIVE_SLOTS];
static GMutex live_lock;

static int
live_register (const char *path)
{
  int slot = -1;
  if (strlen (path) >= PATH_MAX)
    return -1;
  g_mutex_lock (&live_lock);
  for (int i = 0; i < LIVE_SLOTS && slot < 0; i++)
    if (!live_reserved[i]) {
      live_reserved[i] = TRUE;
      slot = i;
    }
  g_mutex_unlock (&live_lock);
  if (slot >= 0) {
    strcpy (live_path[slot], path);
    atomic_store (&live_used[slot], 1);
  }
  return slot;
}

static void
live_unregister (int slot)
{
  if (slot < 0)
    return;
  atomic_store (&live_used[slot], 0);
  g_mutex_lock (&live_lock);
  live_reserved[slot] = FALSE;
  g_mutex_unlock (&live_lock);
}

void
sim_output_remove_temps (void)
{
  for (int i = 0; i < LIVE_SLOTS; i++)
    if (atomic_load (&live_used[i]))
      unlink (live_path[i]);
}

/* ---- helpers ---- */

static gboolean
fail (const char *path, int err, GError **error)
{
  g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: cannot write: %s", path, g_strerror (err));
  return FALSE;
}

int
sim_output_write_all (int fd, const void *data, gsize len)
{
  const char *p = data;
  while (len > 0) {
    gssize n = write (fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n < 0 ? errno : EIO;
    p += n;
    len -= (gsize) n;
  }
  return 0;
}

/* the mode of a new file; umask() both reads and sets, so read it from
 * /proc where possible and set it back at once otherwise */
static mode_t
new_file_mode (void)
{
  static gsize once = 0;
  static mode_t mask;
  if (g_once_init_enter (&once)) {
    g_autofree char *status = NULL;
    const char *line = NULL;
    if (g_file_get_contents ("/proc/self/status", &status, NULL, NULL) &&
        (line = strstr (status, "\nUmask:")) != NULL)
      mask = (mode_t) strtoul (line + 7, NULL, 8);
    else {
      mask = umask (022);
      umask (mask);
    }
    g_once_init_leave (&once, 1);
  }
  return 0666 & ~mask & 0777;
}

/* path with every symbolic link of its last component followed (a link
 * may point to a file that does not exist yet: it is created there) */
static char *
follow_links (const char *path, GError **error)
{
  g_autofree char *cur = g_strdup (path);
  for (int hops = 0;; hops++) {
    struct stat st;
    g_autofree char *link = NULL;
    if (lstat (cur, &st) != 0 || !S_ISLNK (st.st_mode))
      return g_steal_pointer (&cur);
    if (hops == 40) {
      fail (path, ELOOP, error);
      return NULL;
    }
    link = g_file_read_link (cur, NULL);
    if (link == NULL) {
      fail (path, errno != 0 ? errno : EINVAL, error);
      return NULL;
    }
    if (!g_path_is_absolute (link)) {
      g_autofree char *dir = g_path_get_dirname (cur);
      g_free (cur);
      cur = g_build_filename (dir, link, NULL);
    } else {
      g_free (cur);
      cur = g_steal_pointer (&link);
    }
  }
}

static const char *
kind_name (mode_t m)
{
  return S_ISSOCK (m) ? "a socket" : S_ISBLK (m) ? "a block device" : "a special file";
}

typedef struct {
  char *target; /* links followed */
  gboolean exists;
  gboolean device; /* a character device or a FIFO, written through */
  gboolean fifo;
  mode_t mode; /* for a regular file */
} Target;

static void
target_clear (Target *t)
{
  g_free (t->target);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Target, target_clear)

/* what path is, and whether it may be written; its directory must exist
 * unless parents */
static gboolean
inspect (const char *path, gboolean parents, Target *t, GError **error)
{
  g_autofree char *dir = NULL;
  struct stat st;

  /* a device or a FIFO is opened by the name given, which also follows
   * /dev/stdout -> /proc/self/fd/1 -> "pipe:[N]" correctly */
  if (stat (path, &st) == 0 && (S_ISCHR (st.st_mode) || S_ISFIFO (st.st_mode))) {
    t->target = g_strdup (path);
    t->exists = TRUE;
    t->device = TRUE;
    t->fifo = S_ISFIFO (st.st_mode);
    if (access (path, W_OK) != 0)
      return fail (path, errno, error);
    return TRUE;
  }
  t->target = follow_links (path, error);
  if (t->target == NULL)
    return FALSE;
  if (stat (t->target, &st) == 0) {
    t->exists = TRUE;
    if (S_ISDIR (st.st_mode))
      return fail (path, EISDIR, error);
    if (!S_ISREG (st.st_mode)) {
      g_set_error (
          error, SIM_ERROR, SIM_ERROR_IO,
          "%s: cannot write: expected a regular file, a character device or a FIFO, got %s", path,
          kind_name (st.st_mode));
      return FALSE;
    }
    t->mode = st.st_mode & 07777;
  } else if (errno != ENOENT) {
    return fail (path, errno, error);
  } else {
    t->mode = new_file_mode ();
  }
  /* the directory that will hold the temporary file, or with parents the
   * nearest one that exists */
  dir = g_path_get_dirname (t->target);
  for (;;) {
    if (stat (dir, &st) == 0) {
      if (!S_ISDIR (st.st_mode))
        return fail (path, ENOTDIR, error);
      if (access (dir, W_OK | X_OK) != 0)
        return fail (path, errno, error);
      return TRUE;
    }
    if (errno != ENOENT || !parents)
      return fail (path, errno, error);
    {
      char *up = g_path_get_dirname (dir);
      gboolean top = g_str_equal (up, dir);
      g_free (dir);
      dir = up;
      if (top)
        return fail (path, ENOENT, error);
    }
  }
}

gboolean
sim_output_check (const char *path, gboolean parents, GError **error)
{
  g_auto (Target) t = { 0 };
  return inspect (path, parents, &t, error);
}

/* ---- the set ---- */

typedef struct {
  char *path;   /* as named, for messages */
  char *target; /* where the file goes: links followed, directory canonical */
  char *tmp;    /* the staged regular file; NULL for a device */
  int fd;
  int slot; /* in the registry, or -1 */
  gboolean device;
  gboolean fifo;
  mode_t mode;
} Entry;

struct _SimOutputSet {
  GPtrArray *entries; /* Entry*, in the order staged */
  GPtrArray *dirs;    /* directories made, outermost first */
  GHashTable *swept;  /* directories cleaned of stale temporary files */
  gboolean done;      /* committed or aborted */
};

static void
entry_free (gpointer p)
{
  Entry *e = p;
  if (e->fd >= 0)
    close (e->fd);
  if (e->tmp != NULL)
    unlink (e->tmp);
  live_unregister (e->slot);
  g_free (e->path);
  g_free (e->target);
  g_free (e->tmp);
  g_free (e);
}

SimOutputSet *
sim_output_set_new (void)
{
  SimOutputSet *set = g_new0 (SimOutputSet, 1);
  set->entries = g_ptr_array_new_with_free_func (entry_free);
  set->dirs = g_ptr_array_new_with_free_func (g_free);
  set->swept = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return set;
}

void
sim_output_set_abort (SimOutputSet *set)
{
  g_return_if_fail (set != NULL);
  g_ptr_array_set_size (set->entries, 0);
  for (guint i = set->dirs->len; i > 0; i--)
    rmdir (g_ptr_array_index (set->dirs, i - 1));
  g_ptr_array_set_size (set->dirs, 0);
  set->done = TRUE;
}

void
sim_output_set_free (SimOutputSet *set)
{
  if (set == NULL)
    return;
  sim_output_set_abort (set);
  g_ptr_array_unref (set->entries);
  g_ptr_array_unref (set->dirs);
  g_hash_table_unref (set->swept);
  g_free (set);
}

gboolean
sim_output_set_mkdir (SimOutputSet *set, const char *dir, GError **error)
{
  g_autoptr (GPtrArray) missing = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *cur = g_strdup (dir);
  struct stat st;

  g_return_val_if_fail (set != NULL && !set->done, FALSE);
  while (stat (cur, &st) != 0 && errno == ENOENT) {
    char *up = g_path_get_dirname (cur);
    gboolean top = g_str_equal (up, cur);
    g_ptr_array_add (missing, g_steal_pointer (&cur));
    cur = up;
    if (top)
      break;
  }
  for (guint i = missing->len; i > 0; i--) {
    const char *d = g_ptr_array_index (missing, i - 1);
    if (mkdir (d, 0777) == 0)
      g_ptr_array_add (set->dirs, g_strdup (d));
    else if (errno != EEXIST) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: cannot create: %s", dir,
                   g_strerror (errno));
      return FALSE;
    }
  }
  if (stat (dir, &st) != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: cannot create: %s", dir, g_strerror (errno));
    return FALSE;
  }
  if (!S_ISDIR (st.st_mode)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: cannot create: %s", dir,
                 g_strerror (ENOTDIR));
    return FALSE;
  }
  return TRUE;
}

/* remove the temporary files in dir of processes that are gone */
static void
sweep_stale (SimOutputSet *set, const char *dir)
{
  g_autoptr (GDir) d = NULL;
  const char *name;
  if (g_hash_table_contains (set->swept, dir))
    return;
  g_hash_table_add (set->swept, g_strdup (dir));
  d = g_dir_open (dir, 0, NULL);
  if (d == NULL)
    return;
  while ((name = g_dir_read_name (d)) != NULL) {
    char *end = NULL;
    long pid;
    if (!g_str_has_prefix (name, SIM_OUTPUT_TEMP_PREFIX))
      continue;
    pid = strtol (name + strlen (SIM_OUTPUT_TEMP_PREFIX), &end, 10);
    if (end == NULL || *end != '-' || pid <= 0 || pid == (long) getpid ())
      continue;
    if (kill ((pid_t) pid, 0) != 0 && errno == ESRCH) {
      g_autofree char *p = g_build_filename (dir, name, NULL);
      unlink (p);
    }
  }
}

int
sim_output_set_open (SimOutputSet *set, const char *path, GError **error)
{
  g_auto (Target) t = { 0 };
  g_autofree char *dir = NULL;
  g_autofree char *canon = NULL;
  g_autofree char *base = NULL;
  g_autofree char *tmp = NULL;
  g_autofree char *tmpl = g_strdup_printf (SIM_OUTPUT_TEMP_PREFIX "%ld-XXXXXX", (long) getpid ());
  Entry *e;
  int fd;

  g_return_val_if_fail (set != NULL && !set->done && path != NULL, -1);
  if (!inspect (path, FALSE, &t, error))
    return -1;
  dir = g_path_get_dirname (t.target);
  base = g_path_get_basename (t.target);
  canon = realpath (dir, NULL);
  if (canon == NULL) {
    fail (path, errno, error);
    return -1;
  }
  e = g_new0 (Entry, 1);
  e->path = g_strdup (path);
  e->target = t.device ? g_strdup (t.target) : g_build_filename (canon, base, NULL);
  e->device = t.device;
  e->fifo = t.fifo;
  e->mode = t.mode;
  e->fd = -1;
  e->slot = -1;
  for (guint i = 0; i < set->entries->len && !t.device; i++) {
    const Entry *o = g_ptr_array_index (set->entries, i);
    if (g_str_equal (o->target, e->target)) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                   "%s: expected each output once, but %s names the same file", path, o->path);
      entry_free (e);
      return -1;
    }
  }
  if (t.device) {
    /* staged in an anonymous file, copied to the device on commit */
    tmp = g_build_filename (g_get_tmp_dir (), tmpl, NULL);
    fd = g_mkstemp (tmp);
    if (fd >= 0)
      unlink (tmp);
  } else {
    sigset_t block, old;
    sweep_stale (set, canon);
    e->tmp = g_build_filename (canon, tmpl, NULL);
    /* no termination signal between creating the file and registering it:
     * a kill in between would leave it behind */
    sigemptyset (&block);
    sigaddset (&block, SIGINT);
    sigaddset (&block, SIGTERM);
    sigaddset (&block, SIGHUP);
    sigprocmask (SIG_BLOCK, &block, &old);
    fd = g_mkstemp (e->tmp);
    if (fd >= 0)
      e->slot = live_register (e->tmp);
    sigprocmask (SIG_SETMASK, &old, NULL);
  }
  if (fd < 0) {
    int err = errno;
    g_clear_pointer (&e->tmp, g_free);
    entry_free (e);
    fail (path, err, error);
    return -1;
  }
  e->fd = fd;
  g_ptr_array_add (set->entries, e);
  return fd;
}

gboolean
sim_output_set_add (SimOutputSet *set, const char *path, const char *contents, gssize len,
                    GError **error)
{
  int fd = sim_output_set_open (set, path, error);
  int err;
  if (fd < 0)
    return FALSE;
  err = sim_output_write_all (fd, contents, len < 0 ? strlen (contents) : (gsize) len);
  if (err != 0) {
    /* the entry just staged is the last one */
    g_ptr_array_set_size (set->entries, set->entries->len - 1);
    return fail (path, err, error);
  }
  return TRUE;
}

/* copy the staged bytes to the device */
static int
write_device (Entry *e)
{
  char buf[65536];
  int out;
  int err = 0;
  if (lseek (e->fd, 0, SEEK_SET) != 0)
    return errno;
  /* a FIFO without a reader would block the run forever: ENXIO instead */
  out = open (e->target, O_WRONLY | O_NOCTTY | O_CLOEXEC | (e->fifo ? O_NONBLOCK : 0));
  if (out < 0)
    return errno;
  if (e->fifo && fcntl (out, F_SETFL, fcntl (out, F_GETFL) & ~O_NONBLOCK) != 0) {
    err = errno;
    close (out);
    return err;
  }
  for (;;) {
    gssize n = read (e->fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      err = errno;
    if (n <= 0)
      break;
    if ((err = sim_output_write_all (out, buf, (gsize) n)) != 0)
      break;
  }
  if (close (out) != 0 && err == 0)
    err = errno;
  return err;
}

gboolean
sim_output_set_commit (SimOutputSet *set, GError **error)
{
  g_return_val_if_fail (set != NULL && !set->done, FALSE);
  /* the staged files, complete on disk with the target's mode */
  for (guint i = 0; i < set->entries->len; i++) {
    Entry *e = g_ptr_array_index (set->entries, i);
    int fd = e->fd;
    if (e->device)
      continue;
    e->fd = -1;
    if (fchmod (fd, e->mode) != 0 || fsync (fd) != 0) {
      int err = errno;
      close (fd);
      sim_output_set_abort (set);
      return fail (e->path, err, error);
    }
    if (close (fd) != 0) {
      int err = errno;
      sim_output_set_abort (set);
      return fail (e->path, err, error);
    }
  }
  /* devices cannot be renamed into place: written through before the
   * renames, so that a full device changes no file */
  for (guint i = 0; i < set->entries->len; i++) {
    Entry *e = g_ptr_array_index (set->entries, i);
    int err;
    if (!e->device)
      continue;
    if ((err = write_device (e)) != 0) {
      g_autofree char *path = g_strdup (e->path);
      gboolean no_reader = e->fifo && err == ENXIO;
      sim_output_set_abort (set);
      if (no_reader) {
        g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: cannot write: a FIFO with no reader",
                     path);
        return FALSE;
      }
      return fail (path, err, error);
    }
  }
  for (guint i = 0; i < set->entries->len; i++) {
    Entry *e = g_ptr_array_index (set->entries, i);
    if (e->device)
      continue;
    if (rename (e->tmp, e->target) != 0) {
      int err = errno;
      g_autofree char *path = g_strdup (e->path);
      sim_output_set_abort (set);
      return fail (path, err, error);
    }
    g_clear_pointer (&e->tmp, g_free);
    live_unregister (e->slot);
    e->slot = -1;
  }
  /* nothing left to remove: the directories made are now in use */
  g_ptr_array_set_size (set->dirs, 0);
  sim_output_set_abort (set);
  return TRUE;
}

gboolean
sim_write_file (const char *path, const char *contents, GError **error)
{
  g_autoptr (SimOutputSet) set = sim_output_set_new ();
  return sim_output_set_add (set, path, contents, -1, error) && sim_output_set_commit (set, error);
}
