/* sim-gemm.h — achieved GEMM throughput by shape, from measured tables.
 *
 * A GPU type may carry measured bf16 GEMM rates (topology XML <gemm>).  When
 * the points form a full grid in m, n and k the rate is interpolated
 * linearly in log2(m), log2(n), log2(k); otherwise (a size curve) linearly
 * in log2 of the cube root of m*n*k.  Outside the measured range it is
 * clamped to the nearest edge.  Without a table the dense bf16 peak is
 * returned: an upper bound, which the report flags.
 */
#pragma once

#include "sim-topology.h"

G_BEGIN_DECLS

/* index gpu->gemm once it is read or replaced (a grid's rates in an
 * array, its axes sorted), so that sim_gemm_rate does not search the
 * points on every call; the result is the same.  Not while another thread
 * reads gpu. */
void sim_gemm_prepare (SimGpuType *gpu);

/* FLOP/s a GEMM of (m x k) . (k x n) reaches; never fails; any thread
 * (through the index of sim_gemm_prepare when it is of the current table) */
double sim_gemm_rate (const SimGpuType *gpu, double m, double n, double k);

/* seconds for it: 2*m*n*k FLOP at that rate (0 when a dimension is <= 0);
 * never fails; any thread */
double sim_gemm_time (const SimGpuType *gpu, double m, double n, double k);

G_END_DECLS
