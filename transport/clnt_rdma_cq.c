/*
 * The client's completions (clnt_rdma_int.h): receives matched to the
 * call waited for, late replies, credits, and the waits built on them.
 *
 * Completions are taken one at a time: a wait that found what it waited
 * for stops before taking the next one, which stays queued for a later
 * wait.  Each wait has its own condition, checked before every
 * completion is taken.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "clnt_rdma_int.h"
#include "common/log.h"

/* Longest single sleep: the deadline is checked at least this often. */
#define CT_SLEEP_MAX_MS 60000

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

/* The reply came: its receive reservation goes back to the shared queue. */
void
ct_reply_arrived(struct ct_rdma *ct, unsigned int s, uint32_t credits)
{
	ct_call_abandoned(ct, s);
	ct_slot_recv_put(ct, &ct->ct_slots[s]);
	ct_granted_set(ct, credits);
}

/* What a wait stops on. */
struct ct_cond {
	bool (*done)(const struct ct_rdma *ct, const struct ct_cond *cond);
	unsigned int slot;	/* ct_slot_fenced */
	bool want_reply;	/* ct_replied: the reply to xid is the goal */
	uint32_t xid;
	bool replied;		/* and it came, into ct->ct_rep */
};

static bool
ct_replied(const struct ct_rdma *ct, const struct ct_cond *cond)
{
	return cond->replied;
}

/* Per call: up to CT_NWIN memory window binds chained before the Send. */
static bool
ct_has_room(const struct ct_rdma *ct, const struct ct_cond *cond)
{
	return ct->ct_outstanding < ct_credit_window(ct) &&
	       ep_nsend_free(ct->ct_ep) && ep_sq_room(ct->ct_ep, CT_NWIN + 1);
}

static bool
ct_slot_fenced(const struct ct_rdma *ct, const struct ct_cond *cond)
{
	return !ct_slot_exposed(&ct->ct_slots[cond->slot]);
}

static bool
ct_any_slot_free(const struct ct_rdma *ct, const struct ct_cond *cond)
{
	unsigned int s;

	for (s = 0; s < CT_SLOTS; s++)
		if (ct->ct_slots[s].state == SLOT_FREE)
			return true;
	return false;
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

/* The reply to the call waited for: its header is copied out. */
static void
ct_take_reply(struct ct_rdma *ct, const struct ibv_wc *wc, bool well_formed)
{
	struct ct_reply *rep = &ct->ct_rep;

	rep->hdr = ct->ct_hdr;
	rep->ridx = EP_WRID_IDX(wc->wr_id);
	rep->rlen = wc->byte_len;
	/* A malformed reply still completes its call, with an error. */
	if (!well_formed)
		rep->hdr.proc = UINT32_MAX;
}

/*
 * Handle one completion.  Returns 1 when it is the reply the condition
 * waits for (in ct->ct_rep), 0 when it was something else, a negative
 * errno when the connection failed.
 */
static int
ct_completion(struct ct_rdma *ct, const struct ibv_wc *wc,
	      struct ct_cond *cond)
{
	struct ep *ep = ct->ct_ep;
	struct rpcrdma_hdr *h = &ct->ct_hdr;
	uint32_t i, inv;
	int ret;

	if (EP_WRID_KIND(wc->wr_id) == EP_WR_LOCAL_INV)
		ct_inv_done(ct, wc);
	if (ep_reap_send(ep, wc))
		return -ep_dead(ep);

	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			shim_log(SHIM_LOG_WARN, "client: receive failed: %s",
				 ibv_wc_status_str(wc->status));
		ep_set_dead(ep, ECONNRESET);
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
	if (cond->want_reply && h->xid == cond->xid) {
		ct_take_reply(ct, wc, ret == 0);
		cond->replied = true;
		return 1;
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
	ct_orphan_replied(ct, h->xid);
	return ep_post_recv(ep, i);
}

/*
 * Sleep until a completion or a connection event may be there (the
 * endpoint's shared channels), or the deadline.  Returns 0, -ETIMEDOUT,
 * or -errno when the channels failed.
 */
static int
ct_sleep(struct ct_rdma *ct, int64_t deadline)
{
	int64_t cap = ep_now_ms() + CT_SLEEP_MAX_MS;
	int ret = ep_wait(ct->ct_ep, deadline < cap ? deadline : cap);

	/* Only the caller's deadline ends the wait. */
	return ret == -ETIMEDOUT && cap < deadline ? 0 : ret;
}

static int
ct_wait(struct ct_rdma *ct, struct ct_cond *cond, int64_t deadline)
{
	struct ep *ep = ct->ct_ep;
	struct ibv_wc wc;
	int n, ret;

	for (;;) {
		if (cond->done(ct, cond))
			return 0;
		n = ep_poll(ep, &wc, 1);
		if (n < 0) {
			ep_set_dead(ep, EIO);
			return -ep_dead(ep);
		}
		if (n > 0) {
			ret = ct_completion(ct, &wc, cond);
			if (ret < 0)
				return ret;
			continue;
		}
		if (ep_dead(ep))
			return -ep_dead(ep);
		ret = ct_sleep(ct, deadline);
		if (ret)
			return ret;
	}
}

int
ct_wait_reply(struct ct_rdma *ct, uint32_t xid, int64_t deadline)
{
	struct ct_cond cond = {
		.done = ct_replied,
		.want_reply = true,
		.xid = xid,
	};

	return ct_wait(ct, &cond, deadline);
}

int
ct_wait_room(struct ct_rdma *ct, int64_t deadline)
{
	struct ct_cond cond = { .done = ct_has_room };

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

/* Never done: ct_reap stops when the queue is empty. */
static bool
ct_never(const struct ct_rdma *ct, const struct ct_cond *cond)
{
	return false;
}

int
ct_reap(struct ct_rdma *ct)
{
	struct ct_cond cond = { .done = ct_never };
	struct ibv_wc wc;
	int n, ret;

	while ((n = ep_poll(ct->ct_ep, &wc, 1)) > 0) {
		ret = ct_completion(ct, &wc, &cond);
		if (ret < 0)
			return ret;
	}
	if (n < 0)
		ep_set_dead(ct->ct_ep, EIO);
	return n < 0 ? -EIO : 0;
}
