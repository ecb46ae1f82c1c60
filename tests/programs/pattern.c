/*
 * The rpctest data pattern and checksum (see pattern.h).
 */
#include <string.h>

#include "pattern.h"

static uint64_t
mix64(uint64_t x)
{
	/* The splitmix64 finaliser: every input bit affects every output bit. */
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

static void
word_bytes(unsigned char out[8], uint64_t w)
{
	for (int i = 0; i < 8; i++)
		out[i] = (unsigned char)(w >> (8 * i));
}

void
pattern_fill(void *buf, size_t len, uint64_t seed)
{
	unsigned char *p = buf;
	uint64_t base = mix64(seed);
	size_t off = 0;

	for (uint64_t k = 0; off + 8 <= len; k++, off += 8)
		word_bytes(p + off, mix64(base + k));
	if (off < len) {
		unsigned char tail[8];

		word_bytes(tail, mix64(base + (off >> 3)));
		memcpy(p + off, tail, len - off);
	}
}

size_t
pattern_check(const void *buf, size_t len, uint64_t seed)
{
	const unsigned char *p = buf;
	uint64_t base = mix64(seed);

	for (size_t off = 0; off < len; off += 8) {
		unsigned char want[8];
		size_t n = len - off < 8 ? len - off : 8;

		word_bytes(want, mix64(base + (off >> 3)));
		if (memcmp(p + off, want, n) == 0)
			continue;
		for (size_t i = 0; i < n; i++)
			if (p[off + i] != want[i])
				return off + i;
	}
	return len;
}

void
pattern_fill_text(char *buf, size_t len, uint64_t seed)
{
	pattern_fill(buf, len, seed);
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)('!' + (unsigned char)buf[i] % 94);
}

uint64_t
checksum_update(uint64_t sum, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++) {
		sum ^= p[i];
		sum *= UINT64_C(0x100000001b3);
	}
	return sum;
}
