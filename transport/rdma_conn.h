/*
 * One RPC-over-RDMA connection: an RDMA-CM id with its RC queue pair, a
 * completion queue signalling a pollable completion channel, the receive
 * ring and the send buffers for transport headers.
 *
 * Client and server share this; clnt_rdma.c and svc_rdma.c add the RPC
 * semantics on top.  Nothing here blocks without a deadline.
 */
#ifndef TRANSPORT_RDMA_CONN_H
#define TRANSPORT_RDMA_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "common/reason.h"
#include "pvtdata.h"
#include "rdma_dev.h"


/*
 * max_reply and max_call bound the data of a message; its RPC header and
 * credentials come on top, up to this many octets.
 */
#define RDMA_MSG_HDR_SLACK 4096u

/* What a connection is built with. */
struct rdma_conn_attr {
	uint32_t inline_send;	/* own largest Send (RFC 8797 Send Size) */
	uint32_t inline_recv;	/* own receive buffer size (Receive Size) */
	unsigned int nrecv;	/* receives kept posted */
	unsigned int nsend;	/* header send buffers */
	uint32_t send_buf_size;	/* bytes per header send buffer */
	unsigned int max_send_wr;
	bool remote_inv;	/* advertise the R flag */
};

/* Work request ids: kind in the high word, a buffer index in the low. */
enum rdma_wr_kind {
	RDMA_WR_RECV = 1,
	RDMA_WR_SEND,
	RDMA_WR_READ,
	RDMA_WR_WRITE,
	RDMA_WR_BIND,
	RDMA_WR_LOCAL_INV,
};
#define RDMA_WRID(kind, idx) (((uint64_t)(kind) << 32) | (uint32_t)(idx))
#define RDMA_WRID_KIND(wrid) ((enum rdma_wr_kind)((wrid) >> 32))
#define RDMA_WRID_IDX(wrid) ((uint32_t)(wrid))

struct rdma_conn {
	struct rdma_cm_id *id;
	struct rdma_event_channel *ech;	/* owned only by client connections */
	struct rdma_dev *dev;
	struct ibv_comp_channel *cch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	bool armed;			/* CQ notification requested */

	/* Negotiated when the connection was set up (RFC 8797 s4.2). */
	struct rpcrdma_cm_pdata local_pd;
	struct rpcrdma_cm_pdata peer_pd;
	bool peer_pd_valid;		/* false: peer sent none, v1 defaults */
	uint32_t send_max;		/* largest Send we may post */
	uint32_t recv_max;		/* largest Send the peer may post */
	bool rinv;			/* both sides set R */
	uint8_t initiator_depth;	/* RDMA Reads we may have in flight */
	uint8_t responder_resources;

	struct rdma_conn_attr attr;

	/* Receive ring: nrecv buffers of attr.inline_recv octets. */
	struct rdma_buf recv;

	/* Header send buffers, attr.nsend of attr.send_buf_size octets. */
	struct rdma_buf send;
	uint32_t *send_free;
	unsigned int nsend_free;
	/* Per send buffer: queue entries its completion retires, and a pool
	 * buffer to give back then (the payload it carried). */
	uint16_t *send_wrs;
	struct rdma_pbuf **send_attach;

	struct rdma_pbuf *hold;		/* released after the queue pair */
	unsigned int sq_used;		/* send queue entries not yet retired */
	uint32_t max_msg;		/* largest single RDMA operation */
	int dead;			/* errno once the connection failed */
};

/*
 * Client side: resolve, build the queue pair, post receives, connect with
 * our private data and wait for the peer's answer, all within timeout_ms.
 * src, when not NULL, is a local address to bind first (best effort).
 * Returns the connection, or NULL with *why and *err set.
 */
struct rdma_conn *rdma_conn_connect(const struct sockaddr *dst,
				    const struct sockaddr *src,
				    int timeout_ms,
				    const struct rdma_conn_attr *attr,
				    enum rdma_fail *why, int *err);

