/* mb-common.h — the GPU-free half of the microbenchmarks (gemm, hbm,
 * collectives): statistics, size lists, shape parsing, rates and the
 * sim-microbench/1 CSV writer (the format is documented in sim/sim-microbench.h).
 *
 * Plain C11 and libc only, no GLib and no CUDA, so that nvcc-compiled
 * programs link it as is and tests/test-microbench.c can check every number
 * here on a machine without a GPU.
 *
 * Units: sizes in bytes (uint64_t), times in microseconds (double, as the CSV
 * column time_us), rates per second.  Functions that can fail on input
 * return NULL or a negative number and write a one-line message into the
 * caller's err buffer (lowercase, no final period, "PATH:LINE: " first for
 * input text), never to stderr.  Allocated results are freed with free().
 */
#ifndef MB_COMMON_H
#define MB_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- statistics ---------------------------------------------------------- */

/* the median of n values (the mean of the middle two when n is even); v is
 * not modified.  NAN when n is 0 */
double mb_median (const double *v, size_t n);

/* ---- sizes --------------------------------------------------------------- */

/* the powers of two from the smallest one >= min_bytes up to max_bytes,
 * ascending; *n_out is their number.  NULL (and *n_out 0) when min_bytes is 0,
 * min_bytes > max_bytes or no power of two lies between them */
uint64_t *mb_sizes_pow2 (uint64_t min_bytes, uint64_t max_bytes, size_t *n_out);

/* "8", "8B", "64MiB", "4GiB", "1kB", "2GB": a whole number with an optional
 * unit B, KiB, MiB, GiB, TiB (2^10 ...) or kB, MB, GB, TB (10^3 ...).  A bare
 * K, M or G is refused (it is ambiguous).  Returns 0 and *out, or -1 with a
 * message in err */
int mb_parse_bytes (const char *text, uint64_t *out, char *err, size_t err_len);

/* ---- GEMM shapes --------------------------------------------------------- */

#define MB_SHAPE_NAME_MAX 64

typedef struct {
  char name[MB_SHAPE_NAME_MAX]; /* "qkv", ...; "grid" for the grid */
  uint64_t m, n, k;             /* C[m,n] = A[m,k] B[k,n] */
} MbShape;

/* every (m, n, k) with each of m, n, k a power of two in [lo, hi], m slowest,
 * k fastest; (256, 16384) gives 7 values each, 343 shapes.  NULL when the
 * range holds no power of two */
MbShape *mb_gemm_grid (uint64_t lo, uint64_t hi, size_t *n_out);

/* parses the text `sim shapes` prints: an optional "name,m,n,k" line, then
 * one "name,m,n,k" per GEMM with m, n, k positive whole numbers.  Blank lines
 * and lines starting with '#' are skipped.  NULL on the first bad line, with
 * "PATH:LINE: expected ..." in err (path names the source in messages); NULL
 * too when the text holds no shape */
MbShape *mb_shapes_parse (const char *path, const char *text, size_t *n_out, char *err,
                          size_t err_len);

/* removes later duplicates of the same (m, n, k) in place, keeping the first
 * one's name and the order; returns the new count */
size_t mb_shapes_unique (MbShape *s, size_t n);

/* ---- files and commands -------------------------------------------------- */

/* all of stream f as a NUL-terminated string; NULL when memory runs out */
char *mb_read_stream (FILE *f);

/* the whole file; NULL with "PATH: cannot read: REASON" in err */
char *mb_read_file (const char *path, char *err, size_t err_len);

/* appends text to dst (size dst_len) single-quoted for /bin/sh, so that any
 * byte survives popen() intact; returns 0, or -1 when dst is too short */
int mb_shell_quote (char *dst, size_t dst_len, const char *text);

/* ---- the CSV (sim/sim-microbench.h) ------------------------------------------- */

/* the header values; NULL or "" prints "-".  Newlines in a value are written
 * as spaces so a value cannot end the header early */
typedef struct {
  const char *program; /* gemm | hbm | collectives */
  const char *gpu;     /* "NVIDIA H100 80GB HBM3" */
  const char *driver;  /* "550.54.15", or the CUDA driver API version */
  const char *cuda;    /* runtime version, "12040" */
  const char *cublas;  /* "120400" or "-" */
  const char *nccl;    /* "22105" or "-" */
  const char *clocks;  /* "sm 1980 MHz, memory 2619 MHz" */
  const char *date;    /* "2026-11-29T12:00:00Z" */
} MbHeader;

