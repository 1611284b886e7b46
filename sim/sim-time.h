/* sim-time.h — simulated time.
 *
 * SimTime is a signed 64-bit count of picoseconds: 2^63 ps is 106 days, and
 * a picosecond resolves 8 bytes on a 400 GB/s link.  sim_time_from_s() is
 * the one place a fractional duration becomes a SimTime; it rounds up, so an
 * activity never finishes before its work is done.  Times past the range are
 * held at SIM_TIME_MAX (sim_time_add), and a simulation that reaches it is
 * an error, never a negative or wrapped time.
 */
#pragma once

#include <glib.h>
#include <math.h>

G_BEGIN_DECLS

typedef gint64 SimTime;

#define SIM_TIME_PS_PER_S G_GINT64_CONSTANT (1000000000000)
#define SIM_TIME_MAX G_MAXINT64

/* pure; any thread; 0 for negative or NaN, SIM_TIME_MAX past the range */
static inline SimTime
sim_time_from_s (double seconds)
{
  double ps = ceil (seconds * (double) SIM_TIME_PS_PER_S);
  if (!(ps > 0))
    return 0;
  if (ps >= 9.2e18)
    return SIM_TIME_MAX;
  return (SimTime) ps;
}

/* a + b for non-negative times, held at SIM_TIME_MAX instead of wrapping;
 * pure; any thread */
static inline SimTime
sim_time_add (SimTime a, SimTime b)
{
  return b > SIM_TIME_MAX - a ? SIM_TIME_MAX : a + b;
}

/* pure; any thread */
static inline double
sim_time_to_s (SimTime t)
{
  return (double) t / (double) SIM_TIME_PS_PER_S;
}

G_END_DECLS
