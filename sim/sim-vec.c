/* sim-vec.c — the growth of sim-vec.h's arrays.
 *
 * An estimate's first long simulation in a process fills tens of MB of
 * engine arrays (activities, flows, hops, dependencies) that no earlier one
 * touched, and the kernel faults them in 4 KiB at a time.  On the 2-core VM
 * that bench/ measures on, those first-touch faults made a first estimate
 * three times slower than a repeat (bench-estimate --whole, Llama-3-70B tp 4
 * cp 2 pp 2 dp 4 interleaved v 4 on dgx8x4: 317-348 ms and 14,822 faults
 * cold against 94 ms warm; perf: 23 % of the cold run in the fault path),
 * and two threads' faults contend for one address space.  So an array of
 * SIM_VEC_HUGE_BYTES or more is placed on a 2 MiB boundary and offered to
 * transparent huge pages (madvise MADV_HUGEPAGE, Linux; where THP is off it
 * is an ordinary allocation), and one fault fills 2 MiB: the same cold
 * estimate 146-173 ms with about 3,500 faults; the Llama-3-70B sweep on one
 * thread 23,714 -> 8,182 faults; the 16,384-GPU run 43,633 -> 11,631 faults
 * and 1.55 -> 1.19 s, for a peak RSS 15 % higher (arrays rounded up to
 * whole huge pages). */
#include "sim-vec.h"

#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#define HUGE_PAGE_BYTES ((gsize) 2 << 20) /* x86-64 and arm64 (4 KiB base pages) PMD size */

/* `bytes` on a huge-page boundary, rounded up to whole huge pages */
static gpointer
huge_alloc (gsize bytes)
{
  gsize size = (bytes + HUGE_PAGE_BYTES - 1) & ~(HUGE_PAGE_BYTES - 1);
  gpointer p = NULL;
  if (size < bytes || posix_memalign (&p, HUGE_PAGE_BYTES, size) != 0)
    g_error ("sim_vec_grow: cannot allocate %" G_GSIZE_FORMAT " bytes", bytes);
#ifdef MADV_HUGEPAGE
  (void) madvise (p, size, MADV_HUGEPAGE); /* advice: refused is still correct */
#endif
  return p;
}

gpointer
sim_vec_grow (gpointer data, guint *cap, gsize elt, guint want)
{
  guint n = MAX (*cap, 64u);
  while (n < want) {
    if (n > G_MAXUINT / 2)
      g_error ("sim_vec_grow: more than %u elements", G_MAXUINT / 2);
    n *= 2;
  }
  if (n == *cap)
    return data;
  if (elt > G_MAXSIZE / n)
    g_error ("sim_vec_grow: %u elements of %" G_GSIZE_FORMAT " bytes overflow", n, elt);
  if (n * elt < SIM_VEC_HUGE_BYTES) {
    data = g_realloc (data, n * elt);
  } else {
    gpointer p = huge_alloc (n * elt);
    if (data != NULL)
      memcpy (p, data, (gsize) *cap * elt);
    g_free (data);
    data = p;
  }
  *cap = n;
  return data;
}
