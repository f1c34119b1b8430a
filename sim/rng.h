/**
 * @file rng.h
 * @brief Counter-based random numbers for the simulator: a draw is a pure
 *        function of (seed, stream, index), so it does not depend on the
 *        order in which the simulation asks for it and runs replay exactly.
 */
#ifndef SL_SIM_RNG_H
#define SL_SIM_RNG_H

#include <math.h>
#include <stdint.h>

/** @brief SplitMix64's finaliser: a bijective 64-bit mix. */
static inline uint64_t sl__sim_mix(uint64_t x)
{
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/** @brief A uniform draw in (0, 1) for (seed, stream, index). */
static inline double sl__sim_uniform(uint64_t seed, uint64_t stream, uint64_t index)
{
  uint64_t x = sl__sim_mix(seed ^ sl__sim_mix(stream ^ sl__sim_mix(index)));
  return ((double)(x >> 11) + 0.5) * 0x1p-53;
}

/** @brief An exponential draw of mean @p mean. */
static inline double sl__sim_exponential(double mean, uint64_t seed, uint64_t stream, uint64_t index)
{
  return -mean * log(sl__sim_uniform(seed, stream, index));
}

/**
 * @brief A log-normal factor of mean 1 and coefficient of variation @p cv
 *        (1 when cv <= 0): task times stay positive and average out right.
 */
static inline double sl__sim_spread(double cv, uint64_t seed, uint64_t stream, uint64_t index)
{
  if (!(cv > 0))
    return 1.0;
  double u1 = sl__sim_uniform(seed, stream, 2 * index);
  double u2 = sl__sim_uniform(seed, stream, 2 * index + 1);
  double z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2); /* Box-Muller */
  double s2 = log1p(cv * cv);
  return exp(sqrt(s2) * z - s2 / 2);
}

#endif
