/* mb-cuda.h — what the three CUDA programs share: error checks that exit,
 * the "no CUDA device" check, and the sim-microbench/1 header values read
 * from the CUDA runtime.  Header-only, for .cu files (nvcc) alone.
 *
 * Exit statuses of every program:
 *   0  all rows written
 *   1  a CUDA, cuBLASLt or NCCL call failed mid-run, or output could not be
 *      written
 *   2  bad usage, no CUDA device, or a dtype the GPU does not support
 */
#pragma once

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "mb-common.h"

#define MB_CUDA(call)                                                                             \
  do {                                                                                            \
    cudaError_t mb_e_ = (call);                                                                   \
    if (mb_e_ != cudaSuccess) {                                                                   \
      fprintf (stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                      \
               cudaGetErrorString (mb_e_));                                                       \
      exit (1);                                                                                   \
    }                                                                                             \
  } while (0)

/* exits 2 with a message naming the program when the machine has no usable
 * CUDA device (no driver, no GPU, or a driver too old for this runtime);
 * returns the number of devices otherwise */
static inline int
mb_cuda_require_device (const char *program)
{
  int n = 0;
  cudaError_t e = cudaGetDeviceCount (&n);
  if (e != cudaSuccess || n < 1) {
    fprintf (stderr, "%s: no CUDA device: %s\n", program,
             e != cudaSuccess ? cudaGetErrorString (e) : "the driver reports 0 GPUs");
    exit (2);
  }
  return n;
}

/* the storage behind an MbHeader */
typedef struct {
  char gpu[256], driver[64], cuda[32], cublas[32], nccl[32], clocks[96], date[32];
  MbHeader h;
} MbCudaHeader;

/* fills every header value for device dev; cublas and nccl are the version
 * strings the caller knows ("-" when the program does not use the library) */
static inline void
mb_cuda_header (MbCudaHeader *s, const char *program, int dev, const char *cublas, const char *nccl)
{
  cudaDeviceProp prop;
  int driver = 0, runtime = 0, sm_khz = 0, mem_khz = 0;
  char *proc;

  MB_CUDA (cudaGetDeviceProperties (&prop, dev));
  MB_CUDA (cudaDriverGetVersion (&driver));
  MB_CUDA (cudaRuntimeGetVersion (&runtime));
  /* the peak clocks the device reports; nvml (current clocks) is not needed */
  MB_CUDA (cudaDeviceGetAttribute (&sm_khz, cudaDevAttrClockRate, dev));
  MB_CUDA (cudaDeviceGetAttribute (&mem_khz, cudaDevAttrMemoryClockRate, dev));

  snprintf (s->gpu, sizeof s->gpu, "%s", prop.name);
  /* the kernel module version as nvidia-smi shows it when Linux tells it,
   * else the CUDA version the driver supports (cudaDriverGetVersion) */
  proc = mb_read_file ("/proc/driver/nvidia/version", NULL, 0);
  if (proc == NULL || mb_parse_nvidia_version (proc, s->driver, sizeof s->driver) != 0)
    snprintf (s->driver, sizeof s->driver, "%d", driver);
  free (proc);
  snprintf (s->cuda, sizeof s->cuda, "%d", runtime);
  snprintf (s->cublas, sizeof s->cublas, "%s", cublas);
  snprintf (s->nccl, sizeof s->nccl, "%s", nccl);
  snprintf (s->clocks, sizeof s->clocks, "sm %d MHz, memory %d MHz", sm_khz / 1000, mem_khz / 1000);
  mb_format_utc ((long long) time (NULL), s->date, sizeof s->date);

  s->h.program = program;
  s->h.gpu = s->gpu;
  s->h.driver = s->driver;
  s->h.cuda = s->cuda;
  s->h.cublas = s->cublas;
  s->h.nccl = s->nccl;
  s->h.clocks = s->clocks;
  s->h.date = s->date;
}

/* the output stream: stdout, or path opened for writing; exits 1 when it
 * cannot be opened */
static inline FILE *
mb_open_output (const char *program, const char *path)
{
  FILE *f;
  if (path == NULL || strcmp (path, "-") == 0)
    return stdout;
  if ((f = fopen (path, "w")) == NULL) {
    fprintf (stderr, "%s: %s: cannot write: %s\n", program, path, strerror (errno));
    exit (1);
  }
  return f;
}

/* flushes and closes out (unless stdout); exits 1 on a write error */
static inline void
mb_close_output (const char *program, const char *path, FILE *out)
{
  int bad = fflush (out) != 0 || ferror (out);
  if (out != stdout)
    bad |= fclose (out) != 0;
  if (bad) {
    fprintf (stderr, "%s: %s: cannot write\n", program, path != NULL ? path : "stdout");
    exit (1);
  }
}

/* writes the header; exits 1 on a write error */
static inline void
mb_emit_header (const char *program, const char *path, FILE *out, const MbHeader *h)
{
  if (mb_write_header (out, h) != 0) {
    fprintf (stderr, "%s: %s: cannot write\n", program, path != NULL ? path : "stdout");
    exit (1);
  }
}

/* writes one row and flushes it, so that a run cut short by `timeout` still
 * leaves a usable CSV; exits 1 on a write error.  A row sim would refuse (a
 * time of 0, a rate that is not a number) is left out with a message */
static inline void
mb_emit_row (const char *program, const char *path, FILE *out, const MbRow *r)
{
  if (mb_write_row (out, r) != 0 || fflush (out) != 0) {
    if (ferror (out)) {
      fprintf (stderr, "%s: %s: cannot write\n", program, path != NULL ? path : "stdout");
      exit (1);
    }
    fprintf (stderr, "%s: %s %s: unusable measurement (time %g us, rate %g/s); row left out\n",
             program, r->op, r->dtype, r->time_us, r->rate_per_s);
  }
}

/* the value after flag in argv[*i], advancing *i; exits 2 when missing */
static inline const char *
mb_arg_value (const char *program, int argc, char **argv, int *i)
{
  if (*i + 1 >= argc) {
    fprintf (stderr, "%s: %s: expected a value; see %s --help\n", program, argv[*i], program);
    exit (2);
  }
  return argv[++*i];
}

/* a whole number in [lo, hi]; exits 2 otherwise */
static inline long
mb_arg_long (const char *program, const char *flag, const char *text, long lo, long hi)
{
  char *end = NULL;
  long v;
  errno = 0;
  v = strtol (text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) {
    fprintf (stderr, "%s: %s: expected a whole number from %ld to %ld, got '%s'\n", program, flag,
             lo, hi, text);
    exit (2);
  }
  return v;
}

/* a size with its unit (mb_parse_bytes); exits 2 otherwise */
static inline uint64_t
mb_arg_bytes (const char *program, const char *flag, const char *text)
{
  char err[256];
  uint64_t v;
  if (mb_parse_bytes (text, &v, err, sizeof err) != 0) {
    fprintf (stderr, "%s: %s: %s\n", program, flag, err);
    exit (2);
  }
  return v;
}
