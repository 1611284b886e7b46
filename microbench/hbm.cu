/* hbm.cu — device memory (HBM) bandwidth, STREAM style, for sim's memory
 * bound kernels (the achievable fraction of the datasheet bandwidth).
 *
 *   copy    b[i] = a[i]             2 x array bytes moved (one read, one write)
 *   triad   a[i] = b[i] + s c[i]    3 x array bytes moved (two reads, one write)
 *
 * Arrays of float, accessed as float4 by a grid-stride loop; sizes are the
 * powers of two from --min-bytes to --max-bytes (default 64 MiB .. 4 GiB),
 * capped so the three arrays fit in 90 % of the free device memory.  Each
 * size: --warmup launches, then --iters launches each timed alone with CUDA
 * events; the CSV holds the median time and bytes moved / median.
 *
 * Output: the sim-microbench/1 CSV (sim/sim-bench.h), kind hbm, dtype float,
 * bytes = one array's size; progress on stderr.  Exit status as in mb-cuda.h.
 */
#include "mb-cuda.h"

#define PROGRAM "hbm"

static const char *usage =
    "usage: hbm [--min-bytes 64MiB] [--max-bytes 4GiB] [--warmup 5] [--iters 20]\n"
    "           [--device D] [-o FILE]\n"
    "\n"
    "Measures device memory bandwidth with the STREAM copy (b = a) and triad\n"
    "(a = b + s c) kernels over array sizes that double from --min-bytes to\n"
    "--max-bytes, and writes the sim-microbench/1 CSV (kind hbm) to stdout or FILE.\n"
    "Sizes take a unit: B, KiB, MiB, GiB (powers of 2) or kB, MB, GB (powers of 10).\n";

__global__ static void
copy_kernel (const float4 *__restrict__ a, float4 *__restrict__ b, uint64_t n)
{
  for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
       i += (uint64_t) gridDim.x * blockDim.x)
    b[i] = a[i];
}

