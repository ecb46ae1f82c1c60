/*
 * The endpoint's data path (ep.h): receive and send buffers, posting,
 * polling and waiting, and the send queue's accounting.
 */
#include <errno.h>
#include <poll.h>

#include "common/log.h"
#include "ep_int.h"

int
ep_dead(const struct ep *ep)
{
	/* A disconnect the shared channel saw for us counts too. */
	return ep->dead ? ep->dead : __atomic_load_n(&ep->cm_err, __ATOMIC_ACQUIRE);
}

void
ep_set_dead(struct ep *ep, int err)
{
	if (!ep->dead)
		ep->dead = err ? err : ECONNRESET;
}

/* ------------------------------------------------------------------ */
/* Buffers                                                             */
/* ------------------------------------------------------------------ */

uint8_t *
ep_recv_buf(const struct ep *ep, uint32_t i)
{
	return rdma_srq_buf(ep->srq, i);
}

int
ep_recv_reserve(struct ep *ep, int64_t deadline)
{
	int ret = rdma_srq_reserve(ep->srq, 1, true, deadline);

	if (ret == 0)
		ep->reserved++;
	return ret;
}

void
ep_recv_unreserve(struct ep *ep, unsigned int n)
{
	if (n > ep->reserved)
		n = ep->reserved;
	ep->reserved -= n;
	rdma_srq_unreserve(ep->srq, n);
}

uint8_t *
ep_send_buf(const struct ep *ep, uint32_t i)
{
	return ep->sends[i].buf->addr;
}

uint32_t
ep_send_buf_size(const struct ep *ep)
{
	return ep->attr.send_buf_size;
}

uint32_t
ep_send_lkey(const struct ep *ep, uint32_t i)
{
	return ep->sends[i].buf->lkey;
}

struct ibv_sge
ep_hdr_sge(const struct ep *ep, uint32_t idx, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)ep_send_buf(ep, idx),
		.length = len,
		.lkey = ep_send_lkey(ep, idx),
	};

	return sge;
}

int
ep_get_send(struct ep *ep)
{
	uint32_t idx;

	if (!ep->nsend_free)
		return -ENOBUFS;
	idx = ep->send_free[ep->nsend_free - 1];
	ep->sends[idx].buf = rdma_sbuf_get(ep->dev, ep->slab);
	if (!ep->sends[idx].buf)
		return -ENOMEM;
	ep->nsend_free--;
	return (int)idx;
}

void
ep_put_send(struct ep *ep, uint32_t idx)
{
	rdma_sbuf_put(ep->sends[idx].buf);
	ep->sends[idx].buf = NULL;
	ep->send_free[ep->nsend_free++] = idx;
}

unsigned int
ep_nsend_free(const struct ep *ep)
{
	return ep->nsend_free;
}

void
ep_release_attach(struct ep *ep, struct ep_send *s)
{
	unsigned int i;

	for (i = 0; i < EP_SEND_ATTACH_MAX; i++) {
		rdma_pool_put(ep->dev, s->attach[i]);
		s->attach[i] = NULL;
	}
}

void
ep_hold(struct ep *ep, struct rdma_pbuf *pb)
{
	if (pb) {
		pb->held_next = ep->held;
		ep->held = pb;
	}
}

/* ------------------------------------------------------------------ */
/* Posting                                                             */
/* ------------------------------------------------------------------ */

int
ep_post_recv(struct ep *ep, uint32_t idx)
{
	int ret = rdma_srq_post(ep->srq, idx);

	if (ret)
		ep_set_dead(ep, -ret);
	return ret;
}

bool
ep_sq_room(const struct ep *ep, unsigned int n)
{
	return ep->sq_used + n <= ep->attr.max_send_wr;
}

bool
ep_sq_idle(const struct ep *ep)
{
	return ep->sq_used == 0;
}

