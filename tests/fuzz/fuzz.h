/*
 * What the libFuzzer harnesses share: the entry point libFuzzer calls,
 * and a word of the input (big-endian, RFC 4506 s4.2) to hold decoded
 * fields against.
 */
#ifndef TESTS_FUZZ_FUZZ_H
#define TESTS_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline uint32_t
word_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

#endif
