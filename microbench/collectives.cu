/* collectives.cu — NCCL collectives across the GPUs of this node, from one
 * process (ncclCommInitAll, one stream per GPU, ncclGroupStart/End), for
 * sim's collective models (sim/sim-collective.c, sim validate --nccl).
 *
 *   op              ranks   buffer sizes per rank (size = the CSV's bytes)
 *   all_reduce      all     send size, recv size
 *   all_gather      all     send size/n, recv size
 *   reduce_scatter  all     send size, recv size/n
 *   sendrecv        0 and 1 send size, recv size; both directions at once,
 *                           as nccl-tests' sendrecv_perf on 2 GPUs
 *
 * Sizes double from --min-bytes to --max-bytes (default 8 B .. 8 GiB, capped
 * so two buffers fit in 90 % of the smallest free device memory); float,
 * sum; out of place.  "size" is nccl-tests': the whole buffer (the output of
 * all_gather, the input of reduce_scatter), with the element count rounded
 * down to a multiple of n for those two.  Each size: --warmup launches, then
 * --iters launches each timed alone: a CUDA event pair on every
 * participating GPU's stream, the iteration's time the longest of them.  The
 * median is reported, algbw = size / time and busbw = algbw x factor with
 * nccl-tests' factors (mb-common.h).  Note nccl-tests instead averages
 * back-to-back launches, which hides launch latency: at small sizes its
 * times are a few microseconds lower.
 *
 * Output: the sim-microbench/1 CSV (sim/sim-bench.h), kind nccl, dtype float,
 * rate = busbw in bytes/s, on stdout or -o FILE; on stderr one nccl-tests
 * style table per op, which `sim validate --nccl` reads when it holds one op
 * (run with --op OP 2> FILE).  Exit status as in mb-cuda.h.
 */
#include <nccl.h>
#include <unistd.h>

#include "mb-cuda.h"

#define PROGRAM "collectives"
#define MAX_GPUS 64

static const char *usage =
    "usage: collectives [--min-bytes 8] [--max-bytes 8GiB] [--warmup 5] [--iters 20]\n"
    "                   [--gpus N] [--op all_reduce,all_gather,reduce_scatter,sendrecv]\n"
    "                   [-o FILE]\n"
    "\n"
    "Times NCCL collectives on the first N GPUs of this node (default all) from one\n"
    "process, over sizes that double from --min-bytes to --max-bytes (nccl-tests'\n"
    "size: the whole buffer), and writes the sim-microbench/1 CSV (kind nccl, rate =\n"
    "bus bandwidth) to stdout or FILE.  An nccl-tests style table goes to stderr.\n"
    "Sizes take a unit: B, KiB, MiB, GiB (powers of 2) or kB, MB, GB (powers of 10).\n";

#define MB_NCCL(call)                                                                             \
  do {                                                                                            \
    ncclResult_t mb_r_ = (call);                                                                  \
    if (mb_r_ != ncclSuccess) {                                                                   \
      fprintf (stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                      \
               ncclGetErrorString (mb_r_));                                                       \
      exit (1);                                                                                   \
    }                                                                                             \
  } while (0)

typedef struct {
  int n;                  /* ranks in the communicator */
  ncclComm_t comms[MAX_GPUS];
  cudaStream_t streams[MAX_GPUS];
  cudaEvent_t start[MAX_GPUS], stop[MAX_GPUS];
  void *send[MAX_GPUS], *recv[MAX_GPUS];
} World;

/* the ranks an op runs on: all, or 0 and 1 for sendrecv */
static int
participants (MbNcclOp op, int n)
{
  return op == MB_NCCL_SENDRECV ? 2 : n;
}

static void
launch (World *w, MbNcclOp op, uint64_t send_count, uint64_t recv_count)
{
  MB_NCCL (ncclGroupStart ());
  for (int g = 0; g < participants (op, w->n); g++) {
    switch (op) {
    case MB_NCCL_ALL_REDUCE:
      MB_NCCL (ncclAllReduce (w->send[g], w->recv[g], send_count, ncclFloat, ncclSum, w->comms[g],
                              w->streams[g]));
      break;
    case MB_NCCL_ALL_GATHER:
      MB_NCCL (ncclAllGather (w->send[g], w->recv[g], send_count, ncclFloat, w->comms[g],
                              w->streams[g]));
      break;
    case MB_NCCL_REDUCE_SCATTER:
      MB_NCCL (ncclReduceScatter (w->send[g], w->recv[g], recv_count, ncclFloat, ncclSum,
                                  w->comms[g], w->streams[g]));
      break;
    default:
      MB_NCCL (ncclSend (w->send[g], send_count, ncclFloat, 1 - g, w->comms[g], w->streams[g]));
      MB_NCCL (ncclRecv (w->recv[g], recv_count, ncclFloat, 1 - g, w->comms[g], w->streams[g]));
      break;
    }
  }
  MB_NCCL (ncclGroupEnd ());
}