__global__ static void
triad_kernel (float4 *__restrict__ a, const float4 *__restrict__ b, const float4 *__restrict__ c,
              float s, uint64_t n)
{
  for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
       i += (uint64_t) gridDim.x * blockDim.x) {
    float4 x = b[i], y = c[i];
    a[i] = make_float4 (x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

__global__ static void
fill_kernel (float4 *p, uint64_t n, float v)
{
  for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
       i += (uint64_t) gridDim.x * blockDim.x)
    p[i] = make_float4 (v, v, v, v);
}

#define THREADS 256

int
main (int argc, char **argv)
{
  const char *out_path = NULL;
  uint64_t min_bytes = UINT64_C (64) << 20, max_bytes = UINT64_C (4) << 30, cap;
  int warmup = 5, iters = 20, device = 0, blocks_max;
  uint64_t *sizes;
  size_t n_sizes = 0, free_b = 0, total_b = 0;
  MbCudaHeader hdr;
  cudaDeviceProp prop;
  cudaStream_t stream;
  cudaEvent_t start, stop;
  float4 *a, *b, *c;
  double *times;
  FILE *out;

  for (int i = 1; i < argc; i++) {
    const char *f = argv[i];
    if (strcmp (f, "--help") == 0 || strcmp (f, "-h") == 0) {
      fputs (usage, stdout);
      return 0;
    } else if (strcmp (f, "--min-bytes") == 0) {
      min_bytes = mb_arg_bytes (PROGRAM, f, mb_arg_value (PROGRAM, argc, argv, &i));
    } else if (strcmp (f, "--max-bytes") == 0) {
      max_bytes = mb_arg_bytes (PROGRAM, f, mb_arg_value (PROGRAM, argc, argv, &i));
    } else if (strcmp (f, "--warmup") == 0) {
      warmup = (int) mb_arg_long (PROGRAM, f, mb_arg_value (PROGRAM, argc, argv, &i), 0, 100000);
    } else if (strcmp (f, "--iters") == 0) {
      iters = (int) mb_arg_long (PROGRAM, f, mb_arg_value (PROGRAM, argc, argv, &i), 1, 100000);
    } else if (strcmp (f, "--device") == 0) {
      device = (int) mb_arg_long (PROGRAM, f, mb_arg_value (PROGRAM, argc, argv, &i), 0, 1023);
    } else if (strcmp (f, "-o") == 0 || strcmp (f, "--output") == 0) {
      out_path = mb_arg_value (PROGRAM, argc, argv, &i);
    } else {
      fprintf (stderr, PROGRAM ": unknown argument '%s'; see hbm --help\n", f);
      return 2;
    }
  }
  /* float4 accesses: a size must be a multiple of 16 bytes */
  if (min_bytes < 16 || min_bytes > max_bytes) {
    fprintf (stderr, PROGRAM ": expected 16 B <= --min-bytes <= --max-bytes\n");
    return 2;
  }

  if (device >= mb_cuda_require_device (PROGRAM)) {
    fprintf (stderr, PROGRAM ": --device %d: no such device\n", device);
    return 2;
  }
  MB_CUDA (cudaSetDevice (device));
  MB_CUDA (cudaGetDeviceProperties (&prop, device));
  MB_CUDA (cudaMemGetInfo (&free_b, &total_b));
  /* three arrays, and room for the runtime and the other programs */
  cap = (uint64_t) (0.9 * (double) free_b / 3);
  if (max_bytes > cap) {
    fprintf (stderr, PROGRAM ": %.1f GiB free: sizes capped at %.2f GiB per array\n",
             free_b / 1073741824.0, cap / 1073741824.0);
    max_bytes = cap;
  }
  if ((sizes = mb_sizes_pow2 (min_bytes, max_bytes, &n_sizes)) == NULL) {
    fprintf (stderr, PROGRAM ": no power of two between --min-bytes and the largest size that fits\n");
    return 2;
  }

  mb_cuda_header (&hdr, PROGRAM, device, "-", "-");
  MB_CUDA (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
  MB_CUDA (cudaEventCreate (&start));
  MB_CUDA (cudaEventCreate (&stop));
  MB_CUDA (cudaMalloc (&a, sizes[n_sizes - 1]));
  MB_CUDA (cudaMalloc (&b, sizes[n_sizes - 1]));
  MB_CUDA (cudaMalloc (&c, sizes[n_sizes - 1]));
  blocks_max = prop.multiProcessorCount * 32;
  fill_kernel<<<blocks_max, THREADS, 0, stream>>> (a, sizes[n_sizes - 1] / 16, 1.0f);
  fill_kernel<<<blocks_max, THREADS, 0, stream>>> (b, sizes[n_sizes - 1] / 16, 2.0f);
  fill_kernel<<<blocks_max, THREADS, 0, stream>>> (c, sizes[n_sizes - 1] / 16, 0.5f);
  MB_CUDA (cudaGetLastError ());
  MB_CUDA (cudaStreamSynchronize (stream));
  times = (double *) calloc ((size_t) iters, sizeof *times);
  if (times == NULL) {
    fprintf (stderr, PROGRAM ": out of memory\n");
    return 1;
  }

  out = mb_open_output (PROGRAM, out_path);
  mb_emit_header (PROGRAM, out_path, out, &hdr.h);
  fprintf (stderr, PROGRAM ": %s, %zu sizes, %d warm-up + %d timed launches each\n", hdr.gpu,
           n_sizes, warmup, iters);
  for (int op = MB_HBM_COPY; op <= MB_HBM_TRIAD; op++) {
    for (size_t s = 0; s < n_sizes; s++) {
      uint64_t n4 = sizes[s] / 16;
      uint64_t want = (n4 + THREADS - 1) / THREADS;
      int blocks = want < (uint64_t) blocks_max ? (int) want : blocks_max;
      MbRow row = { "hbm", mb_hbm_op_name ((MbHbmOp) op), "float", 0, 0, 0, n4 * 16, 1, 0, 0 };

      for (int i = 0; i < warmup + iters; i++) {
        float ms = 0;
        MB_CUDA (cudaEventRecord (start, stream));
        if (op == MB_HBM_COPY)
          copy_kernel<<<blocks, THREADS, 0, stream>>> (a, b, n4);
        else
          triad_kernel<<<blocks, THREADS, 0, stream>>> (a, b, c, 3.0f, n4);
        MB_CUDA (cudaGetLastError ());
        MB_CUDA (cudaEventRecord (stop, stream));
        MB_CUDA (cudaEventSynchronize (stop));
        MB_CUDA (cudaEventElapsedTime (&ms, start, stop));
        if (i >= warmup)
          times[i - warmup] = ms * 1e3;
      }
      row.time_us = mb_median (times, (size_t) iters);
      row.rate_per_s = mb_hbm_bytes_per_s ((MbHbmOp) op, row.bytes, row.time_us);
      fprintf (stderr, PROGRAM ": %-5s %10.1f MiB  %10.2f us  %8.1f GB/s\n", row.op,
               row.bytes / 1048576.0, row.time_us, row.rate_per_s / 1e9);
      mb_emit_row (PROGRAM, out_path, out, &row);
    }
  }
  mb_close_output (PROGRAM, out_path, out);
  free (times);
  free (sizes);
  MB_CUDA (cudaFree (a));
  MB_CUDA (cudaFree (b));
  MB_CUDA (cudaFree (c));
  return 0;
}
