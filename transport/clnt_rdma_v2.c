/*
 * The client's RPC-over-RDMA version (clnt_rdma_v2.h), as the requester of
 * draft-cel-nfsv4-rpcrdma-version-two-01 s5 ("the draft"):
 *
 *   - the first call of a connection that is waited for goes in Version
 *     Two (a call nobody waits for cannot carry the negotiation: an
 *     ERR_VERS to it would lose it), within what Version One allows
 *     first: the inline threshold of the RFC 8797 private data, or
 *     Version One's 1024 without it (the endpoint's send_max already).
 *     Calls of other threads made before the answer ask too: each
 *     refused one is sent again the same way;
 *   - a non-error reply in Version Two settles it (s5.1): thresholds move
 *     to Version Two's defaults where no private data set them (s5.2
 *     lets them change without losing the connection);
 *   - ERR_VERS (s5.2): the highest version of the range spoken here is
 *     taken and the same call, same XID, sent again on the same
 *     connection.  The first was refused by the transport before any RPC
 *     service saw it, so the program sees one call, answered once;
 *   - no answer at all (a timeout, the connection lost) counts as
 *     Version One too (s5.2), for the rest of the connection;
 *   - with rpcrdma_version = auto a peer (address and port) that came out
 *     as Version One is remembered for the process (rpcrdma_neg.h): its
 *     later connections start in Version One, so it pays one round trip
 *     once.  With 2 every connection asks.
 *
 * Received messages of Version Two are checked (rpcrdma2_recv_check): a
 * backward-direction call, a message whose direction is not its
 * payload's, an RDMA2_OPTIONAL are dropped and counted, never matched to
 * a call by XID.  A requester cannot answer them: an RDMA2_ERROR travels
 * only from responder to requester (s4.2.2).
 */
#include <errno.h>

#include "clnt_rdma_int.h"
#include "common/log.h"
#include "common/sockaddr.h"

static void
ct_v2_publish(struct ct_rdma *ct, uint32_t vers)
{
	if (ct->ct_stats)
		__atomic_store_n(&ct->ct_stats->rpcrdma_vers, vers,
				 __ATOMIC_RELAXED);
}

void
ct_v2_setup(struct ct_rdma *ct, unsigned int want)
{
	ct->ct_vwant = want;
	if (want == RPCRDMA_WANT_V1 ||
	    (want == RPCRDMA_WANT_AUTO &&
	     rpcrdma_peer_v1_only(ep_peer_addr(ct->ct_ep))))
		ct->ct_vstate = CT_V1;
	else
		ct->ct_vstate = CT_V2_ASK;
}

uint32_t
ct_v2_offered(const struct ct_rdma *ct)
{
	return ct->ct_vstate == CT_V1 ? RPCRDMA1_VERSION : RPCRDMA2_VERSION;
}

/* s5.2: Version One for the rest of the connection (and the peer's). */
static void
ct_v2_to_v1(struct ct_rdma *ct, const char *why)
{
	char peer[INET6_ADDRSTRLEN];
	const struct sockaddr *pa = ep_peer_addr(ct->ct_ep);
	bool remember = ct->ct_vwant == RPCRDMA_WANT_AUTO;

	ct->ct_vstate = CT_V1;
	ct_v2_publish(ct, RPCRDMA1_VERSION);
	if (remember)
		rpcrdma_peer_set_v1_only(pa);
	sa_format_addr(pa, peer, sizeof(peer));
	shim_log(SHIM_LOG_INFO,
		 "client: %s port %u %s: RPC-over-RDMA version 1%s",
		 peer, sa_port(pa), why,
		 remember ? ", for this server from now on" : "");
}

uint32_t
ct_call_vers(struct ct_rdma *ct, struct ct_slot *slot)
{
	if (ct->ct_vstate == CT_V2_ASK && ct->ct_vwant == RPCRDMA_WANT_AUTO &&
	    rpcrdma_peer_v1_only(ep_peer_addr(ct->ct_ep))) {
		/* Another CLIENT learnt it since this one connected. */
		ct->ct_vstate = CT_V1;
		ct_v2_publish(ct, RPCRDMA1_VERSION);
	}
	if (ct->ct_vstate == CT_V2 ||
	    (ct->ct_vstate == CT_V2_ASK && slot->wait_reply))
		slot->rvers = RPCRDMA2_VERSION;
	else
		slot->rvers = RPCRDMA1_VERSION;
	return slot->rvers;
}

ssize_t
ct_hdr_encode(void *buf, size_t len, struct rpcrdma_hdr *h)
{
	if (h->vers != RPCRDMA2_VERSION)
		return rpcrdma_hdr_encode(buf, len, h);
	/* Draft s4.2, s4.2.2: a call's direction is CALL. */
	return rpcrdma2_encode_v1view(buf, len, h, RDMA2_DIR_CALL);
}