/* one launch timed on every participating GPU; the slowest one's time in
 * microseconds */
static double
timed_launch (World *w, MbNcclOp op, uint64_t send_count, uint64_t recv_count)
{
  int p = participants (op, w->n);
  double longest = 0;

  /* events outside the group: inside it NCCL has not enqueued anything yet */
  for (int g = 0; g < p; g++) {
    MB_CUDA (cudaSetDevice (g));
    MB_CUDA (cudaEventRecord (w->start[g], w->streams[g]));
  }
  launch (w, op, send_count, recv_count);
  for (int g = 0; g < p; g++) {
    MB_CUDA (cudaSetDevice (g));
    MB_CUDA (cudaEventRecord (w->stop[g], w->streams[g]));
  }
  for (int g = 0; g < p; g++) {
    float ms = 0;
    MB_CUDA (cudaEventSynchronize (w->stop[g]));
    MB_CUDA (cudaEventElapsedTime (&ms, w->start[g], w->stop[g]));
    longest = ms * 1e3 > longest ? ms * 1e3 : longest;
  }
  return longest;
}

static void
sync_all (World *w)
{
  for (int g = 0; g < w->n; g++) {
    MB_CUDA (cudaSetDevice (g));
    MB_CUDA (cudaStreamSynchronize (w->streams[g]));
  }
}

