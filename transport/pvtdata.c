/*
 * RPC-over-RDMA Version One CM private data (RFC 8797).
 *
 * Octet layout of the message (s4), the Format Identifier big-endian:
 *
 *   0..3  Format Identifier 0xf6ab0e18
 *   4     Version
 *   5     Reserved (7 bits) | R (least significant bit)
 *   6     Send Size
 *   7     Receive Size
 */
#include "pvtdata.h"

#define CMP_OFF_VERSION 4
#define CMP_OFF_FLAGS 5
#define CMP_OFF_SEND 6
#define CMP_OFF_RECV 7

#define CMP_SIZE_UNIT 1024u

/* RFC 8797 s5.1: what a peer that sent nothing usable is taken to offer. */
static const struct rpcrdma_cm_pdata cmp_defaults = {
	.remote_inv = false,
	.send_size = RPCRDMA1_INLINE_MIN,
	.recv_size = RPCRDMA1_INLINE_MIN,
};

/*
 * RFC 8797 s4.2: (bytes / 1024) - 1.  Sizes that are not a multiple of
 * 1024 round down (the field promises at most what the buffers hold);
 * sizes outside 1 KiB..256 KiB clamp to the nearest end.
 */
uint8_t
rpcrdma_cmp_size_encode(uint32_t bytes)
{
	if (bytes < RPCRDMA1_INLINE_MIN)
		bytes = RPCRDMA1_INLINE_MIN;
	if (bytes > RPCRDMA1_INLINE_MAX)
		bytes = RPCRDMA1_INLINE_MAX;
	return (uint8_t)(bytes / CMP_SIZE_UNIT - 1);
}

/* RFC 8797 s4.2: "adds one to the encoded value and then multiplies". */
uint32_t
rpcrdma_cmp_size_decode(uint8_t field)
{
	return ((uint32_t)field + 1) * CMP_SIZE_UNIT;
}

/* RFC 8797 s4: Reserved bits are sent as zero. */
void
rpcrdma_cmp_encode(uint8_t out[RPCRDMA1_CMP_LEN],
		   const struct rpcrdma_cm_pdata *pd)
{
	out[0] = (uint8_t)(RPCRDMA1_CMP_FORMAT_ID >> 24);
	out[1] = (uint8_t)(RPCRDMA1_CMP_FORMAT_ID >> 16);
	out[2] = (uint8_t)(RPCRDMA1_CMP_FORMAT_ID >> 8);
	out[3] = (uint8_t)RPCRDMA1_CMP_FORMAT_ID;
	out[CMP_OFF_VERSION] = RPCRDMA1_CMP_VERSION;
	out[CMP_OFF_FLAGS] = pd->remote_inv ? RPCRDMA1_CMP_F_RINV : 0;
	out[CMP_OFF_SEND] = rpcrdma_cmp_size_encode(pd->send_size);
	out[CMP_OFF_RECV] = rpcrdma_cmp_size_encode(pd->recv_size);
}

static bool
cmp_format_id_at(const uint8_t *p)
{
	uint32_t id = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		      (uint32_t)p[2] << 8 | (uint32_t)p[3];

	return id == RPCRDMA1_CMP_FORMAT_ID;
}

/*
 * RFC 8797 s5.2: search the whole buffer, at every offset (no alignment),
 * for the Format Identifier; take the first occurrence that has a known
 * Version and whose message does not overrun the buffer.  s4: receivers
 * ignore the Reserved bits.
 */
bool
rpcrdma_cmp_decode(const void *buf, size_t len, struct rpcrdma_cm_pdata *pd)
{
	const uint8_t *p = buf;
	size_t off;

	*pd = cmp_defaults;
	if (!p || len < RPCRDMA1_CMP_LEN)
		return false;

	/* An identifier closer than 8 octets to the end cannot fit. */
	for (off = 0; off <= len - RPCRDMA1_CMP_LEN; off++) {
		if (!cmp_format_id_at(p + off) ||
		    p[off + CMP_OFF_VERSION] != RPCRDMA1_CMP_VERSION)
			continue;
		pd->remote_inv = p[off + CMP_OFF_FLAGS] & RPCRDMA1_CMP_F_RINV;
		pd->send_size = rpcrdma_cmp_size_decode(p[off + CMP_OFF_SEND]);
		pd->recv_size = rpcrdma_cmp_size_decode(p[off + CMP_OFF_RECV]);
		return true;
	}
	return false;
}

/* A size as the peer sees it: rounded and clamped as on the wire (s4.2). */
static uint32_t
cmp_size_advertised(uint32_t bytes)
{
	return rpcrdma_cmp_size_decode(rpcrdma_cmp_size_encode(bytes));
}

static uint32_t
min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/*
 * RFC 8797 s4.2: each direction's threshold is the smaller of what its
 * sender may send and what its receiver may receive.  Both ends must
 * arrive at the same numbers, so the local sizes count as advertised.
 */
void
rpcrdma_cmp_thresholds(const struct rpcrdma_cm_pdata *local,
		       const struct rpcrdma_cm_pdata *peer,
		       uint32_t *send_max, uint32_t *recv_max)
{
	*send_max = min_u32(cmp_size_advertised(local->send_size),
			    cmp_size_advertised(peer->recv_size));
	*recv_max = min_u32(cmp_size_advertised(peer->send_size),
			    cmp_size_advertised(local->recv_size));
}