/*
 * Server side: for a CONNECT_REQUEST on a listener, build the queue pair,
 * post receives and accept with our private data.  The id stays on the
 * listener's event channel.  Returns NULL (and rejects) on failure.
 */
struct rdma_conn *rdma_conn_accept(struct rdma_cm_id *id,
				   const struct rdma_conn_param *req,
				   const struct rdma_conn_attr *attr,
				   int *err);

/* Move the queue pair to error: every posted request is flushed. */
void rdma_conn_disconnect(struct rdma_conn *c);

/* Release everything, including the id (and the channel when owned). */
void rdma_conn_destroy(struct rdma_conn *c);

/* Receive buffer i. */
static inline uint8_t *
rdma_conn_recv_buf(const struct rdma_conn *c, uint32_t i)
{
	return c->recv.addr + (size_t)i * c->attr.inline_recv;
}

static inline uint8_t *
rdma_conn_send_buf(const struct rdma_conn *c, uint32_t i)
{
	return c->send.addr + (size_t)i * c->attr.send_buf_size;
}

int rdma_conn_post_recv(struct rdma_conn *c, uint32_t idx);

/* Take a free header send buffer; -1 when none is free. */
int rdma_conn_get_send(struct rdma_conn *c);
void rdma_conn_put_send(struct rdma_conn *c, uint32_t idx);

/* An SGE for the first len octets of header send buffer idx. */
static inline struct ibv_sge
rdma_conn_hdr_sge(const struct rdma_conn *c, uint32_t idx, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->send.addr + (size_t)idx * c->attr.send_buf_size),
		.length = len,
		.lkey = c->send.mr->lkey,
	};

	return sge;
}

/*
 * Post npre unsignaled work requests (memory window binds, RDMA Writes)
 * chained before a signaled Send of sge[0..nsge) on behalf of header send
 * buffer idx; inv_rkey, when not zero, makes it a Send With Invalidate.
 * The Send's completion retires them all, returns idx to the free list
 * and gives attach (a chain of pool buffers linked by ->next, or NULL)
 * back to the pool.
 * Returns 0; -EAGAIN when the send queue has no room (reap completions and
 * try again); another negative errno when the connection failed.
 */
int rdma_conn_post_send(struct rdma_conn *c, uint32_t idx,
			struct ibv_send_wr *pre, unsigned int npre,
			struct ibv_sge *sge, int nsge, uint32_t inv_rkey,
			struct rdma_pbuf *attach);

/* Give a chain of pool buffers (linked by ->next) back to the pool. */
void rdma_conn_release(struct rdma_conn *c, struct rdma_pbuf *chain);

/*
 * Keep pb until the connection is destroyed, after its queue pair: for
 * memory an RDMA operation may still be using.
 */
void rdma_conn_hold(struct rdma_conn *c, struct rdma_pbuf *pb);

/*
 * Post one work request that completes on its own (signaled): an RDMA
 * Read, a local invalidate.  -EAGAIN when the send queue is full.
 */
int rdma_conn_post_one(struct rdma_conn *c, struct ibv_send_wr *wr);

/*
 * Poll for completions.  Returns how many were stored in wc (at most max),
 * or -1 when the completion queue failed.  A return of 0 guarantees that
 * the completion channel will signal the next completion: wait on
 * c->cch->fd only after a poll returned 0.
 */
int rdma_conn_poll(struct rdma_conn *c, struct ibv_wc *wc, int max);

/*
 * Account for a send-side completion (Send, RDMA Write/Read, bind,
 * invalidate): returns true when wc was one.  A failed one marks the
 * connection dead.
 */
bool rdma_conn_reap_send(struct rdma_conn *c, const struct ibv_wc *wc);

/* Mark the connection failed (keeps the first cause). */
void rdma_conn_set_dead(struct rdma_conn *c, int err);

/* Milliseconds on the monotonic clock. */
int64_t rdma_now_ms(void);

#endif
