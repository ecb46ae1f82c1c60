/*
 * RPC-over-RDMA version negotiation and the checks on a received Version
 * Two message (rpcrdma_neg.h).  Pure but for the peer table.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "common/sockaddr.h"
#include "rpcrdma_neg.h"
#include "xdr_word.h"

/* RFC 5531 s9: the RPC message opens with xid, then msg_type. */
#define RPC_MSG_TYPE_OFF 4

/*
 * The msg_type of the RPC message carried inline after the header, or
 * UINT32_MAX when not enough of it is there to say (RDMA2_NOMSG, or an
 * RDMA2_OPTIONAL with no or part of a payload, s4.2.1).
 */
static uint32_t
payload_msg_type(const uint8_t *buf, size_t len, const struct rpcrdma2_hdr *h)
{
	if (h->proc == RDMA2_NOMSG || len < h->hdrlen + RPC_MSG_TYPE_OFF + 4)
		return UINT32_MAX;
	return get_be32(buf + h->hdrlen + RPC_MSG_TYPE_OFF);
}

enum rpcrdma2_verdict
rpcrdma2_recv_check(const void *buf, size_t len, bool responder,
		    struct rpcrdma2_hdr *h)
{
	uint32_t ours = responder ? RDMA2_DIR_CALL : RDMA2_DIR_REPLY;
	uint32_t mtype;
	int ret = rpcrdma2_hdr_decode(buf, len, h);

	if (ret == -EMSGSIZE || ret == -EPROTONOSUPPORT)
		return RV2_DROP;
	if (ret)
		/* RFC 8166 s5.5: an error is never answered with an error. */
		return h->proc == RDMA2_ERROR ? RV2_DROP : RV2_MALFORMED;
	if (h->proc == RDMA2_ERROR)
		return RV2_TAKE;

	/* s4.2.2: rdma_direction (rdma_optdir) is the payload's msg_type. */
	mtype = payload_msg_type(buf, len, h);
	if (mtype != UINT32_MAX && mtype != h->direction)
		return responder && h->direction == ours ? RV2_MALFORMED :
							   RV2_WRONG_DIR;
	if (h->direction != ours)
		return RV2_WRONG_DIR;
	/* s3.1: this end knows no rdma_opttype. */
	return h->proc == RDMA2_OPTIONAL ? RV2_INVALID_OPTION : RV2_TAKE;
}

void
rpcrdma2_to_v1(const struct rpcrdma2_hdr *h, struct rpcrdma_hdr *out)
{
	/* The list fields; the rest is set below. */
	rpcrdma_hdr_copy(out, &h->chunks);
	out->xid = h->xid;
	out->vers = h->vers;
	out->credits = h->credits;
	/* RDMA2_MSG 0, RDMA2_NOMSG 1, RDMA2_ERROR 4: Version One's numbers. */
	out->proc = h->proc;
	out->err = h->err;
	out->vers_low = h->vers_low;
	out->vers_high = h->vers_high;
	out->hdrlen = h->hdrlen;
}

ssize_t
rpcrdma2_encode_v1view(void *buf, size_t len, const struct rpcrdma_hdr *h,
		       uint32_t dir)
{
	uint8_t *start = buf, *p;
	const uint8_t *end = start ? start + len : NULL;

	if ((h->proc != RDMA_MSG && h->proc != RDMA_NOMSG) ||
	    (dir != RDMA2_DIR_CALL && dir != RDMA2_DIR_REPLY) ||
	    !rpcrdma_chunks_valid(h) ||
	    (h->proc == RDMA_NOMSG && !rpcrdma_nomsg_has_payload_chunk(h)))
		return -EINVAL;
	p = rpcrdma_encode_prefix(start, end, h->xid, RPCRDMA2_VERSION,
				  h->credits, h->proc);
	p = rpcrdma2_encode_chunk_lists(p, end, dir, h);
	return p ? p - start : -ENOSPC;
}

uint32_t
rpcrdma_vers_pick(uint32_t low, uint32_t high, uint32_t refused)
{
	uint32_t v;

	for (v = RPCRDMA2_VERSION; v >= RPCRDMA1_VERSION; v--)
		if (v != refused && low <= v && v <= high)
			return v;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Peers that speak Version One only                                   */
/* ------------------------------------------------------------------ */

static struct peer_key v1_peers[RPCRDMA_PEERS_MAX];
static unsigned int v1_npeers, v1_next;
static pthread_mutex_t v1_lock = PTHREAD_MUTEX_INITIALIZER;

static bool
v1_find_locked(const struct peer_key *k)
{
	unsigned int i;

	for (i = 0; i < v1_npeers; i++)
		if (!memcmp(&v1_peers[i], k, sizeof(*k)))
			return true;
	return false;
}

bool
rpcrdma_peer_v1_only(const struct sockaddr *peer)
{
	struct peer_key k;
	bool found;

	if (!peer_key_from(&k, peer))
		return false;
	peer_key_unmap(&k);
	pthread_mutex_lock(&v1_lock);
	found = v1_find_locked(&k);
	pthread_mutex_unlock(&v1_lock);
	return found;
}

void
rpcrdma_peer_set_v1_only(const struct sockaddr *peer)
{
	struct peer_key k;

	if (!peer_key_from(&k, peer))
		return;
	peer_key_unmap(&k);
	pthread_mutex_lock(&v1_lock);
	if (!v1_find_locked(&k))
		v1_peers[v1_npeers < RPCRDMA_PEERS_MAX ? v1_npeers++ :
			 v1_next++ % RPCRDMA_PEERS_MAX] = k;
	pthread_mutex_unlock(&v1_lock);
}

void
rpcrdma_peers_fork_lock(void)
{
	pthread_mutex_lock(&v1_lock);
}

void
rpcrdma_peers_fork_unlock(void)
{
	pthread_mutex_unlock(&v1_lock);
}

void
rpcrdma_peers_forget(void)
{
	pthread_mutex_lock(&v1_lock);
	v1_npeers = v1_next = 0;
	pthread_mutex_unlock(&v1_lock);
}
