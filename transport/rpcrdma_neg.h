/*
 * RPC-over-RDMA version negotiation (draft-cel-nfsv4-rpcrdma-version-two-01
 * s5, "the draft" below) and the checks a receiver makes on a Version Two
 * message beyond its XDR (s3.1, s3.2, s4.2.2): pure functions, shared by
 * the client (clnt_rdma_v2.c) and the server (svc_rdma_v2.c), and the
 * process's table of peers that speak Version One only.
 *
 * Neither side implements the backward direction (RFC 8166 s7) or any
 * RDMA2_OPTIONAL type: a message of the other direction is dropped and
 * counted, an RDMA2_OPTIONAL answered RDMA2_ERR_INVALID_OPTION where an
 * answer can go (to a requester) and dropped elsewhere.
 */
#ifndef TRANSPORT_RPCRDMA_NEG_H
#define TRANSPORT_RPCRDMA_NEG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "rpcrdma2_xdr.h"

/* What the configuration asks (config's enum shim_rpcrdma_version). */
enum rpcrdma_want {
	RPCRDMA_WANT_V1,	/* Version One only */
	RPCRDMA_WANT_V2,	/* Version Two offered on every connection */
	RPCRDMA_WANT_AUTO,	/* offered unless the peer is known for One */
};

/* What a receiver does with a Version Two message. */
enum rpcrdma2_verdict {
	RV2_TAKE,		/* a message of our direction: go on with it */
	RV2_DROP,		/* nothing can be answered: too short, a bad error */
	RV2_MALFORMED,		/* answer RDMA2_ERR_BAD_HEADER (a requester: an
				 * error for the call of that XID) */
	RV2_INVALID_OPTION,	/* s3.1: an RDMA2_OPTIONAL of an unknown type */
	RV2_WRONG_DIR,		/* the other direction's, or a direction that
				 * is not the payload's: drop, count */
};

/*
 * Decode a received Version Two message (its version already peeked as
 * 2) into *h and say what to do with it, as a responder (server) or a
 * requester (client):
 *
 *   - not even the four fixed words, or a malformed RDMA2_ERROR: DROP
 *     (RFC 8166 s5.5, by draft s4.2.3);
 *   - anything else malformed (rpcrdma2_hdr_decode): MALFORMED;
 *   - RDMA2_ERROR: TAKE (the requester's answer; a responder drops it
 *     itself, as Version One's RDMA_ERROR);
 *   - RDMA2_MSG/RDMA2_NOMSG whose rdma_direction is not the one this end
 *     receives (CALL at a responder, REPLY at a requester): WRONG_DIR, a
 *     backward-direction message (s4.2.2) neither end serves;
 *   - an inline payload whose msg_type (the RPC message's second word)
 *     differs from rdma_direction or rdma_optdir: s4.2.2 says they MUST
 *     be the same.  A responder answers MALFORMED (an XDR-level error,
 *     RFC 8166 s5.5.2); a requester never takes it for a reply:
 *     WRONG_DIR;
 *   - RDMA2_OPTIONAL, with or without payload: no type is known here.
 *     Of the direction this end receives: INVALID_OPTION (s3.1); of the
 *     other: WRONG_DIR.
 */
enum rpcrdma2_verdict rpcrdma2_recv_check(const void *buf, size_t len,
					  bool responder,
					  struct rpcrdma2_hdr *h);

/*
 * The Version Two header h as the Version One header the rest of the
 * transport reads: the fixed words (vers stays 2), the lists, the error,
 * hdrlen.  RDMA2_MSG, RDMA2_NOMSG and RDMA2_ERROR have Version One's
 * procedure numbers.
 */
void rpcrdma2_to_v1(const struct rpcrdma2_hdr *h, struct rpcrdma_hdr *out);

/*
 * Draft s4.2: an RDMA2_MSG or RDMA2_NOMSG header of direction dir (CALL
 * or REPLY) carrying the lists of the Version One view h (its fixed
 * words but vers, which is 2).  Returns the octets written, -ENOSPC, or
 * -EINVAL for lists rpcrdma2_hdr_encode() would refuse.
 */
ssize_t rpcrdma2_encode_v1view(void *buf, size_t len,
			       const struct rpcrdma_hdr *h, uint32_t dir);

/*
 * s5.2: the version to go on with after an ERR_VERS low..high answered a
 * message of version refused: the highest of the versions spoken here (2,
 * 1) within the range other than refused, or 0 when there is none (the
 * call fails).
 */
uint32_t rpcrdma_vers_pick(uint32_t low, uint32_t high, uint32_t refused);

/*
 * s5.2: peers (address and port) known to speak Version One only, for the
 * life of the process: they answered a Version Two call with ERR_VERS, or
 * did not answer it.  A small table, the oldest entry replaced when full.
 */
#define RPCRDMA_PEERS_MAX 64

bool rpcrdma_peer_v1_only(const struct sockaddr *peer);
void rpcrdma_peer_set_v1_only(const struct sockaddr *peer);
/* Forget every peer (tests). */
void rpcrdma_peers_forget(void);
/* fork(): the table's lock, held across it.  A leaf: nothing is taken under it. */
void rpcrdma_peers_fork_lock(void);
void rpcrdma_peers_fork_unlock(void);

#endif
