/*
 * A small deterministic generator for the property and robustness tests
 * (xorshift64*): the same seed gives the same run, so a failure can be
 * replayed.  rnd_seed() sets the state; without it the default is used.
 */
#ifndef TESTS_UNIT_RND_H
#define TESTS_UNIT_RND_H

#include <stdint.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static inline void
rnd_seed(uint64_t seed)
{
	rng_state = seed ? seed : 1;	/* xorshift never leaves 0 */
}

static inline uint32_t
rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

#endif
