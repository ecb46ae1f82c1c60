/*
 * The client's completions (clnt_rdma_int.h): receives matched to the
 * call waited for, late replies, credits, and the waits built on them.
 *
 * A reply is handed to the call with its XID (its slot), whichever
 * thread takes it; each wait has its own condition (clnt_rdma_wait.c
 * checks it, for every waiter, after each round of completions).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "clnt_rdma_int.h"
#include "common/log.h"

unsigned int
ct_credit_window(const struct ct_rdma *ct)
{
	unsigned int w = ct->ct_granted;

	if (w > ct->ct_credits_req)
		w = ct->ct_credits_req;
	return w ? w : 1;
}

void
ct_granted_set(struct ct_rdma *ct, uint32_t credits)
{
	/* s4.3.1: a granted value of zero is invalid; never deadlock on it. */
	ct->ct_granted = credits ? credits : 1;
	if (ct->ct_stats && ct->ct_stats->credits != ct->ct_granted)
		__atomic_store_n(&ct->ct_stats->credits, ct->ct_granted,
				 __ATOMIC_RELAXED);
}

/*
 * s4.3.1: the limit is the credits granted minus the requests in flight.
 * A call the caller gave up on is not in flight for us any more: counting
 * it until a reply that may never come (a server that drops it, a batched
 * call) would wedge the CLIENT once its credits are all lost so.  Its
 * receive stays reserved while its memory is exposed (ct_orphan).
 */
void
ct_call_abandoned(struct ct_rdma *ct, unsigned int s)
{
	(void)s;
	if (ct->ct_outstanding)
		ct->ct_outstanding--;
}

/*
 * The reply came: its credit comes back.  Its receive stays reserved until
 * its buffer is posted again (ct_slot_recv_put after ep_post_recv): given
 * back before, it would let another call count on a buffer still held.
 */
void
ct_reply_arrived(struct ct_rdma *ct, unsigned int s, uint32_t credits)
{
	ct_call_abandoned(ct, s);
	ct_granted_set(ct, credits);
}

static bool
ct_replied(const struct ct_rdma *ct, const struct ct_cond *cond)
{
	return ct->ct_slots[cond->slot].replied;
}

/* s4.3.1: never more calls in flight than granted. */
static bool
ct_has_credit(const struct ct_rdma *ct, const struct ct_cond *cond)
{
	return ct->ct_outstanding < ct_credit_window(ct);
}

/* Per call: up to CT_NWIN memory window binds chained before the Send. */
static bool
ct_has_room(const struct ct_rdma *ct, const struct ct_cond *cond)
{
	return ep_nsend_free(ct->ct_ep) && ep_sq_room(ct->ct_ep, CT_NWIN + 1) &&
	       (!cond->binds || ct_binds_may_post(ct));
}

static bool
ct_slot_fenced(const struct ct_rdma *ct, const struct ct_cond *cond)
{
	return !ct_slot_exposed(&ct->ct_slots[cond->slot]);
}

/* A slot is free, or none will be (ct_get_slot then renews). */
static bool
ct_any_slot_free(const struct ct_rdma *ct, const struct ct_cond *cond)
{
	unsigned int s;

	for (s = 0; s < ct->ct_nslots; s++)
		if (ct->ct_slots[s].state == SLOT_FREE)
			return true;
	return !ct_busy_slots(ct);
}

/*
 * Whether a message no call waits for speaks of our credits: a late or
 * duplicate reply does, a backward-direction call does not (RFC 8166
 * s7.2.1: its rdma_credit is the backward direction's, accounted apart).
 * RDMA_NOMSG and RDMA_ERROR only ever answer our calls here.
 */
static bool
ct_is_reply(const uint8_t *buf, uint32_t len, const struct rpcrdma_hdr *h)
{
	uint32_t dir;

	if (h->proc != RDMA_MSG)
		return true;
	if (h->hdrlen + 2 * sizeof(dir) > len)
		return false;
	memcpy(&dir, buf + h->hdrlen + sizeof(dir), sizeof(dir));
	return ntohl(dir) == REPLY;
}

static bool
ct_call_returned(const struct ct_rdma *ct, const struct ct_cond *cond)
{
	return ct->ct_returned != cond->returned ||
	       !ct_others_under_way(ct, cond->slot);
}

/* The slot whose call waits for the reply to xid, or NULL. */
static struct ct_slot *
ct_slot_of_reply(struct ct_rdma *ct, uint32_t xid)
{
	unsigned int s;

	for (s = 0; s < ct->ct_nslots; s++) {
		struct ct_slot *slot = &ct->ct_slots[s];

		if (slot->state == SLOT_ACTIVE && slot->xid == xid &&
		    slot->wait_reply && !slot->replied)
			return slot;
	}
	return NULL;
}

/* A reply to a call waited for: its header is copied out. */
static void
ct_take_reply(struct ct_rdma *ct, struct ct_slot *slot,
	      const struct ibv_wc *wc, bool well_formed)
{
	struct ct_reply *rep = &slot->rep;

	rpcrdma_hdr_copy(&rep->hdr, &ct->ct_hdr);
	rep->ridx = EP_WRID_IDX(wc->wr_id);
	rep->rlen = wc->byte_len;
	/* A malformed reply still completes its call, with an error. */
	if (!well_formed)
		rep->hdr.proc = UINT32_MAX;
	slot->replied = true;
	CP_MARK(CP_REPLY);
}

