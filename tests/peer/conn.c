/*
 * rdma-peer: one connection.  Its protection domain, completion queue
 * and queue pair, the registered buffers (receives, the send buffer, the
 * data region for RDMA Reads and Writes), and synchronous Sends, Reads
 * and Writes bounded by a deadline.  Receives completed while waiting for
 * something else are queued for the caller (pend_pop).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"

void
conn_free(struct pconn *c)
{
	struct ibv_cq *cq;
	void *ctx;

	if (!c)
		return;
	if (c->qp)
		rdma_destroy_qp(c->id);
	if (c->cq) {
		while (c->cch && ibv_get_cq_event(c->cch, &cq, &ctx) == 0)
			ibv_ack_cq_events(cq, 1);
		ibv_destroy_cq(c->cq);
	}
	if (c->cch)
		ibv_destroy_comp_channel(c->cch);
	if (c->recv_mr)
		ibv_dereg_mr(c->recv_mr);
	if (c->send_mr)
		ibv_dereg_mr(c->send_mr);
	if (c->data_mr)
		ibv_dereg_mr(c->data_mr);
	free(c->recv_mem);
	free(c->send_mem);
	free(c->data_mem);
	free(c->call_mem);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->ech)
		rdma_destroy_event_channel(c->ech);
	free(c);
}

static int
reg_buf(struct pconn *c, uint8_t **mem, struct ibv_mr **mr, size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len))
		return -ENOMEM;
	memset(p, 0, len);
	*mem = p;
	*mr = ibv_reg_mr(c->pd, p, len, IBV_ACCESS_LOCAL_WRITE);
	return *mr ? 0 : (errno ? -errno : -ENOMEM);
}

int
post_recv(struct pconn *c, uint32_t idx)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->recv_mem + (size_t)idx * c->recv_size),
		.length = c->recv_size,
		.lkey = c->recv_mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = WRID(WR_RECV, idx),
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	if (ibv_post_recv(c->qp, &wr, &bad)) {
		c->dead = true;
		return -1;
	}
	return 0;
}

/* Protection domain, completion queue, queue pair and buffers on c->id. */
int
conn_setup(struct pconn *c)
{
	struct ibv_qp_init_attr qa;
	struct ibv_device_attr da;
	uint32_t i;
	int ret;

	c->recv_size = c->own_recv > PEER_RECV_BUF_MIN ? c->own_recv : PEER_RECV_BUF_MIN;
	c->pd = ibv_alloc_pd(c->id->verbs);
	if (!c->pd)
		return -ENOMEM;
	c->cch = ibv_create_comp_channel(c->id->verbs);
	if (!c->cch)
		return -ENOMEM;
	ret = set_nonblock(c->cch->fd);
	if (ret)
		return ret;
	c->cq = ibv_create_cq(c->id->verbs, 2 * PEER_NRECV + 32, c, c->cch, 0);
	if (!c->cq)
		return -ENOMEM;
	if (ibv_req_notify_cq(c->cq, 0))
		return -EIO;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 1;
	qa.cap.max_send_wr = 32;
	qa.cap.max_recv_wr = PEER_NRECV;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(c->id, c->pd, &qa))
		return errno ? -errno : -ENOMEM;
	c->qp = c->id->qp;

	ret = reg_buf(c, &c->recv_mem, &c->recv_mr, (size_t)PEER_NRECV * c->recv_size);
	if (!ret)
		ret = reg_buf(c, &c->send_mem, &c->send_mr, PEER_SEND_BUF);
	if (!ret)
		ret = reg_buf(c, &c->data_mem, &c->data_mr, 2 * (size_t)PEER_REGION);
	if (ret)
		return ret;
	c->call_mem = malloc(PEER_REGION);
	if (!c->call_mem)
		return -ENOMEM;
	for (i = 0; i < PEER_NRECV; i++)
		if (post_recv(c, i))
			return -EIO;

	if (ibv_query_device(c->id->verbs, &da) == 0) {
		c->initiator_depth = (uint8_t)(da.max_qp_init_rd_atom < PEER_RD_ATOM ?
					       da.max_qp_init_rd_atom : PEER_RD_ATOM);
		c->responder_resources = (uint8_t)(da.max_qp_rd_atom < PEER_RD_ATOM ?
						   da.max_qp_rd_atom : PEER_RD_ATOM);
	} else {
		c->initiator_depth = 1;
		c->responder_resources = 1;
	}
	return 0;
}

