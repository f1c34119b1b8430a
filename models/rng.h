/**
 * @file rng.h
 * @brief Counter-based random numbers: a draw is a pure function of
 *        (seed, stream, index), so it does not depend on the order in which
 *        an engine asks for it, and runs replay exactly. The core draws task
 *        time spreads with it; the simulator draws random node losses.
 */
#ifndef SL_RNG_H
#define SL_RNG_H

#include <math.h>
#include <stdint.h>

/** @brief SplitMix64's finaliser: a bijective 64-bit mix. */
static inline uint64_t sl__draw_mix(uint64_t x)
{
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/** @brief A uniform draw in (0, 1) for (seed, stream, index). */
static inline double sl__draw_uniform(uint64_t seed, uint64_t stream, uint64_t index)
{
  uint64_t x = sl__draw_mix(seed ^ sl__draw_mix(stream ^ sl__draw_mix(index)));
  return ((double)(x >> 11) + 0.5) * 0x1p-53;
}

/** @brief An exponential draw of mean @p mean. */
static inline double sl__draw_exponential(double mean, uint64_t seed, uint64_t stream, uint64_t index)
{
  return -mean * log(sl__draw_uniform(seed, stream, index));
}

/**
 * @brief A log-normal factor of mean 1 and coefficient of variation @p cv
 *        (1 when cv <= 0): task times stay positive and average out right.
 */
static inline double sl__draw_spread(double cv, uint64_t seed, uint64_t stream, uint64_t index)
{
  if (!(cv > 0))
    return 1.0;
  double u1 = sl__draw_uniform(seed, stream, 2 * index);
  double u2 = sl__draw_uniform(seed, stream, 2 * index + 1);
  double z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2); /* Box-Muller */
  double s2 = log1p(cv * cv);
  return exp(sqrt(s2) * z - s2 / 2);
}

#endif