/* one CSV row; m, n, k and bytes of 0 are written as empty fields */
typedef struct {
  const char *kind;  /* gemm, hbm, nccl */
  const char *op;    /* matmul, copy, triad, all_reduce, ... */
  const char *dtype; /* bf16, fp16, fp8, float */
  uint64_t m, n, k;
  uint64_t bytes;
  int gpus;
  double time_us;    /* the median */
  double rate_per_s; /* FLOP/s, bytes/s or busbw bytes/s */
} MbRow;

/* the eight "# ..." lines and the column line; 0, or -1 on a write error */
int mb_write_header (FILE *f, const MbHeader *h);
/* one data line; 0, or -1 on a write error */
int mb_write_row (FILE *f, const MbRow *r);

/* "2026-11-29T12:00:00Z" for t (seconds since the epoch) into buf; buf_len
 * should be at least 21 */
void mb_format_utc (long long t, char *buf, size_t buf_len);

/* the kernel module version ("550.54.15") from the text of
 * /proc/driver/nvidia/version: the first token after "NVRM version:" made of
 * digits and dots with at least one dot.  0, or -1 when there is none */
int mb_parse_nvidia_version (const char *text, char *out, size_t out_len);

/* ---- rates --------------------------------------------------------------- */

/* 2 m n k / t; 0 when time_us <= 0 */
double mb_gemm_flop_per_s (uint64_t m, uint64_t n, uint64_t k, double time_us);

typedef enum { MB_HBM_COPY, MB_HBM_TRIAD } MbHbmOp;

/* bytes moved per second for an array of array_bytes: copy reads one array
 * and writes one (2x), triad reads two and writes one (3x) */
double mb_hbm_bytes_per_s (MbHbmOp op, uint64_t array_bytes, double time_us);
const char *mb_hbm_op_name (MbHbmOp op); /* "copy", "triad" */

typedef enum {
  MB_NCCL_ALL_REDUCE,
  MB_NCCL_ALL_GATHER,
  MB_NCCL_REDUCE_SCATTER,
  MB_NCCL_SENDRECV,
  MB_NCCL_N_OPS,
} MbNcclOp;

const char *mb_nccl_op_name (MbNcclOp op); /* "all_reduce", ... as sim-nccl.h */
/* the name above; -1 for anything else */
int mb_nccl_op_parse (const char *name);

/* busbw / algbw as nccl-tests computes it for n ranks:
 *   all_reduce                  2(n-1)/n
 *   all_gather, reduce_scatter  (n-1)/n
 *   sendrecv                    1
 * NAN when n < 1 */
double mb_nccl_busbw_factor (MbNcclOp op, int n);

/* algbw = size / time, bytes per second (nccl-tests' size: the whole buffer,
 * i.e. the output of all_gather and the input of reduce_scatter) */
double mb_nccl_algbw (uint64_t bytes, double time_us);
double mb_nccl_busbw (MbNcclOp op, int n, uint64_t bytes, double time_us);

/* elements per rank for a requested size, nccl-tests' way: the whole-buffer
 * count (bytes / type_bytes) is rounded down to a multiple of n for
 * all_gather and reduce_scatter.  *send_count and *recv_count are what each
 * rank passes to NCCL; the size actually run is returned (0 when the size is
 * too small to give every rank one element: skip it) */
uint64_t mb_nccl_counts (MbNcclOp op, int n, uint64_t bytes, size_t type_bytes,
                         uint64_t *send_count, uint64_t *recv_count);

/* the nccl-tests-style table that collectives prints to stderr, one op per
 * block, in a form sim validate --nccl (sim/sim-nccl.h) reads back.
 * host and the per-rank bus id / name describe the devices.  A row's count
 * is what nccl-tests prints: per rank for all_gather (the send count) and
 * reduce_scatter (the receive count), the whole buffer's for the others;
 * algbw and busbw are printed in GB/s (1e9 bytes) with two decimals */
void mb_nccl_table_begin (FILE *f, MbNcclOp op, int n_ranks);
void mb_nccl_table_rank (FILE *f, int rank, long pid, const char *host, int device,
                         const char *bus_id, const char *gpu_name);
void mb_nccl_table_columns (FILE *f);
void mb_nccl_table_row (FILE *f, MbNcclOp op, int n, uint64_t bytes, uint64_t count,
                        const char *type, double time_us);
/* "# Avg bus bandwidth    : X" with X the mean busbw in GB/s (1e9) */
void mb_nccl_table_end (FILE *f, double avg_busbw_GBps);

#ifdef __cplusplus
}
#endif

#endif /* MB_COMMON_H */