int
main (int argc, char **argv)
{
  const char *out_path = NULL, *ops_s = "all_reduce,all_gather,reduce_scatter,sendrecv";
  uint64_t min_bytes = 8, max_bytes = UINT64_C (8) << 30, cap = UINT64_MAX;
  int warmup = 5, iters = 20, gpus = 0, n_devices, devs[MAX_GPUS], n_ops = 0, nccl_version = 0;
  MbNcclOp ops[MB_NCCL_N_OPS];
  uint64_t *sizes;
  size_t n_sizes = 0;
  MbCudaHeader hdr;
  char nccl_ver[32], host[256] = "localhost";
  World *w;
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
    } else if (strcmp (f, "--gpus") == 0) {
      gpus = (int) mb_arg_long (PROGRAM, f, mb_arg_value (PROGRAM, argc, argv, &i), 1, MAX_GPUS);
    } else if (strcmp (f, "--op") == 0) {
      ops_s = mb_arg_value (PROGRAM, argc, argv, &i);
    } else if (strcmp (f, "-o") == 0 || strcmp (f, "--output") == 0) {
      out_path = mb_arg_value (PROGRAM, argc, argv, &i);
    } else {
      fprintf (stderr, PROGRAM ": unknown argument '%s'; see collectives --help\n", f);
      return 2;
    }
  }
  {
    char list[256];
    snprintf (list, sizeof list, "%s", ops_s);
    for (char *t = strtok (list, ","); t != NULL; t = strtok (NULL, ",")) {
      int op = mb_nccl_op_parse (t);
      if (op < 0 || n_ops == MB_NCCL_N_OPS) {
        fprintf (stderr,
                 PROGRAM ": --op: expected all_reduce, all_gather, reduce_scatter or sendrecv "
                         "(comma-separated), got '%s'\n",
                 t);
        return 2;
      }
      ops[n_ops++] = (MbNcclOp) op;
    }
    if (n_ops == 0) {
      fprintf (stderr, PROGRAM ": --op: expected at least one op\n");
      return 2;
    }
  }
  if (min_bytes == 0 || min_bytes > max_bytes) {
    fprintf (stderr, PROGRAM ": expected 1 B <= --min-bytes <= --max-bytes\n");
    return 2;
  }

  n_devices = mb_cuda_require_device (PROGRAM);
  if (gpus == 0)
    gpus = n_devices < MAX_GPUS ? n_devices : MAX_GPUS;
  if (gpus > n_devices) {
    fprintf (stderr, PROGRAM ": --gpus %d: this node has %d\n", gpus, n_devices);
    return 2;
  }
  w = (World *) calloc (1, sizeof *w);
  times = (double *) calloc ((size_t) iters, sizeof *times);
  if (w == NULL || times == NULL) {
    fprintf (stderr, PROGRAM ": out of memory\n");
    return 1;
  }
  w->n = gpus;
  for (int g = 0; g < gpus; g++)
    devs[g] = g;
  MB_NCCL (ncclCommInitAll (w->comms, gpus, devs));
  MB_NCCL (ncclGetVersion (&nccl_version));
  /* after NCCL took its own buffers: what is left for ours */
  for (int g = 0; g < gpus; g++) {
    size_t free_b = 0, total_b = 0;
    MB_CUDA (cudaSetDevice (g));
    MB_CUDA (cudaMemGetInfo (&free_b, &total_b));
    if ((uint64_t) (0.9 * (double) free_b / 2) < cap)
      cap = (uint64_t) (0.9 * (double) free_b / 2);
  }
  if (max_bytes > cap) {
    fprintf (stderr, PROGRAM ": sizes capped at %.2f GiB to fit two buffers per GPU\n",
             cap / 1073741824.0);
    max_bytes = cap;
  }
  if ((sizes = mb_sizes_pow2 (min_bytes, max_bytes, &n_sizes)) == NULL) {
    fprintf (stderr, PROGRAM ": no power of two between --min-bytes and the largest size that fits\n");
    return 2;
  }
  for (int g = 0; g < gpus; g++) {
    MB_CUDA (cudaSetDevice (g));
    MB_CUDA (cudaStreamCreateWithFlags (&w->streams[g], cudaStreamNonBlocking));
    MB_CUDA (cudaEventCreate (&w->start[g]));
    MB_CUDA (cudaEventCreate (&w->stop[g]));
    MB_CUDA (cudaMalloc (&w->send[g], sizes[n_sizes - 1]));
    MB_CUDA (cudaMalloc (&w->recv[g], sizes[n_sizes - 1]));
    MB_CUDA (cudaMemset (w->send[g], 0, sizes[n_sizes - 1]));
    MB_CUDA (cudaMemset (w->recv[g], 0, sizes[n_sizes - 1]));
  }
  snprintf (nccl_ver, sizeof nccl_ver, "%d", nccl_version);
  mb_cuda_header (&hdr, PROGRAM, 0, "-", nccl_ver);
  gethostname (host, sizeof host - 1);

  out = mb_open_output (PROGRAM, out_path);
  mb_emit_header (PROGRAM, out_path, out, &hdr.h);
  for (int o = 0; o < n_ops; o++) {
    MbNcclOp op = ops[o];
    int p = participants (op, gpus), rows = 0;
    double sum_busbw = 0;

    if (p > gpus) {
      fprintf (stderr, PROGRAM ": %s needs 2 GPUs, this run has %d; skipped\n", mb_nccl_op_name (op),
               gpus);
      continue;
    }
    mb_nccl_table_begin (stderr, op, p);
    for (int g = 0; g < p; g++) {
      cudaDeviceProp prop;
      char bus[32] = "?";
      MB_CUDA (cudaGetDeviceProperties (&prop, g));
      cudaDeviceGetPCIBusId (bus, sizeof bus, g);
      mb_nccl_table_rank (stderr, g, (long) getpid (), host, g, bus, prop.name);
    }
    mb_nccl_table_columns (stderr);
    for (size_t s = 0; s < n_sizes; s++) {
      uint64_t sc = 0, rc = 0;
      uint64_t size = mb_nccl_counts (op, p, sizes[s], sizeof (float), &sc, &rc);
      MbRow row = { "nccl", mb_nccl_op_name (op), "float", 0, 0, 0, size, p, 0, 0 };

      if (size == 0)
        continue; /* fewer elements than ranks */
      for (int i = 0; i < warmup; i++)
        launch (w, op, sc, rc);
      sync_all (w);
      for (int i = 0; i < iters; i++)
        times[i] = timed_launch (w, op, sc, rc);
      row.time_us = mb_median (times, (size_t) iters);
      row.rate_per_s = mb_nccl_busbw (op, p, size, row.time_us);
      /* nccl-tests prints the per-rank count for all_gather and reduce_scatter */
      mb_nccl_table_row (stderr, op, p, size, op == MB_NCCL_REDUCE_SCATTER ? rc : sc, "float",
                         row.time_us);
      sum_busbw += row.rate_per_s / 1e9;
      rows++;
      mb_emit_row (PROGRAM, out_path, out, &row);
    }
    mb_nccl_table_end (stderr, rows > 0 ? sum_busbw / rows : 0);
  }
  mb_close_output (PROGRAM, out_path, out);
  for (int g = 0; g < gpus; g++) {
    MB_CUDA (cudaSetDevice (g));
    MB_CUDA (cudaFree (w->send[g]));
    MB_CUDA (cudaFree (w->recv[g]));
    ncclCommDestroy (w->comms[g]);
  }
  free (sizes);
  free (times);
  free (w);
  return 0;
}
