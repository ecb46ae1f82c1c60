/*
 * The server's RPC-over-RDMA Version Two (svc_rdma_v2.c): each call is
 * answered in the version it came in (draft-cel-nfsv4-rpcrdma-version-
 * two-01 s5.3), when the listener accepts Version Two; otherwise every
 * message goes through Version One's codec as before.  Hooks for the
 * receive side (svc_rdma_recvfrom.c) and the replies (svc_rdma_sendto.c).
 */
#ifndef TRANSPORT_SVC_RDMA_V2_H
#define TRANSPORT_SVC_RDMA_V2_H

#include <stdint.h>
#include <sys/types.h>

#include "rpcrdma2_xdr.h"

struct svc_rdma_conn;

/*
 * Decode a received message into sc->hdr, as rpcrdma_hdr_decode() does,
 * Version Two ones included (their vers is 2 there); -EALREADY when the
 * message was answered or dropped here (RDMA2_OPTIONAL, the wrong
 * direction) and is no call.
 */
int sc_hdr_decode(struct svc_rdma_conn *sc, const uint8_t *buf, uint32_t len);

/* Octets a reply header to the call rq takes beyond Version One's. */
static inline size_t
sc_hdr_extra(const struct rpcrdma_hdr *rq)
{
	/* draft s4.2: rdma_direction before the lists */
	return rq->vers == RPCRDMA2_VERSION ? 4 : 0;
}

/* The header of a reply to the call in sc->hdr, in its version. */
ssize_t sc_reply_hdr_encode(const struct svc_rdma_conn *sc, void *buf,
			    size_t len, struct rpcrdma_hdr *h);

/*
 * An RDMA_ERROR (RFC 8166 s5.5) or RDMA2_ERROR: ERR_VERS names 1..2 when
 * the listener accepts Version Two, 1..1 otherwise; err may be
 * RDMA2_ERR_INVALID_OPTION for a Version Two message.
 */
ssize_t sc_error_encode(const struct svc_rdma_conn *sc, void *buf, size_t len,
			uint32_t xid, uint32_t vers, uint32_t err);

/* ", RPC-over-RDMA versions 1-2" or ", ... version 1", for the log. */
const char *sc_versions_text(const struct svc_rdma_conn *sc);

#endif
