/*
 * The client's RPC-over-RDMA version (clnt_rdma_v2.c): Version Two
 * negotiated as draft-cel-nfsv4-rpcrdma-version-two-01 s5 says, never
 * worse than Version One.  Hooks for clnt_rdma.c, clnt_rdma_marshal.c
 * and clnt_rdma_cq.c; every function runs under the CLIENT's ct_lock.
 */
#ifndef TRANSPORT_CLNT_RDMA_V2_H
#define TRANSPORT_CLNT_RDMA_V2_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <rpc/rpc.h>

#include "rpcrdma_neg.h"

struct ct_rdma;
struct ct_slot;

/* Where a CLIENT stands (ct_rdma.ct_vstate). */
enum ct_vstate {
	CT_V1,			/* Version One for good */
	CT_V2_ASK,		/* the next call waited for goes in Version Two */
	CT_V2,			/* Version Two agreed (s5.1) */
};

/* After connecting: the setting (enum rpcrdma_want) and its first state. */
void ct_v2_setup(struct ct_rdma *ct, unsigned int want);
/* The version the connection offers or uses now, for the log. */
uint32_t ct_v2_offered(const struct ct_rdma *ct);

/* The version of the call about to be sent in slot (sets slot->rvers). */
uint32_t ct_call_vers(struct ct_rdma *ct, struct ct_slot *slot);
/* Octets a call header of version vers takes beyond Version One's. */
static inline size_t
ct_hdr_extra(uint32_t vers)
{
	/* draft s4.2: rdma_direction before the lists */
	return vers == RPCRDMA2_VERSION ? 4 : 0;
}
/* The call's header h (its vers says which) into buf. */
ssize_t ct_hdr_encode(void *buf, size_t len, struct rpcrdma_hdr *h);

/*
 * Decode a received message into h as rpcrdma_hdr_decode() does, Version
 * Two ones included; -ECANCELED when it was dropped here (a backward-
 * direction message, a direction that is not the payload's, an
 * RDMA2_OPTIONAL, a malformed RDMA2_ERROR): never taken for a reply.
 */
int ct_hdr_decode(struct ct_rdma *ct, const uint8_t *buf, uint32_t len,
		  struct rpcrdma_hdr *h);

/*
 * The answer in slot->rep to the call in slot: when it settles the
 * negotiation, true with *st: an ERR_VERS is answered by sending the
 * same call (same XID) again in the version picked (*refresh and
 * slot->resend).  False: go on with the answer as usual.
 */
bool ct_v2_answer(struct ct_rdma *ct, struct ct_slot *slot,
		  uint32_t xid, bool *refresh, enum clnt_stat *st);

/* No answer came to the call in slot (timeout, connection lost). */
void ct_v2_unanswered(struct ct_rdma *ct, const struct ct_slot *slot);

#endif