int
ep_post_send(struct ep *ep, uint32_t idx, struct ibv_send_wr *pre,
	     unsigned int npre, struct ibv_sge *sge, int nsge,
	     uint32_t inv_rkey, struct rdma_pbuf *const *attach,
	     unsigned int nattach)
{
	struct ibv_send_wr wr = {
		.wr_id = EP_WRID(EP_WR_SEND, idx),
		.sg_list = sge,
		.num_sge = nsge,
		.opcode = inv_rkey ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad, *first = &wr;
	struct ep_send *s = &ep->sends[idx];
	uint32_t len = 0;
	unsigned int i;
	int ret;

	if (ep->dead)
		return -ep->dead;
	if (!ep_sq_room(ep, npre + 1))
		return -EAGAIN;
	if (inv_rkey)
		wr.invalidate_rkey = inv_rkey;
	for (i = 0; i < (unsigned int)nsge; i++)
		len += sge[i].length;
	if (len <= ep->max_inline)
		wr.send_flags |= IBV_SEND_INLINE;
	if (npre) {
		for (i = 0; i + 1 < npre; i++)
			pre[i].next = &pre[i + 1];
		pre[npre - 1].next = &wr;
		first = pre;
	}
	ret = ibv_post_send(ep->qp, first, &bad);
	if (ret) {
		ep_set_dead(ep, ret);
		return -ret;
	}
	ep->sq_used += npre + 1;
	s->nwr = (uint16_t)(npre + 1);
	for (i = 0; i < EP_SEND_ATTACH_MAX; i++)
		s->attach[i] = i < nattach ? attach[i] : NULL;
	return 0;
}

void
ep_wake(struct ep *ep)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_send_wr wr = {
		.wr_id = EP_WRID(EP_WR_WAKE, 0),
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (!ep->qp || !ep_sq_room(ep, 1))
		return;
	if (ep->scq != ep->cq && !ep->sarmed && !ibv_req_notify_cq(ep->scq, 0))
		ep->sarmed = true;
	/*
	 * In error, the request is flushed.  Where the kernel refuses that
	 * (the process changed its credentials), it may reach the peer: an
	 * RDMA Write of no octets, which touches no memory there (IBA
	 * C9-88: its key and address are not checked), and completes.
	 */
	(void)ibv_modify_qp(ep->qp, &a, IBV_QP_STATE);
	if (ibv_post_send(ep->qp, &wr, &bad) == 0)
		ep->sq_used++;
}

bool
ep_arm_send(struct ep *ep)
{
	struct ibv_cq *cq = ep->scq != ep->cq ? ep->scq : ep->cq;
	bool *armed = ep->scq != ep->cq ? &ep->sarmed : &ep->armed;

	if (*armed || ibv_req_notify_cq(cq, 0))
		return false;
	*armed = true;
	return true;
}

bool
ep_kick(struct ep *ep)
{
	struct ibv_send_wr wr = {
		.wr_id = EP_WRID(EP_WR_WAKE, 1),
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (ep->dead || !ep->qp)
		return false;
	(void)ep_arm_send(ep);
	if (!ep_sq_room(ep, 1))
		return ep->sq_used > 0;
	/*
	 * IBA C9-88: an RDMA Write of no octets checks no key or address
	 * at the peer; it completes once acknowledged.
	 */
	if (ibv_post_send(ep->qp, &wr, &bad))
		return ep->sq_used > 0;
	ep->sq_used++;
	return true;
}

int
ep_post_one(struct ep *ep, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int ret;

	if (ep->dead)
		return -ep->dead;
	if (!ep_sq_room(ep, 1))
		return -EAGAIN;
	wr->next = NULL;
	wr->send_flags |= IBV_SEND_SIGNALED;
	ret = ibv_post_send(ep->qp, wr, &bad);
	if (ret) {
		ep_set_dead(ep, ret);
		return -ret;
	}
	ep->sq_used++;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Completions                                                         */
/* ------------------------------------------------------------------ */

void
ep_ack_cq_events(struct ep *ep)
{
	struct ibv_cq *cq;
	void *ctx;

	while (ibv_get_cq_event(ep->cch, &cq, &ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		if (cq == ep->cq)
			ep->armed = false;
		else
			ep->sarmed = false;
	}
}

/* Poll the send CQ (when it is a CQ of its own), then the receive CQ. */
static int
poll_both(struct ep *ep, struct ibv_wc *wc, int max)
{
	int n = 0, m;

	if (ep->scq != ep->cq) {
		n = ibv_poll_cq(ep->scq, max, wc);
		if (n < 0 || n == max)
			return n;
	}
	m = ibv_poll_cq(ep->cq, max - n, wc + n);
	return m < 0 ? m : n + m;
}

int
ep_poll(struct ep *ep, struct ibv_wc *wc, int max)
{
	int n;

	if (!ep->hub)
		ep_ack_cq_events(ep);
	else if (__atomic_exchange_n(&ep->cq_fired, 0, __ATOMIC_ACQ_REL))
		ep->armed = false;
	for (;;) {
		n = poll_both(ep, wc, max);
		if (n != 0 || ep->armed)
			return n < 0 ? -EIO : n;
		/* Arm, then poll once more: nothing can slip in between. */
		if (ibv_req_notify_cq(ep->cq, 0))
			return -EIO;
		ep->armed = true;
	}
}

int
ep_poll_busy(struct ep *ep, struct ibv_wc *wc, int max)
{
	int n = poll_both(ep, wc, max);

	return n < 0 ? -EIO : n;
}

void
ep_interrupt(struct ep *ep)
{
	__atomic_store_n(&ep->kicked, 1, __ATOMIC_RELEASE);
	if (ep->hub)
		ep_hub_interrupt(ep->hub);
}

bool
ep_interrupted(struct ep *ep)
{
	return __atomic_exchange_n(&ep->kicked, 0, __ATOMIC_ACQ_REL);
}

int
ep_poll_send(struct ep *ep, struct ibv_wc *wc, int max)
{
	int n = ibv_poll_cq(ep->scq, max, wc);

	return n < 0 ? -EIO : n;
}

int
ep_wait(struct ep *ep, int64_t deadline)
{
	struct pollfd pfd = { .fd = ep->cch->fd, .events = POLLIN };
	int64_t left;

	if (ep->hub) {
		int ret = ep_hub_wait(ep, deadline);

		/*
		 * The waiter may run without its owner's lock: the failure is
		 * stored as the hub's events are (ep_dead reads both).
		 */
		if (ret && ret != -ETIMEDOUT)
			__atomic_store_n(&ep->cm_err, -ret, __ATOMIC_RELEASE);
		/* What interrupted it is read by the caller now. */
		__atomic_store_n(&ep->kicked, 0, __ATOMIC_RELEASE);
		return ret;
	}
	left = deadline - ep_now_ms();
	if (left <= 0)
		return -ETIMEDOUT;
	/*
	 * A separate send CQ signals only once armed: arm it and let the
	 * caller poll once more before sleeping, for what came before.
	 */
	if (ep->scq != ep->cq && !ep->sarmed) {
		if (ibv_req_notify_cq(ep->scq, 0)) {
			ep_set_dead(ep, EIO);
			return -EIO;
		}
		ep->sarmed = true;
		return 0;
	}
	if (poll(&pfd, 1, (int)(left > 60000 ? 60000 : left)) < 0 &&
	    errno != EINTR) {
		ep_set_dead(ep, errno);
		return -errno;
	}
	return 0;
}

/*
 * The queue pair failed or is gone: what it left in the CQs goes back.
 * Receives taken from the shared queue are posted again (flushed or not,
 * nobody will read them), Sends release their buffers.
 */
void
ep_drain_dead(struct ep *ep)
{
	struct ibv_wc wc[16];
	int n, k;

	while ((n = poll_both(ep, wc, 16)) > 0) {
		for (k = 0; k < n; k++) {
			if (EP_WRID_KIND(wc[k].wr_id) == EP_WR_RECV)
				(void)rdma_srq_post(ep->srq, EP_WRID_IDX(wc[k].wr_id));
			else
				(void)ep_reap_send(ep, &wc[k]);
		}
	}
}

static const char *
wr_kind_name(enum ep_wr_kind kind)
{
	switch (kind) {
	case EP_WR_SEND:
		return "send";
	case EP_WR_READ:
		return "read";
	case EP_WR_WRITE:
	case EP_WR_WRITE_SIGNALED:
		return "write";
	case EP_WR_BIND:
		return "memory window bind";
	default:
		return "invalidate";
	}
}

bool
ep_reap_send(struct ep *ep, const struct ibv_wc *wc)
{
	enum ep_wr_kind kind = EP_WRID_KIND(wc->wr_id);
	uint32_t idx = EP_WRID_IDX(wc->wr_id);
	unsigned int n = 1;

	if (kind == EP_WR_RECV)
		return false;
	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			shim_log(SHIM_LOG_WARN, "RDMA %s failed: %s",
				 wr_kind_name(kind), ibv_wc_status_str(wc->status));
		ep_set_dead(ep, EIO);
	}
	if (kind == EP_WR_SEND) {
		struct ep_send *s = &ep->sends[idx];

		n = s->nwr;
		s->nwr = 0;
		ep_release_attach(ep, s);
		ep_put_send(ep, idx);
	} else if (kind == EP_WR_WRITE || kind == EP_WR_BIND) {
		/* Unsignaled: seen only when failed; the Send retires it. */
		n = 0;
	}
	ep->sq_used = ep->sq_used >= n ? ep->sq_used - n : 0;
	return true;
}
