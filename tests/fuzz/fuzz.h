/* fuzz.h — shared pieces of the fuzz targets.
 *
 * Every target defines LLVMFuzzerTestOneInput.  Built with clang and
 * -Dfuzz=true it links against libFuzzer; otherwise fuzz-driver.c supplies
 * main() and replays a corpus, which is how the kept corpus and every
 * crasher found run as regression tests in the ordinary suite. */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (embedded NULs end it early, as
 * they would for a file read by a C string API). Free with g_free. */
static inline char *
fuzz_text (const uint8_t *data, size_t size)
{
  return g_strndup ((const char *) data, size);
}

/* Write the input to one scratch file per process and return its path:
 * the XML loaders take a path, as the CLI gives them. */
static inline const char *
fuzz_file (const uint8_t *data, size_t size, const char *suffix)
{
  static char *path = NULL;
  if (path == NULL)
    path = g_strdup_printf ("%s/sim-fuzz-%d%s", g_get_tmp_dir (), (int) getpid (), suffix);
  if (!g_file_set_contents (path, (const char *) data, (gssize) size, NULL))
    g_error ("cannot write %s", path);
  return path;
}