/* Send len octets of send_mem. */
static int
post_send(struct pconn *c, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->send_mem,
		.length = len,
		.lkey = c->send_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = WRID(WR_SEND, 0),
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	/* RFC 8797 s4.1: a Send With Invalidate, once. */
	if (c->send_inv) {
		wr.opcode = IBV_WR_SEND_WITH_INV;
		wr.invalidate_rkey = c->send_inv;
		c->send_inv = 0;
	}
	return ibv_post_send(c->qp, &wr, &bad) ? -1 : 0;
}

/* An RDMA Read or Write between local (inside data_mem) and a segment. */
static int
post_rdma(struct pconn *c, enum wr_kind kind, uint8_t *local, uint32_t len,
	  uint32_t rkey, uint64_t raddr)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)local,
		.length = len,
		.lkey = c->data_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = WRID(kind, 0),
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = kind == WR_READ ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.rdma.rkey = rkey;
	wr.wr.rdma.remote_addr = raddr;
	return ibv_post_send(c->qp, &wr, &bad) ? -1 : 0;
}

static void
pend_push(struct pconn *c, uint32_t idx, uint32_t len)
{
	unsigned int tail = (c->pend_head + c->pend_count) % PEER_NRECV;

	c->pend_idx[tail] = idx;
	c->pend_len[tail] = len;
	c->pend_count++;
}

bool
pend_pop(struct pconn *c, uint32_t *idx, uint32_t *len)
{
	if (!c->pend_count)
		return false;
	*idx = c->pend_idx[c->pend_head];
	*len = c->pend_len[c->pend_head];
	c->pend_head = (c->pend_head + 1) % PEER_NRECV;
	c->pend_count--;
	return true;
}

/*
 * Account for one completion: receives are queued, failures mark the
 * connection dead.  True when it is the completion of wrid.
 */
bool
take_wc(struct pconn *c, const struct ibv_wc *wc, uint64_t wrid)
{
	if (WRID_KIND(wc->wr_id) == WR_RECV) {
		if (wc->status == IBV_WC_SUCCESS) {
			pend_push(c, WRID_IDX(wc->wr_id), wc->byte_len);
		} else {
			if (!c->dead && wc->status != IBV_WC_WR_FLUSH_ERR)
				out("recv_error status=\"%s\"", ibv_wc_status_str(wc->status));
			c->dead = true;
		}
		return false;
	}
	if (wrid && wc->wr_id == wrid)
		return true;
	if (wc->status != IBV_WC_SUCCESS)
		c->dead = true;
	return false;
}

/*
 * Poll until the completion of wrid; receives met on the way are queued.
 * Returns its status, or -1 when the deadline passed or a signal came.
 */
static int
wait_wr(struct pconn *c, uint64_t wrid, int64_t deadline)
{
	struct ibv_wc wc;
	int n;

	for (;;) {
		n = ibv_poll_cq(c->cq, 1, &wc);
		if (n < 0) {
			c->dead = true;
			return -1;
		}
		if (n == 1) {
			if (take_wc(c, &wc, wrid))
				return (int)wc.status;
			continue;
		}
		if (stop_signal || now_ms() >= deadline)
			return -1;
		nap();
	}
}

const char *
wc_status_name(int st)
{
	return st < 0 ? "timeout" : ibv_wc_status_str((enum ibv_wc_status)st);
}

/* Post a Send of len octets and wait for its completion. */
int
send_sync(struct pconn *c, uint32_t len, int64_t deadline)
{
	int st;

	if (post_send(c, len)) {
		c->dead = true;
		return -1;
	}
	st = wait_wr(c, WRID(WR_SEND, 0), deadline);
	if (st != IBV_WC_SUCCESS)
		c->dead = true;
	return st;
}

int
rdma_sync(struct pconn *c, enum wr_kind kind, uint8_t *local, uint32_t len,
	  uint32_t rkey, uint64_t raddr, int64_t deadline)
{
	int st;

	if (post_rdma(c, kind, local, len, rkey, raddr)) {
		c->dead = true;
		return -1;
	}
	st = wait_wr(c, WRID(kind, 0), deadline);
	if (st != IBV_WC_SUCCESS)
		c->dead = true;
	return st;
}

void
conn_kill(struct pconn *c)
{
	c->dead = true;
	if (!c->disconnecting && c->id) {
		c->disconnecting = true;
		rdma_disconnect(c->id);
	}
}

