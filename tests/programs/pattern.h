/*
 * Data shared by the rpctest client and server: the byte pattern SOURCE
 * returns and the checksum SINK and MIXED report.
 *
 * The pattern is a function of (seed, offset) only, so either side can
 * produce or check any slice of it:  the 8-byte little-endian word at
 * offset 8*k is mix64(mix64(seed) + k).
 */
#ifndef RPCTEST_PATTERN_H
#define RPCTEST_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#define RPCTEST_FNV_BASIS UINT64_C(0xcbf29ce484222325)

/* Fill buf[0..len) with the pattern for seed. */
void pattern_fill(void *buf, size_t len, uint64_t seed);

/* Offset of the first byte that differs from the pattern, or len. */
size_t pattern_check(const void *buf, size_t len, uint64_t seed);

/* Fill buf[0..len) with printable, non-NUL characters derived from seed. */
void pattern_fill_text(char *buf, size_t len, uint64_t seed);

/* 64-bit FNV-1a over buf[0..len), continuing from sum. */
uint64_t checksum_update(uint64_t sum, const void *buf, size_t len);

static inline uint64_t
checksum(const void *buf, size_t len)
{
	return checksum_update(RPCTEST_FNV_BASIS, buf, len);
}

#endif
