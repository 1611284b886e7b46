/* sim-variability.h — why a real cluster's step is slower than a uniform
 * one's: no two GPUs compute at the same speed, and every step waits for
 * the slowest.
 *
 * Each step of data-parallel training ends in a gradient reduction that
 * every replica joins, the pipeline chains the stages of a replica, and
 * the tensor-parallel collectives of every layer join the GPUs of a stage:
 * all GPUs of the job synchronise at least once a step, so the step runs
 * at the pace of the slowest of them (its stage computes longer, the other
 * stages wait on it in the pipeline, the other replicas at the reduction).
 *
 * A GPU's compute time is modelled as the nominal time times 1 + sigma z,
 * z a standard normal drawn once per GPU (chip-to-chip variation of the
 * sustained clock under the power limit, which persists from step to
 * step).  The expected slowest of N GPUs is 1 + sigma E[max of N z], and
 * sim stretches every stage's compute by that: to first order a pipeline's
 * steady state runs at its slowest stage's pace, and the reduction at the
 * slowest replica's.
 *
 * sigma, SIM_GPU_VARIATION_DEFAULT: Sinha et al., "Not All GPUs Are
 * Created Equal: Characterizing Variability in Large-Scale,
 * Accelerator-Rich Systems" (SC22, arXiv:2208.11035v3, abstract) measured
 * the same kernels on more than 90 % of the GPUs of five clusters (Summit,
 * Vortex, Frontera, Longhorn, Corona; NVIDIA V100 and AMD MI60 among them,
 * air- and water-cooled):
 * 8 % average performance variation between the GPUs of one cluster (22 %
 * at most), with outliers up to 1.5x slower than the median GPU.  Read as
 * the spread between a box plot's whiskers (outliers apart), which for a
 * normal spread lie 2 x 2.698 sigma apart (Tukey's 1.5 IQR fences), 8 %
 * gives sigma = 8 / 5.40 = 1.48 %; read as the range of the thousands of
 * GPUs measured (about 2 x 3.5 sigma), 1.1 %.  sim takes 1.5 %, the upper
 * reading: the outliers beyond it (a GPU 1.5x slower) are what --slow-gpu
 * asks about, not the spread.  Transient per-step noise (host jitter,
 * data loading, garbage collection) is not included: no source in this
 * tree measures its size, and a fleet that keeps its stragglers (or its
 * slow links) is what the what-if flags model. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* the per-GPU spread of compute speed (one standard deviation, a fraction
 * of the nominal time); see above */
#define SIM_GPU_VARIATION_DEFAULT 0.015

/* E[max(Z_1 .. Z_n)] for n independent standard normals: 0 for n <= 1,
 * 1/sqrt(pi) = 0.5642 for 2, 3/(2 sqrt(pi)) = 0.8463 for 3, 3.2414 for
 * 1000 (Tippett 1925).  Numerical integration of
 * int_0^inf (1 - Phi^n) - int_-inf^0 Phi^n, accurate to 1e-9; pure, any
 * thread, about 1,600 evaluations of erfc. */
double sim_normal_expected_max (int n);

/* The fraction by which the expected slowest of `gpus` GPUs, each 1 +
 * sigma z of the nominal time, computes longer than nominal:
 * sigma x sim_normal_expected_max (gpus); 0 for sigma <= 0 or one GPU.
 * Pure; any thread. */
double sim_variability_slowdown (double sigma, int gpus);

G_END_DECLS
