/*
 * The endpoint's data path (ep.h): receive and header send buffers,
 * posting, polling, and the send queue's accounting.
 */
#include <errno.h>
#include <time.h>

#include "common/log.h"
#include "ep_int.h"

int64_t
ep_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
ep_dead(const struct ep *ep)
{
	return ep->dead;
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
	return ep->recv.addr + (size_t)i * ep->attr.inline_recv;
}

uint8_t *
ep_send_buf(const struct ep *ep, uint32_t i)
{
	return ep->send.addr + (size_t)i * ep->attr.send_buf_size;
}

uint32_t
ep_send_buf_size(const struct ep *ep)
{
	return ep->attr.send_buf_size;
}

uint32_t
ep_send_lkey(const struct ep *ep)
{
	return ep->send.mr->lkey;
}

struct ibv_sge
ep_hdr_sge(const struct ep *ep, uint32_t idx, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)ep_send_buf(ep, idx),
		.length = len,
		.lkey = ep->send.mr->lkey,
	};

	return sge;
}

int
ep_get_send(struct ep *ep)
{
	if (!ep->nsend_free)
		return -ENOBUFS;
	return (int)ep->send_free[--ep->nsend_free];
}

void
ep_put_send(struct ep *ep, uint32_t idx)
{
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
	struct ibv_sge sge = {
		.addr = (uintptr_t)ep_recv_buf(ep, idx),
		.length = ep->attr.inline_recv,
		.lkey = ep->recv.mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = EP_WRID(EP_WR_RECV, idx),
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;
	int ret = ibv_post_recv(ep->qp, &wr, &bad);

	if (ret) {
		ep_set_dead(ep, ret);
		return -ret;
	}
	return 0;
}

bool
ep_sq_room(const struct ep *ep, unsigned int n)
{
	return ep->sq_used + n <= ep->attr.max_send_wr;
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
	unsigned int i;
	int ret;

	if (ep->dead)
		return -ep->dead;
	if (!ep_sq_room(ep, npre + 1))
		return -EAGAIN;
	if (inv_rkey)
		wr.invalidate_rkey = inv_rkey;
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
	unsigned int n = 0;

	while (ibv_get_cq_event(ep->cch, &cq, &ctx) == 0)
		n++;
	if (n) {
		ibv_ack_cq_events(ep->cq, n);
		ep->armed = false;
	}
}

int
ep_poll(struct ep *ep, struct ibv_wc *wc, int max)
{
	int n;

	ep_ack_cq_events(ep);
	for (;;) {
		n = ibv_poll_cq(ep->cq, max, wc);
		if (n != 0 || ep->armed)
			return n < 0 ? -EIO : n;
		/* Arm, then poll once more: nothing can slip in between. */
		if (ibv_req_notify_cq(ep->cq, 0))
			return -EIO;
		ep->armed = true;
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
