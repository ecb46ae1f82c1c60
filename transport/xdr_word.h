/*
 * XDR words for the transport header codecs (rpcrdma_xdr.c,
 * rpcrdma2_xdr.c): a cursor p and the end of the buffer, the bounds
 * checked before anything is touched, the cursor after the word or NULL.
 * Words are written and read octet by octet, big-endian (RFC 4506 s3), so
 * neither the host's byte order nor the buffer's alignment matters.
 */
#ifndef TRANSPORT_XDR_WORD_H
#define TRANSPORT_XDR_WORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XDR_UNIT 4u

/* Octets from p to end; p must not be past end. */
static inline size_t
room(const uint8_t *p, const uint8_t *end)
{
	return (size_t)(end - p);
}

static inline bool
fits(const uint8_t *p, const uint8_t *end, size_t n)
{
	return p && end && p <= end && room(p, end) >= n;
}

/* RFC 4506 s4.2: unsigned int, big-endian. */
static inline uint32_t
get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline uint8_t *
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + XDR_UNIT;
}

/* One word (a count, a discriminator, an enum). */
static inline uint8_t *
encode_word(uint8_t *p, const uint8_t *end, uint32_t v)
{
	if (!fits(p, end, XDR_UNIT))
		return NULL;
	return put_be32(p, v);
}

static inline const uint8_t *
decode_word(const uint8_t *p, const uint8_t *end, uint32_t *v)
{
	if (!fits(p, end, XDR_UNIT))
		return NULL;
	*v = get_be32(p);
	return p + XDR_UNIT;
}

#endif
