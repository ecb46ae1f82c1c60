/*
 * RPC-over-RDMA Version One CM private data (RFC 8797, draft -08 s4).
 *
 * Pure functions: no device needed.
 *
 *   0               1               2               3
 *   +---------------+---------------+---------------+---------------+
 *   |                  Format Identifier 0xf6ab0e18                 |
 *   +---------------+-------------+-+---------------+---------------+
 *   | Version = 1   |  Reserved   |R|   Send Size   | Receive Size  |
 *   +---------------+-------------+-+---------------+---------------+
 *
 * Sizes are encoded as (bytes / 1024) - 1, so 1 KiB .. 256 KiB (s4.2).
 */
#ifndef TRANSPORT_PVTDATA_H
#define TRANSPORT_PVTDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPCRDMA1_CMP_FORMAT_ID 0xf6ab0e18u
#define RPCRDMA1_CMP_VERSION 1
#define RPCRDMA1_CMP_LEN 8
#define RPCRDMA1_CMP_F_RINV 0x01u	/* R: bit 15 of the second word */

/* RFC 8166 s3.3.3 minimum; RFC 8797 s4.2 largest encodable size. */
#define RPCRDMA1_INLINE_MIN 1024u
#define RPCRDMA1_INLINE_MAX 262144u

struct rpcrdma_cm_pdata {
	bool remote_inv;	/* R: sender supports remote invalidation */
	uint32_t send_size;	/* bytes this peer sends in one RDMA Send */
	uint32_t recv_size;	/* bytes this peer receives in one Receive */
};

/*
 * Encode a size as the one-octet field: bytes are rounded down to a
 * multiple of 1024 and clamped to RPCRDMA1_INLINE_MIN..RPCRDMA1_INLINE_MAX.
 */
uint8_t rpcrdma_cmp_size_encode(uint32_t bytes);
uint32_t rpcrdma_cmp_size_decode(uint8_t field);

/* Write the 8-octet message (s4); sizes are encoded as above. */
void rpcrdma_cmp_encode(uint8_t out[RPCRDMA1_CMP_LEN],
			const struct rpcrdma_cm_pdata *pd);

/*
 * Parse private data received in a connect request or accept (s5).  The
 * buffer is searched for the Format Identifier at every offset (no
 * alignment is assumed: other layers may put their own bytes first); the
 * first occurrence whose Version is 1 and whose 8 octets lie inside the
 * buffer is taken.  Returns true and fills *pd then.  Otherwise (absent,
 * short, wrong version, NULL buffer) returns false and fills *pd with the
 * Version One defaults of s5.1: 1024/1024 and no remote invalidation.
 */
bool rpcrdma_cmp_decode(const void *buf, size_t len,
			struct rpcrdma_cm_pdata *pd);

/*
 * Inline thresholds of one end of a connection (s4.2): what it may send is
 * min(own send, peer receive); what it may receive is min(peer send, own
 * receive).  The same rule serves client and server.  Every size is taken
 * as it is advertised, rounded and clamped as by rpcrdma_cmp_size_encode(),
 * so that both ends compute the same thresholds.  A peer that sent no
 * private data is passed as the defaults rpcrdma_cmp_decode() fills in.
 */
void rpcrdma_cmp_thresholds(const struct rpcrdma_cm_pdata *local,
			    const struct rpcrdma_cm_pdata *peer,
			    uint32_t *send_max, uint32_t *recv_max);

#endif