int
ct_hdr_decode(struct ct_rdma *ct, const uint8_t *buf, uint32_t len,
	      struct rpcrdma_hdr *h)
{
	struct rpcrdma2_hdr h2;
	uint32_t xid, vers;
	enum rpcrdma2_verdict v;

	if (ct->ct_vwant == RPCRDMA_WANT_V1 ||
	    rpcrdma_peek_version(buf, len, &xid, &vers) ||
	    vers != RPCRDMA2_VERSION)
		return rpcrdma_hdr_decode(buf, len, h);

	v = rpcrdma2_recv_check(buf, len, false, &h2);
	rpcrdma2_to_v1(&h2, h);
	switch (v) {
	case RV2_TAKE:
		return 0;
	case RV2_MALFORMED:
		/* As Version One: the call of that XID fails. */
		return -EBADMSG;
	case RV2_DROP:
		if (len < RPCRDMA2_PREFIX_LEN)
			return -EMSGSIZE;
		shim_log(SHIM_LOG_DEBUG,
			 "client: dropped a malformed RDMA2_ERROR for xid 0x%08x",
			 h2.xid);
		break;
	default:
		shim_log(SHIM_LOG_WARN,
			 "client: dropped a Version Two %s of direction %s for xid 0x%08x: not a reply",
			 rpcrdma2_proc_name(h2.proc),
			 rpcrdma2_dir_name(h2.direction), h2.xid);
		break;
	}
	SHIM_STATS_ADD(ct->ct_stats, dropped, 1);
	return -ECANCELED;
}

/* s5.1: Version Two agreed. */
static void
ct_v2_agreed(struct ct_rdma *ct)
{
	ct->ct_vstate = CT_V2;
	ct_v2_publish(ct, RPCRDMA2_VERSION);
	ep_inline_v2(ct->ct_ep);
	if (ct->ct_stats) {
		ct->ct_stats->inline_send = ep_send_max(ct->ct_ep);
		ct->ct_stats->inline_recv = ep_recv_max(ct->ct_ep);
	}
	shim_log(SHIM_LOG_DEBUG, "client: RPC-over-RDMA version 2 agreed");
}

bool
ct_v2_answer(struct ct_rdma *ct, struct ct_slot *slot, uint32_t xid,
	     bool *refresh, enum clnt_stat *st)
{
	const struct rpcrdma_hdr *h = &slot->rep.hdr;
	uint32_t v;

	if (slot->rvers != RPCRDMA2_VERSION)
		return false;
	if (ct->ct_vstate == CT_V1 && h->proc == RDMA_ERROR &&
	    h->err == RDMA_ERR_VERS && h->vers_low == RPCRDMA1_VERSION) {
		/* Another call of this CLIENT asking at once settled it. */
		slot->resend = true;
		*refresh = true;
		*st = ct_fail(ct, RPC_CANTRECV, EPROTONOSUPPORT);
		return true;
	}
	if (ct->ct_vstate != CT_V2_ASK)
		return false;
	if (h->proc == RDMA_MSG || h->proc == RDMA_NOMSG) {
		/* A reply in Version One to Version Two breaks s5.3. */
		if (h->vers == RPCRDMA2_VERSION)
			ct_v2_agreed(ct);
		else
			ct_v2_to_v1(ct, "answered Version Two in version 1");
		return false;
	}
	if (h->proc != RDMA_ERROR)
		return false;	/* malformed: the call fails, the next asks */
	if (h->err != RDMA_ERR_VERS)
		return false;	/* the call failed; the next one asks again */

	SHIM_STATS_ADD(ct->ct_stats, rdma_errors, 1);
	v = rpcrdma_vers_pick(h->vers_low, h->vers_high, RPCRDMA2_VERSION);
	if (v != RPCRDMA1_VERSION) {
		shim_log(SHIM_LOG_WARN,
			 "client: server answered ERR_VERS %u..%u to xid 0x%08x: no version in common",
			 h->vers_low, h->vers_high, xid);
		ct->ct_vstate = CT_V1;
		*st = ct_fail(ct, RPC_CANTRECV, EPROTONOSUPPORT);
		return true;
	}
	ct_v2_to_v1(ct, "offers versions 1..1 (ERR_VERS to the first call)");
	/* The same call again, with its XID (clnt_rdma.c, ct_prepare). */
	slot->resend = true;
	*refresh = true;
	*st = ct_fail(ct, RPC_CANTRECV, EPROTONOSUPPORT);
	return true;
}

void
ct_v2_unanswered(struct ct_rdma *ct, const struct ct_slot *slot)
{
	if (ct->ct_vstate == CT_V2_ASK && slot->rvers == RPCRDMA2_VERSION)
		ct_v2_to_v1(ct, "did not answer the first call, in version 2");
}