/*
 * Handle one completion: a reply goes to the call with its XID, whichever
 * thread waits for it.  Returns 0, or a negative errno when the
 * connection failed.
 */
int
ct_completion(struct ct_rdma *ct, const struct ibv_wc *wc)
{
	struct ep *ep = ct->ct_ep;
	struct rpcrdma_hdr *h = &ct->ct_hdr;
	struct ct_slot *slot;
	uint32_t i, inv;
	int ret;

	if (EP_WRID_KIND(wc->wr_id) == EP_WR_LOCAL_INV)
		ct_inv_done(ct, wc);
	else if (EP_WRID_KIND(wc->wr_id) == EP_WR_BIND)
		ct_bind_failed(ct, wc);	/* binds are unsignaled */
	if (ep_reap_send(ep, wc))
		return -ep_dead(ep);

	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			shim_log(SHIM_LOG_WARN, "client: receive failed: %s",
				 ibv_wc_status_str(wc->status));
		ep_set_dead(ep, ECONNRESET);
		/* The buffer is the shared queue's again, for the others. */
		(void)ep_post_recv(ep, EP_WRID_IDX(wc->wr_id));
		return -ep_dead(ep);
	}

	i = EP_WRID_IDX(wc->wr_id);
	inv = ct_wc_invalidated(wc);
	/*
	 * A Send With Invalidate (RFC 8797 s4.1), late replies included: the
	 * key may be any slot's, not only that of the call it answers.
	 */
	if (inv) {
		SHIM_STATS_ADD(ct->ct_stats, send_inv, 1);
		ct_remote_inv(ct, inv);
	}
	ret = ct_hdr_decode(ct, ep_recv_buf(ep, i), wc->byte_len, h);
	if (ret == -ECANCELED)
		return ep_post_recv(ep, i);	/* not a reply (clnt_rdma_v2.c) */
	if (ret == -EMSGSIZE) {
		/* Not even an XID: nothing to match it with (s5.5). */
		shim_log(SHIM_LOG_WARN, "client: dropped a %u-octet message",
			 wc->byte_len);
		return ep_post_recv(ep, i);
	}
	if (ret && h->proc == RDMA_ERROR) {
		/* s5.5: an RDMA_ERROR that cannot be decoded is discarded. */
		shim_log(SHIM_LOG_WARN,
			 "client: dropped an RDMA_ERROR that cannot be decoded (xid 0x%08x, %u octets)",
			 h->xid, wc->byte_len);
		return ep_post_recv(ep, i);
	}
	slot = ct_slot_of_reply(ct, h->xid);
	if (slot) {
		ct_take_reply(ct, slot, wc, ret == 0);
		return 0;
	}
	/*
	 * Anything else is dropped by XID, as over TCP: a late reply to a
	 * call given up on fences what that call still exposes.  Its grant
	 * is the server's word as much as any reply's.
	 */
	shim_log(SHIM_LOG_DEBUG, "client: late reply xid 0x%08x dropped",
		 h->xid);
	if (ret == 0 && ct_is_reply(ep_recv_buf(ep, i), wc->byte_len, h))
		ct_granted_set(ct, h->credits);
	ret = ep_post_recv(ep, i);
	ct_orphan_replied(ct, h->xid);
	return ret;
}

int
ct_wait_reply(struct ct_rdma *ct, unsigned int s, int64_t deadline)
{
	struct ct_cond cond = { .done = ct_replied, .slot = s };

	return ct_wait(ct, &cond, deadline);
}

int
ct_wait_credit(struct ct_rdma *ct, int64_t deadline)
{
	struct ct_cond cond = { .done = ct_has_credit };

	return ct_wait(ct, &cond, deadline);
}

int
ct_wait_room(struct ct_rdma *ct, bool binds, int64_t deadline)
{
	struct ct_cond cond = { .done = ct_has_room, .binds = binds };

	return ct_wait(ct, &cond, deadline);
}

int
ct_wait_fenced(struct ct_rdma *ct, unsigned int s, int64_t deadline)
{
	struct ct_cond cond = { .done = ct_slot_fenced, .slot = s };

	return ct_wait(ct, &cond, deadline);
}

int
ct_wait_slot(struct ct_rdma *ct, int64_t deadline)
{
	struct ct_cond cond = { .done = ct_any_slot_free };

	return ct_wait(ct, &cond, deadline);
}

int
ct_wait_returned(struct ct_rdma *ct, unsigned int s, int64_t deadline)
{
	struct ct_cond cond = {
		.done = ct_call_returned,
		.slot = s,
		.returned = ct->ct_returned,
	};

	return ct_wait(ct, &cond, deadline);
}

int
ct_reap(struct ct_rdma *ct)
{
	struct ibv_wc wc;
	int n, ret;

	/* The poller takes them (without ct_lock): not two at once. */
	if (ct->ct_poller)
		return 0;
	while ((n = ep_poll(ct->ct_ep, &wc, 1)) > 0) {
		ret = ct_completion(ct, &wc);
		if (ret < 0)
			return ret;
	}
	if (n < 0)
		ep_set_dead(ct->ct_ep, EIO);
	return n < 0 ? -EIO : 0;
}
